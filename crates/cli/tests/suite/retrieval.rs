//! Retrieval commands end to end: localize, impact, graph, repomap, report.

use std::{
    path::Path,
    process::{Command, Stdio},
};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::{Value, json};
use test_support::TempProject;

/// A small shop: pricing ← cart ← checkout → shipping, one test file, docs.
const SHOP: &str = r#"
//- shop/__init__.py
//- shop/pricing.py
"""Prices, discounts and currency rounding."""


class InvalidDiscount(ValueError):
    """A discount outside 0..100 percent."""


class Discount:
    """A percentage taken off an amount."""

    def __init__(self, percent):
        if not 0 <= percent <= 100:
            raise InvalidDiscount("discount must be between 0 and 100 percent")
        self.percent = percent

    def apply(self, amount):
        return round_cents(amount * (100 - self.percent) / 100)


def round_cents(amount):
    """Round half up to whole cents."""
    return int(amount * 100 + 0.5) / 100


def price_of(item):
    """The unit price of an item times its quantity."""
    return item.unit_price * item.quantity
//- shop/cart.py
"""The shopping cart."""
from shop.pricing import Discount, price_of


class Cart:
    """Items a customer is about to buy."""

    def __init__(self):
        self.items = []

    def add(self, item):
        if item.quantity <= 0:
            raise ValueError("quantity must be positive")
        self.items.append(item)

    def total(self):
        return sum(price_of(i) for i in self.items)

    def discounted_total(self, percent):
        return Discount(percent).apply(self.total())
//- shop/shipping.py
"""Shipping: parcel weight, zones and carrier rates."""

ZONES = {"domestic": 1, "europe": 2, "world": 3}


def parcel_weight(items):
    """Total weight in grams, packaging included."""
    return sum(i.weight_grams for i in items) + 250


def shipping_rate(items, zone):
    """The carrier's rate for a parcel to a zone."""
    weight = parcel_weight(items)
    return 4.5 * ZONES[zone] + weight / 1000 * 1.2
//- shop/checkout.py
"""Checkout: totals, shipping and the receipt."""
from shop.cart import Cart
from shop.shipping import shipping_rate


def checkout(items, zone, percent=0):
    cart = Cart()
    for i in items:
        cart.add(i)
    total = cart.discounted_total(percent)
    return total + shipping_rate(items, zone)


def receipt_lines(cart):
    return [f"{i.name}: {i.unit_price}" for i in cart.items]
//- tests/test_pricing.py
from shop.pricing import Discount, round_cents


def test_discount_applies_percent():
    assert Discount(10).apply(100) == 90


def test_round_cents():
    assert round_cents(1.005) == 1.01
//- docs/conf.py
project = "shop"
discount_docs = "how discounts and round_cents work"
"#;

fn ironbees(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("ironbees").unwrap();
    c.arg("-C").arg(dir);
    c.env("XDG_CONFIG_HOME", dir.join(".no-user-config"));
    c
}

