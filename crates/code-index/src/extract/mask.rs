//! What the parser reads instead of the source, where a grammar goes wrong or slow:
//! masks that blank bytes (to spaces, line breaks kept) so every offset stays true.
//! All text (names, signatures, docs) is read from the original bytes.

use std::{borrow::Cow, ops::Range, sync::OnceLock};

use crate::lang::Language;

/// The bytes the parser reads for `src` in `lang`.
pub(super) fn for_parser(lang: Language, src: &[u8]) -> Cow<'_, [u8]> {
    match lang {
        Language::C | Language::Cpp => mask_macros(src),
        Language::Python => mask_comment_runs(src),
        _ => Cow::Borrowed(src),
    }
}

/// Python: the inside of every long run of comment lines blanked (spaces, line
/// breaks kept), for the parser only.
///
/// tree-sitter-python's scanner, at the end of each line, reads ahead over all the
/// comment and blank lines that follow to find the next line of code's indentation,
/// and the comments are then lexed one by one: a run of n comment lines costs n²
/// (16,000 lines took 15 s to parse). What the scanner decides at a comment line
/// depends only on that line's indentation and on the code's after the run:
/// blocks close before a comment indented less than they are, so only before a
/// line indented less than every comment above it in the run (the blocks left
/// open held those). Such lines are kept, with the line above each (where the
/// closed block ends), and the run's first and last; the others become blank
/// lines, which the scanner skips in one pass. Doc comments are read from the
/// source ([`super::Extractor::line_comment_block_first_line`]).
pub(super) fn mask_comment_runs(src: &[u8]) -> Cow<'_, [u8]> {
    /// Shorter runs cost at most this many lines' reading per line.
    const MIN_RUN: usize = 8;
    let mut out: Option<Vec<u8>> = None;
    let mut blank = |run: &[CommentLine]| {
        if run.len() < MIN_RUN {
            return;
        }
        let buf = out.get_or_insert_with(|| src.to_vec());
        let mut least = u32::MAX;
        for (i, line) in run.iter().enumerate() {
            let lowest = line.indent < least;
            least = least.min(line.indent);
            let before_lowest = run.get(i + 1).is_some_and(|next| next.indent < least);
            if lowest || before_lowest || i + 1 == run.len() {
                continue;
            }
            for b in &mut buf[line.start..line.end] {
                if *b != b'\r' {
                    *b = b' ';
                }
            }
        }
    };
    let mut run: Vec<CommentLine> = Vec::new();
    let mut pos = 0;
    while pos < src.len() {
        let end = src[pos..].iter().position(|&b| b == b'\n').map_or(src.len(), |i| pos + i);
        let line = &src[pos..end];
        let ws = line.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
        match line.get(ws) {
            Some(b'#') => {
                // As the scanner counts: a tab is 8.
                let indent = line[..ws].iter().map(|&b| if b == b'\t' { 8 } else { 1 }).sum();
                run.push(CommentLine { start: pos, end, indent });
            }
            // Blank lines, skipped by the scanner, neither end a run nor count in it.
            None | Some(b'\r') => {}
            Some(_) => {
                blank(&run);
                run.clear();
            }
        }
        pos = end + 1;
    }
    blank(&run);
    match out {
        Some(buf) => Cow::Owned(buf),
        None => Cow::Borrowed(src),
    }
}

/// A line of a run of Python comment lines: where it is, without its line break,
/// and its indentation.
struct CommentLine {
    start: usize,
    end: usize,
    indent: u32,
}

