//! Hotspots on fixtures with a synthetic history.

use expect_test::{Expect, expect};
use protocol::{Churn, ChurnWindow, CommitTouch, FileChurn, LineSpan};

use super::*;
use crate::fixture::fixture;

const DAY: i64 = 86_400;
const NOW: i64 = 1_700_000_000;

const SHOP: &str = r#"
    //- shop/cart.py
    from shop.pricing import price_of

    class Cart:
        def add(self, item):
            if item is None or item.price < 0:
                raise ValueError("bad item")
            self.items.append(item)

        def total(self):
            t = 0
            for i in self.items:
                if i.discounted and i.price > 10:
                    t += price_of(i) * 0.9
                elif i.free:
                    continue
                else:
                    t += price_of(i)
            return t
    //- shop/pricing.py
    def price_of(item):
        return item.price

    def unused():
        return 0
    //- shop/report.py
    from shop.cart import Cart
    from shop.pricing import price_of

    def report(c):
        return Cart().total() + price_of(c)
    //- shop/legacy.py
    def tangled(a, b, c):
        if a:
            if b:
                while c:
                    for x in a:
                        if x and b or c:
                            pass
        return a
    //- tests/test_cart.py
    from shop.cart import Cart

    def test_total():
        assert Cart().total() == 0
"#;

/// A commit: (path, days ago, lines added, changed line span).
type Entry<'a> = (&'a str, i64, u32, Option<(u32, u32)>);

