//! Which files matter for a request: file-level localization without a model.
//!
//! Signals, each a score per file with the evidence behind it:
//!
//! - **frames and paths**: files a stack trace or the text names (by path suffix);
//!   a file counts by its frame nearest the fault, not by how many frames pass
//!   through it;
//! - **definitions**: files defining identifiers the text mentions, weighed by how
//!   code-like the mention is and how rare the name is in the project (a method
//!   called on a variable named after a class, `expr.atoms()`, is the one that
//!   class has or inherits);
//! - **literals**: files containing quoted messages, `--options` or backticked
//!   `kebab-case` names (option and message ids) verbatim;
//! - **stems**: files the title or body names by file name (`junitxml` for
//!   `junitxml.py`), unless the title only uses the name as a variable's
//!   (`expr.atoms()`, where `expr.py` has no `atoms`);
//! - **text**: BM25 over symbol-level chunks (the best chunk of each file);
//! - **graph**: personalized PageRank restarted at the files the other signals
//!   found, so their close dependencies and dependents rise too;
//! - **centrality**: the global file PageRank, as a small prior.
//!
//! The signals are fused by weighted reciprocal rank (`Σ w / (K + rank)`, K = 10):
//! each signal votes with its ranking of the files, not its raw score, because raw
//! scores (a BM25 value, a PageRank mass, a count of matching definitions) are not
//! comparable across signals or across queries, and a linear model fitted over
//! them generalized worse to held-out repositories (docs/BENCHMARKS.md,
//! "Localization"). The fused score is multiplied by a prior on the file's role:
//! tests, docs, examples, vendored and generated code, and modules of nothing but
//! exception classes are rarely where a change belongs. No rule names a project; everything is a function of the text and the
//! index.

use std::{
    collections::{HashMap, HashSet},
    path::Path,
};

use code_graph::{Snapshot, is_generated, is_test_path, is_vendored, pagerank, vendored_files};

use code_index::{FileId, Language, Result, import_names};
use rayon::prelude::*;

use crate::{
    fusion,
    hybrid::Retriever,
    querytype::{QueryFeatures, analyze_query},
    search::SearchIndex,
};
pub use protocol::{Evidence, FileResult};

/// The features of a candidate file, in this order (see [`FEATURES`]).
pub const NF: usize = 25;

/// Feature names, as `--explain` shows them and the weights are keyed.
pub const FEATURES: [&str; NF] = [
    "text",        // best BM25 chunk of the file for the whole text (0..1 of the best file)
    "text_rr",     // 1 / rank of the file in the BM25 file ranking
    "text_sum",    // sum of the file's three best chunks (0..1 of the best file)
    "title_text",  // best BM25 chunk for the first line (the title) alone
    "code_text",   // best BM25 chunk for the code identifiers alone
    "def",         // defines identifiers the text mentions (rarity-weighted, saturated)
    "literal",     // contains quoted strings, options or message ids of the text
    "code_string", // one of its string literals appears verbatim in the text
    "frame",       // a stack frame points into it
    "path",        // the text names it (path or dotted module)
    "stem_title",  // the title names it (its file name without extension, or as two words)
    "stem_body",   // the body names it
    "graph",       // personalized PageRank from files the direct signals found
    "central",     // global PageRank (0..1 of the most central file)
    "size",        // log of its line count (0..1 of the largest file)
    "init",        // it is a package's __init__
    "role", // 1 for source, 0.35 for tests, 0.5 for docs, examples, generated, exception-only; 0.1 vendored
    "title_rr", // 1 / rank of the file by title_text
    "code_rr", // 1 / rank of the file by code_text
    "def_rr", // 1 / rank of the file by def
    "graph_rr", // 1 / rank of the file by graph
    "sum_rr", // 1 / rank of the file by text_sum
    "file_text", // whole-file BM25 for the whole text (0..1 of the best file)
    "tested", // best text score of the test files named after it (test_foo.py → foo.py)
    "impl", // holds methods of a type the text mentions, outside its body (Rust impl, Go receivers, C++ Foo::f)
];

/// Each signal's vote in the reciprocal-rank fusion; `role` (> 0) turns the role
/// prior on. Equal votes for the eleven direct signals, except a stack frame, which
/// is direct evidence and votes twice (neutral on the development set, decisive on
/// a traceback whose title names an outer function). The choices made on the
/// development set were which signals vote and K (see docs/BENCHMARKS.md,
/// "Localization", for the ablations and the linear model it replaced).
#[rustfmt::skip]
pub const DEFAULT_WEIGHTS: [f64; NF] = [
    // text text_rr text_sum title_text code_text def literal code_string frame path
    1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 1.0,
    // stem_title stem_body graph central size init role
    1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0,
    // title_rr code_rr def_rr graph_rr sum_rr file_text tested impl
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
];

/// The fusion's K: how much the top ranks dominate (smaller = more; `fusion`
/// says why 10 here and 60 in `hybrid_search`).
const RRF_K: f64 = 10.0;

/// Weights for an experiment: `text=1,def=0.5` over the defaults, or
/// `only=text+def` to zero every other feature.
pub fn parse_weights(spec: &str) -> std::result::Result<[f64; NF], String> {
    let mut w = DEFAULT_WEIGHTS;
    let index = |name: &str| {
        FEATURES.iter().position(|f| *f == name).ok_or_else(|| format!("unknown feature {name:?}"))
    };
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (key, value) =
            item.split_once('=').ok_or_else(|| format!("expected key=value, got {item:?}"))?;
        if key == "only" {
            let keep = w;
            w = [0.0; NF];
            for name in value.split('+') {
                let i = index(name)?;
                w[i] = keep[i];
            }
            w[index("role")?] = keep[index("role")?];
            continue;
        }
        w[index(key)?] = value.parse().map_err(|_| format!("not a number: {value:?}"))?;
    }
    Ok(w)
}

/// How [`localize`] runs.
#[derive(Clone, Default)]
pub struct LocalizeOptions<'a> {
    pub k: usize,
    /// Override of [`DEFAULT_WEIGHTS`] (`parse_weights` syntax).
    pub weights: Option<String>,
    /// Include each file's feature values in the result.
    pub explain: bool,
    /// A retriever of another kind (embeddings), fused with the ranking the
    /// signals make as one more vote (see [`fuse_extra`]).
    pub extra: Option<&'a dyn Retriever>,
    /// The weight of that vote against the signals' (1); `None`: 1.
    pub extra_weight: Option<f64>,
}

impl std::fmt::Debug for LocalizeOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalizeOptions")
            .field("k", &self.k)
            .field("weights", &self.weights)
            .field("explain", &self.explain)
            .field("extra", &self.extra.map(Retriever::name))
            .field("extra_weight", &self.extra_weight)
            .finish()
    }
}

/// The role of a file, from its path: tests, docs, examples and vendored
/// third-party code are rarely where a change belongs. (Generated code, known by
/// its header rather than its path, gets the docs prior in [`features`].)
pub(crate) fn role_prior(path: &str) -> f64 {
    if is_test_path(path) {
        0.35
    } else if is_aside(path) {
        ASIDE
    } else {
        1.0
    }
}

/// The prior of docs, examples, vendored and generated code.
const ASIDE: f64 = 0.5;

/// The prior of code copied in from elsewhere ([`vendored_files`]), in the
/// fusion's last step only (the literal signal spreads over files at their
/// [`role_prior`]): no gold file of the 816 instances of the development sets
/// is vendored, and a large `vendor/` tree (lazygit's Go modules) matched a
/// vague title by its size into the first five at [`ASIDE`]. Lowering it moves
/// only vendored files, down.
const VENDORED: f64 = 0.1;

/// Docs, examples, benchmarks, release scripts, and code copied in from elsewhere
/// ([`is_vendored`]: `extern/`, `vendor/`, `third_party/`): a bundled jQuery
/// matches an issue's words by its sheer size, and a fix goes upstream, not into
/// the copy.
fn is_aside(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    is_vendored(path)
        || lower.rsplit('/').skip(1).any(|d| {
            // (`AutoMapperSamples/`, `fmt-examples/`: a project's samples by its name.)
            d.ends_with("samples")
                || d.ends_with("examples")
                || matches!(
                    d,
                    "doc"
                        | "docs"
                        | "example"
                        | "examples"
                        | "benchmarks"
                        | "bench"
                        | "release"
                        | "demo"
                        | "demos"
                        | "samples"
                )
        })
}

/// Ranks the project's files for `query`; the best `opts.k`, with evidence.
pub fn localize(
    snapshot: &Snapshot,
    search: &SearchIndex,
    root: &Path,
    query: &str,
    opts: &LocalizeOptions<'_>,
) -> Result<Vec<FileResult>> {
    crate::querytype::check_query_size(query)?;
    let weights = match &opts.weights {
        Some(spec) => parse_weights(spec).map_err(code_index::Error::InvalidArgument)?,
        None => DEFAULT_WEIGHTS,
    };
    let (table, mut evidence) = features(snapshot, search, root, query)?;
    let role = FEATURES.iter().position(|f| *f == "role").expect("role feature");
    let ranks: Vec<Vec<u32>> = (0..NF)
        .map(|i| {
            if i == role || weights[i] == 0.0 {
                return Vec::new();
            }
            competition_ranks(&table.iter().map(|x| x[i]).collect::<Vec<_>>())
        })
        .collect();
    let mut results: Vec<FileResult> = table
        .iter()
        .enumerate()
        .filter_map(|(f, x)| {
            let fused: f64 = (0..NF)
                .filter(|&i| !ranks[i].is_empty() && ranks[i][f] > 0)
                .map(|i| fusion::vote(RRF_K, ranks[i][f], weights[i]))
                .sum();
            if fused <= 0.0 {
                return None;
            }
            // The role multiplies: a test that matches well still ranks below the
            // source it tests.
            let prior = if weights[role] > 0.0 { x[role] } else { 1.0 };
            Some(FileResult {
                path: snapshot.project.files[f].path.clone(),
                score: fused * prior,
                evidence: std::mem::take(&mut evidence[f]),
                features: opts.explain.then(|| {
                    FEATURES.iter().map(|f| (*f).to_owned()).zip(x.iter().copied()).collect()
                }),
            })
        })
        .collect();
    results.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.path.cmp(&b.path)));
    if let Some(extra) = opts.extra {
        // The same role prior weighs the extra vote: a general-purpose embedding
        // model finds a test's words as close to the request as the code's.
        let priors: Vec<f64> = table.iter().map(|x| x[role]).collect();
        let w = opts.extra_weight.unwrap_or(EXTRA_WEIGHT);
        results = fuse_extra(snapshot, query, results, extra, w, &priors)?;
    }
    results.truncate(opts.k);
    Ok(results)
}

