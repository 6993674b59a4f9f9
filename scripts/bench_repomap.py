#!/usr/bin/env python3
"""Repo map against Aider's, on the localization instances.

For each SWE-bench instance of ../shared/data/localization/dev.jsonl (trees exported
by scripts/bench_localize.py --keep-trees) and each token budget, both tools build a
repository map for the issue text, and we count how many of the files the real fix
changed are in it:

- ironbees: `ironbees repomap --tokens N --query-file ISSUE --json`;
- Aider (aider-chat, its `RepoMap` class, run by the Python given with
  --aider-python): the issue is the chat message, with no file in the chat, so the
  map is seeded the way Aider's coder seeds it — file names and identifiers
  mentioned in the message (`Coder.get_file_mentions`, `get_ident_mentions`,
  `get_ident_filename_matches`, called from Aider's own code).

Both count tokens with o200k_base. Aider's own budget check samples lines to
estimate the count, so its maps' real token counts are reported too.

A file is "in the map" when the map shows any of its definitions; a file named
without definitions (Aider's bare path lines, ironbees' `more_files`) is counted
separately as "named". Aider's map lists files in path order, so only membership is
compared, not order.

    python3 -m venv /tmp/aider-venv && /tmp/aider-venv/bin/pip install aider-chat
    python3 scripts/bench_repomap.py --aider-python /tmp/aider-venv/bin/python

tiktoken downloads o200k_base on first use; offline, --tiktoken-file points at a
local copy (tiktoken-rs ships one) and the script seeds tiktoken's cache with it.
"""

import argparse
import glob
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Runs under the Aider interpreter: argv = root, query file, budgets (comma-separated).
AIDER_DRIVER = r'''
import json, os, sys
import tiktoken
from aider.coders.base_coder import Coder
from aider.io import InputOutput
from aider.repomap import RepoMap

enc = tiktoken.get_encoding("o200k_base")

class Model:
    def token_count(self, text):
        return len(enc.encode(text, disallowed_special=()))

root, query_file, budgets = sys.argv[1], sys.argv[2], [int(b) for b in sys.argv[3].split(",")]
rel = []
for d, dirs, files in os.walk(root):
    dirs[:] = [x for x in dirs if not x.startswith(".")]
    for f in files:
        rel.append(os.path.relpath(os.path.join(d, f), root))
rel.sort()

class Files:
    def get_all_relative_files(self):
        return rel

text = open(query_file, encoding="utf-8", errors="replace").read()
files = Files()
fnames = Coder.get_file_mentions(files, text, ignore_current=True)
idents = Coder.get_ident_mentions(files, text)
fnames.update(Coder.get_ident_filename_matches(files, idents))
io = InputOutput(pretty=False, yes=True, fancy_input=False)
abs_files = [os.path.join(root, f) for f in rel]
out = []
for budget in budgets:
    rm = RepoMap(map_tokens=budget, root=root, main_model=Model(), io=io, max_context_window=None)
    text_map = rm.get_repo_map(set(), abs_files, mentioned_fnames=fnames, mentioned_idents=idents) or ""
    shown, named = [], []
    for line in text_map.splitlines():
        if not line or line[0] in "│⋮ \t":
            continue
        if line.endswith(":") and line[:-1] in rel:
            shown.append(line[:-1])
        elif line in rel:
            named.append(line)
    out.append({"budget": budget, "tokens": len(enc.encode(text_map, disallowed_special=())),
                "shown": shown, "named": named})
print(json.dumps(out))
'''


def ironbees_map(bin_, tree, query_file, budget):
    o = subprocess.run(
        [bin_, "-C", tree, "repomap", "--tokens", str(budget), "--query-file", query_file, "--json"],
        capture_output=True, text=True, check=True)
    v = json.loads(o.stdout)
    return {"budget": budget, "tokens": v["tokens"],
            "shown": [f["path"] for f in v["files"] if f["symbols"]],
            "named": [f["path"] for f in v["files"] if not f["symbols"]] + v["more_files"]}