/// Blanks C/C++ macros that the grammar would misparse, keeping every byte offset:
///
/// - export macros in class heads: `class LEVELDB_EXPORT Cache {`;
/// - annotations after a parameter list: `void Lock() EXCLUSIVE_LOCK_FUNCTION() {`;
/// - annotations after a member: `int count_ GUARDED_BY(mu_);`;
/// - macros before a return type: `SPDLOG_INLINE std::shared_ptr<logger> get(`;
/// - header names in conditions: `#if __has_include(<optional>)`;
/// - macro lines where a member or a declaration goes, and conditionals that split
///   one ([`masks_in_context`]).
///
/// Without this, tree-sitter reads `class LEVELDB_EXPORT Cache {...}` as a function
/// named `Cache`, and everything after it in the file goes wrong with it. Only
/// ALL_CAPS identifiers (with an underscore, for the annotations) in those positions
/// are touched, which is how such macros are written.
pub(super) fn mask_macros(src: &[u8]) -> Cow<'_, [u8]> {
    use regex::bytes::Regex;
    static PATTERNS: OnceLock<[Regex; 5]> = OnceLock::new();
    let [class_head, after_params, after_member, before_type, has_include] = PATTERNS.get_or_init(|| {
        // ASCII mode (`(?-u)`): C and C++ identifiers are ASCII.
        [
            Regex::new(r"(?-u)\b(?:class|struct|union)\s+([A-Z][A-Z0-9_]{2,})\s+([A-Za-z_]\w*)\s*(?:\{|:[^:]|final\b)")
                .unwrap(),
            Regex::new(
                r"(?-u)\)\s*(?:const\s*)?(?:noexcept\s*)?([A-Z][A-Z0-9]*_[A-Z0-9_]*(?:\s*\([^()\n]*\))?)\s*(?:\{|;|=|->|override\b|final\b)",
            )
            .unwrap(),
            Regex::new(r"(?-u)\b([A-Za-z_]\w*)\s+([A-Z][A-Z0-9]*_[A-Z0-9_]*\s*\([^()\n]*\))\s*[;=]").unwrap(),
            // `SPDLOG_INLINE std::shared_ptr<logger> get(`, `FMT_CONSTEXPR FMT_INLINE
            // auto f(`: macros before a return type and a name (one word after
            // the macro is a declaration of that type: `LARGE_INTEGER f(`), the
            // name maybe on the next line (`PYBIND11_NOINLINE value_and_holder` above
            // `instance::get_value_and_holder(`), or before a destructor.
            Regex::new(
                r"(?-u)(?m)^[ \t]*(?:template[ \t]*<[^\n]*?>[ \t]*)?((?:[A-Z][A-Z0-9]*_[A-Z0-9_]*[ \t]+)+)(?:(?:static|inline|constexpr|virtual|explicit|friend|const)[ \t]+)*(?:~|[A-Za-z_][\w:]*(?:<[^;{}()\n]*>)?(?:[ \t*&]+|[ \t*&]*\n[ \t*&]*)[A-Za-z_~])[\w:]*[ \t]*\(",
            )
            .unwrap(),
            // `#if __has_include(<optional>)`: a header name is no expression.
            Regex::new(r"(?-u)\b__has_include(?:_next)?[ \t]*\([ \t]*(<[^<>()\n]*>)").unwrap(),
        ]
    });
    let mut spans: Vec<Range<usize>> = Vec::new();
    for c in class_head.captures_iter(src) {
        if c.get(2).is_some_and(|n| n.as_bytes() != b"final") {
            spans.extend(c.get(1).map(|m| m.range()));
        }
    }
    spans.extend(after_params.captures_iter(src).filter_map(|c| c.get(1)).map(|m| m.range()));
    for pattern in [before_type, has_include] {
        spans.extend(pattern.captures_iter(src).filter_map(|c| c.get(1)).map(|m| m.range()));
    }
    for c in after_member.captures_iter(src) {
        let word = c.get(1).map_or(&b""[..], |m| m.as_bytes());
        // `return FOO_BAR(x);` is an expression, not a member with an annotation.
        if !matches!(
            word,
            b"return"
                | b"case"
                | b"else"
                | b"do"
                | b"throw"
                | b"goto"
                | b"co_return"
                | b"co_yield"
                | b"delete"
                | b"new"
        ) {
            spans.extend(c.get(2).map(|m| m.range()));
        }
    }
    masks_in_context(src, &mut spans);
    if spans.is_empty() {
        return Cow::Borrowed(src);
    }
    let mut out = src.to_vec();
    for span in spans {
        for b in &mut out[span] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    Cow::Owned(out)
}

