//! What a user means by a target: a file, a directory, a line, or a symbol.
//!
//! Tried in this order, first hit wins:
//!
//! 1. `path:line` (or `path:line:col`) → the innermost definition at that line, or
//!    the file when the line is outside every definition;
//! 2. `path::name` or `path:name` → definitions of that file named so;
//! 3. a path (relative to the current directory, then to the root) → the file, or
//!    every file under a directory;
//! 4. a unique path suffix (`cart.py` for `shop/cart.py`);
//! 5. a qualified name (`Cart.total`, `http::Client::send`, `Cart#total`; separators
//!    are interchangeable), exact or as a suffix, else a plain name; failing that, a
//!    module path whose qualifiers name the file's directories or stem
//!    (`analysis::target`, `my_crate::parse`).
//!
//! Several definitions for one name — once Rust `mod x;` declarations and, when
//! the code defines the name too, definitions in tests are set aside — is
//! [`Error::AmbiguousTarget`] with every candidate as `path:line kind
//! qualified_name`, unless the caller asks for all of them
//! ([`TargetOptions::all`]): impact and graphs of "every `save`" are rarely what
//! someone meant, and the candidates say how to name the one they meant. Nothing at
//! all is [`Error::TargetNotFound`] with close names as suggestions.

use serde::Serialize;

use code_index::{DefId, Error, FileId, Project, Result};

use crate::testfiles::is_test_path;
pub use protocol::ResolvedKind as TargetKind;
use protocol::SymbolKind;
pub use protocol::SymbolRef;

impl Target {
    /// The target as answers show it (without the index's ids).
    pub fn resolved(&self) -> protocol::ResolvedTarget {
        protocol::ResolvedTarget {
            spec: self.spec.clone(),
            kind: self.kind,
            files: self.files.clone(),
            symbols: self.symbols.clone(),
        }
    }
}

/// A definition as results show it.
pub fn symbol_ref(project: &Project, def: DefId) -> SymbolRef {
    let d = project.def(def);
    SymbolRef {
        path: project.file(def.file).path.clone(),
        qualified_name: d.qualified_name.clone(),
        kind: d.kind,
        line: d.line,
        end_line: d.end_line,
    }
}

/// A resolved target.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    /// What the user wrote.
    pub spec: String,
    pub kind: TargetKind,
    /// The file(s) the target is, or the files its definitions are in.
    pub files: Vec<String>,
    /// The definitions, for a symbol target.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<SymbolRef>,
    #[serde(skip)]
    pub file_ids: Vec<FileId>,
    #[serde(skip)]
    pub def_ids: Vec<DefId>,
}

/// How [`resolve_target`] reads a target.
#[derive(Debug, Clone, Default)]
pub struct TargetOptions {
    /// The current directory relative to the project root (`""` at the root), for
    /// relative paths.
    pub cwd: String,
    /// Take every definition a name matches instead of refusing an ambiguous name.
    pub all: bool,
}