def seed_tiktoken(path):
    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    cache = os.environ.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(tempfile.gettempdir(), "tiktoken-cache"))
    os.makedirs(cache, exist_ok=True)
    dest = os.path.join(cache, hashlib.sha1(url.encode()).hexdigest())
    if not os.path.exists(dest):
        with open(path, "rb") as src, open(dest, "wb") as out:
            out.write(src.read())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/ironbees"))
    ap.add_argument("--aider-python", required=True, help="a Python with aider-chat installed")
    ap.add_argument("--data", default=os.path.join(ROOT, "../shared/data/localization/dev.jsonl"))
    ap.add_argument("--trees", default=os.path.join(ROOT, "bench-data/localize/trees"))
    ap.add_argument("--budgets", default="1024,2048,4096")
    ap.add_argument("--tiktoken-file", default=next(iter(sorted(glob.glob(os.path.expanduser(
        "~/.cargo/registry/src/*/tiktoken-rs-*/assets/o200k_base.tiktoken")))), None))
    ap.add_argument("--limit", type=int, default=0, help="only the first N instances")
    ap.add_argument("--json", help="write per-instance results here")
    args = ap.parse_args()
    if args.tiktoken_file:
        seed_tiktoken(args.tiktoken_file)
    budgets = [int(b) for b in args.budgets.split(",")]
    rows = [json.loads(line) for line in open(args.data)]
    if args.limit:
        rows = rows[: args.limit]
    driver = os.path.join(tempfile.gettempdir(), "ironbees_aider_driver.py")
    with open(driver, "w") as f:
        f.write(AIDER_DRIVER)
    results = []
    secs = {"ironbees": 0.0, "aider": 0.0}
    for i, r in enumerate(rows):
        tree = os.path.join(args.trees, r["instance_id"])
        if not os.path.isdir(tree):
            sys.exit(f"{tree}: missing; run scripts/bench_localize.py --keep-trees first")
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as q:
            q.write(r["problem_statement"])
        t = time.monotonic()
        ours = [ironbees_map(args.bin, tree, q.name, b) for b in budgets]
        secs["ironbees"] += time.monotonic() - t
        t = time.monotonic()
        o = subprocess.run([args.aider_python, driver, tree, q.name, ",".join(map(str, budgets))],
                           capture_output=True, text=True)
        secs["aider"] += time.monotonic() - t
        os.unlink(q.name)
        if o.returncode != 0:
            sys.exit(f"aider failed on {r['instance_id']}: {o.stderr[-2000:]}")
        theirs = json.loads(o.stdout.strip().splitlines()[-1])
        results.append({"id": r["instance_id"], "repo": r["repo"], "gold": r["gold_files"],
                        "ironbees": ours, "aider": theirs})
        print(f"[{i + 1}/{len(rows)}] {r['instance_id']}", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)

    print("| budget | tool | gold files shown | all gold shown | gold shown or named | tokens (mean, max) |")
    print("|---:|---|---:|---:|---:|---:|")
    for bi, b in enumerate(budgets):
        for tool in ("ironbees", "aider"):
            gold_n = shown_n = named_n = all_n = 0
            toks = []
            for res in results:
                m = res[tool][bi]
                gold = set(res["gold"])
                shown = gold & set(m["shown"])
                gold_n += len(gold)
                shown_n += len(shown)
                named_n += len(gold & (set(m["shown"]) | set(m["named"])))
                all_n += shown == gold
                toks.append(m["tokens"])
            print(f"| {b} | {tool} | {100 * shown_n / gold_n:.1f}% | {100 * all_n / len(results):.1f}% "
                  f"| {100 * named_n / gold_n:.1f}% | {sum(toks) / len(toks):.0f}, {max(toks)} |")
    print(f"\n{len(results)} instances; wall: ironbees {secs['ironbees']:.0f} s, aider {secs['aider']:.0f} s "
          f"(a tree's first run also builds each tool's cache: ironbees' index, Aider's tags cache)")


if __name__ == "__main__":
    main()
