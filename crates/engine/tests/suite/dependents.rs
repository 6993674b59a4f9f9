//! One definition of dependents: `impact`, `understand` and the report's roles count
//! the same files (issue 24: requests' models.py had 12 direct dependents in
//! `impact` and 16 in `understand`; cookies.py, with 7, was "peripheral — few
//! dependents", and sessions.py "Low risk: change it directly").

use code_graph::{ImpactOptions, ReportOptions, Snapshot, TargetOptions};
use code_index::{Index, IndexConfig, NoProgress};
use protocol::{ArchitecturalRole, UnderstandRequest};
use serde_json::json;
use test_support::TempProject;

use super::{call, open};

/// A package whose `structures.py` (classes, depending on two files) is used by
/// five files, plus a tutorial whose `update` view shares its name with a dict
/// method called all over the package (`config.update(..)`: no dependency).
fn project() -> TempProject {
    let p = TempProject::new();
    p.write("pkg/__init__.py", "");
    p.write("pkg/compat.py", "def to_str(x):\n    return str(x)\n");
    p.write("pkg/hooks.py", "def default_hooks():\n    return {}\n");
    p.write(
        "pkg/structures.py",
        "from pkg.compat import to_str\nfrom pkg.hooks import default_hooks\n\n\n\
         class CaseInsensitiveDict:\n    def lower_items(self):\n        return to_str(default_hooks())\n\n\n\
         class LookupDict:\n    def get(self, key):\n        return None\n",
    );
    for (name, extra) in [
        ("cookies", ""),
        ("models", "\nfrom pkg.cookies import jar\n"),
        ("adapters", "\nfrom pkg.models import make\n"),
        ("sessions", "\nfrom pkg.adapters import make\nfrom pkg.models import make as m2\n"),
        ("utils", ""),
    ] {
        p.write(
            &format!("pkg/{name}.py"),
            format!(
                "from pkg.structures import CaseInsensitiveDict\n{extra}\n\n\
                 def make(config):\n    config.update(1)\n    return CaseInsensitiveDict()\n\n\n\
                 def jar():\n    return 1\n"
            ),
        );
    }
    p.write(
        "tests/test_sessions.py",
        "from pkg.sessions import make\n\n\ndef test_make():\n    make({})\n",
    );
    p.write("examples/flaskr/blog.py", "def update(id):\n    return id\n");
    p
}

#[test]
fn impact_understand_and_roles_count_the_same_dependents() {
    let p = project();
    let ws = open(&p);
    let mut index = Index::open(p.root(), IndexConfig::default()).unwrap();
    index
        .update(&code_index::Call::new(&NoProgress, &code_index::CancellationToken::new()))
        .unwrap();
    let snap = Snapshot::load(&index).unwrap();
    let report = code_graph::report(
        &snap,
        None,
        &index.sources(),
        &ReportOptions { top: 50, ..Default::default() },
    );
    let files: Vec<String> = snap.project.files.iter().map(|f| f.path.clone()).collect();
    let mut checked = 0;
    for path in files.iter().filter(|p| p.starts_with("pkg/") || p.starts_with("examples/")) {
        let target =
            code_graph::resolve_target(&snap.project, path, &TargetOptions::default()).unwrap();
        let impact = code_graph::impact(&snap, &target, &ImpactOptions::default());
        let req: UnderstandRequest =
            serde_json::from_value(json!({"target": path, "depth": "standard"})).unwrap();
        let resp = call(|c| ws.understand(&req, c)).unwrap();
        let fi = &resp.files[0];
        let rep = fi.report.as_ref().unwrap();
        let radius = fi.impact.as_ref().unwrap();
        let within_2 = impact.dependents.iter().filter(|d| d.distance <= 2).count() as u32;
        assert_eq!(rep.complexity.fan_in, impact.radius.direct, "{path}: understand's fan-in");
        assert_eq!(radius.direct, impact.radius.direct, "{path}: understand's direct dependents");
        assert_eq!(radius.transitive, within_2, "{path}: understand's dependents within 2");
        assert_eq!(fi.dependents.len() as u32, impact.radius.direct, "{path}: understand's list");
        if let Some(row) = report.top_files.iter().find(|r| &r.path == path) {
            assert_eq!(row.fan_in, impact.radius.direct, "{path}: the report's fan-in");
            if impact.radius.direct >= code_graph::SEVERAL_DEPENDENTS {
                assert_ne!(row.role, code_graph::Role::Peripheral, "{path}: {}", row.why);
            }
            checked += 1;
        }
        if impact.radius.direct >= code_graph::SEVERAL_DEPENDENTS {
            assert_ne!(rep.architectural_role, ArchitecturalRole::Peripheral, "{path}");
            assert!(
                !rep.recommendations.iter().any(|r| r.starts_with("Low risk")),
                "{path}: {rep:?}"
            );
        }
    }
    assert!(checked >= 8, "{checked} files checked against the report");
    // The numbers themselves: structures.py has the five modules as dependents, and
    // nothing depends on the tutorial (`config.update(..)` is a dict's).
    let direct = |path: &str| {
        let t = code_graph::resolve_target(&snap.project, path, &TargetOptions::default()).unwrap();
        code_graph::impact(&snap, &t, &ImpactOptions::default()).radius.direct
    };
    assert_eq!(direct("pkg/structures.py"), 5);
    assert_eq!(direct("examples/flaskr/blog.py"), 0);
}
