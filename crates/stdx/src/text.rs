//! Echoing what a caller sent without sending it all back.

use std::borrow::Cow;

/// The longest path a caller may give: Linux's `PATH_MAX`. Anything longer names
/// nothing on disk, so it is refused before any work (and before being echoed).
pub const MAX_PATH_BYTES: usize = 4096;

/// `text` cut to at most about `max_bytes` by dropping its middle (the start and the
/// end are what identify a path or a message), with the number of bytes dropped
/// said in place. Cuts fall on character boundaries. A 5 MB argument echoed in an
/// error must not become a 25 MB answer.
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
    let cut = tail - head;
    Cow::Owned(format!("{}…[{cut} bytes cut]…{}", &text[..head], &text[tail..]))
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
}
