//! BM25 search over symbol-level chunks, with tantivy.
//!
//! Every definition is one document: its name, qualified name, signature, first doc
//! line and its own text (its body without the bodies of definitions nested in it,
//! which are documents of their own); every file adds one document for what lies
//! outside its definitions (module docstring, imports, top-level code). The path is
//! indexed too.
//!
//! Code needs its own tokenizer: `getUserName`, `get_user_name` and `GetUserName`
//! must all match "user name" and each other, and the whole identifier must still
//! match exactly. [`CodeTokenizer`] emits every identifier whole and, when it is a
//! compound, its camelCase/snake_case/digit parts; English stemming and a stop list
//! of English and keyword noise follow.
//!
//! The index lives in `.ironbees/search/` and is brought up to date from the store by
//! [`SearchIndex::sync`], file by file (delete by path, add the file's chunks), so
//! after a one-file edit only that file is re-indexed.

use std::{
    collections::{HashMap, HashSet},
    path::{Path, PathBuf},
};

use tantivy::{
    DocAddress, Index, IndexReader, IndexWriter, ReloadPolicy, Score, TantivyDocument, Term,
    collector::TopDocs,
    query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery},
    schema::{
        Field, IndexRecordOption, NumericOptions, STORED, STRING, Schema, TextFieldIndexing,
        TextOptions, Value,
    },
    tokenizer::{
        Language as StemLanguage, LowerCaser, RawTokenizer, Stemmer, TextAnalyzer, Token,
        TokenStream, Tokenizer,
    },
};

use code_graph::Snapshot;
use code_index::{Error, Project, ProjectFile, Result};

/// Bump when the schema or the tokenizer changes: the index is rebuilt.
const SEARCH_VERSION: &str = "ironbees-search-2";

/// One search hit: a definition, or a file's top level (`ord` None).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ChunkHit {
    pub path: String,
    pub ord: Option<u32>,
    pub qualified_name: String,
    pub kind: String,
    pub line: u32,
    pub end_line: u32,
    pub score: f32,
}

#[derive(Clone, Copy)]
struct Fields {
    path: Field,
    path_text: Field,
    name: Field,
    qualified: Field,
    signature: Field,
    doc: Field,
    body: Field,
    /// The whole file, on the file's own document only (file-level BM25).
    file_body: Field,
    kind: Field,
    line: Field,
    end_line: Field,
    ord: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = |stored: bool| {
        let idx = TextFieldIndexing::default()
            .set_tokenizer("code")
            .set_index_option(IndexRecordOption::WithFreqs);
        let o = TextOptions::default().set_indexing_options(idx);
        if stored { o.set_stored() } else { o }
    };
    let num = NumericOptions::default().set_stored();
    let fields = Fields {
        path: b.add_text_field("path", STRING | STORED),
        path_text: b.add_text_field("path_text", text(false)),
        name: b.add_text_field("name", text(false)),
        qualified: b.add_text_field("qualified", text(true)),
        signature: b.add_text_field("signature", text(false)),
        doc: b.add_text_field("doc", text(false)),
        body: b.add_text_field("body", text(false)),
        file_body: b.add_text_field("file_body", text(false)),
        kind: b.add_text_field("kind", STRING | STORED),
        line: b.add_u64_field("line", num.clone()),
        end_line: b.add_u64_field("end_line", num.clone()),
        ord: b.add_i64_field("ord", num),
    };
    (b.build(), fields)
}

/// Splits identifiers into tokens, the whole identifier then its parts, and
/// normalizes each (lower case, stop words dropped, English stem).
///
/// The normalization is tantivy's own filters, run once per distinct identifier:
/// a project repeats its identifiers so often that stemming each occurrence was a
/// fifth of a cold `index`'s CPU (Django: 2,879 files). Each identifier's parts and
/// their normal forms are kept in a bounded cache per thread (shared by every field
/// a thread indexes), so the tokens are exactly those of the filter chain.
#[derive(Default)]
pub struct CodeTokenizer {
    tokens: Vec<Token>,
    /// How many of `tokens` the current stream holds (the rest keep their
    /// strings' capacity for reuse).
    len: usize,
}

impl Clone for CodeTokenizer {
    /// A clone shares nothing: tokens are per stream.
    fn clone(&self) -> CodeTokenizer {
        CodeTokenizer::default()
    }
}

/// One token of an identifier: its byte range in the identifier and its normal
/// form, None for a stop word (which still takes a position, as in the filter
/// chain).
struct Part {
    from: u32,
    to: u32,
    text: Option<Box<str>>,
}