/// Resolves `spec` against the project (see the module documentation).
pub fn resolve_target(project: &Project, spec: &str, opts: &TargetOptions) -> Result<Target> {
    let spec_t = spec.trim();
    if spec_t.is_empty() {
        return Err(Error::InvalidArgument("the target is empty".into()));
    }
    let file_of = |p: &str| -> Option<FileId> {
        [join(&opts.cwd, p), normalize(p)].into_iter().flatten().find_map(|c| project.file_id(&c))
    };
    // 1. path:line[:col]; a candidate line as listed (`path:line kind name`) too.
    let first = spec_t.split_whitespace().next().unwrap_or(spec_t);
    let mut parts: Vec<&str> = first.rsplitn(3, ':').collect();
    parts.reverse();
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let line_spec = match parts.as_slice() {
        [p, l, c] if numeric(l) && numeric(c) => Some((*p, *l)),
        [_, _, _] | [_, _] if numeric(parts[parts.len() - 1]) => {
            Some((&first[..first.rfind(':').expect("has a colon")], parts[parts.len() - 1]))
        }
        _ => None,
    };
    if let Some((p, l)) = line_spec
        && let Some(f) = file_of(p)
    {
        let line: u32 =
            l.parse().map_err(|_| Error::InvalidArgument(format!("bad line in {spec_t}")))?;
        if line == 0 || line > project.file(f).lines.max(1) {
            return Err(Error::InvalidArgument(format!(
                "{spec_t}: line {line} is outside {} ({} lines)",
                project.file(f).path,
                project.file(f).lines
            )));
        }
        return Ok(match project.def_at(f, line) {
            Some(d) => symbol_target(project, spec_t, vec![d]),
            None => file_target(project, spec_t, TargetKind::File, vec![f]),
        });
    }
    // 2. path::name, path:name
    for sep in ["::", ":"] {
        let mut at = 0;
        while let Some(i) = spec_t[at..].find(sep).map(|i| i + at) {
            let (p, name) = (&spec_t[..i], &spec_t[i + sep.len()..]);
            if let Some(f) = file_of(p)
                && !name.is_empty()
            {
                let want = norm_symbol(name);
                let defs: Vec<DefId> = (0..project.file(f).defs.len() as u32)
                    .map(|ord| DefId { file: f, ord })
                    .filter(|&d| symbol_matches(project, d, &want))
                    .collect();
                let defs = prefer_exact(project, defs, &want);
                if !defs.is_empty() {
                    return pick(project, spec_t, defs, opts.all);
                }
                return Err(Error::TargetNotFound {
                    target: spec_t.to_owned(),
                    suggestions: suggest(project, name, Some(f)),
                });
            }
            at = i + sep.len();
        }
    }
    // 3. a path: file or directory
    if let Some(f) = file_of(spec_t) {
        return Ok(file_target(project, spec_t, TargetKind::File, vec![f]));
    }
    for dir in [join(&opts.cwd, spec_t), normalize(spec_t)].into_iter().flatten() {
        let prefix =
            if dir.is_empty() { String::new() } else { format!("{}/", dir.trim_end_matches('/')) };
        let files: Vec<FileId> = (0..project.files.len() as FileId)
            .filter(|&f| project.file(f).path.starts_with(&prefix))
            .collect();
        if !files.is_empty() {
            return Ok(file_target(project, spec_t, TargetKind::Directory, files));
        }
    }
    // 4. a unique path suffix
    if spec_t.contains('.') || spec_t.contains('/') {
        let tail = format!("/{}", spec_t.trim_start_matches("./"));
        let hits: Vec<FileId> = (0..project.files.len() as FileId)
            .filter(|&f| format!("/{}", project.file(f).path).ends_with(&tail))
            .collect();
        match hits.len() {
            1 => return Ok(file_target(project, spec_t, TargetKind::File, hits)),
            n if n > 1 && !looks_like_symbol(project, spec_t) => {
                return Err(Error::AmbiguousTarget {
                    target: spec_t.to_owned(),
                    candidates: hits.iter().map(|&f| project.file(f).path.clone()).collect(),
                });
            }
            _ => {}
        }
    }
    // 5. a symbol
    let want = norm_symbol(spec_t);
    let last = want.rsplit('.').next().unwrap_or(&want);
    let defs: Vec<DefId> = project
        .defs_named_str(last)
        .iter()
        .copied()
        .filter(|&d| symbol_matches(project, d, &want))
        .collect();
    let mut defs = prefer_exact(project, defs, &want);
    if defs.is_empty() && want.contains('.') {
        // A module path (`analysis::target`, `code_graph::resolve_target`): the
        // qualifiers name the file's directories or stem.
        defs = project
            .defs_named_str(last)
            .iter()
            .copied()
            .filter(|&d| module_path_matches(project, d, &want))
            .collect();
    }
    if !defs.is_empty() {
        return pick(project, spec_t, defs, opts.all);
    }
    Err(Error::TargetNotFound {
        target: spec_t.to_owned(),
        suggestions: suggest(project, spec_t, None),
    })
}

fn looks_like_symbol(project: &Project, spec: &str) -> bool {
    let want = norm_symbol(spec);
    let last = want.rsplit('.').next().unwrap_or(&want);
    !project.defs_named_str(last).is_empty()
}

fn file_target(project: &Project, spec: &str, kind: TargetKind, files: Vec<FileId>) -> Target {
    Target {
        spec: spec.to_owned(),
        kind,
        files: files.iter().map(|&f| project.file(f).path.clone()).collect(),
        symbols: Vec::new(),
        file_ids: files,
        def_ids: Vec::new(),
    }
}

