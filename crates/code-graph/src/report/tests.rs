//! Reports on a fixture with a synthetic history; insight rules as a table.

use expect_test::expect;
use protocol::{Churn, ChurnWindow, CommitTouch, FileChurn};

use super::*;
use crate::{fixture::fixture, impact::Radius};

const APP: &str = r#"
    //- app/__init__.py
    //- app/models.py
    class Order:
        def total(self):
            return sum(i.price for i in self.items)

    class Item:
        pass
    //- app/pricing.py
    from app.models import Order
    from app.tax import rate

    def price(order):
        if order is None:
            return 0
        return Order.total(order) * (1 + rate())
    //- app/tax.py
    from app.pricing import price

    def rate():
        return 0.2

    def with_tax(order):
        return price(order)
    //- app/views.py
    from app.pricing import price
    from app.models import Order

    def checkout(request):
        order = Order()
        if request.ok and order:
            return price(order)
        return None
    //- app/main.py
    from app.views import checkout

    def main():
        checkout(None)
    //- tests/test_pricing.py
    from app.pricing import price

    def test_price():
        assert price(None) == 0
    //- static/vendor/lib.min.js
    function a(){return 1}
"#;

fn churn() -> Churn {
    let file = |path: &str, commits: u32, lines: u64| FileChurn {
        path: path.into(),
        commits,
        added: lines,
        deleted: 0,
        authors: 1,
        last_change: 1_700_000_000,
        first_change: 1_690_000_000,
        binary: false,
        changes: (0..commits)
            .map(|i| CommitTouch {
                time: 1_700_000_000 - i64::from(i) * 86_400,
                added: 1,
                deleted: 0,
                lines: vec![],
            })
            .collect(),
    };
    let mut files = vec![
        file("app/pricing.py", 9, 300),
        file("app/tax.py", 4, 40),
        file("app/views.py", 3, 20),
        file("app/models.py", 1, 5),
        file("tests/test_pricing.py", 2, 10),
    ];
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Churn {
        available: true,
        window: ChurnWindow::default(),
        commits: 12,
        newest: Some(1_700_000_000),
        oldest: Some(1_690_000_000),
        files,
        ..Churn::default()
    }
}