/// Distinct identifiers kept per thread; past it the cache starts over, so a huge
/// project's vocabulary does not grow the index's memory without bound.
const CACHE_WORDS: usize = 200_000;

/// Identifiers come from the project's files, so the hasher is seeded per process
/// (foldhash's `RandomState`): a crafted file cannot choose colliding keys.
struct NormalCache {
    words: HashMap<Box<str>, Box<[Part]>, foldhash::fast::RandomState>,
    normalizer: TextAnalyzer,
}

impl NormalCache {
    fn new() -> NormalCache {
        let normalizer = TextAnalyzer::builder(RawTokenizer::default())
            .filter(LowerCaser)
            .filter(tantivy::tokenizer::StopWordFilter::remove(
                STOP_WORDS.iter().map(|s| (*s).to_owned()),
            ))
            .filter(Stemmer::new(StemLanguage::English))
            .build();
        NormalCache { words: HashMap::default(), normalizer }
    }

    /// The tokens of one identifier: itself, then its parts when it is a compound.
    fn parts(&mut self, word: &str) -> &[Part] {
        if !self.words.contains_key(word) {
            if self.words.len() >= CACHE_WORDS {
                self.words.clear();
            }
            let parts = self.normalize(word);
            return self.words.entry(word.into()).or_insert(parts);
        }
        &self.words[word]
    }

    fn normalize(&mut self, word: &str) -> Box<[Part]> {
        let mut spans = vec![(0, word.len())];
        let split = split_identifier(word);
        if split.len() > 1 {
            spans.extend(split.into_iter().map(|(off, part)| (off, off + part.len())));
        }
        spans
            .into_iter()
            .map(|(from, to)| {
                let mut stream = self.normalizer.token_stream(&word[from..to]);
                let text = stream.advance().then(|| stream.token().text.as_str().into());
                Part { from: from as u32, to: to as u32, text }
            })
            .collect()
    }
}

thread_local! {
    static NORMAL_CACHE: std::cell::RefCell<NormalCache> =
        std::cell::RefCell::new(NormalCache::new());
}

pub struct VecTokenStream<'a> {
    tokens: &'a mut [Token],
    index: usize,
}

impl TokenStream for VecTokenStream<'_> {
    fn advance(&mut self) -> bool {
        self.index += 1;
        self.index <= self.tokens.len()
    }
    fn token(&self) -> &Token {
        &self.tokens[self.index - 1]
    }
    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.index - 1]
    }
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = VecTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> VecTokenStream<'a> {
        let CodeTokenizer { tokens, len } = self;
        *len = 0;
        let mut position = 0usize;
        NORMAL_CACHE.with_borrow_mut(|cache| {
            for (start, word) in identifier_runs(text) {
                if word.len() > 80 {
                    continue; // base64, minified code, hashes: noise
                }
                for part in cache.parts(word) {
                    if let Some(normal) = &part.text {
                        if *len == tokens.len() {
                            tokens.push(Token::default());
                        }
                        let t = &mut tokens[*len];
                        t.offset_from = start + part.from as usize;
                        t.offset_to = start + part.to as usize;
                        t.position = position;
                        t.position_length = 1;
                        t.text.clear();
                        t.text.push_str(normal);
                        *len += 1;
                    }
                    position += 1;
                }
            }
        });
        VecTokenStream { tokens: &mut self.tokens[..self.len], index: 0 }
    }
}

/// Maximal runs of `[A-Za-z0-9_]` (and other alphanumerics), with byte offsets.
///
/// Scans bytes: ASCII decides itself, and only a non-ASCII byte decodes its char
/// (most code is ASCII; `char_indices` over every byte was a tenth of the
/// tokenizer's time).
fn identifier_runs(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    let mut at = 0usize;
    // The length of the word character at `i`, or None when it is not one.
    let word_char = move |i: usize| -> Option<usize> {
        let b = bytes[i];
        if b < 0x80 {
            return (b.is_ascii_alphanumeric() || b == b'_').then_some(1);
        }
        let c = text[i..].chars().next()?;
        c.is_alphanumeric().then_some(c.len_utf8())
    };
    // The length of the char at `i` (to step over one that is not a word char).
    let char_len = move |i: usize| -> usize {
        if bytes[i] < 0x80 { 1 } else { text[i..].chars().next().map_or(1, char::len_utf8) }
    };
    std::iter::from_fn(move || {
        while at < bytes.len() {
            let Some(n) = word_char(at) else {
                at += char_len(at);
                continue;
            };
            let start = at;
            at += n;
            while at < bytes.len() {
                match word_char(at) {
                    Some(n) => at += n,
                    None => break,
                }
            }
            let word = &text[start..at];
            if word.bytes().any(|b| b != b'_') {
                return Some((start, word));
            }
        }
        None
    })
}

