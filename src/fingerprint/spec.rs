//! The fingerprint spec: every parameter that changes a document's shingle set or SimHash.
//!
//! A spec is written to the database's `meta` column family when the database is created and compared
//! field by field when it is opened; a mismatch is refused with [`Error::SpecMismatch`] naming the
//! first field that differs — except the normalizer when the database is opened: a database keeps
//! the normalizer it was created with. Add a normalizer version (and keep the old one) whenever
//! `normalize` would change its output.
//!
//! Stored form (key `spec` in CF `meta`): one version byte, then bincode 1.x (little-endian,
//! fixed-width integers) of [`FingerprintSpec`]:
//! * version `1` (every `simhash` database, so older builds still open them): `normalizer u32,
//!   unit u32 (0 = word, 1 = char), n u32, hash u32 (0 = xxh3-64, 1 = word-mix), seed u64, weighting u32
//!   (0 = count, 1 = binary)` = 28 bytes. Default: normalizer 2 (databases created before it
//!   hold 1), word, 3, xxh3-64, seed
//!   `0x667064625f763031`, binary.
//! * version `3` (every spec whose hash is not `xxh3-64`): version 2's layout (builds that know
//!   only `xxh3-64` refuse it by its version instead of reading it as corrupt).
//! * version `2` (every other method): the same 28 bytes, then the method: `variant u32` (0 =
//!   simhash, 1 = broder, 2 = charikar, 3 = broder-charikar, 4 = weighted-simhash, 5 =
//!   multi-lexicon) and its parameters as u32s in declaration order (see
//!   [`Method`]): broder `shingle, minhashes, supershingles, min_shared`;
//!   charikar `bits, blocks`; broder-charikar both; weighted-simhash `shingle u32, idf_hash u64`;
//!   multi-lexicon `lexicons, keep_permille, shingle`.
//!
//! A version-1 record decodes as `method = simhash`. A database keeps the normalizer and the hash
//! it was created with (`db::stored`); new specs get [`NORMALIZER_VERSION`] and [`DEFAULT_HASH`].

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::fingerprint::method::Method;
pub use crate::fingerprint::normalize::{NORMALIZER_VERSION, OLDEST_NORMALIZER_VERSION};
pub use crate::fingerprint::params::{HashKind, ShingleUnit, Weighting};

/// The default xxh3 seed (recorded in each database's spec).
pub const DEFAULT_SEED: u64 = 0x6670_6462_5f76_3031; // "fpdb_v01"
const SPEC_RECORD_V1: u8 = 1;
const SPEC_RECORD_V2: u8 = 2;
const SPEC_RECORD_V3: u8 = 3;

/// The shingle hash new specs get (databases keep the one they were created with): `word-mix`,
/// which hashes each word once instead of each shingle's bytes — the fingerprint of the long corpus
/// took half the CPU (docs/performance.md, "Fingerprinting vs `zstd -1`"), the same shingles.
pub const DEFAULT_HASH: HashKind = HashKind::WordMix;

/// The fingerprint spec. Two documents are comparable only when fingerprinted under equal specs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct FingerprintSpec {
    /// Normalizer version, 1 or 2 (`fingerprint::normalize`); new specs get [`NORMALIZER_VERSION`].
    pub normalizer: u32,
    /// Word or character shingles.
    pub unit: ShingleUnit,
    /// Shingle length in units (words or characters), 1..=32.
    pub n: u32,
    /// Word shingle hash; new specs get [`DEFAULT_HASH`].
    pub hash: HashKind,
    /// Seed of the shingle hash.
    pub seed: u64,
    /// SimHash weighting.
    pub weighting: Weighting,
    /// The near-duplicate method and its parameters (default: `simhash`).
    pub method: Method,
}

/// The version-1 record: every field but the method.
#[derive(Serialize, Deserialize)]
struct SpecV1 {
    normalizer: u32,
    unit: ShingleUnit,
    n: u32,
    hash: HashKind,
    seed: u64,
    weighting: Weighting,
}

