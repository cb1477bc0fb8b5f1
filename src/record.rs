//! The RocksDB side of storage: column families, key layouts and versioned records.
//!
//! | CF      | key                               | value                                            |
//! |---------|-----------------------------------|--------------------------------------------------|
//! | `meta`  | `format`                          | u32 LE store format version (1)                  |
//! | `meta`  | `spec`                            | fingerprint spec record (see `spec`)             |
//! | `meta`  | `config`                          | version byte 1 ‖ bincode [`DbConfig`]             |
//! | `meta`  | `next_doc`                        | u64 LE: the next doc id to allocate              |
//! | `meta`  | `seg` ‖ id u32 BE                 | u64 LE: committed length of that segment file    |
//! | `docs`  | doc id u64 BE                     | version byte 2 ‖ bincode [`DocRecord`] (1: no biblio) |
//! | `keys`  | external key (UTF-8 bytes)        | doc id u64 BE                                    |
//! | `edges` | doc id u64 BE ‖ doc id u64 BE     | empty (a verified near-duplicate link, both ways) |
//! | `t{i}`  | perm_i(simhash) u64 BE ‖ id u64 BE| empty (see `tables`)                             |
//! | `meta_idx` | kind u8 ‖ value ‖ 0x00 ‖ id u64 BE | empty (metadata matches, see [`crate::metadata`]) |
//!
//! bincode 1.x default encoding: integers little-endian fixed width, `Vec<u8>`/`String` as u64 LE
//! length ‖ bytes, `Option` as one byte 0/1 ‖ value, `f64` as IEEE-754 LE.
//!
//! `DocRecord` (after the version byte): key String, simhash u64, segment u32, offset u64, count u32,
//! group u64, inserted_at_ms u64, meta Option<String>, then (version 2 only) biblio: title
//! Option<String>, year Option<i32>, doi Option<String>. Version 1 records (written before metadata
//! matches existed) still decode, with an empty biblio; every record written now is version 2.

use bincode::Options as _;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::Path;

use crate::error::{Error, Result};
use crate::metadata::Biblio;
use crate::segment::ShingleLoc;

/// Store format version (meta `format`).
pub const FORMAT_VERSION: u32 = 1;

/// A record stored as version byte ‖ bincode. Each type has its own current version and may decode
/// older ones.
pub trait Versioned: Serialize + DeserializeOwned {
    /// The version byte written by [`encode`].
    const VERSION: u8;
    /// Decodes the body of an older `version`; `None` when that version is unknown.
    fn decode_older(version: u8, body: &[u8]) -> Option<bincode::Result<Self>> {
        let _ = (version, body);
        None
    }
}

impl Versioned for DbConfig {
    const VERSION: u8 = 1;
}

// metadata: doc records are version 2 (with `biblio`); version 1 records decode with an empty one.
impl Versioned for DocRecord {
    const VERSION: u8 = 2;
    fn decode_older(version: u8, body: &[u8]) -> Option<bincode::Result<Self>> {
        (version == 1).then(|| {
            // Strict: a version-2 body relabelled as version 1 has trailing bytes and is refused.
            let strict = bincode::DefaultOptions::new().with_fixint_encoding().reject_trailing_bytes();
            strict.deserialize::<DocRecordV1>(body).map(|r| DocRecord {
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
        })
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

/// Column family names (tables are `t0`, `t1`, …).
pub const CF_META: &str = "meta";
/// Doc records.
pub const CF_DOCS: &str = "docs";
/// External key → doc id.
pub const CF_KEYS: &str = "keys";
/// Near-duplicate links.
pub const CF_EDGES: &str = "edges";

/// Name of table `i`'s column family.
pub fn table_cf(i: usize) -> String {
    format!("t{i}")
}

/// Database-wide settings fixed at creation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbConfig {
    /// Number of permuted-block tables (m).
    pub tables: u32,
    /// Default maximum Hamming distance for queries and dedup.
    pub max_distance: u32,
    /// Default minimum Jaccard similarity for verified duplicates.
    pub min_jaccard: f64,
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

/// Encodes a versioned record: version byte ‖ bincode.
pub fn encode<T: Versioned>(v: &T) -> Vec<u8> {
    let mut out = vec![T::VERSION];
    // Serializing plain structs into a Vec cannot fail.
    out.extend(bincode::serialize(v).unwrap_or_default());
    out
}

/// Decodes a versioned record (the current version, or an older one the type still reads).
pub fn decode<T: Versioned>(bytes: &[u8], what: &'static str, path: &Path, doc: Option<u64>) -> Result<T> {
    let bad = |e: bincode::Error| Error::corrupt(path, doc, format!("{what} does not decode: {e}"));
    match bytes.split_first() {
        Some((&v, rest)) if v == T::VERSION => bincode::deserialize(rest).map_err(bad),
        Some((&v, rest)) => match T::decode_older(v, rest) {
            Some(r) => r.map_err(bad),
            None => Err(Error::Version {
                what,
                path: path.to_path_buf(),
                expected: T::VERSION as u32,
                found: v as u32,
            }),
        },
        None => Err(Error::corrupt(path, doc, format!("empty {what}"))),
    }
}

/// Decodes a u64 stored big-endian (doc ids in keys).
pub fn be_u64(bytes: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(bytes.get(..8)?.try_into().ok()?)).filter(|_| bytes.len() == 8)
}

/// Decodes a u64 stored little-endian (meta values).
pub fn le_u64(bytes: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?)).filter(|_| bytes.len() == 8)
}

/// Key of a segment's committed length in `meta`.
pub fn seg_key(id: u32) -> [u8; 7] {
    let mut k = *b"seg\0\0\0\0";
    k[3..].copy_from_slice(&id.to_be_bytes());
    k
}

/// Key of an edge.
pub fn edge_key(a: u64, b: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&a.to_be_bytes());
    k[8..].copy_from_slice(&b.to_be_bytes());
    k
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
        let bytes = encode(&r);
        assert_eq!(bytes[0], 2);
        let p = Path::new("x");
        assert_eq!(decode::<DocRecord>(&bytes, "doc record", p, None).unwrap(), r);
        let mut v3 = bytes.clone();
        v3[0] = 3;
        assert!(matches!(
            decode::<DocRecord>(&v3, "doc record", p, None),
            Err(Error::Version { found: 3, .. })
        ));
        // A version-2 body relabelled as version 1 has trailing bytes: refused, not misread.
        let mut v1 = bytes.clone();
        v1[0] = 1;
        assert!(decode::<DocRecord>(&v1, "doc record", p, None).unwrap_err().is_corruption());
        assert!(decode::<DocRecord>(&bytes[..5], "doc record", p, Some(1))
            .unwrap_err()
            .is_corruption());
    }

    /// Bytes of a version-1 record as written before metadata matches existed (fixed here, not
    /// produced by today's encoder): they must keep decoding, with an empty biblio.
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
        let r = decode::<DocRecord>(&v1, "doc record", Path::new("x"), Some(3)).unwrap();
        assert_eq!(r.key, "k/1");
        assert_eq!(
            (r.simhash, r.segment, r.offset, r.count, r.group, r.inserted_at_ms),
            (0xABCD, 7, 16, 5, 2, 99)
        );
        assert_eq!(r.meta, None);
        assert_eq!(r.biblio, Biblio::default());
        // Re-encoding writes version 2.
        assert_eq!(encode(&r)[0], 2);
        assert!(decode::<DocRecord>(&v1[..v1.len() - 1], "doc record", Path::new("x"), Some(3)).is_err());
    }
}
