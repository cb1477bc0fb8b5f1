//! Versioned RocksDB values: the doc record (CF `docs`) and the database config (meta `config`).
//! Keys and the column families are in [`super::keys`].
//!
//! bincode 1.x default encoding: integers little-endian fixed width, `Vec<u8>`/`String` as u64 LE
//! length ‖ bytes, `Option` as one byte 0/1 ‖ value, `f64` as IEEE-754 LE.
//!
//! `DocRecord` (after the version byte): key String, simhash u64, segment u32, offset u64, count u32,
//! group u64, inserted_at_ms u64, meta `Option<String>`, then (version 2 only) biblio: title
//! `Option<String>`, year `Option<i32>`, doi `Option<String>` ([`encode_doc`], [`decode_doc`]).
//! Version 1 records (no biblio) still decode, with an empty biblio; every record written is
//! version 2.
//!
//! `DbConfig` ([`encode_config`], [`decode_config`]): version 1 = tables u32, max_distance u32,
//! min_jaccard f64 (no containment index); version 2 = the same ‖ containment
//! `Option<ContainmentConfig { sample u32, max_postings u32 }>`; version 3 = the same ‖
//! `max_samples u32` inside the containment config (the sample cap,
//! `fingerprint::containment::Sampling`). A database without the containment index is written as
//! version 1, one with the index but no cap as version 2, so builds that predate them still open
//! them; versions 1 and 2 decode with no cap (`max_samples: None`).

use bincode::Options as _;
use serde::{Deserialize, Serialize};
use std::path::Path;

use crate::error::{Error, Result};
use crate::fingerprint::biblio::Biblio;
use crate::store::ShingleLoc;

/// Store format version (meta `format`).
pub const FORMAT_VERSION: u32 = 1;
const CONFIG_V1: u8 = 1;
// Doc records are version 2 (with `biblio`); version 1 records decode with an empty one.
const DOC_V1: u8 = 1;
const DOC_V2: u8 = 2;

/// Database-wide settings fixed at creation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbConfig {
    /// Number of permuted-block tables (m).
    pub tables: u32,
    /// Default maximum Hamming distance for queries and dedup.
    pub max_distance: u32,
    /// Default minimum Jaccard similarity for verified duplicates.
    pub min_jaccard: f64,
    /// The containment index, when the database has one (`None` in databases created before it
    /// existed).
    pub containment: Option<ContainmentConfig>,
}

/// Settings of the containment index (`fingerprint::containment`), fixed at creation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContainmentConfig {
    /// Sampling rate n: one shingle in n is a sample (1..=65536).
    pub sample: u32,
    /// A posting list longer than this is boilerplate: queries skip it.
    pub max_postings: u32,
    /// Cap on the expected samples of a stored document (`Sampling`; config version 3): a longer
    /// document is sampled at a coarser rate. `None` in databases created before the cap.
    pub max_samples: Option<u32>,
}

impl ContainmentConfig {
    /// How stored sets are sampled.
    pub fn sampling(&self) -> crate::fingerprint::containment::Sampling {
        crate::fingerprint::containment::Sampling {
            n: self.sample,
            max_samples: self.max_samples.unwrap_or(0),
        }
    }
}

/// The config record of version 3 (the containment index with a sample cap).
#[derive(Serialize, Deserialize)]
struct DbConfigV3 {
    tables: u32,
    max_distance: u32,
    min_jaccard: f64,
    containment: Option<(u32, u32, u32)>,
}

/// The config record of version 2 (the containment index, no sample cap).
#[derive(Serialize, Deserialize)]
struct DbConfigV2 {
    tables: u32,
    max_distance: u32,
    min_jaccard: f64,
    containment: Option<(u32, u32)>,
}

#[derive(Serialize, Deserialize)]
struct DbConfigV1 {
    tables: u32,
    max_distance: u32,
    min_jaccard: f64,
}

const CONFIG_V2: u8 = 2;
const CONFIG_V3: u8 = 3;

