#!/usr/bin/env python3
"""Superlinear paths in indexing, found with generated inputs.

For every (language, shape) — a long run of line comments, a long doc comment or
docstring, deep nesting, a huge literal, many sibling definitions, a long call
chain, ... — write one file of that shape at size n, 2n and 4n into an empty
project, index it cold (`ironbees index --rebuild --json`, the update's own
`duration_ms`, best of --runs) and print the times and the ratios t(2n)/t(n) and
t(4n)/t(2n). Linear work doubles (ratio ~2); quadratic work quadruples (~4). A
ratio is only meaningful when the times are well above the timer's noise, so n is
chosen per shape to take at least tens of milliseconds at 4n; `--scale` multiplies
every n.

    cargo build --release -p cli
    python3 scripts/bench_superlinear.py --bin target/release/ironbees [--only python] [--runs 3]

Exit status 1 when any ratio reaches --fail-ratio (default 3.0) with t(4n) at least
--min-ms: a superlinear path.
"""
import argparse, json, os, shutil, subprocess, sys, tempfile

EXT = {
    "python": "py", "rust": "rs", "javascript": "js", "typescript": "ts", "tsx": "tsx",
    "go": "go", "java": "java", "csharp": "cs", "c": "c", "cpp": "cpp",
}
LINE_COMMENT = {l: "#" if l == "python" else "//" for l in EXT}


def fn(lang, name, body="return 1;"):
    """A small function definition in `lang`."""
    return {
        "python": f"def {name}():\n    return 1\n",
        "rust": f"fn {name}() -> i32 {{ 1 }}\n",
        "javascript": f"function {name}() {{ {body} }}\n",
        "typescript": f"function {name}(): number {{ {body} }}\n",
        "tsx": f"function {name}(): number {{ {body} }}\n",
        "go": f"func {name}() int {{ return 1 }}\n",
        "java": f"class C_{name} {{ int {name}() {{ {body} }} }}\n",
        "csharp": f"class C_{name} {{ int {name}() {{ {body} }} }}\n",
        "c": f"int {name}(void) {{ {body} }}\n",
        "cpp": f"int {name}() {{ {body} }}\n",
    }[lang]


def header(lang):
    return "package main\n\n" if lang == "go" else ""


def wrap_body(lang, stmts):
    """`stmts` (lines) as the body of one function."""
    inner = "".join("    " + s + "\n" for s in stmts)
    if lang == "python":
        return "def f():\n" + (inner or "    pass\n")
    if lang == "rust":
        return "fn f() {\n" + inner + "}\n"
    if lang == "go":
        return "func f() {\n" + inner + "}\n"
    if lang in ("java", "csharp"):
        return "class C {\n  void f() {\n" + inner + "  }\n}\n"
    if lang in ("javascript", "typescript", "tsx"):
        return "function f() {\n" + inner + "}\n"
    return "void f() {\n" + inner + "}\n"


def local(lang, name, expr):
    if lang == "python":
        return f"{name} = {expr}"
    if lang == "rust":
        return f"let {name} = {expr};"
    if lang == "go":
        return f"{name} := {expr}"
    if lang in ("java", "csharp", "c", "cpp"):
        return f"int {name} = {expr};" if not expr.startswith(("new", "{", "\"")) else f"var {name} = {expr};"
    return f"const {name} = {expr};"


# Each shape: (default n, generator(lang, n) -> source or None when the shape does
# not apply to the language).
def comment_run(lang, n):
    c = LINE_COMMENT[lang]
    return header(lang) + fn(lang, "f") + f"{c} hello world\n" * n