/// One piece of evidence in words, as every driver shows it (`ironbees localize`,
/// the understand and navigate pillars): what the request said and where the
/// file answers it.
pub fn describe_evidence(e: &Evidence) -> String {
    match e {
        Evidence::Frame { line, function } => format!(
            "stack frame{}{}",
            line.map(|l| format!(" line {l}")).unwrap_or_default(),
            function.as_deref().map(|f| format!(" in {f}")).unwrap_or_default()
        ),
        Evidence::PathMentioned { text } => format!("named in the request as {text}"),
        Evidence::Defines { symbol, line, mention } => {
            format!("defines {symbol} (line {line}) for `{mention}`")
        }
        Evidence::Literal { text, line } => format!("contains {text:?} (line {line})"),
        Evidence::Text { symbol, line, score } => {
            format!("text matches {symbol} (line {line}, bm25 {score:.1})")
        }
        Evidence::Graph { near } => format!("close to {near}"),
        Evidence::Similar { retriever, symbol, line, rank } if symbol.is_empty() => {
            format!("{retriever} #{rank}: the file's top level (line {line})")
        }
        Evidence::Similar { retriever, symbol, line, rank } => {
            format!("{retriever} #{rank}: {symbol} (line {line})")
        }
        Evidence::Picked { model, rank } => format!("{model} picked it #{rank}"),
        // Evidence is `#[non_exhaustive]`: a new kind shows nothing until it has words.
        _ => String::new(),
    }
}

/// How many of the signals' files, and of the extra retriever's, vote in
/// [`fuse_extra`]; the weight of the extra vote. These are what
/// `scripts/bench_localize.py --fuse-peer` measured with an embedding
/// retriever's rankings (docs/BENCHMARKS.md, "Held-out repositories").
const OURS_DEPTH: usize = 20;
const EXTRA_DEPTH: usize = 50;
const EXTRA_WEIGHT: f64 = 1.0;
/// Definitions asked of the extra retriever: enough to reach `EXTRA_DEPTH` files
/// when a few files hold many near definitions.
const EXTRA_ITEMS: usize = 500;
/// The request text an embedding sees, at most: the title and the first
/// paragraphs say what the issue is about, and embedding models refuse inputs
/// past their context (8k tokens for OpenAI's, 2k for many local ones).
const EXTRA_QUERY_CHARS: usize = 6000;

/// Reciprocal-rank fusion of the signals' file ranking (its first
/// [`OURS_DEPTH`]) with the extra retriever's (files in order of their best
/// item, the first [`EXTRA_DEPTH`]): `1 / (K + rank) + prior * w / (K + rank')`,
/// where `prior` is the file's role prior (`priors`, by file id), which the
/// signals' score already carries.
/// A second stage rather than one more signal inside the first: measured as a
/// whole-ranking vote, an embedding retriever added ~8 Acc@5 on held-out
/// repositories; as one of a dozen signals it would be outvoted by the lexical
/// ones that agree with each other. Files neither ranking reaches keep their
/// order after the fused ones.
fn fuse_extra(
    snapshot: &Snapshot,
    query: &str,
    mut ours: Vec<FileResult>,
    extra: &dyn Retriever,
    weight: f64,
    priors: &[f64],
) -> Result<Vec<FileResult>> {
    let project = &snapshot.project;
    let mut text = crate::querytype::clean(query);
    text.truncate(text.floor_char_boundary(EXTRA_QUERY_CHARS));
    let items = extra.retrieve(snapshot, &text, &analyze_query(&text), EXTRA_ITEMS)?;
    // Each file's rank by its best item, and that item as evidence.
    let mut dense: HashMap<FileId, (u32, Evidence)> = HashMap::new();
    for item in items {
        if dense.len() >= EXTRA_DEPTH {
            break;
        }
        let (file, symbol, line) = match item {
            crate::hybrid::Item::Def(d) => {
                let def = project.def(d);
                (d.file, def.qualified_name.clone(), def.line)
            }
            crate::hybrid::Item::File(f) => (f, String::new(), 1),
        };
        let rank = dense.len() as u32 + 1;
        dense.entry(file).or_insert_with(|| {
            (rank, Evidence::Similar { retriever: extra.name().to_owned(), symbol, line, rank })
        });
    }
    let vote = |rank: u32, w: f64| fusion::vote(RRF_K, rank, w);
    let prior = |id: FileId| priors.get(id as usize).copied().unwrap_or(1.0);
    for (i, r) in ours.iter_mut().enumerate() {
        let ours_vote = if i < OURS_DEPTH { vote(i as u32 + 1, 1.0) } else { 0.0 };
        let id = project.file_id(&r.path);
        let extra_vote = match id.and_then(|id| dense.remove(&id).map(|d| (id, d))) {
            Some((id, (rank, ev))) => {
                r.evidence.push(ev);
                prior(id) * vote(rank, weight)
            }
            None => 0.0,
        };
        r.score = ours_vote + extra_vote;
    }
    // Files only the extra retriever found, in its order (so that equal votes
    // tie the same way on every run).
    let mut only_extra: Vec<_> = dense.into_iter().collect();
    only_extra.sort_by_key(|(_, (rank, _))| *rank);
    for (id, (rank, ev)) in only_extra {
        ours.push(FileResult {
            path: project.files[id as usize].path.clone(),
            score: prior(id) * vote(rank, weight),
            evidence: vec![ev],
            features: None,
        });
    }
    // Stable: the files with no vote (score 0) keep the signals' order.
    ours.sort_by(|a, b| b.score.total_cmp(&a.score));
    Ok(ours)
}

/// How many of the signals' first files a model is shown to rerank, and its
/// pick's weight against the signals' ranking (which votes 1).
pub const RERANK_CANDIDATES: usize = 10;
pub const RERANK_WEIGHT: f64 = 0.3;

/// The signals' ranking with a model's picks among its first `candidates` files
/// fused in: `1 / (K + rank) + weight / (K + pick)`, the second term for the files
/// the model picked (`pick` its 1-based order). Only the candidates take part and
/// the rest keep their order behind them: the model reorders what the signals
/// found, it cannot bring in a file they did not rank (a path it makes up is
/// dropped), and with `weight` well below the signals' 1 a poor model's first
/// pick rises over the signals' first file only from the first few places (with
/// K = 10 and weight 0.3, from the fifth at most; with 0.5 it would from the
/// eleventh).
pub fn fuse_picks(
    mut ours: Vec<FileResult>,
    candidates: usize,
    picks: &[String],
    model: &str,
    weight: f64,
) -> Vec<FileResult> {
    let n = candidates.min(ours.len());
    for (i, r) in ours.iter_mut().enumerate().take(n) {
        r.score = fusion::vote(RRF_K, i as u32 + 1, 1.0);
        if let Some(p) = picks.iter().position(|p| *p == r.path) {
            let rank = p as u32 + 1;
            r.score += fusion::vote(RRF_K, rank, weight);
            r.evidence.insert(0, Evidence::Picked { model: model.to_owned(), rank });
        }
    }
    // Stable: ties keep the signals' order.
    ours[..n].sort_by(|a, b| b.score.total_cmp(&a.score));
    ours
}

type Table = Vec<[f64; NF]>;