/// `getHTTPResponse_code2` → get, HTTP, Response, code, 2 (with byte offsets).
pub(crate) fn split_identifier(word: &str) -> Vec<(usize, &str)> {
    let mut parts = Vec::new();
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut start: Option<usize> = None;
    for (k, &(i, c)) in chars.iter().enumerate() {
        if c == '_' {
            if let Some(s) = start.take() {
                parts.push((s, &word[s..i]));
            }
            continue;
        }
        let Some(s) = start else {
            start = Some(i);
            continue;
        };
        let prev = chars[k - 1].1;
        let next = chars.get(k + 1).map(|p| p.1);
        let boundary = (prev.is_lowercase() && c.is_uppercase())
            || (prev.is_alphabetic() && c.is_numeric())
            || (prev.is_numeric() && c.is_alphabetic())
            || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase));
        if boundary {
            parts.push((s, &word[s..i]));
            start = Some(i);
        }
    }
    if let Some(s) = start {
        parts.push((s, &word[s..]));
    }
    parts
}

/// The stems of the words bug reports and fix messages use about the change, not
/// the code ([`SearchIndex::search_issue`]).
const ISSUE_WORDS: &[&str] = &[
    "fix",
    "bug",
    "issu",
    "regress",
    "problem",
    "reproduc",
    "expect",
    "actual",
    "behavior",
    "behaviour",
    "describ",
    "descript",
    "screenshot",
    "workaround",
    "pleas",
    "thank",
];

/// A fifth for [`ISSUE_WORDS`]: low, not nothing, since a project may have a
/// `fixture` module or a `Regression` class an issue really means.
fn issue_word_weight(token: &str) -> f32 {
    if ISSUE_WORDS.contains(&token) { 0.2 } else { 1.0 }
}

/// Words that say nothing in a query about code.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "has", "have", "if",
    "in", "into", "is", "it", "its", "of", "on", "or", "that", "the", "their", "then", "there",
    "these", "this", "to", "was", "were", "will", "with", "i", "we", "you", "he", "she", "they",
    "me", "my", "our", "your", "not", "no", "so", "do", "does", "did", "can", "could", "would",
    "should", "when", "what", "which", "who", "how", "why", "also", "just", "than", "too", "very",
    "some", "any", "all", "self", "def", "return", "import", "class", "none", "true", "false",
    "null", "let", "var", "const", "fn", "pub", "func", "else", "elif", "new", "static",
];

fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(CodeTokenizer::default()).build()
}

/// Tokens of `text` as the index sees them.
pub(crate) fn analyze_text(text: &str) -> Vec<String> {
    let mut a = analyzer();
    let mut stream = a.token_stream(text);
    let mut out = Vec::new();
    while stream.advance() {
        out.push(stream.token().text.clone());
    }
    out
}

/// Up to this many files to re-index, the writer gets tantivy's smallest budget.
const SMALL_SYNC_FILES: usize = 64;

/// From this many files to re-index, the writer indexes on several threads.
const PARALLEL_SYNC_FILES: usize = 500;

/// How a sync changed what the search index holds, by path.
pub(crate) struct Synced<'a> {
    /// Paths whose documents are gone (the file left the project, or its bytes no
    /// longer have the project's hash).
    pub(crate) removed: Vec<&'a str>,
    /// Paths indexed anew, with the hash of what was indexed.
    pub(crate) indexed: Vec<(&'a str, &'a str)>,
}

/// The search index of one project.
pub struct SearchIndex {
    dir: PathBuf,
    index: Index,
    reader: IndexReader,
    fields: Fields,
}

impl SearchIndex {
    /// The search index of `index` (`.ironbees/search/`), brought up to date with
    /// `snapshot` file by file. When another process holds the update lock, the
    /// search index is searched as it is.
    pub fn sync(index: &mut code_index::Index, snapshot: &Snapshot) -> Result<SearchIndex> {
        let mut search = SearchIndex::open(&index.state_dir().join("search"))?;
        if let Some(_lock) = index.try_lock_updates()? {
            // An empty (new or rebuilt) search index holds nothing, whatever the table says.
            let empty = search.num_docs() == 0;
            let indexed = if empty { Default::default() } else { index.search_files()? };
            let synced = search.sync_files(index.root(), &snapshot.project, &indexed)?;
            // Only what changed is written: a one-file edit rewrote every row of the
            // table (2,879 on Django): 5–7 ms of CPU.
            if !synced.removed.is_empty() || !synced.indexed.is_empty() {
                index.update_search_files(empty, &synced.removed, &synced.indexed)?;
            }
        }
        Ok(search)
    }

