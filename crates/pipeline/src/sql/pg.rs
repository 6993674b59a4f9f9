//! The project's test database: the synchronous `postgres` client, every
//! statement inside a transaction that is rolled back (a `postgres`
//! transaction dropped uncommitted rolls back), so the step never leaves a
//! change behind — not an index, not an extension, not a row an UPDATE touched.

use std::time::{Duration, Instant};

use postgres::{Client, NoTls, SimpleQueryMessage, Transaction};
use protocol::{ErrorCode, HypotheticalIndex, PlanSummary};
use serde_json::Value;

use crate::run::Failure;

/// Rows as text, one `Vec` per row (`None` for NULL).
pub(crate) type Rows = Vec<Vec<Option<String>>>;

/// More rows than this are not compared: the candidate is not verified.
pub(crate) const MAX_ROWS: usize = 200_000;

pub(crate) struct Db {
    client: Client,
    /// Where the database is, without the password, for messages.
    pub(crate) shown: String,
    timeout: Duration,
}

/// A statement's failure: the database went away (the step fails), or it
/// refused this statement (the query or candidate is set aside).
#[derive(Debug)]
pub(crate) enum DbError {
    Gone(Failure),
    Refused(String),
}

pub(crate) type DbResult<T> = Result<T, DbError>;

/// `postgres://user:secret@host/db` → `postgres://user@host/db`.
pub(crate) fn shown(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let user = &url[s + 3..at];
            let user = user.split(':').next().unwrap_or("");
            let q = url.find('?').unwrap_or(url.len());
            format!("{}{user}{}", &url[..s + 3], &url[at..q.max(at)])
        }
        _ => url.split('?').next().unwrap_or(url).to_owned(),
    }
}

fn unavailable(shown: &str, e: impl std::fmt::Display) -> Failure {
    Failure::new(
        ErrorCode::DatabaseUnavailable,
        format!("the test database {shown} (pipeline.database.url) is unavailable: {e}"),
    )
}

impl Db {
    pub(crate) fn connect(url: &str, timeout: Duration) -> Result<Db, Failure> {
        let shown = shown(url);
        let mut config: postgres::Config = url.parse().map_err(|e| {
            Failure::new(
                ErrorCode::InvalidArgument,
                format!("pipeline.database.url {shown} is not a PostgreSQL URL: {e}"),
            )
        })?;
        config.connect_timeout(Duration::from_secs(10));
        config.application_name("ironbees-pipeline-sql");
        let client = config.connect(NoTls).map_err(|e| unavailable(&shown, e))?;
        Ok(Db { client, shown, timeout })
    }

    /// A statement refused because the server went away shows on the next
    /// one; this asks now.
    pub(crate) fn check_alive(&mut self) -> Result<(), Failure> {
        if self.client.is_closed() {
            return Err(unavailable(&self.shown, "the connection closed"));
        }
        match self.client.simple_query("SELECT 1") {
            Err(e) if is_gone(&e) => Err(unavailable(&self.shown, e)),
            _ => Ok(()),
        }
    }

    fn classify(&self, closed: bool, e: postgres::Error) -> DbError {
        if closed || is_gone(&e) {
            DbError::Gone(unavailable(&self.shown, e))
        } else {
            let msg = e.as_db_error().map_or_else(|| e.to_string(), |d| d.message().to_owned());
            DbError::Refused(msg)
        }
    }

    /// Runs `f` in a transaction that is always rolled back, with the
    /// statement timeout set.
    pub(crate) fn rolled_back<T>(
        &mut self,
        f: impl FnOnce(&mut Tx<'_>) -> DbResult<T>,
    ) -> DbResult<T> {
        let shown = self.shown.clone();
        let timeout = self.timeout.as_millis();
        let tx = match self.client.transaction() {
            Ok(t) => t,
            Err(e) => return Err(DbError::Gone(unavailable(&shown, e))),
        };
        let mut tx = Tx { tx, shown, savepoint: 0 };
        tx.exec(&format!("SET LOCAL statement_timeout = {timeout}"))?;
        let out = f(&mut tx);
        let _ = tx.tx.rollback();
        out
    }

    /// Whether hypothetical indexes can be tried here.
    pub(crate) fn hypopg_available(&mut self) -> DbResult<bool> {
        let rows = self
            .client
            .simple_query("SELECT 1 FROM pg_available_extensions WHERE name = 'hypopg'")
            .map_err(|e| self.classify(false, e))?;
        Ok(rows.iter().any(|m| matches!(m, SimpleQueryMessage::Row(_))))
    }
}

/// A transaction that will be rolled back.
pub(crate) struct Tx<'a> {
    tx: Transaction<'a>,
    shown: String,
    savepoint: u32,
}