fn symbol_target(project: &Project, spec: &str, defs: Vec<DefId>) -> Target {
    let mut files: Vec<FileId> = defs.iter().map(|d| d.file).collect();
    files.dedup();
    files.sort_unstable();
    files.dedup();
    Target {
        spec: spec.to_owned(),
        kind: TargetKind::Symbol,
        files: files.iter().map(|&f| project.file(f).path.clone()).collect(),
        symbols: defs.iter().map(|&d| crate::target::symbol_ref(project, d)).collect(),
        file_ids: files,
        def_ids: defs,
    }
}

fn pick(project: &Project, spec: &str, mut defs: Vec<DefId>, all: bool) -> Result<Target> {
    defs.sort_unstable();
    if !all {
        defs = prefer_substantive(project, defs);
    }
    if defs.len() > 1 && !all {
        return Err(Error::AmbiguousTarget {
            target: spec.to_owned(),
            candidates: defs.iter().map(|&d| describe(project, d)).collect(),
        });
    }
    Ok(symbol_target(project, spec, defs))
}

/// `path:line kind qualified_name`, the form candidates are listed in (and that
/// [`resolve_target`] accepts back through its `path:line` part).
pub fn describe(project: &Project, d: DefId) -> String {
    let def = project.def(d);
    format!("{}:{} {} {}", project.file(d.file).path, def.line, def.kind, def.qualified_name)
}

/// `Cart::total`, `Cart#total`, `Cart.total` → `Cart.total`.
fn norm_symbol(s: &str) -> String {
    s.trim().trim_end_matches("()").replace("::", ".").replace(['#', '/'], ".")
}

fn symbol_matches(project: &Project, d: DefId, want: &str) -> bool {
    let def = project.def(d);
    if !want.contains('.') {
        return project.names.name(def.name) == want;
    }
    let q = norm_symbol(&def.qualified_name);
    q == want || q.ends_with(&format!(".{want}"))
}

/// Every qualifier of `want` (but the name) is a directory or the stem of the
/// definition's file, or a container in its qualified name; `crate`, `self` and
/// `super` match anything.
fn module_path_matches(project: &Project, d: DefId, want: &str) -> bool {
    let norm = |s: &str| -> String {
        s.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
    };
    let path = &project.file(d.file).path;
    let mut parts: Vec<String> =
        path.split('/').map(|p| norm(p.split('.').next().unwrap_or(p))).collect();
    parts.extend(norm_symbol(&project.def(d).qualified_name).split('.').map(norm));
    let segs: Vec<&str> = want.split('.').collect();
    segs[..segs.len() - 1]
        .iter()
        .filter(|s| !matches!(**s, "crate" | "self" | "super"))
        .all(|s| parts.contains(&norm(s)))
}

/// Exact qualified matches win over suffix matches (`Client.send` is not also
/// `Other.Client.send`). A plain name stays a plain name: `total` means the method
/// `Cart.total` as much as the function `total`.
fn prefer_exact(project: &Project, defs: Vec<DefId>, want: &str) -> Vec<DefId> {
    if !want.contains('.') {
        return defs;
    }
    keep_if_any(defs, |d| norm_symbol(&project.def(d).qualified_name) == want)
}

/// The definitions `wanted` accepts, or all of them when it accepts none.
fn keep_if_any(defs: Vec<DefId>, wanted: impl Fn(DefId) -> bool) -> Vec<DefId> {
    let kept: Vec<DefId> = defs.iter().copied().filter(|&d| wanted(d)).collect();
    if kept.is_empty() { defs } else { kept }
}

/// Of several definitions of a name, those a user most likely means: a Rust
/// `mod x;` declaration only names the file `x.rs`, and a name defined in the code
/// and again in a test (a helper, a fixture) means the code's. The result names
/// its file, so the choice is visible; `--all` takes every definition.
fn prefer_substantive(project: &Project, defs: Vec<DefId>) -> Vec<DefId> {
    let defs = keep_if_any(defs, |d| {
        let def = project.def(d);
        !(def.kind == SymbolKind::Module && def.signature.trim_end().ends_with(';'))
    });
    keep_if_any(defs, |d| !is_test_path(&project.file(d.file).path))
}

