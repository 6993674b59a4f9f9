//! Shadow mode: a run's coder reads and edits an overlay through the same tools,
//! and the working tree stays as it was.

use engine::{Registry, Shadow, ShadowRoute, shadow_route};
use serde_json::{Value, json};
use test_support::TempProject;

use super::{call, open};

const CALC: &str = "def calculate(a, b):\n    return a / b\n";

fn tool(
    session: &engine::Session,
    overlay: &mut edit::Overlay,
    name: &str,
    args: Value,
) -> Result<Value, engine::ToolError> {
    let mut shadow = Shadow { overlay, workspace: None };
    call(|c| Registry::new().call_in(session, c, name, args, &mut shadow))
}

#[test]
fn edits_land_in_the_overlay_and_reads_see_them_while_the_disk_stays() {
    let p = TempProject::with_fixture(&format!("//- calc.py\n{CALC}"));
    let s = open(&p);
    let mut overlay = edit::Overlay::new();
    let read = tool(&s, &mut overlay, "read", json!({"target": "calc.py"})).unwrap();
    let hash = read["hash"].as_str().unwrap().to_owned();
    let args = json!({"edits": [{"path": "calc.py", "targetString": "    return a / b",
        "replacementString": "    if b == 0:\n        return None\n    return a / b",
        "expectedHash": hash}], "options": {"dryRun": false}});
    let changed = tool(&s, &mut overlay, "change", args.clone()).unwrap();
    assert_eq!(changed["dryRun"], false);
    assert!(
        changed["editResult"]["files"][0]["diff"].as_str().unwrap().contains("+    if b == 0:")
    );
    assert_eq!(p.read("calc.py"), CALC, "the working tree is untouched");
    let again = tool(&s, &mut overlay, "read", json!({"target": "calc.py"})).unwrap();
    assert!(again["content"].as_str().unwrap().contains("if b == 0"));
    assert_eq!(again["hash"], changed["editResult"]["files"][0]["newHash"]);
    // The old hash is stale now: the same edit again is refused, as on disk.
    let stale = tool(&s, &mut overlay, "change", args).unwrap_err();
    assert_eq!(stale.info.code.as_str(), "HASH_MISMATCH", "{stale}");
    // New files too.
    tool(&s, &mut overlay, "write", json!({"path": "test_calc.py", "content": "import calc\n"}))
        .unwrap();
    assert!(!p.path("test_calc.py").exists());
    assert_eq!(overlay.get("test_calc.py"), Some(&Some(b"import calc\n".to_vec())));
    // A preview changes nothing.
    let before = overlay.clone();
    let h = again["hash"].as_str().unwrap();
    tool(
        &s,
        &mut overlay,
        "change",
        json!({"edits": [{"path": "calc.py",
        "targetString": "return None", "replacementString": "return 0", "expectedHash": h}]}),
    )
    .unwrap();
    assert_eq!(overlay, before);
}

#[test]
fn an_edit_that_breaks_the_syntax_is_refused_and_the_overlay_kept() {
    let p = TempProject::with_fixture(&format!("//- calc.py\n{CALC}"));
    let s = open(&p);
    let mut overlay = edit::Overlay::new();
    let err = tool(
        &s,
        &mut overlay,
        "change",
        json!({"edits": [{"path": "calc.py",
        "targetString": "return a / b", "replacementString": "return (a / b"}],
        "options": {"dryRun": false}}),
    )
    .unwrap_err();
    assert_eq!(err.info.code.as_str(), "SYNTAX_ERROR", "{err}");
    assert!(err.info.message.contains("calc.py: syntax errors went from 0 to"), "{err}");
    assert!(overlay.is_empty());
}

#[test]
fn deleted_in_the_overlay_is_not_found_and_other_tools_warn_they_see_the_disk() {
    let p = TempProject::with_fixture(&format!(
        "//- calc.py\n{CALC}//- main.py\nfrom calc import calculate\nprint(calculate(1, 2))\n"
    ));
    let s = open(&p);
    let mut overlay = edit::Overlay::new();
    overlay.insert("main.py".into(), None);
    let err = tool(&s, &mut overlay, "read", json!({"target": "main.py"})).unwrap_err();
    assert_eq!(err.info.code.as_str(), "NOT_FOUND", "{err}");
    overlay.insert("calc.py".into(), Some(b"def calculate(a, b):\n    return 0\n".to_vec()));
    let answer = tool(&s, &mut overlay, "understand", json!({"target": "calc.py"})).unwrap();
    let warnings = answer["guidance"]["warnings"].to_string();
    assert!(warnings.contains("SHADOW_STALE") && warnings.contains("calc.py"), "{warnings}");
    // A tool outside the registry given is not reachable through the overlay either.
    let only = Registry::new().only(&["read"]).unwrap();
    let mut shadow = Shadow { overlay: &mut overlay, workspace: None };
    let err = call(|c| only.call_in(&s, c, "change", json!({}), &mut shadow)).unwrap_err();
    assert_eq!(err.info.code.as_str(), "TOOL_NOT_FOUND");
}

