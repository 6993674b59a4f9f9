//! An update is checked against the oracle, a build from scratch of the same
//! files: the same edges, file graph, imports, lookups and ranks, written out
//! by name (the two number names differently).

use std::{fmt::Write as _, sync::Arc};

use code_index::{Index, IndexConfig, NoProgress};
use test_support::TempProject;

use crate::{Decoded, Derivation, Snapshot, SnapshotInputs};

const BASE: &str = r#"
//- shop/__init__.py
//- shop/models.py
from shop.prices import total

class Base:
    def save(self):
        return 1

class Other:
    def save(self):
        return 2

class Order(Base):
    def checkout(self, items):
        """Charges the customer."""
        self.save()
        return total(items)

def make_order() -> Order:
    return Order()
//- shop/prices.py
def total(items):
    return sum(items) - discount(items)

def discount(items):
    return 0
//- shop/views.py
from shop.models import make_order, Order
from shop import prices
import shop.extra

def view(order: Order):
    order.save()
    make_order().checkout([])
    return prices.total([])

def helper():
    return undefined_yet()
//- tests/test_views.py
from shop.views import view

def test_view():
    view(None)
//- Cargo.toml
[package]
name = "calc"
version = "0.1.0"
//- src/lib.rs
mod ops;
pub fn run() -> i64 { ops::add(1, 2) }
//- src/ops.rs
pub fn add(a: i64, b: i64) -> i64 { a + b }
//- web/app.ts
import { render } from "./view";
export function main() { render(); }
//- web/view.ts
export function render() {}
"#;

fn index(p: &TempProject) -> Index {
    let mut index = Index::open(p.root(), IndexConfig::default()).unwrap();
    index
        .update(&code_index::Call::new(&NoProgress, &code_index::CancellationToken::new()))
        .unwrap();
    index
}

/// The snapshot as stored and read back (edges and lookups still encoded),
/// as an update finds it.
fn stored(snap: &Snapshot, inputs: &SnapshotInputs) -> Snapshot {
    let bytes = snap.encode(&inputs.key, &inputs.base);
    match Snapshot::decode(Arc::new(bytes), &[0; 32], &inputs.base) {
        Some(Decoded::Earlier(s)) => s,
        _ => panic!("decodes as an earlier snapshot"),
    }
}

/// Everything a snapshot says, by name.
fn render(s: &Snapshot) -> String {
    let p = &s.project;
    let def = |d: code_index::DefId| {
        format!("{}:{}#{}", p.file(d.file).path, p.def(d).qualified_name, d.ord)
    };
    let mut out = String::new();
    for (f, file) in p.files.iter().enumerate() {
        let f = f as u32;
        writeln!(
            out,
            "file {} {} {:?} rank {:?}",
            file.path, file.hash, file.language, s.file_rank[f as usize]
        )
        .unwrap();
        for d in &file.defs {
            writeln!(
                out,
                "  def {} {:?} {:?} {:?}",
                p.names.name(d.name),
                d.kind,
                d.parent,
                d.qualified_name
            )
            .unwrap();
        }
        writeln!(out, "  imports {:?}", s.graphs.imports[f as usize]).unwrap();
        writeln!(
            out,
            "  file_imports {:?} externals {:?}",
            s.graphs.file_imports[f as usize], s.graphs.externals[f as usize]
        )
        .unwrap();
        writeln!(out, "  out {:?}", s.graphs.file_out[f as usize]).unwrap();
        writeln!(out, "  in {:?}", s.graphs.file_in[f as usize]).unwrap();
        let asked = s.graphs.aid().0;
        let mut names: Vec<&str> =
            asked.of(f).iter().map(|&i| asked.names[i as usize].as_str()).collect();
        names.sort_unstable();
        writeln!(out, "  asked {names:?}").unwrap();
    }
    for e in s.graphs.symbol_edges() {
        writeln!(
            out,
            "edge {} {} -> {} {:?} {:?} {:?} line {}",
            p.file(e.from_file).path,
            e.from.map_or("<top>".to_owned(), def),
            def(e.to),
            e.kind,
            e.resolution,
            e.weight,
            e.line
        )
        .unwrap();
    }
    out
}

/// Applies `edit` to the project, updates the stored snapshot and builds one
/// from scratch; they must say the same. Returns the update's derivation.
fn check_update(p: &TempProject, edit: impl FnOnce(&TempProject)) -> Derivation {
    let mut idx = index(p);
    let inputs = Snapshot::inputs(&idx).unwrap();
    let before = Snapshot::load(&idx).unwrap();
    let earlier = stored(&before, &inputs);
    edit(p);
    idx.update(&code_index::Call::new(&NoProgress, &code_index::CancellationToken::new())).unwrap();
    let (updated, how) =
        Snapshot::derive(&idx, Snapshot::inputs(&idx).unwrap(), Some(earlier)).unwrap();
    let scratch = Snapshot::load(&idx).unwrap();
    let (a, b) = (render(&scratch), render(&updated));
    if a != b {
        let diff: Vec<String> = a
            .lines()
            .zip(b.lines())
            .filter(|(x, y)| x != y)
            .take(10)
            .map(|(x, y)| format!("scratch: {x}\nupdated: {y}"))
            .collect();
        panic!("update differs from a build from scratch ({how:?}):\n{}", diff.join("\n"));
    }
    assert!(a.contains("edge "), "the fixture has edges");
    how
}

fn updated(how: Derivation) -> (usize, usize) {
    match how {
        Derivation::Updated { changed, resolved } => (changed, resolved),
        Derivation::Built => panic!("built from scratch"),
    }
}

