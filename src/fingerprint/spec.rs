//! The fingerprint spec: every parameter that changes a document's shingle set or SimHash.
//!
//! A spec is written to the database's `meta` column family when the database is created and compared
//! field by field when it is opened; a mismatch is refused with [`Error::SpecMismatch`] naming the
//! first field that differs. Bump [`NORMALIZER_VERSION`] whenever `normalize` changes its output.
//!
//! Stored form (key `spec` in CF `meta`): one version byte (`1`), then bincode 1.x (little-endian,
//! fixed-width integers) of [`FingerprintSpec`]: `normalizer u32, unit u32 (0 = word, 1 = char),
//! n u32, hash u32 (0 = xxh3-64), seed u64, weighting u32 (0 = count, 1 = binary)` = 28 bytes.
//! Default: normalizer 1, word, 3, xxh3-64, seed `0x667064625f763031`, binary.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use crate::error::{Error, Result};

/// Version of the normalizer (see `normalize`). Part of every spec.
pub const NORMALIZER_VERSION: u32 = 1;
/// The default xxh3 seed (recorded in each database's spec).
pub const DEFAULT_SEED: u64 = 0x6670_6462_5f76_3031; // "fpdb_v01"
const SPEC_RECORD_VERSION: u8 = 1;

/// What a shingle is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub enum ShingleUnit {
    /// `n` consecutive normalized words (tokens), joined by one space.
    Word,
    /// `n` consecutive characters of the normalized text (tokens joined by one space).
    Char,
}

/// The hash function applied to shingles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub enum HashKind {
    /// xxh3 64-bit with the spec's seed.
    Xxh3_64,
}

/// How shingle occurrences weigh in the SimHash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub enum Weighting {
    /// Every occurrence counts once (weight = occurrence count).
    Count,
    /// Every distinct shingle counts once.
    Binary,
}

/// The fingerprint spec. Two documents are comparable only when fingerprinted under equal specs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct FingerprintSpec {
    /// Normalizer version.
    pub normalizer: u32,
    /// Word or character shingles.
    pub unit: ShingleUnit,
    /// Shingle length in units (words or characters), 1..=32.
    pub n: u32,
    /// Shingle hash.
    pub hash: HashKind,
    /// Seed of the shingle hash.
    pub seed: u64,
    /// SimHash weighting.
    pub weighting: Weighting,
}

impl Default for FingerprintSpec {
    /// Word trigrams (seed 000), xxh3-64 with [`DEFAULT_SEED`], binary weights (each distinct shingle
    /// counts once: the SimHash then tracks the Jaccard similarity of the sets; measured in
    /// docs/quality.md, count weights lose recall on templated texts).
    fn default() -> Self {
        FingerprintSpec {
            normalizer: NORMALIZER_VERSION,
            unit: ShingleUnit::Word,
            n: 3,
            hash: HashKind::Xxh3_64,
            seed: DEFAULT_SEED,
            weighting: Weighting::Binary,
        }
    }
}

impl FingerprintSpec {
    /// Word n-grams with the default hash and weighting.
    pub fn words(n: u32) -> Self {
        FingerprintSpec { n, ..Self::default() }
    }

    /// Character n-grams with the default hash and weighting.
    pub fn chars(n: u32) -> Self {
        FingerprintSpec {
            unit: ShingleUnit::Char,
            n,
            ..Self::default()
        }
    }

    /// Checks that the spec can be used by this build.
    pub fn validate(&self) -> Result<()> {
        if self.normalizer != NORMALIZER_VERSION {
            return Err(Error::InvalidOption {
                name: "spec.normalizer",
                message: format!("this build implements normalizer {NORMALIZER_VERSION}, not {}", self.normalizer),
            });
        }
        if !(1..=32).contains(&self.n) {
            return Err(Error::InvalidOption {
                name: "spec.n",
                message: format!("shingle length must be 1..=32, got {}", self.n),
            });
        }
        Ok(())
    }

    /// Compares a requested spec (`self`) with the stored one; names the first differing field.
    pub fn check_matches(&self, stored: &FingerprintSpec, path: &Path) -> Result<()> {
        let fields: [(&'static str, String, String); 6] = [
            ("normalizer", self.normalizer.to_string(), stored.normalizer.to_string()),
            ("unit", format!("{:?}", self.unit), format!("{:?}", stored.unit)),
            ("n", self.n.to_string(), stored.n.to_string()),
            ("hash", format!("{:?}", self.hash), format!("{:?}", stored.hash)),
            ("seed", format!("{:#x}", self.seed), format!("{:#x}", stored.seed)),
            ("weighting", format!("{:?}", self.weighting), format!("{:?}", stored.weighting)),
        ];
        for (field, expected, found) in fields {
            if expected != found {
                return Err(Error::SpecMismatch {
                    path: path.to_path_buf(),
                    field,
                    expected,
                    found,
                });
            }
        }
        Ok(())
    }

    pub(crate) fn encode(&self) -> Result<Vec<u8>> {
        let mut out = vec![SPEC_RECORD_VERSION];
        bincode::serialize_into(&mut out, self).map_err(|e| Error::InvalidInput {
            key: None,
            message: format!("cannot encode the fingerprint spec: {e}"),
        })?;
        Ok(out)
    }

    pub(crate) fn decode(bytes: &[u8], path: &Path) -> Result<Self> {
        match bytes.split_first() {
            Some((&SPEC_RECORD_VERSION, rest)) => {
                bincode::deserialize(rest).map_err(|e| Error::corrupt(path, None, format!("fingerprint spec record does not decode: {e}")))
            }
            Some((&v, _)) => Err(Error::Version {
                what: "fingerprint spec record",
                path: path.to_path_buf(),
                expected: SPEC_RECORD_VERSION as u32,
                found: v as u32,
            }),
            None => Err(Error::corrupt(path, None, "empty fingerprint spec record")),
        }
    }
}

impl fmt::Display for FingerprintSpec {
    /// The short form accepted by [`FromStr`] plus the fixed fields, e.g. `word:3 xxh3-64 seed=0x… count nz=1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = match self.unit {
            ShingleUnit::Word => "word",
            ShingleUnit::Char => "char",
        };
        let w = match self.weighting {
            Weighting::Count => "count",
            Weighting::Binary => "binary",
        };
        write!(
            f,
            "{unit}:{} xxh3-64 seed={:#x} weights={w} normalizer={}",
            self.n, self.seed, self.normalizer
        )
    }
}

impl FromStr for FingerprintSpec {
    type Err = Error;
    /// Parses `word:N` or `char:N` (the CLI's `--shingle`).
    fn from_str(s: &str) -> Result<Self> {
        let bad = || Error::InvalidOption {
            name: "shingle",
            message: format!("expected `word:N` or `char:N` with N in 1..=32, got {s:?}"),
        };
        let (unit, n) = s.split_once(':').ok_or_else(bad)?;
        let n: u32 = n.trim().parse().map_err(|_| bad())?;
        let spec = match unit.trim() {
            "word" | "words" => Self::words(n),
            "char" | "chars" => Self::chars(n),
            _ => return Err(bad()),
        };
        spec.validate().map_err(|_| bad())?;
        Ok(spec)
    }
}