/// Close names (case-insensitive, containing, or within two edits) and paths.
fn suggest(project: &Project, spec: &str, in_file: Option<FileId>) -> Vec<String> {
    let want = norm_symbol(spec);
    let want = want.rsplit('.').next().unwrap_or(&want).to_lowercase();
    let mut scored: Vec<(usize, String)> = Vec::new();
    let files: Vec<FileId> = match in_file {
        Some(f) => vec![f],
        None => (0..project.files.len() as FileId).collect(),
    };
    let mut seen = std::collections::HashSet::new();
    for f in files {
        for (ord, def) in project.file(f).defs.iter().enumerate() {
            let name = project.names.name(def.name);
            let lower = name.to_lowercase();
            let score = if lower == want {
                0
            } else if want.len() >= 3 && lower.contains(&want) {
                1 + lower.len() - want.len()
            } else if want.chars().count() >= 4
                && let Some(d @ 1..=2) = stdx::edit_distance_within(&lower, &want, 2)
            {
                10 + d
            } else {
                continue;
            };
            let label = describe(project, DefId { file: f, ord: ord as u32 });
            if seen.insert(label.clone()) {
                scored.push((score, label));
            }
        }
    }
    if in_file.is_none() && want.len() >= 3 {
        for file in &project.files {
            let base = file.path.rsplit('/').next().unwrap_or(&file.path).to_lowercase();
            if base.contains(&want) {
                scored.push((5, file.path.clone()));
            }
        }
    }
    scored.sort();
    scored.into_iter().take(5).map(|(_, s)| s).collect()
}

/// `cwd/p`, normalized; None when it climbs above the root.
fn join(cwd: &str, p: &str) -> Option<String> {
    if cwd.is_empty() {
        return normalize(p);
    }
    normalize(&format!("{cwd}/{p}"))
}

