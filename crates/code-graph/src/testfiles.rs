//! Which files are tests, by each language's own conventions, and which module a
//! test file is named after.
//!
//! Conventions (the label says which one matched):
//!
//! - Python (pytest, unittest): `test_*.py`, `*_test.py`, files under `tests/` or
//!   `test/`; `conftest.py` is test support, not a test to run.
//! - Go: `*_test.go`.
//! - JavaScript/TypeScript (jest, vitest, mocha): `*.test.*`, `*.spec.*`, files under
//!   `__tests__/`, `test/` or `tests/`.
//! - Rust: files under a crate's `tests/` directory (integration tests), `tests.rs`
//!   and `*_tests.rs` modules, and source files with an inline `mod tests` (the file
//!   is source *and* tests).
//! - Java (JUnit, Maven/Gradle layout): `*Test.java`, `*Tests.java`, `*IT.java`,
//!   `Test*.java`, anything under `src/test/`.
//! - C# (xUnit, NUnit, MSTest): `*Tests.cs`, `*Test.cs`, anything in a `*.Tests` /
//!   `*.Test` / `*.UnitTests` / `*.IntegrationTests` project directory.
//! - C/C++ (gtest, ctest): `test_*.c*`, `*_test.c*`, `*_unittest.c*`, `*_tests.c*`,
//!   files under `test/` or `tests/`.

use serde::Serialize;

use code_index::{FileId, Language, Project};

/// How a file holds tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TestKind {
    /// The whole file is tests.
    File,
    /// A source file with tests inside (a Rust `#[cfg(test)] mod tests`).
    Inline,
    /// Test support (fixtures, `conftest.py`): affects tests, is not one.
    Support,
}

/// Whether a file holds tests, how, and by which convention.
pub fn test_convention(project: &Project, file: FileId) -> Option<(TestKind, &'static str)> {
    let file = project.file(file);
    if let Some(c) = by_path(&file.path, file.language) {
        return Some(c);
    }
    if file.language == Language::Rust && file.defs.iter().any(|d| is_test_module(project, d)) {
        return Some((TestKind::Inline, "rust inline `mod tests`"));
    }
    None
}

/// A Rust `mod tests { .. }` (or `mod test`) with its body in the file: test code
/// inside a source file.
pub(crate) fn is_test_module(project: &Project, def: &code_index::Def) -> bool {
    def.kind == protocol::SymbolKind::Module
        && def.body.is_some()
        && matches!(project.names.name(def.name), "tests" | "test")
}

/// The path-only part of [`test_convention`].
pub fn by_path(path: &str, language: Language) -> Option<(TestKind, &'static str)> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let dirs: Vec<&str> = path.split('/').collect();
    let dirs = &dirs[..dirs.len() - 1];
    let in_dir = |names: &[&str]| dirs.iter().any(|d| names.contains(d));
    let stem = name.split('.').next().unwrap_or(name);
    use TestKind::{File, Support};
    let hit = match language {
        Language::Python => {
            if name == "conftest.py" {
                Some((Support, "pytest conftest.py"))
            } else if name.starts_with("test_") {
                Some((File, "pytest test_*.py"))
            } else if name.ends_with("_test.py") {
                Some((File, "pytest *_test.py"))
            } else if in_dir(&["tests", "test"]) {
                Some((File, "python tests/ directory"))
            } else {
                None
            }
        }
        Language::Go => name.ends_with("_test.go").then_some((File, "go *_test.go")),
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            if name.contains(".test.") {
                Some((File, "jest/vitest *.test.*"))
            } else if name.contains(".spec.") {
                Some((File, "jest/vitest *.spec.*"))
            } else if in_dir(&["__tests__"]) {
                Some((File, "jest __tests__/"))
            } else if in_dir(&["test", "tests"]) {
                Some((File, "js test/ directory"))
            } else {
                None
            }
        }
        Language::Rust => {
            if in_dir(&["tests"]) {
                Some((File, "cargo tests/ (integration)"))
            } else if name == "tests.rs" || name.ends_with("_tests.rs") {
                Some((File, "rust test module"))
            } else {
                None
            }
        }
        Language::Java => {
            if path.contains("src/test/") {
                Some((File, "junit src/test/"))
            } else if stem.ends_with("Test") || stem.ends_with("Tests") || stem.ends_with("IT") {
                Some((File, "junit *Test.java"))
            } else if stem
                .strip_prefix("Test")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_uppercase()))
            {
                Some((File, "junit Test*.java"))
            } else {
                None
            }
        }
        Language::CSharp => {
            // `Calc.Tests/`, and also a bare `UnitTests/` or `IntegrationTests/`
            // (AutoMapper's `src/UnitTests/`).
            let project_dir = dirs.iter().any(|d| {
                [".Tests", ".Test", "UnitTests", "IntegrationTests", ".Specs"]
                    .iter()
                    .any(|s| d.ends_with(s))
            });
            if stem.ends_with("Tests") || stem.ends_with("Test") {
                Some((File, "xunit/nunit *Tests.cs"))
            } else if project_dir {
                Some((File, "c# *.Tests project"))
            } else {
                None
            }
        }
        Language::C | Language::Cpp => {
            if stem.starts_with("test_")
                || stem.ends_with("_test")
                || stem.ends_with("_unittest")
                || stem.ends_with("_tests")
            {
                Some((File, "c/c++ *_test.c*"))
            } else if in_dir(&["test", "tests"]) {
                Some((File, "c/c++ test/ directory"))
            } else {
                None
            }
        }
    };
    // Anything else the rule every language shares calls a test.
    hit.or_else(|| general_rule(path).then_some((File, "test path")))
}