/// Whether an error means the connection or the server is gone: closed, not
/// a statement's error, or a FATAL one (a server shutting down terminates its
/// sessions with SQLSTATE 57P01..57P03; class 08 is the connection's).
fn is_gone(e: &postgres::Error) -> bool {
    match e.as_db_error() {
        _ if e.is_closed() => true,
        None => true,
        Some(d) => {
            let code = d.code().code();
            matches!(d.severity(), "FATAL" | "PANIC")
                || code.starts_with("57P")
                || code.starts_with("08")
        }
    }
}

impl Tx<'_> {
    fn err(&self, e: postgres::Error) -> DbError {
        if is_gone(&e) {
            DbError::Gone(unavailable(&self.shown, e))
        } else {
            let msg = e.as_db_error().map_or_else(|| e.to_string(), |d| d.message().to_owned());
            DbError::Refused(msg)
        }
    }

    pub(crate) fn exec(&mut self, sql: &str) -> DbResult<()> {
        self.tx.batch_execute(sql).map_err(|e| self.err(e))
    }

    /// The rows of one statement, as text.
    pub(crate) fn rows(&mut self, sql: &str) -> DbResult<Rows> {
        let msgs = self.tx.simple_query(sql).map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for m in msgs {
            if let SimpleQueryMessage::Row(r) = m {
                if out.len() == MAX_ROWS {
                    return Err(DbError::Refused(format!(
                        "it returns more than {MAX_ROWS} rows: too many to compare"
                    )));
                }
                out.push((0..r.len()).map(|i| r.get(i).map(str::to_owned)).collect());
            }
        }
        Ok(out)
    }

    /// Runs `sql` and measures it (rows fetched); a statement that changes
    /// rows runs inside a savepoint rolled back at once.
    pub(crate) fn timed(&mut self, sql: &str, changes_rows: bool) -> DbResult<(f64, Rows)> {
        if changes_rows {
            return self.in_savepoint(|tx| {
                let t = Instant::now();
                let rows = tx.rows(sql)?;
                Ok((t.elapsed().as_secs_f64() * 1000.0, rows))
            });
        }
        let t = Instant::now();
        let rows = self.rows(sql)?;
        Ok((t.elapsed().as_secs_f64() * 1000.0, rows))
    }

    /// `f` inside a savepoint that is rolled back after it.
    pub(crate) fn in_savepoint<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> DbResult<T>,
    ) -> DbResult<T> {
        self.savepoint += 1;
        let name = format!("ironbees_{}", self.savepoint);
        self.exec(&format!("SAVEPOINT {name}"))?;
        let out = f(self);
        match self.exec(&format!("ROLLBACK TO SAVEPOINT {name}")) {
            Err(gone @ DbError::Gone(_)) => Err(gone),
            _ => out,
        }
    }

    /// `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` (or without ANALYZE), the
    /// plan as JSON. ANALYZE runs the statement: a savepoint rolls it back.
    pub(crate) fn explain(&mut self, sql: &str, analyze: bool) -> DbResult<Value> {
        let opts = if analyze { "ANALYZE, BUFFERS, FORMAT JSON" } else { "FORMAT JSON" };
        let text = self.in_savepoint(|tx| {
            let rows = tx.rows(&format!("EXPLAIN ({opts}) {sql}"))?;
            Ok(rows.into_iter().filter_map(|r| r.into_iter().next().flatten()).collect::<String>())
        })?;
        serde_json::from_str(&text)
            .map_err(|e| DbError::Refused(format!("EXPLAIN's answer is not JSON: {e}")))
    }

    /// The tables `names` as the model needs them: columns with types, the
    /// existing indexes, the row estimate and the columns' statistics.
    pub(crate) fn describe(&mut self, names: &[String]) -> DbResult<String> {
        let mut out = String::new();
        for name in names {
            let lit = quote_literal(name);
            let rel = self.rows(&format!(
                "SELECT c.reltuples::bigint, c.relkind FROM pg_class c WHERE c.oid = to_regclass({lit})"
            ))?;
            let Some(rel) = rel.first() else {
                out.push_str(&format!("table {name}: not found\n"));
                continue;
            };
            let estimate = rel[0].clone().unwrap_or_default();
            out.push_str(&format!("table {name} (about {estimate} rows)\n"));
            for c in self.rows(&format!(
                "SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull \
                 FROM pg_attribute a WHERE a.attrelid = to_regclass({lit}) AND a.attnum > 0 \
                 AND NOT a.attisdropped ORDER BY a.attnum"
            ))? {
                let not_null = if c[2].as_deref() == Some("t") { " not null" } else { "" };
                out.push_str(&format!(
                    "  column {} {}{not_null}\n",
                    c[0].as_deref().unwrap_or(""),
                    c[1].as_deref().unwrap_or("")
                ));
            }
            for i in self.rows(&format!(
                "SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = to_regclass({lit})"
            ))? {
                out.push_str(&format!("  index: {}\n", i[0].as_deref().unwrap_or("")));
            }
            for s in self.rows(&format!(
                "SELECT attname, null_frac, n_distinct, correlation FROM pg_stats \
                 WHERE format('%I.%I', schemaname, tablename)::regclass = to_regclass({lit})"
            ))? {
                let v = |i: usize| s[i].clone().unwrap_or_else(|| "-".into());
                out.push_str(&format!(
                    "  stats {}: null_frac {} n_distinct {} correlation {}\n",
                    v(0),
                    v(1),
                    v(2),
                    v(3)
                ));
            }
        }
        Ok(out)
    }

    /// Tries `create_index` as a hypothetical index (hypopg, created in this
    /// transaction, so rolled back with it): is it in the plan, at what cost.
    pub(crate) fn hypothetical(
        &mut self,
        create_index: &str,
        sql: &str,
    ) -> DbResult<HypotheticalIndex> {
        self.in_savepoint(|tx| {
            tx.exec("CREATE EXTENSION IF NOT EXISTS hypopg")?;
            let before = tx.explain(sql, false)?;
            let made = tx.rows(&format!(
                "SELECT indexname FROM hypopg_create_index({})",
                quote_literal(create_index)
            ))?;
            let name = made.first().and_then(|r| r.first().cloned().flatten());
            let with = tx.explain(sql, false);
            let _ = tx.exec("SELECT hypopg_reset()");
            let with = with?;
            let used = name.is_some_and(|n| plan_indexes(&with).iter().any(|i| i.contains(&n)));
            Ok(HypotheticalIndex {
                used,
                cost_before: summarize(&before).total_cost,
                cost_with: summarize(&with).total_cost,
            })
        })
    }
}

