//! Paper 002 §3.1: SimHash over word shingles, each weighted by the sum of the IDF of its words,
//! with a **frozen** document-frequency table so fingerprints never drift as documents arrive.
//!
//! **The table** ([`IdfTable`]) is built once from a training corpus (`fpdb init --method
//! weighted-simhash --idf-from CORPUS.jsonl`, or [`IdfTable::from_texts`]) and stored in the
//! database; the spec holds its hash. Every word of a training document (normalized as fpdb
//! normalizes, distinct words per document) adds 1 to its document frequency `df`; with `N`
//! training documents a word weighs
//!
//! ```text
//! weight(word) = round(1000 · (ln((N + 1) / (df + 1)) + 1))      (smoothed IDF, ≥ 1000)
//! ```
//!
//! computed once in `f64` at build time and stored as an integer, so fingerprinting itself uses
//! integers only and cannot differ between platforms' `ln`. **An unseen word** (not in the
//! training corpus) weighs as a word of `df = 0`: `round(1000 · (ln(N + 1) + 1))`, the largest
//! weight — a word nobody used before is the rarest evidence there is. Words are keyed by
//! `xxh3_64_with_seed(word, WORD_SEED)` (a fixed seed, so a table does not depend on the spec).
//!
//! **The fingerprint**: the features are the word shingles of `shingle` (2) words (the same windows
//! as fpdb's word shingles, hashed with the spec's seed); a shingle weighs the sum of its words'
//! weights; bit `b` is 1 iff the weights of the features with bit `b` set outweigh the others
//! (tie → 0). Under `Weighting::Binary` each distinct shingle counts once, under `Count` every
//! occurrence.
//!
//! **Stored form** (meta key `idf`): `b"IDF1"`, `N` u64 LE, unseen weight u32 LE, entry count u64
//! LE, then per word (sorted by hash) hash u64 LE ‖ weight u32 LE. [`IdfTable::hash`] is xxh3-64
//! of these bytes.

use std::path::Path;

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

use crate::error::{Error, Result};
use crate::intmap::IntMap;

use super::method::WeightedParams;
use super::spec::Weighting;

/// Seed of the word keys of an IDF table.
pub const WORD_SEED: u64 = 0x6964_665f_776f_7264; // "idf_word"
const MAGIC: &[u8; 4] = b"IDF1";
const HEADER: usize = 4 + 8 + 4 + 8;
const ENTRY: usize = 12;

/// A frozen word → IDF weight table (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct IdfTable {
    weights: IntMap<u64, u32>,
    docs: u64,
    unseen: u32,
    hash: u64,
}

fn weight_of(docs: u64, df: u64) -> u32 {
    let w = 1000.0 * (((docs + 1) as f64 / (df + 1) as f64).ln() + 1.0);
    w.round().clamp(1.0, f64::from(u32::MAX)) as u32
}

/// The key of a word in an IDF table.
#[inline]
pub fn word_key(word: &[u8]) -> u64 {
    xxh3_64_with_seed(word, WORD_SEED)
}