/// C/C++ masks that depend on where they are, found in one pass over the tokens:
///
/// - macro invocations alone on their lines, where a member or a declaration goes,
///   that the grammar cannot read as one ([`MacroStatement`]);
/// - preprocessor conditionals that split a declaration or an expression
///   ([`Conditional`]).
fn masks_in_context(src: &[u8], spans: &mut Vec<Range<usize>>) {
    let mut lexer = Lexer::new(src, 0);
    let mut scan = Scan { boundary: true, ..Scan::default() };
    let mut conditionals: Vec<Conditional> = Vec::new();
    while let Some(t) = lexer.next() {
        let text = &src[t.range.clone()];
        match t.kind {
            Tok::Directive => {
                scan.directive(text, t.range, &mut conditionals, spans);
                continue;
            }
            Tok::Ident if t.first_on_line && scan.boundary && is_macro_name(text) => {
                let body = scan.bodies.last().copied().unwrap_or(Body::Namespace);
                if let Some(m) =
                    (body != Body::Other).then(|| MacroStatement::read(src, &t)).flatten()
                {
                    if m.masked_in(body) {
                        spans.push(t.range.start..m.end);
                    }
                    lexer = Lexer::new(src, m.end);
                    scan.head = Head::default();
                    scan.access = false;
                    scan.colons = 0;
                    continue;
                }
            }
            _ => {}
        }
        scan.token(text, t.kind);
    }
}

/// Where the scan is: what each open brace holds, and the tokens since the last
/// declaration or statement.
#[derive(Default, Clone)]
struct Scan {
    bodies: Vec<Body>,
    head: Head,
    /// The previous token ended a declaration or a statement.
    boundary: bool,
    /// It was `public`, `protected` or `private`.
    access: bool,
    /// How many `:` in a row end the tokens so far: one is a label, a `case`.
    colons: u32,
    parens: u32,
}

impl Scan {
    fn token(&mut self, text: &[u8], kind: Tok) {
        self.boundary = true;
        self.colons = if kind == Tok::Punct(b':') { self.colons + 1 } else { 0 };
        match kind {
            Tok::Punct(b';') => self.head = Head::default(),
            Tok::Punct(b'{') => self.bodies.push(std::mem::take(&mut self.head).body()),
            Tok::Punct(b'}') => {
                self.bodies.pop();
                self.head = Head::default();
            }
            // `public:`
            Tok::Punct(b':') if self.access => self.head = Head::default(),
            _ => {
                match kind {
                    Tok::Punct(b'(') => self.parens += 1,
                    Tok::Punct(b')') => self.parens = self.parens.saturating_sub(1),
                    _ => {}
                }
                self.head.push(text, kind);
                // `template <typename T>` before `PYBIND11_DEPRECATED("..")`
                self.boundary = self.head.template_params_closed;
            }
        }
        self.access = kind == Tok::Ident && matches!(text, b"public" | b"protected" | b"private");
    }

    /// Whether a conditional's directive here leaves the code around it whole.
    fn at_rest(&self) -> bool {
        self.boundary || self.colons == 1
    }

    fn directive(
        &mut self,
        text: &[u8],
        range: Range<usize>,
        open: &mut Vec<Conditional>,
        spans: &mut Vec<Range<usize>>,
    ) {
        let name = text[1..].trim_ascii_start();
        let name = &name[..name.iter().take_while(|b| b.is_ascii_alphabetic()).count()];
        match name {
            b"if" | b"ifdef" | b"ifndef" => open.push(Conditional {
                start: self.clone(),
                directives: vec![range],
                splits: !self.at_rest(),
            }),
            b"elif" | b"elifdef" | b"elifndef" | b"else" => {
                if let Some(c) = open.last_mut() {
                    c.splits |= !self.at_rest() || self.parens != c.start.parens;
                    c.directives.push(range);
                    // Each branch is read from where the first began.
                    *self = c.start.clone();
                }
            }
            b"endif" => {
                if let Some(mut c) = open.pop() {
                    c.splits |= !self.at_rest() || self.parens != c.start.parens;
                    c.directives.push(range);
                    if c.splits {
                        c.mask(spans);
                    }
                }
            }
            _ => {}
        }
    }
}

/// An `#if` .. `#endif` group. One that splits a declaration or an expression (a
/// directive not between two of them, or branches that leave parentheses open)
/// the grammar cannot parse, and its recovery takes what is around along:
/// pybind11's `constexpr arg` / `#if ..` / `operator"" _a` / `#else` /
/// `operator""_a` / `#endif` lost the operator and its namespace, leveldb's
/// member initializers under `#if` lost the methods after them. The parser reads
/// such a group as its last branch alone (often the general case after the
/// special ones: `#else`): the directives and the other branches are blanked.
struct Conditional {
    /// The scan at the `#if`, where every branch is read from.
    start: Scan,
    /// `#if`, every `#elif` and `#else`, `#endif`.
    directives: Vec<Range<usize>>,
    splits: bool,
}