/// `'text'` with its quotes doubled.
pub(crate) fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The top of a JSON plan (`[{"Plan": {...}, "Execution Time": ..}]`).
pub(crate) fn summarize(plan: &Value) -> PlanSummary {
    let top = plan.get(0).unwrap_or(plan);
    let node = &top["Plan"];
    PlanSummary {
        node_type: node["Node Type"].as_str().unwrap_or_default().to_owned(),
        total_cost: node["Total Cost"].as_f64().unwrap_or_default(),
        actual_total_ms: node["Actual Total Time"].as_f64(),
        execution_ms: top["Execution Time"].as_f64(),
        planning_ms: top["Planning Time"].as_f64(),
        shared_hit_blocks: node["Shared Hit Blocks"].as_u64(),
        shared_read_blocks: node["Shared Read Blocks"].as_u64(),
        indexes: plan_indexes(plan),
    }
}

/// Every `Index Name` in a plan tree.
pub(crate) fn plan_indexes(plan: &Value) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(n) = m.get("Index Name").and_then(Value::as_str)
                    && !out.iter().any(|o| o == n)
                {
                    out.push(n.to_owned());
                }
                m.values().for_each(|v| walk(v, out));
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(plan, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_passwords_or_options() {
        let cases = [
            ("postgres://u:secret@h:5432/db", "postgres://u@h:5432/db"),
            ("postgres://u@h/db?sslmode=disable&password=x", "postgres://u@h/db"),
            ("postgres://h/db", "postgres://h/db"),
        ];
        for (url, want) in cases {
            assert_eq!(shown(url), want, "{url}");
        }
    }

    #[test]
    fn a_plans_top_and_its_indexes() {
        let plan = serde_json::json!([{
            "Plan": {"Node Type": "Nested Loop", "Total Cost": 12.5, "Actual Total Time": 0.4,
                "Shared Hit Blocks": 7,
                "Plans": [{"Node Type": "Index Scan", "Index Name": "users_email_idx"},
                          {"Node Type": "Index Only Scan", "Index Name": "<13>btree_orders_uid"}]},
            "Planning Time": 0.1, "Execution Time": 0.5
        }]);
        let s = summarize(&plan);
        assert_eq!(
            (s.node_type.as_str(), s.total_cost, s.execution_ms),
            ("Nested Loop", 12.5, Some(0.5))
        );
        assert_eq!(s.shared_hit_blocks, Some(7));
        assert_eq!(s.indexes, ["users_email_idx", "<13>btree_orders_uid"]);
    }
}
