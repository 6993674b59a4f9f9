//! Guardrails (seed 002's M2): rules a change is checked against before it
//! lands, as pure functions of the change.
//!
//! A change is the lines it adds per file (from the files before and after, or
//! from a unified diff: `git diff --cached`, a patch file), so the same rules
//! check an agent's proposed change, an MCP `change`, and a commit from a
//! pre-commit hook (`ironbees guard check --staged`).
//!
//! The shipped rules keep the seed's ids — G001 `LOC_LIMIT`, G002 `NO_SECRET`,
//! G003 `FILE_LIMIT`, G004 `NO_HARDCODED_URL` — but G002 does not match the
//! seed's `(?i)password`, which would block every change that touches a password
//! field: it recognizes secrets by their real formats (provider key prefixes,
//! private key blocks, credentials in URLs) and, for a secret-named assignment,
//! by the value: long, random-looking, and not a placeholder or a lookup.
//!
//! Rules come from configuration as a map by id, so layers merge key by key: an
//! organization's file changes `G001`'s limit, a project adds its own rules
//! (a pattern with path globs, a per-file line limit, forbidden paths) or turns
//! one off, and each layer wins over the one before.
//!
//! ```
//! let rules = guard::RuleSet::defaults();
//! let change = guard::Change::from_files(&[("app.py", Some("x = 1\n"), Some("x = 1\nkey = \"AKIAIOSFODNN7EXAMPLE\"\n"))]);
//! let report = rules.check(&change);
//! assert!(report.blocked);
//! assert_eq!(report.findings[0].rule_id, "G002");
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod change;
mod rules;
mod secrets;

pub use crate::{
    change::{Change, FileDiff},
    rules::{Error, RuleInfo, RuleSet},
    secrets::{Secret, find_secret_after_name, find_secret_in_element, find_secrets},
};
