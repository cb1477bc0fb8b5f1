//! What `meta` holds about the database as a whole: the format version, the fingerprint spec (with
//! a weighted-simhash spec's IDF table, meta `idf`), the configuration, the table generation and
//! the next doc id. Written once at creation ([`write_created`]), read and checked at every open
//! ([`read_stored`]).

use std::path::Path;

use rocksdb::{WriteBatch, DB};

use crate::error::{Error, Result};
use crate::fingerprint::method::{IdfHandle, Method};
use crate::fingerprint::spec::FingerprintSpec;
use crate::fingerprint::weighted::IdfTable;
use crate::index::Layout;
use crate::store::doc_record::{self, DbConfig};
use crate::store::keys::{le_u64, table_cf, META_IDF, META_TABLE_GEN};

use super::options::Options;

/// The creation's entries of `meta`: the format, the spec (and its IDF table), the configuration,
/// the next doc id (0).
pub(super) fn write_created(spec: &FingerprintSpec, config: &DbConfig, b: &mut WriteBatch, meta: &rocksdb::ColumnFamily) -> Result<()> {
    b.put_cf(meta, b"format", doc_record::FORMAT_VERSION.to_le_bytes());
    b.put_cf(meta, b"spec", spec.encode()?);
    b.put_cf(meta, b"config", doc_record::encode_config(config)?);
    b.put_cf(meta, b"next_doc", 0u64.to_le_bytes());
    if let Some(t) = spec.method.idf() {
        b.put_cf(meta, META_IDF, t.encode());
    }
    Ok(())
}

/// What `meta` holds about the database as a whole.
pub(super) struct Stored {
    pub(super) spec: FingerprintSpec,
    pub(super) config: DbConfig,
    pub(super) layout: Layout,
    pub(super) table_gen: u32,
    pub(super) next_id: u64,
}

/// A `meta` entry that must be there.
fn get_meta(rocks: &DB, meta: &rocksdb::ColumnFamily, rocks_path: &Path, k: &[u8]) -> Result<Vec<u8>> {
    rocks
        .get_cf(meta, k)
        .map_err(|e| Error::rocks("read meta", rocks_path, e))?
        .ok_or_else(|| Error::corrupt(rocks_path, None, format!("meta entry {:?} is missing", String::from_utf8_lossy(k))))
}

/// The stored format (checked), spec (checked against the one expected), configuration, table
/// generation (its column families present) and next doc id.
pub(super) fn read_stored(rocks: &DB, meta: &rocksdb::ColumnFamily, rocks_path: &Path, path: &Path, opts: &Options) -> Result<Stored> {
    let format = get_meta(rocks, meta, rocks_path, b"format")?;
    let format = u32::from_le_bytes(format.get(..4).and_then(|s| s.try_into().ok()).unwrap_or([0xFF; 4]));
    if format != doc_record::FORMAT_VERSION {
        return Err(Error::Version {
            what: "store format",
            path: rocks_path.to_path_buf(),
            expected: doc_record::FORMAT_VERSION,
            found: format,
        });
    }
    let mut spec = FingerprintSpec::decode(&get_meta(rocks, meta, rocks_path, b"spec")?, rocks_path)?;
    attach_idf(&mut spec, rocks, meta, rocks_path)?;
    if let Some(expected) = &opts.expect_spec {
        // A database keeps the normalizer and the hash it was created with: an upgraded build's
        // default spec (a newer normalizer, another default hash) still opens it (module docs of
        // `fingerprint::spec`).
        let expected = FingerprintSpec {
            normalizer: spec.normalizer,
            hash: spec.hash,
            ..expected.clone()
        };
        expected.check_matches(&spec, path)?;
    }
    spec.validate()?;
    let config: DbConfig = doc_record::decode_config(&get_meta(rocks, meta, rocks_path, b"config")?, rocks_path)?;
    let layout = Layout::new(config.tables)
        .ok_or_else(|| Error::corrupt(rocks_path, None, format!("stored table count {} is out of range", config.tables)))?;
    let table_gen = match rocks
        .get_cf(meta, META_TABLE_GEN)
        .map_err(|e| Error::rocks("read meta", rocks_path, e))?
    {
        None => 0,
        Some(v) => u32::from_le_bytes(
            v.as_slice()
                .try_into()
                .map_err(|_| Error::corrupt(rocks_path, None, format!("meta table_gen is {} bytes, expected 4", v.len())))?,
        ),
    };
    for i in 0..config.tables as usize {
        if rocks.cf_handle(&table_cf(table_gen, i)).is_none() {
            let name = table_cf(table_gen, i);
            return Err(Error::corrupt(rocks_path, None, format!("table column family {name} is missing")));
        }
    }
    let next_id = le_u64(&get_meta(rocks, meta, rocks_path, b"next_doc")?)
        .ok_or_else(|| Error::corrupt(rocks_path, None, "meta next_doc is not 8 bytes"))?;
    Ok(Stored {
        spec,
        config,
        layout,
        table_gen,
        next_id,
    })
}

/// Attaches the stored IDF table to a weighted-simhash spec (checking its hash); other specs pass.
fn attach_idf(spec: &mut FingerprintSpec, rocks: &DB, meta: &rocksdb::ColumnFamily, path: &std::path::Path) -> Result<()> {
    let Method::WeightedSimHash(p) = &mut spec.method else {
        return Ok(());
    };
    let bytes = rocks
        .get_cf(meta, META_IDF)
        .map_err(|e| Error::rocks("read IDF table", path, e))?
        .ok_or_else(|| {
            Error::corrupt(
                path,
                None,
                "meta entry \"idf\" is missing (a weighted-simhash database stores its IDF table there)",
            )
        })?;
    let table = IdfTable::decode(&bytes, path)?;
    if table.hash() != p.idf_hash {
        return Err(Error::corrupt(
            path,
            None,
            format!(
                "the stored IDF table hashes to {:#x}, the spec names {:#x}",
                table.hash(),
                p.idf_hash
            ),
        ));
    }
    p.idf = IdfHandle(Some(std::sync::Arc::new(table)));
    Ok(())
}
