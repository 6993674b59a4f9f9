//! From bytes to definitions, references and imports.
//!
//! [`analyze`] is a pure function of (language, bytes): parse with tree-sitter, run the
//! language's query once, then turn the captures into a flat list of definitions with
//! their container path. Everything about the query conventions lives here:
//!
//! - `@definition.<kind>` captures the whole definition, `@name` its name;
//! - `@scope` (with `@name`) qualifies nested definitions without being one (a Rust
//!   `impl Foo` block makes `Foo::new`);
//! - `@receiver` qualifies a definition written outside its type (Go methods, C++
//!   `Foo::bar` definitions);
//! - `@reference.call|type|use` captures a name node; `@import` a whole import with
//!   `@import.module` the part that names what is imported.
//!
//! A function whose nearest container is a type (class, struct, trait, impl, ...)
//! becomes a method here, in one place, instead of in ten query files.

use std::{
    borrow::Cow,
    cell::RefCell,
    collections::HashMap,
    sync::{
        OnceLock,
        atomic::{AtomicBool, Ordering},
    },
};

use protocol::SymbolKind;
use serde::{Deserialize, Serialize};
use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Parser, Query, QueryCursor};

use crate::lang::Language;

mod mask;
mod receiver;

pub use receiver::{is_js_global, parameter_list, return_type};

/// How a name is used at a reference site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RefKind {
    /// Called or instantiated by a bare name: `f()`, `new T()`, `T { .. }`. (In
    /// Java and C#, a bare call may mean an inherited method.)
    Call,
    /// Called through a receiver, module or type: `obj.m()`, `mod.f()`,
    /// `Type::new()`. Kept apart from [`RefKind::Call`] because in Python, JS/TS, Go,
    /// Rust and C a bare call can never mean a method, and this one can.
    #[serde(rename = "member_call")]
    MemberCall,
    /// Called on the object itself: `self.m()`, `this.m()`, `cls.m()`, `Self::new()`.
    /// Told apart from [`RefKind::MemberCall`] after matching (the receiver's text),
    /// never by a query: this one means the enclosing class's own method, any other
    /// receiver more likely someone else's.
    #[serde(rename = "self_call")]
    SelfCall,
    /// Named as a type: annotations, base classes, generic arguments.
    Type,
    /// Any other use of an identifier.
    Use,
}

impl RefKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RefKind::Call => "call",
            RefKind::MemberCall => "member_call",
            RefKind::SelfCall => "self_call",
            RefKind::Type => "type",
            RefKind::Use => "use",
        }
    }
    /// A call of either form.
    pub fn is_call(self) -> bool {
        matches!(self, RefKind::Call | RefKind::MemberCall | RefKind::SelfCall)
    }
    pub fn parse(s: &str) -> Option<RefKind> {
        match s {
            "call" => Some(RefKind::Call),
            "member_call" => Some(RefKind::MemberCall),
            "self_call" => Some(RefKind::SelfCall),
            "type" => Some(RefKind::Type),
            "use" => Some(RefKind::Use),
            _ => None,
        }
    }
}

/// One definition in a file. Lines are 1-based and inclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    pub name: String,
    pub qualified_name: String,
    pub kind: SymbolKind,
    /// The whole definition, decorators and attributes included.
    pub start_byte: u32,
    pub end_byte: u32,
    pub line: u32,
    pub end_line: u32,
    /// The line of the name itself (where `ctags` and editors put the cursor).
    pub name_line: u32,
    /// The body, when the definition has one (block, class body, field list).
    pub body: Option<(u32, u32)>,
    pub signature: String,
    pub doc: Option<String>,
    /// The line `doc` was taken from.
    pub doc_line: Option<u32>,
    /// Index of the enclosing definition in the same file.
    pub parent: Option<u32>,
}

/// One use of a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub name: String,
    pub kind: RefKind,
    pub line: u32,
    /// 1-based, in bytes.
    pub column: u32,
    /// Index of the innermost definition containing the reference.
    pub enclosing: Option<u32>,
    /// For a [`RefKind::MemberCall`], the receiver's type name when the file states
    /// it (`linter: PyLinter`, `x = Foo()`, `Foo::new()`); see `extract/receiver.rs`.
    pub receiver: Option<String>,
}

/// An import, include or `use`, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The whole statement, whitespace collapsed.
    pub text: String,
    /// What it names: a module path, a file path or a header, quotes removed.
    pub module: String,
    pub line: u32,
}

/// A block that qualifies definitions without being one (a Rust `impl`). Kept for
/// outlines: a skeleton shows its header line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub name: String,
    pub line: u32,
    pub end_line: u32,
    /// Where its body starts, when it has one.
    pub body_start: Option<u32>,
}

/// Everything extracted from one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileAnalysis {
    /// In source order (by start byte, outer before inner).
    pub definitions: Vec<Definition>,
    pub scopes: Vec<Scope>,
    pub references: Vec<Reference>,
    pub imports: Vec<Import>,
    /// The package or namespace a Java/Go file declares, when it does.
    pub package: Option<String>,
    /// Syntax errors: ERROR and MISSING nodes in the tree.
    pub error_nodes: u32,
    pub lines: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Def(SymbolKind),
    Scope,
    Name,
    /// A C/C++ declarator the name is found in (see `resolve_declarator`).
    Declarator,
    Receiver,
    Ref(RefKind),
    Import,
    ImportModule,
    Package,
    Ignore,
}

struct Compiled {
    query: Query,
    roles: Vec<Role>,
    /// Per node kind id: the reference kind every node of that kind is. Declared in
    /// the query file as single-node patterns (`(identifier) @reference.use`) but
    /// collected by the tree walk, because the query engine costs far more per match.
    walk_refs: Vec<Option<RefKind>>,
    /// Per node kind id: reference patterns that are a plain chain of parents ending
    /// at a node of that kind (`(call function: (attribute attribute: (identifier)
    /// @reference.call))`), checked by the walk against its stack of ancestors. Calls
    /// are the most common nodes patterns are rooted at; running the query engine at
    /// each of them cost a tenth of a cold index.
    chains: Vec<Vec<Chain>>,
    /// Per node kind id: whether a chain needs to know under which field a node of
    /// that kind sits in its parent.
    needs_field: Vec<bool>,
    /// Per node kind id: whether some pattern is rooted at that kind. The query runs
    /// only at those nodes, with a start depth of 0 (see `Extractor::run`). `None`
    /// when a pattern is rooted at a wildcard: then the query runs over the whole tree.
    roots: Option<Vec<bool>>,
}

