//! Impact on multi-file fixtures: one fixture, one target, one expectation.

use expect_test::{Expect, expect};

use super::*;
use crate::{
    fixture::fixture,
    target::{TargetOptions, resolve_target},
};

fn check(fixture_text: &str, target: &str, expect: Expect) {
    let fx = fixture(fixture_text);
    let project = &fx.snapshot.project;
    let t =
        resolve_target(project, target, &TargetOptions { all: true, ..TargetOptions::default() })
            .unwrap_or_else(|e| panic!("{target}: {e}"));
    let i = impact(&fx.snapshot, &t, &ImpactOptions::default());
    let r = &i.radius;
    let mut out = format!(
        "radius: {} direct, {} within 2, {} within 3, {} in all, weighted {:.2}, {:?}\n",
        r.direct, r.within_2, r.within_3, r.total, r.weighted, r.risk
    );
    for d in &i.dependents {
        out.push_str(&format!(
            "  file {}@{} via {}{}\n",
            d.path,
            d.distance,
            d.via,
            if d.test { " (test)" } else { "" }
        ));
    }
    for s in &i.symbols {
        out.push_str(&format!(
            "  symbol {}:{}@{} via {}\n",
            s.path,
            s.qualified_name.as_deref().unwrap_or("<top>"),
            s.distance,
            s.via
        ));
    }
    for s in &i.possible {
        out.push_str(&format!(
            "  possible {}:{}\n",
            s.path,
            s.qualified_name.as_deref().unwrap_or("<top>")
        ));
    }
    for t in &i.tests {
        out.push_str(&format!(
            "  test {:?} {} d={} [{}] ({}){}\n",
            t.priority,
            t.path,
            t.distance.map_or("-".to_owned(), |d| d.to_string()),
            t.convention,
            t.reasons.join("; "),
            if t.functions.is_empty() {
                String::new()
            } else {
                format!(" fns {}", t.functions.join(", "))
            }
        ));
    }
    expect.assert_eq(&out);
}

const PY: &str = r#"
    //- shop/__init__.py
    //- shop/pricing.py
    def price_of(item):
        return item.price
    //- shop/cart.py
    from shop.pricing import price_of

    class Cart:
        def total(self):
            return sum(price_of(i) for i in self.items)
    //- shop/report.py
    from shop.cart import Cart

    def report():
        return Cart().total()
    //- tests/test_cart.py
    from shop.cart import Cart

    class TestCart:
        def test_total(self):
            assert Cart().total() == 0
    //- tests/test_report.py
    from shop.report import report

    def test_report():
        report()
    //- tests/test_pricing.py
    def test_nothing_imported():
        pass
    //- tests/conftest.py
    from shop.cart import Cart
    //- other/thing.py
    class Thing:
        def total(self):
            return 3

    def use(x):
        return x.total()
    //- other/misc.py
    def grand_total(carts):
        return sum(c.total() for c in carts)
"#;

