//! Tokens and money: the price table, hard budgets and the ledger that enforces
//! them per session and per workflow.

use std::{collections::BTreeMap, sync::Mutex};

use serde::{Deserialize, Serialize};

use crate::{error::Error, types::Usage};

/// USD per million tokens. Cache prices default to the input price (the
/// conservative choice for a budget) when a table entry leaves them out.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
}

impl Price {
    pub const fn new(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Price {
        Price { input, output, cache_read: Some(cache_read), cache_write: Some(cache_write) }
    }

    pub fn cost(&self, u: &Usage) -> f64 {
        let per = |tokens: u64, usd_per_mtok: f64| tokens as f64 * usd_per_mtok / 1_000_000.0;
        per(u.input_tokens, self.input)
            + per(u.output_tokens, self.output)
            + per(u.cache_read_tokens, self.cache_read.unwrap_or(self.input))
            + per(u.cache_write_tokens, self.cache_write.unwrap_or(self.input))
    }
}

/// Published list prices (USD per million tokens) when this table was written;
/// `llm.prices` in the configuration overrides or extends it. A pattern ending in
/// `*` matches by prefix (dated snapshots such as `claude-sonnet-4-5-20250929`);
/// the longest matching pattern wins.
const BUILTIN: &[(&str, Price)] = &[
    ("claude-opus-4-5*", Price::new(5.0, 25.0, 0.5, 6.25)),
    ("claude-opus-4*", Price::new(15.0, 75.0, 1.5, 18.75)),
    ("claude-sonnet-4*", Price::new(3.0, 15.0, 0.3, 3.75)),
    ("claude-3-7-sonnet*", Price::new(3.0, 15.0, 0.3, 3.75)),
    ("claude-haiku-4-5*", Price::new(1.0, 5.0, 0.1, 1.25)),
    ("claude-3-5-haiku*", Price::new(0.8, 4.0, 0.08, 1.0)),
    ("gpt-4o*", Price::new(2.5, 10.0, 1.25, 2.5)),
    ("gpt-4o-mini*", Price::new(0.15, 0.6, 0.075, 0.15)),
    ("gpt-4.1*", Price::new(2.0, 8.0, 0.5, 2.0)),
    ("gpt-4.1-mini*", Price::new(0.4, 1.6, 0.1, 0.4)),
    ("gpt-4.1-nano*", Price::new(0.1, 0.4, 0.025, 0.1)),
    ("gpt-5*", Price::new(1.25, 10.0, 0.125, 1.25)),
    ("gpt-5-mini*", Price::new(0.25, 2.0, 0.025, 0.25)),
    ("gpt-5-nano*", Price::new(0.05, 0.4, 0.005, 0.05)),
    ("o3*", Price::new(2.0, 8.0, 0.5, 2.0)),
    ("o4-mini*", Price::new(1.1, 4.4, 0.275, 1.1)),
];

/// Model name patterns to prices.
#[derive(Debug, Clone)]
pub struct PriceTable {
    entries: BTreeMap<String, Price>,
}

impl PriceTable {
    /// The built-in table with `overrides` on top.
    pub fn new(overrides: &BTreeMap<String, Price>) -> PriceTable {
        let mut entries: BTreeMap<String, Price> =
            BUILTIN.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect();
        entries.extend(overrides.iter().map(|(k, v)| (k.clone(), *v)));
        PriceTable { entries }
    }

    pub fn lookup(&self, model: &str) -> Option<Price> {
        if let Some(p) = self.entries.get(model) {
            return Some(*p);
        }
        self.entries
            .iter()
            .filter_map(|(pat, p)| {
                let prefix = pat.strip_suffix('*')?;
                model.starts_with(prefix).then_some((prefix.len(), *p))
            })
            .max_by_key(|(len, _)| *len)
            .map(|(_, p)| p)
    }
}

/// A hard limit; `None` is no limit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Budget {
    /// Input + output + cache tokens.
    pub max_tokens: Option<u64>,
    pub max_usd: Option<f64>,
}

impl Budget {
    pub fn is_unlimited(&self) -> bool {
        self.max_tokens.is_none() && self.max_usd.is_none()
    }
}