impl Conditional {
    fn mask(&self, spans: &mut Vec<Range<usize>>) {
        let [first, .., last_branch, endif] = self.directives.as_slice() else {
            // `#if` .. `#endif`: the one branch stays.
            spans.extend(self.directives.iter().cloned());
            return;
        };
        spans.push(first.start..last_branch.end);
        spans.push(endif.clone());
    }
}

/// `PYBIND11_OBJECT`: all capitals, with an underscore, as macros are written.
fn is_macro_name(text: &[u8]) -> bool {
    text.first().is_some_and(u8::is_ascii_uppercase)
        && text.contains(&b'_')
        && text.iter().all(|&b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// What a pair of braces holds, as far as masking goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    /// A class, struct, union or enum: members.
    Type,
    /// A namespace, `extern "C"`, or the file itself: declarations.
    Namespace,
    /// Anything else: a function body, an initializer, a lambda.
    Other,
}

/// The tokens since the last `;`, `{` or `}`: what the next `{` opens.
#[derive(Default, Clone)]
struct Head {
    type_keyword: bool,
    namespace: bool,
    /// A `(` or `=` outside brackets: a function or an initializer, whatever keyword.
    not_a_type: bool,
    parens: u32,
    angles: u32,
    /// The previous token may precede a `(` in a class head: `alignas(8)`,
    /// `__declspec(..)`, a macro.
    before_call: bool,
    after_extern: bool,
    /// It opened with `template`...
    template: bool,
    /// ...and its last token closed the parameter list.
    template_params_closed: bool,
    started: bool,
}

impl Head {
    fn push(&mut self, text: &[u8], kind: Tok) {
        if !self.started {
            self.started = true;
            self.template = text == b"template";
        }
        self.template_params_closed = false;
        match kind {
            Tok::Ident if self.parens == 0 => match text {
                b"class" | b"struct" | b"union" | b"enum" => self.type_keyword = true,
                b"namespace" => self.namespace = true,
                _ => {}
            },
            // `extern "C" {`
            Tok::Literal if self.after_extern => self.namespace = true,
            Tok::Punct(b'(') => {
                if self.parens == 0 && self.angles == 0 && !self.before_call {
                    self.not_a_type = true;
                }
                self.parens += 1;
            }
            Tok::Punct(b')') => self.parens = self.parens.saturating_sub(1),
            Tok::Punct(b'<') if self.parens == 0 => self.angles += 1,
            Tok::Punct(b'>') if self.parens == 0 => {
                self.angles = self.angles.saturating_sub(1);
                self.template_params_closed = self.template && self.angles == 0;
            }
            Tok::Punct(b'=') if self.parens == 0 && self.angles == 0 => self.not_a_type = true,
            _ => {}
        }
        self.before_call = kind == Tok::Ident
            && (matches!(text, b"alignas" | b"__attribute__" | b"__declspec" | b"decltype")
                || is_macro_name(text));
        self.after_extern = kind == Tok::Ident && text == b"extern";
    }

    fn body(&self) -> Body {
        if self.namespace {
            Body::Namespace
        } else if self.type_keyword && !self.not_a_type {
            Body::Type
        } else {
            Body::Other
        }
    }
}

/// `NAME`, `NAME(args)` or either with a `;`, alone on its line(s), where a member
/// or a declaration goes. Masked where the grammar cannot read it as one:
///
/// - an attribute on the line before a declaration: `PYBIND11_DEPRECATED("..")`,
///   `PYBIND11_WARNING_PUSH`;
/// - members in a class body with an expression among the arguments, which is no
///   parameter list: `PYBIND11_TYPE_CASTER(T, const_name("list"));`;
/// - a class's last member without its `;`: `PYBIND11_OBJECT_DEFAULT(args, tuple,
///   PyTuple_Check)` before the `}`.
///
/// tree-sitter reads each as a declaration that does not end, and its recovery takes
/// the class or the declaration after it along (pybind11's `class object : public
/// handle` became a function `object`). In a function body such lines parse as
/// calls and are left alone, as is a line the grammar reads as a member declaration,
/// as ctags does (`PYBIND11_OBJECT_CVT(set, anyset, PySet_Check, PySet_New)` before
/// another member), a function-like definition (`TEST(a, b) {`), and a macro
/// standing for a return type (`GIT_EXTERN(int)` on the line above `git_f(..)`).
struct MacroStatement {
    /// Where it ends, its `;` included.
    end: usize,
    bare: bool,
    /// Its arguments are names a parameter list could hold: `(set, anyset, PySet_Check)`.
    plain: bool,
    semicolon: bool,
    next: Next,
}

/// What follows a macro statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    End,
    OpenBrace,
    CloseBrace,
    /// A name and a `(`: `git_f(` or `Foo::Foo(`, the declaration the macro types.
    Declarator,
    /// Another name, a `~` or a `[`: a member or a declaration.
    Declaration,
    /// An operator: the macro was part of an expression.
    Other,
}

