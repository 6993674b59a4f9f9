#!/usr/bin/env python3
"""Offline fusion experiments over cached `localize --explain` features
(scripts/loc_features.py), and the leave-one-repository-out fit of the fusion's
weights.

`localize` fuses its signals as  score(f) = prior(f) * sum_i w_i / (K + rank_i(f)),
rank_i by signal i among the files it scores (ties share the best rank). Ranks do
not depend on the weights, so over cached features a weighting is one matrix
product per instance: thousands of weightings a second.

    python3 scripts/loc_fit.py bench-data/feat/base-tuned.jsonl --check          # reproduces the binary's order?
    python3 scripts/loc_fit.py bench-data/feat/*.jsonl --loro                      # fit, leave one repository out
    python3 scripts/loc_fit.py F --weights text=1,def=2 --report                   # one weighting, per language

--loro: for each repository, the weights are chosen by coordinate ascent on the
other repositories' instances (objective: Acc@1 + Acc@5 + MRR, each in 0..1,
averaged per repository so that no repository counts more for having more
instances), then that repository is scored with them. The pooled scores are what
the weights are worth on a repository they never saw; the weights fitted on all
are printed last, for DEFAULT_WEIGHTS.
"""
import argparse, collections, json, math, sys

import numpy as np

K = 10.0
GRID = [0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0]


def load(paths, split=None):
    out = []
    for p in paths:
        for line in open(p):
            r = json.loads(line)
            if "files" not in r or not r["files"]:
                continue
            if split and r["split"] != split:
                continue
            out.append(r)
    return out


class Inst:
    def __init__(self, r, names, k=K):
        self.r = r
        self.id = r["instance_id"]
        self.repo = r["repo"]
        self.lang = r["language"]
        self.split = r["split"]
        self.gold = set(r["gold_files"])
        fnames = r["features"]
        idx = [fnames.index(n) for n in names]
        self.paths = [f[0] for f in r["files"]]
        X = np.array([[f[2 + i] for i in idx] for f in r["files"]], dtype=float)
        self.X = X
        self.role = np.array([f[2 + fnames.index("role")] for f in r["files"]])
        # The role's kind, to refit the prior's levels: 0 source, 1 test, 2 vendored,
        # 3 docs/examples/benchmarks, 4 aside by content (generated, exceptions only).
        self.cat = np.array([category(p, x) for p, x in zip(self.paths, self.role)])
        self.bin_score = np.array([f[1] for f in r["files"]])
        self.is_gold = np.array([p in self.gold for p in self.paths])
        self.set_k(k)

    def set_k(self, k):
        # Competition ranks per feature (1-based, 0 = no vote), as votes 1/(k+rank).
        X = self.X
        V = np.zeros_like(X)
        for j in range(X.shape[1]):
            col = X[:, j]
            pos = np.nonzero(col > 0)[0]
            if len(pos) == 0:
                continue
            order = pos[np.argsort(-col[pos], kind="stable")]
            vals = col[order]
            ranks = np.empty(len(order))
            rank = 0
            for i in range(len(order)):
                if i == 0 or vals[i] != vals[i - 1]:
                    rank = i + 1
                ranks[i] = rank
            V[order, j] = 1.0 / (k + ranks)
        self.V = V


VENDORED = {"vendor", "vendored", "_vendor", "third_party", "third-party", "thirdparty", "3rdparty",
            "node_modules", "extern", "externals", "external", "cextern"}
DOCS = {"doc", "docs", "example", "examples", "benchmarks", "bench", "release", "demo", "demos", "samples"}


def category(path, role):
    if role >= 1.0:
        return 0
    if abs(role - 0.35) < 1e-6:
        return 1
    lower = path.lower()
    dirs = lower.split("/")[:-1]
    name = lower.rsplit("/", 1)[-1]
    if ".min." in name or name.endswith(".bundle.js") or any(d in VENDORED for d in dirs):
        return 2
    if any(d in DOCS for d in dirs):
        return 3
    return 4


PRIORS = None  # levels by category, when refitting the prior


def rank_of(inst, w, prior_pow=1.0, extra=None):
    s = inst.V @ w
    if PRIORS is not None:
        s = s * np.array(PRIORS)[inst.cat]
    elif prior_pow:
        s = s * inst.role ** prior_pow
    if extra is not None:
        s = extra(inst, s)
    # Stable: ties keep the binary's order (its path tiebreak among equal scores).
    order = np.argsort(-s, kind="stable")
    return order