#[test]
fn a_change_inside_bodies_resolves_only_that_file() {
    let p = TempProject::with_fixture(BASE);
    let how = check_update(&p, |p| {
        let text = p.read("shop/prices.py").replace("return 0", "return total([]) * 0");
        p.write("shop/prices.py", text + "\n# touched\n");
    });
    assert_eq!(updated(how), (1, 1));
}

#[test]
fn nothing_changed_resolves_nothing() {
    let p = TempProject::with_fixture(BASE);
    let how = check_update(&p, |_| {});
    assert_eq!(updated(how), (0, 0));
}

#[test]
fn every_kind_of_change_gives_what_a_build_from_scratch_gives() {
    #[allow(clippy::type_complexity)]
    let edits: &[(&str, fn(&TempProject))] = &[
        ("a definition others call appears", |p| {
            let t = p.read("shop/prices.py") + "\ndef undefined_yet():\n    return 3\n";
            p.write("shop/prices.py", t);
        }),
        ("a definition others call goes", |p| {
            let t = p.read("shop/prices.py").replace("def discount(items):\n    return 0\n", "");
            p.write("shop/prices.py", t);
        }),
        ("a definition moves down its file", |p| {
            let t = p.read("shop/prices.py");
            p.write("shop/prices.py", format!("def first():\n    return 0\n\n{t}"));
        }),
        ("a base class changes", |p| {
            let t = p.read("shop/models.py").replace("class Order(Base):", "class Order(Other):");
            p.write("shop/models.py", t);
        }),
        ("a return type changes", |p| {
            let t = p
                .read("shop/models.py")
                .replace("def make_order() -> Order:", "def make_order() -> Other:");
            p.write("shop/models.py", t);
        }),
        ("an import changes", |p| {
            let t = p
                .read("shop/views.py")
                .replace("from shop import prices", "import shop.prices as prices");
            p.write("shop/views.py", t);
        }),
        ("a file appears that an import now finds", |p| {
            p.write("shop/util.py", "def undefined_yet():\n    return 1\n");
            let t = p.read("shop/views.py").replace(
                "from shop import prices",
                "from shop import prices\nfrom shop.util import undefined_yet",
            );
            p.write("shop/views.py", t);
        }),
        ("a module without definitions appears that an import finds", |p| {
            p.write("shop/extra.py", "# nothing defined here yet\n");
        }),
        ("a module appears", |p| {
            p.write("shop/discounts.py", "def discount(items):\n    return 5\n");
        }),
        ("a file goes", |p| {
            std::fs::remove_file(p.path("shop/prices.py")).unwrap();
        }),
        ("a file is renamed", |p| {
            let t = p.read("shop/prices.py");
            std::fs::remove_file(p.path("shop/prices.py")).unwrap();
            p.write("shop/pricing.py", t);
        }),
        ("a Rust function moves between modules", |p| {
            p.write("src/ops.rs", "pub fn sub(a: i64, b: i64) -> i64 { a - b }\n");
            p.write("src/lib.rs", "mod ops;\npub fn add(a: i64, b: i64) -> i64 { a + b }\npub fn run() -> i64 { ops::add(1, 2) + add(1, 1) }\n");
        }),
        ("a TypeScript export is renamed", |p| {
            p.write("web/view.ts", "export function paint() {}\n");
        }),
    ];
    for (what, edit) in edits {
        let p = TempProject::with_fixture(BASE);
        let how = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_update(&p, edit)));
        match how {
            Ok(how) => {
                let (changed, resolved) = updated(how);
                assert!(changed >= 1 && resolved >= changed.min(1), "{what}: {how:?}");
            }
            Err(e) => std::panic::resume_unwind(Box::new(format!(
                "{what}: {}",
                e.downcast_ref::<String>().cloned().unwrap_or_default()
            ))),
        }
    }
}

#[test]
fn updates_of_updates_stay_exact() {
    let p = TempProject::with_fixture(BASE);
    let mut idx = index(&p);
    let cancel = code_index::CancellationToken::new();
    let call = || code_index::Call::new(&NoProgress, &cancel);
    let inputs = Snapshot::inputs(&idx).unwrap();
    let mut snap = stored(&Snapshot::load(&idx).unwrap(), &inputs);
    let steps: &[fn(&TempProject)] = &[
        |p| p.write("shop/util.py", "def helper2():\n    return discount([])\n"),
        |p| {
            let t = p.read("shop/views.py") + "\ndef more():\n    return helper2()\n";
            p.write("shop/views.py", t);
        },
        |p| {
            let t = p.read("shop/prices.py").replace("def discount", "def discount_of");
            p.write("shop/prices.py", t);
        },
        |p| std::fs::remove_file(p.path("shop/util.py")).unwrap(),
    ];
    for step in steps {
        step(&p);
        idx.update(&call()).unwrap();
        let inputs = Snapshot::inputs(&idx).unwrap();
        let (updated, how) =
            Snapshot::derive(&idx, Snapshot::inputs(&idx).unwrap(), Some(snap)).unwrap();
        assert!(matches!(how, Derivation::Updated { .. }), "{how:?}");
        assert_eq!(render(&Snapshot::load(&idx).unwrap()), render(&updated));
        snap = stored(&updated, &inputs);
    }
}

/// Past a quarter of the files changed, the update gives up: a build from
/// scratch is as cheap.
#[test]
fn too_many_changes_build_from_scratch() {
    let p = TempProject::with_fixture(BASE);
    let how = check_update(&p, |p| {
        for f in ["shop/prices.py", "shop/models.py", "shop/views.py", "src/ops.rs"] {
            let t = p.read(f) + "\n// x\n";
            p.write(f, t.replace("// x", if f.ends_with(".py") { "# x" } else { "// x" }));
        }
    });
    assert_eq!(how, Derivation::Built);
}
