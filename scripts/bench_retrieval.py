#!/usr/bin/env python3
"""Retrieval latency on a warm index: `ironbees localize`, `search`, `repomap --query`,
with ripgrep (else `grep -rn`) for the same keywords on the same tree, side by side.

Trees: the largest localization tree (pylint-dev__pylint-8898, ~112k lines of Python)
and Django 5.1.4 (~500k lines). Each is copied to a scratch directory first (the
index is written under the tree's .ironbees/, and the originals belong to other
benchmarks), indexed once, and every command runs once as a warm-up and then
`--runs` times per query. Reported: p50 and p95 wall time (the whole process: load
the snapshot, bring the index up to date, answer), and the ratio to the peer.

    cargo build --release -p cli
    python3 scripts/bench_retrieval.py [--bin target/release/ironbees] [--runs 20] [--json]
        [--only pylint|django] [--commands localize,search,repomap]
"""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = "/work/shared/data/localization/dev.jsonl"
PYLINT = "/work/main/bench-data/localize/trees/pylint-dev__pylint-8898"
DJANGO = "/work/main/bench-data/corpora/python/Django-5.1.4"

# Short queries of every kind `search` distinguishes: a name, a typo, words, a path,
# an error message.
SEARCH = {
    "pylint": [
        "PyLinter",
        "get_checker_names",
        "unused import message",
        "pylint/lint/run.py",
        "No module named",
    ],
    "django": [
        "QuerySet",
        "get_or_creat",
        "password reset token expiry",
        "django/db/models/query.py",
        "Cannot resolve keyword",
    ],
}
# Requests for localize and repomap: real issues on pylint; Django issues in the
# same style (there is no Django instance in the dev split).
DJANGO_ISSUES = [
    "QuerySet.bulk_create() crashes on mixed case columns in unique_fields/update_fields.\n"
    "Not sure exactly how to phrase this, but when I I'm calling bulk_update on the manager "
    "for a class with db_column set on fields the SQL is invalid. `ON CONFLICT(\"blacklistid\")` "
    "uses the field name rather than the db_column.",
    "Admin changelist: list_filter on a ForeignKey with a custom `limit_choices_to` ignores it; "
    "RelatedFieldListFilter.field_choices() should pass limit_choices_to to get_choices().",
    "`makemigrations --check` writes migrations. It exits with status 1 but the migration "
    "files are still written, unlike `migrate --check` and `optimizemigration --check`.",
]

STOP = set("""a an and are as at be but by can could do does for from has have how i if in
into is it its not of on or so that the their then there these this to was we were what when
where which who why will with would should you your after before error issue when""".split())


def keywords(text, limit=5):
    """The code-like words of a request (backticks, CamelCase, snake_case, dotted), else
    its longest words: what a developer would grep for."""
    code = re.findall(r"`([^`\n]{2,60})`", text)
    code += re.findall(r"\b[A-Za-z_][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b", text)
    code += re.findall(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b", text)
    out = []
    for c in code:
        for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", c):
            if w.lower() not in STOP and w not in out:
                out.append(w)
    if not out:
        words = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", text) if w.lower() not in STOP]
        out = sorted(dict.fromkeys(words), key=len, reverse=True)
    return out[:limit]


def peer():
    rg = shutil.which("rg")
    if rg:
        return "rg", lambda tree, kws: [rg, "-n", "-i", "--no-messages", *sum((["-e", k] for k in kws), []), "."]
    return "grep -rn", lambda tree, kws: ["grep", "-rn", "-i", "-I", *sum((["-e", k] for k in kws), []), "."]


def timed(cmd, cwd, runs, ok_codes=(0,)):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True)  # warm-up
    if p.returncode not in ok_codes:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.decode()[-2000:]}")
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        # As subprocess.run(capture_output=True), but reaped with wait4 for the process's
        # peak RSS (ru_maxrss, KiB on Linux).
        p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = threading.Thread(target=p.stderr.read)
        err.start()
        p.stdout.read()
        err.join()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        p.stdout.close()
        p.stderr.close()
        times.append(time.perf_counter() - t)
        RSS.append(ru.ru_maxrss)
    return times


