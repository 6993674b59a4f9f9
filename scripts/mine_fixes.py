#!/usr/bin/env python3
"""Mines fix commits from the histories of real projects into a localization set
(issue 37): one instance per commit, the commit message as the query, the non-test
source files it changed as gold, its parent as the base commit.

Repositories, their language and their split (tuned | heldout) are the fixed list
bench/locdev/repos.tsv; each one's history comes from the `fetch` tool's mirror
($IRONBEES_MIRROR/<owner>+<name>/repo).

    python3 scripts/mine_fixes.py --out bench/locdev/instances.jsonl [--per-repo 10] [--seed 37]
    python3 scripts/bench_devset.py --data bench/locdev/instances.jsonl --split tuned

A commit is kept when (all on HEAD's history, merges skipped):
  - its subject says it fixes something (fix, bug, crash, panic, error, wrong,
    regression, ...), is no release / revert / typo / lint / CI / docs / build /
    comment / test-only change ("Fix bar controller unit tests", "Fixing the Java
    1.5 build", "Fix some blank line nits"), and says enough: at least four words once a `fix(scope):` prefix is off;
  - it changes 1-4 source files of the indexed languages outside tests, docs,
    examples, benchmarks, generated and vendored code, at least one of them in the
    repository's language, with at most MAX_LINES lines changed in them, no more
    than MAX_FILES files in all, and no source file of another language (a
    stylesheet, a grammar, a Kotlin file) outside tests and docs (such a fix would
    have gold that no index holds);
gold = those files, less those the commit creates (not in the base tree).
The query is the message, subject and body, with trailer lines (Signed-off-by,
Co-authored-by, Reviewed-by, Change-Id, a bare `Closes #123`) dropped and nothing
else: names, paths and issue numbers that a message mentions stay, as they would
in a real issue.

Sampling, deterministic: the time from a repository's first kept commit to its
last is cut into --per-repo equal bins, and each bin gives the commit with the
smallest hash of (seed, repo, sha), preferring commits that also change a test (a
fix with a regression test is more likely a real bug fix); empty bins are made up
from the rest by the same order. So a change to the filters moves only the picks of
the bins where it adds or drops a commit.
"""
import argparse, hashlib, json, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

MAX_GOLD = 4
MAX_FILES = 12
MAX_LINES = 300

LANG_EXTS = {
    "rust": {"rs"},
    "python": {"py", "pyi"},
    "javascript": {"js", "mjs", "cjs", "jsx"},
    "typescript": {"ts", "mts", "cts", "tsx"},
    "go": {"go"},
    "java": {"java"},
    "csharp": {"cs"},
    "c": {"c", "h"},
    "cpp": {"h", "cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp", "tpp", "inl"},
}
INDEXED = set().union(*LANG_EXTS.values())
# Code that ironbees does not index: a fix touching one outside tests and docs has
# gold we could never rank, so the commit is skipped.
FOREIGN = {"css", "scss", "sass", "less", "vue", "svelte", "html", "htm", "kt", "kts", "scala", "groovy",
           "sh", "bash", "zsh", "fish", "ps1", "bat", "cmd", "y", "yy", "l", "ll", "rb", "php", "swift", "m", "mm",
           "lua", "pl", "pm", "pyx", "pxd", "cu", "asm", "s", "fs", "fsx", "vb", "xaml", "razor", "cshtml",
           "tcl", "el", "vim", "awk", "sql", "jq", "hbs", "ejs", "pug", "wasm", "zig", "nim", "dart", "r"}

TEST_DIR = re.compile(r"(?i)^(tests?|testing|unit[-_]?tests?|__tests__|__mocks__|testdata|test[-_]data|"
                      r"test[-_]?utils?|test[-_]?support|test[-_]?cases?|test[-_]?suites?|specs?|e2e|fixtures?|"
                      r"__snapshots__|snapshots|integration[-_]?tests?|regress|tests?[-_.].*|.*[-_.](unit|integration|"
                      r"functional|type)?[-_]?tests?)$")
