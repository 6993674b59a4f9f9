//! Rules: the shipped defaults, configuration layered on them by id, and the
//! check of a change.

use std::collections::BTreeMap;

use globset::{Glob, GlobSet, GlobSetBuilder};
use protocol::{ErrorCode, GuardFinding, GuardReport, GuardSeverity};
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    Change,
    secrets::{find_secret_after_name, find_secret_in_element, find_secrets},
};

/// A configuration that does not make rules.
#[derive(Debug, thiserror::Error)]
#[error("guardrails: rule {rule}: {message}")]
pub struct Error {
    pub rule: String,
    pub message: String,
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        ErrorCode::InvalidArgument
    }
}

/// One rule as configuration writes it; every field optional, so a layer can
/// change one setting of a rule an earlier layer (or the defaults) made.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RuleConfig {
    name: Option<String>,
    description: Option<String>,
    severity: Option<GuardSeverity>,
    enabled: Option<bool>,
    /// Lines a change may add (across its files).
    max_lines: Option<u32>,
    /// Files a change may touch.
    max_files: Option<u32>,
    /// Lines a changed file may have after the change.
    max_file_lines: Option<u32>,
    /// Secrets by their formats (the shipped G002).
    secrets: Option<bool>,
    /// Added lines must not match.
    pattern: Option<String>,
    patterns: Option<Vec<String>>,
    /// Changes to these paths are refused.
    forbidden_paths: Option<Vec<String>>,
    /// Only files matching these globs (default: all).
    paths: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
}

impl RuleConfig {
    /// `self` with the fields `over` sets replaced.
    fn merged(mut self, over: RuleConfig) -> RuleConfig {
        macro_rules! take {
            ($($f:ident),*) => { $( if over.$f.is_some() { self.$f = over.$f; } )* };
        }
        take!(
            name,
            description,
            severity,
            enabled,
            max_lines,
            max_files,
            max_file_lines,
            secrets,
            pattern,
            patterns,
            forbidden_paths,
            paths,
            exclude
        );
        self
    }
}

/// What a rule checks.
#[derive(Debug, Clone)]
enum Kind {
    Lines(u32),
    Files(u32),
    FileLines(u32),
    Secrets,
    Patterns(Vec<Regex>),
    Forbidden(GlobSet),
}

#[derive(Debug, Clone)]
struct Rule {
    id: String,
    name: String,
    description: String,
    severity: GuardSeverity,
    kind: Kind,
    paths: Option<GlobSet>,
    exclude: Option<GlobSet>,
}

impl Rule {
    fn applies(&self, path: &str) -> bool {
        self.paths.as_ref().is_none_or(|g| g.is_match(path))
            && !self.exclude.as_ref().is_some_and(|g| g.is_match(path))
    }
}

/// A rule as `ironbees guard rules` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleInfo {
    pub id: String,
    pub name: String,
    pub severity: GuardSeverity,
    pub description: String,
    /// What it checks, in words.
    pub checks: String,
}

/// The rules a change is checked against.
#[derive(Debug, Clone)]
pub struct RuleSet {
    rules: Vec<Rule>,
}

/// The seed's rules (seed 002, `guardrail_rules.yaml`), G002 by formats.
fn defaults() -> BTreeMap<String, RuleConfig> {
    let rule = |name: &str, description: &str, severity| RuleConfig {
        name: Some(name.into()),
        description: Some(description.into()),
        severity: Some(severity),
        ..RuleConfig::default()
    };
    BTreeMap::from([
        (
            "G001".into(),
            RuleConfig {
                max_lines: Some(500),
                ..rule(
                    "LOC_LIMIT",
                    "a single change adds fewer than 500 lines",
                    GuardSeverity::Blocker,
                )
            },
        ),
        (
            "G002".into(),
            RuleConfig {
                secrets: Some(true),
                ..rule(
                    "NO_SECRET",
                    "no API keys, tokens, private keys or passwords",
                    GuardSeverity::Blocker,
                )
            },
        ),
        (
            "G003".into(),
            RuleConfig {
                max_files: Some(10),
                ..rule("FILE_LIMIT", "at most 10 files per change", GuardSeverity::Warning)
            },
        ),
        (
            "G004".into(),
            RuleConfig {
                patterns: Some(vec![
                    r#"https?://(?:[\w-]+\.)*(?:prod|production)(?:[.-][\w-]+)*\.[a-z]{2,}"#.into(),
                ]),
                ..rule("NO_HARDCODED_URL", "no production URLs in code", GuardSeverity::Warning)
            },
        ),
    ])
}

