//! The router (seed 002, Layer 1, ADR-002): what a request asks for, decided once,
//! by rules, before any retrieval runs.
//!
//! A pure function of the text and a budget. The intent comes from weighted cue
//! words, English and Korean; a cue is a whole word (`add`), a word prefix (`fix*`:
//! `fixes`, `fixing`), a phrase (`who calls`), or, for Korean, a substring: Korean
//! attaches particles and endings to stems (`고쳐줘`, `버그가`), so a stem found
//! anywhere is the word. The highest total wins; ties go to the more specific intent
//! (`TIE_ORDER`). A request with no cue at all is routed to a read-only intent: a
//! wrong lookup costs a search, a wrong task costs a plan the human must reject.
//!
//! The strategy path and top-k follow from the intent and the request's shape (does
//! it name code? a stack trace?), then are cut to the budget: under 500 ms one cheap
//! retriever, under 3 s no embeddings (ADR-002: "< 500ms: symbol만, >= 3s: 모든
//! 전략"), and no more results than the token budget can carry.
//!
//! Measured on `test_data/router_*.tsv` (the held-out half written before the rules);
//! see docs/BENCHMARKS.md.

pub use protocol::{Route, RouteBudget, RouteIntent, Strategy};

use crate::querytype::{QueryKind, analyze_query};

type Cues = &'static [(&'static str, u32)];

// Explicit repair verbs weigh 3, symptoms 2: "why does it crash? fix it" is a fix,
// "why do we store timestamps as strings?" an explanation.
const FIX: Cues = &[
    ("fix*", 3),
    ("repair*", 3),
    ("resolve", 3),
    ("correct", 3),
    ("bug*", 2),
    ("crash*", 2),
    ("error*", 2),
    ("exception*", 2),
    ("panic*", 2),
    ("broken", 2),
    ("fail*", 2),
    ("wrong", 2),
    ("incorrect*", 2),
    ("leak*", 2),
    ("deadlock*", 2),
    ("hang*", 2),
    ("doesn't work", 2),
    ("not working", 2),
    ("silently", 1),
    ("고쳐", 3),
    ("고치", 3),
    ("수정", 3),
    ("해결", 3),
    ("바로잡", 3),
    ("버그", 2),
    ("오류", 2),
    ("에러", 2),
    ("예외", 2),
    ("크래시", 2),
    ("실패", 2),
    ("안 돼", 2),
    ("안돼", 2),
    ("안 되", 2),
    ("깨져", 2),
    ("깨지", 2),
    ("잘못", 2),
    ("누수", 2),
    ("데드락", 2),
    ("터지", 2),
    ("발생", 1),
    ("문제", 2),
    ("잡아", 1),
];

const FEATURE: Cues = &[
    ("implement*", 3),
    ("add", 2),
    ("adding", 2),
    ("support", 2),
    ("create", 2),
    ("introduce", 2),
    ("build a", 2),
    ("build an", 2),
    ("we need", 2),
    ("let users", 2),
    ("allow*", 2),
    ("make it possible", 2),
    ("new", 1),
    ("i'd like", 1),
    ("i want", 1),
    ("추가", 3),
    ("구현", 3),
    ("만들", 2),
    ("지원", 2),
    ("넣", 2),
    ("도입", 2),
    ("개발", 2),
    ("수 있게", 2),
    ("하도록", 1),
    ("기능", 1),
];

