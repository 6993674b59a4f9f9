//! `read`: a file whole, as a skeleton, a fragment (lines or a definition), or a
//! diff against HEAD or an edit transaction. Always from disk, always with the
//! file's current hash (the next `expectedHash`).

use std::{borrow::Cow, path::Path};

use protocol::{Guidance, LineRange, ReadRequest, ReadResponse, ReadView, Warning, WarningLevel};
use serde_json::json;

use stdx::Call;

use crate::{
    Session,
    error::{Error, Result},
    guidance::{action, finish},
    locate,
    session::check_cancel,
};

/// A whole-file read is cut past this many tokens (the skeleton is the better view).
const FULL_MAX_TOKENS: usize = 12_000;

impl Session {
    pub fn read(&self, req: &ReadRequest, call: &Call<'_>) -> Result<ReadResponse> {
        self.read_from(req, None, call)
    }

    /// `read`, with the files `overlay` holds read from it (a run's shadow).
    pub(crate) fn read_from(
        &self,
        req: &ReadRequest,
        overlay: Option<&edit::Overlay>,
        call: &Call<'_>,
    ) -> Result<ReadResponse> {
        check_cancel(call)?;
        let rel = self.rel_path(&req.target)?;
        let abs = self.root.join(&rel);
        if abs.is_dir() {
            return Err(Error::InvalidArgument(format!(
                "{rel} is a directory; `understand` it, or read one of its files"
            )));
        }
        let view = req.view.unwrap_or(if req.against.is_some() {
            ReadView::Diff
        } else if req.line_range.is_some() || req.symbol.is_some() {
            ReadView::Fragment
        } else {
            ReadView::Full
        });
        let from_disk = match overlay.and_then(|o| o.get(&rel)) {
            Some(Some(b)) => Ok(b.clone()),
            Some(None) => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
            None => std::fs::read(&abs),
        };
        let exists = from_disk.is_ok();
        let bytes = match from_disk {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && view != ReadView::Diff => {
                return Err(Error::NotFound {
                    message: format!("{rel}: no such file"),
                    path: Some(rel),
                    similar: vec![],
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(Error::Index(code_index::Error::Io { path: abs, source: e })),
        };
        if bytes.contains(&0) {
            return Err(Error::Index(code_index::Error::Unsupported {
                path: rel.into(),
                code: protocol::ErrorCode::BinaryFile,
                reason: "contains NUL bytes; looks binary".into(),
            }));
        }
        let hash = stdx::sha256_hex(&bytes);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let total_lines = text.lines().count() as u32;
        let language =
            code_index::Language::from_path(Path::new(&rel)).map(|l| l.name().to_owned());
        let mut warnings = Vec::new();
        let mut truncated = false;
        // A whole file's count, when the content is the whole file: counting the
        // tokens of a large file is most of a full read, and it was done twice.
        let mut whole_tokens = None;
        let (content, range) = match view {
            ReadView::Full => {
                let tokens = self.tokens_of(&hash, &text);
                if tokens > FULL_MAX_TOKENS {
                    // Keep whole lines up to about the limit.
                    let keep = (total_lines as usize * FULL_MAX_TOKENS / tokens).max(1);
                    truncated = true;
                    warnings.push(Warning {
                        severity: WarningLevel::Warning,
                        code: "TRUNCATED".into(),
                        message: format!("{rel} is {tokens} tokens; the first {keep} of {total_lines} lines are shown"),
                        affected: vec![rel.clone()],
                        mitigation: Some("read its skeleton, then fragments by lineRange or symbol".into()),
                    });
                    (slice_lines(&text, 1, keep as u32), Some(LineRange::new(1, keep as u32)))
                } else {
                    whole_tokens = Some(tokens);
                    (text.clone(), (total_lines > 0).then(|| LineRange::new(1, total_lines)))
                }
            }
            ReadView::Skeleton => {
                let lang = code_index::Language::from_path(Path::new(&rel)).ok_or_else(|| {
                    Error::Index(code_index::Error::Unsupported {
                        path: rel.clone().into(),
                        code: protocol::ErrorCode::UnknownLanguage,
                        reason: "no grammar for this file type: no skeleton; read it in full"
                            .into(),
                    })
                })?;
                let file = self.analysis_of(&rel, lang, Cow::Borrowed(&bytes), hash.clone());
                (file.skeleton_text().to_owned(), None)
            }
            ReadView::Fragment => {
                let range = match (&req.line_range, &req.symbol) {
                    (Some(r), _) => *r,
                    (None, Some(sym)) => {
                        self.symbol_range(&rel, &bytes, &hash, sym, &mut warnings)?
                    }
                    (None, None) => {
                        return Err(Error::InvalidArgument(
                            "a fragment needs `lineRange` (\"10-40\") or `symbol`".into(),
                        ));
                    }
                };
                if range.start > total_lines.max(1) {
                    return Err(Error::InvalidArgument(format!(
                        "lines {range} are past the end of {rel} ({total_lines} lines)"
                    )));
                }
                let end = range.end.min(total_lines.max(1));
                (slice_lines(&text, range.start, end), Some(LineRange::new(range.start, end)))
            }
            ReadView::Diff => {
                let now = exists.then_some(bytes.as_slice());
                (self.diff_against(&rel, now, req.against.as_deref())?, None)
            }
            _ => return Err(Error::InvalidArgument("unknown view".into())),
        };
        let tokens = whole_tokens.unwrap_or_else(|| code_index::count_tokens(&content)) as u32;
        let unchanged = view == ReadView::Diff && content.is_empty();
        let mut guidance =
            read_guidance(&rel, view, &hash, range, total_lines, truncated, warnings);
        if unchanged {
            let against = req.against.as_deref().unwrap_or("HEAD").trim();
            guidance.context_summary = format!(
                "{rel} is unchanged since {against}: no diff. Hash {hash} (send it as \
                 expectedHash when changing the file)."
            );
        }
        Ok(ReadResponse {
            path: rel,
            view,
            content,
            hash,
            lines: total_lines,
            line_range: range,
            language,
            tokens,
            truncated,
            unchanged,
            guidance,
        })
    }

    /// The lines of a definition in the file as it is now.
    fn symbol_range(
        &self,
        rel: &str,
        bytes: &[u8],
        hash: &str,
        sym: &str,
        warnings: &mut Vec<Warning>,
    ) -> Result<LineRange> {
        let lang = code_index::Language::from_path(Path::new(rel)).ok_or_else(|| {
            Error::InvalidArgument(format!("{rel}: no grammar for this file type; use lineRange"))
        })?;
        let file = self.analysis_of(rel, lang, Cow::Borrowed(bytes), hash.to_owned());
        let analysis = &file.analysis;
        let want = locate::normalize(sym);
        let last = want.rsplit('.').next().unwrap_or(&want).to_owned();
        let mut hits: Vec<&code_index::Definition> = analysis
            .definitions
            .iter()
            .filter(|d| locate::normalize(&d.qualified_name) == want)
            .collect();
        if hits.is_empty() {
            hits = analysis
                .definitions
                .iter()
                .filter(|d| {
                    locate::normalize(&d.qualified_name).ends_with(&format!(".{want}"))
                        || d.name == last
                })
                .collect();
        }
        let Some(first) = hits.first() else {
            let names: Vec<String> =
                analysis.definitions.iter().map(|d| d.qualified_name.clone()).collect();
            let mut similar: Vec<String> = names
                .iter()
                .filter(|n| n.to_lowercase().contains(&last.to_lowercase()))
                .take(5)
                .cloned()
                .collect();
            if similar.is_empty() {
                similar = names.into_iter().take(5).collect();
            }
            return Err(Error::NotFound {
                message: format!("no definition `{sym}` in {rel}"),
                path: Some(rel.to_owned()),
                similar,
            });
        };
        if hits.len() > 1 {
            warnings.push(Warning {
                severity: WarningLevel::Info,
                code: "MANY_DEFINITIONS".into(),
                message: format!("{} definitions match `{sym}`; the first is shown", hits.len()),
                affected: hits
                    .iter()
                    .skip(1)
                    .map(|d| format!("{rel}:{} {}", d.line, d.qualified_name))
                    .collect(),
                mitigation: Some("use lineRange to pick another".into()),
            });
        }
        Ok(LineRange::new(first.line, first.end_line))
    }

    /// The diff of `now` (None: no such file) against HEAD or a transaction;
    /// empty when the file is as it was there.
    fn diff_against(&self, rel: &str, now: Option<&[u8]>, against: Option<&str>) -> Result<String> {
        let against = against.unwrap_or("HEAD").trim();
        if against.eq_ignore_ascii_case("head") {
            if !git::is_repository(&self.root)? {
                return Err(Error::InvalidArgument(format!(
                    "{} is not in a git repository, so there is no HEAD to diff against; \
                     diff against an edit transaction id instead (`manage` history lists them)",
                    self.root.display()
                )));
            }
            // A file not in HEAD (new, or no commit yet) diffs against nothing.
            let head = git::file_at_head(&self.root, rel)?;
            if head.is_none() && now.is_none() {
                return Err(Error::NotFound {
                    message: format!("{rel}: no such file, on disk or at HEAD"),
                    path: Some(rel.to_owned()),
                    similar: vec![],
                });
            }
            // The same bytes: nothing to show, as `git diff` shows nothing (the
            // diff renderer would print a bare `diff --git` header; issue 32.9).
            if head.as_deref() == now {
                return Ok(String::new());
            }
            return Ok(edit::unified_diff(rel, head.as_deref(), now));
        }
        let (summary, changes) = self.edits().transaction(against)?;
        let mine: Vec<&protocol::FileChange> = changes
            .iter()
            .filter(|c| c.path == rel || c.new_path.as_deref() == Some(rel))
            .collect();
        if mine.is_empty() {
            return Err(Error::NotFound {
                message: format!(
                    "transaction {} did not change {rel} (it changed: {})",
                    summary.id,
                    summary.files.join(", ")
                ),
                path: Some(rel.to_owned()),
                similar: summary.files.clone(),
            });
        }
        Ok(mine.iter().map(|c| c.diff.as_str()).collect::<Vec<_>>().join(""))
    }
}

/// Lines `start..=end` (1-based) of `text`, terminators kept.
pub(crate) fn slice_lines(text: &str, start: u32, end: u32) -> String {
    text.split_inclusive('\n')
        .skip(start.saturating_sub(1) as usize)
        .take((end + 1).saturating_sub(start) as usize)
        .collect()
}

fn read_guidance(
    rel: &str,
    view: ReadView,
    hash: &str,
    range: Option<LineRange>,
    total: u32,
    truncated: bool,
    warnings: Vec<Warning>,
) -> Guidance {
    let mut actions = Vec::new();
    if view == ReadView::Skeleton || truncated {
        actions.push(action(
            1,
            "read",
            json!({"target": rel, "view": "fragment", "lineRange": "1-80"}),
            "read a fragment (pick the lines from the skeleton's numbers)",
            "skeleton line numbers are the file's",
        ));
    }
    if view != ReadView::Diff {
        let mut edit = json!({"path": rel, "targetString": "<exact text shown>", "replacementString": "<new text>", "expectedHash": hash});
        if let Some(r) = range.filter(|_| view == ReadView::Fragment) {
            edit["lineRange"] = json!(r.to_string());
        }
        actions.push(action(
            2,
            "change",
            json!({"description": "<what and why>", "edits": [edit], "options": {"dryRun": true, "includeImpact": true}}),
            format!("preview an edit of {rel}"),
            "expectedHash is this read's hash: the edit is refused if the file changes meanwhile",
        ));
        actions.push(action(
            3,
            "understand",
            json!({"target": rel}),
            format!("who depends on {rel}, and what a change would reach"),
            "",
        ));
    }
    let what = match view {
        ReadView::Full if truncated => {
            format!("the first {} of {total} lines", range.map_or(0, |r| r.end))
        }
        ReadView::Full => format!("all {total} lines"),
        ReadView::Skeleton => {
            "its skeleton (signatures, bodies elided, true line numbers)".to_owned()
        }
        ReadView::Fragment => format!("lines {}", range.map(|r| r.to_string()).unwrap_or_default()),
        _ => "a diff".to_owned(),
    };
    Guidance {
        context_summary: format!(
            "{rel}: {what}. Hash {hash} (send it as expectedHash when changing the file)."
        ),
        next_actions: finish(actions),
        warnings,
        recovery: None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn slices() {
        let t = "a\nb\nc\nd";
        assert_eq!(super::slice_lines(t, 2, 3), "b\nc\n");
        assert_eq!(super::slice_lines(t, 4, 9), "d");
        assert_eq!(super::slice_lines(t, 1, 1), "a\n");
    }
}