#[test]
fn markdown_report_with_history() {
    let fx = fixture(APP);
    let r = report(
        &fx.snapshot,
        Some(&churn()),
        &fx.sources,
        &ReportOptions { title: "app".into(), top: 5, ..ReportOptions::default() },
    );
    expect![[r##"
        # Architecture report: app

        _From the index (8 files) and git history: 12 commits._

        ## Overview

        | | |
        |---|---|
        | files | 8 (1 tests, 1 vendored) |
        | lines | 37 |
        | definitions | 10 |
        | imports between files | 7 |
        | references between definitions | 16 |
        | languages | python 7 files / 36 lines, javascript 1 files / 1 lines |

        ## Most central files

        PageRank over the file dependency graph; roles are inferred from graph position, contents and names.

        | # | file | role | why | dependents | dependencies | lines |
        |---|---|---|---|---|---|---|
        | 1 | `app/pricing.py` | core | a hub: top 1% by PageRank, 3 dependents, 2 dependencies | 3 | 2 | 7 |
        | 2 | `app/models.py` | model | named like data definitions (models.py) | 2 | 0 | 6 |
        | 3 | `app/tax.py` | peripheral | 1 dependent(s), not central | 1 | 1 | 7 |
        | 4 | `app/views.py` | interface | named like an API surface (views.py) | 1 | 2 | 8 |
        | 5 | `app/__init__.py` | peripheral | 0 dependent(s), not central | 0 | 0 | 0 |

        ## Most central definitions

        | # | definition | kind | role | used by files | where |
        |---|---|---|---|---|---|
        | 1 | `Order` | class | core | 2 | `app/models.py:1` |
        | 2 | `price` | function | core | 3 | `app/pricing.py:4` |
        | 3 | `Order.total` | method | core | 1 | `app/models.py:2` |
        | 4 | `checkout` | function | core | 1 | `app/views.py:4` |
        | 5 | `rate` | function | core | 1 | `app/tax.py:3` |

        ## Roles

        | role | files | share |
        |---|---|---|
        | entry point | 1 | 14% |
        | core | 1 | 14% |
        | interface | 1 | 14% |
        | model | 1 | 14% |
        | test | 1 | 14% |
        | peripheral | 2 | 29% |

        ## Hotspots

        Churn × (complexity and fan-in): code that changes often and is hard to change.

        | # | file | score | commits | changed lines | decisions | max cyclomatic | dependents |
        |---|---|---|---|---|---|---|---|
        | 1 | `app/pricing.py` | 0.932 | 9 | 300 | 1 | 2 | 3 |
        | 2 | `app/views.py` | 0.525 | 3 | 20 | 2 | 3 | 1 |
        | 3 | `app/tax.py` | 0.501 | 4 | 40 | 0 | 1 | 1 |
        | 4 | `app/models.py` | 0.271 | 1 | 5 | 1 | 2 | 2 |
        | 5 | `tests/test_pricing.py` (test) | 0.141 | 2 | 10 | 0 | 1 | 0 |

        The top 10% of changed files hold 80% of the changed lines.

        ### Hotspot clusters

        Hotspots that depend on each other change together.

        - `./` — 5 files, 6 dependencies among them, score 2.37: `app/pricing.py`, `app/views.py`, `app/tax.py`, `app/models.py`, `tests/test_pricing.py`

        ## Blast radius

        Files whose changes reach furthest (definition-level reverse dependencies).

        | file | direct | within 3 | total | share | risk | tests |
        |---|---|---|---|---|---|---|
        | `app/models.py` | 2 | 5 | 5 | 62.5% | high | 1 |
        | `app/pricing.py` | 3 | 4 | 4 | 50.0% | medium | 1 |
        | `app/tax.py` | 1 | 4 | 4 | 50.0% | medium | 1 |
        | `app/views.py` | 1 | 1 | 1 | 12.5% | low | 0 |

        ## Import cycles

        - `app/pricing.py` ⇄ `app/tax.py`

        ## Insights

        - **[high] 1 file(s) with a high blast radius** (`app/models.py`) — app/models.py reaches 5 files (62% of the project, 2 directly) _Run `ironbees impact FILE` before changing these and the listed tests after; keep their interfaces stable._
        - **[high] Change is concentrated in few files** (`app/pricing.py`) — The top 10% of changed files hold 80% of the changed lines. _These files are where refactoring pays off first: simplify their most complex functions and cover them with tests._
        - **[medium] 1 hotspot(s) without tests** (`app/views.py`) — No test file reaches these hotspots through references or imports, and none is named after them. _Add tests before the next change to these files._
        - **[medium] Import cycle of 2 files** — app/pricing.py, app/tax.py import each other. _Break the cycle: move what both sides need into a module both import, or import lazily where it is used._

        ## Module map

        Directories (or, in a small project, files) and the file dependencies between them; red: hotspots, teal: the most central files.

        ```mermaid
        flowchart LR
          m0["app/__init__.py"]:::core
          m1["app/main.py"]
          m2["app/models.py"]:::hotspot
          m3["app/pricing.py"]:::hotspot
          m4["app/tax.py"]:::hotspot
          m5["app/views.py"]:::hotspot
          m1 --> m5
          m3 --> m2
          m3 --> m4
          m4 --> m3
          m5 --> m2
          m5 --> m3
          classDef hotspot fill:#ff6b6b,stroke:#333
          classDef core fill:#4ecdc4,stroke:#333
        ```
    "##]].assert_eq(&r.to_markdown());
    // The JSON has the same content.
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["cycles"][0], serde_json::json!(["app/pricing.py", "app/tax.py"]));
    assert_eq!(json["overview"]["vendored_files"], 1);
    assert!(json["mermaid"].as_str().unwrap().starts_with("flowchart LR\n"));
}

#[test]
fn without_history_the_report_says_so() {
    let fx = fixture(APP);
    let r = report(&fx.snapshot, None, &fx.sources, &ReportOptions::default());
    assert_eq!(r.hotspot_basis, HotspotBasis::Structure);
    assert!(r.concentration.is_none());
    let md = r.to_markdown();
    assert!(md.contains("no git history (history was not read)"), "{md}");
    assert!(md.contains("No history: ranked by complexity and fan-in only."));
    assert!(r.insights.iter().all(|i| i.kind != InsightKind::HotspotConcentration));
}

fn facts(path: &str, fan_in: u32, fan_out: u32, functions: u32) -> RoleFacts {
    RoleFacts { path: path.into(), fan_in, fan_out, functions, ..RoleFacts::default() }
}

#[test]
fn insight_rules() {
    // Twelve files; big.py is in the top decile for everything.
    let mut files: Vec<RoleFacts> =
        (0..11).map(|i| facts(&format!("m{i}.py"), i % 3, i % 4, 3)).collect();
    files.push(facts("big.py", 16, 18, 40));
    let n = files.len();
    let blast = |path: &str, total: u32, risk: Risk| BlastRadius {
        path: path.into(),
        radius: Radius {
            direct: 2,
            within_2: total,
            within_3: total,
            total,
            weighted: 1.0,
            share: 0.5,
            risk,
        },
        tests: 0,
    };
    let cycles = vec![vec!["m1.py".to_owned(), "m2.py".to_owned()]];
    let langs = vec![Language::Python; n];
    let paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
    let f = InsightFacts {
        files: &files,
        vendored: &vec![false; n],
        blast: &[blast("big.py", 9, Risk::High), blast("m3.py", 2, Risk::Low)],
        concentration: Some(0.8),
        concentrated: &["big.py".to_owned()],
        untested: &["m4.py".to_owned()],
        cycles: &cycles,
        languages: &langs,
        paths: &paths,
    };
    let got: Vec<String> = insights(&f)
        .iter()
        .map(|i| format!("{:?} {:?} {:?}", i.severity, i.kind, i.files))
        .collect();
    expect![[r#"
        High GodModule ["big.py"]
        High HighBlastRadius ["big.py"]
        High HotspotConcentration ["big.py"]
        Medium UntestedHotspot ["m4.py"]
        Medium DependencyCycle ["m1.py", "m2.py"]"#]]
    .assert_eq(&got.join("\n"));
    // Without concentration, cycles in Rust are low, and a small project has no god
    // module.
    let langs = vec![Language::Rust; n];
    let quiet = InsightFacts {
        concentration: Some(0.3),
        untested: &[],
        blast: &[],
        languages: &langs,
        files: &files[..9],
        vendored: &[false; 9],
        ..f
    };
    let got: Vec<String> =
        insights(&quiet).iter().map(|i| format!("{:?} {:?}", i.severity, i.kind)).collect();
    assert_eq!(got, ["Low DependencyCycle"]);
}

#[test]
fn symbol_roles_table() {
    let cases = [
        (SymbolKind::Function, "main", false, 0, 9, Role::EntryPoint),
        (SymbolKind::Trait, "Store", false, 5, 0, Role::Interface),
        (SymbolKind::Struct, "Point", false, 9, 0, Role::Model),
        (SymbolKind::Class, "Row", false, 9, 0, Role::Model),
        (SymbolKind::Class, "Engine", true, 9, 9, Role::Core),
        (SymbolKind::Function, "slugify", false, 5, 1, Role::Utility),
        (SymbolKind::Function, "dispatch", false, 5, 7, Role::Core),
        (SymbolKind::Constant, "MAX", false, 5, 0, Role::Config),
    ];
    for (kind, name, methods, used, calls, want) in cases {
        assert_eq!(symbol_role(kind, name, methods, used, calls), want, "{name}");
    }
}

#[test]
fn the_module_map_draws_test_directories() {
    // Issue 24: requests' map had 4 boxes and no links (its tests, the only code
    // depending on the package, were left out).
    let fx = fixture(
        r#"
        //- setup.py
        def setup():
            pass
        //- docs/conf.py
        project = "requests"
        //- docs/_themes/flask_theme_support.py
        class FlaskyStyle:
            pass
        //- src/requests/__init__.py
        //- src/requests/api.py
        from requests.sessions import Session

        def get(url):
            return Session().get(url)
        //- src/requests/sessions.py
        class Session:
            def get(self, url):
                return url
        //- tests/test_requests.py
        from requests.api import get
        from requests.sessions import Session

        def test_get():
            assert get("u") == Session().get("u")
        "#,
    );
    let r = report(&fx.snapshot, None, &fx.sources, &ReportOptions::default());
    expect![[r#"
        flowchart LR
          m0["(root)<br/><small>1 files</small>"]:::hotspot
          m1["docs<br/><small>1 files</small>"]:::hotspot
          m2["docs/_themes<br/><small>1 files</small>"]:::hotspot
          m3["src/requests<br/><small>3 files</small>"]:::hotspot
          m4["tests<br/><small>1 files</small>"]:::test
          m4 -->|2| m3
          classDef hotspot fill:#ff6b6b,stroke:#333
          classDef core fill:#4ecdc4,stroke:#333
          classDef test fill:#eeeeee,stroke:#999,stroke-dasharray:3 3
    "#]]
    .assert_eq(&r.mermaid);
}