fn compiled(lang: Language) -> &'static Compiled {
    static CACHE: [OnceLock<Compiled>; 10] = [const { OnceLock::new() }; 10];
    CACHE[lang as usize].get_or_init(|| {
        let grammar = lang.grammar();
        let kinds = grammar.node_kind_count();
        // All ids of a named kind: aliases give one name several ids.
        let ids_of = |name: &str| -> Vec<usize> {
            (0..kinds as u16)
                .filter(|&id| {
                    grammar.node_kind_is_named(id) && grammar.node_kind_for_id(id) == Some(name)
                })
                .map(usize::from)
                .collect()
        };
        let known_ids = |name: &str| -> Vec<usize> {
            let ids = ids_of(name);
            assert!(!ids.is_empty(), "unknown node kind ({name}) in {lang} query");
            ids
        };
        let mut walk_refs = vec![None; kinds];
        let mut chains: Vec<Vec<Chain>> = (0..kinds).map(|_| Vec::new()).collect();
        let mut needs_field = vec![false; kinds];
        let mut source = String::new();
        // Only lines that hold a whole pattern: a line inside a multi-line pattern
        // may look like one on its own.
        let mut depth = 0i32;
        for line in lang.query_source().lines() {
            let whole = depth == 0;
            depth += paren_balance(line);
            let parsed = if whole && depth == 0 { parse_chain(line) } else { None };
            match parsed {
                Some(ParsedChain { leaf, kind, steps }) if steps.is_empty() => {
                    for id in known_ids(leaf) {
                        walk_refs[id] = Some(kind);
                    }
                }
                Some(ParsedChain { leaf, kind, steps }) => {
                    let field_id = |f: &str| {
                        grammar
                            .field_id_for_name(f)
                            .unwrap_or_else(|| panic!("unknown field {f}: in {lang} query"))
                    };
                    let steps: Vec<ChainStep> = steps
                        .iter()
                        .map(|&(field, parent)| ChainStep {
                            field: field.map(field_id),
                            parents: known_ids(parent).into_iter().map(|id| id as u16).collect(),
                        })
                        .collect();
                    // A step's field is where the level below sits; the leaf's own
                    // is read at the leaf, the others when the walk descends.
                    for (below, step) in steps.iter().enumerate().skip(1) {
                        if step.field.is_some() {
                            for &id in &steps[below - 1].parents {
                                needs_field[usize::from(id)] = true;
                            }
                        }
                    }
                    for id in known_ids(leaf) {
                        chains[id].push(Chain { kind, steps: steps.clone() });
                    }
                }
                None => {
                    source.push_str(line);
                    source.push('\n');
                }
            }
        }
        let query = Query::new(&grammar, &source)
            .unwrap_or_else(|e| panic!("invalid query for {lang}: {e}"));
        let roles = query
            .capture_names()
            .iter()
            .map(|name| {
                role_of(name).unwrap_or_else(|| panic!("unknown capture @{name} in {lang} query"))
            })
            .collect();
        let roots = pattern_roots(&source).map(|names| {
            let mut table = vec![false; kinds];
            for name in names {
                let ids = ids_of(&name);
                assert!(!ids.is_empty(), "unknown root node kind ({name}) in {lang} query");
                for id in ids {
                    table[id] = true;
                }
            }
            table
        });
        Compiled { query, roles, walk_refs, chains, needs_field, roots }
    })
}

/// tree-sitter's field id (its alias is private).
type FieldId = std::num::NonZeroU16;

/// A reference pattern that is a chain of parents: see `Compiled::chains`.
#[derive(Clone)]
struct Chain {
    kind: RefKind,
    /// From the captured node upwards.
    steps: Vec<ChainStep>,
}

#[derive(Clone)]
struct ChainStep {
    /// The field the level below must sit under in this parent, if the pattern says.
    field: Option<FieldId>,
    /// The parent's kind ids (an aliased name has several).
    parents: Vec<u16>,
}

impl Chain {
    /// Whether the chain ends at a node whose field in its parent is `field`, under
    /// `ancestors` (kind, field in its own parent), innermost last.
    fn matches(&self, field: Option<FieldId>, ancestors: &[(u16, Option<FieldId>)]) -> bool {
        let mut below = field;
        for (up, step) in self.steps.iter().enumerate() {
            let Some(&(kind, own_field)) =
                ancestors.len().checked_sub(up + 1).and_then(|i| ancestors.get(i))
            else {
                return false;
            };
            if !step.parents.contains(&kind) || step.field.is_some_and(|f| below != Some(f)) {
                return false;
            }
            below = own_field;
        }
        true
    }
}

/// A one-line pattern `(a f: (b (c) @reference.kind))`: the captured kind, the
/// reference kind, and the (field, parent kind) steps from the capture upwards.
struct ParsedChain<'a> {
    leaf: &'a str,
    kind: RefKind,
    steps: Vec<(Option<&'a str>, &'a str)>,
}

/// Parses a chain pattern; `None` for anything else (predicates, anchors,
/// alternations, wildcards, quantifiers, several children, other captures), which
/// stays with the query engine.
fn parse_chain(line: &str) -> Option<ParsedChain<'_>> {
    // A chain has no strings, so `;` starts a comment.
    let spaced = line.split(';').next().unwrap_or_default().trim();
    if spaced.is_empty() || spaced.contains('"') {
        return None;
    }
    let mut toks = Vec::new();
    let mut rest = spaced;
    while let Some(c) = rest.chars().next() {
        if c.is_whitespace() {
            rest = &rest[1..];
        } else if c == '(' || c == ')' {
            toks.push(&rest[..1]);
            rest = &rest[1..];
        } else {
            let end = rest.find(|c: char| c.is_whitespace() || c == '(' || c == ')');
            let end = end.unwrap_or(rest.len());
            toks.push(&rest[..end]);
            rest = &rest[end..];
        }
    }
    let is_name = |t: &str| {
        !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && t != "_"
    };
    // Opening half: ( kind [field:] ( kind [field:] ( ... ( leaf
    let mut levels: Vec<(&str, Option<&str>)> = Vec::new(); // (kind, field of its child)
    let mut i = 0;
    loop {
        if toks.get(i) != Some(&"(") || !toks.get(i + 1).is_some_and(|t| is_name(t)) {
            return None;
        }
        let kind = toks[i + 1];
        i += 2;
        match toks.get(i) {
            Some(&f) if f.ends_with(':') && is_name(&f[..f.len() - 1]) => {
                levels.push((kind, Some(&f[..f.len() - 1])));
                i += 1;
            }
            Some(&"(") => levels.push((kind, None)),
            Some(&")") => {
                levels.push((kind, None));
                break;
            }
            _ => return None,
        }
    }
    // Closing half: ) @reference.kind ) ) ... with nothing else.
    let capture = toks.get(i + 1)?.strip_prefix("@reference.")?;
    let kind = RefKind::parse(capture)?;
    let closing = &toks[i + 2..];
    if closing.len() != levels.len() - 1 || closing.iter().any(|t| *t != ")") {
        return None;
    }
    let (leaf, _) = levels.pop()?;
    let steps = levels.into_iter().rev().map(|(parent, field)| (field, parent)).collect();
    Some(ParsedChain { leaf, kind, steps })
}