fn globs(id: &str, list: &[String]) -> Result<GlobSet, Error> {
    let mut b = GlobSetBuilder::new();
    for g in list {
        b.add(
            Glob::new(g)
                .map_err(|e| Error { rule: id.into(), message: format!("glob {g:?}: {e}") })?,
        );
    }
    b.build().map_err(|e| Error { rule: id.into(), message: e.to_string() })
}

impl RuleSet {
    /// The shipped rules.
    pub fn defaults() -> RuleSet {
        RuleSet::from_config(&Value::Null).expect("the shipped rules are valid")
    }

    /// The shipped rules with a configuration's `rules` map (by id) on top: an
    /// id that exists changes that rule's fields, a new id adds a rule (which
    /// must say what it checks), `enabled: false` turns one off.
    pub fn from_config(config: &Value) -> Result<RuleSet, Error> {
        let mut all = defaults();
        if let Some(map) = config.get("rules").and_then(Value::as_object) {
            for (id, v) in map {
                let over: RuleConfig = serde_json::from_value(v.clone())
                    .map_err(|e| Error { rule: id.clone(), message: e.to_string() })?;
                let base = all.remove(id).unwrap_or_default();
                all.insert(id.clone(), base.merged(over));
            }
        }
        let mut rules = Vec::new();
        for (id, c) in all {
            if c.enabled == Some(false) {
                continue;
            }
            let bad = |message: String| Error { rule: id.clone(), message };
            let mut kinds = Vec::new();
            if let Some(n) = c.max_lines {
                kinds.push(Kind::Lines(n));
            }
            if let Some(n) = c.max_files {
                kinds.push(Kind::Files(n));
            }
            if let Some(n) = c.max_file_lines {
                kinds.push(Kind::FileLines(n));
            }
            if c.secrets == Some(true) {
                kinds.push(Kind::Secrets);
            }
            let patterns: Vec<String> =
                c.pattern.iter().chain(c.patterns.iter().flatten()).cloned().collect();
            if !patterns.is_empty() {
                let compiled = patterns
                    .iter()
                    .map(|p| Regex::new(p).map_err(|e| bad(format!("pattern {p:?}: {e}"))))
                    .collect::<Result<Vec<_>, _>>()?;
                kinds.push(Kind::Patterns(compiled));
            }
            if let Some(list) = &c.forbidden_paths {
                kinds.push(Kind::Forbidden(globs(&id, list)?));
            }
            let kind = match kinds.len() {
                1 => kinds.remove(0),
                0 => return Err(bad("says nothing to check (maxLines, maxFiles, maxFileLines, secrets, pattern(s) or forbiddenPaths)".into())),
                _ => return Err(bad("checks more than one thing; give each its own rule".into())),
            };
            rules.push(Rule {
                name: c.name.clone().unwrap_or_else(|| id.clone()),
                description: c.description.clone().unwrap_or_default(),
                severity: c.severity.unwrap_or(GuardSeverity::Warning),
                kind,
                paths: c.paths.as_deref().map(|p| globs(&id, p)).transpose()?,
                exclude: c.exclude.as_deref().map(|p| globs(&id, p)).transpose()?,
                id,
            });
        }
        Ok(RuleSet { rules })
    }