RSS = []  # peak RSS (KiB) of each timed process; timed() appends, main() reads and clears


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def scratch_copy(src, work):
    dest = os.path.join(work, os.path.basename(src.rstrip("/")))
    if not os.path.isdir(dest):
        shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns(".ironbees"))
    return dest


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/ironbees"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "ironbees-bench-retrieval"))
    ap.add_argument("--only", choices=["pylint", "django"])
    ap.add_argument("--commands", default="localize,search,repomap", help="comma-separated subset")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--pylint", default=PYLINT, help="the pylint-8898 tree to copy (default: %(default)s)")
    ap.add_argument("--django", default=DJANGO, help="the Django 5.1.4 tree to copy (default: %(default)s)")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    os.makedirs(args.work, exist_ok=True)
    peer_name, peer_cmd = peer()

    issues = {}
    with open(DATA) as f:
        for line in f:
            r = json.loads(line)
            if r["repo"] == "pylint-dev/pylint":
                issues[r["instance_id"]] = r["problem_statement"]
    pylint_issues = [issues[k] for k in sorted(issues)[-3:]]

    trees = [("pylint", args.pylint, pylint_issues), ("django", args.django, DJANGO_ISSUES)]
    rows = []
    for name, src, requests in trees:
        if args.only and args.only != name:
            continue
        tree = scratch_copy(src, args.work)
        t = time.perf_counter()
        subprocess.run([binary, "-C", tree, "index"], check=True, capture_output=True)
        cold = time.perf_counter() - t
        py = [os.path.join(d, f) for d, _, fs in os.walk(tree) if ".ironbees" not in d for f in fs if f.endswith(".py")]
        lines = sum(sum(1 for _ in open(p, "rb")) for p in py)
        print(f"{name}: {tree} ({len(py)} Python files, {lines} lines), first index {cold:.1f}s", file=sys.stderr)
        qfiles = []
        for i, text in enumerate(requests):
            qf = os.path.join(args.work, f"{name}-issue-{i}.txt")
            with open(qf, "w") as f:
                f.write(text)
            qfiles.append((qf, text))
        cases = []
        for qf, text in qfiles:
            cases.append(("localize", [binary, "-C", tree, "localize", "--query-file", qf, "--json"], keywords(text)))
        for q in SEARCH[name]:
            cases.append(("search", [binary, "-C", tree, "search", q, "--json"], keywords(q)))
        for qf, text in qfiles:
            cases.append(("repomap", [binary, "-C", tree, "repomap", "--tokens", "2048", "--query-file", qf, "--json"],
                          keywords(text)))
        wanted = set(args.commands.split(","))
        cases = [c for c in cases if c[0] in wanted]
        per_cmd = {}
        for cmd_name, cmd, kws in cases:
            RSS.clear()
            ours = timed(cmd, tree, args.runs)
            rss = max(RSS)
            theirs = timed(peer_cmd(tree, kws), tree, args.runs, ok_codes=(0, 1))
            per_cmd.setdefault(cmd_name, ([], [], []))
            per_cmd[cmd_name][2].append(rss)
            per_cmd[cmd_name][0].extend(ours)
            per_cmd[cmd_name][1].extend(theirs)
            print(f"  {cmd_name:8} p50 {statistics.median(ours)*1000:7.0f} ms  {peer_name} p50 "
                  f"{statistics.median(theirs)*1000:6.0f} ms  {kws}", file=sys.stderr)
        for cmd_name, (ours, theirs, rss) in per_cmd.items():
            rows.append({
                "tree": name, "command": cmd_name, "runs": len(ours),
                "p50_ms": pct(ours, 0.5) * 1000, "p95_ms": pct(ours, 0.95) * 1000,
                "peer": peer_name, "peer_p50_ms": pct(theirs, 0.5) * 1000, "peer_p95_ms": pct(theirs, 0.95) * 1000,
                "max_rss_mb": max(rss) / 1024,
            })
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"| tree | command | runs | p50 ms | p95 ms | {peer_name} p50 ms | {peer_name} p95 ms | p50 ratio | max RSS MB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['tree']} | {r['command']} | {r['runs']} | {r['p50_ms']:.0f} | {r['p95_ms']:.0f} | "
              f"{r['peer_p50_ms']:.0f} | {r['peer_p95_ms']:.0f} | {r['p50_ms'] / r['peer_p50_ms']:.1f}x | {r['max_rss_mb']:.0f} |")


if __name__ == "__main__":
    main()