/// Opening minus closing parentheses on a query line, outside strings and comments.
fn paren_balance(line: &str) -> i32 {
    let mut balance = 0;
    let mut in_string = false;
    let mut escaped = false;
    for c in line.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            ';' if !in_string => break,
            '(' | '[' if !in_string => balance += 1,
            ')' | ']' if !in_string => balance -= 1,
            _ => {}
        }
    }
    balance
}

/// Starts compiling `lang`'s query on the rayon pool unless that has begun already.
/// A cold index calls this while it walks the tree, so the query (tens of
/// milliseconds for the larger languages) is ready when the first file is parsed,
/// rather than every worker waiting on the first one to compile it.
pub(crate) fn warm_up(lang: Language) {
    static STARTED: [AtomicBool; 10] = [const { AtomicBool::new(false) }; 10];
    if !STARTED[lang as usize].swap(true, Ordering::Relaxed) {
        rayon::spawn(move || {
            compiled(lang);
        });
    }
}

/// The node kinds the top-level patterns of a query are rooted at, read from its
/// source; `None` if a pattern is rooted at a wildcard `(_)`.
fn pattern_roots(source: &str) -> Option<Vec<String>> {
    #[derive(PartialEq)]
    enum Tok<'a> {
        Open(char),
        Close,
        Word(&'a str),
    }
    let mut toks = Vec::new();
    let mut chars = source.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            ';' => while chars.next_if(|&(_, c)| c != '\n').is_some() {},
            '"' => {
                while let Some((_, c)) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '(' | '[' => toks.push(Tok::Open(c)),
            ')' | ']' => toks.push(Tok::Close),
            c if c.is_whitespace() => {}
            _ => {
                let mut end = i + c.len_utf8();
                while let Some(&(j, d)) = chars.peek() {
                    if d.is_whitespace() || "()[]\";".contains(d) {
                        break;
                    }
                    end = j + d.len_utf8();
                    chars.next();
                }
                toks.push(Tok::Word(&source[i..end]));
            }
        }
    }
    // Walk the token tree; `root_of` finds the root kinds of the form starting at `i`.
    fn root_of(toks: &[Tok<'_>], i: usize, out: &mut Vec<String>) -> Option<()> {
        match toks.get(i)? {
            Tok::Open('(') => match toks.get(i + 1)? {
                Tok::Word(w) if *w == "_" => None,
                Tok::Word(w) if w.starts_with('#') => Some(()), // a predicate
                Tok::Word(w) => {
                    out.push((*w).to_owned());
                    Some(())
                }
                // `((call ...) (#eq? ...))`: a grouping; its first form is the root.
                Tok::Open(_) => root_of(toks, i + 1, out),
                Tok::Close => Some(()),
            },
            Tok::Open(_) => {
                // `[(a) (b)]`: every alternative is a root.
                let mut depth = 0usize;
                let mut j = i + 1;
                while let Some(t) = toks.get(j) {
                    match t {
                        Tok::Open(_) if depth == 0 => {
                            root_of(toks, j, out)?;
                            depth += 1;
                        }
                        Tok::Open(_) => depth += 1,
                        Tok::Close if depth == 0 => break,
                        Tok::Close => depth -= 1,
                        Tok::Word(_) => {}
                    }
                    j += 1;
                }
                Some(())
            }
            _ => Some(()),
        }
    }
    let mut out = Vec::new();
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Open(_) => {
                if depth == 0 {
                    root_of(&toks, i, &mut out)?;
                }
                depth += 1;
            }
            Tok::Close => depth = depth.saturating_sub(1),
            Tok::Word(_) => {}
        }
    }
    out.sort();
    out.dedup();
    Some(out)
}

fn role_of(capture: &str) -> Option<Role> {
    Some(match capture {
        "name" => Role::Name,
        "declarator" => Role::Declarator,
        "scope" => Role::Scope,
        "receiver" => Role::Receiver,
        "import" => Role::Import,
        "import.module" => Role::ImportModule,
        "import.package" => Role::Package,
        c if c.starts_with('_') => Role::Ignore,
        c => {
            if let Some(kind) = c.strip_prefix("definition.") {
                Role::Def(SymbolKind::parse(kind)?)
            } else if let Some(kind) = c.strip_prefix("reference.") {
                Role::Ref(RefKind::parse(kind)?)
            } else {
                return None;
            }
        }
    })
}

thread_local! {
    // A parser per language per thread: creating one is cheap, but reusing it keeps
    // its internal buffers warm across thousands of files.
    static PARSERS: RefCell<HashMap<Language, Parser>> = RefCell::new(HashMap::new());
}

/// Parses `source` and extracts definitions, references and imports.
///
/// Never fails: a file with syntax errors yields whatever parsed (tree-sitter recovers
/// around errors) and `error_nodes > 0`. Bytes that are not UTF-8 are read lossily in
/// names and signatures; byte offsets always refer to the original bytes.
pub fn analyze(lang: Language, source: &[u8]) -> FileAnalysis {
    analyze_masked(lang, source, true)
}

/// [`analyze`] without references (`references` is empty): a file's definitions,
/// scopes, imports, lines and syntax errors, which is what its outline and its
/// symbols need. Collecting and typing the references is most of an analysis
/// after the parse, and a one-file question (`understand`, `read`'s skeleton)
/// never looks at them.
pub fn analyze_outline(lang: Language, source: &[u8]) -> FileAnalysis {
    analyze_with(lang, source, true, false)
}

/// [`analyze`], with the parser's masks ([`mask::for_parser`]) or,
/// to test that they change nothing but speed, without.
fn analyze_masked(lang: Language, source: &[u8], with_masks: bool) -> FileAnalysis {
    analyze_with(lang, source, with_masks, true)
}

