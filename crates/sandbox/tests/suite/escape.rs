use super::support::*;

#[test]
fn smoke() {
    let ws = test_support::TempProject::new();
    let r = sh(ws.root(), &quick_policy(), "echo hello; id; pwd; ls /tmp; echo x > f.txt; cat /proc/self/status | grep -i cap; exit 3");
    eprintln!("{}", serde_json::to_string_pretty(&r).unwrap());
    assert_eq!(r.exit_code, Some(3));
}