/// Encodes the config record: version 1 without a containment index, version 2 with one without a
/// sample cap, version 3 with a capped one (the oldest version that holds it).
pub fn encode_config(c: &DbConfig) -> Result<Vec<u8>> {
    let (tables, max_distance, min_jaccard) = (c.tables, c.max_distance, c.min_jaccard);
    match c.containment {
        None => encode_versioned(
            CONFIG_V1,
            &DbConfigV1 {
                tables,
                max_distance,
                min_jaccard,
            },
        ),
        Some(x) => match x.max_samples {
            None => {
                let containment = Some((x.sample, x.max_postings));
                encode_versioned(
                    CONFIG_V2,
                    &DbConfigV2 {
                        tables,
                        max_distance,
                        min_jaccard,
                        containment,
                    },
                )
            }
            Some(cap) => {
                let containment = Some((x.sample, x.max_postings, cap));
                encode_versioned(
                    CONFIG_V3,
                    &DbConfigV3 {
                        tables,
                        max_distance,
                        min_jaccard,
                        containment,
                    },
                )
            }
        },
    }
}

/// Decodes a config record of version 1 (containment off), 2 (no sample cap) or 3.
pub fn decode_config(bytes: &[u8], path: &Path) -> Result<DbConfig> {
    const WHAT: &str = "config record";
    match split_version(bytes, WHAT, path, None)? {
        (CONFIG_V3, rest) => {
            let v: DbConfigV3 = body(rest, WHAT, path, None)?;
            Ok(DbConfig {
                tables: v.tables,
                max_distance: v.max_distance,
                min_jaccard: v.min_jaccard,
                containment: v.containment.map(|(sample, max_postings, cap)| ContainmentConfig {
                    sample,
                    max_postings,
                    max_samples: Some(cap),
                }),
            })
        }
        (CONFIG_V2, rest) => {
            let v: DbConfigV2 = body(rest, WHAT, path, None)?;
            Ok(DbConfig {
                tables: v.tables,
                max_distance: v.max_distance,
                min_jaccard: v.min_jaccard,
                containment: v.containment.map(|(sample, max_postings)| ContainmentConfig {
                    sample,
                    max_postings,
                    max_samples: None,
                }),
            })
        }
        (CONFIG_V1, rest) => {
            let v1: DbConfigV1 = body(rest, WHAT, path, None)?;
            Ok(DbConfig {
                tables: v1.tables,
                max_distance: v1.max_distance,
                min_jaccard: v1.min_jaccard,
                containment: None,
            })
        }
        (v, _) => Err(unknown(WHAT, path, CONFIG_V3, v)),
    }
}

/// Encodes a doc record (version 2).
pub fn encode_doc(r: &DocRecord) -> Result<Vec<u8>> {
    encode_versioned(DOC_V2, r)
}

/// Decodes a doc record of version 2, or of version 1 (before metadata matches: an empty biblio).
pub fn decode_doc(bytes: &[u8], path: &Path, doc: Option<u64>) -> Result<DocRecord> {
    const WHAT: &str = "doc record";
    match split_version(bytes, WHAT, path, doc)? {
        (DOC_V2, rest) => body(rest, WHAT, path, doc),
        (DOC_V1, rest) => {
            // Strict: a version-2 body relabelled as version 1 has trailing bytes and is refused.
            let strict = bincode::DefaultOptions::new().with_fixint_encoding().reject_trailing_bytes();
            let r: DocRecordV1 = strict
                .deserialize(rest)
                .map_err(|e| Error::corrupt(path, doc, format!("{WHAT} does not decode: {e}")))?;
            Ok(DocRecord {
                key: r.key,
                simhash: r.simhash,
                segment: r.segment,
                offset: r.offset,
                count: r.count,
                group: r.group,
                inserted_at_ms: r.inserted_at_ms,
                meta: r.meta,
                biblio: Biblio::default(),
            })
        }
        (v, _) => Err(unknown(WHAT, path, DOC_V2, v)),
    }
}