    /// Every rule in effect, by id.
    pub fn rules(&self) -> Vec<RuleInfo> {
        self.rules
            .iter()
            .map(|r| RuleInfo {
                id: r.id.clone(),
                name: r.name.clone(),
                severity: r.severity,
                description: r.description.clone(),
                checks: match &r.kind {
                    Kind::Lines(n) => format!("at most {n} added lines"),
                    Kind::Files(n) => format!("at most {n} files"),
                    Kind::FileLines(n) => format!("at most {n} lines per file"),
                    Kind::Secrets => "secrets by format and value".into(),
                    Kind::Patterns(p) => format!(
                        "added lines match none of: {}",
                        p.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                    Kind::Forbidden(_) => "forbidden paths".into(),
                },
            })
            .collect()
    }

    /// Checks a change: every finding, and whether a blocker is among them.
    pub fn check(&self, change: &Change) -> GuardReport {
        let mut findings = Vec::new();
        for rule in &self.rules {
            let files: Vec<_> = change.files.iter().filter(|f| rule.applies(&f.path)).collect();
            let mut find = |file: Option<&str>, line: Option<u32>, message: String| {
                findings.push(GuardFinding {
                    rule_id: rule.id.clone(),
                    rule_name: rule.name.clone(),
                    severity: rule.severity,
                    file: file.map(str::to_owned),
                    line,
                    message,
                });
            };
            match &rule.kind {
                Kind::Lines(max) => {
                    let added: u32 = files.iter().map(|f| f.added.len() as u32).sum();
                    if added > *max {
                        find(
                            None,
                            None,
                            format!(
                                "the change adds {added} lines (at most {max}): {}",
                                rule.description
                            ),
                        );
                    }
                }
                Kind::Files(max) => {
                    if files.len() as u32 > *max {
                        find(
                            None,
                            None,
                            format!("the change touches {} files (at most {max})", files.len()),
                        );
                    }
                }
                Kind::FileLines(max) => {
                    for f in &files {
                        if let Some(n) = f.lines_after.filter(|n| n > max) {
                            find(
                                Some(&f.path),
                                None,
                                format!("{n} lines after the change (at most {max})"),
                            );
                        }
                    }
                }
                Kind::Secrets => {
                    for f in &files {
                        for (line, text) in &f.added {
                            for s in find_secrets(text) {
                                let shown = s.masked(text);
                                find(
                                    Some(&f.path),
                                    Some(*line),
                                    format!("{}: `{}`", s.kind, clip(shown.trim(), 160)),
                                );
                            }
                        }
                        // `const apiKey =`, then the literal, on two added lines.
                        for w in f.added.windows(2) {
                            let [(a, name), (b, value)] = w else { continue };
                            if *b != a + 1 {
                                continue;
                            }
                            if let Some(s) = find_secret_after_name(name, value) {
                                let shown = s.masked(value);
                                find(
                                    Some(&f.path),
                                    Some(*b),
                                    format!("{}: `{}`", s.kind, clip(shown.trim(), 160)),
                                );
                            }
                        }
                        // `<password>`, the value, `</password>` on three added lines.
                        for w in f.added.windows(3) {
                            let [(a, open), (b, value), (c, close)] = w else { continue };
                            if *b != a + 1 || *c != b + 1 {
                                continue;
                            }
                            if let Some(s) = find_secret_in_element(open, value, close) {
                                let shown = s.masked(value);
                                find(
                                    Some(&f.path),
                                    Some(*b),
                                    format!("{}: `{}`", s.kind, clip(shown.trim(), 160)),
                                );
                            }
                        }
                    }
                }
                Kind::Patterns(res) => {
                    for f in &files {
                        for (line, text) in &f.added {
                            if let Some(m) = res.iter().find_map(|r| r.find(text)) {
                                find(
                                    Some(&f.path),
                                    Some(*line),
                                    format!(
                                        "`{}` matches ({})",
                                        clip(m.as_str(), 120),
                                        rule.description
                                    ),
                                );
                            }
                        }
                    }
                }
                Kind::Forbidden(globs) => {
                    for f in &files {
                        if globs.is_match(&f.path) {
                            find(
                                Some(&f.path),
                                None,
                                format!(
                                    "changes to this path are not allowed ({})",
                                    rule.description
                                ),
                            );
                        }
                    }
                }
            }
        }
        let blocked = findings.iter().any(|f| f.severity == GuardSeverity::Blocker);
        GuardReport {
            blocked,
            findings,
            files: change.files.len() as u32,
            lines_added: change.lines_added(),
        }
    }
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let head: String = s.chars().take(max).collect();
    format!("{head}…")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ids(r: &GuardReport) -> Vec<(String, Option<String>, Option<u32>)> {
        r.findings.iter().map(|f| (f.rule_id.clone(), f.file.clone(), f.line)).collect()
    }

    #[test]
    fn the_seeds_rules_by_default() {
        let rules = RuleSet::defaults();
        let got: Vec<(String, String)> =
            rules.rules().into_iter().map(|r| (r.id, r.name)).collect();
        let want: Vec<(String, String)> = [
            ("G001", "LOC_LIMIT"),
            ("G002", "NO_SECRET"),
            ("G003", "FILE_LIMIT"),
            ("G004", "NO_HARDCODED_URL"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        assert_eq!(got, want);
        // "Add 1000 lines of logging to every file": G001 blocks it.
        let logging: String = (0..600).map(|i| format!("log.info('step {i}')\n")).collect();
        let r = rules.check(&Change::from_files(&[("app.py", Some(""), Some(&logging))]));
        assert!(r.blocked);
        assert_eq!(ids(&r), [("G001".into(), None, None)]);
        // A secret, on its line; a production URL is a warning.
        let r = rules.check(&Change::from_files(&[(
            "config.py",
            Some("DEBUG = False\n"),
            Some("DEBUG = False\nAPI = 'https://api.prod.acme.com/v1'\nKEY = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'\n"),
        )]));
        assert!(r.blocked);
        assert_eq!(
            ids(&r),
            [
                ("G002".into(), Some("config.py".into()), Some(3)),
                ("G004".into(), Some("config.py".into()), Some(2))
            ]
        );
        assert!(
            !r.findings[0].message.contains("4eC39HqLyjWDarjtT1zdp7dc"),
            "masked: {}",
            r.findings[0].message
        );
        // A value on the line after its XML element, found on its own line.
        let r = rules.check(&Change::from_files(&[(
            "settings.xml",
            None,
            Some(
                "<server>\n  <password>\n    9fK2mZq7Lp0xRt4vBn8wYc3s\n  </password>\n</server>\n",
            ),
        )]));
        assert_eq!(ids(&r), [("G002".into(), Some("settings.xml".into()), Some(3))]);
        // Ordinary code about passwords passes.
        let r = rules.check(&Change::from_files(&[(
            "auth.py",
            None,
            Some("def login(password):\n    return check_password(user, password)\n"),
        )]));
        assert_eq!(r.findings, []);
    }

    #[test]
    fn configuration_layers_change_add_and_disable_rules_by_id() {
        let config = json!({"rules": {
            "G001": {"maxLines": 1000},
            "G004": {"enabled": false},
            "C001": {"name": "NO_PRINT", "severity": "blocker", "pattern": "^\\s*print\\(", "paths": ["src/**/*.py"], "exclude": ["src/scripts/**"]},
            "C002": {"name": "NO_MIGRATION_EDITS", "severity": "blocker", "forbiddenPaths": ["migrations/**"]},
            "C003": {"name": "SHORT_FILES", "maxFileLines": 3}
        }});
        let rules = RuleSet::from_config(&config).unwrap();
        let logging: String = (0..600).map(|i| format!("x = {i}\n")).collect();
        let r = rules.check(&Change::from_files(&[
            ("src/a.py", Some(""), Some(&logging)),
            ("src/b.py", Some(""), Some("  print('x')\n")),
            ("src/scripts/c.py", Some(""), Some("print('ok here')\n")),
            ("migrations/0002.py", Some("a\n"), Some("b\n")),
            ("notes.txt", None, Some("https://www.prod.example.org\n")),
        ]));
        assert_eq!(
            ids(&r),
            [
                ("C001".into(), Some("src/b.py".into()), Some(1)),
                ("C002".into(), Some("migrations/0002.py".into()), None),
                ("C003".into(), Some("src/a.py".into()), None),
            ],
            "600 lines pass under 1000; G004 is off"
        );
        assert!(r.blocked);
        for (bad, why) in [
            (json!({"rules": {"C9": {"name": "X"}}}), "says nothing to check"),
            (json!({"rules": {"C9": {"pattern": "("}}}), "pattern"),
            (json!({"rules": {"C9": {"maxLines": 1, "maxFiles": 2}}}), "more than one thing"),
            (json!({"rules": {"G001": {"maxLine": 1}}}), "unknown field"),
        ] {
            let err = RuleSet::from_config(&bad).unwrap_err();
            assert!(err.to_string().contains(why), "{err}");
        }
    }
}
