//! TEST's SQL step (seed §3.1, "SQL 최적화"): the queries in the changed
//! files, each explained on the configured test database, a rewrite or an
//! index asked of the model, verified, and kept on the test branch.
//!
//! ```text
//! find (extract.rs) → EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) → the model's
//!   {"kind": "rewrite"|"index", "sql", "reason"} → verify → keep (commit)
//! ```
//!
//! Verification is what makes a model's answer worth keeping: a rewrite must
//! return the same rows (a multiset; in order when the query has ORDER BY) and
//! be faster by `minImprovement` over alternating timed runs (`judge`); an
//! index must be used by the planner (a hypothetical one first when `hypopg`
//! is there) and make the query faster, measured with the index built inside a
//! savepoint. Everything runs in transactions that are rolled back (`pg.rs`):
//! the test database is left as it was. A kept rewrite replaces the query's
//! text in its file; a kept index becomes a migration file; both are one
//! commit on the test branch.

pub(crate) mod extract;
mod pg;

use std::time::Duration;

use protocol::{
    ErrorCode, PipelineState, SqlCandidate, SqlCandidateKind, SqlOutcome, SqlQueryResult,
    SqlStepResult, SqlTiming, StageStatus, stages,
};
use serde_json::{Value, json};
use sqlparser::{
    ast::{Statement, visit_relations},
    dialect::PostgreSqlDialect,
    parser::Parser,
};

use self::{
    extract::{Found, Kind},
    pg::{Db, DbError, Rows, Tx},
};
use crate::run::{Env, Failure};

/// Files larger than this are not searched.
const MAX_FILE_BYTES: u64 = 1 << 20;
/// The hub commit's subject starts with this.
pub(crate) const SUBJECT: &str = "TestAgent: SQL optimization";

const SYSTEM: &str = "You optimize one PostgreSQL query. You get the query, its plan \
(EXPLAIN ANALYZE, JSON) and its tables' definitions. Propose either a rewrite — one SELECT \
returning exactly the same rows (in the same order when the query has ORDER BY) — or one \
CREATE INDEX statement that makes it faster. Answer with one JSON object only: \
{\"kind\": \"rewrite\" | \"index\" | \"none\", \"sql\": \"<the statement>\", \"reason\": \
\"<one sentence>\"}; kind \"none\" when neither would help.";

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["rewrite", "index", "none"]},
            "sql": {"type": "string"},
            "reason": {"type": "string"}
        },
        "required": ["kind", "sql", "reason"],
        "additionalProperties": false
    })
}

/// A kept candidate's change to the repository.
struct Edit {
    file: String,
    span: std::ops::Range<usize>,
    text: String,
}

