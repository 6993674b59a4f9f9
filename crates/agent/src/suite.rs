//! What a project's whole pytest suite collects, so the tests a change reaches
//! are run the way the suite runs them.
//!
//! `impact` lists the test files a change reaches by each language's
//! conventions: a helper module under `tests/` (`tests/utils.py`), a package's
//! `__init__.py` among test fixtures, the tests of an example project with its
//! own `conftest.py` (flask's `examples/tutorial/tests`). Named on pytest's
//! command line, each of those is collected even where the project's
//! configuration says otherwise (`testpaths`, `python_files`), and the example's
//! conftest fails to import a package the environment never installed. So a
//! targeted run keeps the files the project's own suite would collect: under
//! its `testpaths` (when it has them) and named by its `python_files` patterns.
//!
//! The configuration is read where pytest reads it, first file wins:
//! `pytest.ini` (`[pytest]`, even when empty), `pyproject.toml`
//! (`[tool.pytest.ini_options]`), `tox.ini` (`[pytest]`), `setup.cfg`
//! (`[tool:pytest]`). Reading is lenient: a value this reader does not
//! understand falls back to pytest's default.

use std::path::Path;

/// The part of a pytest configuration that decides which files a run collects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PytestSuite {
    /// Directories (or globs) relative to the root; empty: the whole tree.
    testpaths: Vec<String>,
    /// File name patterns (`test_*.py`).
    python_files: Vec<String>,
}

impl Default for PytestSuite {
    fn default() -> Self {
        PytestSuite {
            testpaths: Vec::new(),
            python_files: vec!["test_*.py".into(), "*_test.py".into()],
        }
    }
}

impl PytestSuite {
    /// The configuration of the project at `root`; pytest's defaults when none.
    pub(crate) fn load(root: &Path) -> PytestSuite {
        let read = |name: &str| std::fs::read_to_string(root.join(name)).ok();
        if let Some(text) = read("pytest.ini") {
            return from_ini(&text, "pytest").unwrap_or_default();
        }
        if let Some(suite) = read("pyproject.toml").and_then(|t| from_pyproject(&t)) {
            return suite;
        }
        if let Some(suite) = read("tox.ini").and_then(|t| from_ini(&t, "pytest")) {
            return suite;
        }
        read("setup.cfg").and_then(|t| from_ini(&t, "tool:pytest")).unwrap_or_default()
    }

    /// Whether a run of the whole suite collects `path` (relative, `/`-separated).
    pub(crate) fn collects(&self, path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        let named = self.python_files.iter().any(|p| glob(p, name));
        let placed = self.testpaths.is_empty()
            || self.testpaths.iter().any(|t| {
                let t = t.trim_start_matches("./").trim_end_matches('/');
                t.is_empty()
                    || t == "."
                    || path == t
                    || path.strip_prefix(t).is_some_and(|rest| rest.starts_with('/'))
                    || (t.contains(['*', '?']) && {
                        // A glob names directories: compare with as many leading
                        // components of the path.
                        let depth = t.split('/').count();
                        let head: Vec<&str> = path.split('/').take(depth).collect();
                        head.len() == depth && glob(t, &head.join("/"))
                    })
            });
        named && placed
    }
}

/// Parses `section` of an INI file (`key = value`, continuation lines indented,
/// values split on whitespace); `None` when the section is missing.
fn from_ini(text: &str, section: &str) -> Option<PytestSuite> {
    let mut inside = false;
    let mut found = false;
    let mut key = String::new();
    let mut values: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if trimmed.starts_with('[') && trimmed.ends_with(']') {
            inside = trimmed[1..trimmed.len() - 1].trim() == section;
            found |= inside;
            key.clear();
            continue;
        }
        if !inside || trimmed.is_empty() {
            continue;
        }
        if line.starts_with([' ', '\t']) && !key.is_empty() {
            if let Some((_, v)) = values.last_mut() {
                v.push(' ');
                v.push_str(trimmed);
            }
        } else if let Some((k, v)) = trimmed.split_once(['=', ':']) {
            key = k.trim().to_owned();
            values.push((key.clone(), v.trim().to_owned()));
        }
    }
    if !found {
        return None;
    }
    let mut suite = PytestSuite::default();
    for (k, v) in values {
        let list: Vec<String> = v.split_whitespace().map(str::to_owned).collect();
        match k.as_str() {
            "testpaths" => suite.testpaths = list,
            "python_files" if !list.is_empty() => suite.python_files = list,
            _ => {}
        }
    }
    Some(suite)
}