fn json(dir: &Path, args: &[&str]) -> Value {
    let o = ironbees(dir).args(args).arg("--json").output().unwrap();
    assert!(o.status.success(), "ironbees {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The ranked paths of `localize --json`, checking the shape on the way: objects
/// with `path` and `score`, best first.
fn localize(dir: &Path, query: &str) -> (Vec<String>, Value) {
    let v = json(dir, &["localize", "-q", query]);
    let arr = v.as_array().expect("an array");
    let scores: Vec<f64> = arr.iter().map(|r| r["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "best first: {scores:?}");
    (arr.iter().map(|r| r["path"].as_str().unwrap().to_owned()).collect(), v)
}

fn evidence_kinds(result: &Value) -> Vec<String> {
    result["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_owned())
        .collect()
}

const TRACEBACK: &str = "Traceback (most recent call last):\n  \
    File \"shop/checkout.py\", line 11, in checkout\n    \
    return total + shipping_rate(items, zone)\n  \
    File \"shop/shipping.py\", line 14, in shipping_rate\n    \
    return 4.5 * ZONES[zone] + weight / 1000 * 1.2\nKeyError: 'asia'\n";

#[test]
fn localize_follows_a_stack_trace_to_the_innermost_frame() {
    let p = TempProject::with_fixture(SHOP);
    let (paths, v) = localize(p.root(), &format!("Crash when ordering to Asia\n\n{TRACEBACK}"));
    assert_eq!(paths[..2], ["shop/shipping.py", "shop/checkout.py"]);
    assert!(evidence_kinds(&v[0]).contains(&"frame".to_owned()), "{:#}", v[0]);
    // A title naming the outer frame's function pulls that file up, but both frames
    // stay on top (the fusion lets several agreeing signals beat one; see
    // docs/BENCHMARKS.md, "Localization").
    let (paths, _) = localize(p.root(), &format!("Checkout fails for Asia\n\n{TRACEBACK}"));
    let mut top2 = paths[..2].to_vec();
    top2.sort();
    assert_eq!(top2, ["shop/checkout.py", "shop/shipping.py"]);
}

#[test]
fn localize_finds_the_file_that_raises_a_quoted_message() {
    let p = TempProject::with_fixture(SHOP);
    let (paths, v) = localize(
        p.root(),
        "Creating an offer with 100.5% fails with \"discount must be between 0 and 100 percent\" \
         although the UI allows it",
    );
    assert_eq!(paths[0], "shop/pricing.py");
    assert!(evidence_kinds(&v[0]).contains(&"literal".to_owned()), "{:#}", v[0]);
}

#[test]
fn localize_matches_a_description_without_identifiers() {
    let p = TempProject::with_fixture(SHOP);
    let (paths, _) = localize(p.root(), "the parcel is too heavy: packaging grams counted twice");
    assert_eq!(paths[0], "shop/shipping.py");
}

#[test]
fn localize_ranks_the_source_above_its_test() {
    let p = TempProject::with_fixture(SHOP);
    let (paths, _) = localize(p.root(), "rounding of cents is wrong for half values");
    let src = paths.iter().position(|p| p == "shop/pricing.py").expect("source found");
    let test = paths.iter().position(|p| p == "tests/test_pricing.py").expect("test found");
    assert_eq!(src, 0);
    assert!(src < test, "{paths:?}");
}

#[test]
fn localize_sees_files_added_since_the_last_run() {
    let p = TempProject::with_fixture(SHOP);
    let (before, _) = localize(p.root(), "VAT rate for Germany is wrong on invoices");
    assert!(!before.contains(&"shop/tax.py".to_owned()));
    p.write("shop/tax.py", "def vat_rate(country):\n    \"\"\"VAT for invoices.\"\"\"\n    return {\"germany\": 0.19}[country]\n");
    let (after, _) = localize(p.root(), "VAT rate for Germany is wrong on invoices");
    assert_eq!(after[0], "shop/tax.py");
}

/// Each process records only what it changed in the search index: a file edited
/// in one run, edited again in the next and deleted in the last is found by its
/// content of the moment and never by what it said before.
#[test]
fn localize_follows_a_file_edited_twice_then_deleted_across_processes() {
    let p = TempProject::with_fixture(SHOP);
    let vat = "VAT rate for Germany is wrong on invoices";
    let parcels = "customs duty charged twice on imported parcels";
    localize(p.root(), vat);
    p.write("shop/tax.py", "def vat_rate(country):\n    \"\"\"VAT for invoices.\"\"\"\n    return {\"germany\": 0.19}[country]\n");
    assert_eq!(localize(p.root(), vat).0[0], "shop/tax.py");
    p.write("shop/tax.py", "def customs_duty(parcel):\n    \"\"\"Customs duty on imported parcels.\"\"\"\n    return 0.1 * parcel.value if parcel.imported else 0\n");
    assert_eq!(localize(p.root(), parcels).0[0], "shop/tax.py");
    let (now, _) = localize(p.root(), vat);
    assert_ne!(now.first().map(String::as_str), Some("shop/tax.py"), "the old text: {now:?}");
    std::fs::remove_file(p.root().join("shop/tax.py")).unwrap();
    let (gone, _) = localize(p.root(), parcels);
    assert!(!gone.contains(&"shop/tax.py".to_owned()), "{gone:?}");
}

#[test]
fn localize_blames_the_innermost_frame_not_the_file_with_most_frames() {
    let p = TempProject::with_fixture(SHOP);
    let trace = "Crash when ordering to Asia\n\nTraceback (most recent call last):\n  \
        File \"shop/checkout.py\", line 7, in checkout\n  \
        File \"shop/checkout.py\", line 10, in checkout\n  \
        File \"shop/checkout.py\", line 11, in checkout\n  \
        File \"shop/shipping.py\", line 14, in shipping_rate\nKeyError: 'asia'\n";
    let (paths, _) = localize(p.root(), trace);
    assert_eq!(paths[..2], ["shop/shipping.py", "shop/checkout.py"]);
}

/// A client library with a connection pool copied in from another project under
/// an ordinary directory name (`web/packages/`, as requests kept urllib3).
const VENDORED: &str = r#"
//- web/__init__.py
__version__ = "2.0.1"
//- web/sessions.py
def send(request, timeout=None):
    """Send the request over a pooled connection."""
    return request
//- web/exceptions.py
class RequestException(IOError):
    pass
class Timeout(RequestException):
    """The request timed out."""
//- web/packages/__init__.py
//- web/packages/pool3/__init__.py
__version__ = "1.10.4"
//- web/packages/pool3/connectionpool.py
class ConnectionPool:
    def urlopen(self, method, url, timeout=None, retries=3):
        """Open a pooled connection for the request; the timeout and retries apply."""
        return method, url, timeout, retries
"#;

#[test]
fn copied_packages_and_exception_modules_rank_below_the_projects_own_code() {
    let query = "The connection pool ignores the request timeout";
    let roles = |dir: &Path| -> Vec<(String, f64)> {
        let v = json(dir, &["localize", "-q", query, "--explain"]);
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| (r["path"].as_str().unwrap().into(), r["features"]["role"].as_f64().unwrap()))
            .collect()
    };
    // The copy declares a version of its own: it is someone else's release.
    let p = TempProject::with_fixture(VENDORED);
    let got = roles(p.root());
    // (It ranks below the docs-like exceptions module too.)
    assert_eq!(
        got[..3],
        [
            ("web/sessions.py".into(), 1.0),
            ("web/exceptions.py".into(), 0.5),
            ("web/packages/pool3/connectionpool.py".into(), 0.1)
        ]
    );
    // A module of nothing but exception classes is where `Timeout` is named, not
    // where a timeout goes wrong: ranked like docs (above).
    // Hotspots and the repo map are about the project's own code too.
    let shown = |dir: &Path| -> (Vec<String>, String) {
        let hot = json(dir, &["hotspots"]);
        let files = hot["files"].as_array().unwrap();
        let paths = files.iter().map(|f| f["path"].as_str().unwrap().to_owned()).collect();
        let map = json(dir, &["repomap", "--tokens", "400"]);
        (paths, map.to_string())
    };
    let (hot, map) = shown(p.root());
    assert!(hot.contains(&"web/sessions.py".to_owned()), "{hot:?}");
    assert!(!hot.iter().any(|h| h.contains("pool3")), "{hot:?}");
    assert!(map.contains("web/sessions.py") && !map.contains("pool3"), "{map}");
    // A subpackage without one is the project's own, and its better match wins.
    let own = VENDORED.replace("__version__ = \"1.10.4\"", "");
    let p = TempProject::with_fixture(&own);
    assert_eq!(
        roles(p.root())[..2],
        [("web/packages/pool3/connectionpool.py".into(), 1.0), ("web/sessions.py".into(), 1.0)]
    );
    let (hot, map) = shown(p.root());
    assert!(hot.contains(&"web/packages/pool3/connectionpool.py".to_owned()), "{hot:?}");
    assert!(map.contains("pool3/connectionpool.py"), "{map}");
    // So is a release inside packages without a version: the distributions of a
    // namespace package.
    let namespace = VENDORED.replace("__version__ = \"2.0.1\"", "");
    let p = TempProject::with_fixture(&namespace);
    assert_eq!(roles(p.root())[0], ("web/packages/pool3/connectionpool.py".into(), 1.0));
    let (hot, _) = shown(p.root());
    assert!(hot.contains(&"web/packages/pool3/connectionpool.py".to_owned()), "{hot:?}");
    // Code under `vendor/` is someone else's too, however well it matches.
    let vendored = TempProject::with_fixture(
        "//- vendor/pool3/connectionpool.py\n\
         class ConnectionPool:\n    def urlopen(self, request, timeout=None):\n        \
         # the request timeout of the connection pool\n        return request.timeout or timeout\n\
         //- web/client.py\n\
         def send(request, timeout=None):\n    return request\n",
    );
    let got = roles(vendored.root());
    assert_eq!(got[0].0, "web/client.py", "{got:?}");
    assert!(got.contains(&("vendor/pool3/connectionpool.py".into(), 0.1)), "{got:?}");
}

#[test]
fn arguments_that_leave_nothing_to_rank_are_refused_not_answered_empty() {
    let p = TempProject::with_fixture(SHOP);
    for args in [&["init", "-q"][..], &["add", "-A"], &["commit", "-qm", "shop"]] {
        #[allow(clippy::disallowed_methods)] // test setup: a repository with one commit
        let o = Command::new("git")
            .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(p.root())
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let cases: &[(&[&str], i32, &str, &str)] = &[
        (&["hotspots", "--top", "0"], 2, "INVALID_ARGUMENT", "--top"),
        (&["hotspots", "--max-commits", "0"], 2, "INVALID_ARGUMENT", "--max-commits"),
        // git reads any text as a date, and what it cannot as now.
        (&["hotspots", "--since", "garbage"], 2, "INVALID_ARGUMENT", "garbage"),
        (&["report", "--since", "soon"], 2, "INVALID_ARGUMENT", "soon"),
        (&["hotspots", "--under", "shp"], 3, "NOT_FOUND", "shp"),
        (&["localize", "-q", "shipping to Asia", "-k", "0"], 2, "INVALID_ARGUMENT", "-k"),
        (&["symbols", "--limit", "0"], 2, "INVALID_ARGUMENT", "--limit"),
    ];
    for (args, exit, code, names) in cases {
        let o = ironbees(p.root()).args(*args).arg("--json").output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(*exit), "{args:?}: {stderr}");
        assert!(o.stdout.is_empty(), "{args:?}");
        let err: Value = serde_json::from_str(stderr.trim()).unwrap();
        assert_eq!(err["error"]["code"], *code, "{args:?}");
        assert!(err["error"]["message"].as_str().unwrap().contains(names), "{args:?}: {err}");
    }
    // The same windows, said properly, answer.
    let hot =
        json(p.root(), &["hotspots", "--since", "1 year ago", "--under", "shop", "--top", "1"]);
    assert_eq!(hot["files"].as_array().unwrap().len(), 1, "{hot}");
    assert!(hot["files"][0]["path"].as_str().unwrap().starts_with("shop/"), "{hot}");
}

/// Files the SHOP tests do not need: a module whose name is two words, a payment
/// module that uses both words, an option table.
const SHOP_MORE: &str = r#"
//- shop/giftcard.py
"""Vouchers bought in the shop."""


def redeem(voucher, amount):
    """Take an amount off a voucher's balance."""
    voucher.balance -= amount
    return voucher.balance
//- shop/payment.py
"""Payment methods: a credit card, or a card given as a gift."""


def pay_by_card(card, amount):
    """Charge a card; a gift card is charged like any other card."""
    return card.charge(amount)
//- shop/settings.py
OPTIONS = {"max-parcel-grams": 30000}
"#;

#[test]
fn localize_finds_a_module_the_title_names_in_two_words() {
    let p = TempProject::with_fixture(&format!("{SHOP}{SHOP_MORE}"));
    let (paths, v) = localize(p.root(), "Gift card can be used twice");
    let at = paths.iter().position(|p| p == "shop/giftcard.py").expect("giftcard.py found");
    assert!(
        v[at]["evidence"].as_array().unwrap().iter().any(|e| e["kind"] == "path_mentioned"),
        "{:#}",
        v[at]
    );
}

#[test]
fn localize_finds_where_a_kebab_case_option_is_declared() {
    let p = TempProject::with_fixture(&format!("{SHOP}{SHOP_MORE}"));
    let (paths, v) = localize(p.root(), "Setting `max-parcel-grams` to 0 should disable the limit");
    assert_eq!(paths[0], "shop/settings.py");
    assert!(evidence_kinds(&v[0]).contains(&"literal".to_owned()), "{:#}", v[0]);
}

#[test]
fn localize_refuses_an_empty_or_missing_query() {
    let p = TempProject::with_fixture(SHOP);
    let o = ironbees(p.root()).args(["localize", "-q", "  \n"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("INVALID_ARGUMENT"));
    let o =
        ironbees(p.root()).args(["localize", "--query-file", "no/such/issue.md"]).output().unwrap();
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("NOT_FOUND"));
    // A log dump passed by mistake is refused, not searched for seconds.
    p.write("huge.log", "Traceback apply discount\n".repeat(50_000));
    let huge = p.path("huge.log");
    let o = ironbees(p.root()).arg("localize").arg("--query-file").arg(&huge).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("FILE_TOO_LARGE"));
}

#[test]
fn localize_reads_a_query_that_is_not_utf8_with_a_warning() {
    let p = TempProject::with_fixture(SHOP);
    // Latin-1: "café" and a non-breaking space around the words that matter.
    p.write("issue.txt", b"caf\xe9\xa0Discount.apply rounds the total wrong\n".as_slice());
    let o = ironbees(p.root())
        .args(["localize", "--json", "--query-file"])
        .arg(p.path("issue.txt"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("INVALID_UTF8") && stderr.contains("offset 3"), "{stderr}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["path"], "shop/pricing.py", "{v:#}");
}

#[test]
fn impact_lists_dependents_by_distance_and_marks_tests() {
    let p = TempProject::with_fixture(SHOP);
    let v = json(p.root(), &["impact", "shop/pricing.py"]);
    let deps: Vec<(String, u64, bool)> = v["dependents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_owned(),
                d["distance"].as_u64().unwrap(),
                d["test"].as_bool().unwrap(),
            )
        })
        .collect();
    assert!(deps.contains(&("shop/cart.py".into(), 1, false)), "{deps:?}");
    assert!(deps.contains(&("shop/checkout.py".into(), 2, false)), "{deps:?}");
    assert!(deps.contains(&("tests/test_pricing.py".into(), 1, true)), "{deps:?}");
    assert!(
        !deps.iter().any(|d| d.0 == "shop/shipping.py"),
        "shipping does not use pricing: {deps:?}"
    );
}

#[test]
fn impact_of_a_file_nothing_uses_is_zero() {
    let p = TempProject::with_fixture(SHOP);
    p.write("shop/orphan.py", "def lonely():\n    return 1\n");
    let o = ironbees(p.root()).args(["impact", "shop/orphan.py", "--json"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["radius"]["total"], 0, "{v:#}");
    assert_eq!(v["radius"]["risk"], "low", "{v:#}");
    // Not `-0.0`, which the sum of no floats is.
    let raw = String::from_utf8_lossy(&o.stdout);
    assert!(raw.contains("\"weighted\": 0.0"), "{raw}");
}

#[test]
fn targets_outside_the_project_are_refused_as_such() {
    let p = TempProject::with_fixture(SHOP);
    let inside = p.root().join("shop/../shop/cart.py");
    let cases: &[&[&str]] = &[
        &["impact", "../outside.py"],
        &["impact", "../shop/cart.py::Cart"],
        &["graph", "deps", "/nowhere/x.py"],
        &["graph", "callers", "../x.py:3"],
        &["graph", "callees", ".."],
    ];
    for args in cases {
        let o = ironbees(p.root()).args(*args).arg("--json").output().unwrap();
        assert_eq!(o.status.code(), Some(4), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        let err: Value = serde_json::from_slice(&o.stderr).unwrap();
        assert_eq!(err["error"]["code"], "PATH_OUTSIDE_ROOT", "{args:?}: {err}");
        assert!(o.stdout.is_empty());
    }
    // `..` that stays inside is a path like any other.
    let v = json(p.root(), &["impact", inside.to_str().unwrap()]);
    assert_eq!(v["target"]["files"][0], "shop/cart.py", "{v}");
}

#[test]
fn graph_callers_walks_up_the_call_tree() {
    let p = TempProject::with_fixture(SHOP);
    let v = json(p.root(), &["graph", "callers", "Discount.apply"]);
    let symbols: Vec<(&str, u64)> = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["symbol"].as_str().unwrap_or(""), n["distance"].as_u64().unwrap()))
        .collect();
    assert!(symbols.contains(&("Cart.discounted_total", 1)), "{symbols:?}");
    assert!(symbols.contains(&("checkout", 2)), "{symbols:?}");
}

#[test]
fn repomap_fits_every_budget_and_grows_with_it() {
    let p = TempProject::with_fixture(SHOP);
    let mut last = 0;
    for budget in [40u64, 120, 1000] {
        let v = json(p.root(), &["repomap", "--tokens", &budget.to_string()]);
        let tokens = v["tokens"].as_u64().unwrap();
        assert!(tokens <= budget, "{tokens} tokens for a budget of {budget}");
        let symbols: usize = v["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["symbols"].as_array().unwrap().len())
            .sum();
        assert!(symbols >= last, "more budget lost definitions: {symbols} < {last}");
        last = symbols;
    }
    let v = json(p.root(), &["repomap", "--tokens", "1000"]);
    assert!(v["text"].as_str().unwrap().contains("class Discount:"));
    // No budget is a mistake, not an empty map.
    let o = ironbees(p.root()).args(["repomap", "--tokens", "0"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("INVALID_ARGUMENT"));
}

#[test]
fn an_answer_from_an_empty_index_says_why_it_is_empty() {
    let p = TempProject::with_fixture("//- README.md\nA shop, one day.\n");
    for args in [&["localize", "-q", "checkout fails"][..], &["search", "checkout"], &["repomap"]] {
        let o = ironbees(p.root()).args(args).arg("--json").output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{args:?}: {stderr}");
        assert!(stderr.contains("nothing is indexed"), "{args:?}: {stderr}");
    }
    // With code to read, no such word.
    let p = TempProject::with_fixture(SHOP);
    let o = ironbees(p.root()).args(["search", "checkout", "--json"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&o.stderr).contains("nothing is indexed"));
}

#[test]
fn repomap_focus_on_a_directory_is_every_file_under_it() {
    let p = TempProject::with_fixture(SHOP);
    let map = |focus: &[&str]| {
        let mut args = vec!["repomap", "--tokens", "300", "--focus"];
        args.extend(focus);
        json(p.root(), &args)
    };
    let by_dir = map(&["tests"]);
    assert_eq!(by_dir, map(&["tests/test_pricing.py"]));
    // and it is not the map without focus: the test pulls pricing up.
    assert_ne!(by_dir, json(p.root(), &["repomap", "--tokens", "300"]));
    std::fs::create_dir(p.path("notes")).unwrap();
    std::fs::write(p.path("notes/todo.txt"), "later\n").unwrap();
    for (dir, code) in [("notes", "NOT_FOUND"), (".", "INVALID_ARGUMENT")] {
        let o = ironbees(p.root()).args(["repomap", "--focus", dir, "--json"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stderr.contains(code), "{dir}: {stderr}");
    }
}

#[test]
fn report_describes_the_project_with_a_mermaid_map() {
    let p = TempProject::with_fixture(SHOP);
    let v = json(p.root(), &["report", "--format", "json"]);
    assert_eq!(v["overview"]["files"], 7);
    assert_eq!(v["overview"]["test_files"], 1);
    let o = ironbees(p.root()).args(["report", "--format", "md"]).output().unwrap();
    assert!(o.status.success());
    let md = String::from_utf8(o.stdout).unwrap();
    assert!(md.contains("```mermaid"), "{md}");
}

#[test]
fn a_closed_stdout_ends_quietly() {
    let p = TempProject::with_fixture(SHOP);
    let mut child = ironbees(p.root())
        .args(["symbols", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The mock as the only model: an OpenAI-compatible server at its URL, with
/// `model` as the chat model (none: a server run only for embeddings), and no
/// key of a real provider. For the CLI and for an MCP server's command alike.
fn openai_mock_env(c: &mut Command, mock: &test_support::mock_llm::MockLlm, model: Option<&str>) {
    c.env("OPENAI_BASE_URL", mock.openai_url());
    match model {
        Some(m) => c.env("OPENAI_MODEL", m),
        None => c.env_remove("OPENAI_MODEL"),
    };
    c.env_remove("OPENAI_API_KEY").env_remove("ANTHROPIC_API_KEY");
}

/// `localize --embeddings` and `search --embeddings` against the wire-level mock
/// of an OpenAI-compatible server (vectors: bag of words, so predictable).
mod embeddings {
    use test_support::mock_llm::{MockLlm, Reply};

    use super::*;

    fn with_server(dir: &Path, mock: &MockLlm) -> Command {
        std::fs::create_dir_all(dir.join(".ironbees")).unwrap();
        std::fs::write(
            dir.join(".ironbees/config.yaml"),
            "llm:\n  embeddings:\n    model: nomic-embed-text\n    batch: 8\n  retry:\n    base_delay_ms: 10\n",
        )
        .unwrap();
        let mut c = ironbees(dir);
        // A server run only for embeddings: no chat model is named.
        openai_mock_env(&mut c, mock, None);
        c
    }

    /// Issue 25: embeddings were the CLI's alone. Over MCP, `localize` with
    /// `embeddings: true` asks the configured model too, and ranks as the CLI does.
    #[test]
    fn mcp_localize_uses_the_configured_embeddings_like_the_cli() {
        let p = TempProject::with_fixture(SHOP);
        let mock = MockLlm::start();
        let query = "the total price leaves out packaging";
        let o = with_server(p.root(), &mock)
            .args(["localize", "-q", query, "--embeddings", "--json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let cli: Value = serde_json::from_slice(&o.stdout).unwrap();
        let cli_paths: Vec<&str> =
            cli.as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap()).collect();
        let embedded = embedded_inputs(&mock);
        let mut s =
            crate::suite::mcp::Raw::ready_with(p.root(), |c| openai_mock_env(c, &mock, None));
        let r = s.call(1, "localize", json!({"query": query, "embeddings": true}));
        assert_ne!(r["isError"], true, "{r}");
        let files = r["structuredContent"]["files"].as_array().unwrap().clone();
        let paths: Vec<&str> = files.iter().map(|f| f["path"].as_str().unwrap()).collect();
        assert_eq!(paths, cli_paths);
        assert!(evidence_kinds(&files[1]).contains(&"similar".to_owned()), "{}", files[1]);
        // The CLI's cache (one per model, under .ironbees/) served every vector,
        // the request's included: the server embedded nothing new.
        assert_eq!(embedded_inputs(&mock), embedded);
    }

    fn embedded_inputs(mock: &MockLlm) -> usize {
        mock.requests()
            .iter()
            .filter(|r| r.path.ends_with("/embeddings"))
            .map(|r| r.body["input"].as_array().map_or(0, Vec::len))
            .sum()
    }

    #[test]
    fn the_embedding_vote_lifts_the_file_the_model_finds_and_is_cached() {
        let p = TempProject::with_fixture(SHOP);
        let mock = MockLlm::start();
        // Words alone rank the files of totals and prices first; the mock's
        // vectors see "packaging" and "total" together in parcel_weight's doc,
        // which is where the packaging is added.
        let query = "the total price leaves out packaging";
        let (plain, _) = localize(p.root(), query);
        assert_eq!(plain[..3], ["shop/cart.py", "shop/pricing.py", "shop/shipping.py"]);
        let o = with_server(p.root(), &mock)
            .args(["localize", "-q", query, "--embeddings", "--json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let arr = v.as_array().unwrap();
        let paths: Vec<&str> = arr.iter().map(|r| r["path"].as_str().unwrap()).collect();
        assert_eq!(paths[..3], ["shop/cart.py", "shop/shipping.py", "shop/pricing.py"]);
        let shipping = &arr[1];
        assert!(evidence_kinds(shipping).contains(&"similar".to_owned()), "{shipping}");
        let defs = embedded_inputs(&mock);
        assert!(defs > 10, "every definition and the request embedded: {defs}");
        let requests = mock.request_count();
        assert!(requests >= defs / 8, "batches of 8: {requests} requests");
        assert!(
            mock.requests().iter().all(|r| r.body["model"] == "nomic-embed-text"),
            "the configured model"
        );

        // Again: the definitions come from the cache; only the new request is sent.
        let o = with_server(p.root(), &mock)
            .args(["search", "weight of a parcel in grams", "--embeddings", "--json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(embedded_inputs(&mock), defs + 1, "only the query is new");
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let hits = v["hits"].as_array().unwrap();
        assert!(
            hits.iter().any(|h| h["matched"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["retriever"] == "embedding")),
            "{v}"
        );
    }

    #[test]
    fn the_weight_of_the_models_vote_is_the_users_to_set() {
        let p = TempProject::with_fixture(SHOP);
        let mock = MockLlm::start();
        let query = "the total price leaves out packaging";
        let ranked = |weight: &str| {
            let o = with_server(p.root(), &mock)
                .env("IRONBEES_LLM__EMBEDDINGS__WEIGHT", weight)
                .args(["localize", "-q", query, "--embeddings", "--json"])
                .output()
                .unwrap();
            (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), o.stderr)
        };
        // At 1 the model's find comes second (the test above); a small model's
        // vote, weighted down, no longer moves it past the signals' files.
        let (code, out, _) = ranked("0.1");
        assert_eq!(code, Some(0));
        let v: Value = serde_json::from_str(&out).unwrap();
        let paths: Vec<&str> =
            v.as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap()).collect();
        assert_eq!(paths[..2], ["shop/cart.py", "shop/pricing.py"], "{paths:?}");
        for bad in ["0", "-1", "1000"] {
            let (code, _, err) = ranked(bad);
            assert_eq!(code, Some(2), "{bad}");
            let err: Value = serde_json::from_slice(&err).unwrap();
            assert_eq!(err["error"]["code"], "INVALID_ARGUMENT", "{err}");
            let msg = err["error"]["message"].as_str().unwrap();
            assert!(msg.contains("llm.embeddings.weight"), "{msg}");
        }
    }

    #[test]
    fn vectors_of_deleted_code_leave_the_cache() {
        let p = TempProject::with_fixture(SHOP);
        let mock = MockLlm::start();
        let cache_size = || {
            let dir = p.root().join(".ironbees/embeddings");
            let files: Vec<_> =
                std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
            assert_eq!(
                files.len(),
                1,
                "one cache file per model, nothing left beside it: {files:?}"
            );
            std::fs::metadata(&files[0]).unwrap().len()
        };
        let localize = |query: &str| {
            let o = with_server(p.root(), &mock)
                .args(["localize", "-q", query, "--embeddings", "--json"])
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        };
        localize("parcel weight");
        let full = cache_size();
        // Most of the code goes away: its vectors are no longer asked for.
        for f in ["shop/cart.py", "shop/checkout.py", "shop/pricing.py", "tests/test_pricing.py"] {
            std::fs::remove_file(p.root().join(f)).unwrap();
        }
        let before = embedded_inputs(&mock);
        localize("parcel weight in grams");
        assert_eq!(embedded_inputs(&mock), before + 1, "only the new request is embedded");
        let kept = cache_size();
        assert!(kept < full / 2, "stale vectors dropped: {full} bytes, then {kept}");
        // What is kept still serves: a third run embeds nothing but its request.
        localize("shipping weight");
        assert_eq!(embedded_inputs(&mock), before + 2);
    }

    #[test]
    fn server_failures_exit_with_their_code_and_leave_a_readable_cache() {
        let p = TempProject::with_fixture(SHOP);
        let mock = MockLlm::start();
        // The first batch is embedded, then the server breaks for good.
        mock.push(Reply::text("ok"));
        mock.set_default(Reply::malformed());
        let o = with_server(p.root(), &mock)
            .args(["localize", "-q", "parcel weight", "--embeddings", "--json"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(7), "{}", String::from_utf8_lossy(&o.stderr));
        let err: Value = serde_json::from_slice(&o.stderr).unwrap();
        assert_eq!(err["error"]["code"], "LLM_BAD_RESPONSE", "{err}");
        assert!(err["error"]["message"].as_str().unwrap().contains("nomic-embed-text"), "{err}");

        // What was embedded before the failure is kept: the next run (server
        // healthy) sends only what is missing.
        let first_batch = 8;
        mock.set_default(Reply::text("ok"));
        let before = embedded_inputs(&mock);
        let o = with_server(p.root(), &mock)
            .args(["localize", "-q", "parcel weight", "--embeddings", "--json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let fresh = embedded_inputs(&mock) - before;
        let cold = TempProject::with_fixture(SHOP);
        let mock2 = MockLlm::start();
        let o = with_server(cold.root(), &mock2)
            .args(["localize", "-q", "parcel weight", "--embeddings", "--json"])
            .output()
            .unwrap();
        assert!(o.status.success());
        assert_eq!(
            fresh,
            embedded_inputs(&mock2) - first_batch,
            "the cached batch was not sent again"
        );

        // A rate limit that does not end is LLM_RATE_LIMITED (exit code of its own).
        let mock3 = MockLlm::start();
        mock3.set_default(Reply::status(429));
        let o = with_server(cold.root(), &mock3)
            .args(["localize", "-q", "a new request", "--embeddings", "--json"])
            .output()
            .unwrap();
        let err: Value = serde_json::from_slice(&o.stderr).unwrap();
        assert_eq!(err["error"]["code"], "LLM_RATE_LIMITED", "{err}");
    }

    #[test]
    fn several_providers_without_a_chat_default_still_embed() {
        // Two servers and no `llm.default`: which one chats is not said, which does
        // not matter to a command that only embeds.
        let p = TempProject::with_fixture(SHOP);
        let mock = MockLlm::start();
        std::fs::create_dir_all(p.root().join(".ironbees")).unwrap();
        std::fs::write(
            p.root().join(".ironbees/config.yaml"),
            format!(
                "llm:\n  providers:\n    chat:\n      kind: openai-compatible\n      \
                 base_url: http://127.0.0.1:9/v1\n      model: big\n    embed:\n      \
                 kind: openai-compatible\n      base_url: {}\n      model: small\n  \
                 embeddings:\n    provider: embed\n    model: nomic-embed-text\n",
                mock.openai_url()
            ),
        )
        .unwrap();
        let run = |args: &[&str]| {
            let mut c = ironbees(p.root());
            for var in
                ["OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]
            {
                c.env_remove(var);
            }
            c.args(args).output().unwrap()
        };
        let o = run(&["localize", "-q", "parcel weight", "--embeddings", "--json"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(embedded_inputs(&mock) > 10, "the definitions went to the embedding server");
        let o = run(&["ask", "hello", "--json"]);
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("llm.default"),
            "chatting still needs the choice"
        );
    }

    #[test]
    fn without_any_provider_the_flag_says_how_to_get_an_embedding_model() {
        let p = TempProject::with_fixture(SHOP);
        let mut c = ironbees(p.root());
        for var in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]
        {
            c.env_remove(var);
        }
        let o = c.args(["search", "parcel", "--embeddings", "--json"]).output().unwrap();
        assert_eq!(o.status.code(), Some(2));
        let err: Value = serde_json::from_slice(&o.stderr).unwrap();
        assert_eq!(err["error"]["code"], "INVALID_ARGUMENT", "{err}");
        let message = err["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("OPENAI_API_KEY") && message.contains("llm.embeddings.model"),
            "{err}"
        );
        assert!(!message.contains("ANTHROPIC"), "Anthropic has no embeddings API: {err}");
        assert!(o.stdout.is_empty());
    }

    #[test]
    fn without_an_embedding_model_the_flag_is_refused_before_any_request() {
        let p = TempProject::with_fixture(SHOP);
        let mock = MockLlm::start();
        let mut c = ironbees(p.root());
        c.env("OPENAI_BASE_URL", mock.openai_url()).env("OPENAI_MODEL", "llama3.2");
        let o = c.args(["localize", "-q", "parcel", "--embeddings", "--json"]).output().unwrap();
        assert_eq!(o.status.code(), Some(2));
        let err: Value = serde_json::from_slice(&o.stderr).unwrap();
        assert!(
            err["error"]["message"].as_str().unwrap().contains("llm.embeddings.model"),
            "{err}"
        );
        assert_eq!(mock.request_count(), 0);
    }
}

#[test]
fn route_prints_intent_strategies_and_top_k() {
    let p = TempProject::new();
    let o = ironbees(p.root())
        .args(["route", "--json", "Explain how user login works"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["intent"], "explain");
    assert_eq!(v["needsChange"], false);
    assert!(v["topK"].as_u64().unwrap() >= 1);
    assert!(!v["strategies"].as_array().unwrap().is_empty());
    // Korean, and a budget under 500 ms: one retriever.
    let o = ironbees(p.root())
        .args(["route", "--json", "--budget-ms", "300", "로그인 버그 고쳐줘"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["intent"], "fix");
    assert_eq!(v["needsChange"], true);
    assert_eq!(v["strategies"].as_array().unwrap().len(), 1);
    // Text output names the intent.
    let o = ironbees(p.root()).args(["route", "Find calculate_total"]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("symbol_lookup"), "{text}");
    let o = ironbees(p.root()).args(["route", "  "]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// `localize --rerank` (issue 37): the configured chat model picks among the
/// signals' first files, against the wire-level mock of an OpenAI-compatible server.
mod rerank {
    use test_support::mock_llm::{MockLlm, Reply};

    use super::*;

    const QUERY: &str = "the total price leaves out packaging";
    const MODEL: &str = "local-coder";

    fn with_model(dir: &Path, mock: &MockLlm) -> Command {
        std::fs::create_dir_all(dir.join(".ironbees")).unwrap();
        std::fs::write(
            dir.join(".ironbees/config.yaml"),
            "llm:\n  retry:\n    base_delay_ms: 10\n",
        )
        .unwrap();
        let mut c = ironbees(dir);
        openai_mock_env(&mut c, mock, Some(MODEL));
        c
    }

    /// (paths, stderr's rerank report)
    fn reranked(dir: &Path, mock: &MockLlm) -> (Vec<String>, Value, Value) {
        let o = with_model(dir, mock)
            .args(["localize", "-q", QUERY, "--rerank", "--json"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let paths =
            v.as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap().to_owned()).collect();
        let stderr = String::from_utf8_lossy(&o.stderr);
        let report = stderr
            .lines()
            .find_map(|l| {
                serde_json::from_str::<Value>(l).ok().filter(|v| v.get("rerank").is_some())
            })
            .unwrap_or_else(|| panic!("no rerank report on stderr: {stderr}"));
        (paths, v, report["rerank"].clone())
    }

    #[test]
    fn the_models_pick_among_the_candidates_rises_and_its_tokens_are_reported() {
        let p = TempProject::with_fixture(SHOP);
        let (plain, _) = localize(p.root(), QUERY);
        assert_eq!(plain[..3], ["shop/cart.py", "shop/pricing.py", "shop/shipping.py"]);
        let mock = MockLlm::start();
        // A made-up path is dropped; the third candidate, picked first, comes first.
        mock.push(Reply::structured(json!({"files": ["shop/packaging.py", "shop/shipping.py"]})));
        let (paths, v, report) = reranked(p.root(), &mock);
        assert_eq!(paths[..3], ["shop/shipping.py", "shop/cart.py", "shop/pricing.py"]);
        assert_eq!(paths.len(), plain.len(), "the same files, reordered");
        let first = &v.as_array().unwrap()[0];
        assert_eq!(first["evidence"][0]["kind"], "picked", "{first}");
        assert_eq!(report["picks"], json!(["shop/shipping.py"]), "{report}");
        assert_eq!(report["candidates"][0], "shop/cart.py");
        assert!(report["inputTokens"].as_u64().unwrap() > 0, "{report}");
        assert!(report.get("error").is_none(), "{report}");
        // What the model was shown: the request, and each candidate's outline.
        let reqs = mock.requests();
        assert_eq!(reqs.len(), 1, "one model call");
        let sent = reqs[0].body.to_string();
        for shown in [QUERY, "### 1. shop/cart.py", "### 3. shop/shipping.py", "def parcel_weight"]
        {
            assert!(sent.contains(shown), "{shown} not in {sent}");
        }
        assert!(reqs[0].body["response_format"].is_object(), "a JSON-schema answer was asked for");
    }

    #[test]
    fn a_model_that_fails_or_answers_nonsense_leaves_the_ranking_as_it_was() {
        let p = TempProject::with_fixture(SHOP);
        let (plain, _) = localize(p.root(), QUERY);
        // (the server's answer, the code the report gives)
        let cases = [
            (Reply::text("I think the cart is to blame."), "LLM_BAD_RESPONSE"),
            (Reply::structured(json!({"files": ["nowhere.py"]})), "LLM_BAD_RESPONSE"),
            (Reply::rate_limited("0"), "LLM_RATE_LIMITED"),
            (Reply::malformed(), "LLM_BAD_RESPONSE"),
        ];
        for (reply, code) in cases {
            let mock = MockLlm::start();
            mock.set_default(reply);
            let (paths, _, report) = reranked(p.root(), &mock);
            assert_eq!(paths, plain, "{code}");
            assert_eq!(report["error"]["code"], code, "{report}");
            assert_eq!(report["picks"], json!([]), "{report}");
        }
        // Without --json the reason is a warning, and stdout is the ranking.
        let mock = MockLlm::start();
        mock.set_default(Reply::text("no idea"));
        let o = with_model(p.root(), &mock)
            .args(["localize", "-q", QUERY, "--rerank"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("warning: rerank") && err.contains("LLM_BAD_RESPONSE"), "{err}");
        assert!(String::from_utf8_lossy(&o.stdout).contains("shop/cart.py"));
    }

    #[test]
    fn without_a_model_rerank_is_refused_with_a_clear_error() {
        let p = TempProject::with_fixture(SHOP);
        let o = ironbees(p.root())
            .env_remove("OPENAI_BASE_URL")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .args(["localize", "-q", QUERY, "--rerank", "--json"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
        let err: Value = serde_json::from_slice(&o.stderr).unwrap();
        assert_eq!(err["error"]["code"], "INVALID_ARGUMENT", "{err}");
        assert!(err["error"]["message"].as_str().unwrap().contains("--rerank needs a model"));
    }

    /// One engine: over MCP, `localize` with `rerank: true` asks the same model
    /// and answers with the same ranking and the model's report.
    #[test]
    fn mcp_localize_reranks_like_the_cli() {
        let p = TempProject::with_fixture(SHOP);
        let mock = MockLlm::start();
        mock.set_default(Reply::structured(json!({"files": ["shop/shipping.py"]})));
        let (cli, _, _) = reranked(p.root(), &mock);
        let mut s = crate::suite::mcp::Raw::ready_with(p.root(), |c| {
            openai_mock_env(c, &mock, Some(MODEL));
        });
        let r = s.call(1, "localize", json!({"query": QUERY, "rerank": true}));
        assert_ne!(r["isError"], true, "{r}");
        let out = &r["structuredContent"];
        let paths: Vec<&str> =
            out["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
        assert_eq!(paths, cli);
        assert_eq!(out["rerank"]["picks"], json!(["shop/shipping.py"]), "{out}");
    }
}