/// Every feature of every file, with the evidence behind them.
fn features(
    snapshot: &Snapshot,
    search: &SearchIndex,
    root: &Path,
    query: &str,
) -> Result<(Table, Vec<Vec<Evidence>>)> {
    let q = analyze_query(query);
    let cleaned = crate::querytype::clean(query);
    let project = &snapshot.project;
    let n = project.files.len();
    let mut s = Signals::new(n);

    path_signal(snapshot, &q, &mut s);
    let imported = imported_names(snapshot, &cleaned);
    // The text's words, once for the three signals that look words up.
    let text_words = word_set(&cleaned);
    definition_signal(snapshot, &q, &imported, &text_words, &mut s);
    content_signals(snapshot, root, &q, &cleaned, &text_words, &mut s);
    stem_signals(snapshot, &cleaned, &text_words, &mut s);

    // BM25 over chunks: the whole text, the title, the code identifiers.
    let title = cleaned.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let code: Vec<&str> =
        q.identifiers.iter().filter(|m| m.strength >= 1.0).map(|m| m.text.as_str()).collect();
    let text_hits = search.search_issue(&cleaned, 400, 160)?;
    file_text_scores(
        snapshot,
        &text_hits,
        &mut s.text,
        Some(&mut s.text_sum),
        Some(&mut s.evidence),
    );
    s.text_rr = reciprocal_ranks(&s.text);
    if !title.is_empty() {
        let hits = search.search_issue(title, 200, 40)?;
        file_text_scores(snapshot, &hits, &mut s.title_text, None, None);
    }
    if !code.is_empty() {
        let hits = search.search(&code.join(" "), 200, 80)?;
        file_text_scores(snapshot, &hits, &mut s.code_text, None, None);
    }
    let mut file_text = vec![0.0; n];
    let file_hits = search.search_files(&cleaned, 200, 160)?;
    let top_file = f64::from(file_hits.first().map_or(1.0, |h| h.1).max(f32::EPSILON));
    for (path, score) in &file_hits {
        if let Some(f) = project.file_id(path) {
            file_text[f as usize] = f64::from(*score) / top_file;
        }
    }
    let tested = tested_by(snapshot, &s.text);

    // Graph: restart where the direct signals point; dependents count as much as
    // dependencies.
    let direct: Vec<f64> = (0..n)
        .map(|f| {
            s.frame[f]
                + s.path[f]
                + s.def[f]
                + s.literal[f]
                + s.code_string[f]
                + s.stem_title[f]
                + 0.5 * s.text[f]
        })
        .collect();
    let graph = if direct.iter().any(|&x| x > 0.0) {
        let both: Vec<Vec<(u32, f64)>> = (0..n)
            .map(|f| {
                snapshot.graphs.file_out[f]
                    .iter()
                    .chain(&snapshot.graphs.file_in[f])
                    .copied()
                    .collect()
            })
            .collect();
        let seeds: Vec<f64> = direct.iter().map(|x| x * x).collect();
        let ppr = pagerank(&both, Some(&seeds), 0.5);
        let max = ppr.iter().cloned().fold(0.0, f64::max).max(f64::EPSILON);
        ppr.into_iter().map(|x| x / max).collect()
    } else {
        vec![0.0; n]
    };
    let central_max = snapshot.file_rank.iter().cloned().fold(0.0, f64::max).max(f64::EPSILON);
    let (title_rr, code_rr, def_rr) =
        (reciprocal_ranks(&s.title_text), reciprocal_ranks(&s.code_text), reciprocal_ranks(&s.def));
    let (graph_rr, sum_rr) = (reciprocal_ranks(&graph), reciprocal_ranks(&s.text_sum));
    let max_lines = project.files.iter().map(|f| f.lines).max().unwrap_or(1).max(1);

    let mut table = Vec::with_capacity(n);
    for (f, file) in project.files.iter().enumerate() {
        if declares_only_exceptions(project, file) {
            s.aside[f] = true;
        }
        if s.evidence[f].is_empty()
            && graph[f] > 0.2
            && let Some(near) = strongest_neighbor(snapshot, f as FileId, &direct)
        {
            s.evidence[f].push(Evidence::Graph { near });
        }
        table.push([
            s.text[f],
            s.text_rr[f],
            s.text_sum[f],
            s.title_text[f],
            s.code_text[f],
            s.def[f],
            s.literal[f],
            s.code_string[f],
            s.frame[f],
            s.path[f],
            s.stem_title[f],
            s.stem_body[f],
            graph[f],
            snapshot.file_rank[f] / central_max,
            f64::from(file.lines + 1).ln() / f64::from(max_lines + 1).ln(),
            f64::from(u8::from(file.path.ends_with("__init__.py"))),
            if s.vendored[f] {
                VENDORED
            } else if s.aside[f] {
                role_prior(&file.path).min(ASIDE)
            } else {
                role_prior(&file.path)
            },
            title_rr[f],
            code_rr[f],
            def_rr[f],
            graph_rr[f],
            sum_rr[f],
            file_text[f],
            tested[f],
            s.impl_[f],
        ]);
    }
    Ok((table, s.evidence))
}

/// For each source file, the best score among the test files named after it
/// (`test_foo.py`, `foo_test.go`, `foo.test.ts`, `FooTest.java` for `foo`): an issue
/// that quotes a test points at the module that test exercises.
fn tested_by(snapshot: &Snapshot, score: &[f64]) -> Vec<f64> {
    let files = &snapshot.project.files;
    let stem = |path: &str| -> String {
        let name = path.rsplit('/').next().unwrap_or(path);
        name.split('.').next().unwrap_or(name).to_lowercase()
    };
    let mut by_stem: HashMap<String, Vec<usize>> = HashMap::new();
    for (f, file) in files.iter().enumerate() {
        if !is_test_path(&file.path) {
            by_stem.entry(stem(&file.path)).or_default().push(f);
        }
    }
    let mut out = vec![0.0; files.len()];
    for (t, file) in files.iter().enumerate() {
        if score[t] <= 0.0 || !is_test_path(&file.path) {
            continue;
        }
        let st = stem(&file.path);
        let target = st
            .strip_prefix("test_")
            .or_else(|| st.strip_suffix("_test"))
            .or_else(|| st.strip_suffix("test"))
            .or_else(|| st.strip_suffix("tests"))
            .unwrap_or("");
        if let Some(sources) = by_stem.get(target) {
            for &src in sources {
                out[src] = f64::max(out[src], score[t]);
            }
        }
    }
    out
}

/// The rank (1-based) of each file by `values`, ties sharing the best rank ("1224"),
/// 0 where the value is 0 (the signal does not vote for it).
fn competition_ranks(values: &[f64]) -> Vec<u32> {
    let mut ranked: Vec<usize> = (0..values.len()).filter(|&f| values[f] > 0.0).collect();
    ranked.sort_by(|a, b| values[*b].total_cmp(&values[*a]));
    let mut out = vec![0; values.len()];
    let mut rank = 0;
    for (i, &f) in ranked.iter().enumerate() {
        if i == 0 || values[f] != values[ranked[i - 1]] {
            rank = i as u32 + 1;
        }
        out[f] = rank;
    }
    out
}

/// 1 / rank of each file by `values` (0 where the value is 0). Ranks compare across
/// queries where raw scores do not.
fn reciprocal_ranks(values: &[f64]) -> Vec<f64> {
    let mut ranked: Vec<usize> = (0..values.len()).filter(|&f| values[f] > 0.0).collect();
    ranked.sort_by(|a, b| values[*b].total_cmp(&values[*a]));
    let mut out = vec![0.0; values.len()];
    for (rank, f) in ranked.into_iter().enumerate() {
        out[f] = 1.0 / (rank as f64 + 1.0);
    }
    out
}

/// Per file: the best chunk score (0..1 of the best overall), optionally the sum of
/// its three best, and evidence for the first few chunks.
fn file_text_scores(
    snapshot: &Snapshot,
    hits: &[crate::search::ChunkHit],
    best: &mut [f64],
    sum: Option<&mut Vec<f64>>,
    mut evidence: Option<&mut Vec<Vec<Evidence>>>,
) {
    let top = f64::from(hits.first().map_or(1.0, |h| h.score).max(f32::EPSILON));
    let mut per_file: HashMap<FileId, Vec<f64>> = HashMap::new();
    for h in hits {
        let Some(f) = snapshot.project.file_id(&h.path) else { continue };
        let v = per_file.entry(f).or_default();
        v.push(f64::from(h.score) / top);
        if let Some(ev) = evidence.as_deref_mut()
            && v.len() <= 2
        {
            ev[f as usize].push(Evidence::Text {
                symbol: h.qualified_name.clone(),
                line: h.line,
                score: stdx::widen(h.score),
            });
        }
    }
    let mut sums = vec![0.0; best.len()];
    for (f, scores) in per_file {
        best[f as usize] = scores.first().copied().unwrap_or(0.0);
        sums[f as usize] = scores.iter().take(3).sum();
    }
    if let Some(sum) = sum {
        let max = sums.iter().cloned().fold(0.0, f64::max).max(f64::EPSILON);
        for (dst, v) in sum.iter_mut().zip(sums) {
            *dst = v / max;
        }
    }
}

struct Signals {
    text: Vec<f64>,
    text_rr: Vec<f64>,
    text_sum: Vec<f64>,
    title_text: Vec<f64>,
    code_text: Vec<f64>,
    def: Vec<f64>,
    literal: Vec<f64>,
    code_string: Vec<f64>,
    frame: Vec<f64>,
    path: Vec<f64>,
    stem_title: Vec<f64>,
    stem_body: Vec<f64>,
    impl_: Vec<f64>,
    /// Aside by what the file says rather than where it is: its header says a
    /// tool wrote it, or it belongs to a copy of another Python package
    /// ([`vendored_files`]; both read with the content signals), or it
    /// declares nothing but exceptions ([`declares_only_exceptions`]).
    aside: Vec<bool>,
    /// Code copied in from elsewhere, by path or as a copy of a Python package
    /// ([`vendored_files`]).
    vendored: Vec<bool>,
    evidence: Vec<Vec<Evidence>>,
}

impl Signals {
    fn new(n: usize) -> Signals {
        let z = || vec![0.0; n];
        Signals {
            text: z(),
            text_rr: z(),
            text_sum: z(),
            title_text: z(),
            code_text: z(),
            def: z(),
            literal: z(),
            code_string: z(),
            frame: z(),
            path: z(),
            stem_title: z(),
            stem_body: z(),
            impl_: z(),
            aside: vec![false; n],
            vendored: vec![false; n],
            evidence: vec![Vec::new(); n],
        }
    }
}

/// Words of a text in order, lower-cased, split on anything but letters, digits and `_`.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

fn word_set(text: &str) -> HashSet<String> {
    words(text).collect()
}

/// The text's hyphenated words, lower-cased: `no-unused-vars`, `date-picker`.
fn kebab_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .map(|w| w.trim_matches('-'))
        .filter(|w| w.contains('-') && !w.contains("--"))
        .map(str::to_lowercase)
}