/// Whether a file is tests or test support by its path alone: its language's
/// conventions ([`by_path`], the language told by the extension), else the rule
/// every language shares (test directories, `test_*`, `*_test.*`, `*.spec.*`,
/// ...). The one yes/no notion of a test file: ranking (code-graph's symbol
/// prior, search, localization), the report's module map and the pillars use
/// it. [`test_convention`] adds what needs the file's definitions (Rust's inline
/// `mod tests`) and says which convention matched.
pub fn is_test_path(path: &str) -> bool {
    match Language::from_path(std::path::Path::new(path)) {
        Some(language) => by_path(path, language).is_some(),
        None => general_rule(path),
    }
}

/// The test-file rule shared by every language, and the only one for files of no
/// language we parse.
fn general_rule(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let dirs: Vec<&str> = lower.split('/').collect();
    let in_test_dir = dirs[..dirs.len().saturating_sub(1)].iter().any(|d| {
        matches!(
            *d,
            "test"
                | "tests"
                | "testing"
                | "__tests__"
                | "spec"
                | "specs"
                | "testdata"
                | "test_data"
                | "e2e"
        )
    });
    in_test_dir
        || name.starts_with("test_")
        || name == "conftest.py"
        || name.ends_with("_test.py")
        || name.ends_with("_test.go")
        || name.ends_with("_tests.rs")
        || [".test.", ".spec.", "test.java", "tests.java", "tests.cs", "test.cs"]
            .iter()
            .any(|s| name.contains(s))
}

/// Third-party or generated code kept in the tree: vendored directories and
/// minified bundles. Not the project's own design, so maps, hotspots and reports
/// leave it out, and `localize` ranks it low (a fix goes upstream, not into the
/// copy).
pub fn is_vendored(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let mut parts = lower.rsplit('/');
    let name = parts.next().unwrap_or(&lower);
    name.contains(".min.")
        || name.ends_with(".bundle.js")
        || parts.any(|d| {
            matches!(
                d,
                "vendor"
                    | "vendored"
                    | "_vendor"
                    | "third_party"
                    | "third-party"
                    | "thirdparty"
                    | "3rdparty"
                    | "node_modules"
                    | "extern"
                    | "externals"
                    | "external"
                    | "cextern"
            )
        })
}

/// [`is_vendored`] for every file of the project, and also the files of Python
/// packages copied into another package: a package inside a package whose
/// `__init__.py` declares a `__version__` of its own while a package around it
/// has one too (`requests/packages/urllib3/` in `requests/`). A subpackage of
/// the project shares its version; a copy of another project keeps the one it
/// was released with, under whatever directory name (`packages/`) it was put. A
/// release inside packages with no version is not a copy: the distributions of
/// a namespace package (`azure/storage/blob/` in `azure/`, whose `__init__.py`
/// only extends its path) are the project's own. `read` gives a file's bytes;
/// only nested `__init__.py` files, and those around the ones with a version,
/// are read.
pub fn vendored_files(project: &Project, read: impl Fn(&str) -> Option<Vec<u8>>) -> Vec<bool> {
    let mut out: Vec<bool> = project.files.iter().map(|f| is_vendored(&f.path)).collect();
    let text = |path: &str| read(path).map(|b| String::from_utf8_lossy(&b).into_owned());
    let copies: Vec<&str> = project
        .files
        .iter()
        .filter_map(|f| {
            let dir = f.path.strip_suffix("__init__.py")?;
            let mut parent = dir.strip_suffix('/')?.rsplit_once('/')?.0;
            project.file_id(&format!("{parent}/__init__.py"))?;
            if !declares_version(&text(&f.path)?) {
                return None;
            }
            // The packages around it, innermost first, while they are packages.
            loop {
                let init = format!("{parent}/__init__.py");
                project.file_id(&init)?;
                if text(&init).is_some_and(|t| binds_version(&t)) {
                    return Some(dir);
                }
                parent = parent.rsplit_once('/')?.0;
            }
        })
        .collect();
    for (i, f) in project.files.iter().enumerate() {
        if copies.iter().any(|dir| f.path.starts_with(dir)) {
            out[i] = true;
        }
    }
    out
}

