//! Hybrid search over definitions: several retrievers, one ranking.
//!
//! Each retriever ranks definitions (or a file's top level) its own way:
//!
//! - **bm25**: the tantivy chunk index ([`SearchIndex`]), for words in bodies,
//!   docs and signatures;
//! - **name**: definition names and qualified names, exact, prefix, and fuzzy
//!   (edit distance 1 from 4 characters, 2 from 8, case-insensitive), also on the
//!   camelCase/snake_case parts of a name, so `userName`, `get_usr_name` and
//!   `UserNameCache` all find `get_user_name`;
//! - **path**: query words against path segments and file stems, and paths the
//!   query names outright; a file found stands for its top-level definitions;
//! - **literal**: the query's phrases verbatim (a quoted string, an error
//!   message, the whole query when it is one short line), looked up in the files
//!   the others found, case- and whitespace-insensitively: the function that
//!   raises "quantity must be positive" says so word for word;
//! - **graph**: definitions next to the best hits of the others in the reference
//!   graph (what they call and what calls them), so the helper a found function
//!   leans on comes along;
//! - optionally one **extra** [`Retriever`] the caller brings, e.g. an
//!   [`EmbeddingRetriever`] over any [`Embedder`]. None is built in here: no
//!   model is needed to build, test or run (the binary's `--embeddings` plugs in
//!   an embeddings API).
//!
//! Ranks are fused by reciprocal-rank fusion, `Σ w_r / (60 + rank_r)`: scores of
//! different retrievers are not comparable, ranks are. The weights depend on what
//! the query is ([`mix_weights`], a pure function of [`QueryKind`]): a symbol
//! lookup trusts the name index, a path the path matcher, an error message the
//! literal-boosted BM25, a concept BM25 and the graph. Graph proximity runs second,
//! seeded by the fusion of the others.

use std::collections::{HashMap, HashSet};

use code_graph::{Snapshot, is_test_path};

use code_index::{DefId, Error, FileId, Project, Result, Sources};

use crate::{
    fusion,
    querytype::{QueryFeatures, QueryKind, analyze_query},
    search::{SearchIndex, split_identifier},
};
pub use protocol::{Matched, MixWeights, SearchHit, SearchResults};

/// The `k` of reciprocal-rank fusion: how flat the rank curve is (`fusion`
/// says why 60 here and 10 in `localize`).
const RRF_K: f64 = 60.0;
/// How many candidates each retriever hands to the fusion.
const DEPTH: usize = 100;
/// How many fused hits seed graph proximity.
const GRAPH_SEEDS: usize = 5;
/// How many of each retriever's hits lend their file to the phrase lookup.
const LITERAL_FILES: usize = 20;

/// A thing search can return: a definition, or a file's top level (module
/// docstring, imports, top-level statements).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Item {
    Def(DefId),
    File(FileId),
}

/// A retriever: a ranked list of items for a query, best first.
pub trait Retriever {
    /// A short stable name, reported in each hit's `matched` list.
    fn name(&self) -> &str;
    /// At most `limit` items, best first.
    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &str,
        features: &QueryFeatures,
        limit: usize,
    ) -> Result<Vec<Item>>;
}

/// Turns texts into vectors (a sentence-embedding model, a remote API). Vectors are
/// compared by cosine similarity.
pub trait Embedder {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
}

/// A dense retriever: every definition embedded once (path, name, signature, doc
/// line), the query embedded per search, nearest by cosine.
pub struct EmbeddingRetriever<E> {
    embedder: E,
    vectors: Vec<(Item, Vec<f32>)>,
}

impl<E: Embedder> EmbeddingRetriever<E> {
    /// Embeds every definition of `snapshot`, `batch` texts per call.
    pub fn build(embedder: E, snapshot: &Snapshot, batch: usize) -> Result<Self> {
        let project = &snapshot.project;
        let items: Vec<(Item, String)> =
            project.all_defs().map(|d| (Item::Def(d), def_text(project, d))).collect();
        let mut vectors = Vec::with_capacity(items.len());
        for chunk in items.chunks(batch.max(1)) {
            let texts: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
            let embedded = embedder.embed(&texts)?;
            if embedded.len() != texts.len() {
                return Err(Error::InvalidArgument(format!(
                    "the embedder returned {} vectors for {} texts",
                    embedded.len(),
                    texts.len()
                )));
            }
            vectors.extend(chunk.iter().map(|(i, _)| *i).zip(embedded));
        }
        Ok(EmbeddingRetriever { embedder, vectors })
    }
}

/// What a definition's vector is made of: its file's path, qualified name,
/// signature and doc line. The path is the context a general-purpose model
/// lacks in a bare `fit(self, data)`: with it, all-MiniLM-L6-v2 alone found the
/// gold file first in twice as many dev issues (docs/BENCHMARKS.md).
fn def_text(project: &Project, d: DefId) -> String {
    let def = project.def(d);
    let path = &project.file(d.file).path;
    let mut text = format!("{path}: {} {}", def.qualified_name, def.signature);
    if let Some(doc) = &def.doc {
        text.push(' ');
        text.push_str(doc);
    }
    text
}

impl<E: Embedder> Retriever for EmbeddingRetriever<E> {
    fn name(&self) -> &str {
        "embedding"
    }