/// The version-1 doc record (before metadata matches).
#[derive(Deserialize)]
struct DocRecordV1 {
    key: String,
    simhash: u64,
    segment: u32,
    offset: u64,
    count: u32,
    group: u64,
    inserted_at_ms: u64,
    meta: Option<String>,
}

/// A stored document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DocRecord {
    /// External key.
    pub key: String,
    /// SimHash.
    pub simhash: u64,
    /// Segment id of the shingle set.
    pub segment: u32,
    /// Offset of the shingle record.
    pub offset: u64,
    /// Number of shingles.
    pub count: u32,
    /// Duplicate group id (= doc id of the group's canonical, earliest member).
    pub group: u64,
    /// Insertion time, milliseconds since the Unix epoch.
    pub inserted_at_ms: u64,
    /// Caller metadata (JSON text), if any.
    pub meta: Option<String>,
    /// Title, year and DOI (indexed for exact metadata matches; record version 2).
    pub biblio: Biblio,
}

impl DocRecord {
    /// The shingle location.
    pub fn loc(&self) -> ShingleLoc {
        ShingleLoc {
            segment: self.segment,
            offset: self.offset,
            count: self.count,
        }
    }
}

/// version byte ‖ bincode.
fn encode_versioned<T: Serialize>(version: u8, v: &T) -> Result<Vec<u8>> {
    let mut out = vec![version];
    // Plain structs into a Vec do not fail; if a future field type did, the write is refused (an
    // empty record must never reach the disk).
    bincode::serialize_into(&mut out, v).map_err(|e| Error::InvalidInput {
        key: None,
        message: format!("cannot encode a record: {e}"),
    })?;
    Ok(out)
}

fn split_version<'a>(bytes: &'a [u8], what: &str, path: &Path, doc: Option<u64>) -> Result<(u8, &'a [u8])> {
    match bytes.split_first() {
        Some((&v, rest)) => Ok((v, rest)),
        None => Err(Error::corrupt(path, doc, format!("empty {what}"))),
    }
}

fn body<T: for<'de> Deserialize<'de>>(rest: &[u8], what: &str, path: &Path, doc: Option<u64>) -> Result<T> {
    bincode::deserialize(rest).map_err(|e| Error::corrupt(path, doc, format!("{what} does not decode: {e}")))
}

