//! Resolving imports to files, per language.
//!
//! The input is the project snapshot plus a few manifests (`Cargo.toml`, `go.mod`,
//! `tsconfig.json`/`jsconfig.json`, `package.json`); the output, for every import
//! of every file, is the project files it refers to, or an external module name
//! when it refers to nothing in the project (the standard library, a dependency).
//! Everything here is a pure function of that input and is tested with text
//! fixtures.

use std::collections::{HashMap, HashSet};

use code_index::{FileId, Language, Project, import_names};

/// Where an import leads.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ImportTarget {
    /// Files of the project (a package or namespace can be several).
    Files(Vec<FileId>),
    /// Nothing in the project: a dependency or the standard library, by top-level name.
    External(String),
}

/// One import of one file, resolved.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResolvedImport {
    pub line: u32,
    pub module: String,
    pub target: ImportTarget,
    /// Names the import brings into scope, as (name in the target, local name).
    pub names: Vec<(String, String)>,
}

/// A small non-code file the resolver reads: path relative to the root, and text.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub path: String,
    pub text: String,
}

/// File names read as manifests.
pub(crate) const MANIFEST_NAMES: &[&str] =
    &["Cargo.toml", "go.mod", "tsconfig.json", "jsconfig.json", "package.json"];

/// Resolves every import of every file. `result[f]` lists file `f`'s imports.
pub fn resolve_imports(project: &Project, manifests: &[Manifest]) -> Vec<Vec<ResolvedImport>> {
    let ctx = Context::new(project, manifests);
    (0..project.files.len() as FileId).map(|f| ctx.resolve_file(f)).collect()
}

/// The imports of `files` only, as [`resolve_imports`] resolves them.
pub(crate) fn resolve_imports_of(
    project: &Project,
    manifests: &[Manifest],
    files: &[FileId],
) -> Vec<Vec<ResolvedImport>> {
    let ctx = Context::new(project, manifests);
    files.iter().map(|&f| ctx.resolve_file(f)).collect()
}

struct Context<'p> {
    project: &'p Project,
    paths: HashSet<&'p str>,
    /// Python dotted module name → file, and each file's package-based name.
    py_modules: HashMap<String, FileId>,
    py_module_of: HashMap<FileId, String>,
    /// Rust: (crate dir, module path like `a::b`) → file; crate name → crate dir.
    rust_modules: HashMap<(String, String), FileId>,
    rust_crates: HashMap<String, String>,
    /// Renamed Rust dependencies per manifest directory: alias → package name.
    rust_aliases: HashMap<String, HashMap<String, String>>,
    /// Rust crate roots outside `src/` (`[[bin]] path = "crates/core/main.rs"`):
    /// (directory, root file), longest directory first.
    rust_roots: Vec<(String, String)>,
    /// Go: module path → directory of its go.mod; directory → files.
    go_modules: Vec<(String, String)>,
    dir_files: HashMap<String, Vec<FileId>>,
    /// Java: fully qualified class name → file; package → files.
    java_classes: HashMap<String, FileId>,
    java_packages: HashMap<String, Vec<FileId>>,
    /// C#: namespace → files declaring it.
    cs_namespaces: HashMap<String, Vec<FileId>>,
    /// C/C++: file name → files with that name.
    by_file_name: HashMap<&'p str, Vec<FileId>>,
    /// tsconfig/jsconfig: (directory, base URL dir, paths patterns).
    ts_configs: Vec<(String, String, TsPaths)>,
    /// JS/TS packages of a monorepo: package.json `name` → (directory, entry points).
    js_packages: HashMap<String, (String, Vec<String>)>,
}

/// The directories above `path`, deepest first, ending with the root (`""`).
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let mut next = Some(dir_of(path));
    std::iter::from_fn(move || {
        let dir = next?;
        next = (!dir.is_empty()).then(|| dir_of(dir));
        Some(dir)
    })
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

fn file_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, n)| n)
}