def metrics(inst, order):
    gold_pos = [i for i, o in enumerate(order[:20]) if inst.is_gold[o]]
    n_gold = len(inst.gold)
    top = set(order[:1].tolist())
    acc = {}
    for k in (1, 3, 5, 10):
        hit = sum(1 for o in order[:k] if inst.is_gold[o])
        acc[k] = hit == n_gold
    mrr = 1.0 / (gold_pos[0] + 1) if gold_pos else 0.0
    return acc[1], acc[3], acc[5], acc[10], mrr


def evaluate(insts, w, prior_pow=1.0, extra=None):
    rows = []
    for inst in insts:
        rows.append(metrics(inst, rank_of(inst, w, prior_pow, extra)))
    return rows


def summarize(rows):
    a = np.array(rows, dtype=float)
    return 100 * a.mean(axis=0) if len(a) else np.zeros(5)


def objective(insts, w, prior_pow=1.0, extra=None, by_repo=True):
    rows = evaluate(insts, w, prior_pow, extra)
    if not by_repo:
        a = np.array(rows, dtype=float)
        return a[:, 0].mean() + a[:, 2].mean() + a[:, 4].mean()
    groups = collections.defaultdict(list)
    for inst, m in zip(insts, rows):
        groups[inst.repo].append(m)
    vals = []
    for ms in groups.values():
        a = np.array(ms, dtype=float)
        vals.append(a[:, 0].mean() + a[:, 2].mean() + a[:, 4].mean())
    return float(np.mean(vals))


PRIOR_GRID = [0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 1.0]


def fit(insts, names, start, free, passes=3, extra=None, prior=False):
    global PRIORS
    w = np.array(start, dtype=float)
    if prior:
        PRIORS = [1.0, 0.35, 0.5, 0.5, 0.5]
    best = objective(insts, w, extra=extra)
    for _ in range(passes):
        improved = False
        for c in (range(1, 5) if prior else []):
            cur = PRIORS[c]
            for g in PRIOR_GRID:
                if g == cur:
                    continue
                old = PRIORS[c]
                PRIORS[c] = g
                v = objective(insts, w, extra=extra)
                if v > best + 1e-9:
                    best, cur = v, g
                    improved = True
                else:
                    PRIORS[c] = old
            PRIORS[c] = cur
        for j in free:
            cur = w[j]
            for g in GRID:
                if g == cur:
                    continue
                w2 = w.copy()
                w2[j] = g
                v = objective(insts, w2, extra=extra)
                if v > best + 1e-9:
                    best, w = v, w2
                    improved = True
        if not improved:
            break
    return w, best


def parse_weights(spec, names, base):
    w = np.array(base, dtype=float)
    if not spec:
        return w
    for item in spec.split(","):
        k, v = item.split("=")
        if k == "only":
            keep = set(v.split("+"))
            w = np.array([w[i] if n in keep else 0.0 for i, n in enumerate(names)])
            continue
        w[names.index(k)] = float(v)
    return w


LANGS = ["rust", "python", "javascript", "typescript", "go", "java", "csharp", "c", "cpp"]