/// Files the title or the body names by their file name: `junitxml` for
/// `junitxml.py`, `pastebin` for `pastebin.py`; a package by its directory. The
/// title may spell a name as two words ("JUnit XML" for `junitxml.py`).
fn stem_signals(snapshot: &Snapshot, cleaned: &str, body_words: &HashSet<String>, s: &mut Signals) {
    let title = cleaned.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let ordered: Vec<String> = words(title).collect();
    let mut title_words: HashSet<String> =
        ordered.windows(2).map(|w| format!("{}{}", w[0], w[1])).collect();
    title_words.extend(ordered);
    // `kebab-case` names, which `words` splits: the files of ESLint's rules
    // (`no-unused-vars.js`), of many a JS/TS module (`date-picker.ts`) and
    // C/C++ tool (`git-compat-util.h`) are named so, and so is the issue's mention.
    title_words.extend(kebab_words(title));
    let mut body_words = body_words.clone();
    body_words.extend(kebab_words(cleaned));
    let body_words = &body_words;
    // A file's stem, and whether it is a package's (named by its directory).
    let stem_of = |path: &str| -> (String, bool) {
        let mut parts = path.rsplit('/');
        let name = parts.next().unwrap_or(path);
        let stem = name.split('.').next().unwrap_or(name);
        if stem == "__init__" || stem == "mod" || stem == "index" {
            (parts.next().unwrap_or(stem).to_lowercase(), true)
        } else {
            (stem.to_lowercase(), false)
        }
    };
    let stems: Vec<(String, bool)> =
        snapshot.project.files.iter().map(|f| stem_of(&f.path)).collect();
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (st, _) in &stems {
        *count.entry(st.as_str()).or_default() += 1;
    }
    for (f, (stem, package)) in stems.iter().enumerate() {
        if stem.len() < 3 || stem.starts_with("test") {
            continue;
        }
        let bare = stem.trim_start_matches('_');
        let joined = bare.replace('_', "");
        let hit = |words: &HashSet<String>| {
            words.contains(bare) || (joined != bare && words.contains(&joined))
        };
        let rarity = 1.0 / count[stem.as_str()] as f64;
        // A package (`xarray.open_dataset`) re-exports what its modules define.
        if hit(&title_words) && (*package || !only_a_receiver(snapshot, title, bare, f)) {
            s.stem_title[f] = rarity;
            s.evidence[f].push(Evidence::PathMentioned { text: format!("{bare} (title)") });
        } else if hit(body_words) {
            s.stem_body[f] = rarity;
        }
    }
}

/// Whether every mention of `stem` in the title is the receiver of a lowercase
/// attribute that file `f` does not define: `expr.atoms()` names a variable
/// called `expr` (an `Expr`), not the module `expr.py`, which has no `atoms`.
/// (Not asked for a package, see [`stem_signals`].)
fn only_a_receiver(snapshot: &Snapshot, title: &str, stem: &str, f: usize) -> bool {
    // (ASCII lowering keeps byte offsets, so `title` can be sliced at `lower`'s.)
    let lower = title.to_ascii_lowercase();
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut mentions = 0;
    for (at, _) in lower.match_indices(stem) {
        let before = lower[..at].chars().next_back();
        let after = &title[at + stem.len()..];
        if before.is_some_and(is_ident) || after.chars().next().is_some_and(is_ident) {
            continue; // part of a longer word
        }
        mentions += 1;
        let Some(rest) = after.strip_prefix('.') else { return false };
        let attr: String = rest.chars().take_while(|&c| is_ident(c)).collect();
        // (`unittest.TestCase`: a class of a module, so the stem does name one.)
        if !attr.starts_with(|c: char| c.is_lowercase())
            || snapshot.project.defs_named_str(&attr).iter().any(|d| d.file as usize == f)
        {
            return false;
        }
    }
    mentions > 0
}

/// 1 - e^-x: many pieces of evidence approach 1, one strong piece gets most of it.
fn saturate(x: f64) -> f64 {
    1.0 - (-x).exp()
}

/// Files whose path ends with `mention` at a `/` boundary.
fn files_by_suffix(snapshot: &Snapshot, mention: &str) -> Vec<FileId> {
    let mention = mention.trim_start_matches('/');
    if mention.is_empty() {
        return Vec::new();
    }
    let suffix = format!("/{mention}");
    snapshot
        .project
        .files
        .iter()
        .enumerate()
        .filter(|(_, f)| f.path == mention || f.path.ends_with(&suffix))
        .map(|(i, _)| i as FileId)
        .collect()
}

fn path_signal(snapshot: &Snapshot, features: &QueryFeatures, s: &mut Signals) {
    let mut frame_raw = vec![0.0; s.frame.len()];
    let mut path_raw = vec![0.0; s.path.len()];
    // The innermost frame is nearest the fault: it counts fully, each frame further
    // out a little less. Python prints the innermost frame last ("most recent call
    // last", pytest too); Java, JavaScript, Go and .NET print it first.
    let frames: Vec<&str> =
        features.paths.iter().filter(|m| m.frame).map(|m| m.path.as_str()).collect();
    let python = frames.iter().filter(|p| p.ends_with(".py")).count() * 2 > frames.len();
    let mut frame_no = 0usize;
    for m in &features.paths {
        let depth_weight = if m.frame {
            let outward = if python { frames.len() - 1 - frame_no } else { frame_no };
            frame_no += 1;
            0.85f64.powi(outward.min(20) as i32)
        } else {
            1.0
        };
        // The longest suffix of the mentioned path that names project files.
        // (An anchored path, a JVM frame's, must keep its last directory: its
        // package, without which `Thread.java` of `java/lang` is any `Thread.java`.)
        let parts: Vec<&str> = m.path.split('/').collect();
        let starts = if m.anchored { parts.len().saturating_sub(1) } else { parts.len() };
        let mut found = Vec::new();
        for start in 0..starts {
            found = files_by_suffix(snapshot, &parts[start..].join("/"));
            if !found.is_empty() {
                break;
            }
        }
        if found.is_empty() || found.len() > 5 {
            continue;
        }
        let share = depth_weight / found.len() as f64;
        for f in found {
            let i = f as usize;
            if m.frame {
                // A file's nearest frame to the fault counts, not how many outer
                // frames pass through it: a dispatcher that appears six times in
                // a trace is no more the culprit for it.
                frame_raw[i] = f64::max(frame_raw[i], share);
                s.evidence[i].push(Evidence::Frame { line: m.line, function: m.function.clone() });
            } else {
                path_raw[i] += share;
                s.evidence[i].push(Evidence::PathMentioned { text: m.path.clone() });
            }
        }
    }
    // Dotted module names (`pkg.sub.mod`) naming a file.
    for m in features.identifiers.iter().filter(|m| m.text.contains('.')) {
        let as_path = m.text.replace('.', "/");
        for candidate in [
            format!("{as_path}.py"),
            format!("{as_path}/__init__.py"),
            format!("{as_path}.rs"),
            format!("{as_path}.java"), // `org.jsoup.parser.Tag`: a class is its file
            format!("{as_path}.kt"),
        ] {
            let found = files_by_suffix(snapshot, &candidate);
            if found.len() == 1 {
                let i = found[0] as usize;
                path_raw[i] += 0.8 * m.strength;
                s.evidence[i].push(Evidence::PathMentioned { text: m.text.clone() });
                break;
            }
        }
    }
    for ((frame, path), (fr, pr)) in
        s.frame.iter_mut().zip(s.path.iter_mut()).zip(frame_raw.iter().zip(&path_raw))
    {
        *frame = saturate(2.0 * fr);
        *path = saturate(2.0 * pr);
    }
}

/// Names the text imports from the project (`from sympy.physics.units import ohm,
/// voltage`), each with the file that binds it, found as Python would: through
/// the package's `__init__.py` and its re-exports. A re-exported name is defined
/// elsewhere than the module the user imports it from, and a module-level
/// variable (`ohm = Quantity("ohm")`) is no definition of the index at all, so
/// the definition signal alone finds the first in every file that defines the
/// name and the second nowhere.
fn imported_names(snapshot: &Snapshot, cleaned: &str) -> HashMap<String, FileId> {
    let mut out = HashMap::new();
    for line in cleaned.lines() {
        // Interpreter prompts: `>>> `, `... `, `In [3]: `.
        let mut t = line.trim_start().trim_start_matches(['>', '.', ' ']);
        if let Some(rest) = t.strip_prefix("In [")
            && let Some((_, code)) = rest.split_once("]:")
        {
            t = code.trim_start();
        }
        let Some((module, _)) = t.strip_prefix("from ").and_then(|r| r.split_once(" import "))
        else {
            continue;
        };
        let module = module.trim();
        if module.is_empty() || module.starts_with('.') {
            continue;
        }
        let as_path = module.replace('.', "/");
        // The module's file under a source root (the project root, `src/`, `lib/`),
        // not a same-named module inside some package: `from numpy import array`
        // is not `pkg/compat/numpy.py`.
        let at_root = |f: &FileId| {
            let path = &snapshot.project.file(*f).path;
            let suffix_at = path.rfind(&as_path).unwrap_or(0);
            let dir = path[..suffix_at].trim_end_matches('/');
            dir.is_empty() || snapshot.project.file_id(&format!("{dir}/__init__.py")).is_none()
        };
        let Some(file) = [format!("{as_path}/__init__.py"), format!("{as_path}.py")]
            .iter()
            .map(|p| files_by_suffix(snapshot, p).into_iter().filter(at_root).collect::<Vec<_>>())
            .find(|found| found.len() == 1)
            .map(|found| found[0])
        else {
            continue;
        };
        for (name, _) in import_names(Language::Python, t) {
            let bound = binding_file(snapshot, file, &name, 0);
            out.insert(name, bound);
        }
    }
    out
}

/// The file that binds `name` for `from <module of file> import name`: the file
/// itself when it defines the name at module level or imports it from nowhere in
/// the project, else wherever its import of the name leads.
fn binding_file(snapshot: &Snapshot, file: FileId, name: &str, depth: usize) -> FileId {
    let project = &snapshot.project;
    let defines = |f: FileId| {
        project
            .defs_named_str(name)
            .iter()
            .any(|&d| d.file == f && project.def(d).qualified_name == name)
    };
    if depth >= 6 || defines(file) {
        return file;
    }
    let imports = &snapshot.graphs.imports[file as usize];
    for imp in imports {
        let code_graph::ImportTarget::Files(targets) = &imp.target else { continue };
        let Some((original, _)) = imp.names.iter().find(|(_, local)| local == name) else {
            continue;
        };
        // `from . import sub` binds the submodule itself.
        if let Some(&sub) =
            targets.iter().find(|&&t| python_module_name(&project.file(t).path) == name)
        {
            return sub;
        }
        if let Some(&target) = targets.first() {
            return binding_file(snapshot, target, original, depth + 1);
        }
    }
    // `from .definitions import *`: the first module it reaches that defines it.
    for imp in imports.iter().filter(|i| i.names.is_empty()) {
        let code_graph::ImportTarget::Files(targets) = &imp.target else { continue };
        for &t in targets.iter().filter(|&&t| t != file) {
            let bound = binding_file(snapshot, t, name, depth + 1);
            if bound != t || defines(t) {
                return bound;
            }
        }
    }
    file
}

