//! Finding `targetString` in a file: exact first, then progressively more tolerant,
//! never guessing.
//!
//! Tiers, strictest first; the first tier that finds anything decides:
//!
//! 1. exact substring;
//! 2. exact after writing the target's line breaks the file's way (CRLF drift);
//! 3. whole lines, ignoring trailing whitespace and a uniform indentation shift of
//!    the whole block (the usual damage when a block is quoted out of context);
//! 4. as 3, with tabs expanded (spaces in the target where the file has tabs).
//!
//! Each tolerant tier reports what it forgave ([`Normalization`]) and how the
//! replacement must be re-indented to fit ([`Reindent`]). More matches than
//! expected is `AMBIGUOUS_MATCH` with every location; none is `NO_MATCH` with the
//! closest windows of text. Everything here is a pure function of strings.

use protocol::{LineRange, MatchCandidate, Normalization};

use crate::text::{self, LineIndex};

/// How many occurrences the caller expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Want {
    Exactly(u32),
    /// Every occurrence, at least one.
    All,
}

/// How a replacement is adapted to a tolerant match (applied to LF text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reindent {
    None,
    /// The file is indented more than the target: prefix every non-blank line.
    Add(String),
    /// The target is indented more than the file: remove this prefix where present.
    Remove(String),
    /// Indentation compared in columns with tabs `width` wide: shift by `delta`
    /// columns and write with tabs when `tabs`.
    Columns {
        width: u32,
        delta: i32,
        tabs: bool,
    },
}

impl Reindent {
    pub(crate) fn apply(&self, lf_text: &str) -> String {
        match self {
            Reindent::None => lf_text.to_owned(),
            Reindent::Add(p) => text::map_lines(lf_text, |l| format!("{p}{l}")),
            Reindent::Remove(p) => {
                text::map_lines(lf_text, |l| l.strip_prefix(p.as_str()).unwrap_or(l).to_owned())
            }
            Reindent::Columns { width, delta, tabs } => text::map_lines(lf_text, |l| {
                let ind = text::indentation(l);
                let cols = (columns(ind, *width) as i64 + *delta as i64).max(0) as u32;
                let new_ind = if *tabs {
                    format!(
                        "{}{}",
                        "\t".repeat((cols / width) as usize),
                        " ".repeat((cols % width) as usize)
                    )
                } else {
                    " ".repeat(cols as usize)
                };
                format!("{new_ind}{}", &l[ind.len()..])
            }),
        }
    }
}

/// Where a target was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// Byte spans in the file, in order, never overlapping.
    pub spans: Vec<(usize, usize)>,
    pub normalizations: Vec<Normalization>,
    pub reindent: Reindent,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum MatchError {
    /// Nothing (or fewer than expected) found.
    NoMatch { message: String, candidates: Vec<MatchCandidate> },
    /// More than expected, or overlapping occurrences.
    Ambiguous { message: String, candidates: Vec<MatchCandidate> },
}