def comment_run_alternating(lang, n):
    """Comment lines at two indentations in turn: no run at one indentation."""
    c = LINE_COMMENT[lang]
    return header(lang) + fn(lang, "f") + f"{c} hello world\n    {c} hello world\n" * (n // 2)


def comment_run_in_body(lang, n):
    c = LINE_COMMENT[lang]
    return header(lang) + wrap_body(lang, [f"{c} hello world"] * n)


def comment_run_between_defs(lang, n):
    c = LINE_COMMENT[lang]
    out = [header(lang)]
    for i in range(n // 100):
        out.append(f"{c} hello world\n" * 100)
        out.append(fn(lang, f"f{i}"))
    return "".join(out)


def doc_block(lang, n):
    """A long doc comment or docstring directly above (Python: inside) a definition."""
    if lang == "python":
        return "def f():\n    \"\"\"Summary.\n" + "    more text here\n" * n + "    \"\"\"\n    return 1\n"
    if lang == "rust":
        return "/// Summary.\n" + "/// more text here\n" * n + "fn f() {}\n"
    if lang == "csharp":
        return "class C {\n/// <summary>\n" + "/// more text here\n" * n + "/// </summary>\nvoid F() {}\n}\n"
    return header(lang) + "/**\n * Summary.\n" + " * more text here\n" * n + " */\n" + fn(lang, "f")


def block_comment(lang, n):
    if lang == "python":
        return None
    return header(lang) + fn(lang, "g") + "/*\n" + "more text here\n" * n + "*/\n" + fn(lang, "f")


def deep_nesting(lang, n):
    if lang == "python":
        lines = []
        for i in range(n):
            lines.append("    " * (i + 1) + f"if x{i}:")
        lines.append("    " * (n + 1) + "pass")
        return "def f():\n" + "\n".join(lines) + "\n"
    open_ = {"go": "if x {", "rust": "if x {"}.get(lang, "if (x) {")
    return header(lang) + wrap_body(lang, [open_] * n + ["}"] * n)


def nested_functions(lang, n):
    """Definitions nested in definitions (closures), n deep."""
    if lang == "python":
        return "".join("    " * i + f"def f{i}():\n" for i in range(n)) + "    " * n + "pass\n"
    if lang in ("javascript", "typescript", "tsx"):
        return "".join(f"function f{i}() {{\n" for i in range(n)) + "}\n" * n
    if lang == "rust":
        return "".join(f"fn f{i}() {{\n" for i in range(n)) + "}\n" * n
    if lang in ("java", "csharp"):
        return "".join(f"class C{i} {{\n" for i in range(n)) + "}\n" * n
    if lang == "cpp":
        return "".join(f"namespace n{i} {{\n" for i in range(n)) + "}\n" * n
    return None


def huge_list_literal(lang, n):
    items = ", ".join(str(i) for i in range(n))
    expr = {
        "python": f"[{items}]",
        "rust": f"[{items}]",
        "go": f"[]int{{{items}}}",
        "java": f"new int[]{{{items}}}",
        "csharp": f"new int[]{{{items}}}",
        "c": f"{{{items}}}",
        "cpp": f"{{{items}}}",
    }.get(lang, f"[{items}]")
    if lang in ("c", "cpp"):
        return f"int xs[] = {expr};\n" + fn(lang, "f")
    return header(lang) + wrap_body(lang, [local(lang, "xs", expr)])


def huge_string(lang, n):
    s = "x" * n
    return header(lang) + wrap_body(lang, [local(lang, "s", f'"{s}"')])


def many_functions(lang, n):
    return header(lang) + "".join(fn(lang, f"f{i}") for i in range(n))


def many_methods(lang, n):
    if lang == "python":
        return "class C:\n" + "".join(f"    def m{i}(self):\n        return self.m{i + 1}()\n" for i in range(n))
    if lang == "rust":
        return "struct C;\nimpl C {\n" + "".join(f"    fn m{i}(&self) {{ self.m{i + 1}() }}\n" for i in range(n)) + "}\n"
    if lang == "go":
        return header(lang) + "type C struct{}\n" + "".join(f"func (c C) M{i}() {{ c.M{i + 1}() }}\n" for i in range(n))
    if lang == "c":
        return None
    body = "".join(f"  void m{i}() {{ this->m{i + 1}(); }}\n" if lang == "cpp" else f"  m{i}() {{ this.m{i + 1}(); }}\n" for i in range(n))
    if lang in ("java", "csharp"):
        body = "".join(f"  void m{i}() {{ this.m{i + 1}(); }}\n" for i in range(n))
    return "class C {\n" + body + "};\n" if lang == "cpp" else "class C {\n" + body + "}\n"


def many_statements(lang, n):
    return header(lang) + wrap_body(lang, [local(lang, f"v{i}", "1") for i in range(n)])


def many_calls(lang, n):
    call = {"rust": "g();", "go": "g()", "python": "g()"}.get(lang, "g();")
    return header(lang) + fn(lang, "g") + wrap_body(lang, [call] * n)


def long_call_chain(lang, n):
    """`x.a().a().a()...`: each call's receiver is the whole chain before it."""
    chain = "x" + ".a()" * n
    stmt = {"python": chain, "go": chain}.get(lang, chain + ";")
    return header(lang) + wrap_body(lang, [stmt])


def long_binary_expression(lang, n):
    expr = " + ".join(["1"] * n)
    return header(lang) + wrap_body(lang, [local(lang, "v", expr)])


def many_imports(lang, n):
    if lang == "python":
        return "".join(f"import mod{i}\n" for i in range(n)) + fn(lang, "f")
    if lang in ("javascript", "typescript", "tsx"):
        return "".join(f"import {{ a{i} }} from './m{i}';\n" for i in range(n)) + fn(lang, "f")
    if lang == "rust":
        return "".join(f"use m{i}::a;\n" for i in range(n)) + fn(lang, "f")
    if lang == "go":
        return "package main\n\nimport (\n" + "".join(f'\t"example.com/m{i}"\n' for i in range(n)) + ")\n"
    if lang == "java":
        return "".join(f"import a.b{i}.C;\n" for i in range(n)) + fn(lang, "f")
    if lang == "csharp":
        return "".join(f"using A.B{i};\n" for i in range(n)) + fn(lang, "f")
    return "".join(f'#include "h{i}.h"\n' for i in range(n)) + fn(lang, "f")


def macro_lines(lang, n):
    """C/C++: macro lines where members or declarations go, masked after a scan of
    the tokens: PYBIND11_TYPE_CASTER-like members in a class (C: attribute lines
    before functions)."""
    if lang == "cpp":
        return "class C {\n" + "".join(
            f"    MEMBERS(T{i}, const_name(\"x\") + y);\n    int m{i}() {{ return {i}; }}\n" for i in range(n // 2)
        ) + "};\n"
    if lang == "c":
        return "".join(f"WARNING_PUSH\nint f{i}(void) {{ return {i}; }}\n" for i in range(n // 2))
    return None


def split_conditionals(lang, n):
    """C/C++: `#if` .. `#else` .. `#endif` inside parameter lists, read as the last branch."""
    if lang not in ("c", "cpp"):
        return None
    return "".join(f"int f{i}(int a,\n#ifdef X\n    int b\n#else\n    long b\n#endif\n) {{ return a; }}\n" for i in range(n // 7))


def many_locals_used(lang, n):
    """n variables, each then used as a receiver: typing receivers lazily must stay linear."""
    stmts = [local(lang, f"v{i}", "make()") for i in range(n)]
    stmts += [(f"v{i}.run()" + ("" if lang in ("python", "go") else ";")) for i in range(n)]
    return header(lang) + wrap_body(lang, stmts)


SHAPES = {
    "comment_run": (8000, comment_run),
    "comment_run_alternating": (2000, comment_run_alternating),
    "comment_run_in_body": (8000, comment_run_in_body),
    "comment_run_between_defs": (8000, comment_run_between_defs),
    "doc_block": (8000, doc_block),
    "block_comment": (20000, block_comment),
    "deep_nesting": (500, deep_nesting),
    "nested_functions": (300, nested_functions),
    "huge_list_literal": (20000, huge_list_literal),
    "huge_string": (400000, huge_string),
    "many_functions": (3000, many_functions),
    "many_methods": (2000, many_methods),
    "many_statements": (5000, many_statements),
    "many_calls": (5000, many_calls),
    "long_call_chain": (1000, long_call_chain),
    "long_binary_expression": (3000, long_binary_expression),
    "many_imports": (3000, many_imports),
    "many_locals_used": (2000, many_locals_used),
    "macro_lines": (5000, macro_lines),
    "split_conditionals": (20000, split_conditionals),
}


def index_ms(binary, root, runs, timeout):
    best = None
    for _ in range(runs):
        try:
            p = subprocess.run([binary, "-C", root, "index", "--rebuild", "--json"],
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        if p.returncode != 0:
            sys.exit(f"index failed in {root}: {p.stderr[-2000:]}")
        ms = json.loads(p.stdout)["update"]["duration_ms"]
        best = ms if best is None else min(best, ms)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/ironbees")
    ap.add_argument("--runs", type=int, default=3, help="best of this many cold indexes per size")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every shape's n")
    ap.add_argument("--only", action="append", default=[], help="languages or shapes to run")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per index; a timeout is reported as such")
    ap.add_argument("--fail-ratio", type=float, default=3.0)
    ap.add_argument("--min-ms", type=float, default=50.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    work = tempfile.mkdtemp(prefix="ironbees-superlinear-")
    rows, bad = [], []
    try:
        for shape, (n0, gen) in SHAPES.items():
            for lang, ext in EXT.items():
                if args.only and lang not in args.only and shape not in args.only:
                    continue
                n = max(1, int(n0 * args.scale))
                times = []
                for k in (1, 2, 4):
                    src = gen(lang, n * k)
                    if src is None:
                        break
                    root = os.path.join(work, f"{lang}-{shape}-{k}")
                    os.makedirs(os.path.join(root, ".ironbees"), exist_ok=True)
                    with open(os.path.join(root, f"gen.{ext}"), "w") as f:
                        f.write(src)
                    times.append(index_ms(binary, root, args.runs, args.timeout))
                    shutil.rmtree(root, ignore_errors=True)
                    if times[-1] is None:
                        break
                if not times:
                    continue
                ratio = lambda a, b: (b / a if a and b else None)
                r1 = ratio(times[0], times[1]) if len(times) > 1 else None
                r2 = ratio(times[1], times[2]) if len(times) > 2 else None
                row = {"language": lang, "shape": shape, "n": n, "ms": times, "ratio_2n": r1, "ratio_4n": r2}
                rows.append(row)
                timed_out = None in times
                if timed_out or (r2 is not None and r2 >= args.fail_ratio and times[2] >= args.min_ms):
                    bad.append(row)
                if not args.json:
                    fmt = lambda t: "timeout" if t is None else f"{t:.0f}"
                    fr = lambda r: "" if r is None else f"{r:.2f}"
                    flag = " ← superlinear" if row in bad else ""
                    print(f"| {lang} | {shape} | {n} | {' | '.join(fmt(t) for t in times + [0] * (3 - len(times)))} | {fr(r1)} | {fr(r2)} |{flag}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps({"rows": rows, "superlinear": bad}, indent=2))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