fn analyze_with(lang: Language, source: &[u8], with_masks: bool, refs: bool) -> FileAnalysis {
    let tree = PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        let parser = parsers.entry(lang).or_insert_with(|| {
            let mut p = Parser::new();
            p.set_language(&lang.grammar()).expect("grammar ABI is supported");
            p
        });
        // Macros the grammar cannot know about, and comment runs its scanner reads
        // slowly, are masked for the parser only; offsets are unchanged, and all text
        // is read from the original bytes.
        if with_masks {
            parser.parse(mask::for_parser(lang, source).as_ref(), None)
        } else {
            parser.parse(source, None)
        }
    });
    let lines = count_lines(source);
    let Some(tree) = tree else {
        // Only happens on cancellation or timeout, which we never set.
        return FileAnalysis { lines, ..FileAnalysis::default() };
    };
    let root = tree.root_node();
    let error_nodes = if root.has_error() { count_error_nodes(root) } else { 0 };
    let mut out = Extractor { lang, src: source, refs }.run(root);
    out.error_nodes = error_nodes;
    out.lines = lines;
    out
}

fn count_lines(source: &[u8]) -> u32 {
    if source.is_empty() {
        return 0;
    }
    let newlines = source.iter().filter(|&&b| b == b'\n').count() as u32;
    newlines + u32::from(source.last() != Some(&b'\n'))
}

fn count_error_nodes(root: Node<'_>) -> u32 {
    let mut count = 0;
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            count += 1;
        }
        // Only descend into subtrees that contain an error.
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return count;
            }
        }
    }
}

/// A container still open while definitions are nested: (start byte, end byte,
/// qualified name, kind or None for a scope, index into the definitions).
type Open = (usize, usize, String, Option<SymbolKind>, Option<u32>);

/// What the walk and the query matches collect for one file.
#[derive(Default)]
struct Acc<'t> {
    items: Vec<Item<'t>>,
    /// Every reference candidate in the order found; `build_references` keeps the
    /// strongest kind per start byte (call > type > use), the first found among equals.
    /// A vector sorted once is cheaper than a map updated per node (~1M per index).
    refs: Vec<RefCandidate<'t>>,
    imports: Vec<Import>,
    import_nodes: std::collections::HashSet<usize>,
    package: Option<String>,
    /// Functions and classes, in walk (start byte) order, where receiver types are
    /// inferred (see [`receiver`]).
    scopes: Vec<Node<'t>>,
}

impl<'t> Acc<'t> {
    fn add_ref(&mut self, kind: RefKind, node: Node<'t>, parent: Option<Node<'t>>) {
        self.refs.push((node.start_byte(), kind, node, parent));
    }
}

/// A reference's start byte, kind, node and, when the tree walk found it, its
/// parent (which `Node::parent` would search for from the root: a member call's
/// receiver is read from it).
type RefCandidate<'t> = (usize, RefKind, Node<'t>, Option<Node<'t>>);

/// A definition or scope while the file is being processed.
struct Item<'t> {
    node: Node<'t>,
    /// Where the span starts: a decorator, attribute or `export` wrapper, else `node`.
    span_start: (usize, u32),
    /// Where a signature starts: like the span, but after decorators.
    sig_start: usize,
    /// Where the span ends (a C# file-scoped namespace runs to the end of the file).
    end: usize,
    kind: Option<SymbolKind>, // None: a scope
    name: String,
    name_line: u32,
    receiver: Option<String>,
    pattern: usize,
}

struct Extractor<'s> {
    lang: Language,
    src: &'s [u8],
    /// Collect references (off for [`analyze_outline`]).
    refs: bool,
}

impl<'s> Extractor<'s> {
    fn text(&self, node: Node<'_>) -> Cow<'s, str> {
        String::from_utf8_lossy(&self.src[node.byte_range()])
    }

    fn run(&self, root: Node<'_>) -> FileAnalysis {
        let compiled = compiled(self.lang);

        let mut acc = Acc::default();
        let mut cursor = QueryCursor::new();
        if compiled.roots.is_none() {
            let mut matches = cursor.matches(&compiled.query, root, self.src);
            while let Some(m) = matches.next() {
                self.take(compiled, m, &mut acc);
            }
            cursor.set_max_start_depth(Some(0));
        } else {
            // Only patterns rooted at the node the query runs on: see `Compiled::roots`.
            cursor.set_max_start_depth(Some(0));
        }
        // One walk over the tree: single-node reference kinds are recorded directly,
        // and the query runs at every node some pattern is rooted at.
        let mut walk = root.walk();
        // The current node's ancestors: kind, and the field it sits under when a
        // chain asks (see `Compiled::needs_field`).
        let mut ancestors: Vec<(u16, Option<FieldId>)> = Vec::new();
        let mut parents: Vec<Node<'_>> = Vec::new();
        let want_scopes = self.refs && receiver::Receivers::supported(self.lang);
        'walk: loop {
            let node = walk.node();
            let id = usize::from(node.kind_id());
            if want_scopes && node.is_named() && receiver::is_scope(node.kind()) {
                acc.scopes.push(node);
            }
            if let Some(kind) = compiled.walk_refs.get(id).copied().flatten()
                && self.refs
            {
                acc.add_ref(kind, node, parents.last().copied());
            }
            if let Some(chains) = compiled.chains.get(id).filter(|c| self.refs && !c.is_empty()) {
                let field = walk.field_id();
                for chain in chains {
                    if chain.matches(field, &ancestors) {
                        acc.add_ref(chain.kind, node, parents.last().copied());
                    }
                }
            }
            if compiled.roots.as_ref().is_some_and(|r| r.get(id).copied().unwrap_or(false)) {
                let mut matches = cursor.matches(&compiled.query, node, self.src);
                while let Some(m) = matches.next() {
                    self.take(compiled, m, &mut acc);
                }
            }
            let own_field = if compiled.needs_field.get(id).copied().unwrap_or(false) {
                walk.field_id()
            } else {
                None
            };
            if walk.goto_first_child() {
                ancestors.push((id as u16, own_field));
                parents.push(node);
                continue;
            }
            while !walk.goto_next_sibling() {
                if !walk.goto_parent() {
                    break 'walk;
                }
                ancestors.pop();
                parents.pop();
            }
        }
        let Acc { items, refs, mut imports, package, scopes: scope_nodes, .. } = acc;

        let scopes = items
            .iter()
            .filter(|i| i.kind.is_none())
            .map(|i| Scope {
                name: i.name.clone(),
                line: i.span_start.1 + 1,
                end_line: end_line(i.node),
                body_start: body_of(i.node).map(|b| b.start_byte() as u32),
            })
            .collect();
        let definitions = self.build_definitions(items);
        let references = if self.refs {
            let mut receivers = receiver::Receivers::new(self.lang, self.src, root);
            self.build_references(refs, &definitions, &scope_nodes, &mut receivers)
        } else {
            Vec::new()
        };
        imports.sort_by_key(|i| i.line);
        FileAnalysis { definitions, scopes, references, imports, package, error_nodes: 0, lines: 0 }
    }

