//! `ironbees search`: hybrid search over definitions.

use std::{path::Path, process::Command};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;
use test_support::TempProject;

fn ironbees(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut c = Command::cargo_bin("ironbees").unwrap();
    c.arg("-C").arg(dir).args(args);
    c.env("XDG_CONFIG_HOME", dir.join(".no-user-config"));
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn project() -> TempProject {
    TempProject::with_fixture(
        r#"
        //- billing/invoice.py
        from billing.tax import vat_for

        class InvoiceBuilder:
            def add_line(self, sku, amount):
                if amount < 0:
                    raise ValueError("negative amounts are not allowed on an invoice")
                self.lines.append((sku, amount + vat_for(amount)))
        //- billing/tax.py
        def vat_for(amount):
            """Value added tax owed on an amount, at the standard rate."""
            return amount * 0.2
        "#,
    )
}

#[test]
fn search_json_lists_definitions_with_their_retrievers() {
    let p = project();
    let (code, stdout, stderr) =
        ironbees(p.root(), &["search", "InvoiceBuildr", "-k", "3", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["query_kind"], "symbol");
    assert!(v["weights"]["name"].as_f64().unwrap() > v["weights"]["bm25"].as_f64().unwrap());
    let hits = v["hits"].as_array().unwrap();
    assert!(!hits.is_empty() && hits.len() <= 3, "{v}");
    let top = &hits[0];
    assert_eq!(top["path"], "billing/invoice.py");
    assert_eq!(top["qualified_name"], "InvoiceBuilder");
    assert_eq!(top["kind"], "class");
    assert_eq!(top["line"], 3);
    assert_eq!(top["end_line"], 7);
    assert!(top["score"].as_f64().unwrap() > 0.0);
    let matched = top["matched"].as_array().unwrap();
    assert!(
        matched.iter().any(|m| m["retriever"] == "name" && m["rank"] == 1),
        "the typo is found by the fuzzy name index: {top}"
    );

    // An edit is picked up before answering (the index is brought up to date).
    p.write("billing/tax.py", "def excise_duty(amount):\n    return amount * 0.1\n");
    let (code, stdout, stderr) = ironbees(p.root(), &["search", "excise duty", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["hits"][0]["qualified_name"], "excise_duty", "{v}");
}

#[test]
fn search_text_output_shows_location_and_kind() {
    let p = project();
    let (code, stdout, stderr) =
        ironbees(p.root(), &["search", "negative amounts are not allowed on an invoice"]);
    assert_eq!(code, 0, "{stderr}");
    let first = stdout.lines().next().unwrap_or_default();
    assert!(first.contains("billing/invoice.py:4-7 method InvoiceBuilder.add_line"), "{stdout}");
}

#[test]
fn empty_and_wordless_queries_are_invalid_unmatched_ones_empty() {
    let p = project();
    for q in ["", "   ", "?!-- ::"] {
        let (code, _, stderr) = ironbees(p.root(), &["search", q, "--json"]);
        assert_eq!(code, 2, "{q:?}: {stderr}");
        let err: Value = serde_json::from_str(stderr.trim()).unwrap();
        assert_eq!(err["error"]["code"], "INVALID_ARGUMENT", "{q:?}");
    }
    let (code, _, stderr) = ironbees(p.root(), &["search", "vat", "-k", "0"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("error[INVALID_ARGUMENT]"), "{stderr}");
    let (code, stdout, stderr) = ironbees(p.root(), &["search", "xylophone", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["hits"], serde_json::json!([]));
}

#[test]
fn search_help_has_an_example() {
    let (_, stdout, _) = ironbees(Path::new("."), &["search", "--help"]);
    assert!(stdout.contains("Examples:") && stdout.contains("ironbees search"), "{stdout}");
}
