//! `report` (seed §8.2): five sections computed from the stored pipeline
//! states, nothing else — a pure function of them, rendered as Markdown or
//! serialized as JSON.

use protocol::{PipelineState, RunStatus, RunSummary};
use serde::Serialize;

use crate::error::{Error, Result};

/// Which pipelines a report covers: started within `from..=to` (UTC dates,
/// `YYYY-MM-DD`), and, with `issue`, whose commit message names it.
#[derive(Debug, Clone, Default)]
pub struct ReportFilter {
    pub from: Option<String>,
    pub to: Option<String>,
    pub issue: Option<String>,
}

impl ReportFilter {
    /// Checks the dates' shape (`2025-10-14`).
    pub fn validate(&self) -> Result<()> {
        for d in [&self.from, &self.to].into_iter().flatten() {
            let b = d.as_bytes();
            let ok = b.len() == 10
                && b[4] == b'-'
                && b[7] == b'-'
                && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
            if !ok {
                return Err(Error::InvalidArgument(format!(
                    "{d:?} is not a date: write it as YYYY-MM-DD"
                )));
            }
        }
        Ok(())
    }
}

/// The report (seed §8.2's five sections).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Report {
    pub from: Option<String>,
    pub to: Option<String>,
    pub issue: Option<String>,
    pub commits: CommitCounts,
    pub sql: SqlCounts,
    pub refactoring: RefactorCounts,
    pub slack: SlackCounts,
    pub issues: Vec<IssueLine>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommitCounts {
    pub total: u32,
    pub succeeded: u32,
    pub failed: u32,
    /// Waiting at an approval or still running.
    pub in_progress: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SqlCounts {
    /// Queries found in the changed files.
    pub queries_found: u32,
    /// Queries whose verified rewrite or index was kept.
    pub optimized_queries: u32,
    /// Candidates the model proposed that verification rejected.
    pub rejected: u32,
    /// The mean of the kept optimizations' improvements (percent of the
    /// median time), `None` without any.
    pub average_improvement_pct: Option<f64>,
    /// Pipelines whose SQL step did not run (no database, no SQL).
    pub skipped: u32,
    /// Every kept optimization, with its numbers.
    pub optimized: Vec<SqlLine>,
}

/// One kept optimization as the report shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SqlLine {
    pub pipeline_id: String,
    /// `file:line`.
    pub location: String,
    /// `rewrite` or `index`.
    pub kind: String,
    pub median_before_ms: f64,
    pub median_after_ms: f64,
    pub improvement_pct: f64,
    pub cost_before: Option<f64>,
    pub cost_after: Option<f64>,
    pub node_before: Option<String>,
    pub node_after: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RefactorCounts {
    pub modified_files: u32,
    pub improvements: u32,
    pub duplicates_removed: u32,
    pub exception_handling_added: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SlackCounts {
    pub matched_messages: u32,
    /// Replies to matched messages (the seed's "해결 완료 응답").
    pub replies: u32,
    pub sent_messages: u32,
    pub failed_notifications: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IssueLine {
    pub pipeline_id: String,
    /// `hotfix` of `[hotfix] DB timeout`, when the message has one.
    pub tag: Option<String>,
    pub message: String,
    pub date: String,
    pub status: String,
}

/// A message's words for matching an issue name: lowercase, runs of anything
/// but letters and digits as one `-` (`[hotfix] API timeout` → `hotfix-api-timeout`).
fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

/// The report over `runs` (each a stored run and its state).
pub fn report(runs: &[(RunSummary, PipelineState)], filter: &ReportFilter) -> Report {
    let mut r = Report {
        from: filter.from.clone(),
        to: filter.to.clone(),
        issue: filter.issue.clone(),
        ..Report::default()
    };
    let mut chosen: Vec<&(RunSummary, PipelineState)> = runs
        .iter()
        .filter(|(_, s)| {
            let date = stdx::utc_date(s.started_at_ms.div_euclid(1000));
            filter.from.as_ref().is_none_or(|f| date >= *f)
                && filter.to.as_ref().is_none_or(|t| date <= *t)
                && filter.issue.as_ref().is_none_or(|i| slug(&s.commit_message).contains(&slug(i)))
        })
        .collect();
    chosen.sort_by_key(|(_, s)| s.started_at_ms);
    for (run, s) in chosen {
        r.commits.total += 1;
        let status = match &run.status {
            RunStatus::Succeeded => {
                r.commits.succeeded += 1;
                "succeeded"
            }
            RunStatus::Failed { .. } | RunStatus::Cancelled => {
                r.commits.failed += 1;
                "failed"
            }
            _ => {
                r.commits.in_progress += 1;
                "in progress"
            }
        };
        if let Some(t) = &s.results.test {
            r.sql.queries_found += t.sql.queries.len() as u32;
            if t.sql.status == protocol::StageStatus::Skipped {
                r.sql.skipped += 1;
            }
            for q in &t.sql.queries {
                match q.outcome {
                    protocol::SqlOutcome::Rejected => r.sql.rejected += 1,
                    protocol::SqlOutcome::Kept => {
                        r.sql.optimized_queries += 1;
                        let t = q.timing.clone().unwrap_or_default();
                        r.sql.optimized.push(SqlLine {
                            pipeline_id: s.pipeline_id.clone(),
                            location: format!("{}:{}", q.file, q.line),
                            kind: match q.candidate.as_ref().map(|c| c.kind) {
                                Some(protocol::SqlCandidateKind::Index) => "index".into(),
                                _ => "rewrite".into(),
                            },
                            median_before_ms: t.median_before_ms,
                            median_after_ms: t.median_after_ms,
                            improvement_pct: t.improvement_pct,
                            cost_before: q.before.as_ref().map(|p| p.total_cost),
                            cost_after: q.after.as_ref().map(|p| p.total_cost),
                            node_before: q.before.as_ref().map(|p| p.node_type.clone()),
                            node_after: q.after.as_ref().map(|p| p.node_type.clone()),
                        });
                    }
                    _ => {}
                }
            }
        }
        if let Some(f) = &s.results.refactor {
            r.refactoring.modified_files += f.refactored_files.len() as u32;
            for i in &f.improvements {
                r.refactoring.improvements += 1;
                let l = i.to_lowercase();
                if l.contains("duplicat") || l.contains("중복") {
                    r.refactoring.duplicates_removed += 1;
                }
                if l.contains("exception") || l.contains("error handling") || l.contains("예외") {
                    r.refactoring.exception_handling_added += 1;
                }
            }
        }
        if let Some(n) = &s.results.notify {
            r.slack.matched_messages += n.matched_messages;
            r.slack.replies += n.replies;
            r.slack.sent_messages += n.sent_messages;
            if n.error.is_some() {
                r.slack.failed_notifications += 1;
            }
        }
        let (tag, message) = split_tag(&s.commit_message);
        r.issues.push(IssueLine {
            pipeline_id: s.pipeline_id.clone(),
            tag,
            message,
            date: stdx::utc_date(s.started_at_ms.div_euclid(1000)),
            status: status.to_owned(),
        });
    }
    if !r.sql.optimized.is_empty() {
        let sum: f64 = r.sql.optimized.iter().map(|l| l.improvement_pct).sum();
        r.sql.average_improvement_pct =
            Some((sum / r.sql.optimized.len() as f64 * 10.0).round() / 10.0);
    }
    r
}

/// `[hotfix] DB timeout` → (`hotfix`, `DB timeout`).
fn split_tag(message: &str) -> (Option<String>, String) {
    let m = message.trim();
    if let Some(rest) = m.strip_prefix('[')
        && let Some(end) = rest.find(']')
    {
        return (Some(rest[..end].trim().to_owned()), rest[end + 1..].trim().to_owned());
    }
    (None, m.to_owned())
}

/// The report as Markdown (seed §8.2's layout).
pub fn render_markdown(r: &Report) -> String {
    let mut out = String::from("# Commitly activity report\n");
    let period = match (&r.from, &r.to) {
        (None, None) => "all pipelines".to_owned(),
        (f, t) => format!("{} ~ {}", f.as_deref().unwrap_or("…"), t.as_deref().unwrap_or("…")),
    };
    out.push_str(&format!("**Period**: {period}\n"));
    if let Some(i) = &r.issue {
        out.push_str(&format!("**Issue**: {i}\n"));
    }
    out.push_str(&format!(
        "\n## 1. Commits\n- Total: {}\n- Succeeded: {}\n- Failed: {}\n",
        r.commits.total, r.commits.succeeded, r.commits.failed
    ));
    if r.commits.in_progress > 0 {
        out.push_str(&format!("- In progress: {}\n", r.commits.in_progress));
    }
    out.push_str(&format!(
        "\n## 2. SQL optimization (SQL 최적화)\n- Queries found: {}\n- Optimized queries: {}\n",
        r.sql.queries_found, r.sql.optimized_queries
    ));
    if let Some(avg) = r.sql.average_improvement_pct {
        out.push_str(&format!("- Average improvement: {avg:.0}%\n"));
    }
    out.push_str(&format!(
        "- Candidates rejected: {}\n- Not run (no database or no SQL): {}\n",
        r.sql.rejected, r.sql.skipped
    ));
    for l in &r.sql.optimized {
        let cost = match (l.cost_before, l.cost_after) {
            (Some(b), Some(a)) => format!(", cost {b:.1} → {a:.1}"),
            _ => String::new(),
        };
        let nodes = match (&l.node_before, &l.node_after) {
            (Some(b), Some(a)) => format!(", {b} → {a}"),
            _ => String::new(),
        };
        out.push_str(&format!(
            "  - {} ({}): {:.2} ms → {:.2} ms ({:.0}% faster{cost}{nodes})\n",
            l.location, l.kind, l.median_before_ms, l.median_after_ms, l.improvement_pct
        ));
    }
    out.push_str(&format!(
        "\n## 3. Refactoring\n- Files modified: {}\n- Improvements: {}\n- Duplicate code removed: {}\n- Exception handling added: {}\n",
        r.refactoring.modified_files,
        r.refactoring.improvements,
        r.refactoring.duplicates_removed,
        r.refactoring.exception_handling_added
    ));
    out.push_str(&format!(
        "\n## 4. Slack\n- Messages sent: {}\n- Matched messages: {}\n- Replies to them: {}\n- Failed notifications: {}\n",
        r.slack.sent_messages, r.slack.matched_messages, r.slack.replies, r.slack.failed_notifications
    ));
    out.push_str("\n## 5. Main issues\n");
    if r.issues.is_empty() {
        out.push_str("- none\n");
    }
    for i in &r.issues {
        let tag = i.tag.as_deref().map(|t| format!("[{t}] ")).unwrap_or_default();
        out.push_str(&format!("- {tag}{} ({}, {})\n", i.message, i.date, i.status));
    }
    out
}

/// The report's file name: `{date}-{issue or "summary"}.{ext}` (seed §8.2).
pub fn file_name(r: &Report, today: &str, ext: &str) -> String {
    let what =
        r.issue.as_deref().map(slug).filter(|s| !s.is_empty()).unwrap_or_else(|| "summary".into());
    format!("{today}-{what}.{ext}")
}

#[cfg(test)]
mod tests {
    use protocol::{NotifyResult, RefactorResult, StageResults, StageStatus, TestStageResult};

    use super::*;

    fn run(
        id: &str,
        day_ms: i64,
        message: &str,
        status: RunStatus,
        results: StageResults,
    ) -> (RunSummary, PipelineState) {
        let summary = RunSummary {
            id: id.into(),
            kind: "pipeline".into(),
            created_ms: day_ms,
            updated_ms: day_ms,
            status,
            node: "END".into(),
            seq: 1,
            cancel_requested: false,
            metadata: serde_json::Value::Null,
        };
        let state = PipelineState {
            pipeline_id: id.into(),
            commit_message: message.into(),
            started_at_ms: day_ms,
            results,
            ..PipelineState::default()
        };
        (summary, state)
    }

    const DAY: i64 = 86_400_000;

    #[test]
    fn sections_count_the_stored_results() {
        let refactored = StageResults {
            test: Some(TestStageResult {
                sql: protocol::SqlStepResult::skipped("no database"),
                ..Default::default()
            }),
            refactor: Some(RefactorResult {
                refactored_files: vec!["/p/a.py".into(), "/p/b.py".into()],
                improvements: vec![
                    "removed duplicate code".into(),
                    "added exception handling".into(),
                ],
                ..Default::default()
            }),
            notify: Some(NotifyResult { sent_messages: 1, ..Default::default() }),
            ..Default::default()
        };
        let kept = protocol::SqlQueryResult {
            file: "db.py".into(),
            line: 7,
            outcome: protocol::SqlOutcome::Kept,
            candidate: Some(protocol::SqlCandidate {
                kind: protocol::SqlCandidateKind::Index,
                ..Default::default()
            }),
            before: Some(protocol::PlanSummary {
                node_type: "Seq Scan".into(),
                total_cost: 3000.0,
                ..Default::default()
            }),
            after: Some(protocol::PlanSummary {
                node_type: "Index Scan".into(),
                total_cost: 8.5,
                ..Default::default()
            }),
            timing: Some(protocol::SqlTiming {
                median_before_ms: 20.0,
                median_after_ms: 12.0,
                improvement_pct: 40.0,
                ..Default::default()
            }),
            ..Default::default()
        };
        let rejected = protocol::SqlQueryResult {
            outcome: protocol::SqlOutcome::Rejected,
            ..Default::default()
        };
        let optimized = StageResults {
            test: Some(TestStageResult {
                sql: protocol::SqlStepResult {
                    status: StageStatus::Success,
                    queries: vec![kept, rejected],
                    ..Default::default()
                },
                ..Default::default()
            }),
            ..Default::default()
        };
        let runs = vec![
            run("a", 10 * DAY, "[hotfix] API timeout", RunStatus::Succeeded, refactored),
            run(
                "b",
                11 * DAY,
                "add login",
                RunStatus::Failed { code: "X".into(), message: "m".into() },
                optimized,
            ),
            run("c", 30 * DAY, "later", RunStatus::Succeeded, StageResults::default()),
        ];
        let filter = ReportFilter {
            from: Some("1970-01-11".into()),
            to: Some("1970-01-12".into()),
            issue: None,
        };
        let r = report(&runs, &filter);
        assert_eq!(r.commits, CommitCounts { total: 2, succeeded: 1, failed: 1, in_progress: 0 });
        assert_eq!(
            (r.sql.queries_found, r.sql.optimized_queries, r.sql.rejected, r.sql.skipped),
            (2, 1, 1, 1)
        );
        assert_eq!(r.sql.average_improvement_pct, Some(40.0));
        let md = render_markdown(&r);
        assert!(md.contains("- Average improvement: 40%"), "{md}");
        assert!(
            md.contains("  - db.py:7 (index): 20.00 ms → 12.00 ms (40% faster, cost 3000.0 → 8.5, Seq Scan → Index Scan)"),
            "{md}"
        );
        assert_eq!(
            r.refactoring,
            RefactorCounts {
                modified_files: 2,
                improvements: 2,
                duplicates_removed: 1,
                exception_handling_added: 1
            }
        );
        assert_eq!(r.slack.sent_messages, 1);
        assert_eq!(r.issues[0].tag.as_deref(), Some("hotfix"));
        assert_eq!(r.issues[0].message, "API timeout");

        let by_issue = report(
            &runs,
            &ReportFilter { issue: Some("hotfix-api-timeout".into()), ..Default::default() },
        );
        assert_eq!(by_issue.commits.total, 1);
        assert_eq!(file_name(&by_issue, "2025-10-21", "md"), "2025-10-21-hotfix-api-timeout.md");
        assert!(
            render_markdown(&r)
                .contains("## 5. Main issues\n- [hotfix] API timeout (1970-01-11, succeeded)")
        );
    }

    #[test]
    fn dates_must_be_days() {
        for (d, ok) in [("2025-10-14", true), ("2025-1-14", false), ("yesterday", false)] {
            let f = ReportFilter { from: Some(d.into()), ..Default::default() };
            assert_eq!(f.validate().is_ok(), ok, "{d}");
        }
    }
}
