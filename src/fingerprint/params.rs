//! The parameter types of a fingerprint spec, apart from the algorithms that use them: what a
//! shingle is ([`ShingleUnit`], [`HashKind`]), how shingles weigh ([`Weighting`]) and each
//! method's parameters ([`BroderParams`], [`CharikarParams`], [`WeightedParams`],
//! [`LexiconParams`]). `spec` and `method` assemble them; `broder`, `charikar`, `weighted`,
//! `lexicon` and `shingle` read them; this module imports none of those, so there is no import
//! circle (it reaches only `idf`, for the loaded table a weighted spec carries).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::fingerprint::idf::IdfTable;

/// What a shingle is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub enum ShingleUnit {
    /// `n` consecutive normalized words (tokens), joined by one space.
    Word,
    /// `n` consecutive characters of the normalized text (tokens joined by one space).
    Char,
}

/// The hash function applied to word shingles (character shingles have their rolling hash
/// whatever this says; `shingle`). Stored in the spec as a u32: 0 = `xxh3-64`, 1 = `word-mix`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub enum HashKind {
    /// xxh3 64-bit with the spec's seed over the shingle's bytes (its words joined by one space).
    Xxh3_64,
    /// Each word hashed once, a shingle's hash combined from its words' hashes
    /// ([`crate::fingerprint::wordmix`]): the same shingles, other hash values.
    WordMix,
}

impl HashKind {
    /// The name the CLI and the spec's display use.
    pub fn name(self) -> &'static str {
        match self {
            HashKind::Xxh3_64 => "xxh3-64",
            HashKind::WordMix => "word-mix",
        }
    }
}

impl FromStr for HashKind {
    type Err = Error;
    /// `xxh3-64` or `word-mix` (the CLI's `--hash`).
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "xxh3-64" | "xxh3" => Ok(HashKind::Xxh3_64),
            "word-mix" => Ok(HashKind::WordMix),
            _ => Err(Error::InvalidOption {
                name: "hash",
                message: format!("expected `word-mix` (each word hashed once) or `xxh3-64` (each shingle's bytes), got {s:?}"),
            }),
        }
    }
}

/// How shingle occurrences weigh in the SimHash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub enum Weighting {
    /// Every occurrence counts once (weight = occurrence count).
    Count,
    /// Every distinct shingle counts once.
    Binary,
}

impl FromStr for Weighting {
    type Err = Error;
    /// `binary` or `count` (the CLI's `--weights`).
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "binary" => Ok(Weighting::Binary),
            "count" => Ok(Weighting::Count),
            _ => Err(Error::InvalidOption {
                name: "weights",
                message: format!("expected `binary` (each distinct shingle once) or `count` (occurrences), got {s:?}"),
            }),
        }
    }
}

/// Henzinger's Algorithm B (Broder et al.'s supershingles as Henzinger runs them).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct BroderParams {
    /// Tokens per shingle (paper: 8), 1..=32; no wrap-around.
    pub shingle: u32,
    /// Min-hash functions (paper: 84), a multiple of `supershingles`, at most 1024.
    pub minhashes: u32,
    /// Supershingles (paper: 6), 1..=64; each hashes `minhashes / supershingles` consecutive minvalues.
    pub supershingles: u32,
    /// Default rule: at least this many equal supershingles (paper: 2), 1..=`supershingles`.
    /// Not part of the sketch; a query may ask for another value.
    pub min_shared: u32,
}

impl Default for BroderParams {
    fn default() -> Self {
        BroderParams {
            shingle: 8,
            minhashes: 84,
            supershingles: 6,
            min_shared: 2,
        }
    }
}

/// Henzinger's Algorithm C (Charikar's random projection).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct CharikarParams {
    /// Bits of the projection (paper: 384), a multiple of 64, 64..=1024.
    pub bits: u32,
    /// Blocks of the exact candidate index (default 13 = k + 1 for the paper's k = 12: two
    /// projections within 12 bits agree exactly on at least one of 13 blocks). 1..=64. An index
    /// setting, not part of the sketch.
    pub blocks: u32,
}

impl Default for CharikarParams {
    fn default() -> Self {
        CharikarParams { bits: 384, blocks: 13 }
    }
}

/// Fan & Huang §3.1: SimHash over word shingles weighted by the sum of their words' IDF.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct WeightedParams {
    /// Words per feature shingle (paper's best: 2), 1..=32.
    pub shingle: u32,
    /// xxh3-64 of the stored IDF table's bytes ([`IdfTable::hash`]).
    pub idf_hash: u64,
    /// The IDF table itself (loaded from the database; not serialized into the spec record).
    #[serde(skip)]
    pub idf: IdfHandle,
}

/// Fan & Huang §3.2: one SimHash per random sub-lexicon.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct LexiconParams {
    /// Number of lexicons L (paper's best: 5), 1..=16.
    pub lexicons: u32,
    /// Share of the vocabulary each lexicon keeps, in thousandths (1..=1000). A word is kept by
    /// lexicon j iff `xxh3(word, seed_j) · 1000 / 2^64 < keep_permille`.
    pub keep_permille: u32,
    /// Words per feature shingle over the kept words (paper: 2), 1..=32.
    pub shingle: u32,
}

impl Default for LexiconParams {
    /// L = 5 (Fan & Huang's best), keep 900‰ (docs/methods.md: of 300/500/700/900‰ at L = 5, the
    /// best mean F1 of the rule alone over our three corpora), bigrams.
    fn default() -> Self {
        LexiconParams {
            lexicons: 5,
            keep_permille: 900,
            shingle: 2,
        }
    }
}

/// The loaded IDF table of a weighted-simhash spec. Compares equal and hashes to nothing: the
/// table's identity is [`WeightedParams::idf_hash`].
#[derive(Clone, Default)]
pub struct IdfHandle(pub Option<Arc<IdfTable>>);

impl PartialEq for IdfHandle {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for IdfHandle {}
impl std::hash::Hash for IdfHandle {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}
impl fmt::Debug for IdfHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(t) => write!(f, "IdfTable({} words, {} docs)", t.len(), t.docs()),
            None => f.write_str("IdfTable(not loaded)"),
        }
    }
}