    /// Opens `dir`, creating or rebuilding it when missing or from another version.
    pub(crate) fn open(dir: &Path) -> Result<SearchIndex> {
        let io = |e: std::io::Error| Error::Io { path: dir.to_owned(), source: e };
        // Held while the directory is checked, created or rebuilt: a process that
        // found no VERSION yet would otherwise remove the directory another is
        // creating (two processes opening a new project at once).
        let lock_path = dir.with_extension("lock");
        if let Some(parent) = dir.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let lock = std::fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .and_then(|f| f.lock().map(|()| f))
            .map_err(|e| Error::Io { path: lock_path.clone(), source: e })?;
        let version_file = dir.join("VERSION");
        let current = std::fs::read_to_string(&version_file).unwrap_or_default();
        if current.trim() != SEARCH_VERSION && dir.exists() {
            std::fs::remove_dir_all(dir).map_err(io)?;
        }
        std::fs::create_dir_all(dir).map_err(io)?;
        let (schema, fields) = schema();
        let directory = tantivy::directory::MmapDirectory::open(dir).map_err(|e| tv(dir, e))?;
        let index = Index::open_or_create(directory, schema).map_err(|e| tv(dir, e))?;
        index.tokenizers().register("code", analyzer());
        std::fs::write(&version_file, SEARCH_VERSION).map_err(io)?;
        drop(lock);
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| tv(dir, e))?;
        Ok(SearchIndex { dir: dir.to_owned(), index, reader, fields })
    }

    /// Brings the index in line with `project`: files whose content hash differs from
    /// `indexed` (path → hash of what the index holds) are re-indexed from their bytes
    /// on disk under `root`; files gone from the project are removed. Returns how
    /// `indexed` changed. A file whose bytes on disk no longer have the project's
    /// hash is left for the next sync (its definitions' offsets would not fit).
    pub(crate) fn sync_files<'a>(
        &mut self,
        root: &Path,
        project: &'a Project,
        indexed: &'a HashMap<String, String>,
    ) -> Result<Synced<'a>> {
        self.sync_files_on(root, project, indexed, None)
    }

    /// [`SearchIndex::sync_files`] on `threads` indexing threads (`None`: by the
    /// number of files and of cores).
    fn sync_files_on<'a>(
        &mut self,
        root: &Path,
        project: &'a Project,
        indexed: &'a HashMap<String, String>,
        threads: Option<usize>,
    ) -> Result<Synced<'a>> {
        let mut stale: Vec<&ProjectFile> = Vec::new();
        for file in &project.files {
            if indexed.get(&file.path) != Some(&file.hash) {
                stale.push(file);
            }
        }
        let present: HashSet<&str> = project.files.iter().map(|f| f.path.as_str()).collect();
        let mut synced = Synced {
            removed: indexed.keys().map(String::as_str).filter(|p| !present.contains(p)).collect(),
            indexed: Vec::new(),
        };
        if stale.is_empty() && synced.removed.is_empty() {
            return Ok(synced);
        }
        // The writer's hash table is sized from its memory budget and zeroed when the
        // writer starts: with the 50 MB a whole project wants, that was a tenth of a
        // one-shot query after a one-file edit. Tantivy's minimum (15 MB) for few files.
        let budget = if stale.len() <= SMALL_SYNC_FILES { 15_000_000 } else { 50_000_000 };
        // A whole project (a cold index, a rebuild) is indexed on every core: alone,
        // tantivy's indexing thread was a third of a cold index's wall time on
        // Django while the other core waited. Each thread writes its own segment;
        // scores are the same up to float rounding (statistics are summed over
        // segments) and searches order equal scores by path, not by segment.
        // The threads share 100 MB (two get 50 MB each, as one had alone), so a
        // machine with more cores does not hold more memory for it.
        let threads = threads.unwrap_or_else(|| {
            if stale.len() < PARALLEL_SYNC_FILES {
                1
            } else {
                std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4)
            }
        });
        let per_thread = if threads > 1 { (100_000_000 / threads).max(15_000_000) } else { budget };
        let mut writer: IndexWriter<TantivyDocument> = self
            .index
            .writer_with_num_threads(threads, per_thread * threads)
            .map_err(|e| tv(&self.dir, e))?;
        for path in &synced.removed {
            writer.delete_term(Term::from_field_text(self.fields.path, path));
        }
        for file in stale {
            writer.delete_term(Term::from_field_text(self.fields.path, &file.path));
            let fresh = std::fs::read(root.join(&file.path))
                .ok()
                .filter(|bytes| stdx::sha256_hex(bytes) == file.hash);
            let Some(bytes) = fresh else {
                // Its old documents are gone: so is its row, if it had one.
                if indexed.contains_key(&file.path) {
                    synced.removed.push(&file.path);
                }
                continue;
            };
            for doc in self.documents(project, file, &bytes) {
                writer.add_document(doc).map_err(|e| tv(&self.dir, e))?;
            }
            synced.indexed.push((&file.path, &file.hash));
        }
        writer.commit().map_err(|e| tv(&self.dir, e))?;
        self.reader.reload().map_err(|e| tv(&self.dir, e))?;
        Ok(synced)
    }

    fn documents(
        &self,
        project: &Project,
        file: &ProjectFile,
        bytes: &[u8],
    ) -> Vec<TantivyDocument> {
        let f = self.fields;
        let text = |a: u32, b: u32| -> String {
            let (a, b) = (a as usize, (b as usize).min(bytes.len()));
            String::from_utf8_lossy(&bytes[a.min(b)..b]).into_owned()
        };
        let mut docs = Vec::with_capacity(file.defs.len() + 1);
        // A definition's own text: its span without the spans of its children.
        let mut children: Vec<Vec<(u32, u32)>> = vec![Vec::new(); file.defs.len()];
        let mut top_level: Vec<(u32, u32)> = Vec::new();
        for d in &file.defs {
            match d.parent {
                Some(p) => children[p as usize].push((d.start_byte, d.end_byte)),
                None => top_level.push((d.start_byte, d.end_byte)),
            }
        }
        let own_text = |start: u32, end: u32, holes: &[(u32, u32)]| -> String {
            let mut out = String::new();
            let mut at = start;
            for &(a, b) in holes {
                if a > at {
                    out.push_str(&text(at, a));
                }
                at = at.max(b);
            }
            if end > at {
                out.push_str(&text(at, end));
            }
            out.truncate(out.floor_char_boundary(64 * 1024));
            out
        };
        for (ord, d) in file.defs.iter().enumerate() {
            let mut doc = TantivyDocument::default();
            doc.add_text(f.path, &file.path);
            doc.add_text(f.path_text, &file.path);
            doc.add_text(f.name, project.names.name(d.name));
            doc.add_text(f.qualified, &d.qualified_name);
            doc.add_text(f.signature, &d.signature);
            if let Some(docline) = &d.doc {
                doc.add_text(f.doc, docline);
            }
            doc.add_text(f.body, own_text(d.start_byte, d.end_byte, &children[ord]));
            doc.add_text(f.kind, d.kind.as_str());
            doc.add_u64(f.line, u64::from(d.line));
            doc.add_u64(f.end_line, u64::from(d.end_line));
            doc.add_i64(f.ord, ord as i64);
            docs.push(doc);
        }
        let mut doc = TantivyDocument::default();
        doc.add_text(f.path, &file.path);
        doc.add_text(f.path_text, &file.path);
        doc.add_text(f.qualified, &file.path);
        doc.add_text(f.body, own_text(0, bytes.len() as u32, &top_level));
        doc.add_text(f.file_body, String::from_utf8_lossy(&bytes[..bytes.len().min(512 * 1024)]));
        doc.add_text(f.kind, "file");
        doc.add_u64(f.line, 1);
        doc.add_u64(f.end_line, u64::from(file.lines.max(1)));
        doc.add_i64(f.ord, -1);
        docs.push(doc);
        docs
    }

    /// The best `limit` chunks for `query` (free text: words, identifiers, paths, a
    /// stack trace). Every token is an optional clause; names and signatures weigh
    /// more than bodies. Of a long query only the `max_terms` rarest tokens are used.
    pub fn search(&self, query: &str, limit: usize, max_terms: usize) -> Result<Vec<ChunkHit>> {
        self.search_weighted(&[(query, 1.0)], limit, max_terms)
    }

    /// Like [`SearchIndex::search`] over several texts, each with a weight: a token's
    /// weight is the largest of the texts it appears in (an issue's title counts more
    /// than its body, identifiers from its code more than its prose).
    pub fn search_weighted(
        &self,
        texts: &[(&str, f32)],
        limit: usize,
        max_terms: usize,
    ) -> Result<Vec<ChunkHit>> {
        self.search_texts(texts, limit, max_terms, |_| 1.0)
    }

    /// Like [`SearchIndex::search`] for the text of an issue or a commit message:
    /// the words that text uses to talk about the change rather than the code
    /// (`fix`, `bug`, `issue`, "Expected behavior") weigh a fifth. They are in
    /// nearly every report, and where code has them they are parts of unrelated
    /// names: "-Fixed regression serializing decimal value" ranked Newtonsoft.Json's
    /// three `IsFixedSize` properties first.
    pub fn search_issue(
        &self,
        query: &str,
        limit: usize,
        max_terms: usize,
    ) -> Result<Vec<ChunkHit>> {
        self.search_texts(&[(query, 1.0)], limit, max_terms, issue_word_weight)
    }

    fn search_texts(
        &self,
        texts: &[(&str, f32)],
        limit: usize,
        max_terms: usize,
        token_weight: impl Fn(&str) -> f32,
    ) -> Result<Vec<ChunkHit>> {
        let searcher = self.reader.searcher();
        let f = self.fields;
        let mut weights: HashMap<String, f32> = HashMap::new();
        for (text, w) in texts {
            for t in analyze_text(text) {
                let w = w * token_weight(&t);
                let e = weights.entry(t).or_insert(0.0);
                *e = e.max(w);
            }
        }
        if weights.is_empty() {
            return Ok(Vec::new());
        }
        // Keep the most telling tokens (weight times rarity): a long issue text
        // mentions many common words.
        let mut tokens: Vec<(String, f32)> = weights.into_iter().collect();
        if tokens.len() > max_terms {
            let n = searcher.num_docs().max(1) as f32;
            let mut scored: Vec<(f32, String, f32)> = tokens
                .into_iter()
                .filter_map(|(t, w)| {
                    let df = searcher.doc_freq(&Term::from_field_text(f.body, &t)).unwrap_or(0)
                        + searcher.doc_freq(&Term::from_field_text(f.name, &t)).unwrap_or(0);
                    (df > 0).then(|| (w * (n / df as f32).ln().max(0.01), t, w))
                })
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            tokens = scored.into_iter().take(max_terms).map(|(_, t, w)| (t, w)).collect();
        }
        tokens.sort_by(|a, b| a.0.cmp(&b.0));
        let boosts = [
            (f.name, 3.0),
            (f.qualified, 2.0),
            (f.signature, 1.5),
            (f.doc, 1.5),
            (f.body, 1.0),
            (f.path_text, 1.0),
        ];
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (t, w) in &tokens {
            for (field, boost) in boosts {
                let q =
                    TermQuery::new(Term::from_field_text(field, t), IndexRecordOption::WithFreqs);
                clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost * w))));
            }
        }
        let query = BooleanQuery::new(clauses);
        let top: Vec<(Score, DocAddress)> = searcher
            .search(&query, &TopDocs::with_limit(limit).order_by_score())
            .map_err(|e| tv(&self.dir, e))?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let doc: TantivyDocument = searcher.doc(addr).map_err(|e| tv(&self.dir, e))?;
            let s = |field: Field| {
                doc.get_first(field).and_then(|v| v.as_str()).unwrap_or_default().to_owned()
            };
            let n =
                |field: Field| doc.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0) as u32;
            let ord = doc.get_first(f.ord).and_then(|v| v.as_i64()).unwrap_or(-1);
            hits.push(ChunkHit {
                path: s(f.path),
                ord: u32::try_from(ord).ok(),
                qualified_name: s(f.qualified),
                kind: s(f.kind),
                line: n(f.line),
                end_line: n(f.end_line),
                score,
            });
        }
        // Equal scores in the order of a one-segment index (by path, then the
        // definitions in file order, the file itself last), not of the segments a
        // multi-threaded build or an update wrote them to.
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.path.cmp(&b.path))
                .then_with(|| a.ord.unwrap_or(u32::MAX).cmp(&b.ord.unwrap_or(u32::MAX)))
        });
        Ok(hits)
    }

    /// Files by whole-file BM25 (the classic baseline): path → score.
    pub fn search_files(
        &self,
        query: &str,
        limit: usize,
        max_terms: usize,
    ) -> Result<Vec<(String, f32)>> {
        let searcher = self.reader.searcher();
        let f = self.fields;
        let mut tokens = analyze_text(query);
        tokens.sort();
        tokens.dedup();
        if tokens.len() > max_terms {
            let mut with_df: Vec<(u64, String)> = tokens
                .into_iter()
                .map(|t| {
                    (searcher.doc_freq(&Term::from_field_text(f.file_body, &t)).unwrap_or(0), t)
                })
                .filter(|(df, _)| *df > 0)
                .collect();
            with_df.sort();
            tokens = with_df.into_iter().take(max_terms).map(|(_, t)| t).collect();
        }
        let clauses: Vec<(Occur, Box<dyn Query>)> = tokens
            .iter()
            .map(|t| {
                let q = TermQuery::new(
                    Term::from_field_text(f.file_body, t),
                    IndexRecordOption::WithFreqs,
                );
                (Occur::Should, Box::new(q) as Box<dyn Query>)
            })
            .collect();
        let top: Vec<(Score, DocAddress)> = searcher
            .search(&BooleanQuery::new(clauses), &TopDocs::with_limit(limit).order_by_score())
            .map_err(|e| tv(&self.dir, e))?;
        let mut out = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let doc: TantivyDocument = searcher.doc(addr).map_err(|e| tv(&self.dir, e))?;
            if let Some(path) = doc.get_first(f.path).and_then(|v| v.as_str()) {
                out.push((path.to_owned(), score));
            }
        }
        // Equal scores by path, as one segment would have them.
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Ok(out)
    }

    /// Number of documents (chunks) in the index.
    pub fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }
}