/// Finds `target` in `text` (BOM removed), restricted to `scope` lines.
pub(crate) fn find(
    text: &str,
    target: &str,
    scope: Option<LineRange>,
    want: Want,
) -> Result<Found, MatchError> {
    let ix = LineIndex::new(text);
    let in_scope = |s: usize, e: usize| scope.is_none_or(|r| r.contains(&ix.lines_of(s, e)));
    let eol = text::dominant_eol(text);

    // Tier 1 and 2: exact, then with the file's line breaks.
    let mut exact_targets = vec![(target.to_owned(), Vec::new())];
    let converted = text::with_eol(target, eol);
    if converted != target {
        exact_targets
            .push((converted, vec![Normalization::LineEndings { file: eol.name().to_owned() }]));
    }
    let mut outside_scope = Vec::new();
    for (t, norms) in exact_targets {
        let all = find_overlapping(text, &t);
        let (inside, outside): (Vec<_>, Vec<_>) =
            all.into_iter().map(|s| (s, s + t.len())).partition(|&(s, e)| in_scope(s, e));
        if !inside.is_empty() {
            return decide(text, &ix, inside, want, norms, Reindent::None);
        }
        if outside_scope.is_empty() {
            outside_scope = outside;
        }
    }

    // Tier 3 and 4: whole lines, whitespace-tolerant.
    let lines = Lines::new(text, &ix);
    let tl = TargetLines::new(target);
    if tl.has_content() {
        for mode in [Mode::Strings, Mode::Columns(4), Mode::Columns(8), Mode::Columns(2)] {
            let mut hits: Vec<(usize, usize, Relation, bool)> = Vec::new();
            let mut hits_outside = Vec::new();
            for first in 0..lines.count() {
                if let Some((rel, trailing)) = lines.match_at(first, &tl, mode) {
                    let (s, e) = lines.span(first, tl.lines.len(), tl.ends_with_newline);
                    if in_scope(s, e) {
                        hits.push((s, e, rel, trailing));
                    } else {
                        hits_outside.push((s, e));
                    }
                }
            }
            if hits.is_empty() {
                if outside_scope.is_empty() {
                    outside_scope = hits_outside;
                }
                continue;
            }
            // Every hit must agree on how to re-indent, or the replacement would be
            // placed differently at each: treat that as ambiguous too.
            let rel = hits[0].2.clone();
            let spans: Vec<(usize, usize)> = hits.iter().map(|h| (h.0, h.1)).collect();
            if hits.iter().any(|h| h.2 != rel) && want != Want::Exactly(1) {
                return Err(ambiguous(
                    text,
                    &ix,
                    &spans,
                    "the matches need different re-indentation".to_owned(),
                ));
            }
            let mut norms = Vec::new();
            if target.contains('\n') && text::with_eol(target, eol) != target {
                norms.push(Normalization::LineEndings { file: eol.name().to_owned() });
            }
            if hits.iter().any(|h| h.3) {
                norms.push(Normalization::TrailingWhitespace);
            }
            let reindent = match (&rel, mode) {
                (Relation::Same, Mode::Strings) => Reindent::None,
                (Relation::FileMore(p), _) => {
                    norms.push(Normalization::Indentation {
                        added: p.clone(),
                        removed: String::new(),
                    });
                    Reindent::Add(p.clone())
                }
                (Relation::TargetMore(p), _) => {
                    norms.push(Normalization::Indentation {
                        added: String::new(),
                        removed: p.clone(),
                    });
                    Reindent::Remove(p.clone())
                }
                (Relation::Same, Mode::Columns(_)) => Reindent::None,
                (Relation::Cols { delta, tabs }, Mode::Columns(w)) => {
                    norms.push(Normalization::TabsAsSpaces { tab_width: w });
                    Reindent::Columns { width: w, delta: *delta, tabs: *tabs }
                }
                (Relation::Cols { .. }, Mode::Strings) => unreachable_relation(),
            };
            return decide(text, &ix, spans, want, norms, reindent);
        }
    }

    // Nothing anywhere in scope.
    if !outside_scope.is_empty() {
        let cands = outside_scope
            .iter()
            .map(|&(s, e)| candidate(text, &ix, s, e, Some(1.0)))
            .collect::<Vec<_>>();
        let where_ = cands.iter().map(|c| format!("lines {}", c.line_range)).collect::<Vec<_>>();
        return Err(MatchError::NoMatch {
            message: format!(
                "targetString is not within lineRange {}; it occurs at {}",
                scope.expect("outside matches exist only with a scope"),
                where_.join(", ")
            ),
            candidates: cands,
        });
    }
    let candidates = closest(text, &ix, target, scope);
    let message = if candidates.is_empty() {
        "targetString not found, and no similar text either".to_owned()
    } else {
        let best = &candidates[0];
        format!(
            "targetString not found; the closest text is at lines {} ({:.0}% similar)",
            best.line_range,
            best.similarity.unwrap_or(0.0) * 100.0
        )
    };
    Err(MatchError::NoMatch { message, candidates })
}