#[test]
fn python_file_closure_with_tests_by_reach_and_by_name() {
    check(
        PY,
        "shop/pricing.py",
        expect![[r#"
            radius: 1 direct, 3 within 2, 4 within 3, 4 in all, weighted 2.25, Medium
              file shop/cart.py@1 via price_of
              file shop/report.py@2 via Cart.total
              file tests/test_cart.py@2 via Cart.total (test)
              file tests/test_report.py@3 via report (test)
              symbol shop/cart.py:<top>@1 via price_of
              symbol shop/cart.py:Cart.total@1 via price_of
              symbol shop/report.py:report@2 via Cart.total
              symbol tests/test_cart.py:TestCart.test_total@2 via Cart.total
              symbol tests/test_report.py:<top>@3 via report
              symbol tests/test_report.py:test_report@3 via report
              test Medium tests/test_cart.py d=2 [pytest test_*.py] (references Cart.total) fns TestCart.test_total
              test Medium tests/test_pricing.py d=- [pytest test_*.py] (named after pricing)
              test Low tests/test_report.py d=3 [pytest test_*.py] (references report)
        "#]],
    );
}

#[test]
fn python_symbol_closure_with_possible_references_and_test_functions() {
    check(
        PY,
        "Cart.total",
        expect![[r#"
            radius: 2 direct, 3 within 2, 3 within 3, 3 in all, weighted 2.50, Medium
              file shop/report.py@1 via Cart.total
              file tests/test_cart.py@1 via Cart.total (test)
              file tests/test_report.py@2 via report (test)
              symbol shop/report.py:report@1 via Cart.total
              symbol tests/test_cart.py:TestCart.test_total@1 via Cart.total
              symbol tests/test_report.py:<top>@2 via report
              symbol tests/test_report.py:test_report@2 via report
              possible other/misc.py:grand_total
              test High tests/test_cart.py d=1 [pytest test_*.py] (TestCart.test_total is named after the target; named after cart; references Cart.total) fns TestCart.test_total
              test Medium tests/test_report.py d=2 [pytest test_*.py] (references report) fns test_report
        "#]],
    );
}

#[test]
fn go_tests_in_the_package() {
    check(
        r#"
        //- go.mod
        module example.com/shop
        //- cart/cart.go
        package cart

        func Total(xs []int) int { return len(xs) }
        //- cart/cart_test.go
        package cart

        import "testing"

        func TestTotal(t *testing.T) { Total(nil) }
        //- cmd/main.go
        package main

        import "example.com/shop/cart"

        func main() { cart.Total(nil) }
        "#,
        "cart/cart.go",
        expect![[r#"
            radius: 2 direct, 2 within 2, 2 within 3, 2 in all, weighted 2.00, Low
              file cart/cart_test.go@1 via Total (test)
              file cmd/main.go@1 via Total
              symbol cart/cart_test.go:TestTotal@1 via Total
              symbol cmd/main.go:main@1 via Total
              test High cart/cart_test.go d=1 [go *_test.go] (named after cart; references Total) fns TestTotal
        "#]],
    );
}

#[test]
fn javascript_spec_and_dunder_tests() {
    check(
        r#"
        //- src/cart.js
        export function total(xs) { return xs.length; }
        //- src/cart.test.js
        import { total } from './cart';
        test('total', () => total([]));
        //- src/__tests__/checkout.js
        import { checkout } from '../checkout';
        test('checkout', () => checkout());
        //- src/checkout.js
        import { total } from './cart';
        export function checkout() { return total([]); }
        "#,
        "src/cart.js",
        expect![[r#"
            radius: 2 direct, 3 within 2, 3 within 3, 3 in all, weighted 2.50, Medium
              file src/cart.test.js@1 via total (test)
              file src/checkout.js@1 via total
              file src/__tests__/checkout.js@2 via checkout (test)
              symbol src/cart.test.js:<top>@1 via total
              symbol src/checkout.js:<top>@1 via total
              symbol src/checkout.js:checkout@1 via total
              symbol src/__tests__/checkout.js:<top>@2 via checkout
              test High src/cart.test.js d=1 [jest/vitest *.test.*] (named after cart; references total)
              test Medium src/__tests__/checkout.js d=2 [jest __tests__/] (references checkout)
        "#]],
    );
}

#[test]
fn rust_integration_tests_and_inline_modules() {
    check(
        r#"
        //- Cargo.toml
        [package]
        name = "shop"
        //- src/lib.rs
        pub mod cart;
        pub use cart::total;
        //- src/cart.rs
        pub fn total(xs: &[u32]) -> u32 { xs.iter().sum() }

        #[cfg(test)]
        mod tests {
            use super::*;
            #[test]
            fn sums() { assert_eq!(total(&[1]), 1); }
        }
        //- tests/checkout.rs
        use shop::cart::total;

        #[test]
        fn checkout_total() { assert_eq!(total(&[]), 0); }
        "#,
        "src/cart.rs",
        expect![[r#"
            radius: 2 direct, 2 within 2, 2 within 3, 2 in all, weighted 2.00, Low
              file src/lib.rs@1 via total
              file tests/checkout.rs@1 via total (test)
              symbol src/lib.rs:<top>@1 via total
              symbol tests/checkout.rs:<top>@1 via total
              symbol tests/checkout.rs:checkout_total@1 via total
              test High src/cart.rs d=0 [rust inline `mod tests`] (has inline tests)
              test High tests/checkout.rs d=1 [cargo tests/ (integration)] (references total) fns checkout_total
        "#]],
    );
}

/// Two crates, each with its `src/`: `crates/git/src/tests.rs` tests the `git`
/// crate, not every `src/lib.rs` of the workspace.
const TWO_CRATES: &str = r#"
    //- crates/git/Cargo.toml
    [package]
    name = "git"
    //- crates/git/src/lib.rs
    pub fn head() -> u32 { 1 }
    #[cfg(test)]
    mod tests;
    //- crates/git/src/tests.rs
    #[test]
    fn reads_head() {}
    //- crates/protocol/Cargo.toml
    [package]
    name = "protocol"
    //- crates/protocol/src/lib.rs
    pub struct Event;
"#;

#[test]
fn workspace_crate_roots_are_told_apart() {
    check(
        TWO_CRATES,
        "crates/protocol/src/lib.rs",
        expect![[r#"
            radius: 0 direct, 0 within 2, 0 within 3, 0 in all, weighted 0.00, Low
        "#]],
    );
    check(
        TWO_CRATES,
        "crates/git/src/lib.rs",
        expect![[r#"
            radius: 0 direct, 0 within 2, 0 within 3, 0 in all, weighted 0.00, Low
              test Medium crates/git/src/tests.rs d=- [rust test module] (named after git)
        "#]],
    );
}

#[test]
fn a_package_root_is_a_dependency_of_what_imports_through_it() {
    // `from shop import Cart` depends on `shop/__init__.py` re-exporting `Cart`: the
    // root's impact lists its importers, without following them further.
    check(
        r#"
        //- shop/__init__.py
        from shop.cart import Cart
        //- shop/cart.py
        class Cart:
            pass
        //- app/views.py
        from shop import Cart
        def view():
            return Cart()
        //- app/urls.py
        from app.views import view
        "#,
        "shop/__init__.py",
        expect![[r#"
            radius: 1 direct, 1 within 2, 1 within 3, 1 in all, weighted 1.00, Low
              file app/views.py@1 via shop/__init__.py
        "#]],
    );
}

#[test]
fn java_and_csharp_test_projects() {
    check(
        r#"
        //- src/main/java/com/acme/Cart.java
        package com.acme;
        public class Cart { public int total() { return 0; } }
        //- src/test/java/com/acme/CartTest.java
        package com.acme;
        import com.acme.Cart;
        public class CartTest { void testTotal() { new Cart().total(); } }
        //- Src/Acme/Invoice.cs
        namespace Acme { public class Invoice { public int Sum() { return 0; } } }
        //- Src/Acme.Tests/InvoiceTests.cs
        using Acme;
        namespace Acme.Tests { public class InvoiceTests { void TestSum() { new Invoice().Sum(); } } }
        "#,
        "Cart",
        expect![[r#"
            radius: 1 direct, 1 within 2, 1 within 3, 1 in all, weighted 1.00, Low
              file src/test/java/com/acme/CartTest.java@1 via Cart (test)
              symbol src/test/java/com/acme/CartTest.java:<top>@1 via Cart
              symbol src/test/java/com/acme/CartTest.java:CartTest.testTotal@1 via Cart
              test High src/test/java/com/acme/CartTest.java d=1 [junit src/test/] (named after cart; references Cart) fns CartTest.testTotal
        "#]],
    );
}

#[test]
fn csharp_test_project() {
    check(
        r#"
        //- Src/Acme/Invoice.cs
        namespace Acme { public class Invoice { public int Sum() { return 0; } } }
        //- Src/Acme.Tests/InvoiceTests.cs
        using Acme;
        namespace Acme.Tests { public class InvoiceTests { void TestSum() { new Invoice().Sum(); } } }
        //- Src/Acme/Billing.cs
        namespace Acme { public class Billing { public int Run() { return new Invoice().Sum(); } } }
        "#,
        "Src/Acme/Invoice.cs",
        expect![[r#"
            radius: 2 direct, 2 within 2, 2 within 3, 2 in all, weighted 2.00, Low
              file Src/Acme.Tests/InvoiceTests.cs@1 via Acme.Invoice (test)
              file Src/Acme/Billing.cs@1 via Acme.Invoice
              symbol Src/Acme.Tests/InvoiceTests.cs:Acme.Tests.InvoiceTests.TestSum@1 via Acme.Invoice
              symbol Src/Acme/Billing.cs:Acme.Billing.Run@1 via Acme.Invoice
              test High Src/Acme.Tests/InvoiceTests.cs d=1 [xunit/nunit *Tests.cs] (named after invoice; references Acme.Invoice) fns Acme.Tests.InvoiceTests.TestSum
        "#]],
    );
}

#[test]
fn policies() {
    // (direct, total, files) → risk
    let risks = [
        ((0, 0, 10), Risk::Low),
        ((1, 2, 100), Risk::Low),
        ((1, 4, 10), Risk::Medium),
        ((1, 5, 10), Risk::High),
        ((2, 6, 100), Risk::Medium),
        ((5, 5, 1000), Risk::Medium),
        ((20, 20, 1000), Risk::High),
        ((3, 250, 1000), Risk::High),
    ];
    for ((direct, total, files), want) in risks {
        assert_eq!(risk_level(direct, total, files), want, "{direct} {total} {files}");
    }
    let priorities = [
        ((Some(0), false), Priority::High),
        ((Some(1), false), Priority::High),
        ((Some(2), true), Priority::High),
        ((Some(2), false), Priority::Medium),
        ((None, true), Priority::Medium),
        ((Some(4), true), Priority::Medium),
        ((Some(3), false), Priority::Low),
    ];
    for ((d, named), want) in priorities {
        assert_eq!(test_priority(d, named), want, "{d:?} {named}");
    }
}