/// The step over the test branch (checked out in the hub): its result, with
/// the kept changes committed. `Err` only when the database is unavailable.
pub(crate) fn step(env: &Env, s: &PipelineState) -> Result<SqlStepResult, Failure> {
    let hub = &env.layout.hub;
    let git = |args: &[&str]| {
        crate::git::git_ok(hub, args, None).map_err(|e| Failure::new(ErrorCode::StageFailed, e))
    };
    // A run killed after its commit starts again from the code stage's commit.
    if let Some(code) = s.branches.get(stages::CODE) {
        git(&["reset", "-q", "--hard", code])?;
    }
    let root = env.layout.root.display().to_string();
    let mut found: Vec<(String, String, Found)> = Vec::new();
    for abs in &s.commit_file_list {
        let rel = abs.strip_prefix(&root).unwrap_or(abs).trim_start_matches('/').to_owned();
        let path = hub.join(&rel);
        let small =
            std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() <= MAX_FILE_BYTES);
        if let (true, Ok(text)) = (small, std::fs::read_to_string(&path)) {
            for f in extract::find(&rel, &text) {
                found.push((rel.clone(), text.clone(), f));
            }
        }
    }
    let mut result = SqlStepResult {
        status: StageStatus::Success,
        queries: found
            .iter()
            .map(|(file, _, f)| SqlQueryResult {
                file: file.clone(),
                line: f.line,
                end_line: f.end_line,
                kind: f.kind.name().to_owned(),
                query: f.sql.clone(),
                ..SqlQueryResult::default()
            })
            .collect(),
        ..SqlStepResult::default()
    };
    if found.is_empty() {
        result.status = StageStatus::Skipped;
        result.reason = Some("no SQL in the changed files".into());
        return Ok(result);
    }
    let cfg = &env.config.database;
    let Some(url) = cfg.url.as_deref().filter(|u| !u.trim().is_empty()) else {
        result.status = StageStatus::Skipped;
        result.reason = Some("no database (pipeline.database.url)".into());
        for q in &mut result.queries {
            q.reason = Some("no database".into());
        }
        return Ok(result);
    };
    let timeout = Duration::from_secs(cfg.statement_timeout.unwrap_or(30));
    let mut db = Db::connect(url, timeout)?;
    let hypopg = gone_only(db.hypopg_available())?.unwrap_or(false);
    result.hypopg = Some(hypopg);
    let llm = env.llm.clone().filter(|_| env.config.llm.enabled);
    let max = cfg.max_queries.unwrap_or(10) as usize;
    let mut tried = 0;
    let mut edits = Vec::new();
    let mut migrations: Vec<(String, String)> = Vec::new();
    for (i, (file, _, f)) in found.iter().enumerate() {
        let q = &mut result.queries[i];
        if let Some(why) = not_run(f) {
            q.reason = Some(why.into());
            continue;
        }
        if tried == max {
            q.reason = Some(format!("over pipeline.database.maxQueries ({max})"));
            continue;
        }
        tried += 1;
        let ctx = Query { file, found: f, hypopg, llm: llm.as_deref(), env, s };
        let kept = optimize(&mut db, &ctx, q)?;
        db.check_alive()?;
        match kept {
            Some(Keep::Rewrite(text)) => {
                edits.push(Edit { file: file.clone(), span: f.span.clone(), text });
            }
            Some(Keep::Index(sql)) => {
                let dir = cfg.migrations_dir.as_deref().unwrap_or("migrations");
                let path = format!(
                    "{}/commitly_{}_{}.sql",
                    dir.trim_end_matches('/'),
                    s.pipeline_id,
                    migrations.len() + 1
                );
                let t = q.timing.as_ref();
                let body = format!(
                    "-- Commitly (pipeline {}): for {}:{}\n-- {}\n-- median {:.2} ms -> {:.2} ms ({:.0}% faster)\n{};\n",
                    s.pipeline_id,
                    file,
                    f.line,
                    q.candidate.as_ref().map(|c| c.reason.as_str()).unwrap_or(""),
                    t.map_or(0.0, |t| t.median_before_ms),
                    t.map_or(0.0, |t| t.median_after_ms),
                    t.map_or(0.0, |t| t.improvement_pct),
                    sql.trim().trim_end_matches(';')
                );
                q.migration = Some(path.clone());
                migrations.push((path, body));
            }
            None => {}
        }
    }
    drop(db);
    if edits.is_empty() && migrations.is_empty() {
        return Ok(result);
    }
    // Later spans first, so earlier ones keep their offsets.
    edits.sort_by(|a, b| (&b.file, b.span.start).cmp(&(&a.file, a.span.start)));
    let mut touched: Vec<String> = Vec::new();
    for e in &edits {
        let path = hub.join(&e.file);
        let mut text = std::fs::read_to_string(&path)
            .map_err(|err| Failure::new(ErrorCode::Io, format!("{}: {err}", path.display())))?;
        text.replace_range(e.span.clone(), &e.text);
        stdx::atomic_write(&path, text.as_bytes())
            .map_err(|err| Failure::new(ErrorCode::Io, format!("{}: {err}", path.display())))?;
        if !touched.contains(&e.file) {
            touched.push(e.file.clone());
        }
    }
    for (rel, body) in &migrations {
        let path = hub.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|err| {
                Failure::new(ErrorCode::Io, format!("{}: {err}", parent.display()))
            })?;
        }
        std::fs::write(&path, body)
            .map_err(|err| Failure::new(ErrorCode::Io, format!("{}: {err}", path.display())))?;
        touched.push(rel.clone());
    }
    let mut args = vec!["add", "--"];
    args.extend(touched.iter().map(String::as_str));
    git(&args)?;
    let message = format!(
        "{SUBJECT}: {} rewrite(s), {} index(es)\n\n{}",
        edits.len(),
        migrations.len(),
        result
            .kept()
            .map(|q| format!(
                "{}:{} {:.0}% faster: {}",
                q.file,
                q.line,
                q.timing.as_ref().map_or(0.0, |t| t.improvement_pct),
                q.candidate.as_ref().map(|c| c.reason.as_str()).unwrap_or("")
            ))
            .collect::<Vec<_>>()
            .join("\n")
    );
    git(&["commit", "-q", "-m", &stdx::clip(&message, 4000)])?;
    result.commit = Some(git(&["rev-parse", "HEAD"])?);
    Ok(result)
}

