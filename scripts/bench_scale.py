#!/usr/bin/env python3
"""Issue 27: one-shot queries at monorepo scale, against ctags and rg, in one run.

On a tree (Django, or the multi-million-line tree of scripts/bench-scale-corpus.sh):
  - `ctags -R` (tags to a temp file) and a cold `ironbees index` (after removing
    TREE/.ironbees), wall time and peak RSS;
  - then each one-shot command, its first call after the index and N later calls
    (median), each later call paired with `rg -l` for the same words (ratio per pair):
      localize --query Q -k 5     rg -l -i -w -e word...  (Q's words)
      search Q                    the same rg
      repomap --query Q           the same rg (map of the default 1024 tokens)
      graph callers SYMBOL --all  rg -l -w NAME           (SYMBOL's last part)
      impact FILE                 rg -l -w STEM           (FILE's name without extension)
  - --touch FILE: N times, append a comment line to FILE and time the next `localize`
    (the file is rewritten in place and restored at the end: the growth subsets are
    hard links into bench-data/scale/full, so every tree sees the change meanwhile);
  - --growth DIR: for each subset DIR/<label>/ (bench-data/scale/growth/0.5M ...):
    lines, cold index, first and later one-shot localize, with peak RSS.
Wall times include process start; peak RSS is wait4's ru_maxrss of that process.
"other load" is the CPU the rest of the machine used during a run (/proc/stat busy
time minus the measured process's own user+sys time), in % of wall time x cores,
the maximum over a row's runs: a build next door shows up there.
`uptime` (load average) is recorded before and after each part.

    scripts/bench-scale-corpus.sh
    python3 scripts/bench_scale.py --bin target/release/ironbees --root bench-data/scale/full --runs 3
    python3 scripts/bench_scale.py --bin ... --root path/to/Django-5.1.4 --runs 5 --touch django/db/models/query.py
    python3 scripts/bench_scale.py --bin ... --growth bench-data/scale/growth --json

Queries: a preset is chosen by the first of its anchor files that exists under the
tree (PRESETS below: Django at the root, or Django inside the scale tree at
python/django/); --query/--symbol/--file override it.
"""
import argparse, json, os, re, shlex, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale_corpus import walk_sources  # noqa: E402  (the line rule)

DJANGO = {
    "query": "QuerySet bulk_create ignores conflicts on update",
    "symbol": "QuerySet.bulk_create",
    "file": "django/db/models/query.py",
}
PRESETS = [  # (anchor file under the tree, prefix for paths)
    ("django/db/models/query.py", ""),
    ("python/django/django/db/models/query.py", "python/django/"),
]
STOP = {"the", "a", "an", "on", "in", "of", "to", "and", "or", "is", "for", "with", "when", "not"}


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


def steal():
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return v[7], sum(v)
    except (OSError, IndexError, ValueError):
        return 0, 0


class Runner:
    def __init__(self, timeout):
        self.timeout = timeout

    def __call__(self, cmd, cwd, ok=(0,)):
        os.sync()
        busy0 = busy_seconds()
        t = time.perf_counter()
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            p = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err)
            deadline = t + self.timeout
            status = ru = None
            while True:
                pid, status, ru = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    break
                if time.perf_counter() > deadline:
                    p.kill()
                    _, status, ru = os.wait4(p.pid, 0)
                    break
                time.sleep(0.002)
            p.returncode = os.waitstatus_to_exitcode(status)
            secs = time.perf_counter() - t
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read(), err.read()
        code = p.returncode
        # CPU time the rest of the machine used meanwhile (a build next door), as a
        # share of the run's wall time x cores: 0 on an otherwise idle machine.
        other = busy_seconds() - busy0 - (ru.ru_utime + ru.ru_stime)
        other_pct = max(0.0, 100 * other / (secs * (os.cpu_count() or 1)))
        if code not in ok:
            print(f"  ! {' '.join(cmd)} exited {code} after {secs:.2f}s: "
                  f"{stderr.decode(errors='replace')[-500:]}", file=sys.stderr)
        return {"s": secs, "rss_mib": ru.ru_maxrss / 1024, "code": code, "out": stdout,
                "other_pct": other_pct}


def words_of(query):
    return [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]+", query) if w.lower() not in STOP]


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def count_lines(root):
    per = {}
    for _, lang, n in walk_sources(root):
        per[lang] = per.get(lang, 0) + n
    return per