CAMEL_TEST = re.compile(r"^[A-Z]\w*Tests?$|[a-z0-9]Tests?\.[cm]?[jt]sx?$")  # SelfTest/, coreTest.js
TEST_FILE = re.compile(r"(?i)(_test\.go|(^|/)test_[^/]*\.py|_test\.py|(^|/)conftest\.py|_tests?\.rs|"
                       r"\.(test|spec)\.[cm]?[jt]sx?|Tests?\.(java|cs)|Tests?[A-Z]\w*\.cs|(^|/)Test[A-Z]\w*\.(java|cs)|"
                       r"IT\.java|(^|/)setupTests?\.[jt]sx?|\.typetest\.ts|_test\.(c|cc|cpp|h)|_unittest\.(c|cc|cpp)|(^|/)test_[^/]*\.(c|cc|cpp|h))$")
DOC_DIR = re.compile(r"(?i)^(docs?|documentation|man|examples?|samples?|demos?|benchmarks?|benches|bench|"
                     r"perf|playground|site|website|\.github|\.circleci|cypress)$")
VENDOR_DIR = re.compile(r"(?i)^(vendor|vendored|_vendor|third[-_]?party|3rdparty|extern|external|deps|"
                        r"node_modules|dist|generated|single_include|amalgamat\w*|bower_components)$")
# Build and tool configuration: not where a bug lives; ignored like docs.
BUILD_FILE = re.compile(r"(?i)(^|/)(gulpfile|gruntfile|webpack\.config|rollup\.config|vite\.config|jest\.config|"
                        r"babel\.config|karma\.conf|playground)[^/]*$")
GENERATED_FILE = re.compile(r"(?i)(\.min\.js|\.bundle\.js|\.pb\.go|_pb2\.py|\.generated\.\w+|\.g\.cs|"
                            r"\.designer\.cs|AssemblyInfo\.cs|zz_generated\w*\.go|_gen\.go|bindata\.go|_string\.go)$")

FIXY = re.compile(r"(?i)\b(fix(e[sd]|ing)?|bug(fix|s)?|hotfix|crash(es|ed|ing)?|panic(s|ked)?|segfaults?|"
                  r"regressions?|incorrect(ly)?|wrong(ly)?|broken|errors?|exceptions?|fail(s|ed|ure|ing)?|"
                  r"hangs?|leaks?|overflows?|npe|nullpointer|invalid|mistakenly|erroneous(ly)?)\b")
NOT_A_FIX = re.compile(r"(?i)(\btypos?\b|\bspelling\b|\bgrammar\b|\bclippy\b|\blint(s|er|ing)?\b|\beslint\b|"
                       r"\bflak(y|iness)\b|\bchangelog\b|\bbump(s|ed)?\b|\bdependabot\b|\brenovate\b|"
                       r"\bmerge (branch|pull)\b|\bcherry[- ]pick|\bbackport|\bwhitespace\b|\bformatting\b|"
                       r"\bwarnings?\b|\bcheckstyle\b|\bstaticcheck\b|\bjavadoc\b|\breview comments?\b|"
                       r"\bcommented out\b|^(add(ed|s)?|adding) (a |some )?(failing |unit |regression )?tests?\b|"
                       r"\bfix(e[sd])? (a couple of |some |the |first |failing |unit |broken |more )*tests?\b|"
                       r"\bfix(e[sd]|ing)?\b(?!.{0,40}\b(add(ed|s|ing)?|with|and|plus)\b).{0,40}\btests\b|\bnits?\b|"
                       r"\btests? (fail|pass)|#\d+ test\b|\bbuild (error|failure|fix)|\bci\b|\bgithub actions?\b|"
                       r"\b(unit )?tests? (failures?|fix(es)?)\b|\bfix(e[sd]|ing)? (up )?(the |a |some )?([\w.+-]+ ){0,2}(tests?|docs?|"
                       r"documentation|readme|build|builds|ci|compil\w+|warnings?|links?|comments?|examples?)$|"
                       r"\bfix(e[sd]|ing)? (up )?(the |a |some )?([\w.+-]+ ){0,2}(tests?|docs?|documentation|readme|build|"
                       r"builds|ci|compil\w+|warnings?|links?|comments?|examples?)\b(?! (of|for|when|on|in|if)\b))")
NOT_A_FIX_START = re.compile(r"(?i)^(revert|merge|release|bump|chore|docs?|test|tests|ci|build|style|refactor|"
                             r"perf|translated using|update (dependency|changelog|readme)|\[?skip)\b")