impl Default for FingerprintSpec {
    /// Word trigrams, the [`DEFAULT_HASH`] with [`DEFAULT_SEED`], binary weights (each distinct shingle
    /// counts once: the SimHash then tracks the Jaccard similarity of the sets; measured in
    /// docs/quality.md, count weights lose recall on templated texts).
    fn default() -> Self {
        FingerprintSpec {
            normalizer: NORMALIZER_VERSION,
            unit: ShingleUnit::Word,
            n: 3,
            hash: DEFAULT_HASH,
            seed: DEFAULT_SEED,
            weighting: Weighting::Binary,
            method: Method::SimHash,
        }
    }
}

impl FingerprintSpec {
    /// Word n-grams with the default hash and weighting.
    pub fn words(n: u32) -> Self {
        FingerprintSpec { n, ..Self::default() }
    }

    /// Character n-grams with the default weighting (and `xxh3-64` in the hash field: character
    /// shingles have their own rolling hash, `shingle`).
    pub fn chars(n: u32) -> Self {
        FingerprintSpec {
            unit: ShingleUnit::Char,
            n,
            hash: HashKind::Xxh3_64,
            ..Self::default()
        }
    }

    /// Checks that the spec can be used by this build.
    pub fn validate(&self) -> Result<()> {
        if !(OLDEST_NORMALIZER_VERSION..=NORMALIZER_VERSION).contains(&self.normalizer) {
            return Err(Error::InvalidOption {
                name: "spec.normalizer",
                message: format!(
                    "this build implements normalizers {OLDEST_NORMALIZER_VERSION}..={NORMALIZER_VERSION}, not {}{}",
                    self.normalizer,
                    if self.normalizer > NORMALIZER_VERSION {
                        " (a newer fpdb made it: upgrade fpdb to open it)"
                    } else {
                        ""
                    }
                ),
            });
        }
        if !(1..=32).contains(&self.n) {
            return Err(Error::InvalidOption {
                name: "spec.n",
                message: format!("shingle length must be 1..=32, got {}", self.n),
            });
        }
        if self.hash == HashKind::WordMix && self.unit != ShingleUnit::Word {
            return Err(Error::InvalidOption {
                name: "spec.hash",
                message: "the word-mix hash combines word hashes: it needs word shingles (character shingles have their own rolling hash; use xxh3-64)".into(),
            });
        }
        // A weighted spec's IDF table must key the words this spec's normalizer makes (a table read
        // from a database does not say, and was checked when the database was made).
        if let Some(trained) = self.method.idf().and_then(|t| t.trained_with()) {
            if trained != self.normalizer {
                return Err(Error::InvalidOption {
                    name: "spec.method.idf",
                    message: format!(
                        "the IDF table was tokenized by normalizer {trained} but the spec uses normalizer {}: build it for the spec (IdfTable::from_jsonl_with / from_texts_with, Method::with_options_for with normalizer {})",
                        self.normalizer, self.normalizer
                    ),
                });
            }
        }
        self.method.validate()
    }

    /// This spec with another method.
    pub fn with_method(self, method: Method) -> Self {
        FingerprintSpec { method, ..self }
    }