def fresh_index(run, binary, root):
    state = os.path.join(root, ".ironbees")
    shutil.rmtree(state, ignore_errors=True)
    os.makedirs(state)  # pins the project root to the tree
    r = run([binary, "index", "--json"], root)
    try:
        r["report"] = json.loads(r["out"])
    except ValueError:
        r["report"] = None
    return r


def bench_tree(args, run, binary, root, q):
    res = {"tree": root, "uptime_before": uptime(), "queries": q}
    lines = count_lines(root)
    res["lines"] = sum(lines.values())
    res["languages"] = lines
    print(f"tree: {root}: {res['lines']:,} non-blank source lines "
          f"({', '.join(f'{l} {n:,}' for l, n in sorted(lines.items(), key=lambda kv: -kv[1]))})")
    print(f"uptime: {res['uptime_before']}")
    st0 = steal()

    tags = tempfile.NamedTemporaryFile(suffix=".tags", delete=False).name
    ctags = [run(["ctags", "-R", "-f", tags, "."], root) for _ in range(args.index_runs)]
    os.unlink(tags)
    index = [fresh_index(run, binary, root) for _ in range(args.index_runs)]
    res["ctags"] = {"s": med([r["s"] for r in ctags]), "rss_mib": max(r["rss_mib"] for r in ctags),
                    "other_pct": max(r["other_pct"] for r in ctags)}
    res["index"] = {"s": med([r["s"] for r in index]), "rss_mib": max(r["rss_mib"] for r in index),
                    "other_pct": max(r["other_pct"] for r in index),
                    "report": {k: v for k, v in (index[-1]["report"] or {}).items()
                               if isinstance(v, (int, float, str))}}
    print(f"ctags -R: {res['ctags']['s']:.2f}s {res['ctags']['rss_mib']:.0f} MiB; "
          f"cold index: {res['index']['s']:.2f}s {res['index']['rss_mib']:.0f} MiB")

    words = words_of(q["query"])
    rg_query = ["rg", "-l", "-i", "-w"] + [x for w in words for x in ("-e", w)]
    name = re.split(r"[.:]+", q["symbol"])[-1]
    stem = os.path.splitext(os.path.basename(q["file"]))[0]
    cmds = [
        ("localize", [binary, "localize", "--query", q["query"], "-k", "5"], rg_query),
        ("search", [binary, "search", q["query"]], rg_query),
        ("repomap", [binary, "repomap", "--query", q["query"]], rg_query),
        ("graph callers", [binary, "graph", "callers", q["symbol"], "--all"], ["rg", "-l", "-w", name]),
        ("impact", [binary, "impact", q["file"]], ["rg", "-l", "-w", stem]),
    ]
    res["commands"] = []
    for label, cmd, rg in cmds:
        first = run(cmd, root)
        later, rgs = [], []
        for _ in range(args.runs):
            later.append(run(cmd, root))
            rgs.append(run(rg + ["."], root, ok=(0, 1)))
        pairs = sorted(a["s"] / b["s"] for a, b in zip(later, rgs))
        row = {
            "command": label, "argv": cmd[1:], "rg": rg,
            "first_s": first["s"], "first_rss_mib": first["rss_mib"], "first_code": first["code"],
            "later_s": [r["s"] for r in later], "later_p50_s": med([r["s"] for r in later]),
            "later_rss_mib": max(r["rss_mib"] for r in later),
            "codes": sorted({r["code"] for r in later}),
            "rg_p50_s": med([r["s"] for r in rgs]), "rg_rss_mib": max(r["rss_mib"] for r in rgs),
            "rg_files": len(rgs[-1]["out"].splitlines()),
            "ratio_p50": med(pairs), "ratio_min": pairs[0], "ratio_max": pairs[-1],
            "output_lines": len(later[-1]["out"].splitlines()),
            "other_pct": max(r["other_pct"] for r in [first] + later + rgs),
        }
        res["commands"].append(row)
        print(f"  {label}: first {row['first_s']:.2f}s, later p50 {row['later_p50_s']:.2f}s "
              f"({row['later_rss_mib']:.0f} MiB), rg {row['rg_p50_s']:.3f}s, "
              f"ratio {row['ratio_p50']:.1f}x, exit {row['codes']}")

    if args.touch:
        path = os.path.join(root, args.touch)
        original = open(path, "rb").read()
        mark = "#" if path.endswith((".py", ".pyi")) else "//"
        cmd = [binary, "localize", "--query", q["query"], "-k", "5"]
        touched = []
        try:
            for i in range(args.runs):
                with open(path, "wb") as f:
                    f.write(original + f"\n{mark} bench touch {i} {time.time()}\n".encode())
                touched.append(run(cmd, root))
        finally:
            with open(path, "wb") as f:
                f.write(original)
        after = run(cmd, root)  # picks up the restore
        base = res["commands"][0]["later_p50_s"]
        res["touch"] = {"file": args.touch, "s": [r["s"] for r in touched],
                        "p50_s": med([r["s"] for r in touched]),
                        "rss_mib": max(r["rss_mib"] for r in touched),
                        "other_pct": max(r["other_pct"] for r in touched),
                        "untouched_localize_p50_s": base, "after_restore_s": after["s"]}
        print(f"  touch {args.touch}: next localize p50 {res['touch']['p50_s']:.2f}s "
              f"vs {base:.2f}s untouched")

    st1 = steal()
    res["steal_pct"] = 100 * (st1[0] - st0[0]) / max(1, st1[1] - st0[1])
    res["uptime_after"] = uptime()
    return res