    fn retrieve(
        &self,
        _snapshot: &Snapshot,
        query: &str,
        _features: &QueryFeatures,
        limit: usize,
    ) -> Result<Vec<Item>> {
        let q = self.embedder.embed(&[query])?.into_iter().next().unwrap_or_default();
        let mut scored: Vec<(f32, Item)> =
            self.vectors.iter().map(|(i, v)| (cosine(&q, v), *i)).filter(|s| s.0 > 0.0).collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        Ok(scored.into_iter().take(limit).map(|s| s.1).collect())
    }
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    // Vectors of two models (a cache from before a model change) do not compare.
    if a.len() != b.len() {
        return 0.0;
    }
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 { 0.0 } else { dot / (na * nb) }
}

/// How much each retriever counts for a kind of query. A policy, so a table.
pub fn mix_weights(kind: QueryKind) -> MixWeights {
    let w = |bm25, name, path, literal, graph, extra| MixWeights {
        bm25,
        name,
        path,
        literal,
        graph,
        extra,
    };
    match kind {
        // A name: the name index knows; text matches are mostly its uses.
        QueryKind::Symbol => w(1.0, 3.0, 0.3, 0.5, 0.3, 1.0),
        // A path: the file's definitions; names in the path may be names too.
        QueryKind::File => w(0.5, 0.5, 3.0, 0.3, 0.2, 0.5),
        // A message or a trace: its text is in the code that raises it, word for word.
        QueryKind::ErrorTrace => w(2.0, 1.0, 1.0, 3.0, 0.5, 1.0),
        // Words: bodies and docs, then what the found code leans on; a phrase
        // found verbatim is likely a message.
        QueryKind::Concept => w(2.0, 1.0, 0.3, 2.0, 0.7, 1.5),
    }
}

pub struct HybridOptions<'a> {
    /// Number of hits.
    pub k: usize,
    /// An extra retriever (embeddings), fused with weight [`MixWeights::extra`].
    pub extra: Option<&'a dyn Retriever>,
}

/// Hybrid search (see the module documentation). A query without a single word or
/// identifier is an [`Error::InvalidArgument`]; a query that matches nothing gives
/// no hits.
pub fn hybrid_search(
    snapshot: &Snapshot,
    search: &SearchIndex,
    sources: &dyn Sources,
    query: &str,
    opts: &HybridOptions<'_>,
) -> Result<SearchResults> {
    crate::querytype::check_query_size(query)?;
    if !query.chars().any(char::is_alphanumeric) {
        return Err(Error::InvalidArgument(format!(
            "the query {:?} has no words or identifiers to search for",
            query.trim()
        )));
    }
    let features = analyze_query(query);
    let weights = mix_weights(features.kind);
    let bm25 = Bm25Retriever { search };
    let names = NameRetriever;
    let paths = PathRetriever;
    // (retriever, weight, items best first, confidence of each item in 0..=1 or
    // empty for all 1): RRF sees ranks only, so a retriever that knows how sure it
    // is (an exact name against a fuzzy one) says so here.
    let mut lists: Vec<Ranked> = Vec::new();
    let mut first: Vec<(&dyn Retriever, f64)> = vec![(&bm25, weights.bm25), (&paths, weights.path)];
    if let Some(extra) = opts.extra {
        first.push((extra, weights.extra));
    }
    for (r, w) in first {
        let items = r.retrieve(snapshot, query, &features, DEPTH)?;
        lists.push((r.name().to_owned(), w, items, Vec::new()));
    }
    let scored = names.scored(snapshot, query, &features, DEPTH);
    let top = scored.first().map_or(1.0, |s| s.0.max(1e-9));
    lists.insert(
        1,
        (
            names.name().to_owned(),
            weights.name,
            scored.iter().map(|s| Item::Def(s.1)).collect(),
            scored.iter().map(|s| s.0 / top).collect(),
        ),
    );
    // Phrases are looked up in the files the others found, not in the whole tree.
    let mut files: Vec<FileId> = Vec::new();
    for (name, _, items, _) in &lists {
        // BM25 normalizes by length: the long function that raises a message can
        // sit below its file's shorter neighbours, so all of its files are read.
        let take = if name == "bm25" { items.len() } else { LITERAL_FILES };
        for item in items.iter().take(take) {
            let f = match item {
                Item::Def(d) => d.file,
                Item::File(f) => *f,
            };
            if !files.contains(&f) {
                files.push(f);
            }
        }
    }
    let literal = LiteralRetriever { sources, files };
    let items = literal.retrieve(snapshot, query, &features, DEPTH)?;
    lists.push((literal.name().to_owned(), weights.literal, items, Vec::new()));
    let seeds: Vec<(Item, f64)> = fuse(&lists).into_iter().take(GRAPH_SEEDS).collect();
    let graph = GraphRetriever { seeds };
    let items = graph.retrieve(snapshot, query, &features, DEPTH)?;
    lists.push((graph.name().to_owned(), weights.graph, items, Vec::new()));

    let fused = fuse(&lists);
    let project = &snapshot.project;
    let hits = fused
        .into_iter()
        .take(opts.k)
        .map(|(item, score)| {
            let matched = lists
                .iter()
                .filter_map(|(name, _, items, _)| {
                    let rank = items.iter().position(|i| *i == item)?;
                    Some(Matched { retriever: name.clone(), rank: rank as u32 + 1 })
                })
                .collect();
            let (path, qualified_name, kind, line, end_line) = describe_item(project, item);
            SearchHit { path, qualified_name, kind, line, end_line, score, matched }
        })
        .collect();
    Ok(SearchResults { query_kind: features.kind, weights, hits })
}

/// One retriever's answer in the fusion: name, weight, items best first, and
/// each item's confidence (empty: all 1).
type Ranked = (String, f64, Vec<Item>, Vec<f64>);