const REFACTOR: Cues = &[
    ("refactor*", 3),
    ("rename*", 3),
    ("extract*", 3),
    ("split", 3),
    ("clean up", 3),
    ("cleanup", 3),
    ("tidy", 3),
    ("simplif*", 3),
    ("restructur*", 3),
    ("reorganiz*", 3),
    ("dedup*", 3),
    ("dead code", 3),
    ("no behaviour change", 3),
    ("no behavior change", 3),
    ("duplicat*", 2),
    ("move", 2),
    ("convert", 2),
    ("inline", 2),
    ("replace", 1),
    ("리팩터", 3),
    ("리팩토링", 3),
    ("정리", 3),
    ("분리", 3),
    ("추출", 3),
    ("쪼개", 3),
    ("구조 개선", 3),
    ("이름 바꿔", 3),
    ("이름을 바꿔", 3),
    ("이름 변경", 3),
    ("동작은 그대로", 3),
    ("중복", 2),
    ("옮겨", 2),
    ("합쳐", 2),
    ("빼내", 2),
    ("단순", 2),
    ("바꿔", 1),
    ("제거", 1),
];

const EXPLAIN: Cues = &[
    ("explain*", 3),
    ("describe", 3),
    ("walk me through", 3),
    ("overview", 3),
    ("understand", 3),
    ("what does", 2),
    ("what is", 2),
    ("what's", 2),
    ("why", 2),
    ("how does", 2),
    ("how do", 2),
    ("how is", 2),
    ("how are", 2),
    ("purpose", 2),
    ("difference between", 2),
    ("설명", 3),
    ("이해", 3),
    ("개략", 3),
    ("어떻게", 2),
    ("왜", 2),
    ("무슨", 2),
    ("뭐", 2),
    ("뭔지", 2),
    ("역할", 2),
    ("용도", 2),
    ("차이", 2),
    ("알려", 1),
];

// Test intent needs a test word *and* a verb that writes one: "tests fail on
// Windows" is a fix, "add a regression test for the bug" a test.
const TEST_NOUN: Cues =
    &[("test*", 1), ("pytest", 1), ("unittest*", 1), ("spec*", 1), ("테스트", 1)];
const TEST_WRITE: Cues = &[
    ("write", 4),
    ("add", 4),
    ("create", 4),
    ("generate", 4),
    ("coverage", 4),
    ("작성", 4),
    ("추가", 4),
    ("만들", 4),
    ("넣", 4),
    ("커버리지", 4),
    ("짜", 4),
];

const FLOW: Cues = &[
    ("call", 2),
    ("calls", 2),
    ("called", 2),
    ("callers", 3),
    ("call chain", 3),
    ("call graph", 3),
    ("trace", 2),
    ("flow", 3),
    ("path from", 3),
    ("what happens", 2),
    ("호출", 3),
    ("흐름", 3),
    ("추적", 3),
    ("따라가", 3),
    ("호출 경로", 3),
];

const LOOKUP: Cues = &[
    ("find", 2),
    ("where", 2),
    ("locate", 3),
    ("go to", 2),
    ("definition", 2),
    ("defined", 2),
    ("references", 2),
    ("which file", 2),
    ("which files", 2),
    ("which module", 2),
    ("responsible for", 1),
    ("look up", 2),
    ("show", 1),
    ("list", 1),
    ("찾아", 2),
    ("어디", 2),
    ("위치", 2),
    ("정의", 2),
    ("참조", 2),
    ("하는 곳", 1),
    ("담당", 1),
    ("보여", 1),
    ("목록", 1),
];

/// Ties go to the more specific intent: a test request says "add", a fix says
/// "where", an explanation is the most general reading of a question.
/// Openings that make a request a question whatever words follow: "Explain how
/// expression simplification works" asks for an explanation although
/// "simplif*" is a refactor cue. As the request's first words they take one
/// strong cue's weight from each change slot (fix, feature, refactor, test);
/// which question it is, the cues decide as before. ("Why" and "find" are not
/// openings: "why does it crash? fix it" and "find and fix the leak" are
/// changes.)
const LEADS: &[&str] = &[
    "explain",
    "describe",
    "walk me through",
    "how does",
    "how do",
    "what does",
    "what is",
    "where is",
    "where are",
    "where do",
    "who calls",
];

const TIE_ORDER: [Slot; 7] =
    [Slot::Test, Slot::Fix, Slot::Refactor, Slot::Feature, Slot::Flow, Slot::Lookup, Slot::Explain];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Test,
    Fix,
    Refactor,
    Feature,
    Flow,
    Lookup,
    Explain,
}

