//! Server-sent events, parsed incrementally from arbitrary byte chunks.
//!
//! Written here rather than taken from a crate: the format is small (WHATWG HTML
//! §9.2.6), the parser must accept chunks split anywhere (inside a UTF-8 sequence, a
//! `\r\n` pair or a field name) and must tell a clean end from a truncated one, and
//! the ~80 lines below are tested byte by byte for exactly that.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; `message` when absent.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
    /// The previous chunk ended in `\r`: a `\n` at the start of the next is part of it.
    pending_cr: bool,
}

impl SseParser {
    pub fn new() -> SseParser {
        SseParser::default()
    }

    /// Feeds bytes; returns the events completed by them.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut chunk = chunk;
        if self.pending_cr {
            self.pending_cr = false;
            if chunk.first() == Some(&b'\n') {
                chunk = &chunk[1..];
            }
        }
        self.buf.extend_from_slice(chunk);
        let mut start = 0;
        let mut i = 0;
        while i < self.buf.len() {
            let b = self.buf[i];
            if b == b'\n' || b == b'\r' {
                let line = String::from_utf8_lossy(&self.buf[start..i]).into_owned();
                let mut next = i + 1;
                if b == b'\r' {
                    if next < self.buf.len() {
                        if self.buf[next] == b'\n' {
                            next += 1;
                        }
                    } else {
                        self.pending_cr = true;
                    }
                }
                self.line(&line, &mut out);
                start = next;
                i = next;
            } else {
                i += 1;
            }
        }
        self.buf.drain(..start);
        out
    }

    #[cfg(test)]
    /// True when no partial line or undispatched event is pending: the stream may end
    /// here without losing anything.
    pub fn is_idle(&self) -> bool {
        self.buf.is_empty() && !self.has_data
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if self.has_data {
                let event =
                    if self.event.is_empty() { "message".to_owned() } else { self.event.clone() };
                out.push(SseEvent { event, data: std::mem::take(&mut self.data) });
            }
            self.event.clear();
            self.data.clear();
            self.has_data = false;
            return;
        }
        if line.starts_with(':') {
            return; // comment / keep-alive
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = value.to_owned(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {} // id, retry: not used by model APIs
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = "event: message_start\r\ndata: {\"a\":1}\r\n\r\n: ping\n\nevent: delta\ndata: {\"t\":\"h\u{e9}llo\"}\ndata: second line\n\ndata: [DONE]\r\r";

    fn expected() -> Vec<SseEvent> {
        vec![
            SseEvent { event: "message_start".into(), data: "{\"a\":1}".into() },
            SseEvent { event: "delta".into(), data: "{\"t\":\"h\u{e9}llo\"}\nsecond line".into() },
            SseEvent { event: "message".into(), data: "[DONE]".into() },
        ]
    }

    #[test]
    fn whole_stream() {
        let mut p = SseParser::new();
        assert_eq!(p.feed(STREAM.as_bytes()), expected());
        assert!(p.is_idle());
    }

    #[test]
    fn split_at_every_byte_boundary() {
        let bytes = STREAM.as_bytes();
        for cut in 0..bytes.len() {
            let mut p = SseParser::new();
            let mut got = p.feed(&bytes[..cut]);
            got.extend(p.feed(&bytes[cut..]));
            assert_eq!(got, expected(), "cut at {cut}");
        }
        let mut p = SseParser::new();
        let got: Vec<_> = bytes.iter().flat_map(|b| p.feed(std::slice::from_ref(b))).collect();
        assert_eq!(got, expected(), "one byte at a time");
    }

    #[test]
    fn unfinished_event_is_not_idle() {
        let mut p = SseParser::new();
        assert!(p.feed(b"data: {\"partial\":").is_empty());
        assert!(!p.is_idle());
        let mut p = SseParser::new();
        assert!(p.feed(b"data: x\n").is_empty());
        assert!(!p.is_idle(), "data without the blank line is not dispatched");
    }
}
