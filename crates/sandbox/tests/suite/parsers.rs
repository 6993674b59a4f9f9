//! The parsers on real recorded output (see `tests/fixtures/recorded/README.md`;
//! the .NET files are hand-written after real ones, as that README explains).

use std::path::Path;

use protocol::Severity;
use sandbox::runners::*;

fn recorded(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recorded").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn libtest_failure_with_message_location_and_backtrace() {
    let r = parse_libtest(&recorded("cargo_test_fail.stdout"), &recorded("cargo_test_fail.stderr"));
    assert_eq!((r.total, r.passed, r.failed, r.skipped), (3, 1, 1, 1));
    let f = &r.failures[0];
    assert_eq!(f.name, "tests::adds_wrongly");
    assert!(
        f.message.starts_with("assertion `left == right` failed: one plus one"),
        "{}",
        f.message
    );
    assert!(f.message.contains("left: 2"));
    assert_eq!((f.file.as_deref(), f.line), (Some("src/lib.rs"), Some(15)));
    assert!(f.stack_trace.as_deref().unwrap().starts_with("stack backtrace:"));
    assert!(r.incomplete.is_none());
}

#[test]
fn libtest_crash_is_incomplete() {
    let r =
        parse_libtest(&recorded("cargo_test_crash.stdout"), &recorded("cargo_test_crash.stderr"));
    assert_eq!(r.total, 0);
    assert!(r.incomplete.as_deref().unwrap().contains("SIGABRT"), "{:?}", r.incomplete);
}

#[test]
fn cargo_compile_errors_and_warnings_with_codes() {
    let (errors, warnings, finished) = parse_cargo_messages(&recorded("cargo_build_error.stdout"));
    assert_eq!(finished, Some(false));
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let e = &errors[0];
    assert_eq!(e.code.as_deref(), Some("E0277"));
    assert_eq!(e.message, "cannot add `&str` to `i32`");
    assert_eq!((e.file.as_deref(), e.line, e.column), (Some("src/lib.rs"), Some(3), Some(11)));
    // rustc stops before the lint pass when type checking fails.
    assert!(warnings.is_empty(), "{warnings:#?}");
}

#[test]
fn cargo_warnings_from_two_targets_are_reported_once() {
    let text = recorded("cargo_build_warning.stdout");
    assert_eq!(
        text.matches("\"level\":\"warning\"").count(),
        2,
        "lib and its test target both warn"
    );
    let (errors, warnings, finished) = parse_cargo_messages(&text);
    assert_eq!(finished, Some(true));
    assert!(errors.is_empty());
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    let w = &warnings[0];
    assert_eq!(w.code.as_deref(), Some("unused_variables"));
    assert_eq!(w.message, "unused variable: `unused`");
    assert_eq!((w.file.as_deref(), w.line, w.column), (Some("src/lib.rs"), Some(2), Some(9)));
    assert_eq!(w.severity, Severity::Warning);
}

#[test]
fn nextest_libtest_json() {
    let r = parse_nextest_libtest_json(&recorded("nextest_fail.stdout"));
    assert_eq!((r.total, r.passed, r.failed, r.skipped), (3, 1, 1, 1));
    let f = &r.failures[0];
    assert!(f.name.ends_with("tests::adds_wrongly"), "{}", f.name);
    assert!(f.message.contains("one plus one"));
    assert_eq!(f.line, Some(15));
}

#[test]
fn pytest_junit_failures_errors_and_skips() {
    let r = parse_junit_xml(&recorded("pytest_fail.xml"), "pytest").unwrap();
    assert_eq!((r.total, r.passed, r.failed, r.skipped), (4, 1, 2, 1));
    let wrong = r.failures.iter().find(|f| f.name.ends_with("test_adds_wrongly")).unwrap();
    assert_eq!(wrong.name, "test_calc::test_adds_wrongly");
    assert!(wrong.message.contains("assert 2 == 3"), "{}", wrong.message);
    assert_eq!((wrong.file.as_deref(), wrong.line), (Some("test_calc.py"), Some(13)));
    let raised = r.failures.iter().find(|f| f.name.ends_with("test_raises")).unwrap();
    assert!(raised.message.contains("ValueError: bad input"), "{}", raised.message);
}

#[test]
fn pytest_collection_error_names_the_file() {
    let r = parse_junit_xml(&recorded("pytest_collect_error.xml"), "pytest").unwrap();
    assert_eq!((r.total, r.failed), (1, 1));
    let f = &r.failures[0];
    assert_eq!(f.message, "error: collection failure");
    assert_eq!(f.file.as_deref(), Some("/work/p/test_broken.py"));
    assert_eq!(f.line, Some(1));
    assert!(f.stack_trace.as_deref().unwrap().contains("SyntaxError"));
}

#[test]
fn junit_garbage_is_an_error_not_a_pass() {
    assert!(parse_junit_xml("<testsuite", "pytest").is_err());
}

#[test]
fn go_test_json_counts_leaves_and_finds_messages() {
    let r = parse_go_test_json(&recorded("go_test_fail.json"));
    // TestAdd, TestAddWrongly, TestTable/ok, TestTable/bad, TestSkipped
    assert_eq!((r.total, r.passed, r.failed, r.skipped), (5, 2, 2, 1), "{r:#?}");
    let wrong = r.failures.iter().find(|f| f.name.ends_with(".TestAddWrongly")).unwrap();
    assert_eq!(wrong.message, "got 2, want 3");
    assert_eq!((wrong.file.as_deref(), wrong.line), (Some("calc_test.go"), Some(13)));
    assert!(
        r.failures
            .iter()
            .any(|f| f.name.ends_with(".TestTable/bad") && f.message == "table row failed")
    );
}