def table_tree(res, runs):
    out = [f"Tree `{res['tree']}`: {res['lines']:,} lines "
           f"({', '.join(f'{l} {n/1e6:.2f}M' for l, n in sorted(res['languages'].items(), key=lambda kv: -kv[1]))}); "
           f"load before: `{res['uptime_before']}`; after: `{res['uptime_after']}`; "
           f"CPU stolen {res['steal_pct']:.1f}%", "",
           f"| command | first call | later calls (p50 of {runs}) | peak RSS | rg -l same words (p50) | ratio ironbees/rg (p50 [min, max] per pair) | other load (max) |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
           f"| `ctags -R` | {res['ctags']['s']:.2f} s | | {res['ctags']['rss_mib']:.0f} MiB | | | {res['ctags']['other_pct']:.0f}% |",
           f"| `ironbees index` (cold) | {res['index']['s']:.2f} s | | {res['index']['rss_mib']:.0f} MiB | | "
           f"{res['index']['s'] / res['ctags']['s']:.2f}x ctags | {res['index']['other_pct']:.0f}% |"]
    for c in res["commands"]:
        rss = max(c["first_rss_mib"], c["later_rss_mib"])
        bad = "" if c["codes"] == [0] and c["first_code"] == 0 else f" (exit {c['first_code']}/{c['codes']})"
        out.append(f"| `{' '.join(c['argv'][:1] + [shq(a) for a in c['argv'][1:]])}`{bad} | {c['first_s']:.2f} s | "
                   f"{c['later_p50_s']:.2f} s | {rss:.0f} MiB | {c['rg_p50_s']:.3f} s | "
                   f"{c['ratio_p50']:.1f}x [{c['ratio_min']:.1f}, {c['ratio_max']:.1f}] | {c['other_pct']:.0f}% |")
    if "touch" in res:
        t = res["touch"]
        out.append(f"| `localize` after appending a line to `{t['file']}` | | {t['p50_s']:.2f} s | "
                   f"{t['rss_mib']:.0f} MiB | | {t['p50_s'] / t['untouched_localize_p50_s']:.2f}x untouched | {t['other_pct']:.0f}% |")
    return "\n".join(out)


def shq(a):
    return shlex.quote(a)


