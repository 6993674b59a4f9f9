#!/usr/bin/env python3
"""Issue 36: the latency of a 3-file `ironbees change`, one binary against another.

Each binary gets its own copy of the tree (a stored snapshot is keyed by the build
that wrote it, so two binaries on one tree would rebuild each other's), indexed
once. Then, alternating between the binaries, each run applies one request that
replaces a marker line at the end of three files (`# bench-change: N` -> N+1),
as the CLI and the agent's apply do it: `ironbees change --edits REQ --json`
(dryRun false, the syntax check, no impact). Wall time includes process start.
Reports p50/p95 per binary; `uptime` (load average) before and after, and
"other load" (the CPU the rest of the machine used during the runs, /proc/stat,
in % of wall time x cores: a build next door shows up there).

    python3 scripts/bench_change.py --tree path/to/django \\
        --bin before=/tmp/ironbees-old --bin after=target/release/ironbees --runs 30

The three files default to the first three of FILES below that exist in the tree
(Django's, else SymPy's); --file (three times) overrides them.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

FILES = [
    "django/db/models/query.py", "django/db/models/base.py", "django/http/request.py",
    "sympy/core/basic.py", "sympy/core/expr.py", "sympy/simplify/simplify.py",
]


def uptime():
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


def busy_seconds():
    """Non-idle CPU seconds of the whole machine so far (/proc/stat)."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def run(cmd, cwd):
    busy0 = busy_seconds()
    t = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    secs = time.perf_counter() - t
    out, err = p.stdout.read(), p.stderr.read()
    code = os.waitstatus_to_exitcode(status)
    other = busy_seconds() - busy0 - (ru.ru_utime + ru.ru_stime)
    other_pct = max(0.0, 100 * other / (secs * (os.cpu_count() or 1)))
    if code != 0:
        sys.exit(f"{' '.join(cmd)} exited {code}: {err.decode(errors='replace')[-800:]}")
    return secs, other_pct, out


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", required=True, help="the project to copy and edit")
    ap.add_argument("--bin", action="append", required=True, metavar="LABEL=PATH")
    ap.add_argument("--file", action="append", help="a file to edit (give three)")
    ap.add_argument("--runs", type=int, default=30, help="timed runs per binary")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--work", help="where the copies go (default: a temp dir)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    bins = [b.split("=", 1) for b in a.bin]
    files = a.file or [f for f in FILES if os.path.exists(os.path.join(a.tree, f))][:3]
    if len(files) != 3:
        sys.exit(f"need three files to edit, found {files}")
    work = a.work or tempfile.mkdtemp(prefix="bench-change-")
    trees = {}
    for label, binary in bins:
        tree = os.path.join(work, label)
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(a.tree, tree, symlinks=True,
                        ignore=shutil.ignore_patterns(".ironbees", ".git"))
        os.makedirs(os.path.join(tree, ".git"))  # pins the project root to the copy
        for f in files:
            with open(os.path.join(tree, f), "a") as fh:
                fh.write("# bench-change: 0\n")
        secs, _, _ = run([os.path.abspath(binary), "index", "--json"], tree)
        print(f"{label}: indexed {tree} in {secs:.1f}s", file=sys.stderr)
        trees[label] = tree
    load_before = uptime()
    times = {label: [] for label, _ in bins}
    other = {label: [] for label, _ in bins}
    for i in range(a.warmup + a.runs):
        for label, binary in bins if i % 2 == 0 else list(reversed(bins)):
            n = i
            req = {"description": f"bench step {n}", "edits": [
                {"path": f, "targetString": f"# bench-change: {n}\n",
                 "replacementString": f"# bench-change: {n + 1}\n"} for f in files]}
            path = os.path.join(work, f"{label}.json")
            with open(path, "w") as fh:
                json.dump(req, fh)
            secs, other_pct, out = run(
                [os.path.abspath(binary), "change", "--edits", path, "--json"], trees[label])
            if not json.loads(out).get("transactionId"):
                sys.exit(f"{label}: step {n} committed nothing: {out[:300]!r}")
            if i >= a.warmup:
                times[label].append(secs)
                other[label].append(other_pct)
    load_after = uptime()
    res = {"tree": a.tree, "files": files, "runs": a.runs, "cores": os.cpu_count(),
           "uptime_before": load_before, "uptime_after": load_after, "bins": {}}
    for label, binary in bins:
        xs = times[label]
        res["bins"][label] = {"bin": binary, "p50_ms": 1000 * statistics.median(xs),
                              "p95_ms": 1000 * pct(xs, 0.95), "min_ms": 1000 * min(xs),
                              "other_load_max_pct": max(other[label])}
    if a.json:
        print(json.dumps(res, indent=2))
        return
    print(f"tree {a.tree}, files {', '.join(files)}; {a.runs} runs each, alternating; "
          f"{res['cores']} cores")
    print(f"uptime before: {load_before}\nuptime after:  {load_after}")
    print("| binary | p50 | p95 | min | other load (max) |")
    print("| --- | --- | --- | --- | --- |")
    for label, r in res["bins"].items():
        print(f"| {label} | {r['p50_ms']:.0f} ms | {r['p95_ms']:.0f} ms | {r['min_ms']:.0f} ms "
              f"| {r['other_load_max_pct']:.0f}% |")


if __name__ == "__main__":
    main()