/// Reciprocal-rank fusion ([`fusion::vote`]), `Σ w · confidence / (60 + rank)`,
/// best first; ties by item order (path, then position).
fn fuse(lists: &[Ranked]) -> Vec<(Item, f64)> {
    let mut score: HashMap<Item, f64> = HashMap::new();
    for (_, w, items, confidence) in lists {
        if *w <= 0.0 {
            continue;
        }
        for (rank, item) in items.iter().enumerate() {
            let c = confidence.get(rank).copied().unwrap_or(1.0);
            *score.entry(*item).or_default() += fusion::vote(RRF_K, rank as u32 + 1, w * c);
        }
    }
    let mut out: Vec<(Item, f64)> = score.into_iter().collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

fn describe_item(project: &Project, item: Item) -> (String, String, String, u32, u32) {
    match item {
        Item::Def(d) => {
            let def = project.def(d);
            (
                project.file(d.file).path.clone(),
                def.qualified_name.clone(),
                def.kind.as_str().to_owned(),
                def.line,
                def.end_line,
            )
        }
        Item::File(f) => {
            let file = project.file(f);
            (file.path.clone(), file.path.clone(), "file".to_owned(), 1, file.lines.max(1))
        }
    }
}

/// BM25 over chunks; an error message's literals and a trace's frame functions
/// count double.
struct Bm25Retriever<'a> {
    search: &'a SearchIndex,
}

impl Retriever for Bm25Retriever<'_> {
    fn name(&self) -> &str {
        "bm25"
    }

    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &str,
        features: &QueryFeatures,
        limit: usize,
    ) -> Result<Vec<Item>> {
        let mut extra = String::new();
        for l in &features.literals {
            extra.push_str(l);
            extra.push('\n');
        }
        for f in features.paths.iter().filter_map(|p| p.function.as_deref()) {
            extra.push_str(f);
            extra.push('\n');
        }
        let hits = self.search.search_weighted(&[(query, 1.0), (&extra, 2.0)], limit, 64)?;
        let project = &snapshot.project;
        let mut out = Vec::with_capacity(hits.len());
        for h in hits {
            let Some(f) = project.file_id(&h.path) else { continue };
            let item = match h.ord {
                Some(ord) => match project.file(f).defs.get(ord as usize) {
                    // Otherwise the search index is behind this snapshot for that file.
                    Some(d) if d.qualified_name == h.qualified_name => {
                        Item::Def(DefId { file: f, ord })
                    }
                    _ => continue,
                },
                None => Item::File(f),
            };
            out.push(item);
        }
        Ok(out)
    }
}

/// The words a query offers for name matching: its identifiers (whole, and the
/// last segment of a dotted or `::` name), else its words (then `true`: prose).
fn query_terms(query: &str, features: &QueryFeatures) -> (Vec<String>, bool) {
    fn push(terms: &mut Vec<String>, t: &str) {
        let t = t.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
        if t.chars().filter(|c| c.is_alphanumeric()).count() >= 2 && !terms.iter().any(|x| x == t) {
            terms.push(t.to_owned());
        }
    }
    let mut terms: Vec<String> = Vec::new();
    for m in features.identifiers.iter().filter(|m| m.strength >= 0.5) {
        push(&mut terms, &m.text);
        if let Some(last) = m.text.rsplit(['.', ':']).next() {
            push(&mut terms, last);
        }
    }
    let prose = terms.is_empty();
    if prose {
        // Words of prose, not of the paths it names (the path retriever's).
        let mut query = query.to_owned();
        for p in &features.paths {
            query = query.replace(&p.path, " ");
        }
        for w in query.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !STOP.contains(&w.to_ascii_lowercase().as_str()) {
                push(&mut terms, w);
            }
        }
    }
    terms.truncate(16);
    (terms, prose)
}

/// Prose words that name nothing in code.
const STOP: &[&str] = &[
    "the", "a", "an", "and", "or", "of", "in", "on", "to", "for", "is", "are", "be", "with",
    "where", "what", "how", "which", "when", "why", "does", "do", "it", "this", "that", "from",
    "by", "as", "at", "into", "we", "i",
];

/// Names, exact to fuzzy.
struct NameRetriever;

/// A query term, with what [`name_score`] compares against every name computed once.
struct Term {
    raw: String,
    lower: String,
    /// Lowercased with `::` as `.`, when the term is qualified (`Cart.total`).
    dotted: Option<String>,
    parts: Vec<String>,
    chars: usize,
}

impl Term {
    fn new(raw: &str) -> Term {
        let lower = raw.to_lowercase();
        let tq = lower.replace("::", ".");
        Term {
            raw: raw.to_owned(),
            dotted: tq.contains('.').then_some(tq),
            parts: split_identifier(raw).into_iter().map(|(_, p)| p.to_lowercase()).collect(),
            chars: lower.chars().count(),
            lower,
        }
    }
}

/// A definition's name, lowercased once, its parts split when first needed.
struct Name<'a> {
    raw: &'a str,
    lower: String,
    parts: std::cell::OnceCell<Vec<String>>,
}

