#!/usr/bin/env python3
"""Index speed and memory against universal-ctags on the same tree, in one run.

Measures, each repeated and reported as the median (min in brackets):
  - `ctags -R` over the tree (writing tags to /dev/null) and a cold `ironbees index`
    (no .ironbees/ database), alternating, with the ratio of each pair,
  - `ironbees index` after editing one file (the incremental path),
  - `ironbees index` with nothing changed,
and the peak RSS of each (from wait4's rusage). Wall times include process start.

    scripts/bench-corpora.sh
    cargo build --release -p cli
    python3 scripts/bench_index.py [--corpus bench-data/corpora/python] [--runs 5]
"""
import argparse, json, os, shutil, statistics, subprocess, sys, time

def run(cmd, cwd):
    t = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate()
    _, status, ru = os.wait4(p.pid, 0) if p.returncode is None else (None, p.returncode, None)
    secs = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"{cmd} failed ({p.returncode}): {err.decode()[-2000:]}")
    return secs, out

def run_rss(cmd, cwd):
    """Wall seconds, peak RSS in MiB, stdout."""
    # Flush the previous run's dirty pages first, so their writeback is not charged
    # to whichever command runs next.
    os.sync()
    t = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    secs = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{cmd} failed")
    return secs, ru.ru_maxrss / 1024, out

def count_lines(root, exts):
    files = lines = 0
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        for n in names:
            if os.path.splitext(n)[1] in exts:
                files += 1
                with open(os.path.join(d, n), "rb") as f:
                    lines += f.read().count(b"\n")
    return files, lines

def cpu_ticks():
    """(steal, total) jiffies from /proc/stat: on a VM, time the hypervisor gave away."""
    try:
        with open("/proc/stat") as f:
            vals = [int(x) for x in f.readline().split()[1:]]
        return vals[7], sum(vals)
    except (OSError, IndexError, ValueError):
        return 0, 0

def fmt(samples):
    return f"{statistics.median(samples):.3f}s [{min(samples):.3f}]"

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="bench-data/corpora/python")
    ap.add_argument("--bin", default="target/release/ironbees")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--edit", help="file (relative to the corpus) to edit for the incremental run")
    args = ap.parse_args()
    root = os.path.abspath(args.corpus)
    binary = os.path.abspath(args.bin)
    state = os.path.join(root, ".ironbees")
    exts = {".py", ".pyi", ".rs", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".go",
            ".java", ".cs", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"}
    files, lines = count_lines(root, exts)
    print(f"corpus: {args.corpus}: {files} source files, {lines} lines")
    print(f"machine: {os.cpu_count()} cores; ironbees {binary}")

    # ctags and the cold index alternate, so a change in the machine's load (a
    # build next door, CPU frequency) hits both sides alike; the ratio is taken per
    # pair as well as of the medians.
    ctags_t, ctags_rss = [], []
    cold_t, cold_rss, symbols = [], [], None
    steal0, total0 = cpu_ticks()
    for _ in range(args.runs):
        s, rss, _ = run_rss(["ctags", "-R", "-f", "/dev/null", "."], root)
        ctags_t.append(s); ctags_rss.append(rss)
        shutil.rmtree(state, ignore_errors=True)
        os.makedirs(state)  # pins the project root to the corpus
        s, rss, out = run_rss([binary, "index", "--json"], root)
        cold_t.append(s); cold_rss.append(rss)
        symbols = json.loads(out)
    steal1, total1 = cpu_ticks()
    steal_pct = 100 * (steal1 - steal0) / max(1, total1 - total0)
    edit = args.edit
    if edit is None:
        # The first Python file in sorted order: deterministic across runs.
        for d, dirs, names in sorted(os.walk(root)):
            dirs.sort()
            py = sorted(n for n in names if n.endswith((".py", ".rs", ".go", ".ts", ".js")))
            if py and ".ironbees" not in d:
                edit = os.path.relpath(os.path.join(d, py[0]), root)
                break
    path = os.path.join(root, edit)
    original = open(path, "rb").read()
    inc_t, inc_rss, inc_internal = [], [], []
    noop_t = []
    try:
        for i in range(args.runs * 2):
            with open(path, "wb") as f:
                f.write(original + f"\n# bench edit {i}\n".encode())
            s, rss, out = run_rss([binary, "index", "--json"], root)
            report = json.loads(out)["update"]
            assert report["parsed"] == 1, report
            inc_t.append(s); inc_rss.append(rss); inc_internal.append(report["duration_ms"] / 1000)
            s, _, _ = run_rss([binary, "index", "--json"], root)
            noop_t.append(s)
    finally:
        with open(path, "wb") as f:
            f.write(original)

    print()
    print("| measurement | ctags -R | ironbees index | ratio |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| cold, wall (median [min] of {args.runs}) | {fmt(ctags_t)} | {fmt(cold_t)} | {statistics.median(cold_t)/statistics.median(ctags_t):.2f}x |")
    pairs = sorted(c / t for c, t in zip(cold_t, ctags_t))
    print(f"| cold, ratio per alternating pair (median [min, max]) | | | {statistics.median(pairs):.2f}x [{pairs[0]:.2f}, {pairs[-1]:.2f}] |")
    print(f"| cold runs: CPU time stolen by the hypervisor | | | {steal_pct:.1f}% |")
    print(f"| cold, peak RSS | {max(ctags_rss):.0f} MiB | {max(cold_rss):.0f} MiB | {max(cold_rss)/max(ctags_rss):.2f}x |")
    print(f"| one file edited, wall incl. process start (median of {len(inc_t)}) | | {fmt(inc_t)} | |")
    print(f"| one file edited, update itself (`duration_ms`) | | {fmt(inc_internal)} | |")
    print(f"| one file edited, peak RSS | | {max(inc_rss):.0f} MiB | |")
    print(f"| nothing changed, wall | | {fmt(noop_t)} | |")
    print()
    print(f"ironbees extracted: {symbols['files']} files, {symbols['symbols']} definitions, "
          f"{symbols['references']} references, {symbols['imports']} imports; edited file: {edit}")

if __name__ == "__main__":
    main()
