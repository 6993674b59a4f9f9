//! Compact encoding of a file's references, stored as one BLOB per parsed file.
//!
//! A large repository has millions of identifier uses. As rows with indexes they
//! dominate both the database size and the time to write it; as one varint-packed
//! value per file (names once, then (name, kind, line delta, column, enclosing)) they
//! cost a few bytes each. Lookups by name go through the `ref_names` table, which
//! holds each distinct name once per file.
//!
//! Layout: `n_names, (len, bytes)*, n_refs, (name_idx, kind, line_delta, column,
//! enclosing+1, [receiver_idx+1])*`, every integer an unsigned LEB128 varint; the
//! receiver's type only for a member call. Names in order of first use, the names of
//! references before those only a receiver's type uses; references sorted by position.

use std::collections::HashMap;

use crate::{
    extract::{RefKind, Reference},
    project::{NameId, Ref},
};

/// Encodes `refs`; also returns their distinct names (first use first), which the
/// caller stores in `ref_names`. (A receiver's type is not a use of that name: a
/// parameter's annotation or the constructor call is one already, if in the file.)
pub(crate) fn encode(refs: &[Reference]) -> (Vec<u8>, Vec<&str>) {
    // One map lookup per reference: a sorted table with a binary search per
    // reference cost ~5 string comparisons each, 2% of a cold index.
    let mut ids: HashMap<&str, u32> = HashMap::with_capacity(refs.len() / 2);
    let mut names: Vec<&str> = Vec::new();
    let idx: Vec<u32> = refs
        .iter()
        .map(|r| {
            *ids.entry(r.name.as_str()).or_insert_with(|| {
                names.push(&r.name);
                (names.len() - 1) as u32
            })
        })
        .collect();
    let n_ref_names = names.len();
    let receiver_idx: Vec<Option<u32>> = refs
        .iter()
        .map(|r| {
            let t = r.receiver.as_deref().filter(|_| r.kind == RefKind::MemberCall)?;
            Some(*ids.entry(t).or_insert_with(|| {
                names.push(t);
                (names.len() - 1) as u32
            }))
        })
        .collect();
    let mut out = Vec::with_capacity(refs.len() * 6 + names.len() * 10);
    put(&mut out, names.len() as u64);
    for n in &names {
        put(&mut out, n.len() as u64);
        out.extend_from_slice(n.as_bytes());
    }
    put(&mut out, refs.len() as u64);
    let mut prev_line = 0u32;
    for ((r, idx), receiver) in refs.iter().zip(idx).zip(receiver_idx) {
        put(&mut out, u64::from(idx));
        put(&mut out, kind_code(r.kind));
        put(&mut out, u64::from(r.line.saturating_sub(prev_line)));
        put(&mut out, u64::from(r.column));
        put(&mut out, r.enclosing.map_or(0, |e| u64::from(e) + 1));
        if r.kind == RefKind::MemberCall {
            put(&mut out, receiver.map_or(0, |t| u64::from(t) + 1));
        }
        prev_line = r.line.max(prev_line);
    }
    names.truncate(n_ref_names);
    (out, names)
}

/// Decodes what [`encode`] wrote; `None` if the bytes are damaged.
pub(crate) fn decode(bytes: &[u8]) -> Option<Vec<Reference>> {
    let mut names = Vec::new();
    let refs = decode_interned(bytes, |name| {
        names.push(name.to_owned());
        (names.len() - 1) as NameId
    })?;
    let out = refs
        .into_iter()
        .map(|r| Reference {
            name: names[r.name as usize].clone(),
            kind: r.kind,
            line: r.line,
            column: r.column,
            enclosing: r.enclosing,
            receiver: r.receiver.map(|t| names[t as usize].clone()),
        })
        .collect();
    Some(out)
}

