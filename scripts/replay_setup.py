#!/usr/bin/env python3
"""Builds the instances of the replay benchmark (issue 39): SWE-bench Lite tasks of the
dev set's repositories (pallets/flask, mwaskom/seaborn, pylint-dev/pylint,
pytest-dev/pytest, psf/requests), each a project that `ironbees run` can work in.

For every instance id of scripts/replay/instances.txt (or --only):

1. a clone of the repository at the instance's base_commit, made from a local git
   directory (--mirrors: `OWNER+NAME/repo` under it, as the search tool's `fetch`
   leaves them; no network), in OUT/INSTANCE_ID;
2. a `.venv` in it made with `python3 -m venv .venv` (a plain venv: nothing
   activated, no variable set), and into it, with `.venv/bin/python -m pip`, the
   pins of scripts/replay/pins.json for the repository and SWE-bench version (the
   repository's requirements file at environment_setup_commit, the pinned packages),
   then the project itself (`pip install -e .`);
3. the test patch applied and committed (`.venv/`, `*.egg-info/`, `__pycache__/`,
   `.ironbees/` go to `.git/info/exclude`), so the tree is clean at the new HEAD;
4. the check outside ironbees, with `.venv/bin/python -m pytest -rA` on the test
   files of the test patch: FAIL_TO_PASS fail before the gold patch, and with it
   FAIL_TO_PASS and PASS_TO_PASS pass. The tree is restored afterwards.

OUT/manifest.json lists every instance: kept, or left out with the reason (an
install that failed, tests that do not flip, ...). PASS_TO_PASS tests that do not
pass here even with the gold patch and did not pass at the base either (the
environment's, not the patch's) are listed per instance and left out of the
benchmark's "no passing test broken" check; the instance is kept.

The dataset (--dataset: the SWE-bench Lite JSON or JSON Lines with instance_id,
repo, base_commit, patch, test_patch, FAIL_TO_PASS, PASS_TO_PASS, version,
environment_setup_commit) is read at run time: nothing of it, nor any fetched
code, is committed.

    python3 scripts/replay_setup.py --dataset /work/replay-data/swe-bench-lite.json \\
        --out /work/replay-data/instances
"""

import argparse
import concurrent.futures
import datetime
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PINS = os.path.join(HERE, "replay", "pins.json")
IDS = os.path.join(HERE, "replay", "instances.txt")
# Files a test patch touches that are not tests (SWE-bench's NON_TEST_EXTS).
NON_TEST_EXTS = (".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml", ".yaml", ".toml")
EXCLUDE = [".venv/", "*.egg-info/", "__pycache__/", ".pytest_cache/", ".ironbees/"]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "replay",
    "GIT_AUTHOR_EMAIL": "replay@localhost",
    "GIT_COMMITTER_NAME": "replay",
    "GIT_COMMITTER_EMAIL": "replay@localhost",
    # A fixed date: the same instance gets the same commit id on every machine.
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}
PASSING = ("PASSED", "XFAIL")
STATUSES = ("PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS")


# --- the data --------------------------------------------------------------------------


def load_dataset(path):
    """instance_id -> row, FAIL_TO_PASS/PASS_TO_PASS as lists (the HF export has them as JSON strings)."""
    with open(path) as f:
        text = f.read()
    rows = json.loads(text) if text.lstrip().startswith("[") else [json.loads(l) for l in text.splitlines() if l.strip()]
    out = {}
    for r in rows:
        for k in ("FAIL_TO_PASS", "PASS_TO_PASS"):
            if isinstance(r.get(k), str):
                r[k] = json.loads(r[k])
        out[r["instance_id"]] = r
    return out


def load_ids(path):
    with open(path) as f:
        return [l.split("#")[0].strip() for l in f if l.split("#")[0].strip()]


def load_pins(path=PINS):
    with open(path) as f:
        return json.load(f)


def spec_for(pins, repo, version):
    versions = pins["repos"].get(repo, {})
    spec = versions.get(version)
    seen = set()
    while spec and "same_as" in spec and spec["same_as"] not in seen:
        seen.add(spec["same_as"])
        spec = versions.get(spec["same_as"])
    return spec


def mirror_of(mirrors, repo):
    return os.path.join(mirrors, repo.replace("/", "+"), "repo")


def test_files(test_patch):
    files = re.findall(r"^diff --git a/.* b/(.*)$", test_patch, flags=re.M)
    return [f for f in files if not f.endswith(NON_TEST_EXTS)]


