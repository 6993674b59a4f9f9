//! Repository maps on a fixture: budgets, monotonicity, personalization, rendering.

use expect_test::expect;

use super::*;
use code_graph::{Fixture, fixture};

const SHOP: &str = r#"
    //- shop/__init__.py
    //- shop/pricing.py
    """Prices and discounts."""

    class Discount:
        """A percentage off."""

        def __init__(self, percent):
            self.percent = percent

        def apply(self, amount):
            return amount * (100 - self.percent) / 100

    def price_of(item):
        """The price of one item, in cents."""
        return item.price
    //- shop/cart.py
    from shop.pricing import price_of, Discount

    class Cart:
        """A shopping cart."""

        def __init__(self):
            self.items = []

        def add(self, item):
            self.items.append(item)

        @property
        def total(self):
            return sum(price_of(i) for i in self.items)

        def discounted(self, percent):
            return Discount(percent).apply(self.total)
    //- shop/checkout.py
    from shop.cart import Cart
    from shop.pricing import price_of

    def checkout(items):
        cart = Cart()
        for i in items:
            cart.add(i)
        return cart.total

    def receipt(items):
        return [price_of(i) for i in items]
    //- shop/shipping.py
    from shop.cart import Cart

    def weight(cart):
        return len(cart.items)

    def ship(cart):
        return weight(cart) * 2
    //- tests/test_cart.py
    from shop.cart import Cart

    def test_total():
        assert Cart().total == 0
    //- src/lib.rs
    pub struct Point {
        pub x: i32,
        pub y: i32,
    }

    impl Point {
        /// Distance from the origin.
        pub fn norm(&self) -> i32 {
            self.x.abs() + self.y.abs()
        }
    }

    pub fn origin() -> Point {
        Point { x: 0, y: 0 }
    }
"#;

fn map(fx: &Fixture, tokens: usize, focus: &[&str], query: Option<&str>) -> RepoMap {
    let opts = RepoMapOptions {
        tokens,
        focus: focus.iter().map(|s| s.to_string()).collect(),
        query: query.map(str::to_owned),
    };
    repo_map(&fx.snapshot, None, &fx.sources, &opts).unwrap()
}

fn shown(m: &RepoMap) -> Vec<String> {
    m.files
        .iter()
        .flat_map(|f| f.symbols.iter().map(move |s| format!("{}:{}", f.path, s.qualified_name)))
        .collect()
}

/// Definitions in rank order (the order they were added in).
fn by_rank(m: &RepoMap) -> Vec<String> {
    let mut all: Vec<(f64, String)> = m
        .files
        .iter()
        .flat_map(|f| f.symbols.iter().map(move |s| (s.rank, s.qualified_name.clone())))
        .collect();
    all.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    all.into_iter().map(|x| x.1).collect()
}

#[test]
fn every_budget_is_respected_and_more_budget_never_loses_a_definition() {
    let fx = fixture(SHOP);
    let mut prev: Option<(usize, Vec<String>)> = None;
    for budget in (0..=700).step_by(7) {
        let m = map(&fx, budget, &[], None);
        assert!(m.tokens <= budget, "{} tokens for a budget of {budget}", m.tokens);
        assert_eq!(m.tokens, count_tokens(&m.text), "reported tokens are the text's");
        let defs = shown(&m);
        if let Some((pb, pdefs)) = &prev {
            for d in pdefs {
                assert!(defs.contains(d), "{d} shown at {pb} tokens but not at {budget}");
            }
        }
        prev = Some((budget, defs));
    }
    let all = map(&fx, 100_000, &[], None);
    assert_eq!(all.definitions, all.candidates.min(all.definitions));
    assert!(all.definitions >= 15, "a big budget shows everything: {}", all.definitions);
}

