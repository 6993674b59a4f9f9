#!/usr/bin/env python3
"""Definition recall of `ironbees symbols` against universal-ctags, per language.

For every corpus prepared by scripts/bench-corpora.sh, run ctags and ironbees on the
same tree, keep ctags' function/method/class-like definitions (KINDS below: the kind
mapping), and count how many ironbees reports too: same file, same name, and the ctags
line within the definition's header (from its first line, decorators and attributes
included, to the line of its name). Misses are grouped by ctags kind with examples.

    scripts/bench-corpora.sh && python3 scripts/bench_ctags.py [--bin target/release/ironbees] [LANG...]
"""
import argparse, collections, json, os, subprocess, sys, time

# ctags language -> (corpus directory, ctags kinds counted as function/method/class-like,
#                    extra ctags options)
KINDS = {
    "Python": ("python", {"class", "function", "member"}, []),
    "Rust": ("rust", {"function", "method", "struct", "enum", "interface", "module", "macro", "typedef"}, []),
    "JavaScript": ("javascript", {"class", "function", "method", "generator", "getter", "setter"}, []),
    "TypeScript": ("typescript", {"class", "function", "method", "interface", "enum", "namespace", "generator", "alias"}, []),
    # ctags has no TSX mapping; its TypeScript parser is pointed at .tsx files.
    "TSX": ("tsx", {"class", "function", "method", "interface", "enum", "namespace", "generator", "alias"}, ["--langmap=TypeScript:+.tsx"]),
    "Go": ("go", {"func", "struct", "interface", "methodSpec", "type", "talias"}, []),
    "Java": ("java", {"class", "interface", "enum", "method", "annotation"}, []),
    "C#": ("csharp", {"class", "interface", "enum", "struct", "method", "namespace", "property", "event"}, []),
    "C": ("c", {"function", "struct", "union", "enum", "typedef", "macro"}, []),
    "C++": ("cpp", {"function", "class", "struct", "union", "enum", "namespace", "typedef", "alias", "macro"}, []),
}

def ctags_lang(name):
    return "TypeScript" if name == "TSX" else name

def run_ctags(root, lang, extra):
    cmd = ["ctags", "-R", "--output-format=json", "--fields=+nK", f"--languages={ctags_lang(lang)}", *extra, "-f", "-", "."]
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=True).stdout
    secs = time.perf_counter() - t
    tags = []
    for line in out.splitlines():
        try:
            tag = json.loads(line)
        except json.JSONDecodeError:
            continue
        if tag.get("_type") != "tag":
            continue
        path = tag["path"][2:] if tag["path"].startswith("./") else tag["path"]
        if lang == "TSX" and not path.endswith(".tsx"):
            continue
        if lang == "TypeScript" and path.endswith(".tsx"):
            continue
        tags.append((path, tag["name"], tag["line"], tag.get("kind", "?"), tag.get("pattern", "")))
    return tags, secs

def run_ironbees(binary, root):
    # The corpus is its own project: a .ironbees/ directory stops root discovery there.
    os.makedirs(os.path.join(root, ".ironbees"), exist_ok=True)
    # Recall measures the extractor, so minified bundles (skipped by default as
    # MINIFIED_FILE, and parsed by ctags) are indexed here too.
    env = dict(os.environ, IRONBEES_INDEX__INCLUDE_MINIFIED="true")
    subprocess.run([binary, "-C", root, "index", "--rebuild"], check=True, capture_output=True, env=env)
    out = subprocess.run([binary, "-C", root, "symbols", "--json"], check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)

def norm(name):
    return name.replace(" ", "")

def invented(name):
    """Names ctags makes up for things that have none (anonymous functions, structs)."""
    return name.startswith("AnonymousFunction") or name.startswith("__anon")

def candidates(by_key, path, name):
    # C# explicit interface implementations: ctags says `IList.Add`, the member is `Add`.
    found = list(by_key.get((path, norm(name)), []))
    if "." in name:
        found += by_key.get((path, norm(name.rsplit(".", 1)[1])), [])
    return found

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/ironbees")
    ap.add_argument("--corpora", default="bench-data/corpora")
    ap.add_argument("--examples", type=int, default=4)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("langs", nargs="*")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    rows, details = [], {}
    for lang, (corpus, kinds, extra) in KINDS.items():
        if args.langs and lang not in args.langs:
            continue
        root = os.path.join(args.corpora, corpus)
        if not os.path.isdir(root):
            print(f"skip {lang}: {root} missing (run scripts/bench-corpora.sh)", file=sys.stderr)
            continue
        tags, _ = run_ctags(root, lang, extra)
        kind_tags = [t[:4] for t in tags if t[3] in kinds]
        # ctags places an ES5 class (`function Hash() {}` + `Hash.prototype.x = ...`) on
        # the line of its first prototype assignment; the definition is the function.
        es5_class = {(t[0], t[1]) for t in tags if t[3] == "class" and f"{t[1]}.prototype" in t[4]}
        wanted = [t for t in kind_tags if not invented(t[1])]
        n_invented = len(kind_tags) - len(wanted)
        files = {t[0] for t in tags}
        syms = run_ironbees(binary, root)
        by_key = collections.defaultdict(list)
        ours_in_lang = 0
        for s in syms:
            if s["path"] in files:
                ours_in_lang += 1
            by_key[(s["path"], norm(s["name"]))].append((s["line"], s["name_line"]))
        missed = []
        for path, name, line, kind in wanted:
            cands = candidates(by_key, path, name)
            if (path, name) in es5_class and cands:
                continue
            if not any(lo <= line <= hi for lo, hi in cands):
                missed.append((path, name, line, kind, cands))
        matched = len(wanted) - len(missed)
        recall = 100.0 * matched / len(wanted) if wanted else 100.0
        by_kind = collections.Counter(m[3] for m in missed)
        rows.append((lang, len(files), len(wanted), matched, recall, n_invented, len(tags), ours_in_lang))
        details[lang] = {
            "missed_by_kind": dict(by_kind),
            "examples": [f"{p}:{l} {k} {n} (ours: {c[:3]})" for p, n, l, k, c in missed[: args.examples * 3]],
        }
    if args.json:
        print(json.dumps({"rows": rows, "details": details}, indent=2))
        return
    print("| language | files | ctags fn/method/class-like defs | found by ironbees | recall | ctags invented names (excluded) | all ctags tags | ironbees definitions |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for lang, files, wanted, matched, recall, n_inv, all_tags, ours in rows:
        print(f"| {lang} | {files} | {wanted} | {matched} | {recall:.2f}% | {n_inv} | {all_tags} | {ours} |")
    for lang, d in details.items():
        if d["missed_by_kind"]:
            print(f"\n{lang} misses by ctags kind: {d['missed_by_kind']}")
            for e in d["examples"]:
                print(f"  {e}")

if __name__ == "__main__":
    main()
