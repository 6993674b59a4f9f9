use expect_test::{Expect, expect};
use protocol::{RouteBudget, RouteIntent};

use super::{route, route_with_budget};

/// One line per request: intent, change or read, strategies, top-k.
fn check(request: &str, expect: Expect) {
    let r = route(request);
    let strategies: Vec<&str> = r.strategies.iter().map(|s| s.as_str()).collect();
    let change = if r.needs_change { "change" } else { "read" };
    expect.assert_eq(&format!(
        "{} {change} [{}] k={}",
        r.intent.as_str(),
        strategies.join(","),
        r.top_k
    ));
}

#[test]
fn seed_examples() {
    check(
        "Explain how user login works",
        expect!["explain read [lexical,vector,symbol,graph] k=12"],
    );
    check("Find calculate_total", expect!["symbol_lookup read [symbol,lexical] k=5"]);
    check("Fix the division-by-zero bug", expect!["fix change [lexical,vector,symbol,graph] k=10"]);
    check(
        "Add a subtract() function",
        expect!["feature change [lexical,vector,symbol,graph] k=15"],
    );
}

#[test]
fn tricky() {
    // A failing test is a fix; writing a test about a bug is a test.
    check(
        "tests fail on CI since the upgrade",
        expect!["fix change [lexical,vector,symbol,graph] k=10"],
    );
    check(
        "add a regression test for the overflow bug",
        expect!["test change [symbol,graph,lexical] k=10"],
    );
    // "why" and a repair verb: the verb decides.
    check(
        "why does it crash on start? fix it",
        expect!["fix change [lexical,vector,symbol,graph] k=10"],
    );
    check(
        "why is the lock held across the await",
        expect!["explain read [lexical,vector,symbol,graph] k=12"],
    );
    // A flow question is a lookup, not an explanation.
    check(
        "how does data flow from the form into the orders table",
        expect!["flow_lookup read [lexical,graph,symbol] k=10"],
    );
    check("who calls send_invoice?", expect!["flow_lookup read [symbol,graph,lexical] k=10"]);
    // A name makes it a symbol lookup; words make it a concept lookup.
    check("where is UserRepository defined?", expect!["symbol_lookup read [symbol,lexical] k=5"]);
    check(
        "where is authentication handled?",
        expect!["concept_lookup read [lexical,vector,graph] k=10"],
    );
    // Korean: stems with particles and endings attached.
    check("로그인 버그 고쳐줘", expect!["fix change [lexical,vector,symbol,graph] k=10"]);
    check(
        "토큰 갱신 기능을 추가해 주세요",
        expect!["feature change [lexical,vector,symbol,graph] k=15"],
    );
    check("이 함수 리팩터링 해줘", expect!["refactor change [symbol,graph,lexical] k=20"]);
    check(
        "세션이 어떻게 관리되는지 설명해줘",
        expect!["explain read [lexical,vector,symbol,graph] k=12"],
    );
    check("send_invoice를 호출하는 곳", expect!["flow_lookup read [symbol,graph,lexical] k=10"]);
    check("UserRepository 어디 있어?", expect!["symbol_lookup read [symbol,lexical] k=5"]);
    // A bare stack trace is a report.
    check(
        "Traceback (most recent call last):\n  File \"app/views.py\", line 12, in index\nZeroDivisionError: division by zero",
        expect!["fix change [symbol,lexical,graph,vector] k=10"],
    );
    // The opening says what is asked, whatever cue follows.
    check(
        "Explain how expression simplification works",
        expect!["explain read [lexical,vector,symbol,graph] k=12"],
    );
    check(
        "How does the cleanup job remove old sessions?",
        expect!["explain read [lexical,vector,symbol,graph] k=12"],
    );
    check(
        "simplify the expression printer",
        expect!["refactor change [symbol,graph,lexical] k=20"],
    );
    // No cue at all: a read-only route.
    check("the session table", expect!["concept_lookup read [lexical,vector,graph] k=10"]);
}

#[test]
fn budget_cuts_the_path() {
    let tight = RouteBudget { latency_ms: 300, tokens: 1_000 };
    let r = route_with_budget("Explain how user login works", tight);
    assert_eq!(r.strategies.len(), 1);
    assert_eq!(r.top_k, 2, "1000 tokens hold two chunks");
    let medium = RouteBudget { latency_ms: 1_000, tokens: 100_000 };
    let r = route_with_budget("Explain how user login works", medium);
    assert!(!r.strategies.contains(&protocol::Strategy::Vector));
    assert_eq!(r.top_k, 12);
}