#[test]
fn go_build_failure() {
    let r = parse_go_test_json(&recorded("go_test_build_error.json"));
    assert!(r.incomplete.as_deref().unwrap().contains("build failed"), "{r:#?}");
    let errs = parse_go_build(&recorded("go_test_build_error.stderr"));
    assert_eq!(errs.len(), 1);
    assert_eq!(
        (errs[0].file.as_deref(), errs[0].line, errs[0].column),
        (Some("calc_test.go"), Some(6), Some(17))
    );
    assert!(errs[0].message.starts_with("cannot use Add(2, 2)"));
}

#[test]
fn jest_json() {
    let r = parse_jest_json(&recorded("jest_fail.json"), "jest").unwrap();
    assert_eq!((r.total, r.passed, r.failed, r.skipped), (3, 1, 1, 1));
    let f = &r.failures[0];
    assert_eq!(f.name, "adds wrongly");
    assert!(f.message.contains("expect(received).toBe(expected)"), "{}", f.message);
    assert_eq!(f.line, Some(8));
    assert!(f.file.as_deref().unwrap().ends_with("calc.test.js"));
}

#[test]
fn jest_suite_that_does_not_parse() {
    let r = parse_jest_json(&recorded("jest_syntax_error.json"), "jest").unwrap();
    assert_eq!(r.failed, 1, "{r:#?}");
    assert!(r.failures[0].file.as_deref().unwrap().ends_with("broken.test.js"));
    assert!(r.failures[0].stack_trace.as_deref().unwrap().contains("SyntaxError"), "{r:#?}");
}

#[test]
fn vitest_json() {
    let r = parse_jest_json(&recorded("vitest_fail.json"), "vitest").unwrap();
    assert_eq!((r.total, r.passed, r.failed, r.skipped), (3, 1, 1, 1));
    assert_eq!(r.failures[0].name, "adds wrongly");
    assert!(r.failures[0].message.contains("expected 2 to be 3"), "{}", r.failures[0].message);
}

#[test]
fn trx_xunit_failures_skips_and_locations() {
    let r = parse_trx(&recorded("dotnet_test_fail.trx")).unwrap();
    assert_eq!((r.total, r.passed, r.failed, r.skipped), (4, 1, 2, 1));
    assert!(r.incomplete.is_none(), "[FAIL] run infos are not host errors: {:?}", r.incomplete);
    let f = &r.failures[0];
    assert_eq!(f.name, "Fixture.Tests.CalculatorTests.AddsWrongly");
    assert_eq!(f.message, "Assert.Equal() Failure\nExpected: 3\nActual:   2");
    assert_eq!(
        (f.file.as_deref(), f.line),
        (Some("/src/Fixture.Tests/CalculatorTests.cs"), Some(18))
    );
    let d = &r.failures[1];
    assert!(d.message.starts_with("System.DivideByZeroException"));
    assert_eq!(d.line, Some(7), "the innermost frame");
}

#[test]
fn trx_mstest_names_get_their_class() {
    let r = parse_trx(&recorded("dotnet_test_mstest.trx")).unwrap();
    assert_eq!((r.total, r.passed, r.failed), (2, 1, 1));
    assert_eq!(r.failures[0].name, "Parser.Tests.TokenizerTests.RejectsEmpty");
    assert_eq!(r.duration_ms, 50);
}

#[test]
fn trx_host_crash_is_incomplete() {
    let r = parse_trx(&recorded("dotnet_test_host_crash.trx")).unwrap();
    assert_eq!((r.total, r.passed), (1, 1));
    assert!(r.incomplete.as_deref().unwrap().contains("Test host process crashed"));
}

#[test]
fn msbuild_diagnostics_deduplicated_and_relative() {
    let (errors, warnings) =
        parse_msbuild_lines(&recorded("dotnet_build_error.txt"), Path::new("/src"));
    assert_eq!(errors.len(), 3, "{errors:#?}");
    assert_eq!(errors[0].code.as_deref(), Some("CS0029"));
    assert_eq!(
        (errors[0].file.as_deref(), errors[0].line, errors[0].column),
        (Some("Fixture/Calculator.cs"), Some(7), Some(20))
    );
    assert_eq!(errors[0].message, "Cannot implicitly convert type 'string' to 'int'");
    assert_eq!(errors[2].code.as_deref(), Some("CS5001"));
    assert_eq!(errors[2].file, None);
    assert_eq!(warnings.len(), 2);
    assert_eq!(warnings[1].code.as_deref(), Some("MSB3245"));
}

#[test]
fn tsc_diagnostics() {
    let (errors, warnings) = parse_msbuild_lines(&recorded("tsc_error.txt"), Path::new("/work/p"));
    assert!(warnings.is_empty());
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert_eq!(errors[0].code.as_deref(), Some("TS2345"));
    assert_eq!(
        (errors[0].file.as_deref(), errors[0].line, errors[0].column),
        (Some("src/calc.ts"), Some(5), Some(30))
    );
    assert!(errors[1].message.starts_with("Type 'number' is not assignable"));
}