def patch_files(patch):
    """(path, kind) per file of a unified git diff: kind is modify, create, delete or rename."""
    out = []
    for block in re.split(r"^(?=diff --git )", patch, flags=re.M):
        m = re.match(r"diff --git a/(.*?) b/(.*)$", block, flags=re.M)
        if not m:
            continue
        a, b = m.group(1), m.group(2)
        if re.search(r"^new file mode", block, flags=re.M) or "\n--- /dev/null" in block:
            out.append((b, "create"))
        elif re.search(r"^deleted file mode", block, flags=re.M) or "\n+++ /dev/null" in block:
            out.append((a, "delete"))
        elif a != b:
            out.append((a, "delete"))
            out.append((b, "create"))
        else:
            out.append((b, "modify"))
    return out


# --- commands --------------------------------------------------------------------------


def clean_env(extra=None):
    """The caller's environment less anything that would point Python elsewhere."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "VIRTUAL_ENV", "CONDA", "PIP_REQUIRE", "IRONBEES_", "ANTHROPIC_", "OPENAI_"))}
    env.update(extra or {})
    return env


def sh(argv, cwd, log, timeout=3600, env=None, check=True, stdin=None):
    t0 = time.time()
    with open(log, "a") as f:
        f.write(f"\n$ {' '.join(argv)}\n")
        f.flush()
        try:
            p = subprocess.run(argv, cwd=cwd, env=env or clean_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=timeout, input=stdin)
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            f.write(out + f"\n[timed out after {timeout}s]\n")
            raise Failure(f"`{' '.join(argv[:4])} ...` timed out after {timeout}s")
        f.write(p.stdout)
        f.write(f"[exit {p.returncode}, {time.time() - t0:.1f}s]\n")
    if check and p.returncode != 0:
        raise Failure(f"`{' '.join(argv[:6])}{' ...' if len(argv) > 6 else ''}` exited {p.returncode}: {last_lines(p.stdout)}")
    return p


def last_lines(text, n=6):
    """The end of an output, led by its last `SomethingError: ...` line when there is one
    (pip's own closing lines say only that a subprocess failed)."""
    lines = [l for l in text.strip().splitlines() if l.strip()]
    errors = [l.strip() for l in lines if re.search(r"\b\w*(Error|Exception): ", l) and "note:" not in l]
    tail = [l.strip()[:200] for l in lines[-n:]]
    return " | ".join(([errors[-1][:300]] if errors and errors[-1][:200] not in tail else []) + tail)


class Failure(Exception):
    pass


def git(root, *args, log, check=True, stdin=None):
    return sh(["git", "-C", root, *args], cwd=root, log=log, env=clean_env(GIT_ENV), check=check, stdin=stdin)


# --- the environment --------------------------------------------------------------------


def requirements_text(gitdir, commit, paths):
    """The requirements file at `commit` as SWE-bench's get_requirements_by_commit reads it."""
    for path in paths:
        p = subprocess.run(["git", "--git-dir", gitdir, "show", f"{commit}:{path}"], capture_output=True, text=True)
        if p.returncode == 0:
            break
    else:
        raise Failure(f"no requirements file at {paths} in {commit}")
    exclude = lambda line: any(line.strip().startswith(x) for x in ["-e .", "#", ".[test"])
    req_dir = os.path.dirname(path)
    original, additional = [], []
    for line in p.stdout.split("\n"):
        if line.strip().startswith("-r"):
            name = line.strip()[2:].strip()
            q = subprocess.run(["git", "--git-dir", gitdir, "show", f"{commit}:{os.path.normpath(os.path.join(req_dir, name))}"],
                               capture_output=True, text=True)
            if q.returncode == 0:
                additional += [l for l in q.stdout.split("\n") if not exclude(l)]
        elif not exclude(line):
            original.append(line)
    text = "\n".join(additional + ["\n".join(original)])
    # SWE-bench's clean_requirements: types-pkg_resources was yanked from PyPI.
    return re.sub(r"^types-pkg_resources([<>=!~]=?.*|$)", "types-setuptools", text, flags=re.M)


def req_name(line):
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line)
    return re.sub(r"[-_.]+", "-", m.group(1)).lower() if m else None


def apply_replacements(lines, replace):
    """Swap the pins named in `replace` (normalized name -> requirement or null to drop)."""
    norm = {re.sub(r"[-_.]+", "-", k).lower(): v for k, v in (replace or {}).items()}
    out, done = [], set()
    for line in lines:
        name = req_name(line.split("#")[0]) if line.split("#")[0].strip() else None
        if name in norm:
            done.add(name)
            if norm[name]:
                out.append(norm[name])
            continue
        out.append(line)
    return out