fn unreachable_relation() -> Reindent {
    // `Relation::Cols` comes only from column mode; keep the match total without a panic.
    Reindent::None
}

/// Applies the count rules to the matches of one tier.
fn decide(
    text: &str,
    ix: &LineIndex,
    spans: Vec<(usize, usize)>,
    want: Want,
    normalizations: Vec<Normalization>,
    reindent: Reindent,
) -> Result<Found, MatchError> {
    let overlapping = spans.windows(2).any(|w| w[1].0 < w[0].1);
    let n = spans.len() as u32;
    match want {
        Want::Exactly(k) if n > k => Err(ambiguous(
            text,
            ix,
            &spans,
            format!(
                "targetString occurs {n} times{}, expected {k}; add context, a lineRange, \
                 expectedOccurrences or replaceAll",
                if normalizations.is_empty() { "" } else { " (whitespace-tolerant)" }
            ),
        )),
        Want::Exactly(k) if n < k => Err(MatchError::NoMatch {
            message: format!("targetString occurs {n} times, expected {k}"),
            candidates: spans.iter().map(|&(s, e)| candidate(text, ix, s, e, Some(1.0))).collect(),
        }),
        _ if overlapping => Err(ambiguous(
            text,
            ix,
            &spans,
            "occurrences of targetString overlap; cannot replace them independently".to_owned(),
        )),
        _ => Ok(Found { spans, normalizations, reindent }),
    }
}

fn ambiguous(text: &str, ix: &LineIndex, spans: &[(usize, usize)], message: String) -> MatchError {
    MatchError::Ambiguous {
        message,
        candidates: spans.iter().map(|&(s, e)| candidate(text, ix, s, e, None)).collect(),
    }
}

fn candidate(
    text: &str,
    ix: &LineIndex,
    s: usize,
    e: usize,
    similarity: Option<f32>,
) -> MatchCandidate {
    let lines = ix.lines_of(s, e);
    let body = &text[ix.start_of(lines.start)..ix.end_of(lines.end)];
    MatchCandidate {
        line_range: lines,
        similarity: similarity.map(stdx::widen),
        preview: text::preview(body, 8, 600),
    }
}

/// Every start of `needle` in `hay`, overlapping ones included.
fn find_overlapping(hay: &str, needle: &str) -> Vec<usize> {
    let mut out = Vec::new();
    if needle.is_empty() {
        return out;
    }
    let mut from = 0;
    while let Some(i) = hay[from..].find(needle) {
        out.push(from + i);
        // Next char boundary after the match start.
        let step = hay[from + i..].chars().next().map_or(1, char::len_utf8);
        from += i + step;
        if from > hay.len() {
            break;
        }
    }
    out
}

// --- whole-line tolerant matching ----------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Indentation compared as strings (uniform prefix shift).
    Strings,
    /// Indentation compared in columns with this tab width.
    Columns(u32),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Relation {
    Same,
    FileMore(String),
    TargetMore(String),
    Cols { delta: i32, tabs: bool },
}

struct TargetLines {
    lines: Vec<String>,
    ends_with_newline: bool,
}

impl TargetLines {
    fn new(target: &str) -> TargetLines {
        let lf = text::to_lf(target);
        let ends_with_newline = lf.ends_with('\n');
        let body = lf.strip_suffix('\n').unwrap_or(&lf);
        TargetLines { lines: body.split('\n').map(str::to_owned).collect(), ends_with_newline }
    }

    /// Blank-only targets would match every blank line; the tolerant tiers refuse them.
    fn has_content(&self) -> bool {
        self.lines.iter().any(|l| !l.trim().is_empty())
    }
}