/// Decodes like [`decode`], but names each reference by what `intern` returns for
/// its name, called once per distinct name: a snapshot of a large repository
/// decodes millions of references, and a `String` each is most of that work.
pub(crate) fn decode_interned(
    bytes: &[u8],
    mut intern: impl FnMut(&str) -> NameId,
) -> Option<Vec<Ref>> {
    let mut r = Reader { bytes, pos: 0 };
    let n_names = r.get()? as usize;
    let mut names = Vec::with_capacity(n_names.min(1 << 20));
    for _ in 0..n_names {
        let len = r.get()? as usize;
        let s = bytes.get(r.pos..r.pos.checked_add(len)?)?;
        names.push(intern(std::str::from_utf8(s).ok()?));
        r.pos += len;
    }
    let n = r.get()? as usize;
    let mut out = Vec::with_capacity(n.min(1 << 22));
    let mut line = 0u32;
    for _ in 0..n {
        let name = *names.get(r.get()? as usize)?;
        let kind = kind_from_code(r.get()?)?;
        line = line.checked_add(u32::try_from(r.get()?).ok()?)?;
        let column = u32::try_from(r.get()?).ok()?;
        let enclosing = match r.get()? {
            0 => None,
            e => Some(u32::try_from(e - 1).ok()?),
        };
        let receiver = match kind {
            RefKind::MemberCall => match r.get()? {
                0 => None,
                t => Some(*names.get(usize::try_from(t - 1).ok()?)?),
            },
            _ => None,
        };
        out.push(Ref { name, kind, line, column, enclosing, receiver });
    }
    (r.pos == bytes.len()).then_some(out)
}

fn kind_code(kind: RefKind) -> u64 {
    match kind {
        RefKind::Call => 0,
        RefKind::Type => 1,
        RefKind::Use => 2,
        RefKind::MemberCall => 3,
        RefKind::SelfCall => 4,
    }
}

fn kind_from_code(code: u64) -> Option<RefKind> {
    Some(match code {
        0 => RefKind::Call,
        1 => RefKind::Type,
        2 => RefKind::Use,
        3 => RefKind::MemberCall,
        4 => RefKind::SelfCall,
        _ => return None,
    })
}

fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn get(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.bytes.get(self.pos)?;
            self.pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(name: &str, kind: RefKind, line: u32, column: u32, enclosing: Option<u32>) -> Reference {
        Reference { name: name.to_owned(), kind, line, column, enclosing, receiver: None }
    }

    #[test]
    fn roundtrip() {
        let refs = vec![
            r("helper", RefKind::Call, 3, 9, Some(0)),
            r("x", RefKind::Use, 3, 16, Some(0)),
            r("Item", RefKind::Type, 200, 1, None),
            r("helper", RefKind::Call, 70_000, 300, Some(4000)),
            r("ünïcode", RefKind::Use, 70_001, 2, None),
            Reference {
                receiver: Some("Linter".into()),
                ..r("check", RefKind::MemberCall, 70_002, 5, Some(1))
            },
            Reference {
                receiver: Some("Item".into()),
                ..r("get", RefKind::MemberCall, 70_003, 5, None)
            },
            r("check", RefKind::MemberCall, 70_004, 5, None),
        ];
        let (bytes, names) = encode(&refs);
        assert_eq!(decode(&bytes).unwrap(), refs);
        // `Linter` is only a receiver's type: not a name the file references.
        assert_eq!(names, ["helper", "x", "Item", "ünïcode", "check", "get"]);
        assert_eq!(decode(&encode(&[]).0).unwrap(), vec![]);
    }

    #[test]
    fn damaged_bytes_are_rejected_not_misread() {
        let (bytes, _) =
            encode(&[r("a", RefKind::Call, 1, 1, None), r("b", RefKind::Use, 2, 1, Some(0))]);
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_none(), "prefix of {cut} bytes accepted");
        }
        let mut bad_kind = bytes.clone();
        let kind_pos = bytes.len() - 4; // name_idx, kind, line, col, enc of the last ref
        bad_kind[kind_pos] = 9;
        assert!(decode(&bad_kind).is_none());
    }
}