def table(insts, rows, title):
    print(f"\n{title}\n")
    print("| language | n | Acc@1 | Acc@3 | Acc@5 | Acc@10 | MRR |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    langs = [l for l in LANGS if any(i.lang == l for i in insts)]
    for lang in langs + ["all"]:
        ms = [m for i, m in zip(insts, rows) if lang == "all" or i.lang == lang]
        s = summarize(ms)
        print(f"| {lang} | {len(ms)} | " + " | ".join(f"{v:.1f}" for v in s) + " |")


# The binary's defaults, by name (crates/retrieval/src/localize.rs).
DEFAULTS = {"text": 1, "text_sum": 1, "title_text": 1, "code_text": 1, "def": 1, "literal": 1,
            "code_string": 1, "frame": 2, "path": 1, "stem_title": 1, "graph": 1}


HEADERS = (".h", ".hh", ".hpp", ".hxx")
SOURCES = (".c", ".cc", ".cpp", ".cxx")


def partner_key(path):
    """A C/C++ file's stem and whether it is a header: foo.h and foo.c pair."""
    name = path.rsplit("/", 1)[-1]
    stem, dot, ext = name.rpartition(".")
    if not dot:
        return None
    ext = "." + ext.lower()
    if ext in HEADERS:
        return stem.lower(), True
    if ext in SOURCES:
        return stem.lower(), False
    return None


def make_pairing(alpha, same_dir_only=False):
    """Stage 2: a header and its source file (by stem) share rank: each gets at
    least alpha times the other's score."""
    def extra(inst, s):
        if not hasattr(inst, "_pairs"):
            keys = [partner_key(p) for p in inst.paths]
            by = collections.defaultdict(list)
            for i, k in enumerate(keys):
                if k:
                    by[k].append(i)
            pairs = []
            for i, k in enumerate(keys):
                if not k:
                    continue
                for j in by.get((k[0], not k[1]), []):
                    if same_dir_only and inst.paths[i].rsplit("/", 1)[0] != inst.paths[j].rsplit("/", 1)[0]:
                        continue
                    pairs.append((i, j))
            inst._pairs = pairs
        if not inst._pairs:
            return s
        out = s.copy()
        for i, j in inst._pairs:
            out[j] = max(out[j], alpha * s[i])
        return out
    return extra


def main():
    global PRIORS
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--split", default="tuned")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--weights")
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--loro", action="store_true")
    ap.add_argument("--free", help="features the fit may change (default: all voting ones)")
    ap.add_argument("--k", type=float, default=K)
    ap.add_argument("--prior", action="store_true", help="also fit the role prior's levels")
    ap.add_argument("--multi", action="store_true", help="also report instances with 2+ gold files")
    ap.add_argument("--pairing", action="store_true", help="simulate the header/source stage")
    args = ap.parse_args()
    recs = load(args.files, args.split)
    names = [n for n in recs[0]["features"] if n != "role"]
    insts = [Inst(r, names, args.k) for r in recs]
    base = [DEFAULTS.get(n, 0.0) for n in names]
    w = parse_weights(args.weights, names, base)
    if args.check:
        bad = 0
        for inst in insts:
            order = rank_of(inst, np.array(base, dtype=float))
            sim = [inst.paths[o] for o in order[:20]]
            if sim != inst.paths[:20]:
                bad += 1
        print(f"{len(insts) - bad}/{len(insts)} instances: simulated top 20 = the binary's")
    if args.report or not (args.check or args.loro):
        rows = evaluate(insts, w)
        table(insts, rows, f"weights {args.weights or 'default'}")
    if args.pairing:
        multi = [i for i in insts if len(i.gold) >= 2]
        for alpha in [0.0, 0.5, 0.7, 0.8, 0.9, 1.0]:
            ex = make_pairing(alpha) if alpha else None
            a = summarize(evaluate(insts, w, extra=ex))
            m = summarize(evaluate(multi, w, extra=ex))
            c = summarize(evaluate([i for i in insts if i.lang in ("c", "cpp")], w, extra=ex))
            print(f"pairing {alpha}: all {a[0]:.1f}/{a[2]:.1f}/{a[4]:.1f}  multi({len(multi)}) Acc@5 {m[2]:.1f}  c/c++ {c[0]:.1f}/{c[2]:.1f}/{c[4]:.1f}")
    if args.loro:
        # The `*_rr` features rank files as their base feature does: the same vote.
        free = [names.index(n) for n in args.free.split(",")] if args.free else [
            i for i, n in enumerate(names) if n not in ("central", "size", "init") and not n.endswith("_rr")]
        repos = sorted({i.repo for i in insts})
        pooled = [None] * len(insts)
        for repo in repos:
            train = [i for i in insts if i.repo != repo]
            wr, _ = fit(train, names, w, free, prior=args.prior)
            test_idx = [k for k, i in enumerate(insts) if i.repo == repo]
            rows = evaluate([insts[k] for k in test_idx], wr)
            for k, m in zip(test_idx, rows):
                pooled[k] = m
            changed = {names[j]: wr[j] for j in range(len(names)) if wr[j] != w[j]}
            print(f"{repo}: {changed} priors {PRIORS}", file=sys.stderr, flush=True)
        PRIORS = None
        table(insts, evaluate(insts, w), "start weights")
        table(insts, pooled, "leave-one-repository-out")
        if args.multi:
            multi = [k for k, i in enumerate(insts) if len(i.gold) >= 2]
            s0 = summarize([evaluate([insts[k]], w)[0] for k in multi])
            s1 = summarize([pooled[k] for k in multi])
            print(f"\nmulti-file ({len(multi)}): start Acc@5 {s0[2]:.1f}, LORO Acc@5 {s1[2]:.1f}")
        wall, _ = fit(insts, names, w, free, prior=args.prior)
        print("\nfitted on all:", {names[j]: float(wall[j]) for j in range(len(names)) if wall[j]}, "priors", PRIORS)


if __name__ == "__main__":
    main()


def make_samedir(beta, top=1):
    """Stage 2 experiment: files in the directory of the first `top` hits gain beta
    times that hit's score."""
    def extra(inst, s):
        order = np.argsort(-s, kind="stable")[:top]
        dirs = {inst.paths[o].rsplit("/", 1)[0] if "/" in inst.paths[o] else "": s[o] for o in order}
        out = s.copy()
        for i, p in enumerate(inst.paths):
            d = p.rsplit("/", 1)[0] if "/" in p else ""
            if d in dirs and i not in order:
                out[i] = s[i] + beta * dirs[d]
        return out
    return extra