struct Lines<'a> {
    text: &'a str,
    ix: &'a LineIndex,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str, ix: &'a LineIndex) -> Lines<'a> {
        Lines { text, ix }
    }

    fn count(&self) -> usize {
        self.ix.count() as usize
    }

    /// Line `i` (0-based) without its break.
    fn line(&self, i: usize) -> &'a str {
        let l = i as u32 + 1;
        text::strip_eol(&self.text[self.ix.start_of(l)..self.ix.end_of(l)])
    }

    /// The span of `k` lines from `first`: from the first line's start to the end of
    /// the last line, its break included only when the target ends with one.
    fn span(&self, first: usize, k: usize, with_newline: bool) -> (usize, usize) {
        let s = self.ix.start_of(first as u32 + 1);
        let last = (first + k) as u32;
        let e = if with_newline {
            self.ix.end_of(last)
        } else {
            self.ix.start_of(last) + self.line(last as usize - 1).len()
        };
        (s, e)
    }

    /// Whether the target's lines match the file's lines from `first`; the
    /// indentation relation and whether trailing whitespace differed.
    fn match_at(&self, first: usize, t: &TargetLines, mode: Mode) -> Option<(Relation, bool)> {
        if first + t.lines.len() > self.count() {
            return None;
        }
        let mut rel: Option<Relation> = None;
        let mut trailing = false;
        let mut file_tabs = false;
        for (j, tline) in t.lines.iter().enumerate() {
            let hline = self.line(first + j);
            let (h, tt) = (hline.trim_end(), tline.trim_end());
            if h.len() != hline.len() || tt.len() != tline.len() {
                trailing |= hline[h.len()..] != tline[tt.len()..];
            }
            if h.is_empty() || tt.is_empty() {
                if h.is_empty() && tt.is_empty() {
                    continue;
                }
                return None;
            }
            let (hi, ti) = (text::indentation(h), text::indentation(tt));
            if h[hi.len()..] != tt[ti.len()..] {
                return None;
            }
            file_tabs |= hi.contains('\t');
            let this = match mode {
                Mode::Strings => {
                    if hi == ti {
                        Relation::Same
                    } else if let Some(p) = hi.strip_suffix(ti) {
                        Relation::FileMore(p.to_owned())
                    } else if let Some(p) = ti.strip_suffix(hi) {
                        Relation::TargetMore(p.to_owned())
                    } else {
                        return None;
                    }
                }
                Mode::Columns(w) => Relation::Cols {
                    delta: columns(hi, w) as i32 - columns(ti, w) as i32,
                    tabs: false,
                },
            };
            match &rel {
                None => rel = Some(this),
                Some(r) if *r == this => {}
                Some(_) => return None,
            }
        }
        let rel = rel?;
        let rel = match rel {
            Relation::Cols { delta, .. } => {
                // Column mode is only for tab/space drift; plain shifts were tier 3's.
                if !file_tabs && !t.lines.iter().any(|l| text::indentation(l).contains('\t')) {
                    return None;
                }
                Relation::Cols { delta, tabs: file_tabs }
            }
            other => other,
        };
        // Tier 3 with identical indentation and identical trailing whitespace would
        // have been an exact match, unless the target omits a final line break the
        // file has or the file's lines differ only in CR: still a valid match.
        Some((rel, trailing))
    }
}

fn columns(indent: &str, tab: u32) -> u32 {
    indent.chars().fold(0, |c, ch| if ch == '\t' { (c / tab + 1) * tab } else { c + 1 })
}

// --- closest candidates for NO_MATCH -------------------------------------------------