/// Why a found query is not run, if it is not.
fn not_run(f: &Found) -> Option<&'static str> {
    if f.params {
        return Some("bind parameters ($1, %s, ?): it cannot run as written");
    }
    match f.kind {
        Kind::Insert => Some("INSERT is not optimized"),
        Kind::Update | Kind::Delete if !has_where(&f.sql) => {
            Some("an UPDATE or DELETE without WHERE is not run")
        }
        _ => None,
    }
}

fn has_where(sql: &str) -> bool {
    match Parser::parse_sql(&PostgreSqlDialect {}, sql).ok().and_then(|mut v| v.pop()) {
        Some(Statement::Update(u)) => u.selection.is_some(),
        Some(Statement::Delete(d)) => d.selection.is_some(),
        _ => false,
    }
}

fn has_order_by(sql: &str) -> bool {
    matches!(
        Parser::parse_sql(&PostgreSqlDialect {}, sql).ok().and_then(|mut v| v.pop()),
        Some(Statement::Query(q)) if q.order_by.is_some()
    )
}

/// The tables a statement names.
fn tables(sql: &str) -> Vec<String> {
    let Ok(parsed) = Parser::parse_sql(&PostgreSqlDialect {}, sql) else { return Vec::new() };
    let mut out: Vec<String> = Vec::new();
    let _ = visit_relations(&parsed, |name| {
        let n = name.to_string();
        if !out.contains(&n) {
            out.push(n);
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    out
}

/// A database error that is the step's (the database went away), or the
/// statement's (`Ok(None)`, set aside).
fn gone_only<T>(r: Result<T, DbError>) -> Result<Option<T>, Failure> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(DbError::Gone(f)) => Err(f),
        Err(DbError::Refused(_)) => Ok(None),
    }
}

struct Query<'a> {
    file: &'a str,
    found: &'a Found,
    hypopg: bool,
    llm: Option<&'a llm::Llm>,
    env: &'a Env,
    s: &'a PipelineState,
}

enum Keep {
    /// The literal's (or statement's) new text.
    Rewrite(String),
    /// The CREATE INDEX statement as the model wrote it.
    Index(String),
}

/// One query: explained, a candidate asked for and verified. `Err` only when
/// the database went away.
fn optimize(db: &mut Db, c: &Query<'_>, q: &mut SqlQueryResult) -> Result<Option<Keep>, Failure> {
    let sql = c.found.sql.as_str();
    let changes_rows = c.found.kind != Kind::Select;
    let plan = match db.rolled_back(|tx| tx.explain(sql, true)) {
        Ok(p) => p,
        Err(DbError::Gone(f)) => return Err(f),
        Err(DbError::Refused(why)) => {
            q.reason = Some(format!("the database refused it: {why}"));
            return Ok(None);
        }
    };
    q.before = Some(pg::summarize(&plan));
    q.outcome = SqlOutcome::NoCandidate;
    let Some(llm) = c.llm else {
        q.reason = Some("no model configured (pipeline.llm.enabled and llm:)".into());
        return Ok(None);
    };
    let definitions = match db.rolled_back(|tx| tx.describe(&tables(sql))) {
        Ok(d) => d,
        Err(DbError::Gone(f)) => return Err(f),
        Err(DbError::Refused(why)) => format!("(not read: {why})"),
    };
    let candidate = match ask(c, llm, &plan, &definitions) {
        Ok(Some(cand)) => cand,
        Ok(None) => {
            q.reason = Some("the model proposed nothing".into());
            return Ok(None);
        }
        Err(why) => {
            q.reason = Some(why);
            return Ok(None);
        }
    };
    q.candidate = Some(candidate.clone());
    q.outcome = SqlOutcome::Rejected;
    let runs = c.env.config.database.runs.unwrap_or(5).max(5);
    let min_pct = c.env.config.database.min_improvement.unwrap_or(10.0);
    let verified = match candidate.kind {
        SqlCandidateKind::Rewrite => verify_rewrite(db, c, &candidate.sql, runs, q),
        SqlCandidateKind::Index => verify_index(db, c, &candidate.sql, runs, changes_rows, q),
    };
    let timing = match verified {
        Ok(t) => t,
        Err(DbError::Gone(f)) => return Err(f),
        Err(DbError::Refused(why)) => {
            q.reason = Some(why);
            return Ok(None);
        }
    };
    if let Err(why) = judge(&timing.before_ms, &timing.after_ms, min_pct) {
        q.timing = Some(timing);
        q.reason = Some(why);
        return Ok(None);
    }
    q.timing = Some(timing);
    match candidate.kind {
        SqlCandidateKind::Rewrite => {
            let Some(text) = extract::as_literal_body(&candidate.sql, c.found.quoting) else {
                q.reason = Some("the rewrite cannot be written in the literal's quoting".into());
                return Ok(None);
            };
            q.outcome = SqlOutcome::Kept;
            Ok(Some(Keep::Rewrite(text)))
        }
        SqlCandidateKind::Index => {
            q.outcome = SqlOutcome::Kept;
            Ok(Some(Keep::Index(candidate.sql)))
        }
    }
}