/// `llm.budget` in the configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Budgets {
    /// Everything this process (one `Llm`) spends.
    pub session: Budget,
    /// Each workflow (calls with the same `CallOptions::workflow`) on its own.
    pub workflow: Budget,
}

impl Budgets {
    pub fn limits_usd(&self) -> bool {
        self.session.max_usd.is_some() || self.workflow.max_usd.is_some()
    }
}

/// What was spent: calls, tokens and dollars.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Spend {
    pub calls: u64,
    pub usage: Usage,
    pub cost_usd: f64,
    /// Calls whose model had no price (their cost is not in `cost_usd`).
    pub unpriced_calls: u64,
}

/// Whether `spent` plus `pending` (an estimate for a call in flight) breaks
/// `budget`. Before a call `pending` is zero and reaching the limit is enough to
/// refuse; during a stream only going past it stops the stream. Returns what was
/// exceeded, for the error message.
pub fn over_budget(
    spent: &Spend,
    pending_tokens: u64,
    pending_usd: f64,
    budget: &Budget,
) -> Option<String> {
    let in_flight = pending_tokens > 0 || pending_usd > 0.0;
    if let Some(max) = budget.max_tokens {
        let t = spent.usage.total() + pending_tokens;
        if (in_flight && t > max) || (!in_flight && t >= max) {
            return Some(format!("{t} of {max} tokens"));
        }
    }
    if let Some(max) = budget.max_usd {
        let c = spent.cost_usd + pending_usd;
        if (in_flight && c > max) || (!in_flight && c >= max) {
            return Some(format!("${c:.4} of ${max:.4}"));
        }
    }
    None
}

#[derive(Debug, Default)]
struct Books {
    session: Spend,
    workflows: BTreeMap<String, Spend>,
}

/// Running totals per session and per workflow, shared by every call of an `Llm`.
///
/// Concurrent calls each check before they start and while they stream, so a
/// budget can be overrun by at most what the calls in flight spend between two
/// checks (one stream delta each).
#[derive(Debug)]
pub struct Ledger {
    budgets: Budgets,
    books: Mutex<Books>,
}

impl Ledger {
    pub fn new(budgets: Budgets) -> Ledger {
        Ledger { budgets, books: Mutex::new(Books::default()) }
    }

    pub fn budgets(&self) -> &Budgets {
        &self.budgets
    }

    /// `Err(BudgetExceeded)` when the session's or the workflow's budget is spent
    /// (with `pending` added, for a call in flight).
    pub fn check(
        &self,
        workflow: Option<&str>,
        pending_tokens: u64,
        pending_usd: f64,
    ) -> Result<(), Error> {
        let books = self.books.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(what) =
            over_budget(&books.session, pending_tokens, pending_usd, &self.budgets.session)
        {
            return Err(Error::BudgetExceeded { scope: "session".into(), what });
        }
        if let Some(w) = workflow {
            let empty = Spend::default();
            let spent = books.workflows.get(w).unwrap_or(&empty);
            if let Some(what) =
                over_budget(spent, pending_tokens, pending_usd, &self.budgets.workflow)
            {
                return Err(Error::BudgetExceeded { scope: format!("workflow {w:?}"), what });
            }
        }
        Ok(())
    }

    /// Adds one call's usage (and cost, when the model is priced).
    pub fn record(&self, workflow: Option<&str>, usage: &Usage, cost_usd: Option<f64>) {
        let mut books = self.books.lock().unwrap_or_else(|e| e.into_inner());
        let add = |s: &mut Spend| {
            s.calls += 1;
            s.usage.add(usage);
            match cost_usd {
                Some(c) => s.cost_usd += c,
                None => s.unpriced_calls += 1,
            }
        };
        add(&mut books.session);
        if let Some(w) = workflow {
            add(books.workflows.entry(w.to_owned()).or_default());
        }
    }

    pub fn session(&self) -> Spend {
        self.books.lock().unwrap_or_else(|e| e.into_inner()).session.clone()
    }

