//! Three-way merge of text by lines: the changes two sides made to a common base,
//! combined when they touch different lines.
//!
//! An agent run edits a file as it was when the run read it (the base); by the
//! time the run applies, someone may have changed the file on disk. When the two
//! changed different lines, both changes belong in the result, as `git merge`
//! would make it; when they changed the same lines (or lines next to each
//! other), a person or the agent must decide, and the merge says where.

use similar::{Algorithm, DiffOp, capture_diff_slices};

/// Why a merge could not be made: the 1-based base lines both sides changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeConflict {
    pub base_lines: (usize, usize),
}

/// One side's change against the base: base lines `start..end` become `lines`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Change<'a> {
    start: usize,
    end: usize,
    lines: Vec<&'a str>,
}

fn changes<'a>(base: &[&'a str], side: &[&'a str]) -> Vec<Change<'a>> {
    let mut out: Vec<Change<'a>> = Vec::new();
    for op in capture_diff_slices(Algorithm::Myers, base, side) {
        if let DiffOp::Equal { .. } = op {
            continue;
        }
        let (old, new) = (op.old_range(), op.new_range());
        let change = Change { start: old.start, end: old.end, lines: side[new].to_vec() };
        // A delete next to an insert is one change.
        match out.last_mut() {
            Some(last) if last.end == change.start => {
                last.end = change.end;
                last.lines.extend(change.lines);
            }
            _ => out.push(change),
        }
    }
    out
}

/// Merges `ours` and `theirs`, both edits of `base`. Lines keep their endings.
pub fn merge3(base: &str, ours: &str, theirs: &str) -> Result<String, MergeConflict> {
    if ours == theirs || base == theirs {
        return Ok(ours.to_owned());
    }
    if base == ours {
        return Ok(theirs.to_owned());
    }
    let base_lines: Vec<&str> = base.split_inclusive('\n').collect();
    let our_lines: Vec<&str> = ours.split_inclusive('\n').collect();
    let their_lines: Vec<&str> = theirs.split_inclusive('\n').collect();
    let mut all: Vec<(Change<'_>, bool)> = changes(&base_lines, &our_lines)
        .into_iter()
        .map(|c| (c, true))
        .chain(changes(&base_lines, &their_lines).into_iter().map(|c| (c, false)))
        .collect();
    all.sort_by_key(|(c, ours)| (c.start, c.end, !*ours));
    let mut merged: Vec<&Change<'_>> = Vec::new();
    for (change, _) in &all {
        if let Some(prev) = merged.last() {
            if *prev == change {
                continue; // the same change on both sides
            }
            // Overlapping lines, or two changes at one place (an insertion
            // where the other side inserted or replaced): someone must look.
            // Changes to neighbouring lines merge (stricter than git's diff3).
            let at_once = change.start == prev.start;
            if change.start < prev.end || at_once {
                let first = prev.start.min(change.start) + 1;
                let last = prev.end.max(change.end).max(first);
                return Err(MergeConflict { base_lines: (first, last) });
            }
        }
        merged.push(change);
    }
    let mut out = String::with_capacity(ours.len().max(theirs.len()));
    let mut at = 0;
    for c in merged {
        base_lines[at..c.start].iter().for_each(|l| out.push_str(l));
        c.lines.iter().for_each(|l| out.push_str(l));
        at = c.end;
    }
    base_lines[at..].iter().for_each(|l| out.push_str(l));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_changes_to_different_lines_and_refuses_the_same_lines() {
        let base = "a\nb\nc\nd\ne\nf\n";
        // (ours, theirs, merged or the conflict's base lines)
        type Merged<'a> = Result<&'a str, (usize, usize)>;
        let cases: &[(&str, &str, Merged<'_>)] = &[
            ("A\nb\nc\nd\ne\nf\n", "a\nb\nc\nd\ne\nF\n", Ok("A\nb\nc\nd\ne\nF\n")),
            ("a\nb\nc\nd\ne\nf\ng\n", "x\na\nb\nc\nd\ne\nf\n", Ok("x\na\nb\nc\nd\ne\nf\ng\n")),
            ("a\nc\nd\ne\nf\n", "a\nb\nc\nd\nE\nf\n", Ok("a\nc\nd\nE\nf\n")),
            ("a\nB\nc\nd\ne\nf\n", "a\nB\nc\nd\ne\nf\n", Ok("a\nB\nc\nd\ne\nf\n")),
            ("a\nB\nc\nd\ne\nf\n", "a\nX\nc\nd\ne\nf\n", Err((2, 2))),
            ("a\nB\nc\nd\ne\nf\n", "a\nb\nC\nd\ne\nf\n", Ok("a\nB\nC\nd\ne\nf\n")),
            ("a\nb\nc\nd\ne\nf\n+\n", "a\nb\nc\nd\ne\nf\n-\n", Err((7, 7))),
            (base, "a\nb\nz\n", Ok("a\nb\nz\n")),
        ];
        for (ours, theirs, want) in cases {
            let got = merge3(base, ours, theirs).map_err(|c| c.base_lines);
            assert_eq!(got.as_deref().map_err(|e| *e), want.map_err(|e| e), "{ours:?} {theirs:?}");
        }
    }

    #[test]
    fn a_file_without_a_final_newline_merges() {
        let got = merge3("x = 1\ny = 2", "x = 10\ny = 2", "x = 1\ny = 2\nz = 3\n");
        assert_eq!(got.unwrap(), "x = 10\ny = 2\nz = 3\n");
    }
}