/// The model's candidate; `Ok(None)` when it proposes nothing, `Err` with the
/// reason when the call or its answer fails (recorded, not fatal).
fn ask(
    c: &Query<'_>,
    llm: &llm::Llm,
    plan: &Value,
    definitions: &str,
) -> Result<Option<SqlCandidate>, String> {
    let plan_text = serde_json::to_string_pretty(plan).unwrap_or_default();
    let prompt = format!(
        "Query ({}:{}):\n{}\n\nPlan (EXPLAIN ANALYZE, BUFFERS, FORMAT JSON):\n{}\n\nTables:\n{}",
        c.file,
        c.found.line,
        c.found.sql,
        stdx::clip(&plan_text, 12_000),
        stdx::clip(definitions, 8_000)
    );
    let mut req =
        llm::Request::new(prompt).with_system(SYSTEM).with_output_schema("sql_candidate", schema());
    req.model = c.env.config.llm.model.clone();
    let opts =
        llm::CallOptions { workflow: Some(c.s.pipeline_id.clone()), ..llm::CallOptions::default() };
    let resp =
        c.env.rt.block_on(llm.complete(&req, &opts)).map_err(|e| format!("the model: {e}"))?;
    let value = match resp.structured {
        Some(v) => v,
        None => {
            let text = resp.text();
            let (Some(a), Some(b)) = (text.find('{'), text.rfind('}')) else {
                return Err("the model's answer has no JSON object".into());
            };
            serde_json::from_str(&text[a..=b])
                .map_err(|e| format!("the model's answer is not the JSON asked for: {e}"))?
        }
    };
    parse_candidate(&value)
}

fn parse_candidate(v: &Value) -> Result<Option<SqlCandidate>, String> {
    let kind = match v["kind"].as_str() {
        Some("rewrite") => SqlCandidateKind::Rewrite,
        Some("index") => SqlCandidateKind::Index,
        Some("none") | None => return Ok(None),
        Some(other) => return Err(format!("the model answered an unknown kind {other:?}")),
    };
    let sql = v["sql"].as_str().unwrap_or_default().trim().to_owned();
    if sql.is_empty() {
        return Ok(None);
    }
    Ok(Some(SqlCandidate {
        kind,
        sql,
        reason: v["reason"].as_str().unwrap_or_default().to_owned(),
    }))
}

/// The rows of two statements compared: as a multiset, or in order.
fn same_rows(a: &Rows, b: &Rows, ordered: bool) -> bool {
    if ordered {
        return a == b;
    }
    let (mut a, mut b) = (a.clone(), b.clone());
    a.sort();
    b.sort();
    a == b
}

fn refused(why: impl Into<String>) -> DbError {
    DbError::Refused(why.into())
}