impl MacroStatement {
    fn read(src: &[u8], name: &Token) -> Option<MacroStatement> {
        let skip_blanks = |mut p: usize| {
            while matches!(src.get(p), Some(b' ' | b'\t')) {
                p += 1;
            }
            p
        };
        let mut end = skip_blanks(name.range.end);
        let bare = src.get(end) != Some(&b'(');
        let mut plain = true;
        if bare {
            end = name.range.end;
        } else {
            let mut args = Lexer::new(src, end);
            let mut depth = 0u32;
            // At the start of an argument, where only a name keeps the list plain.
            let mut arg_start = true;
            loop {
                let t = args.next()?;
                match t.kind {
                    Tok::Punct(b'(') => {
                        depth += 1;
                        plain &= depth == 1;
                    }
                    Tok::Punct(b')') => {
                        depth -= 1;
                        if depth == 0 {
                            end = t.range.end;
                            break;
                        }
                    }
                    Tok::Punct(b',') => arg_start = true,
                    Tok::Ident => arg_start = false,
                    Tok::Punct(b':' | b'*' | b'&' | b'<' | b'>') if !arg_start => {}
                    _ => plain = false,
                }
            }
        }
        let mut rest = skip_blanks(end);
        let semicolon = src.get(rest) == Some(&b';');
        if semicolon {
            end = rest + 1;
            rest = skip_blanks(end);
        }
        // Nothing else on the line but a comment.
        let line_ends = match src.get(rest..rest + 2) {
            Some(b"//") | Some(b"/*") => true,
            _ => matches!(src.get(rest), None | Some(b'\n' | b'\r')),
        };
        if !line_ends {
            return None;
        }
        let mut after = Lexer::new(src, end);
        let mut next = after.next();
        while next.as_ref().is_some_and(|t| t.kind == Tok::Directive) {
            next = after.next();
        }
        let next = match next {
            None => Next::End,
            Some(t) => match t.kind {
                Tok::Punct(b'{') => Next::OpenBrace,
                Tok::Punct(b'}') => Next::CloseBrace,
                Tok::Punct(b'~' | b'[') => Next::Declaration,
                Tok::Ident if is_macro_name(&src[t.range.clone()]) => Next::Declaration,
                Tok::Ident => {
                    // `name(`, `Scope::name(`
                    let mut next = after.next();
                    while next.as_ref().is_some_and(|n| n.kind == Tok::Punct(b':')) {
                        next = after.next();
                        if next.as_ref().is_some_and(|n| n.kind == Tok::Ident) {
                            next = after.next();
                        }
                    }
                    if next.is_some_and(|n| n.kind == Tok::Punct(b'(')) {
                        Next::Declarator
                    } else {
                        Next::Declaration
                    }
                }
                _ => Next::Other,
            },
        };
        Some(MacroStatement { end, bare, plain, semicolon, next })
    }

    fn masked_in(&self, body: Body) -> bool {
        if self.semicolon {
            // A call or a member declaration, unless an expression is among the
            // arguments of a member.
            return body == Body::Type && !self.plain;
        }
        match self.next {
            Next::OpenBrace | Next::Other => false,
            Next::End | Next::CloseBrace => true,
            Next::Declarator => !self.plain,
            // A member declaration, the way ctags reads it too.
            Next::Declaration => !(body == Body::Type && self.plain && !self.bare),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Ident,
    /// A number, string or character literal.
    Literal,
    Punct(u8),
    /// A preprocessor directive, to the end of its line.
    Directive,
}

struct Token {
    kind: Tok,
    range: Range<usize>,
    /// Nothing but blanks (and comments) before it on its line.
    first_on_line: bool,
}

/// C/C++ tokens, roughly: names, literals, single punctuation bytes and whole
/// preprocessor directives, with comments skipped.
struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    line_start: bool,
}

impl<'a> Lexer<'a> {
    fn new(src: &'a [u8], pos: usize) -> Self {
        Lexer { src, pos, line_start: pos == 0 }
    }