/// The best few windows of text that resemble `target`, most similar first.
fn closest(
    text: &str,
    ix: &LineIndex,
    target: &str,
    scope: Option<LineRange>,
) -> Vec<MatchCandidate> {
    const MIN_SIMILARITY: f32 = 0.5;
    // Windows re-scored by a character diff after the cheap bigram pass.
    const RESCORE: usize = 20;
    const MAX_CANDIDATES: usize = 3;
    // Bounds the work on huge files: beyond this many line comparisons only equal
    // lines count (hash compare) instead of character bigrams.
    const BIGRAM_BUDGET: usize = 3_000_000;

    let tl = TargetLines::new(target);
    if !tl.has_content() {
        return Vec::new();
    }
    let t_lines: Vec<&str> = tl.lines.iter().map(|l| l.trim()).collect();
    let k = t_lines.len();
    let n = ix.count() as usize;
    if n == 0 {
        return Vec::new();
    }
    let file_lines: Vec<&str> = (0..n)
        .map(|i| {
            let l = i as u32 + 1;
            text::strip_eol(&text[ix.start_of(l)..ix.end_of(l)]).trim()
        })
        .collect();
    let (lo, hi) = match scope {
        Some(r) => ((r.start as usize - 1).min(n), (r.end as usize).min(n)),
        None => (0, n),
    };
    let cheap = (hi - lo).saturating_mul(k) > BIGRAM_BUDGET;
    let t_grams: Vec<Vec<(char, char)>> = t_lines.iter().map(|l| bigrams(l)).collect();
    let f_grams: Vec<Vec<(char, char)>> =
        if cheap { Vec::new() } else { file_lines[lo..hi].iter().map(|l| bigrams(l)).collect() };
    let line_sim = |j: usize, i: usize| -> f32 {
        let (a, b) = (t_lines[j], file_lines[i]);
        if a == b {
            return 1.0;
        }
        if cheap || a.is_empty() || b.is_empty() {
            return 0.0;
        }
        let (ga, gb) = (&t_grams[j], &f_grams[i - lo]);
        let common = common_count(ga, gb) as f32;
        let dice = 2.0 * common / (ga.len() + gb.len()).max(1) as f32;
        if k == 1 {
            // A fragment of a line: how much of the fragment the line covers counts too.
            let coverage = common / ga.len().max(1) as f32;
            (dice + coverage) / 2.0
        } else {
            dice
        }
    };
    let mut scored: Vec<(f32, usize)> = Vec::new();
    for start in lo..hi {
        let mut total = 0.0;
        for j in 0..k {
            if start + j < hi {
                total += line_sim(j, start + j);
            }
        }
        scored.push((total / k as f32, start));
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    // Re-score the best windows by characters (typos barely move a character
    // diff but break several bigrams), then keep the best few that do not overlap.
    let target_norm = t_lines.join("\n");
    let mut rescored: Vec<(f32, usize)> = scored
        .iter()
        .take(RESCORE)
        .map(|&(_, start)| {
            let end = (start + k).min(hi);
            let window = file_lines[start..end].join("\n");
            (char_similarity(&target_norm, &window, k == 1), start)
        })
        .collect();
    rescored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<MatchCandidate> = Vec::new();
    let mut taken: Vec<(usize, usize)> = Vec::new();
    for (score, start) in rescored {
        if score < MIN_SIMILARITY || out.len() == MAX_CANDIDATES {
            break;
        }
        let end = (start + k).min(hi); // exclusive, 0-based
        if taken.iter().any(|&(s, e)| start < e && s < end) {
            continue;
        }
        taken.push((start, end));
        let (s, e) = (ix.start_of(start as u32 + 1), ix.end_of(end as u32));
        let mut c = candidate(text, ix, s, e, Some((score * 100.0).round() / 100.0));
        c.line_range = LineRange::new(start as u32 + 1, end as u32);
        out.push(c);
    }
    out
}

/// 0..1 character similarity of whitespace-trimmed texts; for a one-line target,
/// how much of it the line contains counts too (it may be a fragment of the line).
fn char_similarity(target: &str, window: &str, fragment: bool) -> f32 {
    let diff = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_millis(50))
        .diff_chars(target, window);
    let ratio = diff.ratio();
    if !fragment {
        return ratio;
    }
    let matched = diff.iter_all_changes().filter(|c| c.tag() == similar::ChangeTag::Equal).count();
    let coverage = matched as f32 / target.chars().count().max(1) as f32;
    ratio.max(0.9 * coverage)
}

fn bigrams(s: &str) -> Vec<(char, char)> {
    let chars: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
    let mut v: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
    if v.is_empty() && chars.len() == 1 {
        v.push((chars[0], ' '));
    }
    v.sort_unstable();
    v
}

/// Size of the multiset intersection of two sorted lists.
fn common_count(a: &[(char, char)], b: &[(char, char)]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

#[cfg(test)]
mod tests;