/// Lexical normalization of a relative path: `./`, `..`, doubled slashes.
fn normalize(p: &str) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            c => out.push(c),
        }
    }
    Some(out.join("/"))
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;
    use crate::fixture::fixture;

    const SHOP: &str = r#"
        //- shop/__init__.py
        //- shop/cart.py
        class Cart:
            def total(self):
                return 1

            def add(self, item):
                self.total()

        def helper():
            pass
        //- shop/pricing.py
        def total():
            return 2
        //- other/cart.py
        x = 1
        //- src/lib.rs
        pub mod http {
            pub struct Client;
            impl Client {
                pub fn send(&self) {}
            }
        }
        mod render;
        //- src/render.rs
        pub fn render() {}
        //- tests/render.rs
        fn render() {}
        fn only_in_tests() {}
    "#;

    fn check(cwd: &str, spec: &str, all: bool, expect: Expect) {
        let fx = fixture(SHOP);
        let opts = TargetOptions { cwd: cwd.into(), all };
        let out = match resolve_target(&fx.snapshot.project, spec, &opts) {
            Ok(t) => {
                let syms: Vec<String> =
                    t.symbols.iter().map(|s| format!("{}:{}", s.path, s.qualified_name)).collect();
                format!("{:?} files={:?} symbols={:?}", t.kind, t.files, syms)
            }
            Err(e) => format!("{}: {}", e.code(), e),
        };
        expect.assert_eq(&out);
    }

    #[test]
    fn paths_lines_and_directories() {
        check("", "shop/cart.py", false, expect![[r#"File files=["shop/cart.py"] symbols=[]"#]]);
        check("shop", "cart.py", false, expect![[r#"File files=["shop/cart.py"] symbols=[]"#]]);
        check(
            "shop",
            "../other/cart.py",
            false,
            expect![[r#"File files=["other/cart.py"] symbols=[]"#]],
        );
        check(
            "",
            "./shop/cart.py:3",
            false,
            expect![[r#"Symbol files=["shop/cart.py"] symbols=["shop/cart.py:Cart.total"]"#]],
        );
        check(
            "",
            "shop/cart.py:8:5",
            false,
            expect![[r#"Symbol files=["shop/cart.py"] symbols=["shop/cart.py:helper"]"#]],
        );
        check("", "shop/cart.py:7", false, expect![[r#"File files=["shop/cart.py"] symbols=[]"#]]);
        check(
            "",
            "shop/cart.py:99",
            false,
            expect!["INVALID_ARGUMENT: shop/cart.py:99: line 99 is outside shop/cart.py (9 lines)"],
        );
        check(
            "",
            "shop",
            false,
            expect![[
                r#"Directory files=["shop/__init__.py", "shop/cart.py", "shop/pricing.py"] symbols=[]"#
            ]],
        );
        check("", "pricing.py", false, expect![[r#"File files=["shop/pricing.py"] symbols=[]"#]]);
        check(
            "",
            "cart.py",
            false,
            expect![
                "AMBIGUOUS_MATCH: cart.py is ambiguous: 2 matches (other/cart.py; shop/cart.py)"
            ],
        );
    }

    #[test]
    fn symbols_qualified_ambiguous_and_missing() {
        check(
            "",
            "Cart.total",
            false,
            expect![[r#"Symbol files=["shop/cart.py"] symbols=["shop/cart.py:Cart.total"]"#]],
        );
        check(
            "",
            "Cart::total",
            false,
            expect![[r#"Symbol files=["shop/cart.py"] symbols=["shop/cart.py:Cart.total"]"#]],
        );
        check(
            "",
            "http::Client::send",
            false,
            expect![[r#"Symbol files=["src/lib.rs"] symbols=["src/lib.rs:http::Client::send"]"#]],
        );
        check(
            "",
            "Client::send",
            false,
            expect![[r#"Symbol files=["src/lib.rs"] symbols=["src/lib.rs:http::Client::send"]"#]],
        );
        check(
            "",
            "shop::pricing::total",
            false,
            expect![[r#"Symbol files=["shop/pricing.py"] symbols=["shop/pricing.py:total"]"#]],
        );
        check(
            "",
            "crate::cart::helper",
            false,
            expect![[r#"Symbol files=["shop/cart.py"] symbols=["shop/cart.py:helper"]"#]],
        );
        check(
            "",
            "total",
            false,
            expect![
                "AMBIGUOUS_MATCH: total is ambiguous: 2 matches (shop/cart.py:2 method Cart.total; shop/pricing.py:1 function total)"
            ],
        );
        check(
            "",
            "total",
            true,
            expect![[
                r#"Symbol files=["shop/cart.py", "shop/pricing.py"] symbols=["shop/cart.py:Cart.total", "shop/pricing.py:total"]"#
            ]],
        );
        check(
            "",
            "shop/cart.py:2 method Cart.total",
            false,
            expect![[r#"Symbol files=["shop/cart.py"] symbols=["shop/cart.py:Cart.total"]"#]],
        );
        check(
            "",
            "shop/pricing.py::total",
            false,
            expect![[r#"Symbol files=["shop/pricing.py"] symbols=["shop/pricing.py:total"]"#]],
        );
        check(
            "",
            "shop/cart.py:Cart.add",
            false,
            expect![[r#"Symbol files=["shop/cart.py"] symbols=["shop/cart.py:Cart.add"]"#]],
        );
        check(
            "",
            "totl",
            false,
            expect![
                "NOT_FOUND: totl: no indexed file, directory or definition by that name; did you mean shop/cart.py:2 method Cart.total, shop/pricing.py:1 function total?"
            ],
        );
        check(
            "",
            "shop/cart.py::nope",
            false,
            expect![
                "NOT_FOUND: shop/cart.py::nope: no indexed file, directory or definition by that name"
            ],
        );
        check("", "  ", false, expect!["INVALID_ARGUMENT: the target is empty"]);
    }

    #[test]
    fn declarations_and_test_definitions_give_way_to_the_code() {
        // `mod render;`, `fn render` in src/render.rs and a test's `fn render`: the
        // code's function, unless every one is asked for.
        check(
            "",
            "render",
            false,
            expect![[r#"Symbol files=["src/render.rs"] symbols=["src/render.rs:render"]"#]],
        );
        check(
            "",
            "render",
            true,
            expect![[
                r#"Symbol files=["src/lib.rs", "src/render.rs", "tests/render.rs"] symbols=["src/lib.rs:render", "src/render.rs:render", "tests/render.rs:render"]"#
            ]],
        );
        // Defined in a test only: the test's.
        check(
            "",
            "only_in_tests",
            false,
            expect![[
                r#"Symbol files=["tests/render.rs"] symbols=["tests/render.rs:only_in_tests"]"#
            ]],
        );
    }
}