fn unknown(what: &'static str, path: &Path, expected: u8, found: u8) -> Error {
    Error::Version {
        what,
        path: path.to_path_buf(),
        expected: expected as u32,
        found: found as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_record_roundtrips_and_rejects_unknown_versions() {
        let r = DocRecord {
            key: "arxiv:1234".into(),
            simhash: 0xDEAD_BEEF,
            segment: 3,
            offset: 16,
            count: 10,
            group: 1,
            inserted_at_ms: 99,
            meta: Some("{\"year\":2020}".into()),
            biblio: Biblio {
                title: Some("On Near-Duplicates".into()),
                year: Some(2020),
                doi: Some("10.1145/1242572.1242592".into()),
            },
        };
        let bytes = encode_doc(&r).unwrap();
        assert_eq!(bytes[0], 2);
        let p = Path::new("x");
        assert_eq!(decode_doc(&bytes, p, None).unwrap(), r);
        let mut v3 = bytes.clone();
        v3[0] = 3;
        assert!(matches!(decode_doc(&v3, p, None), Err(Error::Version { found: 3, .. })));
        // A version-2 body relabelled as version 1 has trailing bytes: refused, not misread.
        let mut v1 = bytes.clone();
        v1[0] = 1;
        assert!(decode_doc(&v1, p, None).unwrap_err().is_corruption());
        assert!(decode_doc(&bytes[..5], p, Some(1)).unwrap_err().is_corruption());
        assert!(decode_doc(&[], p, Some(1)).unwrap_err().is_corruption());
    }

    /// Bytes of a version-1 record (no biblio), written out here rather than produced by the
    /// encoder: they must keep decoding, with an empty biblio.
    #[test]
    fn version_1_doc_records_still_decode() {
        let mut v1 = vec![1u8];
        v1.extend(3u64.to_le_bytes());
        v1.extend(b"k/1");
        v1.extend(0xABCDu64.to_le_bytes()); // simhash
        v1.extend(7u32.to_le_bytes()); // segment
        v1.extend(16u64.to_le_bytes()); // offset
        v1.extend(5u32.to_le_bytes()); // count
        v1.extend(2u64.to_le_bytes()); // group
        v1.extend(99u64.to_le_bytes()); // inserted_at_ms
        v1.push(0); // meta: None
        let r = decode_doc(&v1, Path::new("x"), Some(3)).unwrap();
        assert_eq!(r.key, "k/1");
        assert_eq!(
            (r.simhash, r.segment, r.offset, r.count, r.group, r.inserted_at_ms),
            (0xABCD, 7, 16, 5, 2, 99)
        );
        assert_eq!(r.meta, None);
        assert_eq!(r.biblio, Biblio::default());
        // Re-encoding writes version 2.
        assert_eq!(encode_doc(&r).unwrap()[0], 2);
        assert!(decode_doc(&v1[..v1.len() - 1], Path::new("x"), Some(3)).is_err());
    }

    #[test]
    fn config_records_of_both_versions_decode() {
        let p = Path::new("x");
        let mut c = DbConfig {
            tables: 5,
            max_distance: 12,
            min_jaccard: 0.9,
            containment: None,
        };
        let v1 = encode_config(&c).unwrap();
        // Without the index the record is byte for byte the one older builds wrote.
        assert_eq!(v1[0], 1);
        assert_eq!(v1.len(), 1 + 4 + 4 + 8);
        assert_eq!(decode_config(&v1, p).unwrap(), c);
        c.containment = Some(ContainmentConfig {
            sample: 8,
            max_postings: 2048,
            max_samples: None,
        });
        let v2 = encode_config(&c).unwrap();
        assert_eq!(v2[0], 2);
        assert_eq!(v2.len(), 1 + 4 + 4 + 8 + 1 + 4 + 4);
        assert_eq!(decode_config(&v2, p).unwrap(), c);
        assert!(decode_config(&v2[..v2.len() - 1], p).unwrap_err().is_corruption());
        c.containment = Some(ContainmentConfig {
            sample: 8,
            max_postings: 2048,
            max_samples: Some(64),
        });
        let v3 = encode_config(&c).unwrap();
        assert_eq!(v3[0], 3);
        assert_eq!(v3.len(), 1 + 4 + 4 + 8 + 1 + 4 + 4 + 4);
        assert_eq!(&v3[v3.len() - 4..], &64u32.to_le_bytes());
        assert_eq!(decode_config(&v3, p).unwrap(), c);
        assert!(decode_config(&v3[..v3.len() - 1], p).unwrap_err().is_corruption());
        let mut v4 = v3.clone();
        v4[0] = 4;
        assert!(matches!(decode_config(&v4, p), Err(Error::Version { found: 4, .. })));
    }

    /// A version-2 config record as builds before the sample cap wrote it (bytes fixed here, not
    /// produced by today's encoder): it decodes with no cap, so the database keeps its old keys.
    #[test]
    fn version_2_config_decodes_without_a_sample_cap() {
        let mut v2 = vec![2u8];
        v2.extend(5u32.to_le_bytes()); // tables
        v2.extend(12u32.to_le_bytes()); // max_distance
        v2.extend(0.9f64.to_le_bytes()); // min_jaccard
        v2.push(1); // Some(containment)
        v2.extend(8u32.to_le_bytes()); // sample
        v2.extend(2048u32.to_le_bytes()); // max_postings
        let c = decode_config(&v2, Path::new("x")).unwrap();
        let x = c.containment.unwrap();
        assert_eq!((x.sample, x.max_postings, x.max_samples), (8, 2048, None));
        assert_eq!(x.sampling().max_samples, 0);
        // Re-encoding writes the same bytes (no cap: still version 2).
        assert_eq!(encode_config(&c).unwrap(), v2);
    }
}