    fn next(&mut self) -> Option<Token> {
        let src = self.src;
        loop {
            match *src.get(self.pos)? {
                b'\n' => {
                    self.pos += 1;
                    self.line_start = true;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                b'/' if src.get(self.pos + 1) == Some(&b'/') => self.line_comment(),
                b'/' if src.get(self.pos + 1) == Some(&b'*') => self.block_comment(),
                _ => break,
            }
        }
        let start = self.pos;
        let first_on_line = std::mem::replace(&mut self.line_start, false);
        let c = src[start];
        let kind = if c == b'#' && first_on_line {
            self.directive();
            Tok::Directive
        } else if c == b'_' || c.is_ascii_alphabetic() || c >= 0x80 {
            self.pos += src[start..]
                .iter()
                .position(|&b| !(b == b'_' || b.is_ascii_alphanumeric() || b >= 0x80))
                .unwrap_or(src.len() - start);
            match src.get(self.pos) {
                Some(b'"')
                    if matches!(&src[start..self.pos], b"R" | b"LR" | b"uR" | b"UR" | b"u8R") =>
                {
                    self.raw_string();
                    Tok::Literal
                }
                _ => Tok::Ident,
            }
        } else if c.is_ascii_digit() {
            self.number();
            Tok::Literal
        } else if c == b'"' || c == b'\'' {
            self.quoted(c);
            Tok::Literal
        } else {
            self.pos += 1;
            Tok::Punct(c)
        };
        Some(Token { kind, range: start..self.pos, first_on_line })
    }

    fn line_comment(&mut self) {
        self.pos = memchr_from(self.src, b'\n', self.pos);
    }

    fn block_comment(&mut self) {
        self.pos = match self.src[self.pos + 2..].windows(2).position(|w| w == b"*/") {
            Some(i) => self.pos + 2 + i + 2,
            None => self.src.len(),
        };
    }

    /// To the end of the line, continued by `\`; comments and strings inside skipped
    /// (a `/*` in a string is no comment).
    fn directive(&mut self) {
        let src = self.src;
        while let Some(&c) = src.get(self.pos) {
            match c {
                b'\n' if src[..self.pos].ends_with(b"\\") || src[..self.pos].ends_with(b"\\\r") => {
                    self.pos += 1;
                }
                b'\n' => return,
                b'/' if src.get(self.pos + 1) == Some(&b'/') => self.line_comment(),
                b'/' if src.get(self.pos + 1) == Some(&b'*') => self.block_comment(),
                b'"' | b'\'' => self.quoted(c),
                _ => self.pos += 1,
            }
        }
    }

    /// A string or character literal, to its closing quote or, unterminated (`#error
    /// don't`), the end of the line.
    fn quoted(&mut self, quote: u8) {
        self.pos += 1;
        while let Some(&c) = self.src.get(self.pos) {
            match c {
                b'\\' => self.pos += 2,
                b'\n' => return,
                _ => {
                    self.pos += 1;
                    if c == quote {
                        return;
                    }
                }
            }
        }
        self.pos = self.pos.min(self.src.len());
    }

    /// `R"delim( .. )delim"`, from its opening quote.
    fn raw_string(&mut self) {
        let src = self.src;
        let open = self.pos + 1;
        let Some(paren) = src[open..].iter().take(17).position(|&b| b == b'(') else {
            return self.quoted(b'"');
        };
        let mut close = Vec::with_capacity(paren + 2);
        close.push(b')');
        close.extend_from_slice(&src[open..open + paren]);
        close.push(b'"');
        let body = open + paren + 1;
        self.pos = match src[body..].windows(close.len()).position(|w| w == close.as_slice()) {
            Some(i) => body + i + close.len(),
            None => src.len(),
        };
    }

    /// `1'000'000`, `0x1p-3`, `1.5e+10f`: digit separators are no character literals.
    fn number(&mut self) {
        let src = self.src;
        self.pos += 1;
        while let Some(&c) = src.get(self.pos) {
            let exponent_sign =
                matches!(c, b'+' | b'-') && matches!(src[self.pos - 1], b'e' | b'E' | b'p' | b'P');
            if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'\'') || exponent_sign {
                self.pos += 1;
            } else {
                break;
            }
        }
    }
}

fn memchr_from(src: &[u8], byte: u8, from: usize) -> usize {
    src[from..].iter().position(|&b| b == byte).map_or(src.len(), |i| from + i)
}