/// One commit per entry.
fn history(entries: &[Entry<'_>], lines: bool) -> Churn {
    let mut files: std::collections::BTreeMap<&str, FileChurn> = Default::default();
    for &(path, days, added, span) in entries {
        let time = NOW - days * DAY;
        let f = files.entry(path).or_insert_with(|| FileChurn {
            path: path.into(),
            last_change: time,
            first_change: time,
            ..FileChurn::default()
        });
        f.commits += 1;
        f.added += u64::from(added);
        f.authors = 1;
        f.last_change = f.last_change.max(time);
        f.first_change = f.first_change.min(time);
        f.changes.push(CommitTouch {
            time,
            added,
            deleted: 0,
            lines: span.map(|(start, end)| vec![LineSpan { start, end }]).unwrap_or_default(),
        });
    }
    Churn {
        available: true,
        window: ChurnWindow::default(),
        commits: entries.len() as u32,
        newest: Some(NOW),
        oldest: Some(NOW - 365 * DAY),
        lines,
        files: files.into_values().collect(),
        ..Churn::default()
    }
}

fn check(churn: Option<&Churn>, expect: Expect) {
    let fx = fixture(SHOP);
    let h = hotspots(&fx.snapshot, churn, &fx.sources, &HotspotOptions::default());
    let mut out = format!("basis {:?}", h.basis);
    if let Some(c) = h.concentration {
        out.push_str(&format!(", top 10% of files hold {:.0}% of changed lines", c * 100.0));
    }
    out.push('\n');
    for f in &h.files {
        let churn = f.churn.as_ref().map_or("no history".to_owned(), |c| {
            format!("{} commits {} lines recency {:.2}", c.commits, c.lines, c.recency)
        });
        out.push_str(&format!(
            "{:.3} {} [{churn}; {} lines {} decisions max cc {}; fan-in {}]{}\n",
            f.score,
            f.path,
            f.complexity.lines,
            f.complexity.decisions,
            f.complexity.max_cyclomatic,
            f.fan_in,
            if f.test { " test" } else { "" }
        ));
    }
    out.push_str("--\n");
    for s in h.symbols.iter().take(5) {
        let churn = s.churn.as_ref().map_or("no history".to_owned(), |c| {
            format!("{} commits {} lines", c.commits, c.lines)
        });
        out.push_str(&format!(
            "{:.3} {} [{churn}; {} decisions; fan-in {}]\n",
            s.score, s.symbol.qualified_name, s.complexity.decisions, s.fan_in
        ));
    }
    expect.assert_eq(&out);
}

#[test]
fn without_history_structure_decides_and_says_so() {
    check(
        None,
        expect![[r#"
            basis Structure
            0.951 shop/cart.py [no history; 18 lines 6 decisions max cc 5; fan-in 2]
            0.566 shop/pricing.py [no history; 5 lines 0 decisions max cc 1; fan-in 2]
            0.554 shop/legacy.py [no history; 8 lines 7 decisions max cc 8; fan-in 0]
            0.166 shop/report.py [no history; 5 lines 0 decisions max cc 1; fan-in 0]
            0.078 tests/test_cart.py [no history; 4 lines 0 decisions max cc 1; fan-in 0] test
            --
            0.792 Cart.total [no history; 4 decisions; fan-in 2]
            0.580 tangled [no history; 7 decisions; fan-in 0]
            0.510 price_of [no history; 0 decisions; fan-in 4]
            0.351 Cart.add [no history; 2 decisions; fan-in 0]
            0.110 unused [no history; 0 decisions; fan-in 0]
        "#]],
    );
    let unavailable = Churn::unavailable("not a git repository", ChurnWindow::default());
    let fx = fixture(SHOP);
    let h = hotspots(&fx.snapshot, Some(&unavailable), &fx.sources, &HotspotOptions::default());
    assert_eq!(h.basis, HotspotBasis::Structure);
    assert_eq!(h.history.reason.as_deref(), Some("not a git repository"));
    assert!(h.files.iter().all(|f| f.churn.is_none()), "absent, not zero");
}

#[test]
fn churn_decides_with_history_and_recent_beats_old() {
    // cart.py and legacy.py change as often, but legacy.py's commits are a year
    // old; pricing.py changed once; report.py never (so it is not a hotspot).
    let churn = history(
        &[
            ("shop/cart.py", 1, 10, None),
            ("shop/cart.py", 5, 10, None),
            ("shop/cart.py", 9, 10, None),
            ("shop/legacy.py", 360, 10, None),
            ("shop/legacy.py", 361, 10, None),
            ("shop/legacy.py", 362, 10, None),
            ("shop/pricing.py", 30, 2, None),
            ("tests/test_cart.py", 1, 40, None),
            ("deleted/gone.py", 1, 500, None),
        ],
        false,
    );
    check(
        Some(&churn),
        expect![[r#"
        basis History, top 10% of files hold 39% of changed lines
        0.954 shop/cart.py [3 commits 30 lines recency 2.89; 18 lines 6 decisions max cc 5; fan-in 2]
        0.488 shop/legacy.py [3 commits 30 lines recency 0.19; 8 lines 7 decisions max cc 8; fan-in 0]
        0.322 shop/pricing.py [1 commits 2 lines recency 0.79; 5 lines 0 decisions max cc 1; fan-in 2]
        0.189 tests/test_cart.py [1 commits 40 lines recency 0.99; 4 lines 0 decisions max cc 1; fan-in 0] test
        --
        0.792 Cart.total [no history; 4 decisions; fan-in 2]
        0.580 tangled [no history; 7 decisions; fan-in 0]
        0.510 price_of [no history; 0 decisions; fan-in 4]
        0.351 Cart.add [no history; 2 decisions; fan-in 0]
        0.110 unused [no history; 0 decisions; fan-in 0]
    "#]],
    );
}

#[test]
fn definitions_get_the_churn_of_their_lines() {
    // Cart.total (lines 9-18) changed three times, Cart.add (4-7) once.
    let churn = history(
        &[
            ("shop/cart.py", 1, 3, Some((12, 14))),
            ("shop/cart.py", 2, 3, Some((10, 10))),
            ("shop/cart.py", 3, 3, Some((17, 18))),
            ("shop/cart.py", 4, 3, Some((5, 5))),
        ],
        true,
    );
    check(
        Some(&churn),
        expect![[r#"
        basis History, top 10% of files hold 100% of changed lines
        0.976 shop/cart.py [4 commits 12 lines recency 3.92; 18 lines 6 decisions max cc 5; fan-in 2]
        --
        0.896 Cart.total [3 commits 6 lines; 4 decisions; fan-in 2]
        0.307 Cart.add [1 commits 1 lines; 2 decisions; fan-in 0]
    "#]],
    );
}
