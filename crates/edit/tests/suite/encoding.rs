//! Line endings, BOM, tolerant matches and permissions survive every operation.

use protocol::Normalization;
use serde_json::json;
use test_support::TempProject;

use super::*;

#[test]
fn crlf_files_stay_crlf_and_the_conversion_is_reported() {
    let p = TempProject::new();
    p.write("win.txt", "first\r\nsecond\r\nthird\r\n");
    let mut e = engine(&p);
    let r = apply(
        &mut e,
        json!([{"op": "replace", "path": "win.txt", "targetString": "first\nsecond\n",
                "replacementString": "1st\n2nd\n2nd-b\n"}]),
    )
    .unwrap();
    assert_eq!(std::fs::read(p.path("win.txt")).unwrap(), b"1st\r\n2nd\r\n2nd-b\r\nthird\r\n");
    assert_eq!(
        r.files[0].edits[0].normalizations,
        [Normalization::LineEndings { file: "crlf".into() }]
    );
    apply(&mut e, json!([{"op": "insert", "path": "win.txt", "position": "after", "line": 4, "text": "last"}]))
        .unwrap();
    assert_eq!(
        std::fs::read(p.path("win.txt")).unwrap(),
        b"1st\r\n2nd\r\n2nd-b\r\nthird\r\nlast\r\n"
    );
}

#[test]
fn bom_is_kept_and_lines_count_without_it() {
    let p = TempProject::new();
    p.write("bom.cs", "\u{feff}using System;\nclass A {}\n");
    let mut e = engine(&p);
    apply(&mut e, json!([{"op": "replaceLines", "path": "bom.cs", "lineRange": "1", "replacementString": "using System.IO;"}]))
        .unwrap();
    assert_eq!(
        std::fs::read(p.path("bom.cs")).unwrap(),
        "\u{feff}using System.IO;\nclass A {}\n".as_bytes()
    );
    let undo = e.undo(None, false).unwrap();
    assert!(undo.transaction_id.is_some());
    assert_eq!(
        std::fs::read(p.path("bom.cs")).unwrap(),
        "\u{feff}using System;\nclass A {}\n".as_bytes()
    );
}

#[test]
fn indentation_drift_is_forgiven_reported_and_fitted() {
    let p = TempProject::new();
    p.write(
        "m.py",
        "class Server:\n    def stop(self):   \n        self.running = False\n        return True\n",
    );
    let mut e = engine(&p);
    // Quoted without the class indentation and without the trailing spaces.
    let r = apply(
        &mut e,
        json!([{"op": "replace", "path": "m.py",
                "targetString": "def stop(self):\n    self.running = False\n",
                "replacementString": "def stop(self, force=False):\n    self.running = False\n    self.forced = force\n"}]),
    )
    .unwrap();
    assert_eq!(
        p.read("m.py"),
        "class Server:\n    def stop(self, force=False):\n        self.running = False\n        self.forced = force\n        return True\n"
    );
    let norms = &r.files[0].edits[0].normalizations;
    assert!(norms.contains(&Normalization::TrailingWhitespace), "{norms:?}");
    assert!(
        norms
            .contains(&Normalization::Indentation { added: "    ".into(), removed: String::new() }),
        "{norms:?}"
    );
}

#[test]
fn tabs_in_the_file_spaces_in_the_request() {
    let p = TempProject::new();
    p.write("main.go", "func f() {\n\tif ok {\n\t\treturn 1\n\t}\n}\n");
    let mut e = engine(&p);
    let r = apply(
        &mut e,
        json!([{"op": "replace", "path": "main.go",
                "targetString": "    if ok {\n        return 1\n    }",
                "replacementString": "    if ok {\n        log()\n        return 1\n    }"}]),
    )
    .unwrap();
    assert_eq!(p.read("main.go"), "func f() {\n\tif ok {\n\t\tlog()\n\t\treturn 1\n\t}\n}\n");
    assert_eq!(r.files[0].edits[0].normalizations, [Normalization::TabsAsSpaces { tab_width: 4 }]);
}

#[cfg(unix)]
#[test]
fn permissions_survive_edits_renames_and_undo_of_deletes() {
    let p = TempProject::new();
    p.write("run.sh", "#!/bin/sh\necho hi\n");
    p.write("secret.txt", "s\n");
    let set = |rel: &str, m: u32| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p.path(rel), std::fs::Permissions::from_mode(m)).unwrap();
    };
    set("run.sh", 0o755);
    set("secret.txt", 0o600);
    let mut e = engine(&p);
    apply(&mut e, json!([{"op": "replace", "path": "run.sh", "targetString": "hi", "replacementString": "hello"}]))
        .unwrap();
    assert_eq!(mode(&p.path("run.sh")), 0o755);
    apply(
        &mut e,
        json!([{"op": "rename", "path": "run.sh", "newPath": "bin/run.sh"},
                         {"op": "delete", "path": "secret.txt"}]),
    )
    .unwrap();
    assert_eq!(mode(&p.path("bin/run.sh")), 0o755);
    e.undo(None, false).unwrap();
    assert_eq!(mode(&p.path("run.sh")), 0o755);
    assert_eq!(mode(&p.path("secret.txt")), 0o600);
    assert_eq!(p.read("secret.txt"), "s\n");
    assert!(!p.path("bin").exists(), "the directory the rename created went with the undo");
    // New files get the permissions any new file gets here (the umask's).
    apply(&mut e, json!([{"op": "create", "path": "new.txt", "content": "n"}])).unwrap();
    std::fs::write(p.path("plain.txt"), "p").unwrap();
    assert_eq!(mode(&p.path("new.txt")), mode(&p.path("plain.txt")));
}