/// Every built-in tool has a place in a run's shadow, decided by its effect: the
/// table names each one, so a tool added later must be placed here too.
#[test]
fn every_tool_has_a_route_in_the_shadow() {
    let r = Registry::new();
    let route = |name: &str, args: Value| {
        let t = r.get(name).unwrap_or_else(|| panic!("{name}"));
        match shadow_route(&t.spec, &args) {
            ShadowRoute::Overlay => "overlay",
            ShadowRoute::Read => "read",
            ShadowRoute::Copy => "copy",
            ShadowRoute::Refuse(_) => "refuse",
        }
    };
    let table: &[(&str, Value, &str)] = &[
        ("understand", json!({}), "read"),
        ("change", json!({}), "overlay"),
        ("navigate", json!({}), "read"),
        ("read", json!({}), "overlay"),
        ("write", json!({}), "overlay"),
        ("manage", json!({"command": "status"}), "read"),
        ("manage", json!({"command": "history"}), "read"),
        ("manage", json!({"command": "test"}), "copy"),
        ("manage", json!({"command": "undo"}), "refuse"),
        ("manage", json!({"command": "redo"}), "refuse"),
        ("manage", json!({"command": "rebuild"}), "refuse"),
        ("symbols", json!({}), "read"),
        ("skeleton", json!({}), "read"),
        ("search", json!({}), "read"),
        ("localize", json!({}), "read"),
        ("repomap", json!({}), "read"),
        ("graph", json!({}), "read"),
        ("impact", json!({}), "read"),
        ("hotspots", json!({}), "read"),
        ("report", json!({}), "read"),
        ("status", json!({}), "read"),
        ("index", json!({}), "read"),
        ("undo", json!({}), "refuse"),
        ("redo", json!({}), "refuse"),
        ("history", json!({}), "read"),
        ("build", json!({}), "copy"),
        ("test", json!({}), "copy"),
        ("exec", json!({}), "copy"),
        ("route", json!({}), "read"),
        ("guard_check", json!({}), "read"),
        ("search_project", json!({}), "read"),
        ("read_code", json!({}), "overlay"),
        ("edit_code", json!({}), "overlay"),
        ("analyze_relationship", json!({}), "read"),
        ("list_directory", json!({}), "read"),
        ("get_hierarchy", json!({}), "read"),
        ("manage_project", json!({"command": "status"}), "read"),
        ("manage_project", json!({"command": "undo"}), "refuse"),
    ];
    for (name, args, want) in table {
        assert_eq!(route(name, args.clone()), *want, "{name} {args}");
    }
    let named: std::collections::BTreeSet<&str> = table.iter().map(|(n, _, _)| *n).collect();
    let all: std::collections::BTreeSet<&str> = r.names().into_iter().collect();
    assert_eq!(named, all, "every tool of the registry is in the table");
}

#[test]
fn refused_tools_say_why_with_a_code_and_change_nothing() {
    let p = TempProject::with_fixture(&format!("//- calc.py\n{CALC}"));
    let s = open(&p);
    let mut overlay = edit::Overlay::new();
    for (name, args) in [
        ("undo", json!({})),
        ("manage", json!({"command": "rebuild"})),
        ("exec", json!({"command": ["sh", "-c", "echo X > calc.py"]})),
    ] {
        let err = tool(&s, &mut overlay, name, args).unwrap_err();
        assert_eq!(err.info.code.as_str(), "SHADOW_REFUSED", "{name}: {err}");
    }
    assert_eq!(p.read("calc.py"), CALC);
    // The superseded edit tool edits the overlay like `change`.
    let edited = tool(
        &s,
        &mut overlay,
        "edit_code",
        json!({"filePath": "calc.py", "edits": [{"targetString": "a / b", "replacementString": "a // b"}]}),
    )
    .unwrap();
    assert!(
        edited["guidance"]["contextSummary"]
            .as_str()
            .unwrap()
            .starts_with("Applied in the run's workspace"),
        "{edited}"
    );
    assert_eq!(p.read("calc.py"), CALC);
    assert!(String::from_utf8_lossy(overlay["calc.py"].as_ref().unwrap()).contains("a // b"));
}
