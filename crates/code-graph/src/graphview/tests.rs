//! Graph queries on a fixture: one target, one query, the rendered tree.

use expect_test::{Expect, expect};

use super::*;
use crate::{
    fixture::fixture,
    target::{TargetOptions, resolve_target},
};

const SHOP: &str = r#"
    //- shop/__init__.py
    //- shop/cart.py
    from shop.pricing import price_of, Discount

    class Cart:
        def add(self, item):
            self.items.append(item)
            self.total()

        def total(self):
            d = Discount()
            return sum(price_of(i) for i in self.items) - d.amount()

    def helper():
        return Cart().total()
    //- shop/pricing.py
    import json

    class Discount:
        def amount(self):
            return 0

    def price_of(item):
        return item.price
    //- shop/report.py
    import shop.cart

    def report():
        c = shop.cart.Cart()
        return c.total() + render()

    def render():
        return helper()
    //- other/helpers.py
    def helper():
        return 2
    //- other/misc.py
    def amount_of(x):
        return x.amount()

    def audit():
        return amount_of(1)
"#;

fn check(target: &str, query: GraphQuery, depth: u32, expect: Expect) {
    let fx = fixture(SHOP);
    let t = resolve_target(&fx.snapshot.project, target, &TargetOptions::default()).unwrap();
    let opts = GraphOptions { depth, ..GraphOptions::default() };
    let view = graph_view(&fx.snapshot, &t, query, &opts);
    expect.assert_eq(&view.render_tree());
}

#[test]
fn file_dependencies_and_dependents() {
    check(
        "shop/report.py",
        GraphQuery::Deps,
        3,
        expect![[r#"
        shop/report.py
        └─ shop/cart.py  [import]
           └─ shop/pricing.py  [import]
    "#]],
    );
    check(
        "shop/pricing.py",
        GraphQuery::Dependents,
        3,
        expect![[r#"
        shop/pricing.py
        └─ shop/cart.py  [import]
           └─ shop/report.py  [import]
    "#]],
    );
}

#[test]
fn calls_of_a_file_and_call_trees() {
    check(
        "shop/cart.py",
        GraphQuery::Calls,
        1,
        expect![[r#"
            shop/cart.py:4 Cart.add (method)
            └─ shop/cart.py:8 Cart.total  [call, local, line 6]
            shop/cart.py:8 Cart.total (method)
            ├─ shop/pricing.py:3 Discount  [call, imported, line 9]
            ├─ shop/pricing.py:7 price_of  [call, imported, line 10]
            └─ shop/pricing.py:4 Discount.amount  [call, receiver, line 10]
            shop/cart.py:12 helper (function)
            ├─ shop/cart.py:3 Cart  [call, samefile, line 13]
            └─ shop/cart.py:8 Cart.total  [call, receiver, line 13]
        "#]],
    );
    // `amount_of` is a guess (`x.amount()`, matched by name): shown, not walked
    // through, so `audit`, its caller, is not in the tree.
    check(
        "Discount.amount",
        GraphQuery::Callers,
        3,
        expect![[r#"
            shop/pricing.py:4 Discount.amount (method)
            ├─ shop/cart.py:8 Cart.total  [call, receiver, line 10]
            │  ├─ shop/cart.py:4 Cart.add  [call, local, line 6]
            │  ├─ shop/cart.py:12 helper  [call, receiver, line 13]
            │  │  └─ shop/report.py:7 render  [call, imported, line 8]
            │  └─ shop/report.py:3 report  [call, receiver, line 5]
            └─ other/misc.py:1 amount_of  [call, nameonly, guess, line 2]
        "#]],
    );
    check(
        "report",
        GraphQuery::Callees,
        2,
        expect![[r#"
            shop/report.py:3 report (function)
            ├─ shop/cart.py:3 Cart  [call, imported, line 4]
            ├─ shop/cart.py:8 Cart.total  [call, receiver, line 5]
            │  ├─ shop/pricing.py:3 Discount  [call, imported, line 9]
            │  ├─ shop/pricing.py:7 price_of  [call, imported, line 10]
            │  └─ shop/pricing.py:4 Discount.amount  [call, receiver, line 10]
            └─ shop/report.py:7 render  [call, samefile, line 5]
               └─ shop/cart.py:12 helper  [call, imported, line 8]
        "#]],
    );
}

#[test]
fn symbol_dependencies() {
    check(
        "Cart.total",
        GraphQuery::Deps,
        1,
        expect![[r#"
            shop/cart.py:8 Cart.total (method)
            ├─ shop/pricing.py:3 Discount  [call, imported, line 9]
            ├─ shop/pricing.py:7 price_of  [call, imported, line 10]
            └─ shop/pricing.py:4 Discount.amount  [call, receiver, line 10]
        "#]],
    );
}

#[test]
fn mermaid_and_limits() {
    let fx = fixture(SHOP);
    let t = resolve_target(&fx.snapshot.project, "report", &TargetOptions::default()).unwrap();
    let view = graph_view(
        &fx.snapshot,
        &t,
        GraphQuery::Callees,
        &GraphOptions { depth: 1, ..GraphOptions::default() },
    );
    expect![[r#"
        flowchart LR
          n0["report<br/><small>shop/report.py</small>"]
          n1["Cart<br/><small>shop/cart.py</small>"]
          n2["Cart.total<br/><small>shop/cart.py</small>"]
          n3["render<br/><small>shop/report.py</small>"]
          n0 -->|calls| n1
          n0 -->|calls| n2
          n0 -->|calls| n3
          classDef target fill:#ffd166,stroke:#333
          class n0 target
    "#]]
    .assert_eq(&view.to_mermaid());
    let small = graph_view(
        &fx.snapshot,
        &t,
        GraphQuery::Callees,
        &GraphOptions { depth: 5, max_nodes: 2, include_guesses: true },
    );
    assert!(small.truncated);
    assert_eq!(small.nodes.len(), 2);
    assert_eq!(mermaid_escape(r#"a"<b>"#), "a#quot;#lt;b#gt;");
}