fn tv(dir: &Path, e: impl std::fmt::Display) -> Error {
    Error::Io { path: dir.to_owned(), source: std::io::Error::other(e.to_string()) }
}

/// A `//- path` fixture written to a temporary directory, with each file's hash
/// the one of its bytes there, as an index of it would have them.
#[cfg(test)]
pub(crate) fn fixture_on_disk(text: &str) -> (code_graph::Fixture, tempfile::TempDir) {
    let mut fx = code_graph::fixture(text);
    let dir = tempfile::tempdir().unwrap();
    for file in &mut fx.snapshot.project.files {
        let body = &fx.sources[&file.path];
        let path = dir.path().join(&file.path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, body).unwrap();
        file.hash = stdx::sha256_hex(body.as_bytes());
    }
    (fx, dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project indexed on two threads (two segments) answers as on one: the same
    /// hits with the same scores, up to the last bits of a float sum (a segment's
    /// union of clauses adds them in its own order), and equal scores by path.
    #[test]
    fn indexing_threads_do_not_change_answers() {
        let mut text = String::new();
        for i in 0..120 {
            let word = ["parse", "render", "cache", "token", "query"][i % 5];
            text.push_str(&format!(
                "//- /pkg{}/m{i}.py\nclass {word}Handler{i}:\n    \"\"\"Handles the {word} of a request.\"\"\"\n    def {word}_item(self, x):\n        return helper_{}(x, '{word} value {i}')\n",
                i % 7,
                i % 11
            ));
        }
        let (fx, dir) = fixture_on_disk(&text);
        let project = &fx.snapshot.project;
        let mut one = SearchIndex::open(&dir.path().join("one")).unwrap();
        one.sync_files_on(dir.path(), project, &HashMap::new(), Some(1)).unwrap();
        assert_eq!(one.index.searchable_segment_ids().unwrap().len(), 1);
        // Two threads, and two syncs of half the files each (as if the other half
        // were indexed), the second half first: at least two segments, however the
        // threads shared the work, and later paths in the first.
        let mut two = SearchIndex::open(&dir.path().join("two")).unwrap();
        let (first, second) = project.files.split_at(project.files.len() / 2);
        for other in [first, second] {
            let claimed = other.iter().map(|f| (f.path.clone(), f.hash.clone())).collect();
            two.sync_files_on(dir.path(), project, &claimed, Some(2)).unwrap();
        }
        assert!(two.index.searchable_segment_ids().unwrap().len() >= 2);
        // Beyond every match: which of equal scores make a cut is the segments' choice.
        let hits = |s: &SearchIndex, q: &str| s.search(q, 1000, 32).unwrap();
        let close = |a: f32, b: f32| (a - b).abs() <= 1e-4 * a.abs().max(1.0);
        for q in ["parse handler", "render value request", "cache_item helper", "token query 17"] {
            let (a, b) = (hits(&one, q), hits(&two, q));
            assert!(!a.is_empty(), "{q}: no hits");
            assert_eq!(a.len(), b.len(), "{q}");
            let mut by_name: HashMap<(&str, &str), f32> =
                b.iter().map(|h| ((&h.path[..], &h.qualified_name[..]), h.score)).collect();
            for h in &a {
                let other = by_name.remove(&(&h.path[..], &h.qualified_name[..]));
                assert!(other.is_some_and(|s| close(s, h.score)), "{q}: {h:?} against {other:?}");
            }
            // Exactly equal scores come in path order, in both.
            for hits in [&a, &b] {
                for w in hits.windows(2) {
                    assert!(w[0].score > w[1].score || w[0].path <= w[1].path, "{q}: {w:?}");
                }
            }
        }
    }

    #[test]
    fn identifiers_split_into_parts() {
        fn parts(w: &str) -> Vec<&str> {
            split_identifier(w).into_iter().map(|p| p.1).collect()
        }
        assert_eq!(parts("getUserName"), ["get", "User", "Name"]);
        assert_eq!(parts("get_user_name"), ["get", "user", "name"]);
        assert_eq!(parts("HTTPResponse"), ["HTTP", "Response"]);
        assert_eq!(parts("parseV2Header"), ["parse", "V", "2", "Header"]);
        assert_eq!(parts("__init__"), ["init"]);
        assert_eq!(parts("x"), ["x"]);
    }

    /// The tokens of the filter chain the cache stands for: every identifier and
    /// its parts, then tantivy's lower-caser, stop list and stemmer per token.
    fn reference_tokens(text: &str) -> Vec<(String, usize, usize, usize)> {
        #[derive(Clone)]
        struct Plain;
        impl Tokenizer for Plain {
            type TokenStream<'a> = tantivy::tokenizer::PreTokenizedStream;
            fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
                let mut tokens = Vec::new();
                let mut position = 0;
                let mut push = |from: usize, to: usize| {
                    tokens.push(Token {
                        offset_from: from,
                        offset_to: to,
                        position,
                        text: text[from..to].to_owned(),
                        position_length: 1,
                    });
                    position += 1;
                };
                for (start, word) in identifier_runs(text) {
                    if word.len() > 80 {
                        continue;
                    }
                    push(start, start + word.len());
                    let parts = split_identifier(word);
                    if parts.len() > 1 {
                        for (off, part) in parts {
                            push(start + off, start + off + part.len());
                        }
                    }
                }
                tantivy::tokenizer::PreTokenizedString { text: text.to_owned(), tokens }.into()
            }
        }
        let mut chain = TextAnalyzer::builder(Plain)
            .filter(LowerCaser)
            .filter(tantivy::tokenizer::StopWordFilter::remove(
                STOP_WORDS.iter().map(|s| (*s).to_owned()),
            ))
            .filter(Stemmer::new(StemLanguage::English))
            .build();
        let mut stream = chain.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            let t = stream.token();
            out.push((t.text.clone(), t.offset_from, t.offset_to, t.position));
        }
        out
    }

    #[test]
    fn cached_normalization_is_the_filter_chain() {
        let text = "def getUserNames(self): return self.getUserNames() or The_Parsing_of \
                    HTTPResponse_code2 Straße ÉCOLE naïveté __init__ x1y2 running runs ran \
                    and AND the_the IS_NOT_NONE 日本語_名前 x—y 🦀crab _ __ 9lives ";
        let long = "a".repeat(81);
        let text = format!("{text} {long} getUserNames snake_case");
        let mut tok = CodeTokenizer::default();
        for round in 0..3 {
            let mut stream = tok.token_stream(&text);
            let mut got = Vec::new();
            while stream.advance() {
                let t = stream.token();
                got.push((t.text.clone(), t.offset_from, t.offset_to, t.position));
            }
            assert_eq!(got, reference_tokens(&text), "round {round}");
            if round == 1 {
                NORMAL_CACHE.with_borrow_mut(|c| c.words.clear());
            }
        }
        // A shorter text after a longer one: no token of the last stream leaks.
        let mut stream = tok.token_stream("parsing");
        assert!(stream.advance());
        assert_eq!(stream.token().text, "pars");
        assert!(!stream.advance());
    }

    #[test]
    fn analyzer_keeps_whole_identifiers_and_stems_parts() {
        assert_eq!(analyze_text("self.getUserNames()"), ["getusernam", "get", "user", "name"]);
        assert_eq!(analyze_text("the parsing of files"), ["pars", "file"]);
        assert_eq!(analyze_text("snake_case"), ["snake_cas", "snake", "case"]);
        // Every form of the issue words stems to the listed stem.
        let forms = "fixed fixes fixing bugs issues regression regressions problems reproduce \
            reproducing expected actually behavior behaviour described description screenshots \
            workaround please thanks";
        for t in analyze_text(forms) {
            assert_eq!(issue_word_weight(&t), 0.2, "{t}");
        }
    }
}