def bench_growth(args, run, binary, gdir, q):
    def size(label):
        s = label.upper()
        return float(s.rstrip("MK")) * (1e6 if s.endswith("M") else 1e3)
    rows = []
    for label in sorted(os.listdir(gdir), key=size):
        root = os.path.abspath(os.path.join(gdir, label))
        if not os.path.isdir(root) or label.endswith(".part"):
            continue
        if args.subsets and label not in args.subsets.split(","):
            continue
        lines = count_lines(root)
        up = uptime()
        idx = fresh_index(run, binary, root)
        cmd = [binary, "localize", "--query", q["query"], "-k", "5"]
        first = run(cmd, root)
        later = [run(cmd, root) for _ in range(args.growth_runs)]
        rg = [run(["rg", "-l", "-i", "-w"] + [x for w in words_of(q["query"]) for x in ("-e", w)] + ["."],
                  root, ok=(0, 1)) for _ in range(args.growth_runs)]
        row = {"label": label, "lines": sum(lines.values()), "languages": lines, "uptime": up,
               "index_s": idx["s"], "index_rss_mib": idx["rss_mib"],
               "localize_first_s": first["s"], "localize_first_rss_mib": first["rss_mib"],
               "localize_later_p50_s": med([r["s"] for r in later]),
               "localize_later_rss_mib": max(r["rss_mib"] for r in later),
               "rg_p50_s": med([r["s"] for r in rg]),
               "other_pct": max(r["other_pct"] for r in [idx, first] + later + rg)}
        rows.append(row)
        print(f"  {label}: {row['lines']:,} lines, index {row['index_s']:.1f}s {row['index_rss_mib']:.0f} MiB, "
              f"localize first {row['localize_first_s']:.1f}s later {row['localize_later_p50_s']:.1f}s "
              f"{row['localize_later_rss_mib']:.0f} MiB, rg {row['rg_p50_s']:.2f}s; {up}")
        shutil.rmtree(os.path.join(root, ".ironbees"), ignore_errors=True)
    return rows


def table_growth(rows, runs):
    out = [f"| subset | lines | languages | cold index | index s/M lines | index RSS | localize first | "
           f"localize later (p50 of {runs}) | localize s/M lines | localize RSS | rg -l | other load (max) |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        m = r["lines"] / 1e6
        out.append(f"| {r['label']} | {r['lines']:,} | {len(r['languages'])} | {r['index_s']:.1f} s | "
                   f"{r['index_s'] / m:.1f} | {r['index_rss_mib']:.0f} MiB | {r['localize_first_s']:.1f} s | "
                   f"{r['localize_later_p50_s']:.1f} s | {r['localize_later_p50_s'] / m:.2f} | "
                   f"{max(r['localize_first_rss_mib'], r['localize_later_rss_mib']):.0f} MiB | {r['rg_p50_s']:.2f} s | "
                   f"{r.get('other_pct', float('nan')):.0f}% |")
    return "\n".join(out)


def preset(root):
    for anchor, prefix in PRESETS:
        if os.path.exists(os.path.join(root, anchor)):
            return {k: (prefix + v if k == "file" else v) for k, v in DJANGO.items()}
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/ironbees")
    ap.add_argument("--root", help="the tree to measure")
    ap.add_argument("--runs", type=int, default=3, help="later calls per command (and rg runs)")
    ap.add_argument("--index-runs", type=int, default=1, help="ctags and cold index runs (median)")
    ap.add_argument("--query"), ap.add_argument("--symbol"), ap.add_argument("--file")
    ap.add_argument("--touch", help="file (relative to the tree) to append a line to")
    ap.add_argument("--growth", metavar="DIR", help="bench-data/scale/growth: index + localize per subset")
    ap.add_argument("--growth-runs", type=int, default=2)
    ap.add_argument("--subsets", help="with --growth: only these labels, e.g. 0.5M,8M")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--json", metavar="FILE", nargs="?", const="-",
                    help="also write the results as JSON (to FILE, or stdout)")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    run = Runner(args.timeout)
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    head = {"binary": binary, "version": version, "cores": os.cpu_count(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    print(f"ironbees: {binary} ({version}); {os.cpu_count()} cores; {head['date']}")
    result = dict(head)
    md = []
    if args.root:
        root = os.path.abspath(args.root)
        q = preset(root) or {}
        for k in ("query", "symbol", "file"):
            if getattr(args, k):
                q[k] = getattr(args, k)
        if set(q) != {"query", "symbol", "file"}:
            sys.exit("no preset for this tree: give --query, --symbol and --file")
        result["tree"] = bench_tree(args, run, binary, root, q)
        md.append(table_tree(result["tree"], args.runs))
    if args.growth:
        gdir = os.path.abspath(args.growth)
        first = sorted(d for d in os.listdir(gdir) if not d.endswith(".part"))[0]
        q = preset(os.path.join(gdir, first)) or {"query": args.query}
        if args.query:
            q["query"] = args.query
        print(f"growth: {gdir}, query {q['query']!r}")
        result["growth"] = bench_growth(args, run, binary, gdir, q)
        md.append(table_growth(result["growth"], args.growth_runs))
    print()
    print("\n\n".join(md))
    if args.json:
        text = json.dumps(result, indent=1, default=str)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w") as f:
                f.write(text + "\n")


if __name__ == "__main__":
    main()