/// The approximate tokens one retrieved chunk costs; top-k never asks for more
/// chunks than the token budget holds.
pub const TOKENS_PER_CHUNK: u64 = 400;

/// Routes a request within the default budget (5 s, 10K tokens).
pub fn route(request: &str) -> Route {
    route_with_budget(request, RouteBudget::default())
}

/// Routes a request within `budget`: its intent, whether it changes the project,
/// the retrievers to run and how many results to gather.
pub fn route_with_budget(request: &str, budget: RouteBudget) -> Route {
    // Only the head of a pasted log says what the request is; the rest would cost
    // time for nothing (the router's target is under 5 ms).
    let request = head_bytes(request, 4096);
    let text = Text::new(request);
    let features = analyze_query(request);
    let names_code =
        features.identifiers.iter().any(|m| m.strength >= 1.0) || !features.paths.is_empty();
    let error_trace = features.kind == QueryKind::ErrorTrace;

    let score = |slot: Slot, found: &mut Vec<String>| -> u32 {
        match slot {
            Slot::Fix => {
                let mut total = text.score(FIX, found);
                if error_trace {
                    // A pasted error or stack trace with nothing else is a report.
                    total += 3;
                    found.push("(error trace)".to_string());
                }
                total
            }
            Slot::Feature => text.score(FEATURE, found),
            Slot::Refactor => text.score(REFACTOR, found),
            Slot::Explain => text.score(EXPLAIN, found),
            Slot::Test => {
                if text.score(TEST_NOUN, found) == 0 {
                    return 0;
                }
                let total = text.score(TEST_WRITE, found);
                if total == 0 {
                    found.clear();
                }
                total
            }
            Slot::Flow => text.score(FLOW, found),
            // A flow cue is also a lookup cue: "who calls X?" looks something up.
            Slot::Lookup => text.score(LOOKUP, found) + text.score(FLOW, found),
        }
    };
    let lead = LEADS.iter().find(|phrase| text.spaced.starts_with(&format!(" {phrase} ")));
    let mut best = (Slot::Explain, 0, Vec::new());
    let mut flow = 0;
    for slot in TIE_ORDER {
        let mut found = Vec::new();
        let mut n = score(slot, &mut found);
        if lead.is_some() && matches!(slot, Slot::Fix | Slot::Feature | Slot::Refactor | Slot::Test)
        {
            n = n.saturating_sub(3);
        }
        if slot == Slot::Flow {
            flow = n;
        }
        if n > best.1 {
            best = (slot, n, found);
        }
    }
    let (best, best_score, mut cues) = best;

    let intent = match best {
        _ if best_score == 0 => {
            if names_code && text.words.len() <= 4 {
                RouteIntent::SymbolLookup
            } else if request.trim_end().ends_with('?') {
                RouteIntent::Explain
            } else {
                RouteIntent::ConceptLookup
            }
        }
        Slot::Test => RouteIntent::Test,
        Slot::Fix => RouteIntent::Fix,
        Slot::Refactor => RouteIntent::Refactor,
        Slot::Feature => RouteIntent::Feature,
        Slot::Explain => RouteIntent::Explain,
        Slot::Flow | Slot::Lookup if flow > 0 => RouteIntent::FlowLookup,
        Slot::Flow | Slot::Lookup if names_code => RouteIntent::SymbolLookup,
        Slot::Flow | Slot::Lookup => RouteIntent::ConceptLookup,
    };

    let strong_names = features.identifiers.iter().filter(|m| m.strength >= 1.0).count();
    let strategies = strategies(intent, names_code || error_trace, budget);
    let top_k = top_k(intent, strong_names, text.words.len(), budget);
    cues.dedup();
    Route { intent, needs_change: intent.needs_change(), strategies, top_k, budget, cues }
}