/// Whether a module assigns `__version__` at its top level: a release of its own.
fn declares_version(text: &str) -> bool {
    text.lines().any(assigns_version)
}

/// Whether a module has a `__version__` in any way: assigned, imported
/// (`from sympy.release import __version__`, `from .version import version as
/// __version__`), in a `try` or not. Enough to tell a project's package, whose
/// version may come from elsewhere, from a namespace package, which has none.
fn binds_version(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        assigns_version(l)
            || ((l.starts_with("from ") || l.starts_with("import "))
                && l.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|w| w == "__version__"))
    })
}

fn assigns_version(line: &str) -> bool {
    line.strip_prefix("__version__").is_some_and(|rest| rest.trim_start().starts_with(['=', ':']))
}

/// Whether a file's opening lines say a tool wrote it: ANTLR's and PLY's parser
/// tables, `// Code generated … DO NOT EDIT.`, `@generated`. A fix goes into the
/// generator or its grammar, not into the output, and the output's size and
/// vocabulary (every rule of a grammar, every name of an API) make it match
/// issues it has nothing to do with. Only the first ten lines count: a module
/// that *mentions* generated files further down is not one.
pub fn is_generated(text: &str) -> bool {
    const MARKERS: [&str; 4] = ["do not edit", "don't edit", "never edit", "@generated"];
    // "automatically generated" must be said of this file, not of files it
    // includes ("This module includes files automatically generated from ply").
    const SAID_OF: [&str; 2] = ["automatically generated", "auto-generated"];
    const SUBJECTS: [&str; 4] = ["this file", "this code", "this module was", "this module is"];
    text.lines().take(10).any(|line| {
        let lower = line.to_ascii_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
        has(&MARKERS) || (has(&SAID_OF) && has(&SUBJECTS))
    })
}

/// The module a test file is named after, normalized (lowercase, no `_`/`-`):
/// `tests/test_cart.py` → `cart`, `cart_test.go` → `cart`, `Cart.spec.ts` → `cart`,
/// `CartTests.cs` → `cart`, `tests/cart.rs` → `cart`. None when the name says
/// nothing (`tests/helpers.py` → `helpers` still counts: it may test helpers).
pub fn test_subject(path: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name == "tests.rs" {
        // `src/graph/tests.rs` is `graph`'s `mod tests`; `crates/git/src/tests.rs`
        // is the `git` crate root's.
        let mut dirs = path.rsplit('/').skip(1);
        let dir = dirs.next()?;
        return Some(normalize(if dir == "src" { dirs.next().unwrap_or(dir) } else { dir }));
    }
    let mut stem = name.split('.').next().unwrap_or(name).to_owned();
    for prefix in ["test_", "tests_", "Test", "test"] {
        if let Some(rest) = stem.strip_prefix(prefix).filter(|r| !r.is_empty()) {
            // `Test` only as a word: `TestCart`, not `Testament`.
            if prefix == "Test" && !rest.starts_with(|c: char| c.is_ascii_uppercase()) {
                continue;
            }
            stem = rest.to_owned();
            break;
        }
    }
    for suffix in ["_unittest", "_tests", "_test", "_spec", "Tests", "Test", "IT", "Spec"] {
        if let Some(rest) = stem.strip_suffix(suffix).filter(|r| !r.is_empty()) {
            stem = rest.to_owned();
            break;
        }
    }
    let norm = normalize(&stem);
    (!norm.is_empty() && !matches!(norm.as_str(), "mod" | "index" | "init" | "main" | "lib"))
        .then_some(norm)
}

/// The name a source file's tests would carry: its stem, or its directory's for
/// `__init__.py`, `mod.rs`, `index.ts`, `lib.rs` — the package's for a root under
/// `src/` (`crates/git/src/lib.rs` → `git`, not `src`, which every crate shares).
pub fn module_stem(path: &str) -> String {
    let mut parts: Vec<&str> = path.split('/').collect();
    let name = parts.pop().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    if matches!(stem, "__init__" | "mod" | "index" | "lib" | "main")
        && let Some(mut dir) = parts.pop()
    {
        if dir == "src"
            && let Some(package) = parts.pop()
        {
            dir = package;
        }
        return normalize(dir);
    }
    normalize(stem)
}

