#!/usr/bin/env python3
"""Localization on the multi-language dev set (issue 37), per language and split.

A thin wrapper over scripts/bench_localize.py (same tree export, same scoring): for
every instance of --data (bench/locdev/instances.jsonl from scripts/mine_fixes.py,
and/or the SWE-bench dev set) it exports the tree at the base commit, runs
`ironbees localize --query-file Q -k 20 --json` on the query, then, on the same
indexed tree, the whole-file BM25 peer (`--weights only=file_text,file_text=1,role=0`),
and scores both:

  Acc@k  every gold file is in the top k (k = 1, 3, 5, 10)
  MRR    1 / rank of the first gold file (0 if none in the top 20)

Tables: per language, tuned and held-out separately, for ours and for BM25.
Results go, one JSON line per instance and variant, to --results; an instance
already there is not run again (so a stopped run resumes), `--fresh` starts over.

    python3 scripts/bench_devset.py --data bench/locdev/instances.jsonl --split tuned
    python3 scripts/bench_devset.py --data bench/locdev/instances.jsonl --split heldout
    python3 scripts/bench_devset.py --data bench/locdev/instances.jsonl --report --per-repo   # tables, nothing run

Two builds on the same indexed tree (the first indexes it cold, the second reuses
the index), and a flag for one of them (`--rerank`, with OPENAI_BASE_URL and
OPENAI_MODEL pointing at a model; its picks and tokens are kept per instance):

    python3 scripts/bench_devset.py --data bench/locdev/instances.jsonl --split heldout \
        --pair after=/tmp/ib-after --pair base=/tmp/ib-base --results OUT.jsonl
    python3 scripts/bench_devset.py --data SET.jsonl --pair plain=B --pair rerank=B \
        --pair-flag rerank=--rerank --results OUT.jsonl

Rows without `language` / `split` (the SWE-bench sets) count as python / tuned, or
held-out for a repository named by --heldout-repo:

    python3 scripts/heldout_localize.py --out bench-data/heldout.jsonl --per-repo 0
    python3 scripts/bench_devset.py --data ../shared/data/localization/dev.jsonl --data bench-data/heldout.jsonl \
        --heldout-repo sphinx-doc/sphinx --heldout-repo sympy/sympy --results bench-data/devset/swe.jsonl
"""
import argparse, collections, json, os, shutil, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench_localize import export_tree, git_dir  # noqa: E402

VARIANTS = {"ours": None, "bm25": "only=file_text,file_text=1,role=0"}
LANGS = ["rust", "python", "javascript", "typescript", "go", "java", "csharp", "c", "cpp"]


def score(gold, ranked):
    ranks = [ranked.index(g) + 1 for g in gold if g in ranked]
    m = {f"acc{k}": all(g in ranked[:k] for g in gold) for k in (1, 3, 5, 10)}
    m["mrr"] = 1.0 / min(ranks) if ranks else 0.0
    m["first_rank"] = min(ranks) if ranks else None
    return m


def run_one(args, r, variant, weights, tree, qfile, binary=None, flags=()):
    cmd = [binary or args.bin, "-C", tree, "localize", "--query-file", qfile, "-k", "20", "--json", *flags]
    if weights:
        cmd += ["--weights", weights]
    t = time.perf_counter()
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"error": "timeout", "seconds": args.timeout}
    secs = time.perf_counter() - t
    if res.returncode != 0:
        return {"error": res.stderr[-500:], "seconds": round(secs, 2)}
    ranked = [x["path"] for x in json.loads(res.stdout)][:20]
    out = {**score(r["gold_files"], ranked), "ranked": ranked, "seconds": round(secs, 2)}
    # `--rerank` reports the model's part on stderr: its picks and tokens.
    for line in res.stderr.splitlines():
        if line.startswith('{"rerank"'):
            rr = json.loads(line)["rerank"]
            out["rerank"] = {"picks": rr["picks"], "input_tokens": rr["inputTokens"],
                             "output_tokens": rr["outputTokens"], "error": (rr.get("error") or {}).get("code")}
    return out


def summary(ms):
    n = len(ms)
    if not n:
        return None
    pct = lambda k: 100.0 * sum(bool(m[k]) for m in ms) / n
    return n, pct("acc1"), pct("acc3"), pct("acc5"), pct("acc10"), 100.0 * sum(m["mrr"] for m in ms) / n


