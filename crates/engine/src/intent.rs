//! The intent router (seed 004 §3.1): a natural-language request, English or
//! Korean, to a pillar, an action, targets and constraints.
//!
//! Cues are weighed, not matched first-wins: "undo the last change" has a change
//! cue and a stronger manage cue. English cues match whole words (or phrases of
//! whole words); Korean has no word boundaries, and particles attach to words
//! (`handleAuth에`, `파일을`), so Korean cues are stems matched inside the text
//! (`수정` in `수정해줘`, `되돌리` in `되돌려`/`되돌리기`), and code-like runs are
//! cut out of the Hangul around them before targets are extracted.

use protocol::{Intent, IntentConstraints, IntentTarget, LineRange, Pillar, Scope, TargetKind};

/// (pillar, action, weight) for a cue.
type Cue = (Pillar, &'static str, u8);

/// English cues: single words or space-separated phrases of whole words.
const EN: &[(&str, Cue)] = &[
    // understand
    ("understand", (Pillar::Understand, "comprehend", 2)),
    ("comprehend", (Pillar::Understand, "comprehend", 2)),
    ("explain", (Pillar::Understand, "explain", 2)),
    ("analyze", (Pillar::Understand, "analyze", 2)),
    ("analyse", (Pillar::Understand, "analyze", 2)),
    ("overview", (Pillar::Understand, "comprehend", 2)),
    ("architecture", (Pillar::Understand, "architecture", 2)),
    ("structure", (Pillar::Understand, "architecture", 1)),
    ("summarize", (Pillar::Understand, "explain", 2)),
    ("describe", (Pillar::Understand, "explain", 2)),
    ("how does", (Pillar::Understand, "explain", 2)),
    ("how do", (Pillar::Understand, "explain", 1)),
    ("what does", (Pillar::Understand, "explain", 1)),
    ("what is", (Pillar::Understand, "explain", 1)),
    ("purpose", (Pillar::Understand, "explain", 1)),
    // change
    ("modify", (Pillar::Change, "modify", 2)),
    ("change", (Pillar::Change, "modify", 1)),
    ("add", (Pillar::Change, "add", 2)),
    ("remove", (Pillar::Change, "remove", 2)),
    ("delete", (Pillar::Change, "remove", 2)),
    ("refactor", (Pillar::Change, "refactor", 3)),
    ("rename", (Pillar::Change, "rename", 3)),
    ("fix", (Pillar::Change, "fix", 3)),
    ("bug", (Pillar::Change, "fix", 1)),
    ("replace", (Pillar::Change, "modify", 2)),
    ("update", (Pillar::Change, "modify", 1)),
    ("edit", (Pillar::Change, "modify", 2)),
    ("insert", (Pillar::Change, "add", 2)),
    ("implement", (Pillar::Change, "add", 2)),
    // navigate
    ("find", (Pillar::Navigate, "find", 2)),
    ("search", (Pillar::Navigate, "find", 2)),
    ("locate", (Pillar::Navigate, "definition", 2)),
    ("trace", (Pillar::Navigate, "callers", 2)),
    ("jump", (Pillar::Navigate, "definition", 2)),
    ("goto", (Pillar::Navigate, "definition", 2)),
    ("go to", (Pillar::Navigate, "definition", 2)),
    ("where", (Pillar::Navigate, "definition", 1)),
    ("defined", (Pillar::Navigate, "definition", 2)),
    ("definition", (Pillar::Navigate, "definition", 2)),
    ("who calls", (Pillar::Navigate, "callers", 3)),
    ("callers", (Pillar::Navigate, "callers", 3)),
    ("called", (Pillar::Navigate, "callers", 2)),
    ("calls", (Pillar::Navigate, "callees", 1)),
    ("callees", (Pillar::Navigate, "callees", 3)),
    ("references", (Pillar::Navigate, "references", 3)),
    ("usages", (Pillar::Navigate, "references", 3)),
    ("used", (Pillar::Navigate, "references", 2)),
    ("uses", (Pillar::Navigate, "references", 1)),
    ("implementations", (Pillar::Navigate, "implementations", 4)),
    ("implementors", (Pillar::Navigate, "implementations", 4)),
    ("implements", (Pillar::Navigate, "implementations", 3)),
    ("hierarchy", (Pillar::Navigate, "hierarchy", 4)),
    ("subclasses", (Pillar::Navigate, "hierarchy", 3)),
    ("superclass", (Pillar::Navigate, "hierarchy", 3)),
    ("inherits", (Pillar::Navigate, "hierarchy", 3)),
    // read
    ("read", (Pillar::Read, "full", 2)),
    ("show", (Pillar::Read, "full", 1)),
    ("view", (Pillar::Read, "full", 2)),
    ("open", (Pillar::Read, "full", 2)),
    ("cat", (Pillar::Read, "full", 2)),
    ("display", (Pillar::Read, "full", 1)),
    ("diff", (Pillar::Read, "diff", 3)),
    ("compare", (Pillar::Read, "diff", 2)),
    ("skeleton", (Pillar::Read, "skeleton", 3)),
    ("outline", (Pillar::Read, "skeleton", 3)),
    ("signatures", (Pillar::Read, "skeleton", 2)),
    ("lines", (Pillar::Read, "fragment", 1)),
    // write
    ("create", (Pillar::Write, "create", 2)),
    ("write", (Pillar::Write, "create", 2)),
    ("generate", (Pillar::Write, "create", 2)),
    ("scaffold", (Pillar::Write, "scaffold", 3)),
    ("template", (Pillar::Write, "template", 3)),
    ("boilerplate", (Pillar::Write, "template", 3)),
    ("new file", (Pillar::Write, "create", 3)),
    ("new module", (Pillar::Write, "create", 3)),
    // manage
    ("undo", (Pillar::Manage, "undo", 4)),
    ("redo", (Pillar::Manage, "redo", 4)),
    ("revert", (Pillar::Manage, "undo", 4)),
    ("rollback", (Pillar::Manage, "undo", 4)),
    ("roll back", (Pillar::Manage, "undo", 4)),
    ("status", (Pillar::Manage, "status", 3)),
    ("rebuild", (Pillar::Manage, "rebuild", 4)),
    ("reindex", (Pillar::Manage, "rebuild", 4)),
    ("index", (Pillar::Manage, "rebuild", 1)),
    ("history", (Pillar::Manage, "history", 3)),
    ("run the tests", (Pillar::Manage, "test", 4)),
    ("run tests", (Pillar::Manage, "test", 4)),
    ("run the test", (Pillar::Manage, "test", 4)),
    ("tests", (Pillar::Manage, "test", 1)),
];

/// Korean stems, matched inside the text.
const KO: &[(&str, Cue)] = &[
    // understand
    ("이해", (Pillar::Understand, "comprehend", 2)),
    ("파악", (Pillar::Understand, "comprehend", 2)),
    ("분석", (Pillar::Understand, "analyze", 2)),
    ("설명", (Pillar::Understand, "explain", 2)),
    ("구조", (Pillar::Understand, "architecture", 1)),
    ("아키텍처", (Pillar::Understand, "architecture", 2)),
    ("개요", (Pillar::Understand, "comprehend", 2)),
    ("요약", (Pillar::Understand, "explain", 2)),
    ("어떻게 동작", (Pillar::Understand, "explain", 3)),
    ("어떻게 작동", (Pillar::Understand, "explain", 3)),
    ("역할", (Pillar::Understand, "explain", 1)),
    ("무엇을 하", (Pillar::Understand, "explain", 2)),
    ("뭐 하는", (Pillar::Understand, "explain", 2)),
    // change
    ("수정", (Pillar::Change, "modify", 2)),
    ("변경", (Pillar::Change, "modify", 2)),
    ("추가", (Pillar::Change, "add", 2)),
    ("삭제", (Pillar::Change, "remove", 2)),
    ("제거", (Pillar::Change, "remove", 2)),
    ("리팩토링", (Pillar::Change, "refactor", 3)),
    ("리팩터링", (Pillar::Change, "refactor", 3)),
    ("고쳐", (Pillar::Change, "fix", 3)),
    ("고치", (Pillar::Change, "fix", 3)),
    ("바꿔", (Pillar::Change, "modify", 2)),
    ("바꾸", (Pillar::Change, "modify", 2)),
    ("이름을 바", (Pillar::Change, "rename", 3)),
    ("이름 변경", (Pillar::Change, "rename", 3)),
    ("넣어", (Pillar::Change, "add", 2)),
    ("버그", (Pillar::Change, "fix", 2)),
    ("에러", (Pillar::Change, "fix", 1)),
    ("오류", (Pillar::Change, "fix", 1)),
    // navigate
    ("찾", (Pillar::Navigate, "find", 2)),
    ("검색", (Pillar::Navigate, "find", 2)),
    ("추적", (Pillar::Navigate, "callers", 2)),
    ("어디", (Pillar::Navigate, "definition", 2)),
    ("정의", (Pillar::Navigate, "definition", 2)),
    ("호출하는 곳", (Pillar::Navigate, "callers", 4)),
    ("호출되는", (Pillar::Navigate, "callers", 4)),
    ("누가 호출", (Pillar::Navigate, "callers", 4)),
    ("호출하는 함수", (Pillar::Navigate, "callees", 4)),
    ("호출", (Pillar::Navigate, "callers", 2)),
    ("사용되는", (Pillar::Navigate, "references", 3)),
    ("사용하는 곳", (Pillar::Navigate, "references", 3)),
    ("사용처", (Pillar::Navigate, "references", 3)),
    ("참조", (Pillar::Navigate, "references", 3)),
    ("구현체", (Pillar::Navigate, "implementations", 4)),
    ("구현한", (Pillar::Navigate, "implementations", 3)),
    ("상속", (Pillar::Navigate, "hierarchy", 3)),
    ("계층", (Pillar::Navigate, "hierarchy", 3)),
    // read
    ("읽", (Pillar::Read, "full", 2)),
    ("보여", (Pillar::Read, "full", 2)),
    ("열어", (Pillar::Read, "full", 2)),
    ("내용", (Pillar::Read, "full", 1)),
    ("비교", (Pillar::Read, "diff", 2)),
    ("차이", (Pillar::Read, "diff", 2)),
    ("골격", (Pillar::Read, "skeleton", 3)),
    ("스켈레톤", (Pillar::Read, "skeleton", 3)),
    ("시그니처", (Pillar::Read, "skeleton", 2)),
    // write
    ("생성", (Pillar::Write, "create", 2)),
    ("만들", (Pillar::Write, "create", 2)),
    ("만들어", (Pillar::Write, "create", 1)),
    ("작성", (Pillar::Write, "create", 2)),
    ("새 파일", (Pillar::Write, "create", 3)),
    ("새파일", (Pillar::Write, "create", 3)),
    ("템플릿", (Pillar::Write, "template", 3)),
    ("스캐폴드", (Pillar::Write, "scaffold", 3)),
    ("스캐폴딩", (Pillar::Write, "scaffold", 3)),
    // manage
    ("되돌리", (Pillar::Manage, "undo", 4)),
    ("되돌려", (Pillar::Manage, "undo", 4)),
    ("원래대로", (Pillar::Manage, "undo", 4)),
    ("실행 취소", (Pillar::Manage, "undo", 4)),
    ("다시 적용", (Pillar::Manage, "redo", 4)),
    ("다시 실행", (Pillar::Manage, "redo", 3)),
    ("상태", (Pillar::Manage, "status", 3)),
    ("재구축", (Pillar::Manage, "rebuild", 4)),
    ("재색인", (Pillar::Manage, "rebuild", 4)),
    ("인덱스", (Pillar::Manage, "rebuild", 2)),
    ("이력", (Pillar::Manage, "history", 3)),
    ("히스토리", (Pillar::Manage, "history", 3)),
    ("테스트 실행", (Pillar::Manage, "test", 4)),
    ("테스트를 실행", (Pillar::Manage, "test", 4)),
    ("테스트 돌려", (Pillar::Manage, "test", 4)),
    ("테스트를 돌려", (Pillar::Manage, "test", 4)),
];

/// Words that look like identifiers but are English.
const STOP: &[&str] = &["e.g", "i.e", "etc", "vs", "ok"];

const EXTENSIONS: &[&str] = &[
    "rs", "py", "pyi", "js", "jsx", "mjs", "cjs", "ts", "tsx", "go", "java", "cs", "c", "h", "cc",
    "cpp", "cxx", "hpp", "hh", "md", "json", "yaml", "yml", "toml", "txt", "cfg", "ini", "sh",
    "html", "css", "sql", "kt", "rb", "php", "swift",
];

/// Routes a request. Never fails: with no cue it falls back (a symbol →
/// navigate, a path → read, else understand) at confidence 0.3.
pub fn route(request: &str) -> Intent {
    let lower = request.to_lowercase();
    let words: Vec<String> = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    let padded = format!(" {} ", words.join(" "));
    // Each cue once, with its position for tie-breaking.
    let mut hits: Vec<(usize, &'static str, Cue)> = Vec::new();
    for (cue, c) in EN {
        if let Some(pos) = padded.find(&format!(" {cue} ")) {
            hits.push((pos, cue, *c));
        }
    }
    for (stem, c) in KO {
        if let Some(pos) = lower.find(stem) {
            hits.push((pos, stem, *c));
        }
    }
    resolve_overlaps(&mut hits);

    let targets = extract_targets(request);
    let constraints = constraints(&lower, &words, request);
    let mut score = [0u32; 6];
    for (_, _, (p, _, w)) in &hits {
        score[pillar_index(*p)] += u32::from(*w);
    }
    let (best, top) = score
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(&a.0)))
        .map(|(i, s)| (Pillar::ALL[i], *s))
        .expect("six pillars");
    if top == 0 {
        return fallback(request, targets, constraints);
    }
    let second = score
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != pillar_index(best))
        .map(|(_, s)| *s)
        .max()
        .unwrap_or(0);
    let mut action = hits
        .iter()
        .filter(|(_, _, (p, _, _))| *p == best)
        .max_by(|a, b| a.2.2.cmp(&b.2.2).then(b.0.cmp(&a.0)))
        .map(|(_, _, (_, a, _))| *a)
        .unwrap_or("comprehend");
    // `read` with a line range is a fragment; with a symbol only, its definition.
    if best == Pillar::Read && action == "full" && constraints.line_range.is_some() {
        action = "fragment";
    }
    let margin = top as f32 / (top + second) as f32;
    let strength = if top >= 2 { 1.0 } else { 0.85 };
    let confidence = ((0.45 + 0.5 * margin) * strength).clamp(0.3, 0.95);
    let mut targets = targets;
    if best == Pillar::Understand
        && !targets.iter().any(|t| matches!(t.kind, TargetKind::Path | TargetKind::Symbol))
    {
        targets.push(IntentTarget { kind: TargetKind::Question, text: request.trim().to_owned() });
    }
    Intent {
        pillar: best,
        action: action.to_owned(),
        targets,
        constraints,
        confidence: stdx::widen(round2(confidence)),
    }
}

