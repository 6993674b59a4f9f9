//! Applying the edit engine's unified diffs to the old text, so a dry run's new
//! content can be analyzed (which definitions change, and how) without writing
//! anything. The result is verified against the dry run's `newHash` by the caller.

/// Applies `diff` (one file's unified diff, git-style headers allowed) to `old`.
/// None when a hunk does not fit `old`.
pub(crate) fn apply_unified(old: &str, diff: &str) -> Option<String> {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let mut out = String::with_capacity(old.len() + diff.len());
    let mut next = 0usize; // index of the next old line not yet copied
    let lines: Vec<&str> = diff.split_inclusive('\n').collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let Some(header) = l.strip_prefix("@@ -") else {
            i += 1;
            continue;
        };
        let old_start: usize = header.split([',', ' ']).next()?.parse().ok()?;
        // A hunk of a file that was empty starts at 0.
        let start = old_start.saturating_sub(1);
        let old_count: usize = match header.split(' ').next()?.split_once(',') {
            Some((_, n)) => n.parse().ok()?,
            None => 1,
        };
        let start = if old_count == 0 { old_start } else { start };
        if start < next || start > old_lines.len() {
            return None;
        }
        for line in &old_lines[next..start] {
            out.push_str(line);
        }
        next = start;
        i += 1;
        while i < lines.len() && !lines[i].starts_with("@@ ") {
            let l = lines[i];
            let no_eol = lines.get(i + 1).is_some_and(|n| n.starts_with("\\ "));
            let body = &l[1.min(l.len())..];
            let body = if no_eol { body.strip_suffix('\n').unwrap_or(body) } else { body };
            match l.as_bytes().first() {
                Some(b' ') => {
                    if old_lines.get(next) != Some(&body) {
                        return None;
                    }
                    out.push_str(body);
                    next += 1;
                }
                Some(b'-') => {
                    if old_lines.get(next) != Some(&body) {
                        return None;
                    }
                    next += 1;
                }
                Some(b'+') => out.push_str(body),
                Some(b'\\') => {}
                _ => break,
            }
            i += 1;
        }
    }
    for line in &old_lines[next.min(old_lines.len())..] {
        out.push_str(line);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(a: &str, b: &str) -> String {
        let d = similar::TextDiff::from_lines(a, b);
        let mut s = String::from("diff --git a/x b/x\n--- a/x\n+++ b/x\n");
        for h in d.unified_diff().iter_hunks() {
            s.push_str(&h.to_string());
        }
        s
    }

    #[test]
    fn round_trips() {
        let long: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let cases = [
            ("a\nb\nc\n", "a\nB\nc\n"),
            ("a\nb\nc\n", "a\nb\nc\nd\n"),
            ("a\nb", "a\nb\nc"),
            ("a\nb\n", "a\nb"),
            ("", "new\nfile\n"),
            ("gone\n", ""),
            ("x\r\ny\r\n", "x\r\nz\r\n"),
            (long.as_str(), &long.replace("line 3\n", "three\n").replace("line 30\n", "")),
        ];
        for (a, b) in cases {
            assert_eq!(apply_unified(a, &diff(a, b)).as_deref(), Some(b), "{a:?} -> {b:?}");
        }
        assert_eq!(apply_unified("other\n", &diff("a\nb\n", "a\nc\n")), None);
    }
}