/// The name Python imports a file by, exactly: `pkg/mod.py` → `mod`,
/// `pkg/sub/__init__.py` → `sub`. (Not `testfiles::module_stem`, which normalizes
/// case and underscores to match test files to their subjects.)
fn python_module_name(path: &str) -> &str {
    let mut parts = path.rsplit('/');
    let name = parts.next().unwrap_or(path);
    let stem = name.strip_suffix(".py").unwrap_or(name);
    if stem == "__init__" { parts.next().unwrap_or(stem) } else { stem }
}

fn definition_signal(
    snapshot: &Snapshot,
    features: &QueryFeatures,
    imported: &HashMap<String, FileId>,
    text_words: &HashSet<String>,
    s: &mut Signals,
) {
    let project = &snapshot.project;
    let mut raw = vec![0.0; s.def.len()];
    let mut classes_by_lower = None;
    for m in &features.identifiers {
        if m.text.starts_with("__") && m.text.ends_with("__") {
            continue; // dunders: every class has them
        }
        // `Class.method` names a qualified definition; a plain name every definition of it.
        let (name, qualifier) = match m.text.rsplit_once(['.', ':']) {
            Some((q, n)) if !n.is_empty() => {
                (n.trim_start_matches(':'), Some(q.trim_end_matches(':')))
            }
            _ => (m.text.as_str(), None),
        };
        let mut defs: Vec<_> = project.defs_named_str(name).to_vec();
        if let Some(q) = qualifier {
            let last = q.rsplit(['.', ':']).next().unwrap_or(q);
            let qualified: Vec<_> = defs
                .iter()
                .copied()
                .filter(|&d| {
                    project.def(d).qualified_name.contains(&format!("{last}."))
                        || project.def(d).qualified_name.contains(&format!("{last}::"))
                })
                .collect();
            let in_module: Vec<_> = defs
                .iter()
                .copied()
                .filter(|&d| {
                    project.def(d).qualified_name == name
                        && names_module(project.file(d.file), last)
                })
                .collect();
            if !qualified.is_empty() {
                defs = qualified;
            } else if !in_module.is_empty() {
                // `srv.NewServer`, `output::print`, `utils.get_auth`: the qualifier
                // is the module or package that defines the name at its top level
                // (`object.clone()` is no function of `object.py`'s).
                defs = in_module;
            } else {
                // `expr.atoms()`: a variable named after a class of ours (`Expr`);
                // the method is the one that class has or inherits (`Basic.atoms`).
                let owners = classes_named_like(project, last, &mut classes_by_lower);
                defs = code_graph::methods_of_type(project, &defs, owners);
                if defs.is_empty() {
                    continue; // `np.array` and the like: not ours
                }
            }
        }
        // An imported name counts where the import leads: its definition there, or
        // the module that binds it as a variable. A chain that stops at a package's
        // `__init__.py` that does not define it is one the resolver could not
        // follow; the name's definitions elsewhere count as usual then.
        if let (None, Some(&bound)) = (qualifier, imported.get(name)) {
            let there: Vec<_> = defs.iter().copied().filter(|d| d.file == bound).collect();
            if !there.is_empty() {
                defs = there;
            } else if !project.file(bound).path.ends_with("__init__.py") || defs.is_empty() {
                raw[bound as usize] += m.strength * 0.6;
                s.evidence[bound as usize]
                    .push(Evidence::PathMentioned { text: format!("import {name}") });
                continue;
            }
        }
        if defs.is_empty() {
            continue;
        }
        let mut files: Vec<FileId> = defs.iter().map(|d| d.file).collect();
        files.sort_unstable();
        files.dedup();
        // Rare names say more: one defining file counts fully, ten count a little.
        let rarity = 1.0 / (1.0 + (files.len() as f64).ln() * 1.5);
        let qualified_bonus = if qualifier.is_some() { 1.5 } else { 1.0 };
        for f in files {
            let best = defs
                .iter()
                .filter(|d| d.file == f)
                .map(|&d| project.def(d))
                .max_by_key(|d| kind_rank(d.kind))
                .expect("a definition in this file");
            let kind_weight = match best.kind {
                k if k.is_container() => 1.0,
                k if k.is_callable() => 0.9,
                _ => 0.6,
            };
            raw[f as usize] += m.strength * rarity * kind_weight * qualified_bonus;
            if s.evidence[f as usize].len() < 6 {
                s.evidence[f as usize].push(Evidence::Defines {
                    symbol: best.qualified_name.clone(),
                    line: best.line,
                    mention: m.text.clone(),
                });
            }
        }
    }
    handler_definitions(snapshot, features, text_words, &mut raw, &mut s.evidence);
    for (d, r) in s.def.iter_mut().zip(raw) {
        *d = saturate(r);
    }
    method_files(snapshot, features, s);
}

/// Whether `file` is the module or package a qualifier names: its stem
/// (`utils.py`, `output.rs`, `Reader.java`), the directory of a `mod.rs`,
/// `__init__.py` or `index.js`, a Go file's directory (its package, by the
/// convention nearly every project keeps), or the last part of the package a
/// Java file declares.
fn names_module(file: &code_index::ProjectFile, qualifier: &str) -> bool {
    let mut parts = file.path.rsplit('/');
    let name = parts.next().unwrap_or("");
    let stem = name.split('.').next().unwrap_or(name);
    let dir = parts.next();
    stem == qualifier
        || ((matches!(stem, "mod" | "__init__" | "index") || file.language == Language::Go)
            && dir == Some(qualifier))
        || file.package.as_deref().is_some_and(|p| p.rsplit(['.', ':']).next() == Some(qualifier))
}

/// Files that hold methods of a type the text mentions outside the type's own
/// body: Rust's `impl Foo` and `impl Display for Foo` blocks, Go's methods with a
/// `Foo` receiver, C++'s out-of-line `void Foo::run()`. Each is where the type's
/// behaviour is, often in another file than its declaration (`foo.rs` for a
/// `struct Foo` of `lib.rs`, `server_http.go`, `foo.cpp` for `foo.h`), which
/// the definition signal alone never finds for a mention of `Foo`.
fn method_files(snapshot: &Snapshot, features: &QueryFeatures, s: &mut Signals) {
    let project = &snapshot.project;
    let types: Vec<(&str, f64)> = features
        .identifiers
        .iter()
        .filter(|m| !m.text.contains(['.', ':']) && m.text.starts_with(|c: char| c.is_uppercase()))
        .filter(|m| {
            project
                .defs_named_str(&m.text)
                .iter()
                .any(|&d| code_graph::is_type_container(project.def(d).kind))
        })
        .map(|m| (m.text.as_str(), m.strength))
        .collect();
    if types.is_empty() {
        return;
    }
    let wanted: HashSet<&str> = types.iter().map(|(t, _)| *t).collect();
    // Each type's files with its first method there, for the evidence.
    let mut by_owner: HashMap<&str, Vec<(FileId, &code_index::Def)>> = HashMap::new();
    for (f, file) in project.files.iter().enumerate() {
        for d in file.defs.iter().filter(|d| d.parent.is_none() && d.kind.is_callable()) {
            let Some(cut) = d.qualified_name.rfind(['.', ':']) else { continue };
            let owner = d.qualified_name[..cut].trim_end_matches(':');
            let owner = owner.rsplit(['.', ':']).next().unwrap_or(owner);
            if let Some(&t) = wanted.get(owner) {
                let files = by_owner.entry(t).or_default();
                if files.last().is_none_or(|(last, _)| *last != f as FileId) {
                    files.push((f as FileId, d));
                }
            }
        }
    }
    let mut raw = vec![0.0; s.impl_.len()];
    for (t, strength) in types {
        let Some(files) = by_owner.get(t) else { continue };
        let declared: HashSet<FileId> = project.defs_named_str(t).iter().map(|d| d.file).collect();
        let files: Vec<_> = files.iter().filter(|(f, _)| !declared.contains(f)).collect();
        // Rare types say more, as for definitions.
        let rarity = 1.0 / (1.0 + (files.len() as f64).ln() * 1.5);
        for &&(f, def) in &files {
            raw[f as usize] += strength * rarity;
            if s.evidence[f as usize].len() < 6 {
                s.evidence[f as usize].push(Evidence::Defines {
                    symbol: def.qualified_name.clone(),
                    line: def.line,
                    mention: t.to_owned(),
                });
            }
        }
    }
    for (d, r) in s.impl_.iter_mut().zip(raw) {
        *d = saturate(r);
    }
}

