//! `replaceSymbol` through the code index.

use protocol::ErrorCode;
use serde_json::json;
use test_support::TempProject;

use super::*;

#[test]
fn replace_a_method_or_its_body_by_qualified_name() {
    let p = TempProject::with_fixture(
        r#"
        //- src/lib.rs
        pub struct Counter { n: u32 }

        impl Counter {
            pub fn bump(&mut self) -> u32 {
                self.n += 1;
                self.n
            }
        }
        //- app.py
        class Server:
            def start(self, port):
                self.port = port
                return True
        "#,
    );
    let mut e = engine(&p);
    apply(
        &mut e,
        json!([
            {"op": "replaceSymbol", "path": "src/lib.rs", "qualifiedName": "Counter::bump", "part": "body",
             "replacementString": "self.n = self.n.saturating_add(1);\nself.n"},
            {"op": "replaceSymbol", "path": "app.py", "qualifiedName": "Server.start",
             "replacementString": "def start(self, port=8080):\n    self.port = port\n    return self.port\n"},
        ]),
    )
    .unwrap();
    assert_eq!(
        p.read("src/lib.rs"),
        "pub struct Counter { n: u32 }\n\nimpl Counter {\n    pub fn bump(&mut self) -> u32 {\n        self.n = self.n.saturating_add(1);\n        self.n\n    }\n}\n"
    );
    assert_eq!(
        p.read("app.py"),
        "class Server:\n    def start(self, port=8080):\n        self.port = port\n        return self.port\n"
    );
    let info = fail(
        &mut e,
        json!([{"op": "replaceSymbol", "path": "app.py", "qualifiedName": "Server.stat", "replacementString": "x"}]),
    );
    assert_code(&info, ErrorCode::NoMatch);
    assert_eq!(info.details.similar_names[0], "Server.start");
}

#[test]
fn several_definitions_of_one_name_are_ambiguous_until_a_line_range_picks_one() {
    let p = TempProject::new();
    p.write("a.py", "def f():\n    return 1\n\ndef f():\n    return 2\n");
    let mut e = engine(&p);
    let info = fail(
        &mut e,
        json!([{"op": "replaceSymbol", "path": "a.py", "qualifiedName": "f", "part": "body", "replacementString": "return 3"}]),
    );
    assert_code(&info, ErrorCode::AmbiguousMatch);
    assert_eq!(info.details.candidates.len(), 2);
    apply(
        &mut e,
        json!([{"op": "replaceSymbol", "path": "a.py", "qualifiedName": "f", "part": "body",
                "replacementString": "return 3", "lineRange": "4-5"}]),
    )
    .unwrap();
    assert_eq!(p.read("a.py"), "def f():\n    return 1\n\ndef f():\n    return 3\n");
}