PREFIX = re.compile(r"(?i)^((\[[^\]]*\]|[\w./-]+(\([^)]*\))?!?:|fix(e[sd])?\s*#\d+:?|bugfix:?|hotfix:?)\s*)+")
TRAILER = re.compile(r"(?i)^\s*([\w-]+-by|co-authored-by|change-id|cc|signed-off|reviewed-on|tested-on|"
                     r"pr-url|bug-url|git-svn-id|(closes|fixes|fixed|resolves|resolved|refs?|see|url|bug|"
                     r"assisted-by)\s*:?\s*(#\d+|https?://\S+|[\w.-]+/[\w.-]+#\d+)[\s,.]*$)")


def git(gitdir, *args, inp=None):
    return subprocess.run(["git", f"--git-dir={gitdir}", *args], check=True, capture_output=True,
                          input=inp).stdout


def git_dir(mirror, repo):
    d = os.path.join(mirror, repo.replace("/", "+"), "repo")
    return os.path.join(d, ".git") if os.path.isdir(os.path.join(d, ".git")) else d


def ext(path):
    base = path.rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[-1].lower() if "." in base else ""


def role(path):
    """test | doc | vendor | source, by the path alone."""
    parts = path.split("/")
    if any(VENDOR_DIR.match(p) for p in parts[:-1]) or GENERATED_FILE.search(path):
        return "vendor"
    if any(TEST_DIR.match(p) or CAMEL_TEST.match(p) for p in parts[:-1]) or TEST_FILE.search(path) \
            or CAMEL_TEST.search(parts[-1]):
        return "test"
    if any(DOC_DIR.match(p) for p in parts[:-1]) or BUILD_FILE.search(path):
        return "doc"
    return "source"


def clean_message(msg):
    lines = [l.rstrip() for l in msg.strip().splitlines()]
    if "--HG--" in lines:  # a Mercurial conversion's metadata, to the end
        lines = lines[:lines.index("--HG--")]
    lines = [l for l in lines if not TRAILER.match(l)]
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines).strip()


def subject_ok(subject):
    subject = subject.rstrip(" .!:;")
    if not FIXY.search(subject) or NOT_A_FIX.search(subject) or NOT_A_FIX_START.match(subject):
        return False
    rest = PREFIX.sub("", subject).strip()
    return len(re.findall(r"[A-Za-z][\w'-]*", rest)) >= 4


def commits(gitdir):
    """(sha, parent, time, message, [(status, path)]) of HEAD's non-merge commits.
    Name-status needs only trees: a snapshot may lack large blobs."""
    out = git(gitdir, "log", "--no-merges", "--no-renames", "--name-status", "-z",
              "--format=%x1e%H %P%x1f%ct%x1f%B%x1f", "HEAD")
    for rec in out.split(b"\x1e")[1:]:
        head, ctime, body, stats = rec.split(b"\x1f", 3)
        ids = head.decode().split()
        if len(ids) != 2:
            continue  # a root commit
        items = [i.strip(b"\n") for i in stats.strip(b"\n\0").split(b"\0")]
        files = [(items[i].decode(), items[i + 1].decode("utf-8", "surrogateescape"))
                 for i in range(0, len(items) - 1, 2)]
        yield ids[0], ids[1], int(ctime), body.decode("utf-8", "replace"), files


def lines_changed(gitdir, parent, sha, paths):
    """Lines added and deleted in paths, or None when a blob is missing."""
    try:
        out = git(gitdir, "diff", "--numstat", "--no-renames", parent, sha, "--", *paths).decode()
    except subprocess.CalledProcessError:
        return None
    total = 0
    for line in out.splitlines():
        a, d, _ = line.split("\t", 2)
        total += (int(a) if a != "-" else 0) + (int(d) if d != "-" else 0)
    return total


def candidate(language, files):
    """The gold files (before the created ones are dropped) and whether a test changed, or None."""
    if not files or len(files) > MAX_FILES:
        return None
    gold, tested = [], False
    for status, path in files:
        r, e = role(path), ext(path)
        if r == "test":
            tested = True
            continue
        if r in ("doc", "vendor"):
            continue
        if e in FOREIGN:
            return None
        if e in INDEXED:
            gold.append(path)
    if not 1 <= len(gold) <= MAX_GOLD:
        return None
    if not any(ext(p) in LANG_EXTS[language] for p in gold):
        return None
    return gold, tested


