//! Bounded capture of an output stream: the first half of the budget and the last
//! half, with a marker between them when bytes were dropped. Test output is most
//! useful at both ends (the command line and the failure summary).

use std::collections::VecDeque;

use protocol::CapturedOutput;

#[derive(Debug)]
pub struct Capture {
    limit: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Capture {
    pub fn new(limit: usize) -> Capture {
        Capture { limit, head: Vec::new(), tail: VecDeque::new(), total: 0 }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let head_cap = self.limit / 2 + self.limit % 2;
        if self.head.len() < head_cap {
            let n = (head_cap - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        let tail_cap = self.limit / 2;
        if tail_cap == 0 {
            return;
        }
        if bytes.len() >= tail_cap {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - tail_cap..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(tail_cap);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    pub fn finish(self) -> CapturedOutput {
        let kept = self.head.len() + self.tail.len();
        let dropped = self.total - kept as u64;
        let mut bytes = self.head;
        if dropped > 0 {
            bytes.extend_from_slice(
                format!("\n[... {dropped} bytes not kept by ironbees ...]\n").as_bytes(),
            );
        }
        bytes.extend(self.tail);
        CapturedOutput {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            truncated: dropped > 0,
            total_bytes: self.total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_is_kept_whole() {
        let mut c = Capture::new(10);
        c.push(b"abc");
        c.push(b"de");
        let out = c.finish();
        assert_eq!(out.text, "abcde");
        assert!(!out.truncated);
        assert_eq!(out.total_bytes, 5);
    }

    #[test]
    fn large_output_keeps_head_and_tail_and_marks_the_gap() {
        let mut c = Capture::new(8);
        for chunk in [&b"0123"[..], b"456789", b"abcdefgh", b"XYZ"] {
            c.push(chunk);
        }
        let out = c.finish();
        assert!(out.truncated);
        assert_eq!(out.total_bytes, 21);
        assert!(out.text.starts_with("0123\n[... 13 bytes not kept"), "{}", out.text);
        assert!(out.text.ends_with("hXYZ"), "{}", out.text);
    }
}