def build_env(row, spec, pins, root, gitdir, logdir, python):
    log = os.path.join(logdir, "install.log")
    sh([python, "-m", "venv", ".venv"], cwd=root, log=log)
    vpy = os.path.join(root, ".venv", "bin", "python")
    pip = [vpy, "-m", "pip", "install", "--disable-pip-version-check", "--no-input"]
    if spec.get("requirements"):
        text = requirements_text(gitdir, row["environment_setup_commit"], spec["requirements"])
        lines = apply_replacements(text.split("\n"), spec.get("replace"))
        path = os.path.join(logdir, "requirements.txt")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        sh(pip + ["-r", path], cwd=root, log=log)
    if spec.get("pip"):
        sh(pip + apply_replacements(spec["pip"], spec.get("replace")), cwd=root, log=log)
    for argv in spec.get("pre_install", []):
        sh(argv, cwd=root, log=log)
    sh(pip + spec.get("install", "-e .").split(), cwd=root, log=log)
    for extra in spec.get("post_install", []):
        sh(pip + extra, cwd=root, log=log)
    freeze = sh([vpy, "-m", "pip", "freeze", "--all"], cwd=root, log=os.devnull)
    with open(os.path.join(logdir, "freeze.txt"), "w") as f:
        f.write(freeze.stdout)
    return vpy


# --- tests -----------------------------------------------------------------------------


def normalize(test_id):
    """SWE-bench's parse_log_pytest_options: a path parameter keeps its last component."""
    m = re.match(r"(.*?)\[(.*)\]$", test_id)
    if m:
        main, option = m.groups()
        if option.startswith("/") and not option.startswith("//") and "*" not in option:
            option = "/" + option.split("/")[-1]
        return f"{main}[{option}]"
    return test_id


def parse_rA(output):
    """test id -> status, from pytest's `-rA` short summary (and the `-v` lines seaborn's parser reads)."""
    status = {}
    for line in output.split("\n"):
        word = line.split(" ", 1)[0]
        if word in STATUSES and " " in line:
            rest = line.split(" ", 1)[1].strip()
            if word in ("FAILED", "ERROR", "XFAIL", "SKIPPED", "XPASS") and " - " in rest:
                rest = rest.split(" - ", 1)[0]
            if word == "SKIPPED" and rest.startswith("["):
                continue  # "SKIPPED [1] file:line: reason": no test id
            for tid in {rest, rest.split(" ")[0]}:
                # ERROR of a test id after PASSED (a teardown error) wins.
                if tid not in status or word in ("FAILED", "ERROR"):
                    status[tid] = word
                    status.setdefault(normalize(tid), word)
    return status


def error_hint(output):
    """The error the most failing tests share (`E   SomeError: ...`), or the first one."""
    lines = [l.strip()[2:].strip()[:200] for l in output.splitlines() if re.match(r"E\s+\S*(Error|Exception)\b", l)]
    return max(set(lines), key=lines.count) if lines else ""


def run_tests(vpy, root, files, log, timeout, args):
    argv = [vpy, "-m", "pytest", *args, *files]
    t0 = time.time()
    p = sh(argv, cwd=root, log=log, timeout=timeout, check=False)
    return parse_rA(p.stdout), p, time.time() - t0


def verdict(status, tests):
    """(passing, not passing with status)"""
    ok, bad = [], {}
    for t in tests:
        s = status.get(t) or status.get(normalize(t))
        if s in PASSING:
            ok.append(t)
        else:
            bad[t] = s or "MISSING"
    return ok, bad


def apply_patch(root, patch, log):
    git(root, "apply", "--whitespace=nowarn", "-", log=log, stdin=patch)


def restore(root, log):
    git(root, "reset", "-q", "--hard", "HEAD", log=log)
    git(root, "clean", "-q", "-fd", log=log)


# --- one instance ------------------------------------------------------------------------