/// A name as test names are compared: lowercase, without `_` and `-`
/// (`test_shopping_cart` names `ShoppingCart`, `shopping-cart.spec.ts` names
/// `shoppingCart.ts`).
pub(crate) fn normalize(s: &str) -> String {
    s.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_paths() {
        // (path, is_test_path). Before, `is_test_path` (ranking, localization,
        // the pillars) knew only the shared rule and `test_convention` (impact,
        // the report, symbol ranks) also each language's: the rows marked
        // `language` were tests to the second only.
        let table = [
            ("tests/test_app.py", true),
            ("pkg/test_app.py", true),
            ("pkg/app_test.py", true),
            ("conftest.py", true),
            ("src/app.py", false),
            ("src/contest.py", false),
            ("src/latest.py", false),
            ("pkg/server_test.go", true),
            ("pkg/server.go", false),
            ("web/button.test.tsx", true),
            ("web/button.spec.js", true),
            ("web/__tests__/button.js", true),
            ("spec/models/user_spec.rb", true),
            ("crates/a/tests/suite/edit.rs", true),
            ("crates/a/src/edit_tests.rs", true),
            ("crates/a/src/extract/tests.rs", true), // language
            ("crates/a/src/lib.rs", false),
            ("src/main/java/a/CartTest.java", true),
            ("src/test/java/a/Cart.java", true),
            ("src/main/java/a/CartIT.java", true),   // language
            ("src/main/java/a/TestCart.java", true), // language
            ("src/main/java/a/Testament.java", false),
            ("src/Calculator.Tests.cs", true),
            ("Calc.Tests/Helpers.cs", true),           // language
            ("src/UnitTests/Bug/EnumBug.cs", true),    // language
            ("src/Calc.IntegrationTests/Db.cs", true), // language
            ("Calc/Helpers.cs", false),
            ("db/db_test.cc", true),          // language
            ("util/cache_unittest.cc", true), // language
            ("util/cache.cc", false),
            ("testdata/input.txt", true),
            ("docs/guide.md", false),
        ];
        for (path, want) in table {
            assert_eq!(is_test_path(path), want, "{path}");
        }
    }

    #[test]
    fn generated_headers() {
        let cases: &[(&str, bool)] = &[
            ("# *** GENERATED BY `setup.py antlr`, DO NOT EDIT BY HAND ***\nimport sys\n", true),
            ("# This file was automatically generated from ply. To re-generate this file,\n", true),
            (
                "\"\"\"\nThis code is automatically generated. Never edit it manually.\n\"\"\"\n",
                true,
            ),
            ("// Code generated by protoc-gen-go. DO NOT EDIT.\npackage pb\n", true),
            ("// This file is @generated by prost-build.\n", true),
            // Mentions generated files, is not one.
            (
                "# This module includes files automatically generated from ply (these end in\n",
                false,
            ),
            ("\"\"\"Parse the units generated by the lexer.\"\"\"\n", false),
            ("def f():\n    pass\n", false),
            // Past the header: a docstring about generated code further down.
            (
                &format!("{}# do not edit the output of this function\n", "x = 1\n".repeat(12)),
                false,
            ),
        ];
        for (text, want) in cases {
            assert_eq!(is_generated(text), *want, "{text}");
        }
    }

    #[test]
    fn conventions_table() {
        use Language::*;
        let cases: &[(&str, Language, Option<&str>)] = &[
            ("tests/test_cart.py", Python, Some("pytest test_*.py")),
            ("pkg/cart_test.py", Python, Some("pytest *_test.py")),
            ("tests/helpers.py", Python, Some("python tests/ directory")),
            ("conftest.py", Python, Some("pytest conftest.py")),
            ("shop/cart.py", Python, None),
            ("shop/contest.py", Python, None),
            ("pkg/cart_test.go", Go, Some("go *_test.go")),
            ("pkg/testing.go", Go, None),
            ("src/cart.test.ts", TypeScript, Some("jest/vitest *.test.*")),
            ("src/cart.spec.tsx", Tsx, Some("jest/vitest *.spec.*")),
            ("src/__tests__/cart.js", JavaScript, Some("jest __tests__/")),
            ("src/latest.js", JavaScript, None),
            ("e2e/override-globals/index.js", JavaScript, Some("test path")),
            ("crates/x/tests/suite/edit.rs", Rust, Some("cargo tests/ (integration)")),
            ("crates/x/src/graph/tests.rs", Rust, Some("rust test module")),
            ("crates/x/src/graph.rs", Rust, None),
            ("src/test/java/a/CartTest.java", Java, Some("junit src/test/")),
            ("src/main/java/a/CartTests.java", Java, Some("junit *Test.java")),
            ("src/main/java/a/Testament.java", Java, None),
            ("Src/Newtonsoft.Json.Tests/Foo.cs", CSharp, Some("c# *.Tests project")),
            ("Src/App/CartTests.cs", CSharp, Some("xunit/nunit *Tests.cs")),
            ("Src/App/Cart.cs", CSharp, None),
            ("src/util_unittest.cc", Cpp, Some("c/c++ *_test.c*")),
            ("tests/clar/main.c", C, Some("c/c++ test/ directory")),
            ("src/attest.c", C, None),
        ];
        for (path, lang, want) in cases {
            assert_eq!(by_path(path, *lang).map(|c| c.1), *want, "{path}");
        }
    }

    #[test]
    fn a_version_is_bound_in_any_way() {
        let cases: &[(&str, bool)] = &[
            ("from sympy.release import __version__\n", true),
            (
                "try:\n    from .version import version as __version__\nexcept ImportError:\n    __version__ = ''\n",
                true,
            ),
            ("    __version__ = _version('xarray')\n", true),
            ("from ._version import VERSION, __version__\n", true),
            // a namespace package's `__init__.py`
            ("__path__ = __import__('pkgutil').extend_path(__path__, __name__)\n", false),
            ("from ._version import __version_info__\n", false),
            ("print(pkg.__version__)\n", false),
        ];
        for (text, expected) in cases {
            assert_eq!(binds_version(text), *expected, "{text}");
        }
    }

    #[test]
    fn a_version_is_declared_at_the_top_level() {
        let cases: &[(&str, bool)] = &[
            ("__version__ = '1.10.4'\n", true),
            ("\"\"\"urllib3\"\"\"\n__author__ = 'A. P.'\n__version__ = \"dev\"\n", true),
            ("__version__: str = \"2.0\"\n", true),
            ("__version__=VERSION\n", true),
            // a re-export or a nested assignment is not a release of its own
            ("from ._version import version as __version__\n", false),
            ("if True:\n    __version__ = '1'\n", false),
            ("__version_info__ = (1, 2)\n", false),
            ("print(__version__)\n", false),
        ];
        for (text, expected) in cases {
            assert_eq!(declares_version(text), *expected, "{text}");
        }
    }

    #[test]
    fn vendored() {
        for p in [
            "static/js/vendor/jquery/jquery.js",
            "a/b.min.js",
            "third_party/x.c",
            "node_modules/a/i.js",
            "cextern/cfitsio/lib/fitscore.c",
            "astropy/extern/ply/lex.py",
            "deps/3rdparty/zlib/inflate.c",
            "seaborn/external/husl.py",
        ] {
            assert!(is_vendored(p), "{p}");
        }
        // A directory's name, not a file's: `extern.py` is the project's own.
        for p in ["src/vendors.py", "src/minify.js", "app/external_api.py", "pkg/extern.py"] {
            assert!(!is_vendored(p), "{p}");
        }
    }

    #[test]
    fn subjects_and_stems() {
        let cases: &[(&str, Option<&str>)] = &[
            ("tests/test_cart.py", Some("cart")),
            ("pkg/shopping_cart_test.go", Some("shoppingcart")),
            ("src/Cart.spec.ts", Some("cart")),
            ("Src/App.Tests/CartTests.cs", Some("cart")),
            ("src/test/java/TestCart.java", Some("cart")),
            ("src/test/java/Testament.java", Some("testament")),
            ("crates/x/tests/cart.rs", Some("cart")),
            ("tests/test_init.py", None),
            ("src/graph/tests.rs", Some("graph")),
            ("crates/git/src/tests.rs", Some("git")),
            ("src/tests.rs", Some("src")),
        ];
        for (path, want) in cases {
            assert_eq!(test_subject(path).as_deref(), *want, "{path}");
        }
        assert_eq!(module_stem("shop/shopping_cart.py"), "shoppingcart");
        assert_eq!(module_stem("shop/__init__.py"), "shop");
        assert_eq!(module_stem("src/graph/mod.rs"), "graph");
        assert_eq!(module_stem("src/Cart.cs"), "cart");
        // A crate or package root is named after its package, not the `src/`
        // directory every crate has.
        assert_eq!(module_stem("crates/protocol/src/lib.rs"), "protocol");
        assert_eq!(module_stem("packages/web-ui/src/index.ts"), "webui");
        assert_eq!(module_stem("src/main.rs"), "src");
    }
}