#[test]
fn the_map_uses_the_budget_it_is_given() {
    // With a budget the definitions do not fill, the next files' paths take the
    // rest: the map ends close to the budget, never over.
    let fx = fixture(SHOP);
    for budget in [40, 90, 150, 260] {
        let m = map(&fx, budget, &[], None);
        assert!(m.tokens <= budget && m.tokens + 25 >= budget, "{} of {budget}", m.tokens);
    }
}

#[test]
fn rendering_shows_signatures_docs_containers_and_fields() {
    let fx = fixture(SHOP);
    let m = map(&fx, 260, &[], None);
    expect![[r#"
        shop/pricing.py (core)
          ⋮
         3│ class Discount:
         4│     """A percentage off."""
          ⋮
         9│     def apply(self, amount):
          ⋮
        12│ def price_of(item):
        13│     """The price of one item, in cents."""
          ⋮

        shop/cart.py (utility)
          ⋮
         3│ class Cart:
         4│     """A shopping cart."""
          ⋮
         6│     def __init__(self):
          ⋮
         9│     def add(self, item):
          ⋮
        12│     @property
        13│     def total(self):
          ⋮
        16│     def discounted(self, percent):
          ⋮

        src/lib.rs (peripheral)
         1│ pub struct Point {
         2│     pub x: i32,
         3│     pub y: i32,
         4│ }
          ⋮

        shop/shipping.py (peripheral)
         ⋮
        3│ def weight(cart):
         ⋮

        shop/checkout.py (peripheral)
          ⋮
         4│ def checkout(items):
          ⋮
        10│ def receipt(items):
          ⋮

        tests/test_cart.py
    "#]]
    .assert_eq(&m.text);
    // A method in a Rust `impl` shows the `impl` line and its doc comment.
    let m = map(&fx, 80, &[], Some("`Point::norm` overflows"));
    assert!(
        m.text.contains(" 6│ impl Point {\n")
            && m.text.contains(" 7│     /// Distance from the origin.\n"),
        "{}",
        m.text
    );
}

#[test]
fn focus_and_query_change_the_order() {
    let fx = fixture(SHOP);
    let global = by_rank(&map(&fx, 10_000, &[], None));
    // Working on shipping.py: what it uses (Cart) and nothing of itself.
    let focused = map(&fx, 10_000, &["shop/shipping.py"], None);
    assert!(
        focused.files.iter().all(|f| f.path != "shop/shipping.py"),
        "focus files are not shown"
    );
    assert_eq!(focused.seeds.focus, ["shop/shipping.py"]);
    let focused = by_rank(&focused);
    assert_eq!(focused[0], "Cart", "{focused:?}");
    // A query naming Discount.apply puts it first.
    let asked = map(&fx, 10_000, &[], Some("the `Discount.apply` rounding is wrong"));
    assert!(asked.seeds.symbols.contains(&"shop/pricing.py:9 method Discount.apply".to_owned()));
    let asked = by_rank(&asked);
    assert_eq!(asked[0], "Discount.apply", "{asked:?}");
    assert_ne!(global[0], "Discount.apply");
    // A query naming a file seeds with it.
    let file = map(&fx, 10_000, &[], Some("crash in src/lib.rs"));
    assert_eq!(file.seeds.files, ["src/lib.rs"]);
    assert_eq!(
        by_rank(&file)[0..3]
            .iter()
            .filter(|d| ["Point", "Point::norm", "origin"].contains(&d.as_str()))
            .count(),
        3
    );
}

#[test]
fn unknown_focus_is_an_error_and_empty_projects_are_empty() {
    let fx = fixture(SHOP);
    let opts = RepoMapOptions { tokens: 100, focus: vec!["nope.py".into()], query: None };
    let err = repo_map(&fx.snapshot, None, &fx.sources, &opts).unwrap_err();
    assert_eq!(err.code(), protocol::ErrorCode::NotFound);
    let empty = fixture("");
    let m = map(&empty, 100, &[], None);
    assert_eq!((m.text.as_str(), m.tokens, m.definitions), ("", 0, 0));
}