def build(row, pins, args):
    iid = row["instance_id"]
    root = os.path.join(args.out, iid)
    logdir = os.path.join(args.out, "_logs", iid)
    entry = {
        "instance_id": iid,
        "repo": row["repo"],
        "version": row["version"],
        "base_commit": row["base_commit"],
        "environment_setup_commit": row["environment_setup_commit"],
        "dir": root,
        "logs": logdir,
        "python": None,
        "kept": False,
        "reason": None,
        "seconds": {},
    }
    spec = spec_for(pins, row["repo"], row["version"])
    if spec is None:
        entry["reason"] = f"no pins for {row['repo']} {row['version']} in scripts/replay/pins.json"
        return entry
    entry["pins"] = spec
    if os.path.exists(root):
        shutil.rmtree(root)
    if os.path.exists(logdir):
        shutil.rmtree(logdir)
    os.makedirs(logdir)
    log = os.path.join(logdir, "setup.log")
    gitdir = mirror_of(args.mirrors, row["repo"])
    try:
        t = time.time()
        sh(["git", "clone", "-q", "--no-checkout", gitdir, root], cwd=args.out, log=log)
        git(root, "checkout", "-q", "--detach", row["base_commit"], log=log)
        git(root, "remote", "remove", "origin", log=log)
        with open(os.path.join(root, ".git", "info", "exclude"), "a") as f:
            f.write("\n# replay benchmark\n" + "\n".join(EXCLUDE) + "\n")
        entry["seconds"]["clone"] = round(time.time() - t, 1)

        t = time.time()
        vpy = build_env(row, spec, pins, root, gitdir, logdir, args.python)
        entry["seconds"]["install"] = round(time.time() - t, 1)
        entry["python"] = sh([vpy, "-c", "import sys; print(sys.version.split()[0])"], cwd=root, log=log).stdout.strip()

        # The test patch (and whatever pre_install changed) is the instance's HEAD.
        apply_patch(root, row["test_patch"], log)
        git(root, "add", "-A", log=log)
        git(root, "commit", "-q", "--no-verify", "-m", f"replay: {iid} test patch", log=log)
        status = git(root, "status", "--porcelain", log=log).stdout
        if status.strip():
            raise Failure(f"the tree is not clean after the setup: {status.strip()[:300]}")
        entry["head"] = git(root, "rev-parse", "HEAD", log=log).stdout.strip()

        files = test_files(row["test_patch"])
        entry["test_files"] = files
        targs = pins.get("test_args", ["-rA"])
        t = time.time()
        before, p0, s0 = run_tests(vpy, root, files, os.path.join(logdir, "tests-base.log"), args.timeout, targs)
        entry["seconds"]["tests_base"] = round(s0, 1)
        apply_patch(root, row["patch"], log)
        after, p1, s1 = run_tests(vpy, root, files, os.path.join(logdir, "tests-gold.log"), args.timeout, targs)
        entry["seconds"]["tests_gold"] = round(s1, 1)
        restore(root, log)
        if git(root, "status", "--porcelain", log=log).stdout.strip():
            raise Failure("the tree did not restore after the gold patch")

        f2p, p2p = row["FAIL_TO_PASS"], row["PASS_TO_PASS"]
        f2p_base_ok, _ = verdict(before, f2p)
        f2p_ok, f2p_bad = verdict(after, f2p)
        p2p_ok, p2p_bad = verdict(after, p2p)
        _, p2p_bad_base = verdict(before, p2p)
        entry["fail_to_pass"] = f2p
        entry["pass_to_pass"] = p2p_ok  # the ones the benchmark checks: they pass here with the gold patch
        entry["pass_to_pass_not_here"] = p2p_bad
        if not before and not after:
            raise Failure(f"pytest reported no test (exit {p1.returncode}): {last_lines(p1.stdout)}")
        if f2p_base_ok:
            entry["reason"] = f"FAIL_TO_PASS already pass at the base: {f2p_base_ok[:3]}"
        elif f2p_bad:
            entry["reason"] = "FAIL_TO_PASS do not pass with the gold patch: " + ", ".join(
                f"{t} ({s})" for t, s in list(f2p_bad.items())[:3]) + (f" (+{len(f2p_bad) - 3})" if len(f2p_bad) > 3 else "") \
                + (f"; pytest: {last_lines(p1.stdout, 3)}" if set(f2p_bad.values()) == {"MISSING"} else "") \
                + (f"; most common error: {error_hint(p1.stdout)}" if error_hint(p1.stdout) else "")
        elif any(t not in p2p_bad_base for t in p2p_bad):
            broken = [t for t in p2p_bad if t not in p2p_bad_base]
            entry["reason"] = f"PASS_TO_PASS pass at the base and fail with the gold patch here: {broken[:3]}"
        else:
            entry["kept"] = True
    except Failure as e:
        entry["reason"] = str(e)
    except Exception as e:  # a bug here should not lose the other instances
        entry["reason"] = f"setup error: {type(e).__name__}: {e}"
    if not entry["kept"] and not args.keep_left_out and os.path.exists(root):
        shutil.rmtree(root, ignore_errors=True)
        entry["dir"] = None
    return entry


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", help="SWE-bench Lite as JSON (a list) or JSON Lines")
    ap.add_argument("--out", required=True, help="where the instances go (one directory each) and manifest.json")
    ap.add_argument("--mirrors", default="/work/.mirror", help="local git directories, OWNER+NAME/repo (default /work/.mirror)")
    ap.add_argument("--ids", default=IDS, help="instance ids, one a line (default scripts/replay/instances.txt)")
    ap.add_argument("--only", default="", help="comma-separated instance ids (a subset of --ids or any)")
    ap.add_argument("--pins", default=PINS, help="the pins file (default scripts/replay/pins.json)")
    ap.add_argument("--python", default="python3", help="the interpreter that makes the .venv (default python3)")
    ap.add_argument("--jobs", type=int, default=1, help="instances built at once (default 1)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per pytest run (default 1800)")
    ap.add_argument("--keep-left-out", action="store_true", help="keep the directories of instances left out")
    ap.add_argument("--report", action="store_true", help="print OUT/manifest.json as a Markdown table; build nothing")
    a = ap.parse_args()
    a.out = os.path.abspath(a.out)
    if a.report:
        return report(os.path.join(a.out, "manifest.json"))
    if not a.dataset:
        ap.error("--dataset is needed to build")
    os.makedirs(a.out, exist_ok=True)
    data = load_dataset(a.dataset)
    pins = load_pins(a.pins)
    ids = [i for i in a.only.split(",") if i] or load_ids(a.ids)
    missing = [i for i in ids if i not in data]
    if missing:
        sys.exit(f"not in {a.dataset}: {missing}")
    manifest_path = os.path.join(a.out, "manifest.json")
    with open(a.pins, "rb") as f:
        pins_sha = hashlib.sha256(f.read()).hexdigest()
    with open(a.dataset, "rb") as f:
        data_sha = hashlib.sha256(f.read()).hexdigest()

    def one(iid):
        t = time.time()
        e = build(data[iid], pins, a)
        e["seconds"]["total"] = round(time.time() - t, 1)
        print(f"{iid}: {'kept' if e['kept'] else 'left out: ' + str(e['reason'])} ({e['seconds']['total']:.0f}s)",
              file=sys.stderr, flush=True)
        return e

    def record(e):
        """Merge one entry into the manifest on disk (another setup may be writing it too)."""
        with open(manifest_path + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            manifest = {"instances": {}}
            if os.path.exists(manifest_path):
                with open(manifest_path) as f:
                    manifest = json.load(f)
            e["pins_sha256"] = pins_sha
            manifest["instances"][e["instance_id"]] = e
            manifest.update({
                "dataset": os.path.abspath(a.dataset),
                "dataset_sha256": data_sha,
                "updated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            })
            with open(manifest_path + ".tmp", "w") as f:
                json.dump(manifest, f, indent=1)
            os.replace(manifest_path + ".tmp", manifest_path)
        return manifest

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        for e in ex.map(one, ids):
            manifest = record(e)
    kept = [i for i, e in manifest["instances"].items() if e["kept"]]
    print(f"\n{len(kept)} kept, {len(manifest['instances']) - len(kept)} left out; manifest: {manifest_path}", file=sys.stderr)
    for i, e in sorted(manifest["instances"].items()):
        if not e["kept"]:
            print(f"  left out {i}: {e['reason']}", file=sys.stderr)


def short_reason(reason):
    """The part of a reason a table can hold: the error, not the command line."""
    r = reason or ""
    m = re.search(r"(\w+(?:\.\w+)*(?:Error|Exception): [^|]{0,160})", r)
    head = r.split(":")[0] if r.startswith(("FAIL_TO_PASS", "PASS_TO_PASS", "pytest reported")) else ""
    if m:
        return (head + ": " if head else "") + m.group(1).strip()
    return r[:200]


def report(path):
    with open(path) as f:
        m = json.load(f)
    print("| instance | version | Python | kept | FAIL_TO_PASS | PASS_TO_PASS checked (not passing here) | why left out |")
    print("| --- | --- | --- | --- | ---: | ---: | --- |")
    for iid, e in sorted(m["instances"].items()):
        p2p = f"{len(e.get('pass_to_pass') or [])} ({len(e.get('pass_to_pass_not_here') or {})})" if e["kept"] else "-"
        print(f"| {iid} | {e['version']} | {e.get('python') or '-'} | {'yes' if e['kept'] else 'no'} "
              f"| {len(e.get('fail_to_pass') or []) or '-'} | {p2p} | {'' if e['kept'] else short_reason(e['reason']).replace('|', '/')} |")
    kept = sum(e["kept"] for e in m["instances"].values())
    print(f"\n{kept} kept, {len(m['instances']) - kept} left out")


if __name__ == "__main__":
    main()