    /// Records what one query match found.
    fn take<'t>(
        &self,
        compiled: &Compiled,
        m: &tree_sitter::QueryMatch<'_, 't>,
        acc: &mut Acc<'t>,
    ) {
        let mut main: Option<(Role, Node<'t>)> = None;
        let (mut name, mut receiver, mut module, mut declarator) = (None, None, None, None);
        for cap in m.captures() {
            match compiled.roles[cap.index as usize] {
                Role::Name => name = Some(cap.node),
                Role::Declarator => declarator = Some(cap.node),
                Role::Receiver => receiver = Some(cap.node),
                Role::ImportModule => module = Some(cap.node),
                Role::Ignore => {}
                role => main = Some((role, cap.node)),
            }
        }
        match main {
            Some((Role::Def(kind), node)) => {
                let name = name.or_else(|| {
                    let (n, is_function) = resolve_declarator(declarator?)?;
                    // A function pattern needs a function declarator; a data member or
                    // variable declared the same way is not a definition here.
                    let wants_function = matches!(kind, SymbolKind::Function | SymbolKind::Method);
                    (is_function || !wants_function).then_some(n)
                });
                if let Some(name) = name {
                    acc.items.push(self.item(node, Some(kind), name, receiver, m.pattern_index));
                }
            }
            Some((Role::Scope, node)) => {
                if let Some(name) = name {
                    acc.items.push(self.item(node, None, name, None, m.pattern_index));
                }
            }
            Some((Role::Ref(kind), node)) if self.refs => acc.add_ref(kind, node, None),
            Some((Role::Ref(_), _)) => {}
            Some((Role::Import, node)) if acc.import_nodes.insert(node.id()) => {
                let module = module.map(|m| unquote(&self.text(m)).to_owned()).unwrap_or_default();
                acc.imports.push(Import {
                    text: collapse_ws(&self.text(node), 500),
                    module,
                    line: node.start_position().row as u32 + 1,
                });
            }
            Some((Role::Package, _)) => {
                if let Some(m) = module {
                    acc.package = Some(self.text(m).into_owned());
                }
            }
            _ => {}
        }
    }

    fn item<'t>(
        &self,
        node: Node<'t>,
        kind: Option<SymbolKind>,
        name: Node<'t>,
        receiver: Option<Node<'t>>,
        pattern: usize,
    ) -> Item<'t> {
        let wrapper = outer_wrapper(node);
        let sig_start = if wrapper.kind() == "decorated_definition" {
            node.start_byte()
        } else {
            wrapper.start_byte()
        };
        let mut span = wrapper;
        // Rust attributes (`#[derive]`, `#[test]`) belong to the item below them.
        while let Some(p) = span.prev_named_sibling().filter(|p| p.kind() == "attribute_item") {
            span = p;
        }
        let end = match node.kind() {
            "file_scoped_namespace_declaration" => {
                let mut root = node;
                while let Some(p) = root.parent() {
                    root = p;
                }
                root.end_byte()
            }
            _ => node.end_byte(),
        };
        let name = qualified_declarator(name, self.src);
        let raw = self.text(name);
        // `Foo<T>::Bar::baz` as a name: `baz`, qualified by `Foo::Bar`.
        let mut receiver = receiver.map(|r| strip_generics(&self.text(r)));
        // `str::operator const char *()`: the conversion's own node, whose text
        // `strip_generics` would run together.
        let (name, raw) = match name.child_by_field_name("name") {
            Some(cast)
                if name.kind() == "qualified_identifier" && cast.kind() == "operator_cast" =>
            {
                let scope = &raw[..cast.start_byte() - name.start_byte()];
                receiver =
                    Some(strip_generics(scope.trim_end_matches(':').trim_start_matches("::")));
                (cast, self.text(cast))
            }
            _ => (name, raw),
        };
        let raw = match name.kind() {
            // `operator std::string() const`: named up to its parameters, as ctags does.
            "operator_cast" => {
                let head = raw.split('(').next().unwrap_or(&raw);
                Cow::Owned(collapse_ws(head.trim(), 200))
            }
            "qualified_identifier" => {
                let flat = strip_generics(&raw);
                match flat.rsplit_once("::") {
                    Some((scope, last)) => {
                        if !scope.is_empty() {
                            receiver = Some(scope.trim_start_matches("::").to_owned());
                        }
                        Cow::Owned(last.to_owned())
                    }
                    None => Cow::Owned(flat),
                }
            }
            "template_function" => Cow::Owned(strip_generics(&raw)),
            _ => raw,
        };
        let name_text = match (node.kind(), name.kind()) {
            // `module "foo"` in TypeScript declarations
            (_, "string") => unquote(&raw).to_owned(),
            ("operator_declaration", _) => format!("operator{raw}"),
            // C#'s `implicit operator JToken(JObject o)`: named by the type it converts
            // to, as ctags names it; the bare type would read as a constructor of it.
            ("conversion_operator_declaration", _) => {
                format!("operator {}", collapse_ws(&raw, 200))
            }
            ("destructor_declaration", _) => format!("~{raw}"),
            _ => collapse_ws(&raw, 200),
        };
        Item {
            node,
            span_start: (span.start_byte(), span.start_position().row as u32),
            sig_start,
            end,
            kind,
            name: name_text,
            name_line: name.start_position().row as u32 + 1,
            receiver,
            pattern,
        }
    }

    fn build_definitions(&self, mut items: Vec<Item<'_>>) -> Vec<Definition> {
        // The same node can match several patterns (a JS `const f = () => {}` is both a
        // function and, by shape, a constant): the earlier pattern in the file wins.
        items.sort_by_key(|i| (i.node.start_byte(), std::cmp::Reverse(i.end), i.pattern));
        items.dedup_by(|b, a| {
            (a.node.start_byte(), a.end) == (b.node.start_byte(), b.end)
                && a.name == b.name
                && a.kind.is_some() == b.kind.is_some()
        });

        let sep = self.lang.qualifier_separator();
        let mut defs: Vec<Definition> = Vec::new();
        // (end byte, qualified name, kind or None for scope, index into defs)
        let mut stack: Vec<Open> = Vec::new();
        for item in items {
            let (start, end) = (item.node.start_byte(), item.end);
            while let Some(top) = stack.last() {
                let contains = top.0 <= start && end <= top.1 && (top.0, top.1) != (start, end);
                if contains {
                    break;
                }
                stack.pop();
            }
            let container = stack.last();
            let mut qualified = String::new();
            if let Some(c) = container {
                qualified.push_str(&c.2);
                qualified.push_str(sep);
            }
            if let Some(r) = &item.receiver {
                qualified.push_str(r);
                qualified.push_str(sep);
            }
            qualified.push_str(&item.name);

            let Some(mut kind) = item.kind else {
                stack.push((start, end, qualified, None, None));
                continue;
            };
            let in_type = match container {
                Some((.., None, _)) => true, // a scope (impl block)
                Some((.., Some(k), _)) => {
                    k.is_container() && !matches!(k, SymbolKind::Module | SymbolKind::Namespace)
                }
                None => false,
            };
            if kind == SymbolKind::Function && (in_type || item.receiver.is_some()) {
                kind = SymbolKind::Method;
            }
            let parent = stack.iter().rev().find_map(|s| s.4);
            let idx = defs.len() as u32;
            defs.push(self.definition(&item, kind, qualified.clone(), parent));
            stack.push((start, end, qualified, Some(kind), Some(idx)));
        }
        defs
    }

    fn definition(
        &self,
        item: &Item<'_>,
        kind: SymbolKind,
        qualified_name: String,
        parent: Option<u32>,
    ) -> Definition {
        let node = item.node;
        let body = body_of(node);
        let sig_end = match body {
            // Go `type T struct {`: the keyword belongs to the signature.
            Some(b) if matches!(b.kind(), "struct_type" | "interface_type") => {
                let bytes = &self.src[b.byte_range()];
                b.start_byte() + bytes.iter().position(|&c| c == b'{').unwrap_or(bytes.len())
            }
            Some(b) => b.start_byte(),
            None => {
                let bytes = &self.src[node.byte_range()];
                let cut =
                    bytes.iter().position(|&b| b == b'{' || b == b'\n').unwrap_or(bytes.len());
                node.start_byte() + cut
            }
        };
        let sig_start = item.sig_start;
        let signature = collapse_ws(
            &String::from_utf8_lossy(&self.src[sig_start..sig_end.max(sig_start)]),
            400,
        );
        let (doc, doc_line) = match self.doc(node, body) {
            Some((d, l)) => (Some(d), Some(l)),
            None => (None, None),
        };
        Definition {
            name: item.name.clone(),
            qualified_name,
            kind,
            start_byte: item.span_start.0 as u32,
            end_byte: item.end as u32,
            line: item.span_start.1 + 1,
            end_line: if item.end == node.end_byte() {
                end_line(node)
            } else {
                count_lines(&self.src[..item.end])
            },
            name_line: item.name_line,
            body: body.map(|b| (b.start_byte() as u32, b.end_byte() as u32)),
            signature: signature.trim_end_matches(['{', ' ']).trim_end().to_owned(),
            doc,
            doc_line,
            parent,
        }
    }

    fn build_references<'t>(
        &self,
        mut refs: Vec<RefCandidate<'t>>,
        defs: &[Definition],
        scopes: &[Node<'t>],
        receivers: &mut receiver::Receivers<'s, 't>,
    ) -> Vec<Reference> {
        // A definition's own name is not a use of it.
        let mut name_starts: Vec<(u32, &str)> =
            defs.iter().map(|d| (d.name_line, d.name.as_str())).collect();
        name_starts.sort_unstable();
        // Stable: among candidates of one kind at one byte, the first found wins.
        refs.sort_by_key(|r| (r.0, r.1));
        refs.dedup_by_key(|r| r.0);

        // Sweep references in order with a stack of open definitions.
        let mut order: Vec<u32> = (0..defs.len() as u32).collect();
        order.sort_by_key(|&i| {
            (defs[i as usize].start_byte, std::cmp::Reverse(defs[i as usize].end_byte))
        });
        let mut open_defs =
            Sweep::new(&order, |i| (defs[i as usize].start_byte, defs[i as usize].end_byte));
        let mut out = Vec::with_capacity(refs.len());
        // The same sweep over the scopes receivers are typed in.
        let mut open_scopes =
            Sweep::new(scopes, |n: Node<'t>| (n.start_byte() as u32, n.end_byte() as u32));
        for (byte, kind, node, parent) in refs {
            let byte = byte as u32;
            let enclosing = open_defs.advance(byte).last().copied();
            let name = self.text(node);
            let pos = node.start_position();
            let line = pos.row as u32 + 1;
            if !kind.is_call() && name_starts.binary_search(&(line, name.as_ref())).is_ok() {
                continue;
            }
            if is_noise(self.lang, &name) {
                continue;
            }
            // The receiver, if any, is the first child of the name's parent in every
            // grammar here (`attribute.object`, `member_expression.object`,
            // `field_expression.value`, `scoped_identifier.path`,
            // `selector_expression.operand`, `member_access_expression.expression`,
            // `method_invocation.object`; named or not: C#'s `this` is anonymous).
            let java_call = kind == RefKind::Call && self.lang == Language::Java;
            // C++'s template arguments wrap the name (`a::f<T>()`, `o.get<T>()`):
            // the receiver belongs to the node around them.
            let holder = parent.or_else(|| node.parent()).map(|p| match p.kind() {
                "template_function" | "template_method" => p.parent().unwrap_or(p),
                _ => p,
            });
            let receiver = if kind == RefKind::MemberCall || java_call {
                holder
                    .filter(|p| !java_call || p.kind() == "method_invocation")
                    .and_then(|p| p.child(0))
                    .filter(|r| *r != node)
            } else {
                None
            };
            // Java's grammar has one node for `m()` and `obj.m()`: told apart here.
            let kind = match receiver {
                Some(r) if matches!(&*self.text(r), "self" | "this" | "cls" | "Self") => {
                    RefKind::SelfCall
                }
                Some(_) if java_call => RefKind::MemberCall,
                _ => kind,
            };
            let receiver = match receiver {
                Some(r) if kind == RefKind::MemberCall => {
                    receivers.type_of(r, open_scopes.advance(byte)).or_else(|| {
                        // Rust's `util::f()`, `crate::db::open()`: a path, not a
                        // value of unknown type, written with `::` as C++'s scopes
                        // are, so that the call graph keeps resolving it by name.
                        (self.lang == Language::Rust
                            && holder.is_some_and(|h| {
                                matches!(h.kind(), "scoped_identifier" | "scoped_type_identifier")
                            }))
                        .then(|| format!("{}::", strip_generics(&self.text(r))))
                    })
                }
                _ => None,
            };
            out.push(Reference {
                name: name.into_owned(),
                kind,
                line,
                column: pos.column as u32 + 1,
                enclosing,
                receiver,
            });
        }
        out
    }

    /// The first line of the doc comment above `node`, or of its docstring (Python).
    fn doc(&self, node: Node<'_>, body: Option<Node<'_>>) -> Option<(String, u32)> {
        if self.lang == Language::Python
            && let Some(doc) = body.and_then(|b| self.docstring(b))
        {
            return Some(doc);
        }
        let mut cur = node;
        loop {
            // Named siblings only: keywords such as `export` or `const` are not in the way.
            let mut prev = cur.prev_named_sibling();
            // Skip Rust attributes between the doc comment and the item.
            while let Some(p) = prev.filter(|p| p.kind() == "attribute_item") {
                prev = p.prev_named_sibling();
            }
            match prev {
                Some(p) if is_comment(p) => return self.comment_block_first_line(p, cur),
                Some(_) => return None,
                None => {
                    let parent = cur.parent()?;
                    if !is_wrapper(parent.kind()) {
                        return None;
                    }
                    cur = parent;
                }
            }
        }
    }

    /// Walks up a run of adjacent comments ending right above `below` and returns the
    /// first meaningful line of the topmost one.
    fn comment_block_first_line(&self, last: Node<'_>, below: Node<'_>) -> Option<(String, u32)> {
        if below.start_position().row > last.end_position().row + 1 {
            return None; // a blank line separates the comment from the definition
        }
        // A run of line comments is read from the source: walking siblings back
        // costs each step the sibling's index (tree-sitter finds a previous sibling
        // from the parent's first child), n² in the run's length (a Rust `///` block
        // of 8,000 lines took 1.3 s, 32,000 lines 5.1 s).
        let text = &self.src[last.byte_range()];
        if self.lang == Language::Python {
            return self.line_comment_block_first_line(last, b"#");
        }
        if text.starts_with(b"//") && !text.trim_ascii_end().contains(&b'\n') {
            return self.line_comment_block_first_line(last, b"//");
        }
        let mut top = last;
        while let Some(p) = top.prev_named_sibling() {
            if is_comment(p) && p.end_position().row + 1 >= top.start_position().row {
                top = p;
            } else {
                break;
            }
        }
        // The first meaningful line of the block, looking through every comment in it
        // (a C# `/// <summary>` line carries no text of its own).
        let mut node = Some(top);
        while let Some(n) = node {
            if let Some((line, offset)) = first_comment_line(&self.text(n)) {
                return Some((line, n.start_position().row as u32 + 1 + offset));
            }
            if n.id() == last.id() {
                break;
            }
            node = n.next_named_sibling();
        }
        None
    }

    /// [`Self::comment_block_first_line`] for a line comment (`prefix`: `#`, `//`),
    /// read from the source rather than the tree: the comment lines right above
    /// `last` at its indentation. (Python's parser also saw the inside of a long
    /// run of them blanked, see [`mask::mask_comment_runs`].)
    fn line_comment_block_first_line(
        &self,
        last: Node<'_>,
        prefix: &[u8],
    ) -> Option<(String, u32)> {
        let src = self.src;
        let line_start =
            |end: usize| src[..end].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let start = line_start(last.start_byte());
        let indent = &src[start..last.start_byte()];
        let mut top = last.start_byte();
        let mut rows_up = 0u32;
        if indent.iter().all(|&b| b == b' ' || b == b'\t') {
            top = start;
            while top > 0 {
                let above = line_start(top - 1);
                let line = &src[above..top - 1];
                if line.strip_prefix(indent).is_some_and(|rest| rest.starts_with(prefix)) {
                    top = above;
                    rows_up += 1;
                } else {
                    break;
                }
            }
        }
        let (line, offset) =
            first_comment_line(&String::from_utf8_lossy(&src[top..last.end_byte()]))?;
        Some((line, last.start_position().row as u32 + 1 - rows_up + offset))
    }

    fn docstring(&self, body: Node<'_>) -> Option<(String, u32)> {
        let first = body.named_child(0)?;
        if first.kind() != "expression_statement" {
            return None;
        }
        let s = first.named_child(0)?;
        if s.kind() != "string" {
            return None;
        }
        let text = self.text(s);
        let t = text.trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B', 'f', 'F']);
        let t = t.trim_matches(|c| c == '"' || c == '\'');
        let (offset, line) = t.lines().map(str::trim).enumerate().find(|(_, l)| !l.is_empty())?;
        Some((truncate(line, 200), s.start_position().row as u32 + 1 + offset as u32))
    }
}