impl IdfTable {
    /// Builds the table from training texts (normalized here).
    pub fn from_texts<'a>(texts: impl IntoIterator<Item = &'a str>) -> IdfTable {
        let mut df: IntMap<u64, u64> = IntMap::default();
        let mut docs = 0u64;
        let mut norm = String::new();
        let mut seen: Vec<u64> = Vec::new();
        for t in texts {
            super::normalize::normalize_into(t, &mut norm);
            docs += 1;
            seen.clear();
            seen.extend(norm.split(' ').filter(|w| !w.is_empty()).map(|w| word_key(w.as_bytes())));
            seen.sort_unstable();
            seen.dedup();
            for &k in &seen {
                *df.entry(k).or_insert(0) += 1;
            }
        }
        let weights = df.into_iter().map(|(k, d)| (k, weight_of(docs, d))).collect();
        Self::assemble(weights, docs, weight_of(docs, 0))
    }

    /// Builds the table from the `"text"` fields of a JSONL training corpus (what `fpdb init
    /// --idf-from` and the Python `Db.create(idf_from=PATH)` read). Lines that are blank, not UTF-8,
    /// not a JSON object or without a string `"text"` are skipped and counted: returns the table and
    /// the number of skipped lines. A corpus without a single text is an error (an empty table would
    /// weigh every word alike).
    pub fn from_jsonl(path: &Path) -> Result<(IdfTable, usize)> {
        let io = |e| Error::Io {
            op: "read IDF corpus",
            path: path.to_path_buf(),
            source: e,
        };
        let reader = std::io::BufReader::new(std::fs::File::open(path).map_err(io)?);
        let mut texts = Vec::new();
        let mut skipped = 0usize;
        for line in std::io::BufRead::split(reader, b'\n') {
            let line = line.map_err(io)?;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let text = serde_json::from_slice::<serde_json::Value>(&line)
                .ok()
                .and_then(|v| v.get("text").and_then(|t| t.as_str().map(str::to_owned)));
            match text {
                Some(t) => texts.push(t),
                None => skipped += 1,
            }
        }
        if texts.is_empty() {
            return Err(Error::InvalidOption {
                name: "idf_from",
                message: format!(
                    "{}: no line with a \"text\" string ({skipped} lines skipped); the IDF corpus is JSONL, one {{\"text\": ...}} object per line",
                    path.display()
                ),
            });
        }
        Ok((IdfTable::from_texts(texts.iter().map(String::as_str)), skipped))
    }

    fn assemble(weights: IntMap<u64, u32>, docs: u64, unseen: u32) -> IdfTable {
        let mut t = IdfTable {
            weights,
            docs,
            unseen,
            hash: 0,
        };
        t.hash = xxh3_64(&t.encode());
        t
    }

    /// Number of training documents `N`.
    pub fn docs(&self) -> u64 {
        self.docs
    }

    /// Number of words with a weight.
    pub fn len(&self) -> usize {
        self.weights.len()
    }

    /// True when no word has a weight.
    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    /// The weight of an unseen word.
    pub fn unseen(&self) -> u32 {
        self.unseen
    }

    /// The weight of `word` (normalized form).
    #[inline]
    pub fn weight(&self, word: &[u8]) -> u32 {
        self.weights.get(&word_key(word)).copied().unwrap_or(self.unseen)
    }

    /// xxh3-64 of the stored form (the spec's `idf_hash`).
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The stored form (see the module docs).
    pub fn encode(&self) -> Vec<u8> {
        let mut entries: Vec<(u64, u32)> = self.weights.iter().map(|(&k, &w)| (k, w)).collect();
        entries.sort_unstable();
        let mut out = Vec::with_capacity(HEADER + ENTRY * entries.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.docs.to_le_bytes());
        out.extend_from_slice(&self.unseen.to_le_bytes());
        out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        for (k, w) in entries {
            out.extend_from_slice(&k.to_le_bytes());
            out.extend_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// Decodes the stored form; `path` names the database in errors.
    pub fn decode(bytes: &[u8], path: &Path) -> Result<IdfTable> {
        let bad = |m: String| Error::corrupt(path, None, format!("IDF table: {m}"));
        if bytes.len() < HEADER || &bytes[..4] != MAGIC {
            return Err(bad(format!("{} bytes without the IDF1 header", bytes.len())));
        }
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap_or([0; 8]));
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap_or([0; 4]));
        let (docs, unseen, count) = (u64_at(4), u32_at(12), u64_at(16));
        let body = bytes.len() - HEADER;
        if count.checked_mul(ENTRY as u64) != Some(body as u64) {
            return Err(bad(format!("{count} entries announced, {body} bytes of entries")));
        }
        let mut weights = IntMap::default();
        weights.reserve(count as usize);
        let mut prev = None;
        for i in 0..count as usize {
            let at = HEADER + ENTRY * i;
            let k = u64_at(at);
            if prev.is_some_and(|p| p >= k) {
                return Err(bad(format!("entry {i} is out of order")));
            }
            prev = Some(k);
            weights.insert(k, u32_at(at + 8));
        }
        let t = Self::assemble(weights, docs, unseen);
        if t.hash != xxh3_64(bytes) {
            return Err(bad("the table does not re-encode to its own bytes".into()));
        }
        Ok(t)
    }
}