impl<'a> Name<'a> {
    fn new(raw: &'a str) -> Name<'a> {
        Name { raw, lower: raw.to_lowercase(), parts: std::cell::OnceCell::new() }
    }

    fn parts(&self) -> &[String] {
        self.parts.get_or_init(|| {
            split_identifier(self.raw).into_iter().map(|(_, p)| p.to_lowercase()).collect()
        })
    }
}

/// How well a query term matches a name: 1.0 exact (case-insensitive), 0.9 the
/// qualified name, then prefix, fuzzy, and parts.
fn name_score(term: &Term, name: &Name<'_>, qualified: &str) -> f64 {
    let (t, n) = (term.lower.as_str(), name.lower.as_str());
    if term.raw == name.raw {
        return 1.05;
    }
    if t == n {
        return 1.0;
    }
    // `Cart.total` for `shop.cart.Cart.total`, and `shop.cart.Cart.total` for a
    // qualified name that starts at the file (`Cart.total`).
    if let Some(tq) = &term.dotted {
        let q = qualified.to_lowercase().replace("::", ".");
        if q == *tq
            || q.ends_with(&format!(".{tq}"))
            || (q.contains('.') && tq.ends_with(&format!(".{q}")))
        {
            return 1.0;
        }
    }
    let tlen = term.chars;
    if tlen >= 3 && n.starts_with(t) {
        // A prefix that is most of the name is nearly exact.
        return 0.6 + 0.2 * tlen as f64 / n.chars().count() as f64;
    }
    let max = max_edits(tlen);
    if max > 0
        && let Some(d) = stdx::edit_distance_within(t, n, max)
    {
        return 0.65 - 0.1 * d as f64;
    }
    // Parts: the term's parts among the name's, each exact or one edit away.
    let term_parts = &term.parts;
    if term_parts.len() < 2 && name.parts().len() < 2 {
        return 0.0;
    }
    let name_parts = name.parts();
    let mut hit = 0.0;
    for tp in term_parts {
        let best = name_parts
            .iter()
            .map(|np| {
                if np == tp {
                    1.0
                } else if tp.len() >= 4 && stdx::edit_distance_within(tp, np, 1).is_some() {
                    0.6
                } else {
                    0.0
                }
            })
            .fold(0.0, f64::max);
        hit += best;
    }
    if hit == 0.0 {
        return 0.0;
    }
    0.45 * hit / term_parts.len().max(name_parts.len()) as f64
}

/// Edits allowed for a term of `len` characters: short names have too many
/// neighbours.
fn max_edits(len: usize) -> usize {
    match len {
        0..=3 => 0,
        4..=7 => 1,
        _ => 2,
    }
}

/// Tie-breaks between equally named definitions: code before tests, types and
/// functions before variables, central files first.
fn def_prior(snapshot: &Snapshot, d: DefId) -> f64 {
    let project = &snapshot.project;
    let def = project.def(d);
    let role = if is_test_path(&project.file(d.file).path) { 0.5 } else { 1.0 };
    let kind = match def.kind.as_str() {
        "variable" | "constant" | "field" | "property" => 0.7,
        _ => 1.0,
    };
    let rank = snapshot.file_rank.get(d.file as usize).copied().unwrap_or(0.0);
    role * kind * (1.0 + rank)
}

impl NameRetriever {
    /// Definitions with their match score (1.05 exact, down to parts), best first.
    fn scored(
        &self,
        snapshot: &Snapshot,
        query: &str,
        features: &QueryFeatures,
        limit: usize,
    ) -> Vec<(f64, DefId)> {
        let (terms, prose) = query_terms(query, features);
        if terms.is_empty() {
            return Vec::new();
        }
        let terms: Vec<Term> = terms.iter().map(|t| Term::new(t)).collect();
        let project = &snapshot.project;
        // Score each distinct name once (thousands of `__init__`s); qualified names
        // matter only for a dotted term.
        let dotted = terms.iter().any(|t| t.raw.contains(['.', ':']));
        let mut cache: HashMap<(u32, &str), f64> = HashMap::new();
        let mut scored: Vec<(f64, DefId)> = Vec::new();
        for d in project.all_defs() {
            let def = project.def(d);
            let key = (def.name, if dotted { def.qualified_name.as_str() } else { "" });
            let s = *cache.entry(key).or_insert_with(|| {
                let name = Name::new(project.names.name(def.name));
                let mut best = 0.0f64;
                let mut sum = 0.0;
                let mut matched = 0;
                for t in &terms {
                    let s = name_score(t, &name, &def.qualified_name);
                    best = best.max(s);
                    sum += s;
                    matched += usize::from(s > 0.0);
                }
                if prose && terms.len() > 1 && matched < 2 {
                    // One plain word in a sentence naming a definition is chance.
                    return 0.0;
                }
                // The best term decides; other terms matching too add a little.
                best + 0.1 * (sum - best)
            });
            if s > 0.0 {
                scored.push((s * def_prior(snapshot, d), d));
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(limit);
        scored
    }
}

impl Retriever for NameRetriever {
    fn name(&self) -> &str {
        "name"
    }

    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &str,
        features: &QueryFeatures,
        limit: usize,
    ) -> Result<Vec<Item>> {
        Ok(self
            .scored(snapshot, query, features, limit)
            .into_iter()
            .map(|s| Item::Def(s.1))
            .collect())
    }
}

/// Files by path; each found file stands for its top level and its top-level
/// definitions.
struct PathRetriever;

impl Retriever for PathRetriever {
    fn name(&self) -> &str {
        "path"
    }

    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &str,
        features: &QueryFeatures,
        limit: usize,
    ) -> Result<Vec<Item>> {
        let project = &snapshot.project;
        let mentions: Vec<String> = features
            .paths
            .iter()
            .map(|p| p.path.trim_start_matches("./").to_lowercase())
            .filter(|p| !p.is_empty())
            .collect();
        let words: Vec<String> = query
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map(str::to_lowercase)
            .filter(|w| w.len() >= 3 && !STOP.contains(&w.as_str()))
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        let mut files: Vec<(f64, FileId)> = Vec::new();
        for (f, file) in project.files.iter().enumerate() {
            let path = file.path.to_lowercase();
            let mut score = 0.0;
            for m in &mentions {
                if path == *m || path.ends_with(&format!("/{m}")) {
                    score += 3.0;
                } else if path.contains(m.as_str()) {
                    score += 1.0;
                }
            }
            let segments: Vec<&str> = path.split('/').collect();
            let stem = segments.last().map_or("", |s| s.split('.').next().unwrap_or(s));
            // Named paths are precise; words only when there are none.
            for w in words.iter().filter(|_| mentions.is_empty()) {
                if stem == w {
                    score += 1.0;
                } else if segments[..segments.len() - 1].iter().any(|s| s == w) {
                    score += 0.5;
                } else if stem.split(['_', '-']).any(|p| p == w)
                    || (w.len() >= 5 && stdx::edit_distance_within(w, stem, 1).is_some())
                {
                    score += 0.4;
                }
            }
            if score > 0.0 {
                let role = if is_test_path(&file.path) { 0.8 } else { 1.0 };
                files.push((score * role, f as FileId));
            }
        }
        files.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut out = Vec::new();
        for (_, f) in files {
            out.push(Item::File(f));
            let defs = &project.file(f).defs;
            out.extend(
                (0..defs.len() as u32)
                    .filter(|&ord| defs[ord as usize].parent.is_none())
                    .map(|ord| Item::Def(DefId { file: f, ord })),
            );
            if out.len() >= limit {
                break;
            }
        }
        out.truncate(limit);
        Ok(out)
    }
}

/// Phrases of the query found verbatim in the candidate files; each occurrence
/// stands for the innermost definition around it (or the file's top level).
struct LiteralRetriever<'a> {
    sources: &'a dyn Sources,
    files: Vec<FileId>,
}