/// The classes a lowercase variable name stands for: `expr` → `Expr`,
/// `data_array` → `DataArray` (the project's classes by lowercased name without
/// underscores, built on first use). Not a name with capitals: `np`, `Foo`.
fn classes_named_like<'p>(
    project: &'p code_index::Project,
    variable: &str,
    index: &mut Option<HashMap<String, Vec<&'p str>>>,
) -> Vec<&'p str> {
    if variable.len() < 3 || variable.chars().any(|c| !(c.is_ascii_lowercase() || c == '_')) {
        return Vec::new();
    }
    // A builtin type is the language's, not a variable: `object.__new__(cls)` is
    // Python's `object`, not sympy's category class `Object`; `float.is_integer`
    // is not sympy's `Float`. (Python's are the lowercase ones there are.)
    if code_graph::is_builtin_type(Language::Python, variable) {
        return Vec::new();
    }
    let index = index.get_or_insert_with(|| {
        let mut by_lower: HashMap<String, Vec<&str>> = HashMap::new();
        for d in project.all_defs() {
            let def = project.def(d);
            if code_graph::is_type_container(def.kind) {
                let name = project.names.name(def.name);
                let names = by_lower.entry(name.to_ascii_lowercase()).or_default();
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        by_lower
    });
    index.get(&variable.replace('_', "")).cloned().unwrap_or_default()
}

/// Files with a handler for a class the text mentions, for what the text says is
/// done to it: a method named after the class behind a verb, the dispatch-by-name
/// convention of printers, visitors and evaluators (`_print_FormalPowerSeries` in
/// each printer, `visit_Call`, `_eval_Integral`). An issue about how `Quantity`
/// prints is in the printers' `_print_Quantity`, not in `Quantity` — but only if
/// it is about printing: the verb (`print`) must start a word of the text
/// ("prints", "printing"), or every issue that mentions a printable class would
/// point at the printers. Counted like a definition, at half a class's weight and
/// by the same rarity.
fn handler_definitions(
    snapshot: &Snapshot,
    features: &QueryFeatures,
    text_words: &HashSet<String>,
    raw: &mut [f64],
    evidence: &mut [Vec<Evidence>],
) {
    let project = &snapshot.project;
    // Class-like mentions only: `Quantity`, `HadamardPower`; a lower-case word
    // would find every `get_x` and `is_x`.
    let classes: HashMap<&str, f64> = features
        .identifiers
        .iter()
        .filter(|m| {
            m.text.len() >= 3
                && m.text.starts_with(|c: char| c.is_ascii_uppercase())
                && m.text.chars().any(|c| c.is_ascii_lowercase())
                && m.text.chars().all(|c| c.is_ascii_alphanumeric())
        })
        .map(|m| (m.text.as_str(), m.strength))
        .collect();
    if classes.is_empty() {
        return;
    }
    let mut handlers: HashMap<&str, Vec<code_index::DefId>> = HashMap::new();
    for id in 0..project.names.len() as code_index::NameId {
        let name = project.names.name(id);
        let bytes = name.as_bytes();
        for (i, _) in name.match_indices('_') {
            if i == 0 || !bytes.get(i + 1).is_some_and(u8::is_ascii_uppercase) {
                continue;
            }
            let verb_said = || {
                name[..i].split('_').filter(|w| w.len() >= 3).any(|verb| {
                    let verb = verb.to_ascii_lowercase();
                    text_words.iter().any(|w| w.starts_with(&verb))
                })
            };
            if let Some((class, _)) = classes.get_key_value(&name[i + 1..])
                && verb_said()
            {
                let defs = project.defs_named(id).iter().filter(|&&d| {
                    project.def(d).kind.is_callable() && !is_test_path(&project.file(d.file).path)
                });
                handlers.entry(class).or_default().extend(defs);
            }
        }
    }
    for (class, defs) in handlers {
        let mut files: Vec<FileId> = defs.iter().map(|d| d.file).collect();
        files.sort_unstable();
        files.dedup();
        // A handler in every printer (`_print_NaN`, `_print_Integer`) says nothing
        // about which one is meant: past five files, as for a path that names
        // more than five, the mention is left to the other signals.
        if files.is_empty() || files.len() > 5 {
            continue;
        }
        let rarity = 1.0 / (1.0 + (files.len() as f64).ln() * 1.5);
        for f in files {
            raw[f as usize] += classes[class] * rarity * 0.5;
            let d = defs.iter().find(|d| d.file == f).expect("a handler in this file");
            if evidence[f as usize].len() < 6 {
                let def = project.def(*d);
                evidence[f as usize].push(Evidence::Defines {
                    symbol: def.qualified_name.clone(),
                    line: def.line,
                    mention: class.to_owned(),
                });
            }
        }
    }
}

/// Whether every top-level definition of `file` is an exception class: its name
/// or a base's ends in `Error`, `Exception` or `Warning`, or a base is another
/// exception class of the file (`InvalidProxyURL(InvalidURL)`). `exceptions.py`,
/// `polyerrors.py`, Java's `FooException.java`: such a module is where an error's
/// *name* lives, so an issue that quotes the error points at it by definition,
/// while the fix goes where the error is raised or handled.
fn declares_only_exceptions(project: &code_index::Project, file: &code_index::ProjectFile) -> bool {
    const SUFFIXES: [&str; 3] = ["Error", "Exception", "Warning"];
    let top: Vec<(&str, Vec<&str>)> = file
        .defs
        .iter()
        .filter(|d| d.parent.is_none())
        .map(|d| {
            let name = project.names.name(d.name);
            let after_name = d.signature.split_once(name).map_or("", |(_, rest)| rest);
            let bases = after_name
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .collect();
            (if d.kind == protocol::SymbolKind::Class { name } else { "" }, bases)
        })
        .collect();
    if top.is_empty() || top.iter().any(|(name, _)| name.is_empty()) {
        return false;
    }
    let named = |w: &str| SUFFIXES.iter().any(|s| w.ends_with(s));
    let mut known: HashSet<&str> = HashSet::new();
    // Each pass admits the classes whose base the previous one admitted.
    loop {
        let before = known.len();
        for (name, bases) in &top {
            if named(name) || bases.iter().any(|b| named(b) || known.contains(b)) {
                known.insert(name);
            }
        }
        if known.len() == before {
            break;
        }
    }
    top.iter().all(|(name, _)| known.contains(name))
}

fn kind_rank(kind: protocol::SymbolKind) -> u8 {
    if kind.is_container() {
        2
    } else if kind.is_callable() {
        1
    } else {
        0
    }
}

/// What [`content_signals`] finds in one file.
#[derive(Default)]
struct FileFindings {
    generated: bool,
    /// (index into the query's literals, line of the first occurrence).
    literals: Vec<(usize, u32)>,
    /// The file's string fragments the text quotes, each with its first line.
    strings: Vec<(String, u32)>,
}

/// Reads every file once for two signals: the text's literals found in the file
/// (`literal`), and the file's own string literals found in the text
/// (`code_string`: a message the program printed, quoted in the issue).
fn content_signals(
    snapshot: &Snapshot,
    root: &Path,
    q: &QueryFeatures,
    cleaned: &str,
    words: &HashSet<String>,
    s: &mut Signals,
) {
    // Reading and scanning every file is most of a one-shot localization, as it is
    // of a grep: files are read in parallel, and their findings merged in file
    // order, so the answer is the same as one thread's.
    let per_file: Vec<Option<FileFindings>> = snapshot
        .project
        .files
        .par_iter()
        .map(|file| {
            let bytes = std::fs::read(root.join(&file.path)).ok()?;
            let text = String::from_utf8_lossy(&bytes);
            let mut found = FileFindings { generated: is_generated(&text), ..Default::default() };
            for (l, lit) in q.literals.iter().enumerate() {
                if let Some(pos) = text.find(lit.as_str()) {
                    found.literals.push((l, line_at(&text, pos)));
                }
            }
            for (pos, fragment) in string_fragments(&text) {
                // Cheap filter first: every word of the fragment is a word of the text.
                if fragment.split_whitespace().all(|w| {
                    let w = w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
                    w.is_empty() || words.contains(&w)
                }) && cleaned.contains(fragment)
                    && !found.strings.iter().any(|(f, _)| f == fragment)
                {
                    found.strings.push((fragment.to_owned(), line_at(&text, pos)));
                }
            }
            Some(found)
        })
        .collect();
    let mut lit_hits: HashMap<&str, Vec<(usize, u32)>> = HashMap::new();
    let mut string_hits: HashMap<String, Vec<(usize, u32)>> = HashMap::new();
    for (i, found) in per_file.into_iter().enumerate() {
        let Some(found) = found else { continue };
        s.aside[i] = found.generated;
        for (l, line) in found.literals {
            lit_hits.entry(q.literals[l].as_str()).or_default().push((i, line));
        }
        for (fragment, line) in found.strings {
            string_hits.entry(fragment).or_default().push((i, line));
        }
    }
    s.vendored = vendored_files(&snapshot.project, |p| std::fs::read(root.join(p)).ok());
    for (aside, vendored) in s.aside.iter_mut().zip(&s.vendored) {
        *aside |= vendored;
    }
    let spread = |files: &[(usize, u32)]| -> f64 {
        files.iter().map(|(i, _)| role_prior(&snapshot.project.files[*i].path).max(0.2)).sum()
    };
    let mut raw = vec![0.0; s.literal.len()];
    for (lit, files) in lit_hits {
        let spread = spread(&files);
        if spread > 8.0 {
            continue; // everywhere: says nothing
        }
        for (i, line) in files {
            raw[i] += role_prior(&snapshot.project.files[i].path).max(0.2) / spread.max(1.0);
            s.evidence[i].push(Evidence::Literal { text: lit.to_owned(), line });
        }
    }
    let mut raw_strings = vec![0.0; s.code_string.len()];
    for (fragment, files) in string_hits {
        let spread = spread(&files);
        if spread > 5.0 {
            continue;
        }
        let strength = (fragment.len() as f64 / 40.0).min(1.0);
        for (i, line) in files {
            raw_strings[i] +=
                strength * role_prior(&snapshot.project.files[i].path).max(0.2) / spread.max(1.0);
            if s.evidence[i].len() < 8 {
                s.evidence[i].push(Evidence::Literal { text: fragment.clone(), line });
            }
        }
    }
    for ((lit, code), (r, rs)) in
        s.literal.iter_mut().zip(s.code_string.iter_mut()).zip(raw.iter().zip(&raw_strings))
    {
        *lit = saturate(1.5 * r);
        *code = saturate(1.5 * rs);
    }
}

fn line_at(text: &str, pos: usize) -> u32 {
    text[..pos].bytes().filter(|&b| b == b'\n').count() as u32 + 1
}

/// Fragments of a file's one-line string literals, split at format placeholders
/// (`%s`, `{}`, `{name}`), that are long enough to be telling: 12+ characters with
/// two words, or 16+ characters.
fn string_fragments(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let q = bytes[i];
        if q != b'"' && q != b'\'' {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut j = start;
        while j < bytes.len() && bytes[j] != q && bytes[j] != b'\n' {
            if bytes[j] == b'\\' {
                j += 1;
            }
            j += 1;
        }
        if j >= bytes.len() || bytes[j] != q {
            i = j.max(i + 1);
            continue;
        }
        let literal = &text[start..j];
        let mut from = 0;
        for (k, c) in literal.char_indices().chain(std::iter::once((literal.len(), ' '))) {
            let placeholder = k == literal.len() || c == '%' || c == '{' || c == '}' || c == '\\';
            if placeholder && k >= from {
                let raw = &literal[from..k];
                let frag = raw.trim();
                let words = frag.split_whitespace().count();
                if (frag.len() >= 12 && words >= 2) || frag.len() >= 16 {
                    let lead = raw.len() - raw.trim_start().len();
                    out.push((start + from + lead, frag));
                }
                // Skip the placeholder itself (`%s`, `{name}`).
                from = literal[k..].find(' ').map_or(literal.len(), |o| k + o);
            }
        }
        i = j + 1;
    }
    out
}

fn strongest_neighbor(snapshot: &Snapshot, f: FileId, direct: &[f64]) -> Option<String> {
    let g = &snapshot.graphs;
    g.file_out[f as usize]
        .iter()
        .chain(&g.file_in[f as usize])
        .filter(|(n, _)| direct[*n as usize] > 0.0)
        .max_by(|a, b| (direct[a.0 as usize] * a.1).total_cmp(&(direct[b.0 as usize] * b.1)))
        .map(|(n, _)| snapshot.project.files[*n as usize].path.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_in_words() {
        // The CLI said "named in the request as", the pillars "named as" and
        // nothing for `Similar`; every driver now says the CLI's.
        let s = |x: &str| x.to_owned();
        let table = [
            (
                Evidence::Frame { line: Some(3), function: Some(s("main")) },
                "stack frame line 3 in main",
            ),
            (Evidence::Frame { line: None, function: None }, "stack frame"),
            (Evidence::PathMentioned { text: s("src/a.py") }, "named in the request as src/a.py"),
            (
                Evidence::Defines { symbol: s("a.Cart"), line: 4, mention: s("Cart") },
                "defines a.Cart (line 4) for `Cart`",
            ),
            (Evidence::Literal { text: s("no such"), line: 9 }, "contains \"no such\" (line 9)"),
            (
                Evidence::Text { symbol: s("a.total"), line: 7, score: 12.345 },
                "text matches a.total (line 7, bm25 12.3)",
            ),
            (Evidence::Graph { near: s("b.py") }, "close to b.py"),
            (
                Evidence::Similar {
                    retriever: s("embeddings"),
                    symbol: s("a.f"),
                    line: 2,
                    rank: 1,
                },
                "embeddings #1: a.f (line 2)",
            ),
            (
                Evidence::Similar { retriever: s("embeddings"), symbol: s(""), line: 1, rank: 5 },
                "embeddings #5: the file's top level (line 1)",
            ),
        ];
        for (e, want) in table {
            assert_eq!(describe_evidence(&e), want);
        }
    }

    #[test]
    fn imported_names_lead_to_the_binding_file() {
        let f = code_graph::fixture(
            r#"
//- units/__init__.py
from .definitions import ohm, volt
from .quantities import Quantity
from . import systems
//- units/definitions.py
from .quantities import Quantity
ohm = Quantity("ohm")
def volt():
    pass
//- units/quantities.py
class Quantity:
    pass
//- units/systems/__init__.py
from .si import *
//- units/numpy.py
def array():
    pass
//- units/systems/si.py
SI = 1
def dimsys():
    pass
"#,
        );
        let text = ">>> from units import ohm, Quantity, volt, systems\nIn [2]: from units.systems import dimsys\nfrom numpy import array\nfrom .local import x\n";
        let mut got: Vec<(String, String)> = imported_names(&f.snapshot, text)
            .into_iter()
            .map(|(name, file)| (name, f.snapshot.project.file(file).path.clone()))
            .collect();
        got.sort();
        let want = [
            ("Quantity", "units/quantities.py"),
            ("dimsys", "units/systems/si.py"),
            ("ohm", "units/definitions.py"),
            ("systems", "units/systems/__init__.py"),
            ("volt", "units/definitions.py"),
        ];
        let want: Vec<(String, String)> =
            want.iter().map(|(n, p)| (n.to_string(), p.to_string())).collect();
        assert_eq!(got, want);
    }

    /// The files with a positive score, by path.
    fn scored_paths(snapshot: &Snapshot, scores: &[f64]) -> Vec<String> {
        let mut files: Vec<String> = (0..scores.len())
            .filter(|&i| scores[i] > 0.0)
            .map(|i| snapshot.project.files[i].path.clone())
            .collect();
        files.sort();
        files
    }

    #[test]
    fn handlers_count_for_the_class_when_the_text_says_the_verb() {
        let f = code_graph::fixture(
            r#"
//- units/quantity.py
class Quantity:
    pass
//- printing/str.py
class StrPrinter:
    def _print_Quantity(self, e):
        pass
//- printing/latex.py
class LatexPrinter:
    def _print_Quantity(self, e):
        pass
    def _print_Integer(self, e):
        pass
//- printing/tests/test_str.py
def _print_Quantity():
    pass
"#,
        );
        let handled = |text: &str| -> Vec<String> {
            let q = analyze_query(text);
            let n = f.snapshot.project.files.len();
            let (mut raw, mut evidence) = (vec![0.0; n], vec![Vec::new(); n]);
            handler_definitions(&f.snapshot, &q, &word_set(text), &mut raw, &mut evidence);
            scored_paths(&f.snapshot, &raw)
        };
        // The printers, not the tests' helper, not the class itself.
        assert_eq!(
            handled("`Quantity` is printed in full"),
            ["printing/latex.py", "printing/str.py"]
        );
        // Not about printing: the printers say nothing.
        assert!(handled("Dividing a `Quantity` by another is wrong").is_empty());
        // A lower-case mention finds no handler (`get_x`, `is_x` would be everywhere).
        assert!(handled("print the integer").is_empty());
    }

    #[test]
    fn a_title_names_a_module_unless_it_is_a_variables_name() {
        let f = code_graph::fixture(
            r#"
//- sympy/__init__.py
from .core.basic import Basic
//- sympy/core/expr.py
class Expr:
    pass
//- sympy/core/basic.py
class Basic:
    def atoms(self):
        pass
//- sympy/core/unittest.py
class Case:
    pass
"#,
        );
        let named = |text: &str| -> Vec<String> {
            let n = f.snapshot.project.files.len();
            let mut s = Signals::new(n);
            stem_signals(&f.snapshot, text, &word_set(text), &mut s);
            scored_paths(&f.snapshot, &s.stem_title)
        };
        assert_eq!(named("expr printing is slow"), ["sympy/core/expr.py"]);
        // `expr` is a variable: `expr.py` has no `atoms`; `basic.py` is not named.
        assert!(named("expr.atoms() should return objects with no args").is_empty());
        assert_eq!(named("basic.atoms() is slow"), ["sympy/core/basic.py"]);
        // Named once plainly is enough, and a capitalized attribute is a
        // module's class (`unittest.TestCase`).
        assert_eq!(named("expr.atoms() differs from expr printing"), ["sympy/core/expr.py"]);
        assert_eq!(named("unittest.TestCase.tearDown runs"), ["sympy/core/unittest.py"]);
        // A package re-exports what its modules define.
        assert_eq!(named("sympy.atoms is missing"), ["sympy/__init__.py"]);
        // Non-ASCII before the mention does not shift the slicing.
        assert!(named("Größe: expr.atoms() is wrong").is_empty());
    }

    #[test]
    fn a_method_called_on_a_variable_named_after_a_class_is_that_classs() {
        let f = code_graph::fixture(
            r#"
//- core/basic.py
class Basic:
    def atoms(self):
        pass
//- core/expr.py
from .basic import Basic
class Expr(Basic):
    pass
class DataArray:
    def reduce(self):
        pass
//- core/object.py
class Object:
    def clone(self):
        pass
//- algebra/matrix.py
class MatrixBase:
    def atoms(self):
        pass
    def reduce(self):
        pass
    def clone(self):
        pass
"#,
        );
        let defined = |text: &str| -> Vec<String> {
            let n = f.snapshot.project.files.len();
            let mut s = Signals::new(n);
            let q = analyze_query(text);
            definition_signal(&f.snapshot, &q, &HashMap::new(), &word_set(text), &mut s);
            // Best first; a tie (the bare name's credit alone) keeps path order.
            let mut files: Vec<(usize, f64)> =
                (0..n).filter(|&i| s.def[i] > 0.0).map(|i| (i, s.def[i])).collect();
            files.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            let paths = &f.snapshot.project.files;
            files.iter().map(|&(i, _)| paths[i].path.clone()).collect::<Vec<_>>()
        };
        // `expr` holds an `Expr`, which inherits `atoms` from `Basic`: above the
        // other `atoms`, which the bare name still finds.
        assert_eq!(
            defined("`expr.atoms()` returns subclasses of Atom"),
            ["core/basic.py", "algebra/matrix.py"]
        );
        // snake_case for CamelCase.
        assert_eq!(
            defined("`data_array.reduce()` drops attrs"),
            ["core/expr.py", "algebra/matrix.py"]
        );
        // No class of that name: a library's (`np.atoms` is not ours), so only
        // the bare name counts, equally (path order).
        assert_eq!(defined("`np.atoms()` fails"), ["algebra/matrix.py", "core/basic.py"]);
        // A builtin type is the language's: `object.clone()` is not `Object.clone`.
        assert_eq!(defined("`object.clone()` fails"), ["algebra/matrix.py", "core/object.py"]);
    }

    /// The files a signal scores for a text, best first (ties in path order).
    fn ranked_by(snapshot: &Snapshot, text: &str, signal: &str) -> Vec<String> {
        let n = snapshot.project.files.len();
        let mut s = Signals::new(n);
        let q = analyze_query(text);
        let words = word_set(text);
        path_signal(snapshot, &q, &mut s);
        definition_signal(snapshot, &q, &HashMap::new(), &words, &mut s);
        stem_signals(snapshot, text, &words, &mut s);
        let values = match signal {
            "def" => &s.def,
            "impl" => &s.impl_,
            "stem_title" => &s.stem_title,
            "frame" => &s.frame,
            "path" => &s.path,
            other => panic!("no signal {other}"),
        };
        let mut files: Vec<(usize, f64)> =
            (0..n).filter(|&i| values[i] > 0.0).map(|i| (i, values[i])).collect();
        files.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        files.iter().map(|&(i, _)| snapshot.project.files[i].path.clone()).collect()
    }

    #[test]
    fn names_reach_the_files_of_modules_packages_impls_and_headers() {
        let f = code_graph::fixture(
            r#"
//- srv/server.go
package srv
type Server struct{}
func NewServer() *Server { return nil }
//- srv/server_http.go
package srv
func (s *Server) ServeHTTP() {}
//- other/other.go
package other
func NewServer() {}
//- src/lib.rs
mod foo;
pub struct Foo;
//- src/foo.rs
use crate::Foo;
impl Foo { pub fn bar(&self) {} }
pub fn helper() {}
//- src/bar.rs
pub fn helper() {}
//- cc/parser.h
class Parser { public: void run(); };
//- cc/parser.cpp
#include "parser.h"
void Parser::run() {}
//- lib/rules/no-unused-vars.js
module.exports = { create(context) {} };
//- lib/rules/no-vars.js
module.exports = { create(context) {} };
//- pkg/utils.py
def get_auth():
    pass
//- pkg/other.py
def get_auth():
    pass
//- src/main/java/com/acme/util/Strings.java
package com.acme.util;
public class Strings { public static String trim(String s) { return s; } }
//- src/main/java/com/acme/text/Strings.java
package com.acme.text;
public class Strings {}
//- src/main/java/com/acme/Thread.java
package com.acme;
public class Thread {}
"#,
        );
        // (text, signal, the files it scores, best first)
        let cases: &[(&str, &str, &[&str])] = &[
            // Go: a package-qualified call is that package's function.
            ("`srv.NewServer()` returns nil", "def", &["srv/server.go", "other/other.go"]),
            // Go: a type's methods in another file of its package.
            ("`Server` drops the connection", "impl", &["srv/server_http.go"]),
            // Rust: an `impl` block in another module than the struct.
            ("`Foo` is printed twice", "impl", &["src/foo.rs"]),
            // Rust: a module path names the module's function (and `foo`, the
            // module `lib.rs` declares).
            ("`foo::helper` overflows", "def", &["src/foo.rs", "src/lib.rs", "src/bar.rs"]),
            // C++: out-of-line members in the implementation file of the header.
            ("`Parser` hangs", "impl", &["cc/parser.cpp"]),
            ("`Parser` hangs", "def", &["cc/parser.h"]),
            // JS: a rule's file named in kebab-case.
            (
                "no-unused-vars reports a false positive",
                "stem_title",
                &["lib/rules/no-unused-vars.js"],
            ),
            // Python: a module-qualified function.
            ("`utils.get_auth` ignores netrc", "def", &["pkg/utils.py", "pkg/other.py"]),
            // Java: a frame's package picks its file; the JDK's `Thread` is not ours.
            (
                "java.lang.NullPointerException\n\tat com.acme.util.Strings.trim(Strings.java:2)\n\tat java.lang.Thread.run(Thread.java:748)",
                "frame",
                &["src/main/java/com/acme/util/Strings.java"],
            ),
            // Java: a fully qualified class name is its file.
            (
                "`com.acme.text.Strings` is not thread-safe",
                "path",
                &["src/main/java/com/acme/text/Strings.java"],
            ),
        ];
        for (text, signal, want) in cases {
            assert_eq!(ranked_by(&f.snapshot, text, signal), *want, "{signal} for {text:?}");
        }
    }

    #[test]
    fn string_fragments_split_at_placeholders() {
        let src = r#"msg = "Unused import %s from %s module"; x = '- {fname}'; y = "INTERNALERROR> something broke badly" z = "%s   padded fragment here""#;
        let frags: Vec<&str> = string_fragments(src).into_iter().map(|(_, f)| f).collect();
        assert_eq!(
            frags,
            ["Unused import", "INTERNALERROR> something broke badly", "padded fragment here"]
        );
        // Every offset points at its fragment.
        for (pos, frag) in string_fragments(src) {
            assert_eq!(&src[pos..pos + frag.len()], frag);
        }
    }

    #[test]
    fn a_models_picks_reorder_the_first_candidates_only() {
        fn files(paths: &[&str]) -> Vec<FileResult> {
            paths
                .iter()
                .map(|p| FileResult {
                    path: (*p).to_owned(),
                    score: 1.0,
                    evidence: Vec::new(),
                    features: None,
                })
                .collect()
        }
        let ranked = ["a", "b", "c", "d", "e", "f", "g", "h"];
        // (candidates, picks, weight, order after)
        let cases: &[(usize, &[&str], f64, &[&str])] = &[
            // No picks: the signals' order.
            (6, &[], 0.3, &["a", "b", "c", "d", "e", "f", "g", "h"]),
            // The model's first pick rises from the fifth place, not from the sixth.
            (6, &["e"], 0.3, &["e", "a", "b", "c", "d", "f", "g", "h"]),
            (6, &["f"], 0.3, &["a", "f", "b", "c", "d", "e", "g", "h"]),
            // Agreement keeps the first file first.
            (6, &["a", "c"], 0.3, &["a", "c", "b", "d", "e", "f", "g", "h"]),
            // A pick outside the candidates, or made up, changes nothing.
            (6, &["g", "zzz"], 0.3, &["a", "b", "c", "d", "e", "f", "g", "h"]),
            // With the signals' weight the model's pick wins from further down.
            (8, &["h"], 1.0, &["h", "a", "b", "c", "d", "e", "f", "g"]),
        ];
        for (candidates, picks, weight, want) in cases {
            let picks: Vec<String> = picks.iter().map(|p| (*p).to_owned()).collect();
            let got = fuse_picks(files(&ranked), *candidates, &picks, "m", *weight);
            let got: Vec<&str> = got.iter().map(|r| r.path.as_str()).collect();
            assert_eq!(got, *want, "picks {picks:?} weight {weight}");
        }
        let got = fuse_picks(files(&ranked), 6, &["c".to_owned()], "m", RERANK_WEIGHT);
        assert_eq!(got[0].evidence, [Evidence::Picked { model: "m".into(), rank: 1 }]);
        assert_eq!(describe_evidence(&got[0].evidence[0]), "m picked it #1");
    }

    #[test]
    fn ties_share_a_rank_and_zeros_do_not_vote() {
        let cases: &[(&[f64], &[u32])] = &[
            (&[0.5, 0.9, 0.0, 0.5, 0.1], &[2, 1, 0, 2, 4]),
            (&[0.0, 0.0], &[0, 0]),
            (&[3.0], &[1]),
        ];
        for (values, expected) in cases {
            assert_eq!(competition_ranks(values), *expected, "{values:?}");
        }
    }

    #[test]
    fn modules_that_only_declare_exceptions() {
        let f = code_graph::fixture(
            r#"
//- web/exceptions.py
class RequestException(IOError):
    def __init__(self, *args, **kwargs):
        pass
class InvalidURL(RequestException, ValueError):
    pass
class InvalidProxyURL(InvalidURL):
    pass
class RequestsWarning(Warning):
    pass
//- web/errors.py
class Error(Exception):
    pass
def raise_for(status):
    pass
//- web/models.py
class Response:
    pass
class ResponseError(Exception):
    pass
//- web/handlers.py
class ErrorHandler:
    pass
//- web/constants.py
TIMEOUT = 3
//- src/FooException.java
public class FooException extends RuntimeException {}
"#,
        );
        let p = &f.snapshot.project;
        let got: Vec<(&str, bool)> = p
            .files
            .iter()
            .map(|file| (file.path.as_str(), declares_only_exceptions(p, file)))
            .collect();
        assert_eq!(
            got,
            [
                ("src/FooException.java", true),
                ("web/constants.py", false),
                ("web/errors.py", false),
                ("web/exceptions.py", true),
                ("web/handlers.py", false),
                ("web/models.py", false),
            ]
        );
    }

    #[test]
    fn roles() {
        let cases: &[(&str, f64)] = &[
            ("src/_pytest/main.py", 1.0),
            ("testing/test_main.py", 0.35),
            ("tests/unit/test_x.py", 0.35),
            ("pkg/conftest.py", 0.35),
            ("lib/util_test.go", 0.35),
            ("web/app.test.ts", 0.35),
            ("src/test/java/FooTest.java", 0.35),
            ("docs/conf.py", 0.5),
            ("examples/demo.py", 0.5),
            ("astropy/extern/jquery/data/js/jquery-3.1.1.js", 0.5),
            ("cextern/expat/lib/expat.h", 0.5),
            ("src/pip/_vendor/requests/api.py", 0.5),
            ("seaborn/external/husl.py", 0.5),
            ("lib/a.min.js", 0.5),
            ("release/fabfile.py", 0.5),
            ("src/release.py", 1.0),
            ("src/AutoMapperSamples/Mappers/IListSources.cs", 0.5),
            ("src/UnitTests/Bug/EnumBug.cs", 0.35),
            ("src/vendors.py", 1.0),
            ("src/contest.py", 1.0),
            ("src/attestation.py", 1.0),
        ];
        for (p, expected) in cases {
            assert_eq!(role_prior(p), *expected, "{p}");
        }
    }
}
