//! The `decisions` column family: its keys and values, ONE encoder and ONE decoder each
//! (docs/format.md, "Curator decisions"). Three kinds of entries, told apart by the key's first
//! byte:
//!
//! ```text
//! decision   key:   b'D' | len(a): u32 BE | a | b            (a < b, byte order; keys are 1..=65536 bytes)
//!            value: version u8 (= 1) | kind u8 (1 same, 2 distinct) | at_ms u64 LE
//!                   | flags u8 (bit 0 author, bit 1 reason)
//!                   | [len u32 LE | author UTF-8] | [len u32 LE | reason UTF-8]
//! held edge  key:   b'H' | lo doc id u64 BE | hi doc id u64 BE
//!            value: len(a): u32 BE | a | b                   (the distinct decision that holds it)
//! same edge  key:   b'S' | lo doc id u64 BE | hi doc id u64 BE
//!            value: empty                                    (an edge of `edges` that only a `same` decision makes)
//! ```

use std::path::Path;

use crate::error::{Error, Result};

use super::model::KeyPair;
use super::{Decision, DecisionKind};

/// The column family.
pub(crate) const CF_DECISIONS: &str = "decisions";

const DECISION: u8 = b'D';
const HELD: u8 = b'H';
const SAME_EDGE: u8 = b'S';
const VERSION: u8 = 1;

/// One decoded entry.
#[derive(Debug, PartialEq)]
pub(crate) enum Entry {
    Decision(Decision),
    Held((u64, u64), KeyPair),
    SameEdge((u64, u64)),
}

fn pair_bytes(tag: Option<u8>, p: &KeyPair) -> Vec<u8> {
    let mut k = Vec::with_capacity(5 + p.0.len() + p.1.len());
    k.extend(tag);
    k.extend_from_slice(&(p.0.len() as u32).to_be_bytes());
    k.extend_from_slice(p.0.as_bytes());
    k.extend_from_slice(p.1.as_bytes());
    k
}

fn edge_bytes(tag: u8, (a, b): (u64, u64)) -> [u8; 17] {
    let (lo, hi) = (a.min(b), a.max(b));
    let mut k = [0u8; 17];
    k[0] = tag;
    k[1..9].copy_from_slice(&lo.to_be_bytes());
    k[9..].copy_from_slice(&hi.to_be_bytes());
    k
}

/// The key of a decision.
pub(crate) fn decision_key(p: &KeyPair) -> Vec<u8> {
    pair_bytes(Some(DECISION), p)
}

/// The key of a held edge.
pub(crate) fn held_key(e: (u64, u64)) -> [u8; 17] {
    edge_bytes(HELD, e)
}

/// The value of a held edge: the decision that holds it.
pub(crate) fn held_value(p: &KeyPair) -> Vec<u8> {
    pair_bytes(None, p)
}

/// The key of a same-only edge.
pub(crate) fn same_edge_key(e: (u64, u64)) -> [u8; 17] {
    edge_bytes(SAME_EDGE, e)
}

/// The value of a decision.
pub(crate) fn encode_decision(d: &Decision) -> Vec<u8> {
    let mut v = vec![
        VERSION,
        match d.decision {
            DecisionKind::Same => 1,
            DecisionKind::Distinct => 2,
        },
    ];
    v.extend_from_slice(&d.at_ms.to_le_bytes());
    v.push(u8::from(d.author.is_some()) | (u8::from(d.reason.is_some()) << 1));
    for s in [&d.author, &d.reason].into_iter().flatten() {
        v.extend_from_slice(&(s.len() as u32).to_le_bytes());
        v.extend_from_slice(s.as_bytes());
    }
    v
}

/// A bounded reader over one value: every length checked against what is left.
struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.buf.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|s| s[0])
    }
    fn string(&mut self, len: usize) -> Option<String> {
        String::from_utf8(self.take(len)?.to_vec()).ok()
    }
    fn u32_le(&mut self) -> Option<usize> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize)
    }
    fn u32_be(&mut self) -> Option<usize> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?) as usize)
    }
    fn u64_be(&mut self) -> Option<u64> {
        Some(u64::from_be_bytes(self.take(8)?.try_into().ok()?))
    }
    fn rest_string(&mut self) -> Option<String> {
        let n = self.buf.len() - self.at;
        self.string(n)
    }
    fn done(&self) -> bool {
        self.at == self.buf.len()
    }
}

