//! The router's answer (seed 002, Layer 1, ADR-002): what a request asks for and how
//! to look for its context, decided once per request before any retrieval runs.
//! `retrieval::route` fills it in; the CLI prints it and an agent run records it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a request asks for. Task intents change the project; lookup intents and
/// explanations only read it, so they need no plan/code loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RouteIntent {
    /// Repair a defect: "the app crashes when the cart is empty".
    Fix,
    /// Add behaviour: "add a --dry-run flag".
    Feature,
    /// Change structure, not behaviour: "split utils.py into modules".
    Refactor,
    /// Describe how or why something works: "explain how login works".
    Explain,
    /// Write or extend tests: "add unit tests for Money".
    Test,
    /// Find a named definition or its references: "find calculate_total".
    SymbolLookup,
    /// Follow calls or data: "who calls send_invoice?".
    FlowLookup,
    /// Find where an idea in words lives: "where is authentication handled?".
    ConceptLookup,
}

impl RouteIntent {
    pub const ALL: [RouteIntent; 8] = [
        RouteIntent::Fix,
        RouteIntent::Feature,
        RouteIntent::Refactor,
        RouteIntent::Explain,
        RouteIntent::Test,
        RouteIntent::SymbolLookup,
        RouteIntent::FlowLookup,
        RouteIntent::ConceptLookup,
    ];

    /// The wire name (`symbol_lookup`).
    pub fn as_str(self) -> &'static str {
        match self {
            RouteIntent::Fix => "fix",
            RouteIntent::Feature => "feature",
            RouteIntent::Refactor => "refactor",
            RouteIntent::Explain => "explain",
            RouteIntent::Test => "test",
            RouteIntent::SymbolLookup => "symbol_lookup",
            RouteIntent::FlowLookup => "flow_lookup",
            RouteIntent::ConceptLookup => "concept_lookup",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<RouteIntent> {
        RouteIntent::ALL.into_iter().find(|intent| intent.as_str() == name)
    }

    /// Whether answering changes the project (and so needs a plan, code and
    /// validation); explanations and lookups are answered from the index alone.
    pub fn needs_change(self) -> bool {
        matches!(
            self,
            RouteIntent::Fix | RouteIntent::Feature | RouteIntent::Refactor | RouteIntent::Test
        )
    }

    pub fn is_lookup(self) -> bool {
        matches!(
            self,
            RouteIntent::SymbolLookup | RouteIntent::FlowLookup | RouteIntent::ConceptLookup
        )
    }
}

/// One retriever of the strategy path, cheapest first in the order ADR-002 drops them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Strategy {
    /// The name index: exact, prefix and fuzzy definition names.
    Symbol,
    /// BM25 over chunks and paths.
    Lexical,
    /// Call-graph and import neighbours of the first hits.
    Graph,
    /// Embeddings (needs the caller's model; the slowest).
    Vector,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Symbol => "symbol",
            Strategy::Lexical => "lexical",
            Strategy::Graph => "graph",
            Strategy::Vector => "vector",
        }
    }
}

/// What the caller can spend on finding context for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RouteBudget {
    /// Wall-clock time for retrieval, in milliseconds.
    pub latency_ms: u64,
    /// Tokens of context the answer may carry.
    pub tokens: u64,
}

impl Default for RouteBudget {
    /// The seed's `route(user_request, budget_ms=5000)` and the 10K-token context of
    /// its "Explain how user login works" target.
    fn default() -> Self {
        RouteBudget { latency_ms: 5000, tokens: 10_000 }
    }
}

/// The router's decision for one request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Route {
    pub intent: RouteIntent,
    /// `intent.needs_change()`: false means answer without the plan/code loop.
    pub needs_change: bool,
    /// Retrievers to run, most useful first; never empty.
    pub strategies: Vec<Strategy>,
    /// How many results to gather, fitted to the budget.
    pub top_k: u32,
    pub budget: RouteBudget,
    /// The cues that decided the intent, as found in the request (for `--json`
    /// and for judging a wrong route).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cues: Vec<String>,
}
