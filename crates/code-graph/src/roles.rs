//! The architectural role of a file or definition, inferred from its place in the
//! dependency graph, what it defines and what it is called.
//!
//! The rules are a pure function of a few facts ([`RoleFacts`] → [`Role`] + reason),
//! tested as a table, tried in order:
//!
//! 1. **test** — a test file by its language's convention;
//! 2. **config** — named like configuration (`settings`, `config`, `conf`,
//!    `constants`, `setup`), or defining only constants;
//! 3. **entry point** — named like one (`main`, `__main__`, `manage`, `cli`,
//!    `Program`), or defining a top-level `main`, or depended on by nothing while
//!    depending on several files (a script);
//! 4. **interface** — the API surface: a package root (`lib.rs`, `__init__.py`,
//!    `index.*`) with content, or named like routes/views/handlers/controllers/
//!    endpoints/api, or defining mostly interfaces and traits;
//! 5. **model** — data definitions: named like models/schema/entities/types/dto, or
//!    defining mostly data types (structs, records, enums, classes without methods);
//! 6. **core** — a hub: among the most central files (PageRank, top 10%), with
//!    several dependents and dependencies;
//! 7. **utility** — functions depended on by several files, depending on almost
//!    nothing, or named like one (`utils`, `helpers`, `common`, `compat`);
//! 8. **core** — very central (top 5%) whatever its shape;
//! 9. **core** or **utility** — depended on by several files ([`SEVERAL`]):
//!    utility when it depends on at most half as many, else core;
//! 10. **peripheral** — everything else.
//!
//! Dependents are counted as impact counts them (`impact::coupling`): the same
//! number `impact` reports as direct dependents.

use protocol::SymbolKind;

use code_index::FileId;

use crate::{depgraph::DepGraph, snapshot::Snapshot, testfiles::test_convention};
pub use protocol::FileRole as Role;

/// What the rules look at.
#[derive(Debug, Clone, Default)]
pub struct RoleFacts {
    pub path: String,
    pub test: bool,
    /// Top-level functions, and methods.
    pub functions: u32,
    pub methods: u32,
    /// Data types: structs, records, enums, unions, type aliases, classes without
    /// methods.
    pub data_types: u32,
    /// Classes with methods.
    pub classes: u32,
    /// Interfaces and traits.
    pub interfaces: u32,
    pub constants: u32,
    /// Defines a top-level `main`.
    pub has_main: bool,
    /// Files depending on it, files it depends on.
    pub fan_in: u32,
    pub fan_out: u32,
    /// Its PageRank's percentile among the project's files (1.0 = most central).
    pub centrality: f64,
}