fn decode_pair(r: &mut Reader<'_>) -> Option<KeyPair> {
    let la = r.u32_be()?;
    let a = r.string(la)?;
    let b = r.rest_string()?;
    (!a.is_empty() && !b.is_empty() && a < b).then_some((a, b))
}

fn decode_value(p: KeyPair, v: &[u8]) -> Option<Decision> {
    let mut r = Reader { buf: v, at: 0 };
    if r.u8()? != VERSION {
        return None;
    }
    let decision = match r.u8()? {
        1 => DecisionKind::Same,
        2 => DecisionKind::Distinct,
        _ => return None,
    };
    let at_ms = u64::from_le_bytes(r.take(8)?.try_into().ok()?);
    let flags = r.u8()?;
    if flags > 3 {
        return None;
    }
    let mut text = |on: bool| -> Option<Option<String>> {
        if !on {
            return Some(None);
        }
        let n = r.u32_le()?;
        r.string(n).map(Some)
    };
    let author = text(flags & 1 != 0)?;
    let reason = text(flags & 2 != 0)?;
    r.done().then_some(Decision {
        a: p.0,
        b: p.1,
        decision,
        at_ms,
        author,
        reason,
    })
}

/// Decodes one entry of the column family; `Corruption` (naming the file and the entry) when it
/// is not one of the three kinds.
pub(crate) fn decode(rocks_path: &Path, k: &[u8], v: &[u8]) -> Result<Entry> {
    let bad = || {
        Error::corrupt(
            rocks_path,
            None,
            format!("decisions entry {k:?} (value {} bytes) does not decode", v.len()),
        )
    };
    let mut r = Reader { buf: k, at: 1 };
    let entry = match k.first() {
        Some(&DECISION) => decode_pair(&mut r).and_then(|p| decode_value(p, v)).map(Entry::Decision),
        Some(&HELD) => (|| {
            let e = (r.u64_be()?, r.u64_be()?);
            let p = decode_pair(&mut Reader { buf: v, at: 0 })?;
            (r.done() && e.0 < e.1).then_some(Entry::Held(e, p))
        })(),
        Some(&SAME_EDGE) => (|| {
            let e = (r.u64_be()?, r.u64_be()?);
            (r.done() && e.0 < e.1 && v.is_empty()).then_some(Entry::SameEdge(e))
        })(),
        _ => None,
    };
    entry.ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_round_trips_and_a_torn_one_is_refused() {
        let p: KeyPair = ("a\u{e9}".into(), "b/1".into());
        let d = Decision {
            a: p.0.clone(),
            b: p.1.clone(),
            decision: DecisionKind::Distinct,
            at_ms: 1_700_000_000_123,
            author: Some("ann".into()),
            reason: Some("different years".into()),
        };
        let path = Path::new("/x");
        let (k, v) = (decision_key(&p), encode_decision(&d));
        assert_eq!(decode(path, &k, &v).unwrap(), Entry::Decision(d.clone()));
        let bare = Decision {
            author: None,
            reason: None,
            decision: DecisionKind::Same,
            ..d
        };
        assert_eq!(decode(path, &k, &encode_decision(&bare)).unwrap(), Entry::Decision(bare));
        assert_eq!(
            decode(path, &held_key((9, 3)), &held_value(&p)).unwrap(),
            Entry::Held((3, 9), p.clone())
        );
        assert_eq!(decode(path, &same_edge_key((3, 9)), &[]).unwrap(), Entry::SameEdge((3, 9)));
        for cut in 0..v.len() {
            assert!(decode(path, &k, &v[..cut]).is_err(), "cut at {cut}");
        }
        assert!(decode(path, b"X", &[]).is_err());
        assert!(decode(path, &held_key((3, 9))[..16], &held_value(&p)).is_err());
    }
}