/// The weighted SimHash of `normalized` under `table` (see the module docs). `hashes` and
/// `weights` are scratch space.
pub fn simhash(
    p: &WeightedParams,
    table: &IdfTable,
    seed: u64,
    weighting: Weighting,
    normalized: &str,
    hashes: &mut Vec<u64>,
    weights: &mut Vec<u64>,
) -> u64 {
    super::word_shingles(normalized, p.shingle, seed, hashes);
    if hashes.is_empty() {
        return 0;
    }
    // Token weights, then the sliding sum over each shingle's window (one window of all the tokens
    // when there are fewer than `shingle`, as the shingles are made).
    weights.clear();
    weights.extend(normalized.split(' ').map(|w| u64::from(table.weight(w.as_bytes()))));
    let n = (p.shingle as usize).min(weights.len());
    let mut win: u64 = weights[..n].iter().sum();
    let mut feats: Vec<(u64, u64)> = Vec::with_capacity(hashes.len());
    feats.push((hashes[0], win));
    for (i, &h) in hashes.iter().enumerate().skip(1) {
        win = win + weights[i + n - 1] - weights[i - 1];
        feats.push((h, win));
    }
    if weighting == Weighting::Binary {
        feats.sort_unstable();
        feats.dedup_by_key(|f| f.0);
    }
    let mut ones = [0u64; 64];
    let mut total = 0u64;
    for &(h, w) in &feats {
        total += w;
        for (b, o) in ones.iter_mut().enumerate() {
            *o += w * (h >> b & 1);
        }
    }
    ones.iter()
        .enumerate()
        .fold(0u64, |fp, (b, &o)| if 2 * o > total { fp | 1 << b } else { fp })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::method::IdfHandle;

    fn table() -> IdfTable {
        IdfTable::from_texts(["the cat sat", "the dog sat", "the bird flew", "The cat ran"])
    }

    #[test]
    fn weights_follow_document_frequency_and_unseen_words_weigh_most() {
        let t = table();
        assert_eq!(t.docs(), 4);
        assert_eq!(t.weight(b"the"), 1000 + ((5.0f64 / 5.0).ln() * 1000.0).round() as u32);
        assert_eq!(t.weight(b"cat"), (1000.0 * ((5.0f64 / 3.0).ln() + 1.0)).round() as u32);
        assert_eq!(t.weight(b"zebra"), t.unseen());
        assert_eq!(t.unseen(), (1000.0 * (5.0f64.ln() + 1.0)).round() as u32);
        assert!(t.weight(b"the") < t.weight(b"cat") && t.weight(b"cat") < t.weight(b"flew") && t.weight(b"flew") < t.unseen());
    }

    #[test]
    fn the_stored_form_roundtrips_and_damage_is_refused() {
        let t = table();
        let bytes = t.encode();
        let p = Path::new("db");
        assert_eq!(IdfTable::decode(&bytes, p).unwrap(), t);
        assert_eq!(IdfTable::decode(&bytes, p).unwrap().hash(), xxh3_64(&bytes));
        assert!(IdfTable::decode(&bytes[..bytes.len() - 1], p).unwrap_err().is_corruption());
        let mut swapped = bytes.clone();
        let e = HEADER;
        let tmp: Vec<u8> = swapped[e..e + ENTRY].to_vec();
        swapped.copy_within(e + ENTRY..e + 2 * ENTRY, e);
        swapped[e + ENTRY..e + 2 * ENTRY].copy_from_slice(&tmp);
        assert!(IdfTable::decode(&swapped, p).unwrap_err().is_corruption());
    }

    fn params(t: &IdfTable, shingle: u32) -> WeightedParams {
        WeightedParams {
            shingle,
            idf_hash: t.hash(),
            idf: IdfHandle(None),
        }
    }

    /// The definition: per bit, Σ ± (sum of the words' weights) over the distinct shingles.
    fn reference(t: &IdfTable, text: &str, n: usize, seed: u64) -> u64 {
        let toks: Vec<&str> = text.split(' ').collect();
        let n = n.min(toks.len());
        let mut feats: Vec<(u64, i64)> = (0..=toks.len() - n)
            .map(|i| {
                let s = toks[i..i + n].join(" ");
                let w: u32 = toks[i..i + n].iter().map(|w| t.weight(w.as_bytes())).sum();
                (xxh3_64_with_seed(s.as_bytes(), seed), i64::from(w))
            })
            .collect();
        feats.sort_unstable();
        feats.dedup_by_key(|f| f.0);
        (0..64).fold(0u64, |fp, b| {
            let s: i64 = feats.iter().map(|&(h, w)| if h >> b & 1 == 1 { w } else { -w }).sum();
            if s > 0 {
                fp | 1 << b
            } else {
                fp
            }
        })
    }

    #[test]
    fn equals_the_definition() {
        let t = table();
        for (text, n) in [
            ("the cat sat on the mat with the dog", 2),
            ("the cat sat on the mat", 3),
            ("cat", 2),
            ("the the the cat", 1),
        ] {
            let got = simhash(&params(&t, n), &t, 5, Weighting::Binary, text, &mut Vec::new(), &mut Vec::new());
            assert_eq!(got, reference(&t, text, n as usize, 5), "{text} n={n}");
        }
        assert_eq!(
            simhash(&params(&t, 2), &t, 5, Weighting::Binary, "", &mut Vec::new(), &mut Vec::new()),
            0
        );
    }
}