def existing(gitdir, commit, paths):
    query = "".join(f"{commit}:{p}\n" for p in paths).encode()
    out = git(gitdir, "cat-file", "--batch-check", inp=query).decode().splitlines()
    return [p for p, line in zip(paths, out) if not line.endswith("missing")]


def mine(gitdir, repo, language):
    seen, kept = set(), []
    for sha, parent, ctime, msg, files in commits(gitdir):
        subject = msg.strip().splitlines()[0].strip() if msg.strip() else ""
        if not subject_ok(subject) or subject.lower() in seen:
            continue
        c = candidate(language, files)
        if not c:
            continue
        gold, tested = c
        n = lines_changed(gitdir, parent, sha, gold)
        if n is None or n > MAX_LINES:
            continue
        gold = sorted(existing(gitdir, parent, gold))
        if not gold or not any(ext(p) in LANG_EXTS[language] for p in gold):
            continue
        seen.add(subject.lower())
        kept.append({"sha": sha, "parent": parent, "time": ctime, "message": clean_message(msg),
                     "gold": gold, "tested": tested, "created": len(c[0]) - len(gold)})
    kept.sort(key=lambda k: (k["time"], k["sha"]))
    return kept


def sample(kept, n, seed, repo):
    """n commits spread over the repository's time: its span from the first kept commit
    to the last is cut into n equal bins, and each bin gives the commit with the
    smallest seeded hash (one with a test change if it has one); bins left empty are
    filled by the smallest hashes of the rest. A change to the filters moves a pick
    only in the bin of a commit it adds or drops."""
    if len(kept) <= n:
        return kept
    key = lambda k: hashlib.sha256(f"{seed}:{repo}:{k['sha']}".encode()).hexdigest()
    t0, t1 = kept[0]["time"], kept[-1]["time"]
    bins = [[] for _ in range(n)]
    for k in kept:
        bins[min(n - 1, (k["time"] - t0) * n // (t1 - t0 + 1))].append(k)
    picked = [min([k for k in b if k["tested"]] or b, key=key) for b in bins if b]
    chosen = {k["sha"] for k in picked}
    rest = sorted((k for k in kept if k["sha"] not in chosen), key=lambda k: (not k["tested"], key(k)))
    picked += rest[:n - len(picked)]
    return sorted(picked, key=lambda k: (k["time"], k["sha"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repos", default=os.path.join(ROOT, "bench", "locdev", "repos.tsv"))
    ap.add_argument("--mirror", default=os.environ.get("IRONBEES_MIRROR", "/work/.mirror"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--per-repo", type=int, default=10)
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("--repo", action="append", help="only these repositories")
    ap.add_argument("--all", help="also write every kept commit (before sampling) here, for inspection")
    args = ap.parse_args()

    rows, everything = [], []
    for line in open(args.repos):
        if not line.strip() or line.startswith("#"):
            continue
        repo, language, split = line.split()
        if args.repo and repo not in args.repo:
            continue
        gitdir = git_dir(args.mirror, repo)
        if not os.path.isdir(gitdir):
            sys.exit(f"error: {gitdir} missing; bring it with the fetch tool (github:{repo})")
        kept = mine(gitdir, repo, language)
        picked = sample(kept, args.per_repo, args.seed, repo)
        print(f"{repo} ({language}, {split}): {len(kept)} fix commits, {len(picked)} drawn, "
              f"{sum(k['tested'] for k in picked)} with a test change", file=sys.stderr)
        for k in kept:
            everything.append({"repo": repo, "language": language, "split": split, **k})
        for k in picked:
            rows.append({
                "instance_id": f"{repo.replace('/', '__')}-{k['sha'][:12]}",
                "repo": repo,
                "base_commit": k["parent"],
                "fix_commit": k["sha"],
                "problem_statement": k["message"],
                "gold_files": k["gold"],
                "language": language,
                "split": split,
                "created_at": k["time"],
                "has_test_change": k["tested"],
            })
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    if args.all:
        with open(args.all, "w") as f:
            for r in everything:
                f.write(json.dumps(r) + "\n")
    print(f"{len(rows)} instances -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
