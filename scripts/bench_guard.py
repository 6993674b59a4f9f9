#!/usr/bin/env python3
"""Guardrail accuracy (issue 34): G002 NO_SECRET side by side with gitleaks and
detect-secrets on one labelled corpus.

Two steps:

  extract  The scanners' own test cases -> bench/guard/scanner-cases.jsonl.
           gitleaks: the true positives (`tps`) and false positives (`fps`) of
           every rule in cmd/generate/config/rules/*.go, evaluated from the Go
           source (string literals, utils.GenerateSampleSecrets, and
           secrets.NewSecret's regex-generated values, seeded). detect-secrets:
           every line its tests/plugins feed a detector, with the detector's
           verdict, recorded while those tests pass (bench/guard/ds_harvest_plugin.py).
           Needs the two projects' sources (the search tool's `fetch`).

  extract-trufflehog
           trufflehog's detector pattern tests -> bench/guard/trufflehog-cases.jsonl:
           every row of a `tests := []struct{name, input string; want []string}`
           table in pkg/detectors/*/…_test.go, the input evaluated from the Go
           source (literals, `+`, fmt.Sprintf, package and local string
           variables); a positive when `want` is non-empty, a negative when it
           is empty. Rows that cannot be evaluated are counted and left out.
           `--write-split` writes bench/guard/trufflehog-split.json (detectors
           sorted, every other one held out).

  run      (default) Items = the scanner cases (a positive: a secret format;
           a negative: a scanner's false-positive case) + the added lines of
           non-merge commits sampled (seeded) from local git clones (negatives;
           their repo and commit ids go to bench/guard/negatives-manifest.json,
           the code is never committed). Every item becomes files holding its
           added lines (and, for ironbees, a unified diff of them); the three
           tools scan the same files; an item is flagged if a tool reports any
           finding in it (ironbees: a G002 finding). Prints precision, recall
           and F1 per tool, by source, and a Markdown table.

Python 3 standard library only; the peers are external commands.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "guard"
CASES = BENCH / "scanner-cases.jsonl"
MANIFEST = BENCH / "negatives-manifest.json"
SPLIT = BENCH / "gitleaks-split.json"
TH_CASES = BENCH / "trufflehog-cases.jsonl"
TH_SPLIT = BENCH / "trufflehog-split.json"

# --------------------------------------------------------------------------
# extract: gitleaks' rule tests, evaluated from the Go source
# --------------------------------------------------------------------------

TOKEN = re.compile(
    r"(?P<ws>[ \t\r]+)|(?P<nl>\n)|(?P<lc>//[^\n]*)|(?P<bc>/\*.*?\*/)"
    r'|(?P<str>"(?:\\.|[^"\\\n])*")|(?P<raw>`[^`]*`)|(?P<chr>\'(?:\\.|[^\'\\])\')'
    r"|(?P<num>\d+)|(?P<id>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)"
    r"|(?P<op>:=|\.\.\.|[-+*/%{}()\[\],:=;&|!<>^.?])",
    re.S,
)


class Unsupported(Exception):
    pass


def go_tokens(src: str):
    out = []
    for m in TOKEN.finditer(src):
        kind = m.lastgroup
        text = m.group()
        if kind in ("ws", "lc"):
            continue
        if kind == "bc":
            if "\n" in text:
                out.append(("nl", "\n"))
            continue
        if kind == "str":
            try:
                out.append(("str", ast.literal_eval(text)))
            except (ValueError, SyntaxError):
                out.append(("str", text[1:-1]))
        elif kind == "raw":
            out.append(("str", text[1:-1]))
        else:
            out.append((kind, text))
    return out


SAMPLES = {
    "ini - quoted1": '{i}Token="{s}"',
    "ini - quoted2": '{i}Token = "{s}"',
    "ini - unquoted1": "{i}Token={s}",
    "ini - unquoted2": "{i}Token = {s}",
    "json - string": '{\n    "{i}_token": "{s}"\n}',
    "json - escaped newline in string": '{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}',
    "xml - element multiline": "<{i}Token>\n    {s}\n</{i}Token>",
    "yaml - singleline - unquoted": "{i}_token: {s}",
    "yaml - singleline - single quote": "{i}_token: '{s}'",
    "yaml - singleline - double quote": '{i}_token: "{s}"',
    "C#": 'string {i}Token = "{s}";',
    "go - normal": 'var {i}Token string = "{s}"',
    "go - short": '{i}Token := "{s}"',
    "go - backticks": "{i}Token := `{s}`",
    "java": 'String {i}Token = "{s}";',
    "kotlin - notype": 'var {i}Token = "{s}"',
    "php - string concat": '${i}Token .= "{s}"',
    "python - single quote": "{i}Token = '{s}'",
    "python - double quote": '{i}Token = "{s}"',
    "misc - comma operator": 'System.setProperty("{I}_TOKEN", "{s}")',
    "logstash": '  "{i}Token" => "{s}"',
    "make - recursive assignment": '{i}_TOKEN = "{s}"',
    "make - simple assignment": '{i}_TOKEN := "{s}"',
    "make - shell assignment": '{i}_TOKEN ::= "{s}"',
    "make - evaluated shell assignment": '{i}_TOKEN :::= "{s}"',
    "make - conditional assignment": '{i}_TOKEN ?= "{s}"',
}
"""utils.GenerateSampleSecrets' templates (cmd/generate/config/utils/generate.go,
v8.30.1): one secret written the ways configuration files and code write it."""

# Which file a sample template belongs in, so that tools keyed on file type
# (detect-secrets' keyword plugin) see it where it would be.
SAMPLE_EXT = {
    "ini": "config.ini",
    "json": "config.json",
    "xml": "config.xml",
    "yaml": "config.yaml",
    "C#": "Program.cs",
    "go": "main.go",
    "java": "Main.java",
    "kotlin": "Main.kt",
    "php": "index.php",
    "python": "settings.py",
    "misc": "Main.java",
    "logstash": "logstash.conf",
    "make": "Makefile",
}

PATTERNS = {
    "utils.Numeric": "[0-9]{%s}",
    "utils.Hex": "[a-f0-9]{%s}",
    "utils.AlphaNumeric": "[a-z0-9]{%s}",
    "utils.AlphaNumericExtendedShort": "[a-z0-9_-]{%s}",
    "utils.AlphaNumericExtended": "[a-z0-9=_\\-]{%s}",
    "utils.AlphaNumericExtendedLong": "[a-z0-9\\/=_\\+\\-]{%s}",
}


def regex_sample(pattern: str, rng: random.Random) -> str:
    """A string matching the regex, as gitleaks' secrets.NewSecret (reggen) makes one."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import sre_constants as C
        import sre_parse

    try:
        parsed = sre_parse.parse(pattern)
    except Exception as e:  # noqa: BLE001 - a Go-only syntax
        raise Unsupported(f"regex {pattern!r}: {e}") from e
    alnum = [chr(c) for c in range(33, 127)]

    def category(cat):
        if cat == C.CATEGORY_DIGIT:
            return list("0123456789")
        if cat == C.CATEGORY_WORD:
            return list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
        if cat == C.CATEGORY_SPACE:
            return [" "]
        if cat == C.CATEGORY_NOT_SPACE:
            return alnum
        raise Unsupported(str(cat))

    def charset(items):
        chars, negate = [], False
        for op, av in items:
            if op == C.NEGATE:
                negate = True
            elif op == C.LITERAL:
                chars.append(chr(av))
            elif op == C.RANGE:
                chars.extend(chr(c) for c in range(av[0], av[1] + 1))
            elif op == C.CATEGORY:
                chars.extend(category(av))
            else:
                raise Unsupported(str(op))
        if negate:
            chars = [c for c in alnum if c not in chars]
        return chars

    def gen(seq) -> str:
        out = []
        for op, av in seq:
            if op == C.LITERAL:
                out.append(chr(av))
            elif op == C.NOT_LITERAL:
                out.append(rng.choice([c for c in alnum if c != chr(av)]))
            elif op == C.ANY:
                out.append(rng.choice(alnum))
            elif op == C.IN:
                out.append(rng.choice(charset(av)))
            elif op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
                lo, hi, sub = av
                hi = lo + 8 if hi == C.MAXREPEAT else min(hi, lo + 8)
                for _ in range(rng.randint(lo, hi)):
                    out.append(gen(sub))
            elif op == C.SUBPATTERN:
                out.append(gen(av[-1]))
            elif op == C.BRANCH:
                out.append(gen(rng.choice(av[1])))
            elif op in (C.AT, C.ASSERT, C.ASSERT_NOT):
                continue
            elif op == C.CATEGORY:
                out.append(rng.choice(category(av)))
            else:
                raise Unsupported(f"regex op {op}")
        return "".join(out)

    return gen(parsed)


