#!/usr/bin/env python3
"""`ironbees index` after a one-line edit, binaries compared in blocks.

Each binary runs in blocks: two untouched runs (the stored snapshot's key holds
the build, so the first run after another binary rebuilds it), then RUNS runs,
each after appending a different comment line to FILE. Blocks alternate between
the binaries, BLOCKS times. Prints the median wall time and CPU (user + system)
per binary. FILE is restored at the end.

    python3 scripts/bench_touch_index.py --root /tmp/dj38 \
        --file django/db/models/query.py BEFORE_BIN AFTER_BIN
"""
import argparse
import os
import resource
import statistics
import subprocess
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", required=True)
    ap.add_argument("--file", required=True, help="relative to --root")
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--blocks", type=int, default=3)
    ap.add_argument("bins", nargs="+")
    a = ap.parse_args()
    path = os.path.join(a.root, a.file)
    with open(path, "rb") as f:
        orig = f.read()

    def write(extra):
        with open(path, "wb") as f:
            f.write(orig + extra)

    def run(b):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run([b, "index", "--json"], cwd=a.root, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        wall = time.perf_counter() - t
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)

    res = {b: [] for b in a.bins}
    try:
        for block in range(a.blocks):
            for b in a.bins:
                write(b"")
                run(b)
                run(b)
                for i in range(a.runs):
                    write(f"\n# bench touch {block}.{i}\n".encode())
                    res[b].append(run(b))
    finally:
        write(b"")
        run(a.bins[0])
    for b in a.bins:
        walls = [w for w, _ in res[b]]
        cpus = [c for _, c in res[b]]
        print(f"{b}: n={len(walls)} wall p50 {statistics.median(walls) * 1000:.0f} ms, "
              f"cpu p50 {statistics.median(cpus) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
