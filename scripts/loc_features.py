#!/usr/bin/env python3
"""Cache `localize --explain` features of the multi-language dev set, for offline
fusion experiments (scripts/loc_fit.py).

For every instance of --data (format of bench/locdev/instances.jsonl) of the chosen
split: export the tree at the base commit, index it (`ironbees index`, timed: cold
index), run `ironbees localize --query-file Q -k K --explain --json` (timed: warm),
and write one JSON line: the instance's fields, the seconds, and its top K files,
each [path, score, features...] in `FEATURES` order (the header line of the output
names them). The held-out split is refused unless --heldout is given: it is only
ever scored, at the end, never looked at file by file.

    python3 scripts/loc_features.py --data bench/locdev/instances.jsonl --out bench-data/feat/tuned.jsonl
"""
import argparse, collections, json, os, shutil, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench_localize import export_tree, git_dir  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", action="append", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "ironbees"))
    ap.add_argument("--work", default=os.path.join(ROOT, "bench-data", "feat-work"))
    ap.add_argument("--mirror", default=os.environ.get("IRONBEES_MIRROR", "/work/.mirror"))
    ap.add_argument("--split", default="tuned", choices=["tuned", "heldout"])
    ap.add_argument("--heldout", action="store_true", help="allow the held-out split (final scoring only)")
    ap.add_argument("--heldout-repo", action="append", default=[], help="a row without `split` of this repository is held-out")
    ap.add_argument("--repo", action="append")
    ap.add_argument("--language", action="append")
    ap.add_argument("-k", type=int, default=300)
    ap.add_argument("--weights", help="passed to localize (default weights otherwise)")
    ap.add_argument("--keep-trees", action="store_true")
    ap.add_argument("--timeout", type=int, default=900)
    args = ap.parse_args()
    if args.split == "heldout" and not args.heldout:
        sys.exit("the held-out split is only scored: pass --heldout for the final run")
    os.makedirs(args.work, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    done = set()
    if os.path.exists(args.out):
        done = {json.loads(l).get("instance_id") for l in open(args.out) if l.strip()}
    rows = []
    for path in args.data:
        for line in open(path):
            if not line.strip():
                continue
            r = json.loads(line)
            r.setdefault("language", "python")
            r.setdefault("split", "heldout" if r["repo"] in args.heldout_repo else "tuned")
            if r["split"] != args.split:
                continue
            if args.repo and r["repo"] not in args.repo:
                continue
            if args.language and r["language"] not in args.language:
                continue
            rows.append(r)
    by_repo = collections.OrderedDict()
    for r in rows:
        by_repo.setdefault(r["repo"], []).append(r)
    rows = [q[i] for i in range(max(map(len, by_repo.values()), default=0)) for q in by_repo.values() if i < len(q)]
    out = open(args.out, "a")
    for n, r in enumerate(rows):
        if r["instance_id"] in done:
            continue
        tree = os.path.join(args.work, "trees", r["instance_id"])
        t0 = time.perf_counter()
        export_tree(git_dir(r["repo"], args.mirror, args.work), r["base_commit"], tree)
        t1 = time.perf_counter()
        idx = subprocess.run([args.bin, "-C", tree, "index"], capture_output=True, text=True, timeout=args.timeout)
        t2 = time.perf_counter()
        qfile = os.path.join(args.work, "query.txt")
        with open(qfile, "w") as f:
            f.write(r["problem_statement"])
        cmd = [args.bin, "-C", tree, "localize", "--query-file", qfile, "-k", str(args.k), "--explain", "--json"]
        if args.weights:
            cmd += ["--weights", args.weights]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        t3 = time.perf_counter()
        rec = {k: r[k] for k in ("instance_id", "repo", "language", "split", "base_commit", "gold_files")}
        rec.update({"export_s": round(t1 - t0, 2), "index_s": round(t2 - t1, 2), "localize_s": round(t3 - t2, 2)})
        if idx.returncode != 0 or res.returncode != 0:
            rec["error"] = (idx.stderr + res.stderr)[-500:]
        else:
            files = json.loads(res.stdout)
            names = list(files[0]["features"].keys()) if files else []
            rec["features"] = names
            rec["files"] = [[x["path"], round(x["score"], 6)] + [round(x["features"][k], 5) for k in names] for x in files]
            # Evidence of the first 20 files and of the gold files: what found them.
            rec["evidence"] = {x["path"]: x["evidence"][:8] for i, x in enumerate(files)
                               if i < 20 or x["path"] in r["gold_files"]}
        out.write(json.dumps(rec) + "\n")
        out.flush()
        first = None
        if "files" in rec:
            ranked = [x[0] for x in rec["files"]]
            ranks = [ranked.index(g) + 1 for g in r["gold_files"] if g in ranked]
            first = min(ranks) if ranks else None
        print(f"[{n + 1}/{len(rows)}] {r['instance_id']}: first gold {first} (index {rec['index_s']}s, localize {rec['localize_s']}s)",
              file=sys.stderr, flush=True)
        if not args.keep_trees:
            shutil.rmtree(tree, ignore_errors=True)
    out.close()


if __name__ == "__main__":
    main()