/// The role rules (see the module documentation).
pub fn infer_role(f: &RoleFacts) -> (Role, String) {
    let name = f.path.rsplit('/').next().unwrap_or(&f.path);
    let stem = name.split('.').next().unwrap_or(name).to_ascii_lowercase();
    let dirs: Vec<String> = f.path.split('/').map(str::to_ascii_lowercase).collect();
    let in_dir =
        |names: &[&str]| dirs[..dirs.len() - 1].iter().any(|d| names.contains(&d.as_str()));
    let named = |names: &[&str]| names.contains(&stem.as_str());
    let defs = f.functions + f.methods + f.data_types + f.classes + f.interfaces + f.constants;
    let types = f.data_types + f.classes + f.interfaces;

    if f.test {
        return (Role::Test, "a test file by its language's convention".into());
    }
    if named(&["settings", "config", "configuration", "conf", "constants", "setup", "defaults"])
        || in_dir(&["config", "settings", "conf"])
    {
        return (Role::Config, format!("named like configuration ({name})"));
    }
    if f.constants >= 3 && f.constants == defs {
        return (Role::Config, format!("defines only constants ({})", f.constants));
    }
    if named(&["main", "__main__", "manage", "cli", "program", "wsgi", "asgi"]) {
        return (Role::EntryPoint, format!("named like an entry point ({name})"));
    }
    if f.has_main {
        return (Role::EntryPoint, "defines main".into());
    }
    if f.fan_in == 0 && f.fan_out >= 3 {
        return (
            Role::EntryPoint,
            format!("nothing depends on it; it depends on {} files", f.fan_out),
        );
    }
    if named(&[
        "api",
        "apis",
        "routes",
        "router",
        "urls",
        "views",
        "handlers",
        "handler",
        "controllers",
        "controller",
        "endpoints",
        "interfaces",
        "interface",
        "protocols",
        "abc",
        "service",
        "services",
    ]) || in_dir(&["api", "routes", "handlers", "controllers", "endpoints"])
    {
        return (Role::Interface, format!("named like an API surface ({name})"));
    }
    if f.interfaces >= 1 && f.interfaces * 2 >= types.max(1) && f.interfaces >= f.functions {
        return (Role::Interface, format!("defines mostly interfaces/traits ({})", f.interfaces));
    }
    if named(&[
        "models", "model", "schema", "schemas", "entities", "entity", "types", "dto", "dtos",
        "domain", "records", "structs",
    ]) || in_dir(&["models", "entities", "schemas", "dto"])
    {
        return (Role::Model, format!("named like data definitions ({name})"));
    }
    if f.data_types >= 2 && f.data_types * 10 >= 6 * defs.saturating_sub(f.methods).max(1) {
        return (Role::Model, format!("defines mostly data types ({})", f.data_types));
    }
    if f.centrality >= 0.9 && f.fan_in >= 3 && f.fan_out >= 2 {
        return (
            Role::Core,
            format!(
                "a hub: top {:.0}% by PageRank, {} dependents, {} dependencies",
                (1.0 - f.centrality) * 100.0 + 1.0,
                f.fan_in,
                f.fan_out
            ),
        );
    }
    if f.fan_in >= 3 && f.fan_out <= 1 && f.functions >= f.data_types + f.classes {
        return (
            Role::Utility,
            format!("{} dependents, depends on {} file(s)", f.fan_in, f.fan_out),
        );
    }
    if named(&["utils", "util", "helpers", "helper", "common", "compat", "misc", "tools"])
        || in_dir(&["utils", "util", "helpers", "common"])
    {
        return (Role::Utility, format!("named like a utility ({name})"));
    }
    if f.centrality >= 0.95 && f.fan_in >= 1 {
        return (Role::Core, format!("among the 5% most central files ({} dependents)", f.fan_in));
    }
    // Several files depend on it: whatever its shape, not peripheral (requests'
    // cookies.py, with 7 dependents, was called "few dependents").
    if f.fan_in >= SEVERAL {
        return if f.fan_out * 2 <= f.fan_in {
            (Role::Utility, format!("{} dependents, depends on {} file(s)", f.fan_in, f.fan_out))
        } else {
            (Role::Core, format!("{} dependents, {} dependencies", f.fan_in, f.fan_out))
        };
    }
    (Role::Peripheral, format!("{} dependent(s), not central", f.fan_in))
}

/// From this many direct dependents a file is never peripheral, here and in the
/// pillars' roles.
pub const SEVERAL: u32 = 3;

/// The facts of every file.
pub(crate) fn file_facts(snapshot: &Snapshot, deps: &DepGraph) -> Vec<RoleFacts> {
    let project = &snapshot.project;
    let centrality = percentiles(&snapshot.file_rank);
    (0..project.files.len() as FileId)
        .map(|f| {
            let file = project.file(f);
            let mut facts = RoleFacts {
                path: file.path.clone(),
                test: test_convention(project, f)
                    .is_some_and(|(k, _)| k != crate::testfiles::TestKind::Inline),
                // Impact's distance 1 (see `impact::coupling`).
                fan_in: deps.dependents(f).len() as u32,
                fan_out: deps.out[f as usize].len() as u32,
                centrality: centrality.get(f as usize).copied().unwrap_or(0.0),
                ..RoleFacts::default()
            };
            for (ord, d) in file.defs.iter().enumerate() {
                let has_methods =
                    file.defs.iter().any(|c| c.parent == Some(ord as u32) && c.kind.is_callable());
                match d.kind {
                    SymbolKind::Function | SymbolKind::Macro if d.parent.is_none() => {
                        facts.functions += 1;
                        if project.names.name(d.name) == "main" {
                            facts.has_main = true;
                        }
                    }
                    SymbolKind::Function | SymbolKind::Method | SymbolKind::Macro => {
                        facts.methods += 1
                    }
                    SymbolKind::Class if has_methods => facts.classes += 1,
                    SymbolKind::Interface | SymbolKind::Trait => facts.interfaces += 1,
                    SymbolKind::Class
                    | SymbolKind::Struct
                    | SymbolKind::Union
                    | SymbolKind::Enum
                    | SymbolKind::Record
                    | SymbolKind::TypeAlias => facts.data_types += 1,
                    SymbolKind::Constant if d.parent.is_none() => facts.constants += 1,
                    _ => {}
                }
            }
            facts
        })
        .collect()
}

