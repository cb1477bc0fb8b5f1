//! Versioned RocksDB values: the doc record (CF `docs`) and the database config (meta `config`).
//! Keys and the column families are in [`super::keys`].
//!
//! bincode 1.x default encoding: integers little-endian fixed width, `Vec<u8>`/`String` as u64 LE
//! length ‖ bytes, `Option` as one byte 0/1 ‖ value, `f64` as IEEE-754 LE.
//!
//! `DocRecord` (after the version byte): key String, simhash u64, segment u32, offset u64, count u32,
//! group u64, inserted_at_ms u64, meta `Option<String>`.

use serde::{Deserialize, Serialize};
use std::path::Path;

use crate::error::{Error, Result};
use crate::store::ShingleLoc;

/// Store format version (meta `format`).
pub const FORMAT_VERSION: u32 = 1;
const RECORD_VERSION: u8 = 1;

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
pub fn encode<T: Serialize>(v: &T) -> Result<Vec<u8>> {
    let mut out = vec![RECORD_VERSION];
    // Plain structs into a Vec do not fail; if a future field type did, the write is refused (an
    // empty record must never reach the disk).
    bincode::serialize_into(&mut out, v).map_err(|e| Error::InvalidInput {
        key: None,
        message: format!("cannot encode a record: {e}"),
    })?;
    Ok(out)
}

/// Decodes a versioned record.
pub fn decode<T: for<'de> Deserialize<'de>>(bytes: &[u8], what: &'static str, path: &Path, doc: Option<u64>) -> Result<T> {
    match bytes.split_first() {
        Some((&RECORD_VERSION, rest)) => {
            bincode::deserialize(rest).map_err(|e| Error::corrupt(path, doc, format!("{what} does not decode: {e}")))
        }
        Some((&v, _)) => Err(Error::Version {
            what,
            path: path.to_path_buf(),
            expected: RECORD_VERSION as u32,
            found: v as u32,
        }),
        None => Err(Error::corrupt(path, doc, format!("empty {what}"))),
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
        };
        let bytes = encode(&r).unwrap();
        assert_eq!(bytes[0], 1);
        let p = Path::new("x");
        assert_eq!(decode::<DocRecord>(&bytes, "doc record", p, None).unwrap(), r);
        let mut v2 = bytes.clone();
        v2[0] = 2;
        assert!(matches!(
            decode::<DocRecord>(&v2, "doc record", p, None),
            Err(Error::Version { found: 2, .. })
        ));
        assert!(decode::<DocRecord>(&bytes[..5], "doc record", p, Some(1))
            .unwrap_err()
            .is_corruption());
    }
}