fn verify_rewrite(
    db: &mut Db,
    c: &Query<'_>,
    candidate: &str,
    runs: u32,
    q: &mut SqlQueryResult,
) -> Result<SqlTiming, DbError> {
    let candidate = candidate.trim().trim_end_matches(';').trim_end();
    if c.found.kind != Kind::Select {
        return Err(refused("only rewrites of a SELECT are verified"));
    }
    if extract::classify(candidate) != Some(Kind::Select) {
        return Err(refused("the rewrite is not one SELECT"));
    }
    let original = c.found.sql.as_str();
    db.rolled_back(|tx| {
        tx.exec("SET TRANSACTION READ ONLY")?;
        let (_, before) = tx.timed(original, false)?;
        let (_, after) = tx.timed(candidate, false).map_err(|e| match e {
            DbError::Refused(why) => refused(format!("the rewrite fails: {why}")),
            gone => gone,
        })?;
        if !same_rows(&before, &after, has_order_by(original)) {
            return Err(refused(format!(
                "the rewrite returns other rows ({} rows, the query {}): rejected",
                after.len(),
                before.len()
            )));
        }
        q.after = Some(pg::summarize(&tx.explain(candidate, true)?));
        alternate(tx, runs, |tx| tx.timed(original, false), |tx| tx.timed(candidate, false))
    })
}

fn verify_index(
    db: &mut Db,
    c: &Query<'_>,
    candidate: &str,
    runs: u32,
    changes_rows: bool,
    q: &mut SqlQueryResult,
) -> Result<SqlTiming, DbError> {
    let mut parsed = Parser::parse_sql(&PostgreSqlDialect {}, candidate)
        .map_err(|e| refused(format!("the index does not parse: {e}")))?;
    let create = match (parsed.len(), parsed.pop()) {
        (1, Some(Statement::CreateIndex(mut ci))) => {
            // Built inside a transaction to be measured: never concurrently.
            ci.concurrently = false;
            Statement::CreateIndex(ci).to_string()
        }
        _ => return Err(refused("the index is not one CREATE INDEX statement")),
    };
    let original = c.found.sql.as_str();
    if c.hypopg {
        // hypopg refusing (no right to create the extension) only skips the try.
        match db.rolled_back(|tx| tx.hypothetical(&create, original)) {
            Ok(h) => {
                let (used, b, w) = (h.used, h.cost_before, h.cost_with);
                q.hypothetical = Some(h);
                if !used {
                    return Err(refused(format!(
                        "the planner would not use the index (hypopg: estimated cost {b:.1}, with it {w:.1})"
                    )));
                }
            }
            Err(gone @ DbError::Gone(_)) => return Err(gone),
            Err(DbError::Refused(_)) => {}
        }
    }
    db.rolled_back(|tx| {
        let (_, before) = tx.timed(original, changes_rows)?;
        let plan = tx.in_savepoint(|tx| {
            tx.exec(&create).map_err(|e| match e {
                DbError::Refused(why) => refused(format!("the index cannot be built: {why}")),
                gone => gone,
            })?;
            let (_, after) = tx.timed(original, changes_rows)?;
            if !changes_rows && !same_rows(&before, &after, has_order_by(original)) {
                return Err(refused("the query returns other rows with the index: rejected"));
            }
            tx.explain(original, true)
        })?;
        let after_plan = pg::summarize(&plan);
        let uses_new = after_plan
            .indexes
            .iter()
            .any(|i| q.before.as_ref().is_none_or(|b| !b.indexes.contains(i)));
        q.after = Some(after_plan);
        if !uses_new {
            return Err(refused("the plan does not use the new index"));
        }
        alternate(
            tx,
            runs,
            |tx| tx.timed(original, changes_rows),
            |tx| {
                tx.in_savepoint(|tx| {
                    tx.exec(&create)?;
                    tx.timed(original, changes_rows)
                })
            },
        )
    })
}