/// Walks a C/C++ declarator (`*f(int)`, `(*cb)(void)`, `&Foo::operator=(...)`) down
/// to the node that names it. Returns the name node and whether a function
/// declarator was on the way (a function rather than a variable or field).
/// Spans sorted by start (an outer one before an inner one at the same start),
/// swept at increasing positions: the ones containing the position, innermost last.
struct Sweep<'a, T, F> {
    items: &'a [T],
    next: usize,
    open: Vec<T>,
    span: F,
}

impl<'a, T: Copy, F: Fn(T) -> (u32, u32)> Sweep<'a, T, F> {
    fn new(items: &'a [T], span: F) -> Self {
        Sweep { items, next: 0, open: Vec::new(), span }
    }

    /// The spans containing `at`, which is not before the previous call's.
    fn advance(&mut self, at: u32) -> &[T] {
        let span = &self.span;
        while let Some(&item) = self.items.get(self.next).filter(|&&i| span(i).0 <= at) {
            let start = span(item).0;
            while self.open.last().is_some_and(|&o| span(o).1 <= start) {
                self.open.pop();
            }
            self.open.push(item);
            self.next += 1;
        }
        while self.open.last().is_some_and(|&o| span(o).1 <= at) {
            self.open.pop();
        }
        &self.open
    }
}