/// Lowercase with every run of whitespace one space: code wraps and indents
/// messages, queries paste them with their own spacing.
fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// The phrases worth finding word for word: quoted literals, the message of an
/// `XxxError: message` line, and the whole query when it is one short line of
/// several words. Shortest useful phrase: 8 characters.
fn phrases(query: &str, features: &QueryFeatures) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |p: &str| {
        let p = normalize(p.trim().trim_matches(|c: char| "\"'`.:".contains(c)));
        if p.len() >= 8 && !out.contains(&p) {
            out.push(p);
        }
    };
    for l in &features.literals {
        push(l);
    }
    for line in query.lines() {
        if let Some((head, message)) = line.split_once(": ") {
            let head = head.trim();
            if ["Error", "Exception", "Warning"].iter().any(|s| head.ends_with(s)) {
                push(message);
            }
        }
    }
    let trimmed = query.trim();
    if !trimmed.contains('\n') && trimmed.len() <= 160 && trimmed.split_whitespace().count() >= 3 {
        push(trimmed);
    }
    out
}

impl Retriever for LiteralRetriever<'_> {
    fn name(&self) -> &str {
        "literal"
    }

    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &str,
        features: &QueryFeatures,
        limit: usize,
    ) -> Result<Vec<Item>> {
        let phrases = phrases(query, features);
        if phrases.is_empty() {
            return Ok(Vec::new());
        }
        let project = &snapshot.project;
        let mut scored: Vec<(usize, Item)> = Vec::new();
        for &f in &self.files {
            let file = project.file(f);
            let Some(bytes) = self.sources.read(&file.path) else { continue };
            let text = String::from_utf8_lossy(&bytes);
            // Normalized text with the line of each of its bytes.
            let mut norm = String::with_capacity(text.len());
            let mut line_of: Vec<u32> = Vec::with_capacity(text.len());
            let mut line = 1u32;
            let mut space = true;
            for c in text.chars() {
                if c.is_whitespace() {
                    if !space {
                        norm.push(' ');
                        line_of.push(line);
                        space = true;
                    }
                    if c == '\n' {
                        line += 1;
                    }
                    continue;
                }
                space = false;
                for l in c.to_lowercase() {
                    norm.push(l);
                    line_of.extend(std::iter::repeat_n(line, l.len_utf8()));
                }
            }
            let mut seen: HashSet<Item> = HashSet::new();
            for p in &phrases {
                for (at, _) in norm.match_indices(p.as_str()) {
                    let item = match project.def_at(f, line_of[at]) {
                        Some(d) => Item::Def(d),
                        None => Item::File(f),
                    };
                    if seen.insert(item) {
                        scored.push((p.len(), item));
                    }
                }
            }
        }
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        Ok(scored.into_iter().take(limit).map(|s| s.1).collect())
    }
}

/// Neighbours of the seeds in the reference graph: what they reference (full
/// weight) and what references them (half), weighted by the seed's fused score
/// and the edge's.
struct GraphRetriever {
    seeds: Vec<(Item, f64)>,
}

impl Retriever for GraphRetriever {
    fn name(&self) -> &str {
        "graph"
    }