    pub fn workflow(&self, name: &str) -> Spend {
        let books = self.books.lock().unwrap_or_else(|e| e.into_inner());
        books.workflows.get(name).cloned().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn price_lookup_longest_prefix_and_overrides() {
        let mut over = BTreeMap::new();
        over.insert(
            "qwen2.5-coder*".to_owned(),
            Price { input: 0.0, output: 0.0, cache_read: None, cache_write: None },
        );
        over.insert("gpt-4o".to_owned(), Price::new(1.0, 1.0, 1.0, 1.0));
        let t = PriceTable::new(&over);
        assert_eq!(t.lookup("claude-sonnet-4-5-20250929").unwrap().input, 3.0);
        assert_eq!(t.lookup("claude-opus-4-5").unwrap().input, 5.0);
        assert_eq!(t.lookup("claude-opus-4-1-20250805").unwrap().input, 15.0);
        assert_eq!(t.lookup("gpt-4o-mini-2024-07-18").unwrap().input, 0.15);
        assert_eq!(t.lookup("gpt-4o").unwrap().input, 1.0, "exact override wins");
        assert_eq!(t.lookup("gpt-4o-2024-08-06").unwrap().input, 2.5);
        assert_eq!(t.lookup("qwen2.5-coder:7b").unwrap().output, 0.0);
        assert_eq!(t.lookup("llama3"), None);
    }

    #[test]
    fn cost_counts_cache_tokens_at_their_price() {
        let p = Price::new(3.0, 15.0, 0.3, 3.75);
        let u = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_read_tokens: 1_000_000,
            cache_write_tokens: 0,
            estimated: false,
        };
        assert!((p.cost(&u) - (3.0 + 1.5 + 0.3)).abs() < 1e-9);
        let no_cache = Price { input: 2.0, output: 0.0, cache_read: None, cache_write: None };
        let u = Usage { cache_write_tokens: 500_000, ..Usage::default() };
        assert!((no_cache.cost(&u) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn budget_verdicts() {
        let spent = |tokens: u64, usd: f64| Spend {
            calls: 1,
            usage: Usage { input_tokens: tokens, ..Usage::default() },
            cost_usd: usd,
            unpriced_calls: 0,
        };
        let tok = Budget { max_tokens: Some(100), max_usd: None };
        let usd = Budget { max_tokens: None, max_usd: Some(1.0) };
        // (spent, pending tokens, pending usd, budget, exceeded?)
        let table = [
            (spent(99, 0.0), 0, 0.0, &tok, false),
            (spent(100, 0.0), 0, 0.0, &tok, true), // reached: refuse the next call
            (spent(90, 0.0), 10, 0.0, &tok, false), // in flight, exactly at the limit
            (spent(90, 0.0), 11, 0.0, &tok, true),
            (spent(0, 0.99), 0, 0.0, &usd, false),
            (spent(0, 1.0), 0, 0.0, &usd, true),
            (spent(0, 0.9), 0, 0.2, &usd, true),
            (spent(1_000_000, 0.0), 0, 0.0, &Budget::default(), false),
        ];
        for (s, pt, pu, b, want) in table {
            assert_eq!(over_budget(&s, pt, pu, b).is_some(), want, "{s:?} +{pt} +{pu} {b:?}");
        }
    }

    #[test]
    fn ledger_tracks_session_and_workflows() {
        let l = Ledger::new(Budgets {
            session: Budget::default(),
            workflow: Budget { max_tokens: Some(10), max_usd: None },
        });
        let u = Usage { input_tokens: 6, output_tokens: 4, ..Usage::default() };
        l.record(Some("wf-1"), &u, Some(0.5));
        l.record(None, &u, None);
        assert_eq!(l.session().calls, 2);
        assert_eq!(l.session().usage.total(), 20);
        assert_eq!(l.session().unpriced_calls, 1);
        assert_eq!(l.workflow("wf-1").cost_usd, 0.5);
        let err = l.check(Some("wf-1"), 0, 0.0).unwrap_err();
        assert!(err.to_string().contains("workflow \"wf-1\""), "{err}");
        assert!(l.check(Some("wf-2"), 0, 0.0).is_ok());
        assert!(l.check(None, 0, 0.0).is_ok());
    }
}