fn round2(x: f32) -> f32 {
    (x * 100.0).round() / 100.0
}

fn pillar_index(p: Pillar) -> usize {
    Pillar::ALL.iter().position(|q| *q == p).expect("a pillar")
}

/// Drops a cue when a longer matched cue contains it ("who calls" over "calls",
/// "호출하는 곳" over "호출").
fn resolve_overlaps(hits: &mut Vec<(usize, &'static str, Cue)>) {
    let texts: Vec<&str> = hits.iter().map(|h| h.1).collect();
    let keep: Vec<bool> = (0..texts.len())
        .map(|i| {
            !(0..texts.len())
                .any(|j| i != j && texts[j].len() > texts[i].len() && texts[j].contains(texts[i]))
        })
        .collect();
    let mut k = keep.into_iter();
    hits.retain(|_| k.next().unwrap_or(true));
}

fn fallback(request: &str, targets: Vec<IntentTarget>, constraints: IntentConstraints) -> Intent {
    let has_path = targets.iter().any(|t| t.kind == TargetKind::Path);
    let has_symbol = targets.iter().any(|t| t.kind == TargetKind::Symbol);
    let (pillar, action) = if has_path && !request.trim().contains(' ') {
        (Pillar::Read, "full")
    } else if has_symbol && targets.len() == 1 && !request.trim().contains(' ') {
        (Pillar::Navigate, "definition")
    } else {
        (Pillar::Understand, "comprehend")
    };
    let mut targets = targets;
    if pillar == Pillar::Understand && !has_path && !has_symbol {
        targets.push(IntentTarget { kind: TargetKind::Question, text: request.trim().to_owned() });
    }
    Intent { pillar, action: action.to_owned(), targets, constraints, confidence: 0.3 }
}

fn constraints(lower: &str, words: &[String], original: &str) -> IntentConstraints {
    let has_word = |w: &str| words.iter().any(|x| x == w);
    let phrase = |p: &str| format!(" {} ", words.join(" ")).contains(&format!(" {p} "));
    let mut c = IntentConstraints::default();
    // depth: "depth 3", "3 levels", "깊이 2", "2단계"; deep/shallow words.
    for (i, w) in words.iter().enumerate() {
        if (w == "depth" || w == "level")
            && let Some(n) = words.get(i + 1).and_then(|n| n.parse().ok())
        {
            c.depth = Some(n);
        }
        if (w == "levels" || w == "hops")
            && i > 0
            && let Ok(n) = words[i - 1].parse()
        {
            c.depth = Some(n);
        }
    }
    if c.depth.is_none() {
        c.depth = korean_number_before(lower, &["단계", "레벨"])
            .or_else(|| korean_number_after(lower, "깊이"));
    }
    if c.depth.is_none() {
        if has_word("deep")
            || has_word("deeply")
            || has_word("thorough")
            || lower.contains("깊게")
            || lower.contains("자세히")
        {
            c.depth = Some(3);
        } else if has_word("shallow")
            || has_word("briefly")
            || lower.contains("간단히")
            || lower.contains("대략")
        {
            c.depth = Some(1);
        }
    }
    if phrase("dry run")
        || has_word("dryrun")
        || has_word("preview")
        || phrase("without applying")
        || phrase("don t apply")
        || phrase("do not apply")
        || lower.contains("미리보기")
        || lower.contains("시뮬레이션")
        || lower.contains("적용하지")
    {
        c.dry_run = Some(true);
    } else if phrase("apply it")
        || phrase("apply the")
        || lower.contains("바로 적용")
        || lower.contains("적용해")
    {
        c.dry_run = Some(false);
    }
    if has_word("impact") || phrase("blast radius") || lower.contains("영향") {
        c.include_impact = Some(true);
    }
    if phrase("whole project")
        || phrase("entire project")
        || phrase("project wide")
        || has_word("codebase")
        || lower.contains("프로젝트 전체")
        || lower.contains("전체 프로젝트")
        || lower.contains("전체 코드")
    {
        c.scope = Some(Scope::Project);
    }
    c.line_range = line_range(original);
    if c.scope.is_none() && c.line_range.is_some() {
        c.scope = Some(Scope::File);
    }
    c
}

fn korean_number_before(text: &str, units: &[&str]) -> Option<u32> {
    for u in units {
        if let Some(pos) = text.find(u) {
            let digits: String =
                text[..pos].trim_end().chars().rev().take_while(char::is_ascii_digit).collect();
            if let Ok(n) = digits.chars().rev().collect::<String>().parse() {
                return Some(n);
            }
        }
    }
    None
}

fn korean_number_after(text: &str, word: &str) -> Option<u32> {
    let pos = text.find(word)? + word.len();
    let rest = text[pos..]
        .trim_start_matches(|c: char| c.is_whitespace() || c == ':' || c == '를' || c == '는');
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// `lines 10-20`, `line 42`, `L10-L20`, `10-20번째 줄`, `10~20줄`, `path:12-30`.
fn line_range(text: &str) -> Option<LineRange> {
    let lower = text.to_lowercase();
    let nums = |s: &str| -> Option<(u32, Option<u32>)> {
        let s = s.trim_start();
        let a: String = s.chars().take_while(char::is_ascii_digit).collect();
        if a.is_empty() {
            return None;
        }
        let rest = &s[a.len()..];
        let rest = rest.trim_start_matches(' ');
        let b = rest.strip_prefix(['-', '~', ':', '–']).map(|r| {
            let r = r.trim_start().trim_start_matches('l');
            r.chars().take_while(char::is_ascii_digit).collect::<String>()
        });
        Some((a.parse().ok()?, b.and_then(|b| b.parse().ok())))
    };
    let mk = |(a, b): (u32, Option<u32>)| LineRange::parse(&format!("{a}-{}", b.unwrap_or(a))).ok();
    for key in ["lines ", "line ", "줄 "] {
        if let Some(pos) = lower.find(key)
            && let Some(r) = nums(&lower[pos + key.len()..])
        {
            return mk(r);
        }
    }
    // L10-L20 as a word.
    for (i, _) in lower.match_indices('l') {
        let before = lower[..i].chars().last();
        if before.is_none_or(|c| !c.is_alphanumeric())
            && lower[i + 1..].starts_with(|c: char| c.is_ascii_digit())
            && let Some(r) = nums(&lower[i + 1..])
        {
            return mk(r);
        }
    }
    // Korean: "10-20번째 줄", "10~20줄", "42번째 줄", "42행".
    for unit in ["번째 줄", "번째줄", "줄", "행", "라인"] {
        if let Some(pos) = lower.find(unit) {
            let head = lower[..pos].trim_end();
            let start = head
                .char_indices()
                .rev()
                .take_while(|(_, c)| c.is_ascii_digit() || matches!(c, '-' | '~' | ' '))
                .last()
                .map(|(i, _)| i)?;
            if let Some(r) = nums(&head[start..]) {
                return mk(r);
            }
        }
    }
    // path:12 or path:12-30 in a token.
    for tok in text.split_whitespace() {
        if let Some((p, l)) = tok.rsplit_once(':')
            && p.contains('.')
            && let Some(r) = nums(l)
        {
            return mk(r);
        }
    }
    None
}

/// Paths, symbols and quoted text, in order of appearance, without duplicates.
fn extract_targets(text: &str) -> Vec<IntentTarget> {
    let mut out: Vec<IntentTarget> = Vec::new();
    let mut push = |kind: TargetKind, t: &str| {
        let t = t.trim();
        if !t.is_empty() && !out.iter().any(|x| x.text == t) {
            out.push(IntentTarget { kind, text: t.to_owned() });
        }
    };
    let (quoted, rest) = split_quoted(text);
    for (q, backtick) in &quoted {
        match classify_token(q) {
            Some(kind) if *backtick || !q.contains(' ') => push(kind, q),
            _ => push(TargetKind::Quoted, q),
        }
    }
    for tok in code_runs(&rest) {
        if let Some(kind) = classify_token(&tok) {
            let t = if kind == TargetKind::Path {
                tok.rsplit_once(':')
                    .filter(|(_, l)| l.chars().all(|c| c.is_ascii_digit() || c == '-'))
                    .map_or(tok.as_str(), |(p, _)| p)
            } else {
                tok.trim_end_matches("()")
            };
            push(kind, t);
        }
    }
    out
}

/// Quoted spans ("..", '..', `..`, “..”, ‘..’, 「..」) and the text without them.
fn split_quoted(text: &str) -> (Vec<(String, bool)>, String) {
    let pairs = [('"', '"'), ('`', '`'), ('“', '”'), ('‘', '’'), ('「', '」'), ('\'', '\'')];
    let chars: Vec<char> = text.chars().collect();
    let mut quoted = Vec::new();
    let mut rest = String::new();
    let mut i = 0;
    'outer: while i < chars.len() {
        let c = chars[i];
        for (open, close) in pairs {
            if c != open {
                continue;
            }
            // An apostrophe opens a quote only at a word start ("don't" is not one).
            if open == '\'' && i > 0 && chars[i - 1].is_alphanumeric() {
                break;
            }
            if let Some(len) = chars[i + 1..].iter().position(|&x| x == close) {
                let inner: String = chars[i + 1..i + 1 + len].iter().collect();
                let after = chars.get(i + 2 + len);
                let closes_word = open != '\'' || after.is_none_or(|a| !a.is_ascii_alphanumeric());
                if !inner.trim().is_empty() && closes_word {
                    quoted.push((inner, open == '`'));
                    rest.push(' ');
                    i += len + 2;
                    continue 'outer;
                }
            }
        }
        rest.push(c);
        i += 1;
    }
    (quoted, rest)
}

/// Maximal runs of code-like ASCII (identifiers, paths, `::`, `()`), cut out of
/// Hangul and punctuation around them.
fn code_runs(text: &str) -> Vec<String> {
    let is_code = |c: char| c.is_ascii_alphanumeric() || "_./:-#()<>$@~*".contains(c);
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if is_code(c) {
            cur.push(c);
        } else if !cur.is_empty() {
            let call = cur.ends_with("()");
            let t = cur.trim_end_matches("()").trim_matches(|c: char| ".:-,()".contains(c));
            if !t.is_empty() {
                out.push(if call { format!("{t}()") } else { t.to_owned() });
            }
            cur.clear();
        }
    }
    out
}

