//! `navigate` on a small project in three languages (Python, TypeScript, Rust):
//! every action, snapshotted as `path:line  qualified_name  relation` lines.

use expect_test::{Expect, expect};
use protocol::{NavigateAction, NavigateRequest};
use test_support::TempProject;

use super::{call, open};

fn project() -> TempProject {
    TempProject::with_fixture(
        r#"
        //- shop/models.py
        class Base:
            def save(self):
                return store(self)


        class Order(Base):
            def total(self):
                return sum_lines(self.lines)


        class Refund(Order):
            def total(self):
                return -Order.total(self)


        def store(obj):
            return obj


        def sum_lines(lines):
            return sum(lines)
        //- shop/checkout.py
        from shop.models import Order, sum_lines


        def checkout(lines):
            order = Order()
            order.save()
            return sum_lines(lines)
        //- web/cart.ts
        export interface Priced {
          price(): number;
        }

        export class Item implements Priced {
          price(): number {
            return round(3.5);
          }
        }

        export class Gift extends Item {}

        export function round(x: number): number {
          return Math.round(x);
        }

        export function cartTotal(items: Priced[]): number {
          return items.map((i) => i.price()).reduce((a, b) => a + b, 0);
        }
        //- engine/src/lib.rs
        pub trait Shape {
            fn area(&self) -> f64;
        }

        pub struct Square(pub f64);

        impl Shape for Square {
            fn area(&self) -> f64 {
                square(self.0)
            }
        }

        fn square(x: f64) -> f64 {
            x * x
        }

        pub fn total_area(shapes: &[Box<dyn Shape>]) -> f64 {
            shapes.iter().map(|s| s.area()).sum()
        }
        "#,
    )
}

fn check(ws: &engine::Session, action: NavigateAction, target: &str, want: Expect) {
    let req =
        NavigateRequest { action, target: target.into(), depth: None, limit: None, path: None };
    let r = call(|c| ws.navigate(&req, c)).unwrap_or_else(|e| panic!("{target}: {e}"));
    let mut out = String::new();
    for d in &r.definitions {
        out +=
            &format!("def {}:{} {}\n", d.path, d.line, d.qualified_name.as_deref().unwrap_or("-"));
    }
    for l in &r.results {
        out += &format!(
            "  {}:{} {} {}\n",
            l.path,
            l.line,
            l.qualified_name.as_deref().unwrap_or("-"),
            l.relation.as_deref().unwrap_or("-")
        );
    }
    want.assert_eq(&out);
}

#[test]
fn definitions_across_languages() {
    let p = project();
    let ws = open(&p);
    check(
        &ws,
        NavigateAction::Definition,
        "Order.total",
        expect![[r#"
            def shop/models.py:7 Order.total
              shop/models.py:7 Order.total -
        "#]],
    );
    check(
        &ws,
        NavigateAction::Definition,
        "Item",
        expect![[r#"
            def web/cart.ts:5 Item
              web/cart.ts:5 Item -
        "#]],
    );
    check(
        &ws,
        NavigateAction::Definition,
        "square",
        expect![[r#"
            def engine/src/lib.rs:13 square
              engine/src/lib.rs:13 square -
        "#]],
    );
}

#[test]
fn references_callers_and_callees() {
    let p = project();
    let ws = open(&p);
    check(
        &ws,
        NavigateAction::References,
        "sum_lines",
        expect![[r#"
            def shop/models.py:20 sum_lines
              shop/checkout.py:1 - use/imported
              shop/checkout.py:7 checkout call/imported
              shop/models.py:8 Order.total call/same_file
        "#]],
    );
    check(
        &ws,
        NavigateAction::Callers,
        "store",
        expect![[r#"
            def shop/models.py:16 store
              shop/models.py:3 Base.save same_file
        "#]],
    );
    check(
        &ws,
        NavigateAction::Callees,
        "checkout",
        expect![[r#"
            def shop/checkout.py:4 checkout
              shop/models.py:6 Order imported
              shop/models.py:2 Base.save receiver
              shop/models.py:20 sum_lines imported
        "#]],
    );
    check(
        &ws,
        NavigateAction::Callers,
        "round",
        expect![[r#"
            def web/cart.ts:13 round
              web/cart.ts:7 Item.price same_file
        "#]],
    );
    check(
        &ws,
        NavigateAction::Callees,
        "Square.area",
        expect![[r#"
            def engine/src/lib.rs:8 Square::area
              engine/src/lib.rs:13 square same_file
        "#]],
    );
}

#[test]
fn implementations_and_type_hierarchy() {
    let p = project();
    let ws = open(&p);
    check(
        &ws,
        NavigateAction::Implementations,
        "Priced",
        expect![[r#"
            def web/cart.ts:1 Priced
              web/cart.ts:5 Item subtype
        "#]],
    );
    check(
        &ws,
        NavigateAction::Implementations,
        "Shape",
        expect![[r#"
            def engine/src/lib.rs:1 Shape
              engine/src/lib.rs:7 Square subtype
        "#]],
    );
    check(
        &ws,
        NavigateAction::Hierarchy,
        "Order",
        expect![[r#"
            def shop/models.py:6 Order
              shop/models.py:1 Base supertype
              shop/models.py:11 Refund subtype
        "#]],
    );
    check(
        &ws,
        NavigateAction::Hierarchy,
        "Item",
        expect![[r#"
            def web/cart.ts:5 Item
              web/cart.ts:1 Priced supertype
              web/cart.ts:11 Gift subtype
        "#]],
    );
}

#[test]
fn unknown_symbol_is_not_found_with_close_names() {
    let p = project();
    let ws = open(&p);
    let req = NavigateRequest {
        action: NavigateAction::Definition,
        target: "sum_line".into(),
        depth: None,
        limit: None,
        path: None,
    };
    let e = call(|c| ws.navigate(&req, c)).unwrap_err();
    let info = e.to_info();
    assert_eq!(info.code, protocol::ErrorCode::NotFound, "{info:?}");
    assert!(
        info.details.similar_names.iter().any(|n| n.contains("sum_lines")),
        "{:?}",
        info.details
    );
}

/// Issue 24: `{"target": "add"}` failed with "missing field `action`". Without an
/// action, navigate answers what a user means: the definition and its references.
#[test]
fn without_an_action_navigate_gives_the_definition_and_its_references() {
    let p = project();
    let ws = open(&p);
    let req: NavigateRequest = serde_json::from_str(r#"{"target": "sum_lines"}"#).unwrap();
    assert_eq!(req.action, NavigateAction::References);
    let r = call(|c| ws.navigate(&req, c)).unwrap();
    assert_eq!(r.definitions.len(), 1, "{r:?}");
    assert_eq!(r.definitions[0].qualified_name.as_deref(), Some("sum_lines"));
    let users: Vec<&str> = r.results.iter().map(|l| l.path.as_str()).collect();
    assert!(users.contains(&"shop/checkout.py") && users.contains(&"shop/models.py"), "{users:?}");
}