/// A C++ qualified name without the return type the grammar took for its scope. A
/// macro before a templated return type (`really_inline Result<A> Result<B>::get(`)
/// is read as the type, and `Result<A> Result<B>::get` as one qualified name, its
/// scope `Result<A>`; a scope is followed by `::`, a return type is not.
fn qualified_declarator<'t>(mut node: Node<'t>, src: &[u8]) -> Node<'t> {
    while node.kind() == "qualified_identifier"
        && let (Some(scope), Some(name)) =
            (node.child_by_field_name("scope"), node.child_by_field_name("name"))
        && !src[scope.end_byte()..name.start_byte()].windows(2).any(|w| w == b"::")
    {
        node = name;
    }
    node
}

fn resolve_declarator(mut node: Node<'_>) -> Option<(Node<'_>, bool)> {
    let mut is_function = false;
    for _ in 0..32 {
        match node.kind() {
            "function_declarator" => {
                is_function = true;
                node = node.child_by_field_name("declarator")?;
            }
            "pointer_declarator"
            | "reference_declarator"
            | "attributed_declarator"
            | "array_declarator"
            | "init_declarator"
            | "parenthesized_declarator" => {
                node = match node.child_by_field_name("declarator") {
                    Some(d) => d,
                    None => {
                        let n = node.named_child_count();
                        (0..n)
                            .rev()
                            .filter_map(|i| node.named_child(i as u32))
                            .find(|c| c.kind() != "type_qualifier")?
                    }
                };
            }
            // `str::operator const char *()`: a conversion, so a function.
            "qualified_identifier" => {
                let cast =
                    node.child_by_field_name("name").is_some_and(|n| n.kind() == "operator_cast");
                return Some((node, is_function || cast));
            }
            "identifier" | "field_identifier" | "type_identifier" | "operator_name"
            | "destructor_name" | "template_function" => return Some((node, is_function)),
            // `operator std::string_view() const`: always a function, its parameter
            // list inside the node.
            "operator_cast" => return Some((node, true)),
            _ => return None,
        }
    }
    None
}