/// The retrievers for an intent, most useful first, cut to the latency budget.
fn strategies(intent: RouteIntent, names_code: bool, budget: RouteBudget) -> Vec<Strategy> {
    use Strategy::{Graph, Lexical, Symbol, Vector};
    let path: &[Strategy] = match intent {
        RouteIntent::SymbolLookup => &[Symbol, Lexical],
        RouteIntent::FlowLookup if names_code => &[Symbol, Graph, Lexical],
        RouteIntent::FlowLookup => &[Lexical, Graph, Symbol],
        RouteIntent::ConceptLookup => &[Lexical, Vector, Graph],
        // Definitions and their callers are what a change touches.
        RouteIntent::Refactor | RouteIntent::Test => &[Symbol, Graph, Lexical],
        RouteIntent::Fix | RouteIntent::Explain if names_code => &[Symbol, Lexical, Graph, Vector],
        RouteIntent::Fix | RouteIntent::Explain => &[Lexical, Vector, Symbol, Graph],
        // New behaviour has no name yet: words and meaning find where it goes.
        _ => &[Lexical, Vector, Symbol, Graph],
    };
    if budget.latency_ms < 500 {
        // One cheap retriever: the first name or word index on the path.
        let first = path.iter().copied().find(|s| matches!(s, Symbol | Lexical));
        return vec![first.unwrap_or(Lexical)];
    }
    path.iter().copied().filter(|s| *s != Vector || budget.latency_ms >= 3000).collect()
}

/// How many results to gather: by intent (a symbol has one definition, a refactor
/// touches every caller), more for each further name and for long requests, at most
/// what the token budget carries.
fn top_k(intent: RouteIntent, strong_names: usize, words: usize, budget: RouteBudget) -> u32 {
    let base: u32 = match intent {
        RouteIntent::SymbolLookup => 5,
        RouteIntent::FlowLookup | RouteIntent::ConceptLookup => 10,
        RouteIntent::Fix | RouteIntent::Test => 10,
        RouteIntent::Explain => 12,
        RouteIntent::Feature => 15,
        _ => 20,
    };
    let names = (strong_names.saturating_sub(1) as u32 * 2).min(10);
    let long = if words > 40 { 5 } else { 0 };
    let mut k = base + names + long;
    if budget.latency_ms < 500 {
        k = k.min(5);
    }
    let affordable = (budget.tokens / TOKENS_PER_CHUNK).max(1);
    k.min(u32::try_from(affordable).unwrap_or(u32::MAX)).max(1)
}

/// The first `max` bytes of `text`, cut at a character boundary.
fn head_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The request lowered, as words and as one spaced string for phrases.
struct Text {
    lower: String,
    words: Vec<String>,
    /// `" word word "`: a phrase cue matches at word boundaries.
    spaced: String,
}

impl Text {
    fn new(request: &str) -> Text {
        let lower = request.to_lowercase();
        let words: Vec<String> = lower
            .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '_'))
            .filter(|w| !w.is_empty())
            .map(|w| w.trim_matches('\'').to_string())
            .collect();
        let spaced = format!(" {} ", words.join(" "));
        Text { lower, words, spaced }
    }

    fn has(&self, cue: &str) -> bool {
        if !cue.is_ascii() {
            return self.lower.contains(cue);
        }
        if let Some(stem) = cue.strip_suffix('*') {
            return self.words.iter().any(|w| w.starts_with(stem));
        }
        if cue.contains(' ') {
            return self.spaced.contains(&format!(" {cue} "));
        }
        self.words.iter().any(|w| w == cue)
    }

    /// The sum of the weights of the cues found; their names go to `found`.
    fn score(&self, cues: Cues, found: &mut Vec<String>) -> u32 {
        let mut total = 0;
        for &(cue, weight) in cues {
            if self.has(cue) {
                total += weight;
                found.push(cue.trim_end_matches('*').to_string());
            }
        }
        total
    }
}

#[cfg(test)]
mod tests;