/// Each value's percentile (0..=1, ties share the lower one's).
pub(crate) fn percentiles(values: &[f64]) -> Vec<f64> {
    let n = values.len();
    if n <= 1 {
        return vec![1.0; n];
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut out = vec![0.0; n];
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        for &k in &order[i..=j] {
            out[k] = i as f64 / (n - 1) as f64;
        }
        i = j + 1;
    }
    out
}

/// The role of every file, with the reason.
pub fn file_roles(snapshot: &Snapshot) -> Vec<(Role, String)> {
    file_facts(snapshot, &DepGraph::build(snapshot)).iter().map(infer_role).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_table() {
        let base = |path: &str| RoleFacts { path: path.into(), ..RoleFacts::default() };
        let cases: Vec<(RoleFacts, Role)> = vec![
            (RoleFacts { test: true, ..base("tests/test_app.py") }, Role::Test),
            (base("app/settings.py"), Role::Config),
            (RoleFacts { constants: 4, ..base("app/limits.py") }, Role::Config),
            (RoleFacts { constants: 4, functions: 1, ..base("app/limits.py") }, Role::Peripheral),
            (base("manage.py"), Role::EntryPoint),
            (RoleFacts { has_main: true, ..base("cmd/tool/run.go") }, Role::EntryPoint),
            (RoleFacts { fan_out: 5, ..base("scripts/migrate.py") }, Role::EntryPoint),
            (RoleFacts { fan_in: 4, ..base("app/views.py") }, Role::Interface),
            (
                RoleFacts { interfaces: 3, data_types: 1, fan_in: 2, ..base("src/store.rs") },
                Role::Interface,
            ),
            (RoleFacts { fan_in: 9, ..base("app/models.py") }, Role::Model),
            (
                RoleFacts { data_types: 5, functions: 1, fan_in: 1, ..base("src/ast.rs") },
                Role::Model,
            ),
            (
                RoleFacts {
                    centrality: 0.97,
                    fan_in: 12,
                    fan_out: 6,
                    functions: 30,
                    ..base("src/engine.rs")
                },
                Role::Core,
            ),
            (
                RoleFacts { fan_in: 7, fan_out: 0, functions: 6, ..base("src/text.rs") },
                Role::Utility,
            ),
            (RoleFacts { fan_in: 1, fan_out: 1, ..base("app/utils/strings.py") }, Role::Utility),
            (
                RoleFacts {
                    centrality: 0.96,
                    fan_in: 1,
                    fan_out: 1,
                    functions: 3,
                    ..base("src/x.rs")
                },
                Role::Core,
            ),
            (
                RoleFacts { fan_in: 1, fan_out: 1, functions: 2, ..base("src/x.rs") },
                Role::Peripheral,
            ),
        ];
        for (facts, want) in cases {
            let (got, why) = infer_role(&facts);
            assert_eq!(got, want, "{}: {why}", facts.path);
            assert!(!why.is_empty());
        }
    }

    #[test]
    fn percentiles_share_ties() {
        assert_eq!(percentiles(&[0.1, 0.5, 0.1, 0.9]), vec![0.0, 2.0 / 3.0, 0.0, 1.0]);
        assert_eq!(percentiles(&[3.0]), vec![1.0]);
    }
}