/// A token as a path, a symbol, or neither.
fn classify_token(tok: &str) -> Option<TargetKind> {
    let t = tok.trim();
    if t.is_empty() || t.starts_with("http://") || t.starts_with("https://") {
        return None;
    }
    let lower = t.to_ascii_lowercase();
    if STOP.contains(&lower.as_str()) {
        return None;
    }
    let base = t
        .rsplit_once(':')
        .filter(|(_, l)| !l.is_empty() && l.chars().all(|c| c.is_ascii_digit() || c == '-'))
        .map_or(t, |(p, _)| p);
    let ext = base.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    let has_ext = ext.as_deref().is_some_and(|e| EXTENSIONS.contains(&e));
    if (base.contains('/') && !base.contains("::") && base.chars().any(|c| c.is_ascii_alphabetic()))
        || (has_ext && !base.starts_with('.') && base.len() > 3)
    {
        return Some(TargetKind::Path);
    }
    let ident = |s: &str| {
        !s.is_empty()
            && s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
    };
    let core = t.trim_end_matches("()");
    let parts: Vec<&str> = core.split(['.', '#']).flat_map(|p| p.split("::")).collect();
    if !parts.iter().all(|p| ident(p)) {
        return None;
    }
    let call = t.ends_with("()");
    let qualified = parts.len() > 1;
    let camel = core
        .chars()
        .zip(core.chars().skip(1))
        .any(|(a, b)| a.is_ascii_lowercase() && b.is_ascii_uppercase());
    let pascal = core.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && core.chars().skip(1).any(|c| c.is_ascii_uppercase())
        && core.chars().any(|c| c.is_ascii_lowercase());
    let snake = core.contains('_') && core.trim_matches('_').len() > 1;
    (call || qualified || camel || pascal || snake).then_some(TargetKind::Symbol)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (request, pillar, action, targets (kind, text) in order).
    type Case = (&'static str, Pillar, &'static str, Vec<(TargetKind, String)>);

    fn t(kind: TargetKind, text: &str) -> (TargetKind, String) {
        (kind, text.to_owned())
    }

    /// (request, pillar, action, targets (kind, text) in order).
    #[test]
    fn routing_table() {
        use Pillar::*;
        use TargetKind::{Path as P, Question as W, Quoted as Q, Symbol as S};
        let cases: Vec<Case> = vec![
            // seed 004 §1.2
            ("handleAuth 인증 로직 파악", Understand, "comprehend", vec![t(S, "handleAuth")]),
            ("handleAuth에 rate limiting 추가", Change, "add", vec![t(S, "handleAuth")]),
            // English
            (
                "Explain how src/auth/session.py works",
                Understand,
                "explain",
                vec![t(P, "src/auth/session.py")],
            ),
            (
                "what is the architecture of this project?",
                Understand,
                "architecture",
                vec![t(W, "what is the architecture of this project?")],
            ),
            ("add rate limiting to handle_login", Change, "add", vec![t(S, "handle_login")]),
            ("fix the bug in parse_args()", Change, "fix", vec![t(S, "parse_args")]),
            (
                "rename `UserService` to `AccountService`",
                Change,
                "rename",
                vec![t(S, "UserService"), t(S, "AccountService")],
            ),
            ("remove the unused import in lib.rs", Change, "remove", vec![t(P, "lib.rs")]),
            ("undo the last change", Manage, "undo", vec![]),
            ("redo it", Manage, "redo", vec![]),
            ("revert transaction 3f2a", Manage, "undo", vec![]),
            ("who calls Engine::apply?", Navigate, "callers", vec![t(S, "Engine::apply")]),
            (
                "find all references to parseConfig",
                Navigate,
                "references",
                vec![t(S, "parseConfig")],
            ),
            ("where is HttpRequest defined", Navigate, "definition", vec![t(S, "HttpRequest")]),
            (
                "show the implementations of Storage.Backend",
                Navigate,
                "implementations",
                vec![t(S, "Storage.Backend")],
            ),
            ("class hierarchy of BaseHandler", Navigate, "hierarchy", vec![t(S, "BaseHandler")]),
            ("read src/main.rs lines 10-40", Read, "fragment", vec![t(P, "src/main.rs")]),
            (
                "show me the skeleton of crates/edit/src/lib.rs",
                Read,
                "skeleton",
                vec![t(P, "crates/edit/src/lib.rs")],
            ),
            ("diff app/models.py against HEAD", Read, "diff", vec![t(P, "app/models.py")]),
            (
                "create a new file tests/test_api.py",
                Write,
                "create",
                vec![t(P, "tests/test_api.py")],
            ),
            (
                "scaffold a module like src/users.py for orders",
                Write,
                "scaffold",
                vec![t(P, "src/users.py")],
            ),
            ("rebuild the index", Manage, "rebuild", vec![]),
            (
                "run the tests for tests/test_api.py",
                Manage,
                "test",
                vec![t(P, "tests/test_api.py")],
            ),
            ("status", Manage, "status", vec![]),
            (
                "replace \"Hello world\" with \"Hi\" in greet.py",
                Change,
                "modify",
                vec![t(Q, "Hello world"), t(Q, "Hi"), t(P, "greet.py")],
            ),
            // Korean
            ("src/auth.py 파일 구조를 설명해줘", Understand, "explain", vec![t(P, "src/auth.py")]),
            ("UserService 클래스를 리팩토링해줘", Change, "refactor", vec![t(S, "UserService")]),
            ("login_user 함수에 로깅을 추가해줘", Change, "add", vec![t(S, "login_user")]),
            ("버그 고쳐줘: parse_date가 None을 반환함", Change, "fix", vec![t(S, "parse_date")]),
            ("getUserById를 호출하는 곳을 찾아줘", Navigate, "callers", vec![t(S, "getUserById")]),
            (
                "HttpClient가 어디에 정의되어 있어?",
                Navigate,
                "definition",
                vec![t(S, "HttpClient")],
            ),
            ("Repository 인터페이스의 구현체를 보여줘", Navigate, "implementations", vec![]),
            ("BaseModel 상속 계층", Navigate, "hierarchy", vec![t(S, "BaseModel")]),
            ("config_loader의 사용처", Navigate, "references", vec![t(S, "config_loader")]),
            ("main.go 파일 읽어줘", Read, "full", vec![t(P, "main.go")]),
            ("app.py 10-20번째 줄 보여줘", Read, "fragment", vec![t(P, "app.py")]),
            ("tests/test_user.py 새 파일 생성", Write, "create", vec![t(P, "tests/test_user.py")]),
            ("방금 수정한 것을 되돌려줘", Manage, "undo", vec![]),
            ("다시 적용해줘", Manage, "redo", vec![]),
            ("인덱스 재구축", Manage, "rebuild", vec![]),
            ("테스트 실행해줘", Manage, "test", vec![]),
            ("프로젝트 상태 알려줘", Manage, "status", vec![]),
            ("변경 이력 보여줘", Manage, "history", vec![]),
        ];
        for (req, pillar, action, targets) in cases {
            let got = route(req);
            assert_eq!((got.pillar, got.action.as_str()), (pillar, action), "{req}: {got:?}");
            let kinds: Vec<(TargetKind, String)> =
                got.targets.iter().map(|t| (t.kind, t.text.clone())).collect();
            if !targets.is_empty() || !kinds.iter().any(|k| k.0 == TargetKind::Question) {
                let want: Vec<(TargetKind, String)> = targets;
                let got_filtered: Vec<(TargetKind, String)> = if want.is_empty() {
                    kinds.into_iter().filter(|k| k.0 != TargetKind::Question).collect()
                } else {
                    kinds
                };
                if !want.is_empty() {
                    assert_eq!(got_filtered, want, "{req}");
                }
            }
            assert!(got.confidence >= 0.3 && got.confidence <= 0.95, "{req}: {}", got.confidence);
        }
    }

    /// Seed 004 §3.1's keyword patterns, one request per keyword (English and
    /// Korean), each with a symbol or file so the request is realistic.
    #[test]
    fn seed_keywords_table() {
        use Pillar::*;
        let cases: &[(&str, Pillar)] = &[
            ("understand parse_config", Understand),
            ("explain src/cache.py", Understand),
            ("analyze the Scheduler class", Understand),
            ("the structure of src/api/", Understand),
            ("parse_config 이해하고 싶어", Understand),
            ("Scheduler 분석해줘", Understand),
            ("src/api 구조 설명", Understand),
            ("프로젝트 아키텍처", Understand),
            ("modify parse_config to accept a path", Change),
            ("remove the retry loop from fetch_page", Change),
            ("refactor Scheduler", Change),
            ("fix the bug in fetch_page", Change),
            ("parse_config 수정해줘", Change),
            ("fetch_page에 타임아웃 추가", Change),
            ("Scheduler 삭제", Change),
            ("fetch_page 에러 고쳐줘", Change),
            ("find parse_config", Navigate),
            ("trace the callers of fetch_page", Navigate),
            ("where is Scheduler used", Navigate),
            ("parse_config 찾아줘", Navigate),
            ("fetch_page 어디서 호출해?", Navigate),
            ("read src/cache.py", Read),
            ("show src/cache.py", Read),
            ("compare src/cache.py with HEAD", Read),
            ("src/cache.py 읽어줘", Read),
            ("src/cache.py 보여줘", Read),
            ("create src/queue.py", Write),
            ("generate a test file tests/test_queue.py", Write),
            ("src/queue.py 파일 만들어줘", Write),
            ("새 파일 tests/test_queue.py", Write),
            ("undo", Manage),
            ("redo the last edit", Manage),
            ("rebuild the index", Manage),
            ("되돌려줘", Manage),
            ("상태", Manage),
        ];
        let mut wrong = Vec::new();
        for (req, want) in cases {
            let got = route(req);
            if got.pillar != *want {
                wrong.push(format!("{req:?}: {:?} ({}), want {want:?}", got.pillar, got.action));
            }
        }
        assert!(wrong.is_empty(), "misrouted:\n{}", wrong.join("\n"));
    }

    #[test]
    fn fallback_without_cues() {
        let sym = route("parse_args");
        assert_eq!(
            (sym.pillar, sym.action.as_str(), sym.confidence),
            (Pillar::Navigate, "definition", 0.3)
        );
        let path = route("src/app.py");
        assert_eq!((path.pillar, path.action.as_str()), (Pillar::Read, "full"));
        let q = route("rate limiting for login requests");
        assert_eq!(q.pillar, Pillar::Understand);
        assert_eq!(q.targets.last().map(|t| t.kind), Some(TargetKind::Question));
    }

    #[test]
    fn constraints_table() {
        for (req, depth, dry, impact, scope, lines) in [
            ("explain Server.start depth 3", Some(3), None, None, None, None),
            ("callers of f, 2 levels", Some(2), None, None, None, None),
            ("handleAuth 호출 관계를 2단계까지 분석", Some(2), None, None, None, None),
            ("깊이 4로 분석해줘", Some(4), None, None, None, None),
            ("analyze deeply the storage layer", Some(3), None, None, None, None),
            ("간단히 설명해줘", Some(1), None, None, None, None),
            ("change x to y as a dry run with impact", None, Some(true), Some(true), None, None),
            ("미리보기로 수정하고 영향 범위도 알려줘", None, Some(true), Some(true), None, None),
            ("fix it and apply it", None, Some(false), None, None, None),
            ("analyze the whole project", None, None, None, Some(Scope::Project), None),
            ("프로젝트 전체 구조 분석", None, None, None, Some(Scope::Project), None),
            ("read lines 5-9 of a.py", None, None, None, Some(Scope::File), Some((5, 9))),
            ("show L10-L20 in main.rs", None, None, None, Some(Scope::File), Some((10, 20))),
            ("app.py 10~20번째 줄", None, None, None, Some(Scope::File), Some((10, 20))),
            ("open src/app.py:42", None, None, None, Some(Scope::File), Some((42, 42))),
        ] {
            let c = route(req).constraints;
            assert_eq!(c.depth, depth, "{req}");
            assert_eq!(c.dry_run, dry, "{req}");
            assert_eq!(c.include_impact, impact, "{req}");
            assert_eq!(c.scope, scope, "{req}");
            assert_eq!(c.line_range.map(|r| (r.start, r.end)), lines, "{req}");
        }
    }

    #[test]
    fn confidence_drops_with_competing_cues() {
        let clear = route("undo");
        let mixed = route("find and fix the bug");
        assert!(
            clear.confidence > mixed.confidence,
            "{} vs {}",
            clear.confidence,
            mixed.confidence
        );
    }

    #[test]
    fn apostrophes_are_not_quotes() {
        let i = route("don't change parse_args, it's fine");
        assert!(i.targets.iter().any(|t| t.text == "parse_args" && t.kind == TargetKind::Symbol));
        assert!(!i.targets.iter().any(|t| t.kind == TargetKind::Quoted));
    }
}