class GoEval:
    """Evaluates the few Go expressions gitleaks' rule tests are written in."""

    def __init__(self, toks, rng, env):
        self.t = toks
        self.i = 0
        self.rng = rng
        self.env = env

    def peek(self, k=0):
        j = self.i + k
        return self.t[j] if j < len(self.t) else ("eof", "")

    def take(self, text=None):
        tok = self.peek()
        if text is not None and tok[1] != text:
            raise Unsupported(f"expected {text!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def skip_nl(self):
        while self.peek()[0] == "nl":
            self.i += 1

    def expr(self):
        v = self.unary()
        while self.peek()[1] == "+":
            self.take()
            self.skip_nl()
            w = self.unary()
            if not (isinstance(v, str) and isinstance(w, str)):
                raise Unsupported("+ of non-strings")
            v = v + w
        return v

    def args(self):
        self.take("(")
        out, spread = [], False
        self.skip_nl()
        while self.peek()[1] != ")":
            out.append(self.expr())
            if self.peek()[1] == "...":
                self.take()
                spread = True
            self.skip_nl()
            if self.peek()[1] == ",":
                self.take()
            self.skip_nl()
        self.take(")")
        return out, spread

    def elems(self, is_map):
        self.take("{")
        out = []
        self.skip_nl()
        while self.peek()[1] != "}":
            k = self.expr()
            if is_map:
                self.take(":")
                self.skip_nl()
                v = self.expr()
                out.append((v, k))
            else:
                out.append((k, None))
            self.skip_nl()
            if self.peek()[1] == ",":
                self.take()
            self.skip_nl()
        self.take("}")
        return out

    def unary(self):
        kind, text = self.peek()
        if kind == "str":
            self.take()
            return text
        if kind == "num":
            self.take()
            return int(text)
        if text == "[":
            self.take("[")
            self.take("]")
            self.take("string")
            return self.elems(False)
        if text == "map":
            self.take()
            self.take("[")
            self.take("string")
            self.take("]")
            self.take("string")
            return self.elems(True)
        if kind == "id":
            self.take()
            if self.peek()[1] != "(":
                if text in self.env:
                    return self.env[text]
                raise Unsupported(f"name {text}")
            args, _ = self.args()
            return self.call(text, args)
        raise Unsupported(f"token {text!r}")

    def call(self, name, a):
        if name == "append":
            base = list(a[0])
            for x in a[1:]:
                if isinstance(x, list):
                    base.extend(x)
                else:
                    base.append((x, None))
            return base
        if name == "utils.GenerateSampleSecrets":
            ident, secret = a
            return [
                (
                    t.replace("{i}", ident).replace("{I}", ident.upper()).replace("{s}", secret),
                    SAMPLE_EXT.get(k.split(" ")[0]),
                )
                for k, t in SAMPLES.items()
            ]
        if name == "utils.GenerateSampleSecret":
            return f'{a[0]}_api_token = "{a[1]}"'
        if name in ("secrets.NewSecret", "newPlausibleSecret"):
            return regex_sample(a[0], self.rng)
        if name in PATTERNS:
            return PATTERNS[name] % a[0]
        if name == "utils.Hex8_4_4_4_12":
            return r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        if name == "strings.Repeat":
            return a[0] * a[1]
        if name == "fmt.Sprintf":
            fmt, rest = a[0], list(a[1:])
            return re.sub(r"%[sdvq]", lambda m: str(rest.pop(0)), fmt)
        raise Unsupported(f"call {name}")


FUNC = re.compile(
    r"^func (\w+)\(\) \*config\.Rule \{\n(.*?)^\}\n(?=\s*(?:\Z|func |//|var |type |const ))", re.M | re.S
)


def statements(toks, rng, env, rule, skipped):
    """Evaluates `NAME := EXPR` / `NAME = EXPR` / `var NAME = EXPR` statements."""
    toks = [t for t in toks if t != ("id", "var")]
    i = 0
    while i < len(toks):
        at_start = i == 0 or toks[i - 1][0] == "nl" or toks[i - 1][1] in ("{", ";", "(")
        if at_start and toks[i][0] == "id" and i + 1 < len(toks) and toks[i + 1][1] in (":=", "="):
            name = toks[i][1]
            ev = GoEval(toks[i + 2 :], rng, env)
            try:
                env[name] = ev.expr()
                i += 2 + ev.i
                continue
            except (Unsupported, IndexError, TypeError, ValueError) as e:
                if rule and re.match(r"(tps|fps)", name):
                    skipped.append(f"{rule} {name}: {e}")
        i += 1
    return env


def gitleaks_cases(src: Path, commit: str, seed: int):
    rules_dir = src / "cmd" / "generate" / "config" / "rules"
    rng = random.Random(seed)
    cases, skipped = [], []
    for path in sorted(rules_dir.glob("*.go")):
        text = path.read_text()
        # Package-level `var name = ...` that tests refer to.
        file_env = statements(go_tokens(FUNC.sub("", text)), rng, {}, rule="", skipped=[])
        for fm in FUNC.finditer(text):
            body = fm.group(2)
            rid = re.search(r'RuleID:\s*"([^"]+)"', body)
            rule = rid.group(1) if rid else fm.group(1)
            env = statements(go_tokens(body), rng, dict(file_env), rule, skipped)
            for name, val in env.items():
                m = re.match(r"(tps|fps)", name)
                if not m or not isinstance(val, list):
                    continue
                for v, p in val:
                    if not isinstance(v, str) or not v.strip():
                        continue
                    cases.append(
                        {
                            "label": 1 if m.group(1) == "tps" else 0,
                            "text": v,
                            "file": p,
                            "rule": rule,
                            "source": "gitleaks",
                            "repo": "gitleaks/gitleaks",
                            "commit": commit,
                            "path": str(path.relative_to(src)),
                        }
                    )
    return cases, skipped


def ds_cases(harvest: Path, commit: str):
    """detect-secrets' cases from a harvest of its passing plugin tests."""
    by_line: dict = {}
    for raw in harvest.read_text().splitlines():
        r = json.loads(raw)
        if not r.get("passed") or not r["line"].strip():
            continue
        # A public IP address is not a secret in the sense of G002 (or gitleaks).
        if r["plugin"] == "IPPublicDetector":
            continue
        key = r["line"]
        test_file = r["test"].split("::")[0]
        label = 1 if r["flagged"] else 0
        prev = by_line.get(key)
        if prev is None or label > prev["label"]:
            name = r["filename"] or ""
            ext = os.path.splitext(name)[1]
            by_line[key] = {
                "label": label,
                "text": r["line"],
                "file": f"config{ext}" if ext and len(ext) <= 6 else None,
                "rule": r["plugin"],
                "source": "detect-secrets",
                "repo": "Yelp/detect-secrets",
                "commit": commit,
                "path": test_file,
            }
    return list(by_line.values())


# --------------------------------------------------------------------------
# extract-trufflehog: trufflehog's detector pattern tests
# --------------------------------------------------------------------------


def go_func_bodies(toks):
    """(name, start, end) of each top-level func body: toks[start:end] is
    inside its braces."""
    out = []
    i = 0
    while i < len(toks):
        if toks[i] == ("id", "func") and i + 1 < len(toks) and toks[i + 1][0] == "id":
            name = toks[i + 1][1]
            j, paren = i + 2, 0
            while j < len(toks):
                t = toks[j][1]
                if t == "(":
                    paren += 1
                elif t == ")":
                    paren -= 1
                elif t == "{" and paren == 0:
                    break
                j += 1
            depth, k = 0, j
            while k < len(toks):
                if toks[k][1] == "{":
                    depth += 1
                elif toks[k][1] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                k += 1
            out.append((name, j + 1, k))
            i = k + 1
            continue
        i += 1
    return out


class GoEvalTH(GoEval):
    """GoEval with what trufflehog's tests also write: fmt.Sprintf with %% and
    indexed verbs, strings.Repeat/Join/ToUpper/ToLower/TrimSpace, string(...)."""

    def unary(self):
        kind, text = self.peek()
        if text == "nil":
            self.take()
            return None
        if text == "string" and self.peek(1)[1] == "(":
            self.take()
            args, _ = self.args()
            return args[0]
        return super().unary()

    def call(self, name, a):
        if name == "fmt.Sprintf":
            fmt, rest = a[0], list(a[1:])
            if not isinstance(fmt, str):
                raise Unsupported("Sprintf of a non-string")
            pos = [0]

            def sub(m):
                verb = m.group(0)
                if verb == "%%":
                    return "%"
                idx = m.group(1)
                if idx:
                    v = rest[int(idx) - 1]
                else:
                    v = rest[pos[0]]
                    pos[0] += 1
                if m.group(2) == "q":
                    return json.dumps(v)
                if not isinstance(v, (str, int)):
                    raise Unsupported("Sprintf arg")
                return str(v)

            try:
                return re.sub(r"%%|%(?:\[(\d+)\])?([sdvq])", sub, fmt)
            except IndexError as e:
                raise Unsupported("Sprintf args") from e
        if name == "strings.Join":
            return a[1].join(x for x, _ in a[0])
        if name == "strings.ToUpper":
            return a[0].upper()
        if name == "strings.ToLower":
            return a[0].lower()
        if name == "strings.TrimSpace":
            return a[0].strip()
        if name in ("utils.GenerateSampleSecrets", "utils.GenerateSampleSecret", "secrets.NewSecret"):
            raise Unsupported(f"call {name}")
        return super().call(name, a)


def go_statements(toks, env, skipped, where):
    """`NAME := EXPR` / `NAME = EXPR` / `var`/`const NAME = EXPR` (single
    names) into env; what cannot be evaluated is left out."""
    toks = [t for t in toks if t not in (("id", "var"), ("id", "const"))]
    i = 0
    while i < len(toks):
        at_start = i == 0 or toks[i - 1][0] == "nl" or toks[i - 1][1] in ("{", ";", "(")
        if at_start and toks[i][0] == "id" and i + 1 < len(toks) and toks[i + 1][1] in (":=", "="):
            name = toks[i][1]
            ev = GoEvalTH(toks[i + 2 :], None, env)
            try:
                v = ev.expr()
                if isinstance(v, (str, int, list)):
                    env[name] = v
                i += 2 + ev.i
                continue
            except (Unsupported, IndexError, TypeError, ValueError, KeyError, AttributeError):
                pass
        elif at_start and toks[i][0] == "id" and i + 2 < len(toks) and toks[i + 1][0] == "id" \
                and toks[i + 2][1] == "=" and toks[i + 1][1] == "string":
            # `var name string = EXPR`
            toks = toks[: i + 1] + toks[i + 2 :]
            continue
        i += 1
    return env


def th_table(toks, start, env, skipped, where):
    """The rows of `tests := []struct{...}{ {...}, ... }` starting at toks[start]
    (the `tests` name): [(name, input or None, want_nonempty or None)]."""
    i = start
    n = len(toks)
    # the struct type: []struct { fields }
    while i < n and toks[i][1] != "struct":
        i += 1
    fields = []
    depth = 0
    i += 1
    while i < n:
        t = toks[i][1]
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                i += 1
                break
        elif depth == 1 and toks[i][0] == "id" and (toks[i - 1][0] == "nl" or toks[i - 1][1] in ("{", ";")):
            fields.append(t)
        i += 1
    if "input" not in fields or "want" not in fields:
        return None
    if toks[i][1] != "{":
        return None
    i += 1
    rows = []
    while i < n:
        while i < n and toks[i][0] == "nl" or (i < n and toks[i][1] == ","):
            i += 1
        if i >= n or toks[i][1] == "}":
            break
        if toks[i][1] != "{":
            return rows
        # one row: split its tokens into `key: value` by top-level commas
        depth, j = 0, i
        while j < n:
            if toks[j][1] in ("{", "(", "["):
                depth += 1
            elif toks[j][1] in ("}", ")", "]"):
                depth -= 1
                if depth == 0:
                    break
            j += 1
        body = toks[i + 1 : j]
        i = j + 1
        parts, cur, d = [], [], 0
        for t in body:
            if t[1] in ("{", "(", "["):
                d += 1
            elif t[1] in ("}", ")", "]"):
                d -= 1
            if d == 0 and t[1] == ",":
                parts.append(cur)
                cur = []
            else:
                cur.append(t)
        parts.append(cur)
        row = {}
        for part in parts:
            part = [t for t in part if t[0] != "nl"]
            if len(part) >= 2 and part[0][0] == "id" and part[1][1] == ":":
                row[part[0][1]] = part[2:]
        name = None
        if "name" in row:
            try:
                name = GoEvalTH(row["name"], None, env).expr()
            except Exception:  # noqa: BLE001
                name = None
        inp = None
        if "input" in row:
            try:
                ev = GoEvalTH(row["input"], None, env)
                inp = ev.expr()
                if ev.i != len(row["input"]) or not isinstance(inp, str):
                    raise Unsupported("input not a string expression")
            except (Unsupported, IndexError, TypeError, ValueError, KeyError, AttributeError) as e:
                skipped.append(f"{where} {name!r}: input: {e}")
                inp = None
        want = row.get("want")
        if want is None:
            nonempty = False  # the zero value, nil
        elif want == [("id", "nil")]:
            nonempty = False
        elif len(want) >= 3 and want[0][1] == "[" and want[1][1] == "]":
            k = 2
            while k < len(want) and want[k][1] != "{":
                k += 1
            nonempty = k + 1 < len(want) and want[k + 1][1] != "}"
        else:
            try:
                v = GoEvalTH(want, None, env).expr()
                nonempty = bool(v)
            except Exception as e:  # noqa: BLE001
                skipped.append(f"{where} {name!r}: want: {e}")
                nonempty = None
        rows.append((name, inp, nonempty))
    return rows


def trufflehog_cases(src: Path, commit: str):
    det = src / "pkg" / "detectors"
    cases, skipped, tables = [], [], 0
    for path in sorted(det.rglob("*_test.go")):
        rel = path.relative_to(det)
        if len(rel.parts) < 2 or "integration" in path.name:
            continue
        detector = rel.parts[0]
        toks = go_tokens(path.read_text(errors="replace"))
        bodies = go_func_bodies(toks)
        inside = set()
        for _, s, e in bodies:
            inside.update(range(s - 1, e + 1))
        pkg_env = go_statements([t for k, t in enumerate(toks) if k not in inside], {}, skipped, str(rel))
        for fname, s, e in bodies:
            if not fname.startswith("Test"):
                continue
            body = toks[s:e]
            for k in range(len(body) - 2):
                if body[k] == ("id", "tests") and body[k + 1][1] in (":=", "=") and body[k + 2][1] == "[":
                    env = go_statements(body[:k], dict(pkg_env), skipped, str(rel))
                    rows = th_table(body, k, env, skipped, f"{rel}:{fname}")
                    if rows is None:
                        continue
                    tables += 1
                    for name, inp, nonempty in rows:
                        if inp is None or nonempty is None or not inp.strip():
                            continue
                        cases.append(
                            {
                                "label": 1 if nonempty else 0,
                                "text": inp,
                                "file": None,
                                "rule": detector,
                                "source": "trufflehog",
                                "repo": "trufflesecurity/trufflehog",
                                "commit": commit,
                                "path": str(path.relative_to(src)),
                                "test": f"{fname}/{name}" if name else fname,
                            }
                        )
                    break
    return cases, skipped, tables


def cmd_extract_trufflehog(a):
    cases, skipped, tables = trufflehog_cases(Path(a.src), a.commit)
    seen, out = set(), []
    for c in cases:
        key = (c["text"], c["label"])
        if key in seen:
            continue
        seen.add(key)
        out.append(c)
    pos = {c["text"] for c in out if c["label"] == 1}
    dropped = sum(1 for c in out if c["label"] == 0 and c["text"] in pos)
    out = [c for c in out if c["label"] == 1 or c["text"] not in pos]
    for n, c in enumerate(out):
        c["id"] = f"tr{n:05d}"
    with open(TH_CASES, "w") as f:
        for c in out:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    dets = sorted({c["rule"] for c in out})
    print(f"{tables} test tables; {len(cases)} rows evaluated; {len(out)} cases "
          f"({sum(c['label'] for c in out)} positives, {sum(1 - c['label'] for c in out)} negatives; "
          f"{dropped} negatives dropped as another detector's positive) from {len(dets)} detectors "
          f"-> {TH_CASES.relative_to(ROOT)}")
    print(f"{len(skipped)} rows not evaluated", file=sys.stderr)
    if a.verbose:
        for s in skipped:
            print("  " + s, file=sys.stderr)
    if a.write_split:
        # Before any result is looked at: detectors sorted, every other one held out.
        split = {
            "about": "trufflehog's detectors (the directories under pkg/detectors with pattern tests in "
                     "bench/guard/trufflehog-cases.jsonl) split for G002 round 3 (issue 34), written before any "
                     "tool was run on them: sorted, index 0, 2, 4, ... tuning; 1, 3, 5, ... held out. Only the "
                     "tuning half's misses and false positives are looked at while changing "
                     "crates/guard/src/secrets.rs.",
            "repo": "trufflesecurity/trufflehog",
            "commit": a.commit,
            "tuning": dets[0::2],
            "heldOut": dets[1::2],
        }
        TH_SPLIT.write_text(json.dumps(split, indent=1) + "\n")
        print(f"wrote {TH_SPLIT.relative_to(ROOT)}: {len(split['tuning'])} tuning, {len(split['heldOut'])} held out")


def cmd_extract(a):
    cases, skipped = gitleaks_cases(Path(a.gitleaks_src), a.gitleaks_commit, a.seed)
    cases += ds_cases(Path(a.ds_harvest), a.ds_commit)
    seen, out = set(), []
    for c in cases:
        key = (c["text"], c["label"])
        if key in seen:
            continue
        seen.add(key)
        out.append(c)
    # One text labelled both ways (a gitleaks fp of one rule, a tp of another):
    # the positive wins.
    pos = {c["text"] for c in out if c["label"] == 1}
    out = [c for c in out if c["label"] == 1 or c["text"] not in pos]
    for n, c in enumerate(out):
        c["id"] = f"{c['source'][:2]}{n:05d}"
    BENCH.mkdir(parents=True, exist_ok=True)
    with open(CASES, "w") as f:
        for c in out:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    counts: dict = {}
    for c in out:
        k = (c["source"], c["label"])
        counts[k] = counts.get(k, 0) + 1
    print(f"wrote {len(out)} cases to {CASES.relative_to(ROOT)}: {counts}")
    if skipped:
        print(f"{len(skipped)} gitleaks tps/fps statements not evaluated:", file=sys.stderr)
        for s in skipped:
            print("  " + s, file=sys.stderr)


# --------------------------------------------------------------------------
# run: negatives from local clones
# --------------------------------------------------------------------------


def git(repo: Path, *args) -> str:
    return subprocess.run(
        ["git", f"--git-dir={repo}", *args],
        capture_output=True,
        text=True,
        errors="replace",
        check=True,
    ).stdout


def local_repos(roots) -> dict:
    """name -> git dir, one clone per upstream repository."""
    repos: dict = {}
    for root in roots:
        root = Path(root)
        if not root.exists():
            continue
        for gd in sorted(root.glob("*/.git")) + sorted(root.glob("*/*/.git")):
            name = gd.parent.name
            # SWE-bench instances: owner__repo-NNNN, many clones of one repo.
            m = re.match(r"(.+?)__(.+)-\d+$", name)
            name = f"{m.group(1)}/{m.group(2)}" if m else name
            repos.setdefault(name, gd)
        for gd in sorted(root.glob("*/repo")):
            if (gd / "HEAD").exists():
                name = gd.parent.name.replace("+", "/", 1)
                repos.setdefault(name, gd)
    return repos


def sample_manifest(a) -> dict:
    repos = local_repos(a.repos)
    allow = None
    if a.repo_list:
        allow = set()
        for raw in Path(a.repo_list).read_text().splitlines():
            try:
                allow.add(json.loads(raw)["repo"])
            except (ValueError, KeyError):
                continue
    excluded = {"gitleaks/gitleaks", "Yelp/detect-secrets"}
    names = [
        n
        for n in sorted(repos)
        if n not in excluded and (allow is None or n in allow or "__" in str(repos[n]))
    ]
    rng = random.Random(a.seed)
    per = max(1, -(-a.commits // max(1, len(names))))
    manifest = {"seed": a.seed, "perRepo": per, "repos": []}
    for n in names:
        gd = repos[n]
        head = git(gd, "rev-parse", "HEAD").strip()
        shas = git(gd, "rev-list", "--no-merges", "--max-count=20000", head).split()
        pick = sorted(rng.sample(shas, min(per, len(shas))))
        manifest["repos"].append({"repo": n, "gitDir": str(gd), "head": head, "commits": pick})
    return manifest


def commit_added(gd: Path, sha: str, max_lines: int):
    """{path: [added lines]} of one commit, capped at max_lines in all."""
    out = git(gd, "show", "--format=", "--unified=0", "--no-color", "--no-ext-diff", "--no-renames", sha)
    files: dict = {}
    cur = None
    total = 0
    for line in out.splitlines():
        if line.startswith("+++ "):
            p = line[4:]
            cur = None if p == "/dev/null" else p[2:] if p.startswith("b/") else p
            continue
        if line.startswith("diff --git") or line.startswith("--- ") or line.startswith("@@"):
            continue
        if cur and line.startswith("+"):
            if total >= max_lines:
                break
            files.setdefault(cur, []).append(line[1:])
            total += 1
    return files


# --------------------------------------------------------------------------
# run: the tools
# --------------------------------------------------------------------------


def safe_path(p: str) -> str:
    parts = [re.sub(r"[^A-Za-z0-9._+-]", "_", s) for s in p.split("/") if s not in ("", ".", "..")]
    return "/".join(parts) or "file.txt"


def write_items(items, root: Path):
    """Each item's files under root/<id>/, and one unified diff of them all."""
    diff = []
    for it in items:
        for path, lines in it["files"].items():
            rel = f"{it['id']}/{safe_path(path)}"
            f = root / rel
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text("\n".join(lines) + "\n", errors="replace")
            diff.append(f"diff --git a/{rel} b/{rel}\nnew file mode 100644\n--- /dev/null\n+++ b/{rel}\n")
            diff.append(f"@@ -0,0 +1,{len(lines)} @@\n")
            diff.extend(f"+{x}\n" for x in lines)
    return "".join(diff)


def item_of(path: str, root: Path) -> str:
    p = Path(path)
    if p.is_absolute():
        try:
            p = p.relative_to(root)
        except ValueError:
            p = Path(str(p).split(str(root) + "/", 1)[-1])
    return p.parts[0]


def run_ironbees(exe, diff_text, root, work):
    d = work / "ironbees.diff"
    d.write_text(diff_text, errors="replace")
    proj = work / "proj"
    proj.mkdir(exist_ok=True)
    r = subprocess.run(
        [exe, "guard", "check", "--diff", str(d), "--json"],
        capture_output=True,
        text=True,
        cwd=proj,
    )
    if r.returncode not in (0, 11):
        raise SystemExit(f"ironbees failed ({r.returncode}): {r.stderr[:2000]}")
    report = json.loads(r.stdout)
    return {item_of(f["file"], root) for f in report["findings"] if f["ruleId"] == "G002" and f.get("file")}


def run_gitleaks(exe, root, work):
    out = work / "gitleaks.json"
    r = subprocess.run(
        [exe, "dir", str(root), "--report-format", "json", "--report-path", str(out),
         "--no-banner", "--exit-code", "0", "--log-level", "error"],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        raise SystemExit(f"gitleaks failed ({r.returncode}): {r.stderr[:2000]}")
    return {item_of(f["File"], root) for f in json.loads(out.read_text() or "[]")}


def run_detect_secrets(exe, root, work):
    r = subprocess.run(
        [exe, "scan", "--all-files", "."],
        capture_output=True,
        text=True,
        cwd=root,
    )
    if r.returncode != 0:
        raise SystemExit(f"detect-secrets failed ({r.returncode}): {r.stderr[:2000]}")
    return {item_of(f, root) for f in json.loads(r.stdout)["results"]}


def metrics(items, flagged):
    tp = sum(1 for i in items if i["label"] == 1 and i["id"] in flagged)
    fn = sum(1 for i in items if i["label"] == 1 and i["id"] not in flagged)
    fp = sum(1 for i in items if i["label"] == 0 and i["id"] in flagged)
    tn = sum(1 for i in items if i["label"] == 0 and i["id"] not in flagged)
    p = tp / (tp + fp) if tp + fp else float("nan")
    r = tp / (tp + fn) if tp + fn else float("nan")
    f1 = 2 * p * r / (p + r) if tp else 0.0
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": p, "recall": r, "f1": f1}


def macro_recall(items, flagged):
    rules: dict = {}
    for i in items:
        if i["label"] == 1:
            rules.setdefault(i["rule"], []).append(i["id"] in flagged)
    if not rules:
        return float("nan")
    return sum(sum(v) / len(v) for v in rules.values()) / len(rules)


def pct(x):
    return "—" if x != x else f"{100 * x:.1f}%"


def recall_cell(items, flagged):
    """Recall over `items` as a table cell: `96.8% (2836/2930; 95.8%)`, the last
    figure the mean over rules (each rule weighing one)."""
    m = metrics(items, flagged)
    return f"{pct(m['recall'])} ({m['tp']}/{m['tp'] + m['fn']}; {pct(macro_recall(items, flagged))})"


def cmd_run(a):
    t0 = time.time()
    cases = [json.loads(x) for x in CASES.read_text().splitlines()]
    if TH_CASES.exists() and not a.no_trufflehog:
        cases += [json.loads(x) for x in TH_CASES.read_text().splitlines()]
    items = []
    for c in cases:
        name = c.get("file") or "config.txt"
        items.append({"id": c["id"], "label": c["label"], "source": c["source"], "rule": c["rule"],
                      "files": {name: c["text"].split("\n")}})
    if a.resample or not MANIFEST.exists():
        manifest = sample_manifest(a)
        MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")
    else:
        manifest = json.loads(MANIFEST.read_text())
    n = 0
    missing = 0
    for r in manifest["repos"]:
        gd = Path(r["gitDir"])
        for sha in r["commits"]:
            try:
                files = commit_added(gd, sha, a.max_lines)
            except (subprocess.CalledProcessError, FileNotFoundError):
                missing += 1
                continue
            if not files:
                continue
            items.append({"id": f"c{n:05d}", "label": 0, "source": "commits", "rule": f"{r['repo']}@{sha[:12]}",
                          "files": files})
            n += 1
    build_s = time.time() - t0
    work = Path(tempfile.mkdtemp(prefix="bench-guard-"))
    root = work / "items"
    root.mkdir()
    diff = write_items(items, root)
    lines = sum(len(v) for i in items for v in i["files"].values())
    results = {}
    runners = {
        "ironbees": (a.ironbees, lambda: run_ironbees(a.ironbees, diff, root, work)),
        "gitleaks": (a.gitleaks, lambda: run_gitleaks(a.gitleaks, root, work)),
        "detect-secrets": (a.detect_secrets, lambda: run_detect_secrets(a.detect_secrets, root, work)),
    }
    tools = []
    for name in a.tools.split(","):
        exe, fn = runners[name]
        if not (shutil.which(exe) or Path(exe).exists()):
            print(f"{name}: {exe} not found, skipped", file=sys.stderr)
            continue
        tools.append((name, fn))
    for name, fn in tools:
        t = time.time()
        flagged = fn()
        results[name] = {"seconds": round(time.time() - t, 2), "flagged": flagged}
    if not a.keep:
        shutil.rmtree(work)
    sources = ["gitleaks", "detect-secrets", "trufflehog", "commits"]
    groups = {
        "all": items,
        "gitleaks cases + commits": [i for i in items if i["source"] in ("gitleaks", "commits")],
        "detect-secrets cases + commits": [i for i in items if i["source"] in ("detect-secrets", "commits")],
        "trufflehog cases + commits": [i for i in items if i["source"] in ("trufflehog", "commits")],
    }
    # --split: gitleaks' cases by half (bench/guard/gitleaks-split.json), so
    # that rules tuned on and rules held out are scored apart.
    # trufflehog's detectors likewise (bench/guard/trufflehog-split.json).
    half = {}
    th_half = {}
    if a.split:
        sp = json.loads(Path(a.split).read_text())
        half = {r: "tuning" for r in sp["tuning"]} | {r: "held-out" for r in sp["heldOut"]}
        named = set(sp.get("namedBefore", []))
        for h in ("tuning", "held-out"):
            groups[f"gitleaks {h} half + commits"] = [
                i for i in items
                if i["source"] == "commits" or (i["source"] == "gitleaks" and half.get(i["rule"]) == h)
            ]
        if TH_SPLIT.exists() and any(i["source"] == "trufflehog" for i in items):
            tsp = json.loads(TH_SPLIT.read_text())
            th_half = {r: "tuning" for r in tsp["tuning"]} | {r: "held-out" for r in tsp["heldOut"]}
            for h in ("tuning", "held-out"):
                groups[f"trufflehog {h} half + commits"] = [
                    i for i in items
                    if i["source"] == "commits" or (i["source"] == "trufflehog" and th_half.get(i["rule"]) == h)
                ]

    def held_out(i):
        return (i["source"] == "gitleaks" and half.get(i["rule"]) == "held-out") or (
            i["source"] == "trufflehog" and th_half.get(i["rule"]) == "held-out")
    summary = {
        "corpus": {
            s: {"positives": sum(1 for i in items if i["source"] == s and i["label"] == 1),
                "negatives": sum(1 for i in items if i["source"] == s and i["label"] == 0)}
            for s in sources
        },
        "addedLines": lines,
        "commitsMissing": missing,
        "corpusSeconds": round(build_s, 2),
        "tools": {},
    }
    for name, res in results.items():
        flagged = res["flagged"]
        summary["tools"][name] = {
            "seconds": res["seconds"],
            **{g: metrics(v, flagged) for g, v in groups.items()},
            "bySource": {
                s: {
                    "recall": metrics([i for i in items if i["source"] == s], flagged)["recall"],
                    "falsePositiveRate": (
                        sum(1 for i in items if i["source"] == s and i["label"] == 0 and i["id"] in flagged)
                        / max(1, sum(1 for i in items if i["source"] == s and i["label"] == 0))
                    ),
                }
                for s in sources
            },
            # Each scanner rule (or detect-secrets plugin) weighs one, however
            # many cases it ships: the mean over rules of the recall of its cases.
            "macroRecallByRule": {
                s: macro_recall([i for i in items if i["source"] == s], flagged) for s in sources[:3]
            },
            # With --split, the held-out half's misses are counted, not shown:
            # looking at them would make them tuning data.
            "misses": [
                {"id": i["id"], "source": i["source"], "rule": i["rule"], "text": next(iter(i["files"].values()))[:4]}
                for i in items if i["label"] == 1 and i["id"] not in flagged and not held_out(i)
            ],
            "heldOutMisses": sum(
                1 for i in items if i["label"] == 1 and i["id"] not in flagged
                and i["source"] == "gitleaks" and half.get(i["rule"]) == "held-out"
            ),
            "heldOutMissesTrufflehog": sum(
                1 for i in items if i["label"] == 1 and i["id"] not in flagged
                and i["source"] == "trufflehog" and th_half.get(i["rule"]) == "held-out"
            ),
            # The held-out half's flagged negatives are counted, not shown, too.
            "falsePositives": [
                {"id": i["id"], "source": i["source"], "rule": i["rule"],
                 "text": [] if i["source"] == "commits" else next(iter(i["files"].values()))[:4]}
                for i in items if i["label"] == 0 and i["id"] in flagged and not held_out(i)
            ],
            "heldOutFalsePositives": sum(1 for i in items if i["label"] == 0 and i["id"] in flagged and held_out(i)),
        }
    print(f"corpus: {json.dumps(summary['corpus'])}; {lines} added lines; built in {build_s:.1f}s")
    print()
    print("| tool | group | precision | recall | F1 | TP | FP | FN | TN | time |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, t in summary["tools"].items():
        for g in groups:
            m = t[g]
            print(f"| {name} | {g} | {pct(m['precision'])} | {pct(m['recall'])} | {pct(m['f1'])} | "
                  f"{m['tp']} | {m['fp']} | {m['fn']} | {m['tn']} | {t['seconds']:.1f}s |")
    print()
    print("| tool | recall: gitleaks cases (per-rule mean) | recall: detect-secrets cases (per-plugin mean) "
          "| recall: trufflehog cases (per-detector mean) | flagged: scanners' fp cases | flagged: commits |")
    print("|---|---|---|---|---|---|")
    for name, t in summary["tools"].items():
        b = t["bySource"]
        fpc = sum(1 for i in items if i["source"] != "commits" and i["label"] == 0 and i["id"] in results[name]["flagged"])
        nfpc = sum(1 for i in items if i["source"] != "commits" and i["label"] == 0)
        cm = sum(1 for i in items if i["source"] == "commits" and i["id"] in results[name]["flagged"])
        ncm = sum(1 for i in items if i["source"] == "commits")
        mr = t["macroRecallByRule"]
        print(f"| {name} | {pct(b['gitleaks']['recall'])} ({pct(mr['gitleaks'])}) | "
              f"{pct(b['detect-secrets']['recall'])} ({pct(mr['detect-secrets'])}) | "
              f"{pct(b['trufflehog']['recall'])} ({pct(mr['trufflehog'])}) | "
              f"{fpc}/{nfpc} | {cm}/{ncm} |")
    if half:
        print()
        print("| tool | recall: gitleaks tuning half (per-rule mean) | recall: gitleaks held-out half (per-rule mean) "
              "| recall: held-out, rules not named before | recall: detect-secrets cases | flagged: commits |")
        print("|---|---|---|---|---|---|")
        for name in summary["tools"]:
            fl = results[name]["flagged"]
            cols = []
            for h in ("tuning", "held-out"):
                cols.append(recall_cell([i for i in items if i["source"] == "gitleaks" and half.get(i["rule"]) == h], fl))
            # The held-out rules no one named before (see the split file's
            # namedBefore): the blind part.
            cols.append(recall_cell([i for i in items if i["source"] == "gitleaks" and half.get(i["rule"]) == "held-out"
                                     and i["rule"] not in named], fl))
            ds = metrics([i for i in items if i["source"] == "detect-secrets"], fl)
            cm = sum(1 for i in items if i["source"] == "commits" and i["id"] in fl)
            ncm = sum(1 for i in items if i["source"] == "commits")
            print(f"| {name} | {cols[0]} | {cols[1]} | {cols[2]} | {pct(ds['recall'])} ({ds['tp']}/{ds['tp'] + ds['fn']}) "
                  f"| {cm}/{ncm} |")
    if th_half:
        print()
        print("| tool | trufflehog tuning half: recall (per-detector mean) | flagged negatives "
              "| trufflehog held-out half: recall (per-detector mean) | flagged negatives |")
        print("|---|---|---|---|---|")
        for name in summary["tools"]:
            fl = results[name]["flagged"]
            cols = []
            for h in ("tuning", "held-out"):
                its = [i for i in items if i["source"] == "trufflehog" and th_half.get(i["rule"]) == h]
                m = metrics(its, fl)
                cols.append(f"{recall_cell(its, fl)} | {m['fp']}/{m['fp'] + m['tn']}")
            print(f"| {name} | {cols[0]} | {cols[1]} |")
    if a.json_out:
        Path(a.json_out).write_text(json.dumps(summary, indent=1, default=str) + "\n")
        print(f"\nwrote {a.json_out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd")
    ex = sub.add_parser("extract", help="the scanners' test cases -> bench/guard/scanner-cases.jsonl")
    ex.add_argument("--gitleaks-src", required=True, help="a checkout of gitleaks/gitleaks")
    ex.add_argument("--gitleaks-commit", required=True)
    ex.add_argument("--ds-harvest", required=True, help="ds_harvest_plugin.py's output")
    ex.add_argument("--ds-commit", required=True)
    ex.add_argument("--seed", type=int, default=34)
    th = sub.add_parser("extract-trufflehog", help="trufflehog's detector pattern tests -> bench/guard/trufflehog-cases.jsonl")
    th.add_argument("--src", required=True, help="a checkout (or `git archive`) of trufflesecurity/trufflehog")
    th.add_argument("--commit", required=True)
    th.add_argument("--write-split", action="store_true",
                    help=f"also write {TH_SPLIT.relative_to(ROOT)} (detectors sorted, every other one held out)")
    th.add_argument("-v", "--verbose", action="store_true", help="list the rows not evaluated")
    for p in (ap, sub.add_parser("run", help="run the benchmark (default)")):
        p.add_argument("--ironbees", default=str(ROOT / "target" / "release" / "ironbees"))
        p.add_argument("--gitleaks", default="gitleaks")
        p.add_argument("--detect-secrets", default="detect-secrets")
        p.add_argument("--repos", nargs="*", default=["/work/replay-data/instances", "/work/replay-data/instances-py39", "/work/.mirror"],
                       help="folders of git clones (*/.git or */repo) to sample negatives from")
        p.add_argument("--repo-list", default="/work/locdev-data/all.jsonl",
                       help="JSONL with a `repo` field: the repositories under --repos to use (SWE-bench clones always)")
        p.add_argument("--commits", type=int, default=1200, help="commits to sample in all")
        p.add_argument("--max-lines", type=int, default=1500, help="added lines kept per commit")
        p.add_argument("--seed", type=int, default=34)
        p.add_argument("--resample", action="store_true", help="sample commits anew (rewrites the manifest)")
        p.add_argument("--keep", action="store_true", help="keep the scanned files")
        p.add_argument("--tools", default="ironbees,gitleaks,detect-secrets")
        p.add_argument("--json-out")
        p.add_argument("--no-trufflehog", action="store_true", help=f"leave {TH_CASES.relative_to(ROOT)} out")
        p.add_argument("--split", nargs="?", const=str(SPLIT), default=None,
                       help="also score gitleaks' cases by half (tuning / held out), from this list of rule ids "
                            f"(default {SPLIT.relative_to(ROOT)}), and trufflehog's by {TH_SPLIT.relative_to(ROOT)}; "
                            "the held-out halves' misses and flagged negatives are left out of --json-out")
    a = ap.parse_args()
    if a.cmd == "extract":
        cmd_extract(a)
    elif a.cmd == "extract-trufflehog":
        cmd_extract_trufflehog(a)
    else:
        cmd_run(a)


if __name__ == "__main__":
    main()