    /// Compares a requested spec (`self`) with the stored one; names the first differing field.
    pub fn check_matches(&self, stored: &FingerprintSpec, path: &Path) -> Result<()> {
        let mut fields: Vec<(&'static str, String, String)> = vec![
            ("normalizer", self.normalizer.to_string(), stored.normalizer.to_string()),
            ("unit", format!("{:?}", self.unit), format!("{:?}", stored.unit)),
            ("n", self.n.to_string(), stored.n.to_string()),
            ("hash", format!("{:?}", self.hash), format!("{:?}", stored.hash)),
            ("seed", format!("{:#x}", self.seed), format!("{:#x}", stored.seed)),
            ("weighting", format!("{:?}", self.weighting), format!("{:?}", stored.weighting)),
        ];
        // The method's name first, then its parameters (same method, so the same names).
        let (mine, theirs) = (self.method.fields(), stored.method.fields());
        if mine[0] != theirs[0] {
            fields.push(("method", mine[0].1.clone(), theirs[0].1.clone()));
        } else {
            fields.extend(mine.into_iter().zip(theirs).map(|((name, a), (_, b))| (name, a, b)));
        }
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

    /// The stored record (see the module docs): version 1 for `simhash` with `xxh3-64`, 3 for
    /// another hash, 2 otherwise.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let err = |e: bincode::Error| Error::InvalidInput {
            key: None,
            message: format!("cannot encode the fingerprint spec: {e}"),
        };
        if self.method == Method::SimHash && self.hash == HashKind::Xxh3_64 {
            let mut out = vec![SPEC_RECORD_V1];
            let v1 = SpecV1 {
                normalizer: self.normalizer,
                unit: self.unit,
                n: self.n,
                hash: self.hash,
                seed: self.seed,
                weighting: self.weighting,
            };
            bincode::serialize_into(&mut out, &v1).map_err(err)?;
            return Ok(out);
        }
        let mut out = vec![if self.hash == HashKind::Xxh3_64 {
            SPEC_RECORD_V2
        } else {
            SPEC_RECORD_V3
        }];
        bincode::serialize_into(&mut out, self).map_err(err)?;
        Ok(out)
    }

    /// Decodes a stored record of version 1, 2 or 3; `path` names the database in errors.
    pub fn decode(bytes: &[u8], path: &Path) -> Result<Self> {
        let bad = |e: bincode::Error| Error::corrupt(path, None, format!("fingerprint spec record does not decode: {e}"));
        match bytes.split_first() {
            Some((&SPEC_RECORD_V1, rest)) => {
                let v1: SpecV1 = bincode::deserialize(rest).map_err(bad)?;
                Ok(FingerprintSpec {
                    normalizer: v1.normalizer,
                    unit: v1.unit,
                    n: v1.n,
                    hash: v1.hash,
                    seed: v1.seed,
                    weighting: v1.weighting,
                    method: Method::SimHash,
                })
            }
            Some((&SPEC_RECORD_V2 | &SPEC_RECORD_V3, rest)) => bincode::deserialize(rest).map_err(bad),
            Some((&v, _)) => Err(Error::Version {
                what: "fingerprint spec record",
                path: path.to_path_buf(),
                expected: SPEC_RECORD_V3 as u32,
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
            "{unit}:{} {} seed={:#x} weights={w} normalizer={}",
            self.n,
            self.hash.name(),
            self.seed,
            self.normalizer
        )?;
        if self.method != Method::SimHash {
            write!(f, " method={}", self.method)?;
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::method::{BroderParams, CharikarParams, LexiconParams};
    use crate::fingerprint::weighted::IdfTable;
    use std::sync::Arc;

    fn all_methods() -> Vec<Method> {
        vec![
            Method::SimHash,
            Method::Broder(BroderParams::default()),
            Method::Charikar(CharikarParams::default()),
            Method::BroderCharikar(BroderParams::default(), CharikarParams { bits: 128, blocks: 5 }),
            Method::weighted(Arc::new(IdfTable::from_texts(["a b c", "a d"]))),
            Method::MultiLexicon(LexiconParams::default()),
        ]
    }

    #[test]
    fn simhash_specs_keep_the_version_1_record_byte_for_byte() {
        // The bytes the databases made before normalizer 2 hold: normalizer 1, word, 3, xxh3, seed,
        // binary; a new default spec differs in the normalizer's byte alone.
        for normalizer in [1u8, 2] {
            let spec = FingerprintSpec {
                normalizer: normalizer as u32,
                hash: HashKind::Xxh3_64,
                ..FingerprintSpec::default()
            };
            let bytes = spec.encode().unwrap();
            assert_eq!(bytes.len(), 29);
            assert_eq!(bytes[0], 1);
            let mut want = vec![1u8, normalizer, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0];
            want.extend_from_slice(&DEFAULT_SEED.to_le_bytes());
            want.extend_from_slice(&[1, 0, 0, 0]);
            assert_eq!(bytes, want);
            assert_eq!(FingerprintSpec::decode(&bytes, Path::new("db")).unwrap(), spec);
            spec.validate().unwrap();
        }
        assert_eq!(FingerprintSpec::default().normalizer, NORMALIZER_VERSION);
    }

    #[test]
    fn every_method_roundtrips_through_a_version_2_record() {
        for m in all_methods() {
            let spec = FingerprintSpec {
                hash: HashKind::Xxh3_64,
                ..FingerprintSpec::default().with_method(m.clone())
            };
            let bytes = spec.encode().unwrap();
            assert_eq!(bytes[0], if m == Method::SimHash { 1 } else { 2 }, "{m}");
            let back = FingerprintSpec::decode(&bytes, Path::new("db")).unwrap();
            assert_eq!(back, spec, "{m}");
            assert!(back.method.idf().is_none(), "the table is stored apart, not in the spec record");
        }
        let broder = FingerprintSpec {
            hash: HashKind::Xxh3_64,
            ..FingerprintSpec::default().with_method(Method::Broder(BroderParams::default()))
        }
        .encode()
        .unwrap();
        // variant 1, then shingle 8, minhashes 84, supershingles 6, min_shared 2.
        assert_eq!(&broder[29..], &[1, 0, 0, 0, 8, 0, 0, 0, 84, 0, 0, 0, 6, 0, 0, 0, 2, 0, 0, 0]);
        assert!(matches!(
            FingerprintSpec::decode(&[4, 0], Path::new("db")),
            Err(Error::Version { expected: 3, found: 4, .. })
        ));
        assert!(FingerprintSpec::decode(&[3, 0], Path::new("db")).unwrap_err().is_corruption());
        assert!(FingerprintSpec::decode(&broder[..35], Path::new("db")).unwrap_err().is_corruption());
    }

    #[test]
    fn a_word_mix_spec_is_a_version_3_record_with_hash_1() {
        for m in all_methods() {
            let spec = FingerprintSpec {
                hash: HashKind::WordMix,
                ..FingerprintSpec::default().with_method(m.clone())
            };
            spec.validate().unwrap();
            let bytes = spec.encode().unwrap();
            assert_eq!(bytes[0], 3, "{m}");
            // normalizer, unit, n, then the hash's u32.
            assert_eq!(&bytes[13..17], &[1, 0, 0, 0], "{m}");
            assert_eq!(FingerprintSpec::decode(&bytes, Path::new("db")).unwrap(), spec, "{m}");
        }
        let xxh3 = FingerprintSpec {
            hash: HashKind::Xxh3_64,
            ..FingerprintSpec::default()
        };
        assert_eq!(xxh3.encode().unwrap()[0], 1);
        assert!(FingerprintSpec {
            hash: HashKind::WordMix,
            ..FingerprintSpec::chars(5)
        }
        .validate()
        .is_err());
        assert_eq!("word-mix".parse::<HashKind>().unwrap(), HashKind::WordMix);
        assert!("md5".parse::<HashKind>().is_err());
    }

    #[test]
    fn a_mismatch_names_the_method_or_the_parameter() {
        let stored = FingerprintSpec::default().with_method(Method::Broder(BroderParams::default()));
        let field = |want: &FingerprintSpec| match want.check_matches(&stored, Path::new("db")) {
            Err(Error::SpecMismatch { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(field(&FingerprintSpec::default()), "method");
        let other = FingerprintSpec::default().with_method(Method::Broder(BroderParams {
            supershingles: 7,
            minhashes: 84,
            ..BroderParams::default()
        }));
        assert_eq!(field(&other), "method.supershingles");
        stored.check_matches(&stored.clone(), Path::new("db")).unwrap();
    }
}