def report(results, variants):
    for variant in variants:
        rows = [m for m in results if m["variant"] == variant and "error" not in m]
        errors = [m for m in results if m["variant"] == variant and "error" in m]
        print(f"\n{variant} ({len(rows)} scored, {len(errors)} failed)\n")
        print("| language | tuned n | Acc@1 | Acc@3 | Acc@5 | Acc@10 | MRR | held-out n | Acc@1 | Acc@3 | Acc@5 | Acc@10 | MRR |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        langs = [l for l in LANGS if any(m["language"] == l for m in rows)]
        langs += sorted({m["language"] for m in rows} - set(langs))
        for lang in langs + ["all"]:
            cells = []
            for split in ("tuned", "heldout"):
                s = summary([m for m in rows if (lang == "all" or m["language"] == lang) and m["split"] == split])
                cells.append(" | ".join(["—"] * 6) if s is None else
                             f"{s[0]} | " + " | ".join(f"{v:.1f}" for v in s[1:]))
            name = f"**{lang}**" if lang == "all" else lang
            print(f"| {name} | {cells[0]} | {cells[1]} |")
        secs = sorted(m["seconds"] for m in rows)
        if secs:
            print(f"\nper instance ({variant}): median {secs[len(secs) // 2]:.2f}s, max {secs[-1]:.2f}s wall")


def per_repo(results, variant):
    by = collections.defaultdict(list)
    for m in results:
        if m["variant"] == variant and "error" not in m:
            by[(m["language"], m["split"], m["repo"])].append(m)
    print(f"\n{variant}, per repository\n")
    print("| language | split | repository | n | Acc@1 | Acc@3 | Acc@5 | Acc@10 | MRR |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (lang, split, repo), ms in sorted(by.items(), key=lambda kv: (LANGS.index(kv[0][0]) if kv[0][0] in LANGS else 99, kv[0][1] != "tuned", kv[0][2])):
        s = summary(ms)
        print(f"| {lang} | {split} | {repo} | {s[0]} | " + " | ".join(f"{v:.1f}" for v in s[1:]) + " |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", action="append", default=[])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "ironbees"))
    ap.add_argument("--work", default=os.path.join(ROOT, "bench-data", "devset"))
    ap.add_argument("--results", default=None, help="JSON lines of results (default: WORK/results.jsonl)")
    ap.add_argument("--mirror", default=os.environ.get("IRONBEES_MIRROR", "/work/.mirror"))
    ap.add_argument("--split", choices=["tuned", "heldout"], help="only this split")
    ap.add_argument("--language", action="append", help="only these languages")
    ap.add_argument("--repo", action="append", help="only these repositories")
    ap.add_argument("--variant", action="append", choices=list(VARIANTS), help="only these variants (default: all)")
    ap.add_argument("--heldout-repo", action="append", help="a row without `split` of this repository is held-out")
    ap.add_argument("--pair", action="append", metavar="NAME=BIN",
                    help="compare builds on the same indexed tree: variant ours@NAME runs BIN "
                         "(the first one indexes cold; repeat for each build)")
    ap.add_argument("--pair-flag", action="append", metavar="NAME=FLAG",
                    help="an extra flag for --pair NAME's runs (e.g. rerank=--rerank)")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--keep-trees", action="store_true")
    ap.add_argument("--fresh", action="store_true", help="forget earlier results")
    ap.add_argument("--report", action="store_true", help="print the tables of --results and stop")
    ap.add_argument("--per-repo", action="store_true", help="also print per-repository tables")
    args = ap.parse_args()
    results_path = args.results or os.path.join(args.work, "results.jsonl")
    pairs = dict(p.split("=", 1) for p in args.pair or [])
    pair_flags = collections.defaultdict(list)
    for p in args.pair_flag or []:
        name, flag = p.split("=", 1)
        pair_flags[name].append(flag)
    variants = [f"ours@{name}" for name in pairs] if pairs else (args.variant or list(VARIANTS))
    os.makedirs(args.work, exist_ok=True)

    def load():
        if not os.path.exists(results_path):
            return []
        return [json.loads(l) for l in open(results_path) if l.strip()]

    def keep(m):
        return ((not args.split or m["split"] == args.split) and (not args.language or m["language"] in args.language)
                and (not args.repo or m["repo"] in args.repo))

    if not args.report:
        if args.fresh and os.path.exists(results_path):
            os.remove(results_path)
        done = {(m["instance_id"], m["variant"]) for m in load() if "error" not in m}
        rows = []
        for path in args.data:
            for line in open(path):
                if line.strip():
                    r = json.loads(line)
                    r.setdefault("language", "python")
                    r.setdefault("split", "heldout" if r["repo"] in (args.heldout_repo or []) else "tuned")
                    rows.append(r)
        rows = [r for r in rows if keep(r)]
        # Round robin over repositories: a run stopped early has scored every
        # repository about equally, not the first ones whole.
        by_repo = collections.OrderedDict()
        for r in rows:
            by_repo.setdefault(r["repo"], []).append(r)
        rows = [q[i] for i in range(max(map(len, by_repo.values()), default=0)) for q in by_repo.values() if i < len(q)]
        out = open(results_path, "a")
        for i, r in enumerate(rows):
            todo = [v for v in variants if (r["instance_id"], v) not in done]
            if not todo:
                continue
            tree = os.path.join(args.work, "trees", r["instance_id"])
            export_tree(git_dir(r["repo"], args.mirror, args.work), r["base_commit"], tree)
            qfile = os.path.join(args.work, "query.txt")
            with open(qfile, "w") as f:
                f.write(r["problem_statement"])
            for v in todo:
                if v.startswith("ours@"):
                    name = v[len("ours@"):]
                    m = run_one(args, r, v, None, tree, qfile, pairs[name], pair_flags[name])
                else:
                    m = run_one(args, r, v, VARIANTS[v], tree, qfile)
                m.update({"instance_id": r["instance_id"], "repo": r["repo"], "language": r["language"],
                          "split": r["split"], "variant": v, "gold": r["gold_files"]})
                out.write(json.dumps(m) + "\n")
                out.flush()
                status = m.get("error", "")[:80] or f"first gold at {m['first_rank']}"
                print(f"[{i + 1}/{len(rows)}] {r['instance_id']} {v}: {status} ({m['seconds']}s)", file=sys.stderr, flush=True)
            if not args.keep_trees:
                shutil.rmtree(tree, ignore_errors=True)
        out.close()

    ids = None
    if args.data:  # only the instances of --data (the results file may hold others)
        ids = {json.loads(l)["instance_id"] for path in args.data for l in open(path) if l.strip()}
    results = [m for m in load() if keep(m) and (ids is None or m["instance_id"] in ids)]
    report(results, variants)
    if args.per_repo:
        for v in variants:
            per_repo(results, v)


if __name__ == "__main__":
    main()