/// Wrapper nodes that own a definition's leading comment, decorators or `export`.
fn is_wrapper(kind: &str) -> bool {
    matches!(
        kind,
        "decorated_definition"
            | "export_statement"
            | "template_declaration"
            | "lexical_declaration"
            | "variable_declaration"
            | "expression_statement"
            | "type_declaration"
            | "const_declaration"
            | "declaration"
            | "ambient_declaration"
    )
}

/// The outermost wrapper that starts a definition: decorators, `export`, `template<>`.
fn outer_wrapper(node: Node<'_>) -> Node<'_> {
    let mut cur = node;
    while let Some(p) = cur.parent() {
        let wraps = match p.kind() {
            "decorated_definition" | "export_statement" | "template_declaration" => true,
            // `const f = () => {}`: the declaration is the definition's line.
            "lexical_declaration" | "variable_declaration" => p.named_child_count() == 1,
            // Go `type Foo struct {}` with a single spec.
            "type_declaration" | "const_declaration" => {
                p.named_child_count() == 1 && p.start_position().row == cur.start_position().row
            }
            "expression_statement" => {
                p.kind() == "expression_statement" && cur.kind() == "assignment"
            }
            _ => false,
        };
        if !wraps {
            break;
        }
        cur = p;
    }
    cur
}

fn body_of(node: Node<'_>) -> Option<Node<'_>> {
    if let Some(b) = node.child_by_field_name("body") {
        return Some(b);
    }
    // `const f = () => {...}`, `obj.f = function() {...}`, `{ f: () => {} }`
    for field in ["value", "right"] {
        if let Some(v) = node.child_by_field_name(field)
            && matches!(
                v.kind(),
                "arrow_function" | "function_expression" | "function" | "generator_function"
            )
        {
            return v.child_by_field_name("body");
        }
    }
    // Go `type T struct {...}`, `type I interface {...}`: the type literal holds the body.
    if let Some(t) = node.child_by_field_name("type")
        && matches!(t.kind(), "struct_type" | "interface_type")
    {
        return Some(t);
    }
    // C# properties: the accessor list.
    node.child_by_field_name("accessors")
}

fn is_comment(node: Node<'_>) -> bool {
    node.kind().contains("comment")
}

/// The first meaningful line of a comment and its offset in lines from the comment's start.
fn first_comment_line(text: &str) -> Option<(String, u32)> {
    for (offset, line) in text.lines().enumerate() {
        let mut l = line.trim();
        for prefix in ["///", "//!", "//", "/**", "/*!", "/*", "#"] {
            if let Some(rest) = l.strip_prefix(prefix) {
                l = rest;
                break;
            }
        }
        let l = l.trim_end_matches("*/").trim().trim_start_matches('*').trim();
        let l = strip_xml_tags(l);
        let l = l.trim();
        if !l.is_empty() && l.chars().any(char::is_alphanumeric) {
            return Some((truncate(l, 200), offset as u32));
        }
    }
    None
}

fn strip_xml_tags(s: &str) -> Cow<'_, str> {
    if !s.contains('<') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    Cow::Owned(out)
}

/// Names too common to be useful as references.
fn is_noise(lang: Language, name: &str) -> bool {
    match lang {
        Language::Python => matches!(name, "self" | "cls"),
        _ => false,
    }
}

fn unquote(s: &str) -> &str {
    let s = s.trim();
    for (open, close) in [("\"", "\""), ("'", "'"), ("`", "`"), ("<", ">")] {
        if s.len() >= 2 && s.starts_with(open) && s.ends_with(close) {
            return &s[1..s.len() - 1];
        }
    }
    s
}

fn strip_generics(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut depth = 0u32;
    for c in s.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            c if depth == 0 && !c.is_whitespace() => out.push(c),
            _ => {}
        }
    }
    out
}

/// Collapses runs of whitespace to one space and cuts at `max` characters.
pub(crate) fn collapse_ws(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max + 4));
    let mut chars = 0;
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        for c in word.chars() {
            if chars == max {
                out.push('…');
                return out;
            }
            out.push(c);
            chars += 1;
        }
    }
    out
}

fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

fn end_line(node: Node<'_>) -> u32 {
    let end = node.end_position();
    // A node that ends with its newline ends on the previous line.
    if end.column == 0 && end.row > node.start_position().row {
        end.row as u32
    } else {
        end.row as u32 + 1
    }
}

#[cfg(test)]
mod tests;

/// The parse tree as an indented S-expression (named nodes, field names, line
/// numbers), optionally only nodes overlapping 1-based lines `range`. A tool for
/// writing query patterns.
pub fn debug_tree(lang: Language, source: &[u8], range: Option<(usize, usize)>) -> String {
    let mut parser = Parser::new();
    parser.set_language(&lang.grammar()).expect("grammar ABI is supported");
    let masked = mask::for_parser(lang, source);
    let Some(tree) = parser.parse(masked.as_ref(), None) else { return String::new() };
    let mut out = String::new();
    let mut cursor = tree.walk();
    let mut depth = 0usize;
    loop {
        let node = cursor.node();
        let (start, end) = (node.start_position().row + 1, node.end_position().row + 1);
        let visible = range.is_none_or(|(a, b)| end >= a && start <= b);
        if node.is_named() && visible {
            let field = cursor.field_name().map(|f| format!("{f}: ")).unwrap_or_default();
            let text = if node.child_count() == 0 {
                format!(" {:?}", String::from_utf8_lossy(&source[node.byte_range()]))
            } else {
                String::new()
            };
            out.push_str(&format!(
                "{}{field}({}) L{start}-{end}{text}\n",
                "  ".repeat(depth),
                node.kind()
            ));
        }
        if visible && cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
            depth -= 1;
        }
    }
}