struct Labelled {
    split: &'static str,
    lang: &'static str,
    intent: RouteIntent,
    request: &'static str,
}

fn labelled() -> Vec<Labelled> {
    let files = [
        include_str!("../../test_data/router_dev.tsv"),
        include_str!("../../test_data/router_heldout.tsv"),
    ];
    let mut all = Vec::new();
    for file in files {
        for line in file.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
            let cols: Vec<&str> = line.splitn(4, '\t').collect();
            assert_eq!(cols.len(), 4, "bad line: {line}");
            let intent =
                RouteIntent::parse(cols[2]).unwrap_or_else(|| panic!("bad intent: {line}"));
            all.push(Labelled { split: cols[0], lang: cols[1], intent, request: cols[3] });
        }
    }
    all
}

/// Accuracy over the labelled set, by split and language (`--nocapture` prints the
/// report and every miss). The floors sit a few points under what was measured
/// (98.8% overall when written, docs/BENCHMARKS.md): a rule change that loses
/// several requests fails here, one new hard request does not.
#[test]
#[allow(
    clippy::print_stderr,
    reason = "the per-language report is the test's output (--nocapture)"
)]
fn labelled_set_accuracy() {
    let all = labelled();
    assert!(all.len() >= 150);
    assert!(all.iter().filter(|l| l.lang == "ko").count() >= 60);
    let mut report = String::new();
    let mut accuracy = |name: &str, pick: &dyn Fn(&Labelled) -> bool| -> f64 {
        let chosen: Vec<&Labelled> = all.iter().filter(|l| pick(l)).collect();
        let right = chosen.iter().filter(|l| route(l.request).intent == l.intent).count();
        let acc = right as f64 / chosen.len() as f64;
        report.push_str(&format!("{name}: {right}/{} = {:.1}%\n", chosen.len(), acc * 100.0));
        acc
    };
    let overall = accuracy("overall", &|_| true);
    let en = accuracy("en", &|l| l.lang == "en");
    let ko = accuracy("ko", &|l| l.lang == "ko");
    let dev = accuracy("dev", &|l| l.split == "dev");
    let heldout = accuracy("heldout", &|l| l.split == "heldout");
    let heldout_en = accuracy("heldout en", &|l| l.split == "heldout" && l.lang == "en");
    let heldout_ko = accuracy("heldout ko", &|l| l.split == "heldout" && l.lang == "ko");
    for l in &all {
        let got = route(l.request).intent;
        if got != l.intent {
            report.push_str(&format!(
                "  miss [{} {}] want {} got {}: {}\n",
                l.split,
                l.lang,
                l.intent.as_str(),
                got.as_str(),
                l.request
            ));
        }
    }
    eprintln!("{report}");
    let floors = [
        (overall, 0.95),
        (en, 0.95),
        (ko, 0.95),
        (dev, 0.95),
        (heldout, 0.95),
        (heldout_en, 0.95),
        (heldout_ko, 0.95),
    ];
    for (i, (got, floor)) in floors.into_iter().enumerate() {
        assert!(got >= floor, "accuracy #{i} fell to {got:.3} (floor {floor})\n{report}");
    }
}

/// The router's latency over the labelled set (seed target: under 5 ms a request).
/// Ignored: timings belong in docs/BENCHMARKS.md, not in asserts. Run with
/// `cargo test -p retrieval --release --lib route_latency -- --ignored --nocapture`.
#[test]
#[ignore]
#[allow(clippy::print_stderr, reason = "the measurement is the test's output")]
fn route_latency() {
    let all = labelled();
    let rounds = 50;
    let mut times = Vec::with_capacity(all.len() * rounds);
    for _ in 0..rounds {
        for l in &all {
            let start = std::time::Instant::now();
            std::hint::black_box(route(std::hint::black_box(l.request)));
            times.push(start.elapsed().as_secs_f64() * 1e6);
        }
    }
    times.sort_by(f64::total_cmp);
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    eprintln!(
        "route latency over {} requests x {rounds}: mean {mean:.1} us, p50 {:.1} us, p99 {:.1} us, max {:.1} us",
        all.len(),
        at(0.5),
        at(0.99),
        at(1.0)
    );
}