fn join(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = if dir.is_empty() { Vec::new() } else { dir.split('/').collect() };
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

impl<'p> Context<'p> {
    fn new(project: &'p Project, manifests: &[Manifest]) -> Context<'p> {
        let paths: HashSet<&str> = project.files.iter().map(|f| f.path.as_str()).collect();
        let mut ctx = Context {
            project,
            paths,
            py_modules: HashMap::new(),
            py_module_of: HashMap::new(),
            rust_modules: HashMap::new(),
            rust_crates: HashMap::new(),
            rust_aliases: HashMap::new(),
            rust_roots: Vec::new(),
            go_modules: Vec::new(),
            dir_files: HashMap::new(),
            java_classes: HashMap::new(),
            java_packages: HashMap::new(),
            cs_namespaces: HashMap::new(),
            by_file_name: HashMap::new(),
            ts_configs: Vec::new(),
            js_packages: HashMap::new(),
        };
        for (f, file) in project.files.iter().enumerate() {
            let f = f as FileId;
            ctx.dir_files.entry(dir_of(&file.path).to_owned()).or_default().push(f);
            ctx.by_file_name.entry(file_name(&file.path)).or_default().push(f);
            match file.language {
                Language::Python => ctx.add_python_module(f),
                Language::Java => {
                    let stem = file_name(&file.path).trim_end_matches(".java");
                    let pkg = file.package.clone().unwrap_or_default();
                    let fqn =
                        if pkg.is_empty() { stem.to_owned() } else { format!("{pkg}.{stem}") };
                    ctx.java_classes.insert(fqn, f);
                    ctx.java_packages.entry(pkg).or_default().push(f);
                }
                Language::CSharp => {
                    for d in &file.defs {
                        if d.kind == protocol::SymbolKind::Namespace {
                            let v = ctx.cs_namespaces.entry(d.qualified_name.clone()).or_default();
                            if v.last() != Some(&f) {
                                v.push(f);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        for m in manifests {
            let dir = dir_of(&m.path).to_owned();
            match file_name(&m.path) {
                "Cargo.toml" => {
                    // Where `use name::x` leads: the package's `src/`, or its
                    // `[lib] path`'s directory.
                    let mut lib_dir = dir.clone();
                    for (is_lib, target) in cargo_target_paths(&m.text) {
                        let Some(file) = join(&dir, &target) else { continue };
                        // `path = "src/main.rs"` only restates the convention.
                        if rust_src_location(&file).is_some_and(|l| l.1.is_empty()) {
                            continue;
                        }
                        if is_lib {
                            lib_dir = dir_of(&file).to_owned();
                        }
                        ctx.rust_roots.push((dir_of(&file).to_owned(), file));
                    }
                    if let Some(name) = cargo_package_name(&m.text) {
                        ctx.rust_crates.insert(name.replace('-', "_"), lib_dir);
                        // Every package, renames or not: the nearest manifest decides.
                        let renamed: HashMap<String, String> = cargo_dependencies(&m.text)
                            .into_iter()
                            .filter(|(alias, real)| alias != real)
                            .collect();
                        ctx.rust_aliases.insert(dir.clone(), renamed);
                    }
                }
                "go.mod" => {
                    if let Some(module) = m.text.lines().find_map(|l| {
                        l.trim()
                            .strip_prefix("module ")
                            .map(|s| s.trim().trim_matches('"').to_owned())
                    }) {
                        ctx.go_modules.push((module, dir));
                    }
                }
                // An installed dependency is not a package of this project.
                "package.json" if in_node_modules(&m.path) => {}
                "package.json" => {
                    if let Some((name, entries)) = js_package(&m.text) {
                        ctx.js_packages.insert(name, (dir, entries));
                    }
                }
                "tsconfig.json" | "jsconfig.json" => {
                    if let Some((base, paths)) = ts_paths(&m.text) {
                        let base_dir = join(&dir, &base).unwrap_or_else(|| dir.clone());
                        ctx.ts_configs.push((dir, base_dir, paths));
                    }
                }
                _ => {}
            }
        }
        // Longest directories first: the nearest config wins.
        ctx.ts_configs.sort_by_key(|c| std::cmp::Reverse(c.0.len()));
        ctx.go_modules.sort_by_key(|m| std::cmp::Reverse(m.0.len()));
        ctx.rust_roots.sort_by_key(|r| std::cmp::Reverse(r.0.len()));
        for (f, file) in project.files.iter().enumerate() {
            if file.language == Language::Rust {
                ctx.add_rust_module(f as FileId);
            }
        }
        ctx
    }

    fn resolve_file(&self, f: FileId) -> Vec<ResolvedImport> {
        let file = self.project.file(f);
        file.imports
            .iter()
            .map(|imp| {
                let (target, names) = match file.language {
                    Language::Python => self.python(f, &imp.module, &imp.text),
                    Language::JavaScript | Language::TypeScript | Language::Tsx => {
                        self.js(f, &imp.module, &imp.text)
                    }
                    Language::Rust => self.rust(f, &imp.module, &imp.text),
                    Language::Go => self.go(&imp.module),
                    Language::Java => self.java(&imp.module, &imp.text),
                    Language::CSharp => self.csharp(&imp.module),
                    Language::C | Language::Cpp => self.include(f, &imp.module, &imp.text),
                };
                ResolvedImport { line: imp.line, module: imp.module.clone(), target, names }
            })
            .collect()
    }

    fn path(&self, f: FileId) -> &'p str {
        &self.project.files[f as usize].path
    }

    fn file_id(&self, path: &str) -> Option<FileId> {
        self.project.file_id(path)
    }

    // ---- Python ------------------------------------------------------------------

    fn add_python_module(&mut self, f: FileId) {
        let path = self.path(f);
        let stem = path.trim_end_matches(".pyi").trim_end_matches(".py");
        let mut parts: Vec<&str> = stem.split('/').collect();
        let is_init = parts.last() == Some(&"__init__");
        if is_init {
            parts.pop();
        }
        // The package-based name: climb while the directory is a package.
        let mut start = parts.len() - usize::from(!is_init);
        while start > 0 {
            let pkg_dir = parts[..start].join("/");
            let init = format!("{pkg_dir}/__init__.py");
            if self.paths.contains(init.as_str()) {
                start -= 1;
            } else {
                break;
            }
        }
        // `start` is the first component inside the outermost package.
        let start = if is_init { start } else { start.min(parts.len() - 1) };
        let dotted = parts[start..].join(".");
        if !dotted.is_empty() {
            self.py_modules.entry(dotted.clone()).or_insert(f);
        }
        self.py_module_of.insert(f, dotted);
        // Also from the project root (namespace packages, scripts run from the root).
        let from_root = parts.join(".");
        if !from_root.is_empty() {
            self.py_modules.entry(from_root).or_insert(f);
        }
    }

    /// The dotted package a Python file is in.
    fn python_package(&self, f: FileId) -> String {
        let path = self.path(f);
        match self.py_module_of.get(&f) {
            Some(m) if path.ends_with("__init__.py") => m.clone(),
            Some(m) => m.rsplit_once('.').map_or(String::new(), |(p, _)| p.to_owned()),
            None => String::new(),
        }
    }

    fn python(&self, f: FileId, module: &str, text: &str) -> (ImportTarget, Vec<(String, String)>) {
        let names = import_names(Language::Python, text);
        let absolute = if let Some(rel) = module.strip_prefix('.') {
            // `from ..pkg import x`: one dot is the current package, each more goes up.
            let up = rel.chars().take_while(|&c| c == '.').count();
            let rest = &rel[up..];
            let mut pkg: Vec<String> = {
                let p = self.python_package(f);
                if p.is_empty() { Vec::new() } else { p.split('.').map(str::to_owned).collect() }
            };
            for _ in 0..up {
                pkg.pop();
            }
            if !rest.is_empty() {
                pkg.push(rest.to_owned());
            }
            pkg.join(".")
        } else {
            module.to_owned()
        };
        let from_import = text.trim_start().starts_with("from ");
        let mut files = Vec::new();
        // `from a import b` where `a.b` is a module imports that module.
        if from_import {
            for (name, _) in &names {
                let sub =
                    if absolute.is_empty() { name.clone() } else { format!("{absolute}.{name}") };
                if let Some(&m) = self.py_modules.get(&sub) {
                    files.push(m);
                }
            }
        }
        // The longest prefix of the dotted name that is a module.
        let mut candidate = absolute.as_str();
        loop {
            if let Some(&m) = self.py_modules.get(candidate) {
                if !files.contains(&m) {
                    files.push(m);
                }
                break;
            }
            match candidate.rsplit_once('.') {
                Some((head, _)) => candidate = head,
                None => break,
            }
        }
        if files.is_empty() {
            let top = absolute.split('.').next().unwrap_or_default().to_owned();
            return (ImportTarget::External(top), names);
        }
        (ImportTarget::Files(files), names)
    }

    // ---- JavaScript / TypeScript -------------------------------------------------

    fn js_file(&self, base: &str) -> Option<FileId> {
        const EXTS: &[&str] =
            &["", ".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"];
        const INDEX: &[&str] =
            &["/index.ts", "/index.tsx", "/index.js", "/index.jsx", "/index.mjs"];
        for ext in EXTS {
            if let Some(id) = self.file_id(&format!("{base}{ext}")) {
                return Some(id);
            }
        }
        // ESM TypeScript writes `./x.js` for the source `./x.ts`.
        for (js, ts) in
            [(".js", ".ts"), (".js", ".tsx"), (".mjs", ".mts"), (".cjs", ".cts"), (".jsx", ".tsx")]
        {
            if let Some(stem) = base.strip_suffix(js)
                && let Some(id) = self.file_id(&format!("{stem}{ts}"))
            {
                return Some(id);
            }
        }
        INDEX.iter().find_map(|i| self.file_id(&format!("{base}{i}")))
    }

    fn js(&self, f: FileId, module: &str, text: &str) -> (ImportTarget, Vec<(String, String)>) {
        let names = import_names(Language::JavaScript, text);
        let from_dir = dir_of(self.path(f));
        if module.starts_with('.') {
            if let Some(id) = join(from_dir, module).and_then(|p| self.js_file(&p)) {
                return (ImportTarget::Files(vec![id]), names);
            }
            return (ImportTarget::External(module.to_owned()), names);
        }
        // tsconfig/jsconfig `paths` and `baseUrl`, nearest config first.
        for (dir, base, paths) in &self.ts_configs {
            if !stdx::is_within(from_dir, dir) {
                continue;
            }
            for (pattern, targets) in paths {
                let captured = match pattern.split_once('*') {
                    Some((pre, post)) => {
                        module.strip_prefix(pre).and_then(|m| m.strip_suffix(post))
                    }
                    None => (module == pattern).then_some(""),
                };
                let Some(star) = captured else { continue };
                for t in targets {
                    if let Some(id) =
                        join(base, &t.replace('*', star)).and_then(|p| self.js_file(&p))
                    {
                        return (ImportTarget::Files(vec![id]), names);
                    }
                }
            }
            if let Some(id) = join(base, module).and_then(|p| self.js_file(&p)) {
                return (ImportTarget::Files(vec![id]), names);
            }
        }
        let package = if module.starts_with('@') {
            module.splitn(3, '/').take(2).collect::<Vec<_>>().join("/")
        } else {
            module.split('/').next().unwrap_or(module).to_owned()
        };
        // A package of this monorepo (npm/yarn/pnpm workspaces): its source, not
        // what its `main` points at after a build (`dist/` is not in the tree).
        if let Some((dir, entries)) = self.js_packages.get(&package) {
            let sub = module[package.len()..].trim_start_matches('/');
            let found = if sub.is_empty() {
                entries
                    .iter()
                    .map(String::as_str)
                    .chain(["index", "lib/index"])
                    .find_map(|e| join(dir, e).and_then(|p| self.js_file(&p)))
            } else {
                ["", "src/"].iter().find_map(|pre| {
                    join(dir, &format!("{pre}{sub}")).and_then(|p| self.js_file(&p))
                })
            };
            if let Some(id) = found {
                return (ImportTarget::Files(vec![id]), names);
            }
        }
        (ImportTarget::External(package), names)
    }

    // ---- Rust ----------------------------------------------------------------------

    /// Crate directory and module path (`a::b`, empty for the crate root) of a file.
    fn rust_location(&self, path: &str) -> Option<(String, String)> {
        let in_src = rust_src_location(path);
        // A root that Cargo.toml places outside `src/`, and the modules beside it,
        // unless the file is in a `src/` tree nearer to it.
        let custom = self.rust_roots.iter().find(|(dir, _)| {
            dir.is_empty() || path.strip_prefix(dir.as_str()).is_some_and(|r| r.starts_with('/'))
        });
        match (custom, in_src) {
            (Some((dir, root)), src) if src.as_ref().is_none_or(|s| s.0.len() < dir.len()) => {
                if path == root {
                    return Some((dir.clone(), String::new()));
                }
                let rel = path[dir.len()..].trim_start_matches('/').trim_end_matches(".rs");
                let mut parts: Vec<&str> = rel.split('/').collect();
                if parts.last() == Some(&"mod") {
                    parts.pop();
                }
                Some((dir.clone(), parts.join("::")))
            }
            (_, src) => src,
        }
    }

    /// The crate directory of `alias`, a dependency renamed in the `Cargo.toml`
    /// nearest to file `f`.
    fn rust_alias(&self, f: FileId, alias: &str) -> Option<&String> {
        let renamed = ancestors(self.path(f)).find_map(|d| self.rust_aliases.get(d))?;
        renamed.get(alias).and_then(|real| self.rust_crates.get(real))
    }

    fn add_rust_module(&mut self, f: FileId) {
        let path = self.path(f);
        if let Some(key) = self.rust_location(path) {
            self.rust_modules.entry(key).or_insert(f);
        }
    }

    fn rust(&self, f: FileId, module: &str, text: &str) -> (ImportTarget, Vec<(String, String)>) {
        let names = import_names(Language::Rust, text);
        // Integration tests, benches and examples (`tests/x.rs`) are crates of their
        // own, outside `src/`, that `use` the package by name.
        let by_name = || {
            let first = module.split("::").next().unwrap_or(module).trim();
            let known = self.rust_crates.contains_key(first) || self.rust_alias(f, first).is_some();
            (known && !text.trim_start().starts_with("mod "))
                .then(|| (String::new(), String::new()))
        };
        let Some((crate_dir, here)) = self.rust_location(self.path(f)).or_else(by_name) else {
            return (
                ImportTarget::External(module.split("::").next().unwrap_or(module).to_owned()),
                names,
            );
        };
        let here: Vec<&str> = if here.is_empty() { Vec::new() } else { here.split("::").collect() };
        // `mod foo;`: the child module file.
        if text.trim_start().starts_with("mod ") || text.contains(" mod ") {
            let mut p = here.clone();
            // A non-mod.rs file's children live in a directory named after it.
            p.push(module);
            if let Some(&id) = self.rust_modules.get(&(crate_dir.clone(), p.join("::"))) {
                return (ImportTarget::Files(vec![id]), names);
            }
            return (ImportTarget::External(module.to_owned()), names);
        }
        let path = module
            .split('{')
            .next()
            .unwrap_or(module)
            .trim_end_matches("::")
            .split(" as ")
            .next()
            .unwrap_or(module);
        let segs: Vec<&str> = path.split("::").map(str::trim).filter(|s| !s.is_empty()).collect();
        let Some(&first) = segs.first() else {
            return (ImportTarget::External(module.to_owned()), names);
        };
        let (crate_dir, mut base, rest): (String, Vec<&str>, &[&str]) = match first {
            "crate" => (crate_dir, Vec::new(), &segs[1..]),
            "self" => (crate_dir, here.clone(), &segs[1..]),
            "super" => {
                let mut b = here.clone();
                let mut i = 0;
                while segs.get(i) == Some(&"super") {
                    b.pop();
                    i += 1;
                }
                (crate_dir, b, &segs[i..])
            }
            other => match self.rust_crates.get(other).or_else(|| self.rust_alias(f, other)) {
                Some(dir) => (dir.clone(), Vec::new(), &segs[1..]),
                // `use foo::x` where `foo` is a child module of this one (2018 paths).
                None if self.rust_modules.contains_key(&(
                    crate_dir.clone(),
                    [here.clone(), vec![other]].concat().join("::"),
                )) =>
                {
                    (crate_dir, here.clone(), &segs[..])
                }
                // `use Shape::*;` or `use Shape as S;`: a type already in scope (crate
                // names are lower case), not a crate. Its file is a dependency through
                // the `use` or definition that brought it into scope.
                None if other.starts_with(|c: char| c.is_ascii_uppercase()) => {
                    return (ImportTarget::Files(Vec::new()), names);
                }
                None => return (ImportTarget::External(other.to_owned()), names),
            },
        };
        // The longest module prefix of the path.
        let mut best = self.rust_modules.get(&(crate_dir.clone(), base.join("::"))).copied();
        for seg in rest {
            base.push(seg);
            match self.rust_modules.get(&(crate_dir.clone(), base.join("::"))) {
                Some(&id) => best = Some(id),
                None => break,
            }
        }
        match best {
            Some(id) => (ImportTarget::Files(vec![id]), names),
            None => (ImportTarget::External(first.to_owned()), names),
        }
    }

    // ---- Go ------------------------------------------------------------------------

    fn go(&self, module: &str) -> (ImportTarget, Vec<(String, String)>) {
        let pkg = module.rsplit('/').next().unwrap_or(module).to_owned();
        let names = vec![(pkg.clone(), pkg)];
        for (prefix, dir) in &self.go_modules {
            let rest = if module == prefix {
                Some("")
            } else {
                module.strip_prefix(prefix.as_str()).and_then(|r| r.strip_prefix('/'))
            };
            let Some(rest) = rest else { continue };
            let target_dir = join(dir, rest).unwrap_or_default();
            let files: Vec<FileId> = self
                .dir_files
                .get(&target_dir)
                .into_iter()
                .flatten()
                .copied()
                .filter(|&id| {
                    let p = self.path(id);
                    p.ends_with(".go") && !p.ends_with("_test.go")
                })
                .collect();
            if !files.is_empty() {
                return (ImportTarget::Files(files), names);
            }
        }
        (ImportTarget::External(module.split('/').next().unwrap_or(module).to_owned()), names)
    }

    // ---- Java ----------------------------------------------------------------------

    fn java(&self, module: &str, text: &str) -> (ImportTarget, Vec<(String, String)>) {
        let wildcard = text.trim_end_matches(';').trim_end().ends_with('*');
        if wildcard {
            // `import a.b.*` (or `import static a.b.C.*`: then the class C).
            if let Some(files) = self.java_packages.get(module) {
                return (ImportTarget::Files(files.clone()), Vec::new());
            }
        }
        // The longest prefix that is a class (static imports name members).
        let mut candidate = module;
        loop {
            if let Some(&id) = self.java_classes.get(candidate) {
                let last = module.rsplit('.').next().unwrap_or(module).to_owned();
                return (ImportTarget::Files(vec![id]), vec![(last.clone(), last)]);
            }
            match candidate.rsplit_once('.') {
                Some((head, _)) => candidate = head,
                None => break,
            }
        }
        (
            ImportTarget::External(module.split('.').take(2).collect::<Vec<_>>().join(".")),
            Vec::new(),
        )
    }

    // ---- C# ------------------------------------------------------------------------

    fn csharp(&self, module: &str) -> (ImportTarget, Vec<(String, String)>) {
        match self.cs_namespaces.get(module) {
            Some(files) => (ImportTarget::Files(files.clone()), Vec::new()),
            None => (
                ImportTarget::External(module.split('.').next().unwrap_or(module).to_owned()),
                Vec::new(),
            ),
        }
    }

    // ---- C / C++ -------------------------------------------------------------------

    fn include(
        &self,
        f: FileId,
        module: &str,
        text: &str,
    ) -> (ImportTarget, Vec<(String, String)>) {
        if text.trim_start().starts_with("using") {
            return (
                ImportTarget::External(module.split("::").next().unwrap_or(module).to_owned()),
                Vec::new(),
            );
        }
        let here = dir_of(self.path(f));
        // Next to the including file, then from the root.
        for base in [here, ""] {
            if let Some(id) = join(base, module).and_then(|p| self.file_id(&p)) {
                return (ImportTarget::Files(vec![id]), Vec::new());
            }
        }
        // Any include directory: the files whose path ends with the include path; the
        // one closest to the includer when there are several.
        let name = file_name(module);
        let suffix = format!("/{module}");
        let candidates: Vec<FileId> = self
            .by_file_name
            .get(name)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&id| {
                let p = self.path(id);
                p == module || p.ends_with(&suffix)
            })
            .collect();
        match candidates.as_slice() {
            [] => (ImportTarget::External(module.to_owned()), Vec::new()),
            [one] => (ImportTarget::Files(vec![*one]), Vec::new()),
            many => {
                let best = many
                    .iter()
                    .copied()
                    .max_by_key(|&id| common_prefix_len(self.path(id), here))
                    .expect("non-empty");
                (ImportTarget::Files(vec![best]), Vec::new())
            }
        }
    }
}

fn common_prefix_len(a: &str, b: &str) -> usize {
    a.split('/').zip(b.split('/')).take_while(|(x, y)| x == y).count()
}

/// Which Rust crates of the project may call into which. A file of crate A can
/// reach code of crate B only if A depends on B, directly or through other crates
/// of the project (`Cargo.toml`: `[dependencies]`, `[dev-dependencies]`,
/// `[build-dependencies]`, per target too). Without this, `value.parse()` in one
/// crate "calls" the only `fn parse` of the workspace, in a crate it cannot see.
pub(crate) struct RustCrates {
    /// The crate of each Rust file: the nearest `Cargo.toml` with a `[package]`.
    of_file: Vec<Option<u32>>,
    /// `reach[a][b]`: crate `a` depends on `b` (transitively), or `a == b`.
    reach: Vec<Vec<bool>>,
}

impl RustCrates {
    pub(crate) fn new(project: &Project, manifests: &[Manifest]) -> RustCrates {
        let mut crates: Vec<(String, String, Vec<String>)> = Vec::new(); // (dir, name, deps)
        for m in manifests {
            if file_name(&m.path) != "Cargo.toml" {
                continue;
            }
            if let Some(name) = cargo_package_name(&m.text) {
                let deps: Vec<String> =
                    cargo_dependencies(&m.text).into_iter().map(|(_, real)| real).collect();
                crates.push((dir_of(&m.path).to_owned(), name.replace('-', "_"), deps));
            }
        }
        let index: HashMap<&str, u32> =
            crates.iter().enumerate().map(|(i, c)| (c.1.as_str(), i as u32)).collect();
        let n = crates.len();
        let mut reach = vec![vec![false; n]; n];
        for (a, (_, _, deps)) in crates.iter().enumerate() {
            reach[a][a] = true;
            for d in deps {
                if let Some(&b) = index.get(d.as_str()) {
                    reach[a][b as usize] = true;
                }
            }
        }
        // Transitive closure (Floyd–Warshall on booleans; workspaces have few crates).
        for k in 0..n {
            let via = reach[k].clone();
            for row in reach.iter_mut().filter(|row| row[k]) {
                for (r, v) in row.iter_mut().zip(&via) {
                    *r |= *v;
                }
            }
        }
        let by_dir: HashMap<&str, u32> =
            crates.iter().enumerate().map(|(i, c)| (c.0.as_str(), i as u32)).collect();
        let of_file = project
            .files
            .iter()
            .map(|file| {
                if file.language != Language::Rust {
                    return None;
                }
                // The nearest enclosing crate directory.
                ancestors(&file.path).find_map(|d| by_dir.get(d).copied())
            })
            .collect();
        RustCrates { of_file, reach }
    }

    /// Whether code in `from` may refer to a definition in `to`; true unless both
    /// are in known crates and `from`'s crate does not depend on `to`'s.
    pub(crate) fn may_reach(&self, from: FileId, to: FileId) -> bool {
        match (self.of_file.get(from as usize), self.of_file.get(to as usize)) {
            (Some(Some(a)), Some(Some(b))) => self.reach[*a as usize][*b as usize],
            _ => true,
        }
    }
}

/// The crates a Cargo.toml depends on (normal, dev, build, per target), as (the name
/// the code uses, the name the package declares): they differ for a rename
/// (`pb = { package = "prost-build" }`); `-` as `_`. Without a TOML parser: a
/// dependency is one `name = ...` / `name.workspace = true` line of a
/// `[*dependencies]` table, or a `[dependencies.name]` table.
pub(crate) fn cargo_dependencies(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (table, pair) in cargo_lines(text) {
        let Some((key, value)) = pair else {
            // `[dependencies.name]`
            if let Some((deps, name)) = table.rsplit_once('.')
                && deps.ends_with("dependencies")
            {
                let name = unquote_toml(name).replace('-', "_");
                out.push((name.clone(), name));
            }
            continue;
        };
        if !table.ends_with("dependencies") {
            continue;
        }
        let name = unquote_toml(key.split('.').next().unwrap_or(key));
        // `alias = { package = "real", ... }`: the code says `alias`, but the crate
        // is `real`.
        let real = value.split_once("package").and_then(|(_, rest)| {
            let rest = rest.trim_start().strip_prefix('=')?;
            rest.trim_start().strip_prefix('"')?.split('"').next()
        });
        if !name.is_empty() {
            out.push((name.replace('-', "_"), real.unwrap_or(name).replace('-', "_")));
        }
    }
    out
}

/// A Cargo.toml read line by line, without a TOML parser: the table each line is
/// in (`package`, `dependencies`, `target.'cfg(unix)'.dependencies`, `bin` for
/// `[[bin]]`), with `None` for the header itself and `Some((key, value))` for a
/// `key = value` line; comments are dropped.
fn cargo_lines(text: &str) -> impl Iterator<Item = (&str, Option<(&str, &str)>)> {
    let mut table = "";
    text.lines().filter_map(move |line| {
        let l = line.split('#').next().unwrap_or("").trim();
        if l.starts_with('[') {
            table = l.trim_start_matches('[').trim_end_matches(']').trim();
            return Some((table, None));
        }
        let (key, value) = l.split_once('=')?;
        Some((table, Some((key.trim(), value.trim()))))
    })
}

/// A TOML key or string without its quotes.
fn unquote_toml(s: &str) -> &str {
    s.trim_matches(|c| c == '"' || c == '\'')
}

/// A Rust file's crate directory and module path by the `src/` convention alone.
fn rust_src_location(path: &str) -> Option<(String, String)> {
    let idx = path.rfind("src/").filter(|&i| i == 0 || path.as_bytes()[i - 1] == b'/')?;
    let crate_dir = path[..idx].trim_end_matches('/').to_owned();
    let in_src = path[idx + 4..].trim_end_matches(".rs");
    let mut parts: Vec<&str> = in_src.split('/').collect();
    match parts.last().copied() {
        Some("lib" | "main") if parts.len() == 1 => parts.clear(),
        Some("mod") => {
            parts.pop();
        }
        _ => {}
    }
    if parts.first() == Some(&"bin") {
        return None; // binaries are crate roots of their own
    }
    Some((crate_dir, parts.join("::")))
}

/// The `path = "..."` of a Cargo.toml's `[lib]`, `[[bin]]`, `[[test]]`, `[[bench]]`
/// and `[[example]]` targets: crate roots where the `src/` convention does not say.
fn cargo_target_paths(text: &str) -> Vec<(bool, String)> {
    cargo_lines(text)
        .filter(|(table, _)| matches!(*table, "lib" | "bin" | "test" | "bench" | "example"))
        .filter_map(|(table, pair)| {
            let (key, value) = pair?;
            let path = unquote_toml(value);
            (key == "path" && path.ends_with(".rs")).then(|| (table == "lib", path.to_owned()))
        })
        .collect()
}

/// `[package] name = "x"` from a Cargo.toml, without a TOML parser.
fn cargo_package_name(text: &str) -> Option<String> {
    cargo_lines(text).find_map(|(table, pair)| {
        let (key, value) = pair?;
        (table == "package" && key == "name").then(|| unquote_toml(value).to_owned())
    })
}

/// Whether a path is inside an installed `node_modules/` tree.
pub(crate) fn in_node_modules(path: &str) -> bool {
    path.split('/').any(|d| d == "node_modules")
}

/// A package.json's `name` and its entry points, most source-like first: `source`,
/// the conventional `src/index`, then `types`/`typings`, `module`, `main` and
/// `exports["."]` (a string, or its `import`/`default`/`require`/`types`
/// condition). `src/index` goes before `main` because `main` is often a shim
/// that loads the build (`index.js` → `dist/`).
fn js_package(text: &str) -> Option<(String, Vec<String>)> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let name = v.get("name")?.as_str()?.to_owned();
    let field = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_owned);
    let mut entries: Vec<String> = field("source").into_iter().collect();
    entries.push("src/index".to_owned());
    entries.extend(["types", "typings", "module", "main"].iter().filter_map(|k| field(k)));
    let dot = match v.get("exports") {
        Some(serde_json::Value::Object(map)) => map.get(".").or(Some(&v["exports"])),
        other => other,
    };
    match dot {
        Some(serde_json::Value::String(s)) => entries.push(s.clone()),
        Some(serde_json::Value::Object(conds)) => {
            for k in ["source", "types", "import", "default", "require"] {
                if let Some(s) = conds.get(k).and_then(|x| x.as_str()) {
                    entries.push(s.to_owned());
                }
            }
        }
        _ => {}
    }
    Some((name, entries))
}

/// `compilerOptions.baseUrl` and `compilerOptions.paths` from a tsconfig/jsconfig
/// (JSON with comments and trailing commas).
/// tsconfig `paths`: (pattern, targets) pairs.
type TsPaths = Vec<(String, Vec<String>)>;

fn ts_paths(text: &str) -> Option<(String, TsPaths)> {
    let v: serde_json::Value = serde_json::from_str(&strip_jsonc(text)).ok()?;
    let opts = v.get("compilerOptions")?;
    let base = opts.get("baseUrl").and_then(|b| b.as_str()).unwrap_or(".").to_owned();
    let mut paths = Vec::new();
    if let Some(map) = opts.get("paths").and_then(|p| p.as_object()) {
        for (k, targets) in map {
            let ts: Vec<String> = targets
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect();
            paths.push((k.clone(), ts));
        }
    }
    if opts.get("baseUrl").is_none() && paths.is_empty() {
        return None;
    }
    Some((base, paths))
}

/// Removes `//` and `/* */` comments and trailing commas from JSON-with-comments.
fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            out.push(c);
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_str = true;
                out.push(c);
            }
            '/' if chars.peek() == Some(&'/') => while chars.next_if(|&c| c != '\n').is_some() {},
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
            }
            _ => out.push(c),
        }
    }
    // Trailing commas: `,` followed by whitespace and `}` or `]`.
    let mut cleaned = String::with_capacity(out.len());
    let bytes: Vec<char> = out.chars().collect();
    let mut in_str = false;
    for (i, &c) in bytes.iter().enumerate() {
        if c == '"' && (i == 0 || bytes[i - 1] != '\\') {
            in_str = !in_str;
        }
        if c == ',' && !in_str {
            let next = bytes[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        cleaned.push(c);
    }
    cleaned
}

#[cfg(test)]
mod tests;
