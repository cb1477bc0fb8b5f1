//! What every part of a handle reads and nothing changes after the open: the RocksDB instance and
//! its paths, the stored spec and configuration, the table layout, the handle's options. The
//! narrow view the side indexes and the candidate sources are given ([`Base`]) instead of the whole
//! handle: it holds no published state, no writer and no side index, so nothing here calls back
//! into them.

use std::fs::File;
use std::path::PathBuf;

use rocksdb::{ColumnFamily, WriteBatch, DB};

use crate::error::{Error, Result};
use crate::fingerprint::method::Method;
use crate::fingerprint::similarity::{compare, MethodScore, Rule};
use crate::fingerprint::spec::FingerprintSpec;
use crate::fingerprint::Fingerprint;
use crate::index;
use crate::index::rocks::RocksTables;
use crate::index::Layout;
use crate::store::doc_record::{self, DbConfig, DocRecord};
use crate::store::keys::{decode_key_value, doc_key, table_cf, CF_DOCS, CF_KEYS};
use crate::store::segment::Recovery;

use super::options::{check_k, Options};
use super::state::State;

/// The handle's unchanging part (`Inner` dereferences to it).
pub(crate) struct Base {
    pub(crate) path: PathBuf,
    pub(crate) rocks_path: PathBuf,
    pub(crate) rocks: DB,
    pub(crate) spec: FingerprintSpec,
    pub(crate) config: DbConfig,
    pub(crate) layout: Layout,
    /// Generation of the table column families (`store::keys::table_cf`).
    pub(crate) table_gen: u32,
    pub(crate) opts: Options,
    pub(crate) recovery: Recovery,
    pub(crate) _lock: Option<File>,
}

impl Base {
    /// The handle of column family `name`; a missing one is corruption.
    pub(crate) fn cf(&self, name: &str) -> Result<&ColumnFamily> {
        super::cfs::cf(&self.rocks, &self.rocks_path, name)
    }

    /// A RocksDB error of operation `op`, with the database's path.
    pub(crate) fn rocks_err(&self, op: &'static str) -> impl Fn(rocksdb::Error) -> Error + '_ {
        move |e| Error::rocks(op, &self.rocks_path, e)
    }

    /// The record of doc `id` (`None`: no record).
    pub(crate) fn read_record(&self, id: u64) -> Result<Option<DocRecord>> {
        let v = self
            .rocks
            .get_cf(self.cf(CF_DOCS)?, doc_key(id))
            .map_err(self.rocks_err("read doc"))?;
        v.map(|v| doc_record::decode_doc(&v, &self.rocks_path, Some(id))).transpose()
    }

    /// The committed doc id of `key` (`None`: not committed).
    pub(crate) fn committed_id(&self, key: &str) -> Result<Option<u64>> {
        let v = self
            .rocks
            .get_cf(self.cf(CF_KEYS)?, key.as_bytes())
            .map_err(self.rocks_err("read key"))?;
        v.map(|v| {
            decode_key_value(&v).ok_or_else(|| Error::corrupt(&self.rocks_path, None, format!("key entry for {key:?} is not 8 bytes")))
        })
        .transpose()
    }

    /// The method's comparison of a fingerprint with a stored (or pending) document.
    pub(crate) fn compare_with(&self, fp: &Fingerprint, simhash: u64, sketch: &[u64]) -> MethodScore {
        compare(&self.spec.method, fp.simhash, &fp.sketch, simhash, sketch)
    }

    /// The rule of a query: `k` (default: the database's) and `s` (default: the spec's).
    pub(crate) fn rule(&self, k: Option<u32>, min_shared: Option<u32>) -> Result<Rule> {
        let max_distance = check_k(k.unwrap_or(self.config.max_distance))?;
        let default_s = match &self.spec.method {
            Method::Broder(b) | Method::BroderCharikar(b, _) => b.min_shared,
            _ => 1,
        };
        let min_shared = min_shared.unwrap_or(default_s);
        if let Method::Broder(b) | Method::BroderCharikar(b, _) = &self.spec.method {
            if !(1..=b.supershingles).contains(&min_shared) {
                return Err(Error::InvalidOption {
                    name: "min_shared",
                    message: format!("must be within 1..={} (the supershingles), got {min_shared}", b.supershingles),
                });
            }
        }
        Ok(Rule { max_distance, min_shared })
    }

    /// Candidates within `k` of `q` among the published documents: `f(id, distance)`. Probes the
    /// mirror, or the RocksDB tables (filtered to the published documents) without it.
    pub(crate) fn probe(&self, st: &State, q: u64, k: u32, mut f: impl FnMut(u64, u32)) -> Result<()> {
        match &st.tables {
            // The mirror holds exactly the published documents.
            Some(t) => {
                let threads = match self.opts.query_threads {
                    0 => index::cores(),
                    n => n,
                };
                if threads > 1 && index::split_pays(t.layout(), k, t.len() as u64) {
                    index::probe_split(t, q, k, threads, &mut |id, _, d| f(id, d))
                } else {
                    index::probe(t, q, k, &mut |id, _, d| f(id, d))
                }
            }
            None => {
                let tables = RocksTables {
                    db: &self.rocks,
                    path: &self.rocks_path,
                    layout: &self.layout,
                    cfs: (0..self.layout.tables() as usize)
                        .map(|i| self.cf(&table_cf(self.table_gen, i)))
                        .collect::<Result<_>>()?,
                    len: st.docs.len() as u64,
                };
                index::probe(&tables, q, k, &mut |id, _, d| {
                    if st.docs.contains_key(&id) {
                        f(id, d);
                    }
                })
            }
        }
    }
}

/// Adds `keys` to column family `cf` of the batch in sorted order (`put`: puts, else deletes):
/// RocksDB's memtable skiplist then reuses its insertion splice instead of recomputing it for every
/// random key (with unsorted keys, the skiplist's search is the largest single cost of a batch in a
/// `perf record` of `fpdb ingest`).
pub(crate) fn sorted_into<K: Ord + AsRef<[u8]>>(b: &mut WriteBatch, cf: &ColumnFamily, mut keys: Vec<K>, put: bool) {
    keys.sort_unstable();
    for k in &keys {
        if put {
            b.put_cf(cf, k, []);
        } else {
            b.delete_cf(cf, k);
        }
    }
}