/// Reads `[tool.pytest.ini_options]` of a `pyproject.toml`: strings and arrays
/// of strings (one line or several), which is all these two keys hold.
fn from_pyproject(text: &str) -> Option<PytestSuite> {
    let mut inside = false;
    let mut found = false;
    let mut pending: Option<(String, String)> = None;
    let mut values: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let trimmed = line.split(" #").next().unwrap_or(line).trim();
        if let Some((k, mut v)) = pending.take() {
            v.push(' ');
            v.push_str(trimmed);
            if trimmed.contains(']') {
                values.push((k, v));
            } else {
                pending = Some((k, v));
            }
            continue;
        }
        if trimmed.starts_with('[') && !trimmed.contains('=') {
            inside = trimmed == "[tool.pytest.ini_options]";
            found |= inside;
            continue;
        }
        if !inside {
            continue;
        }
        if let Some((k, v)) = trimmed.split_once('=') {
            let (k, v) = (k.trim().to_owned(), v.trim().to_owned());
            if v.starts_with('[') && !v.contains(']') {
                pending = Some((k, v));
            } else {
                values.push((k, v));
            }
        }
    }
    if !found {
        return None;
    }
    let strings = |v: &str| -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = v;
        while let Some(start) = rest.find(['"', '\'']) {
            let quote = rest.as_bytes()[start] as char;
            let Some(len) = rest[start + 1..].find(quote) else { break };
            out.push(rest[start + 1..start + 1 + len].to_owned());
            rest = &rest[start + 2 + len..];
        }
        // A string of several patterns (`python_files = "test_*.py check_*.py"`).
        out.iter().flat_map(|s| s.split_whitespace().map(str::to_owned)).collect()
    };
    let mut suite = PytestSuite::default();
    for (k, v) in values {
        match k.as_str() {
            "testpaths" => suite.testpaths = strings(&v),
            "python_files" => {
                let list = strings(&v);
                if !list.is_empty() {
                    suite.python_files = list;
                }
            }
            _ => {}
        }
    }
    Some(suite)
}

/// `fnmatch` as pytest uses it for these patterns: `*` any run of characters
/// (`/` included), `?` one character, `[...]` a set; everything else literal.
fn glob(pattern: &str, text: &str) -> bool {
    fn go(p: &[char], t: &[char]) -> bool {
        match p.first() {
            None => t.is_empty(),
            Some('*') => (0..=t.len()).any(|i| go(&p[1..], &t[i..])),
            Some('?') => !t.is_empty() && go(&p[1..], &t[1..]),
            Some('[') => match p.iter().position(|&c| c == ']') {
                Some(end) if end > 1 && !t.is_empty() => {
                    let set = &p[1..end];
                    let (negate, set) = match set.first() {
                        Some('!') => (true, &set[1..]),
                        _ => (false, set),
                    };
                    (set.contains(&t[0]) != negate) && go(&p[end + 1..], &t[1..])
                }
                _ => t.first() == Some(&'[') && go(&p[1..], &t[1..]),
            },
            Some(c) => t.first() == Some(c) && go(&p[1..], &t[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    go(&p, &t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `files`: `(name, content)` written at the root; each case: a path and
    /// whether the whole suite collects it.
    fn check(files: &[(&str, &str)], cases: &[(&str, bool)]) {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let suite = PytestSuite::load(dir.path());
        for (path, expected) in cases {
            assert_eq!(suite.collects(path), *expected, "{path} with {suite:?}");
        }
    }

    #[test]
    fn defaults_without_configuration() {
        check(
            &[],
            &[
                ("tests/test_app.py", true),
                ("app_test.py", true),
                ("tests/utils.py", false),
                ("tests/apps/__init__.py", false),
                ("examples/tutorial/tests/test_factory.py", true),
            ],
        );
    }

    #[test]
    fn setup_cfg_testpaths_keep_examples_out() {
        // flask 2.x
        check(
            &[(
                "setup.cfg",
                "[metadata]\nname = flask\n\n[tool:pytest]\ntestpaths = tests\nfilterwarnings =\n    error\n",
            )],
            &[
                ("tests/test_cli.py", true),
                ("tests/test_apps/blueprintapp/__init__.py", false),
                ("examples/tutorial/tests/test_factory.py", false),
                ("testsuite/test_x.py", false),
            ],
        );
    }

    #[test]
    fn python_files_patterns_and_several_testpaths() {
        // pylint: `python_files = *test_*.py`, helpers in the package are not tests.
        check(
            &[(
                "setup.cfg",
                "[tool:pytest]\ntestpaths =\n    tests\n    doc/tests\npython_files = *test_*.py\n",
            )],
            &[
                ("tests/checkers/unittest_format.py", true),
                ("doc/tests/test_doc.py", true),
                ("doc/test_messages_documentation.py", false),
                ("pylint/testutils/lint_module_test.py", false),
            ],
        );
    }

    #[test]
    fn pyproject_and_precedence() {
        let pyproject = "[project]\nname = 'x'\n\n[tool.pytest.ini_options]\ntestpaths = [\n  \"testing\",\n  'doc/en', # docs\n]\npython_files = [\"test_*.py\", \"*_test.py\", \"testing/python/*.py\"]\n";
        check(
            &[("pyproject.toml", pyproject), ("setup.cfg", "[tool:pytest]\ntestpaths = other\n")],
            &[("testing/test_x.py", true), ("doc/en/test_y.py", true), ("other/test_z.py", false)],
        );
        // pytest.ini wins even without keys: the defaults, whatever setup.cfg says.
        check(
            &[("pytest.ini", "[pytest]\n"), ("setup.cfg", "[tool:pytest]\ntestpaths = other\n")],
            &[("anywhere/test_z.py", true)],
        );
        // A pyproject.toml without the section does not count.
        check(
            &[
                ("pyproject.toml", "[tool.black]\nline-length = 88\n"),
                ("tox.ini", "[pytest]\ntestpaths = t\n"),
            ],
            &[("t/test_a.py", true), ("tests/test_a.py", false)],
        );
    }

    #[test]
    fn glob_testpaths() {
        check(
            &[("pytest.ini", "[pytest]\ntestpaths = src/*/tests\n")],
            &[
                ("src/a/tests/test_a.py", true),
                ("src/a/b/tests/test_a.py", false),
                ("tests/test_a.py", false),
            ],
        );
    }
}
