//! Echoing what a caller sent without sending it all back.

use std::borrow::Cow;

/// The longest path a caller may give: Linux's `PATH_MAX`. Anything longer names
/// nothing on disk, so it is refused before any work (and before being echoed).
pub const MAX_PATH_BYTES: usize = 4096;

/// `text` cut to at most about `max_bytes` by dropping its middle (the start and the
/// end are what identify a path or a message), with the number of bytes dropped
/// said in place. Cuts fall on character boundaries. A 5 MB argument echoed in an
/// error must not become a 25 MB answer.
///
/// Clipping a clipped text counts what the earlier cut dropped: a marker the new
/// cut reaches goes whole and its bytes are added, so the number is always what
/// is missing from the original. (A 125 KB request stored clipped to 200 bytes,
/// then clipped to 70 for `runs list`, said "[154 bytes cut]": issue 32.7.)
pub fn clip(text: &str, max_bytes: usize) -> Cow<'_, str> {
    if text.len() <= max_bytes {
        return Cow::Borrowed(text);
    }
    let keep = max_bytes / 2;
    let mut head = keep.min(text.len());
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - keep.min(text.len());
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    // Markers are disjoint, so widening the cut over one never reaches another.
    let mut earlier = 0;
    for m in markers(text) {
        if m.end > head && m.start < tail {
            head = head.min(m.start);
            tail = tail.max(m.end);
            earlier += m.cut;
        }
    }
    let inside: usize =
        markers(text).filter(|m| m.start >= head && m.end <= tail).map(|m| m.end - m.start).sum();
    let cut = tail - head - inside + earlier;
    Cow::Owned(format!("{}{MARK_OPEN}{cut}{MARK_CLOSE}{}", &text[..head], &text[tail..]))
}

const MARK_OPEN: &str = "…[";
const MARK_CLOSE: &str = " bytes cut]…";

/// A cut marker in a text: its byte range and the number it says.
struct Marker {
    start: usize,
    end: usize,
    cut: usize,
}

/// The cut markers [`clip`] left in `text`, in order.
fn markers(text: &str) -> impl Iterator<Item = Marker> + '_ {
    text.match_indices(MARK_OPEN).filter_map(move |(start, _)| {
        let digits = &text[start + MARK_OPEN.len()..];
        let n = digits.bytes().take_while(u8::is_ascii_digit).count();
        let cut = digits[..n].parse().ok()?;
        digits[n..].starts_with(MARK_CLOSE).then(|| Marker {
            start,
            end: start + MARK_OPEN.len() + n + MARK_CLOSE.len(),
            cut,
        })
    })
}

/// An `f32` as the `f64` with the same shortest decimal form (`0.1f32` is `0.1`,
/// not `0.10000000149011612`): answers carry `f64`, and a score computed in `f32`
/// should read as it was computed whichever way it is serialized.
pub fn widen(x: f32) -> f64 {
    x.to_string().parse().unwrap_or(f64::from(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widened_floats_keep_their_decimal_form() {
        assert_eq!(widen(18.064182).to_string(), "18.064182");
        assert_eq!(widen(0.1).to_string(), "0.1");
        assert_eq!(serde_json_like(widen(2.968_454_6)), "2.9684546");
    }

    fn serde_json_like(x: f64) -> String {
        format!("{x}")
    }

    #[test]
    fn clip_keeps_both_ends_and_says_how_much_went() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("abcdefghijklmnopqrstuvwxyz", 10), "abcde…[16 bytes cut]…vwxyz");
        // Never inside a character: 한 is three bytes.
        let k = "한".repeat(10);
        let c = clip(&k, 8);
        assert!(c.starts_with("한") && c.ends_with("한"), "{c}");
        let big = "x".repeat(5 << 20);
        assert!(clip(&big, 200).len() < 300);
    }

    /// What a clipped text shows plus what its marker says is the original's
    /// length, however many times it was clipped.
    #[test]
    fn clipping_a_clipped_text_counts_every_byte_left_out() {
        // (bytes shown, bytes the one marker says were cut)
        let said = |c: &str| -> (usize, usize) {
            let (start, end) = (c.find("…[").unwrap(), c.find(" bytes cut]…").unwrap());
            assert_eq!(c.matches("…[").count(), 1, "one marker in {c:?}");
            let end = end + " bytes cut]…".len();
            (
                c.len() - (end - start),
                c[start + "…[".len()..].split(' ').next().unwrap().parse().unwrap(),
            )
        };
        let request = format!("Fix the bug.\n{}", "Context line, 한 more.\n".repeat(5000));
        // (text, first clip, second clip)
        let cases: &[(&str, usize, usize)] = &[
            (&request, 200, 70),
            (&request, 200, 10),
            (&request, 70, 200),
            (&request, 1000, 999),
            (&request, 2000, 100),
            ("abcdefghijklmnopqrstuvwxyz0123456789", 20, 12),
        ];
        for &(text, first, second) in cases {
            let once = clip(text, first);
            let twice = clip(&once, second);
            let (shown, cut) = said(&twice);
            assert_eq!(shown + cut, text.len(), "{first} then {second}: {twice:?}");
            assert!(twice.len() <= second.max(first) + 40, "{twice:?}");
        }
        // The 125 KB request of issue 32.7, as `runs list` showed it.
        let big = "x".repeat(125_000);
        let stored = clip(&big, 200);
        let listed = clip(&stored, 70);
        assert_eq!(said(&listed), (70, 124_930), "{listed}");
    }
}
