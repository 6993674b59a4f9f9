//! What guardrails and the critic report: a finding names the rule, how severe
//! it is, and where; a critique is the guardrails' report and the model's review
//! of one round's change (seed 002's M1 and M2).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a finding weighs: a blocker stops the change; the others are reported.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum GuardSeverity {
    Info,
    Warning,
    Blocker,
}

/// One rule broken by one change (at one place, when the rule is about lines).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GuardFinding {
    /// `G002`, or a project rule's id.
    pub rule_id: String,
    /// `NO_SECRET`.
    pub rule_name: String,
    pub severity: GuardSeverity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// 1-based, in the file after the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// What is wrong, with any secret masked.
    pub message: String,
}

/// Every finding of one check, and whether a blocker is among them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GuardReport {
    pub blocked: bool,
    pub findings: Vec<GuardFinding>,
    /// Files and added lines the check read.
    pub files: u32,
    pub lines_added: u32,
}

/// One problem the critic's model review found in a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CriticIssue {
    pub severity: GuardSeverity,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// The CRITIC node's verdict on one round's change: guardrails first (no model),
/// then, when the run asks for it, a model review. Not approved sends the change
/// back to CODE with the blockers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Critique {
    pub approved: bool,
    /// The CODE round this critique is of.
    pub iteration: u32,
    pub guardrails: GuardReport,
    /// Whether a model reviewed the change (not when guardrails blocked it, or
    /// the run did not ask for a review).
    pub reviewed: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub issues: Vec<CriticIssue>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<String>,
}