    fn retrieve(
        &self,
        snapshot: &Snapshot,
        _query: &str,
        _features: &QueryFeatures,
        limit: usize,
    ) -> Result<Vec<Item>> {
        let seed: HashMap<Item, f64> = self.seeds.iter().copied().collect();
        if seed.is_empty() {
            return Ok(Vec::new());
        }
        let mut score: HashMap<Item, f64> = HashMap::new();
        // One pass over every edge: streamed from a stored snapshot, not
        // decoded into a list a one-shot search would hold for nothing.
        snapshot.graphs.for_each_edge(|e| {
            let from = e.from.map_or(Item::File(e.from_file), Item::Def);
            let to = Item::Def(e.to);
            if from == to {
                return;
            }
            if let Some(s) = seed.get(&from)
                && !seed.contains_key(&to)
            {
                *score.entry(to).or_default() += s * e.weight;
            }
            if let Some(s) = seed.get(&to)
                && !seed.contains_key(&from)
            {
                *score.entry(from).or_default() += 0.5 * s * e.weight;
            }
        });
        let mut out: Vec<(f64, Item)> = score.into_iter().map(|(i, s)| (s, i)).collect();
        out.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        Ok(out.into_iter().take(limit).map(|s| s.1).collect())
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::{Expect, expect};

    use super::*;
    use crate::{
        localize::{Evidence, FileResult, LocalizeOptions, localize},
        querytype::MAX_QUERY_BYTES,
    };

    /// A fixture on disk with its search index, as the CLI would have it.
    struct Searchable {
        snapshot: Snapshot,
        sources: HashMap<String, String>,
        search: SearchIndex,
        _dir: tempfile::TempDir,
    }

    fn searchable(text: &str) -> Searchable {
        let (fx, dir) = crate::search::fixture_on_disk(text);
        let mut search = SearchIndex::open(&dir.path().join(".ironbees/search")).unwrap();
        search.sync_files(dir.path(), &fx.snapshot.project, &HashMap::new()).unwrap();
        Searchable { snapshot: fx.snapshot, sources: fx.sources, search, _dir: dir }
    }

    impl Searchable {
        fn run(&self, query: &str, extra: Option<&dyn Retriever>) -> SearchResults {
            hybrid_search(
                &self.snapshot,
                &self.search,
                &self.sources,
                query,
                &HybridOptions { k: 5, extra },
            )
            .unwrap()
        }

        fn check(&self, query: &str, expect: Expect) {
            let r = self.run(query, None);
            let mut s = format!("{:?}\n", r.query_kind);
            for h in &r.hits {
                let m: Vec<String> =
                    h.matched.iter().map(|m| format!("{}#{}", m.retriever, m.rank)).collect();
                writeln!(
                    s,
                    "{}:{} {} {}  [{}]",
                    h.path,
                    h.line,
                    h.kind,
                    h.qualified_name,
                    m.join(" ")
                )
                .unwrap();
            }
            expect.assert_eq(&s);
        }
    }

    const SHOP: &str = r#"
        //- shop/cart.py
        """Shopping cart."""
        from shop.pricing import apply_discount

        class ShoppingCart:
            def add_item(self, item, quantity):
                """Adds an item to the cart."""
                if quantity <= 0:
                    raise ValueError("quantity must be positive")
                self.items.append((item, quantity))

            def total(self):
                return apply_discount(sum(p * q for p, q in self.items))
        //- shop/pricing.py
        def apply_discount(amount):
            """Takes the seasonal discount off an amount."""
            return amount * 0.9

        def round_currency(amount):
            return round(amount, 2)
        //- shop/shipping.py
        def estimate_delivery(address):
            """How many days a parcel takes to reach the address."""
            return 3 if address.domestic else 10
        //- tests/test_cart.py
        from shop.cart import ShoppingCart

        def test_add_item():
            ShoppingCart().add_item("book", 1)
        "#;

    #[test]
    fn exact_prefix_and_typo_lookups_find_the_definition() {
        let s = searchable(SHOP);
        s.check(
            "ShoppingCart",
            expect![[r#"
                Symbol
                shop/cart.py:4 class ShoppingCart  [bm25#1 name#1]
                tests/test_cart.py:3 function test_add_item  [bm25#6 graph#1]
                shop/pricing.py:1 function apply_discount  [bm25#9 graph#2]
                shop/cart.py:5 method ShoppingCart.add_item  [bm25#2]
                shop/cart.py:1 file shop/cart.py  [bm25#3]
            "#]],
        );
        s.check(
            "apply_disc",
            expect![[r#"
                Symbol
                shop/pricing.py:1 function apply_discount  [bm25#1 name#1]
                shop/cart.py:1 file shop/cart.py  [bm25#2]
                shop/cart.py:11 method ShoppingCart.total  [bm25#3]
            "#]],
        );
        s.check(
            "apply_dicsount",
            expect![[r#"
                Symbol
                shop/pricing.py:1 function apply_discount  [bm25#1 name#1]
                shop/cart.py:1 file shop/cart.py  [bm25#2]
                shop/cart.py:11 method ShoppingCart.total  [bm25#3]
            "#]],
        );
        s.check(
            "estimateDelivery",
            expect![[r#"
                Symbol
                shop/shipping.py:1 function estimate_delivery  [bm25#1 name#1]
            "#]],
        );
    }

    #[test]
    fn concept_path_and_error_queries() {
        let s = searchable(SHOP);
        s.check(
            "how many days does a parcel take to arrive",
            expect![[r#"
                Concept
                shop/shipping.py:1 function estimate_delivery  [bm25#1]
                shop/pricing.py:1 function apply_discount  [bm25#2]
                shop/cart.py:11 method ShoppingCart.total  [graph#1]
                shop/cart.py:1 file shop/cart.py  [graph#2]
            "#]],
        );
        s.check(
            "shop/pricing.py",
            expect![[r#"
                File
                shop/pricing.py:1 file shop/pricing.py  [bm25#2 path#1]
                shop/pricing.py:1 function apply_discount  [bm25#6 path#2]
                shop/pricing.py:5 function round_currency  [bm25#7 path#3]
                tests/test_cart.py:1 file tests/test_cart.py  [bm25#5 graph#3]
                shop/cart.py:11 method ShoppingCart.total  [bm25#8 graph#1]
            "#]],
        );
        // The same message without its exception class reads as words; the phrase
        // still finds where it is raised.
        s.check(
            "quantity must be positive",
            expect![[r#"
                Concept
                shop/cart.py:5 method ShoppingCart.add_item  [bm25#1 literal#1]
                tests/test_cart.py:3 function test_add_item  [graph#1]
            "#]],
        );
        s.check(
            "ValueError: quantity must be positive",
            expect![[r#"
                ErrorTrace
                shop/cart.py:5 method ShoppingCart.add_item  [bm25#1 literal#1]
                tests/test_cart.py:3 function test_add_item  [graph#1]
            "#]],
        );
    }

    #[test]
    fn graph_proximity_lifts_a_neighbour() {
        let s = searchable(SHOP);
        // Nothing in `round_currency` or `apply_discount` says "total"; only the
        // call from ShoppingCart.total ties apply_discount to it.
        let r = s.run("ShoppingCart.total", None);
        let hit = r.hits.iter().find(|h| h.qualified_name == "apply_discount").unwrap();
        assert!(hit.matched.iter().any(|m| m.retriever == "graph"), "{hit:?}");
        assert!(!r.hits.iter().any(|h| h.qualified_name == "round_currency"), "{r:?}");
    }

    /// Finds what nothing else finds: the test fails if the fusion ignores it.
    struct Oracle(Item);
    impl Retriever for Oracle {
        fn name(&self) -> &str {
            "oracle"
        }
        fn retrieve(
            &self,
            _: &Snapshot,
            _: &str,
            _: &QueryFeatures,
            _: usize,
        ) -> Result<Vec<Item>> {
            Ok(vec![self.0])
        }
    }

    #[test]
    fn an_extra_retriever_is_fused() {
        let s = searchable(SHOP);
        let p = &s.snapshot.project;
        let target = p.all_defs().find(|&d| p.def(d).qualified_name == "round_currency").unwrap();
        let query = "zebra";
        assert!(s.run(query, None).hits.is_empty());
        let oracle = Oracle(Item::Def(target));
        let r = s.run(query, Some(&oracle));
        assert_eq!(r.hits.len(), 1, "{r:?}");
        assert_eq!(r.hits[0].qualified_name, "round_currency");
        assert_eq!(r.hits[0].matched, [Matched { retriever: "oracle".into(), rank: 1 }]);
    }

    #[test]
    fn localize_fuses_an_extra_retriever_as_one_more_whole_ranking() {
        let s = searchable(SHOP);
        let p = &s.snapshot.project;
        let def = |name: &str| p.all_defs().find(|&d| p.def(d).qualified_name == name).unwrap();
        let weighted = |query: &str, extra: Option<&dyn Retriever>, extra_weight| {
            let opts = LocalizeOptions { k: 5, extra, extra_weight, ..Default::default() };
            localize(&s.snapshot, &s.search, std::path::Path::new("."), query, &opts).unwrap()
        };
        let run = |query: &str, extra: Option<&dyn Retriever>| weighted(query, extra, None);
        let paths = |r: &[FileResult]| r.iter().map(|f| f.path.clone()).collect::<Vec<_>>();
        let query = "the quantity must be positive when adding to the cart";
        let alone = run(query, None);
        assert_eq!(alone[0].path, "shop/cart.py", "{:?}", paths(&alone));
        assert!(!paths(&alone).contains(&"shop/shipping.py".to_owned()), "{:?}", paths(&alone));

        // A file only the extra retriever finds: its first place is worth the
        // signals' first place, and the tie keeps the signals' file ahead.
        let oracle = Oracle(Item::Def(def("estimate_delivery")));
        let fused = run(query, Some(&oracle));
        assert_eq!(paths(&fused)[..2], ["shop/cart.py", "shop/shipping.py"], "{fused:?}");
        assert!(
            fused[1].evidence.iter().any(|e| matches!(e,
                Evidence::Similar { retriever, symbol, rank: 1, .. }
                    if retriever == "oracle" && symbol == "estimate_delivery")),
            "{:?}",
            fused[1].evidence
        );
        // Both rankings agreeing on a file lifts it over the signals' own first.
        let second = alone[1].path.clone();
        let in_second = p.all_defs().find(|&d| p.file(d.file).path == second).unwrap();
        let fused = run(query, Some(&Oracle(Item::Def(in_second))));
        assert_eq!(fused[0].path, second, "{:?}", paths(&fused));
        assert_eq!(fused[1].path, "shop/cart.py");
        assert_eq!(fused.len(), alone.len(), "no file lost or repeated");

        // A weaker model's vote (llm.embeddings.weight) counts less: its first
        // place no longer comes second.
        let oracle = Oracle(Item::Def(def("estimate_delivery")));
        let fused = weighted(query, Some(&oracle), Some(0.5));
        assert_eq!(paths(&fused)[..2], paths(&alone)[..2], "{:?}", paths(&fused));
        let at = paths(&fused).iter().position(|f| f == "shop/shipping.py");
        assert!(at.is_none_or(|i| i > 1), "{:?}", paths(&fused));

        // The role prior weighs the model's vote as it weighs the signals': its
        // first place adds a third as much to a test as to the code.
        let gain = |file: &str, def_name: &str| {
            let fused = run(query, Some(&Oracle(Item::Def(def(def_name)))));
            let after = fused.iter().find(|f| f.path == file).unwrap().score;
            // The signals' vote for the file, from its place without the model.
            let place = paths(&alone).iter().position(|f| f == file).unwrap() + 1;
            after - 1.0 / (10.0 + place as f64)
        };
        assert_eq!(paths(&alone)[1], "tests/test_cart.py");
        let (test, code) =
            (gain("tests/test_cart.py", "test_add_item"), gain("shop/cart.py", "ShoppingCart"));
        assert!((test / code - 0.35).abs() < 1e-9, "{test} against {code}");
    }

    /// A deterministic embedder: letter-trigram counts hashed into 64 dimensions.
    struct Trigrams;
    impl Embedder for Trigrams {
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            Ok(texts
                .iter()
                .map(|t| {
                    let mut v = vec![0.0; 64];
                    let chars: Vec<char> =
                        t.to_lowercase().chars().filter(|c| c.is_alphanumeric()).collect();
                    for w in chars.windows(3) {
                        let h =
                            w.iter().fold(7u32, |h, c| h.wrapping_mul(31).wrapping_add(*c as u32));
                        v[(h % 64) as usize] += 1.0;
                    }
                    v
                })
                .collect())
        }
    }

    #[test]
    fn the_embedding_retriever_ranks_by_similarity_and_is_fused() {
        let s = searchable(SHOP);
        let emb = EmbeddingRetriever::build(Trigrams, &s.snapshot, 2).unwrap();
        let features = analyze_query("seasonal discount");
        let items = emb.retrieve(&s.snapshot, "seasonal discount", &features, 3).unwrap();
        let first = match items[0] {
            Item::Def(d) => s.snapshot.project.def(d).qualified_name.clone(),
            Item::File(_) => panic!("definitions only"),
        };
        assert_eq!(first, "apply_discount");
        let r = s.run("seasonal discount", Some(&emb));
        assert!(r.hits[0].matched.iter().any(|m| m.retriever == "embedding"), "{r:?}");
    }

    #[test]
    fn queries_without_words_are_invalid_and_unmatched_ones_empty() {
        let s = searchable(SHOP);
        let opts = HybridOptions { k: 5, extra: None };
        let err = hybrid_search(&s.snapshot, &s.search, &s.sources, " ?! ", &opts).unwrap_err();
        assert_eq!(err.code(), protocol::ErrorCode::InvalidArgument);
        assert!(s.run("xylophone", None).hits.is_empty());
        // A log dump is refused before any retriever runs; so are localize and the
        // repo map, through the same check.
        let dump = "discount ".repeat(MAX_QUERY_BYTES / 9 + 1);
        let err = hybrid_search(&s.snapshot, &s.search, &s.sources, &dump, &opts).unwrap_err();
        assert_eq!(err.code(), protocol::ErrorCode::InvalidArgument);
        assert!(err.to_string().contains("byte limit"), "{err}");
        let lopts = LocalizeOptions { k: 5, ..Default::default() };
        let err = localize(&s.snapshot, &s.search, std::path::Path::new("."), &dump, &lopts);
        assert!(err.unwrap_err().to_string().contains("byte limit"));
    }

    #[test]
    fn weights_by_query_kind() {
        // (kind, the retriever that must weigh most)
        let cases = [
            (QueryKind::Symbol, "name"),
            (QueryKind::File, "path"),
            (QueryKind::ErrorTrace, "literal"),
            (QueryKind::Concept, "bm25"),
        ];
        for (kind, top) in cases {
            let w = mix_weights(kind);
            let all = [
                ("bm25", w.bm25),
                ("name", w.name),
                ("path", w.path),
                ("literal", w.literal),
                ("graph", w.graph),
            ];
            let of = |n: &str| all.iter().find(|a| a.0 == n).unwrap().1;
            assert!(all.iter().all(|a| of(top) >= a.1), "{kind:?}: {top} weighs most");
            assert!(all.iter().all(|(_, x)| *x > 0.0), "{kind:?}: every retriever counts");
        }
        // Concepts lean on the graph more than lookups do.
        assert!(mix_weights(QueryKind::Concept).graph > mix_weights(QueryKind::Symbol).graph);
    }

    #[test]
    fn name_scores() {
        let s = |t: &str, n: &str, q: &str| name_score(&Term::new(t), &Name::new(n), q);
        let cases: &[(&str, &str, &str, f64)] = &[
            ("parse", "parse", "parse", 1.05),
            ("Parse", "parse", "parse", 1.0),
            ("Cart.total", "total", "Cart.total", 1.0),
            ("a::b::total", "total", "b.total", 1.0),
            ("apply_dicsount", "apply_discount", "apply_discount", 0.45),
            ("parsr", "parse", "parse", 0.55),
            ("par", "parse", "parse", 0.6 + 0.2 * 3.0 / 5.0),
            ("pa", "parse", "parse", 0.0),
            ("userName", "get_user_name", "get_user_name", 0.3),
            ("zzz", "parse", "parse", 0.0),
        ];
        for (t, n, q, want) in cases {
            assert!((s(t, n, q) - want).abs() < 1e-9, "{t} vs {n}: {} != {want}", s(t, n, q));
        }
    }
}