/// `runs` timed executions of each side, alternating, after one warm-up each.
fn alternate(
    tx: &mut Tx<'_>,
    runs: u32,
    mut before: impl FnMut(&mut Tx<'_>) -> Result<(f64, Rows), DbError>,
    mut after: impl FnMut(&mut Tx<'_>) -> Result<(f64, Rows), DbError>,
) -> Result<SqlTiming, DbError> {
    before(tx)?;
    after(tx)?;
    let mut t = SqlTiming { runs, ..SqlTiming::default() };
    for _ in 0..runs {
        t.before_ms.push(round(before(tx)?.0));
        t.after_ms.push(round(after(tx)?.0));
    }
    t.median_before_ms = round(median(&t.before_ms));
    t.median_after_ms = round(median(&t.after_ms));
    if t.median_before_ms > 0.0 {
        t.improvement_pct =
            round((t.median_before_ms - t.median_after_ms) / t.median_before_ms * 100.0);
    }
    Ok(t)
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Median absolute deviation: how much a side's runs spread.
fn spread(xs: &[f64]) -> f64 {
    let m = median(xs);
    median(&xs.iter().map(|x| (x - m).abs()).collect::<Vec<_>>())
}

/// Whether the candidate's runs are measurably faster: its median at least
/// `min_pct` percent below the query's, the gain above twice the larger
/// spread (noise) and above 0.1 ms. `Ok` with the improvement in percent.
pub(crate) fn judge(before: &[f64], after: &[f64], min_pct: f64) -> Result<f64, String> {
    let (b, a) = (median(before), median(after));
    let gain = b - a;
    let pct = if b > 0.0 { gain / b * 100.0 } else { 0.0 };
    let noise = 2.0 * spread(before).max(spread(after));
    if pct >= min_pct && gain > noise && gain >= 0.1 {
        return Ok(pct);
    }
    let why = if pct < min_pct {
        format!("less than {min_pct:.0}% faster")
    } else if gain <= noise {
        format!("within the noise (±{noise:.2} ms)")
    } else {
        "under 0.1 ms faster".to_owned()
    };
    Err(format!("not kept: median {b:.2} ms → {a:.2} ms ({pct:.0}%), {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_candidate_is_kept_only_when_measurably_faster() {
        let cases: [(&[f64], &[f64], bool); 6] = [
            (&[100.0, 101.0, 99.0, 100.0, 102.0], &[10.0, 11.0, 10.0, 9.0, 10.0], true),
            (&[10.0, 10.1, 9.9, 10.0, 10.0], &[9.5, 9.6, 9.4, 9.5, 9.5], false), // 5%
            (&[10.0, 30.0, 5.0, 20.0, 12.0], &[8.0, 2.0, 25.0, 9.0, 4.0], false), // noise
            (&[0.09, 0.09, 0.09, 0.09, 0.09], &[0.01, 0.01, 0.01, 0.01, 0.01], false), // tiny
            (&[5.0, 5.0, 5.0, 5.0, 5.0], &[5.0, 5.0, 5.0, 5.0, 5.0], false),
            (&[5.0, 5.0, 5.0, 5.0, 5.0], &[6.0, 6.0, 6.0, 6.0, 6.0], false),
        ];
        for (before, after, kept) in cases {
            assert_eq!(judge(before, after, 10.0).is_ok(), kept, "{before:?} {after:?}");
        }
    }

    #[test]
    fn rows_compare_as_multisets_unless_ordered() {
        let r = |v: &[&str]| -> Rows { v.iter().map(|x| vec![Some((*x).to_owned())]).collect() };
        assert!(same_rows(&r(&["a", "b", "b"]), &r(&["b", "a", "b"]), false));
        assert!(!same_rows(&r(&["a", "b", "b"]), &r(&["b", "a", "b"]), true));
        assert!(!same_rows(&r(&["a", "b", "b"]), &r(&["a", "b"]), false));
    }

    #[test]
    fn model_answers() {
        let cases = [
            (json!({"kind": "index", "sql": "CREATE INDEX ON t (a)", "reason": "r"}), Ok(true)),
            (json!({"kind": "none", "sql": "", "reason": "fine"}), Ok(false)),
            (json!({"kind": "rewrite", "sql": "  ", "reason": ""}), Ok(false)),
            (json!({"kind": "drop"}), Err(())),
        ];
        for (v, want) in cases {
            assert_eq!(parse_candidate(&v).map(|c| c.is_some()).map_err(|_| ()), want, "{v}");
        }
    }

    #[test]
    fn statements_facts() {
        assert_eq!(
            tables("SELECT * FROM a JOIN s.b ON a.id = b.id WHERE a.x IN (SELECT y FROM c)"),
            ["a", "s.b", "c"]
        );
        assert!(has_order_by("SELECT a FROM t ORDER BY a"));
        assert!(!has_order_by("SELECT a FROM (SELECT a FROM t ORDER BY a) s"));
        assert!(has_where("DELETE FROM t WHERE a = 1") && !has_where("UPDATE t SET a = 1"));
    }
}
