//! The frozen IDF table of `weighted-simhash` (Fan & Huang §3.1; the fingerprint itself is in
//! [`super::weighted`]).
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
//! **Stored form** (meta key `idf`): `b"IDF1"`, `N` u64 LE, unseen weight u32 LE, entry count u64
//! LE, then per word (sorted by hash) hash u64 LE ‖ weight u32 LE. [`IdfTable::hash`] is xxh3-64
//! of these bytes.

use std::path::Path;

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

use crate::error::{Error, Result};
use crate::intmap::IntMap;

use super::normalize::{normalize_into_version, NORMALIZER_VERSION};

/// Seed of the word keys of an IDF table.
pub const WORD_SEED: u64 = 0x6964_665f_776f_7264; // "idf_word"
const MAGIC: &[u8; 4] = b"IDF1";
const HEADER: usize = 4 + 8 + 4 + 8;
const ENTRY: usize = 12;

/// A frozen word → IDF weight table (see the module docs).
#[derive(Clone, Debug)]
pub struct IdfTable {
    weights: IntMap<u64, u32>,
    docs: u64,
    unseen: u32,
    hash: u64,
    /// The normalizer its training texts were tokenized with; `None` for a decoded table (the
    /// stored form does not say: the database's spec does).
    trained_with: Option<u32>,
}

impl PartialEq for IdfTable {
    /// Equal weights, document count and unseen weight (so equal stored forms); how a table was
    /// made is not compared.
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.docs == other.docs && self.unseen == other.unseen && self.weights == other.weights
    }
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
    /// Builds the table from training texts, tokenized by the current default normalizer
    /// ([`NORMALIZER_VERSION`]): [`IdfTable::from_texts_with`] for a spec with another one.
    pub fn from_texts<'a>(texts: impl IntoIterator<Item = &'a str>) -> IdfTable {
        Self::from_texts_with(NORMALIZER_VERSION, texts)
    }

    /// Builds the table from training texts tokenized by normalizer `normalizer` — the spec's, so
    /// that the table's words are the words its fingerprints look up (a version-1 database keys
    /// whole Chinese or Thai clauses, a version-2 one single characters).
    pub fn from_texts_with<'a>(normalizer: u32, texts: impl IntoIterator<Item = &'a str>) -> IdfTable {
        let mut df: IntMap<u64, u64> = IntMap::default();
        let mut docs = 0u64;
        let mut norm = String::new();
        let mut seen: Vec<u64> = Vec::new();
        for t in texts {
            normalize_into_version(normalizer, t, &mut norm);
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
        let mut t = Self::assemble(weights, docs, weight_of(docs, 0));
        t.trained_with = Some(normalizer);
        t
    }

    /// The normalizer the training texts were tokenized with (`None` for a table decoded from a
    /// database, whose spec names it).
    pub fn trained_with(&self) -> Option<u32> {
        self.trained_with
    }

    /// Builds the table from the `"text"` fields of a JSONL training corpus (what `fpdb init
    /// --idf-from` and the Python `Db.create(idf_from=PATH)` read). Lines that are blank, not UTF-8,
    /// not a JSON object or without a string `"text"` are skipped and counted: returns the table and
    /// the number of skipped lines. A corpus without a single text is an error (an empty table would
    /// weigh every word alike). Tokenized by the current default normalizer: [`IdfTable::from_jsonl_with`]
    /// for a spec with another one.
    pub fn from_jsonl(path: &Path) -> Result<(IdfTable, usize)> {
        Self::from_jsonl_with(path, NORMALIZER_VERSION)
    }

    /// [`IdfTable::from_jsonl`] with the texts tokenized by normalizer `normalizer` (the spec's).
    pub fn from_jsonl_with(path: &Path, normalizer: u32) -> Result<(IdfTable, usize)> {
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
        Ok((IdfTable::from_texts_with(normalizer, texts.iter().map(String::as_str)), skipped))
    }

    fn assemble(weights: IntMap<u64, u32>, docs: u64, unseen: u32) -> IdfTable {
        let mut t = IdfTable {
            weights,
            docs,
            unseen,
            hash: 0,
            trained_with: None,
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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A table is keyed by the words of the normalizer it is built with. Under version 1
    /// a Chinese or Thai clause is one word, under version 2 each character is; the table of a
    /// version-1 database must hold the clauses (it held the characters when every table was
    /// tokenized by the default normalizer).
    #[test]
    fn the_table_keys_the_words_of_its_normalizer() {
        let corpus = ["近似重复文档检测。", "重复文档", "ภาษาไทย ข้อความ", "ข้อความ"];
        let v1 = IdfTable::from_texts_with(1, corpus);
        let v2 = IdfTable::from_texts_with(2, corpus);
        assert_eq!((v1.trained_with(), v2.trained_with()), (Some(1), Some(2)));
        // Version 1: the clauses are words with a document frequency; single characters are unseen.
        assert!(v1.weight("近似重复文档检测".as_bytes()) < v1.unseen());
        assert!(v1.weight("重复文档".as_bytes()) < v1.unseen());
        assert_eq!(v1.weight("重".as_bytes()), v1.unseen());
        // Version 2: the characters are the words; "重" is in two of the four documents.
        assert_eq!(v2.weight("重".as_bytes()), weight_of(4, 2));
        assert_eq!(v2.weight("近似重复文档检测".as_bytes()), v2.unseen());
        // The Thai clause: version 1 keys it whole (its tone mark splits it: "ข" + "อความ"),
        // version 2 character by character with the mark attached.
        assert_eq!(v1.weight("ภาษาไทย".as_bytes()), weight_of(4, 1));
        assert_eq!(v2.weight("ภ".as_bytes()), weight_of(4, 1));
        assert_ne!(v1.hash(), v2.hash());
        // The default is the current normalizer.
        assert_eq!(IdfTable::from_texts(corpus), v2);
        assert_eq!(IdfTable::from_texts(corpus).trained_with(), Some(NORMALIZER_VERSION));
    }
}
