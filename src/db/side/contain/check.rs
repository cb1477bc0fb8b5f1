//! `check` of the containment index: every entry against the live records and their stored sets,
//! the tail against the floor, the in-memory short-key set against the index's.

use std::collections::HashMap;

use rocksdb::IteratorMode;

use crate::error::Result;
use crate::fingerprint::containment::{stored_keys, KeyKind};
use crate::intmap::IntMap;
use crate::store::doc_record::{ContainmentConfig, DocRecord};
use crate::store::keys::{contain_key, decode_contain_key, decode_contain_value, CF_CONTAIN};

use super::mem::ContainMem;
use super::search::scan_contain;
use crate::db::base::Base;
use crate::db::state::State;
use crate::db::types::{CheckReport, Fault};

impl Base {
    /// `check` of the index: every RocksDB entry decodes and names a live document (whose keys
    /// contain it, below the floor); every live document's keys are present, in RocksDB below the
    /// floor and in the tail at or above it; the tail names only live documents at or above the
    /// floor; the in-memory short-key set equals the index's.
    pub(super) fn check_containment(
        &self,
        st: &State,
        mem: &ContainMem,
        cfg: ContainmentConfig,
        records: &IntMap<u64, DocRecord>,
        rep: &mut CheckReport,
    ) -> Result<()> {
        let rp = self.rocks_path.display().to_string();
        let cf = self.cf(CF_CONTAIN)?;
        let mut fault = |doc: Option<u64>, what: String| {
            rep.faults.push(Fault {
                doc,
                key: doc.and_then(|d| records.get(&d).map(|r| r.key.clone())),
                path: rp.clone(),
                what,
            })
        };
        // Per document: its expected keys (from its stored set) must all be present, and the
        // entries naming it must be exactly as many.
        let expected = self.check_contain_docs(st, mem, cfg, cf, records, &mut fault);
        let (per_doc, short_in_index) = self.count_contain_entries(mem, cf, records, &mut rep.contain_entries, &mut fault)?;
        for (id, n) in per_doc {
            let e = expected.get(&id).copied().unwrap_or(0);
            if n != e && expected.contains_key(&id) {
                fault(Some(id), format!("{n} containment-index entries, expected {e}"));
            }
        }
        let mirror: HashMap<u32, u32> = mem.short.iter().collect();
        if mirror != short_in_index {
            fault(
                None,
                format!(
                    "in-memory short-key set ({} keys) differs from the index's ({} keys)",
                    mirror.len(),
                    short_in_index.len()
                ),
            );
        }
        Ok(())
    }

    /// Checks every live document's keys in the index ([`Db::check_contain_doc`]), reporting
    /// missing and wrong entries through `fault`. Returns each checked document's key count.
    fn check_contain_docs(
        &self,
        st: &State,
        mem: &ContainMem,
        cfg: ContainmentConfig,
        cf: &rocksdb::ColumnFamily,
        records: &IntMap<u64, DocRecord>,
        fault: &mut impl FnMut(Option<u64>, String),
    ) -> IntMap<u64, u64> {
        let mut expected: IntMap<u64, u64> = IntMap::default();
        let mut ids: Vec<u64> = records.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let Ok(set) = st.segs.read(records[&id].loc(), id) else { continue }; // reported by the main check
            let (n, missing, wrong) = self.check_contain_doc(mem, cfg, cf, id, &set);
            expected.insert(id, n as u64);
            if missing > 0 {
                fault(Some(id), format!("{missing} of its {n} containment-index keys are missing"));
            }
            if wrong > 0 {
                fault(
                    Some(id),
                    format!("{wrong} of its containment-index entries do not hold its key count {n}"),
                );
            }
        }
        expected
    }

    /// Counts the index's entries (RocksDB below the floor, then the tail) into `entries`, per live
    /// document and per short key, reporting entries of no live document through `fault`. Returns
    /// (entries per document, entries per short key).
    fn count_contain_entries(
        &self,
        mem: &ContainMem,
        cf: &rocksdb::ColumnFamily,
        records: &IntMap<u64, DocRecord>,
        entries: &mut u64,
        fault: &mut impl FnMut(Option<u64>, String),
    ) -> Result<(IntMap<u64, u64>, HashMap<u32, u32>)> {
        let (floor, tail) = (mem.tail.floor, &mem.tail);
        let mut per_doc: IntMap<u64, u64> = IntMap::default();
        let mut short_in_index: HashMap<u32, u32> = HashMap::new();
        for item in scan_contain(&self.rocks, cf, IteratorMode::Start) {
            let (k, _) = item.map_err(self.rocks_err("scan containment index"))?;
            match decode_contain_key(&k) {
                // At or above the floor: left by a flush that stopped before moving the floor; the
                // searches skip it and the next flush writes it again.
                Some((_, _, id)) if id >= floor && records.contains_key(&id) => {}
                Some((kind, s, id)) if records.contains_key(&id) => {
                    *entries += 1;
                    *per_doc.entry(id).or_insert(0) += 1;
                    if kind == KeyKind::Short {
                        *short_in_index.entry(s).or_insert(0) += 1;
                    }
                }
                Some((_, _, id)) => fault(Some(id), "containment-index entry without a live doc".into()),
                None => fault(None, format!("containment key {k:?} does not decode")),
            }
        }
        for (kind, s) in tail.keys() {
            for (id, _) in tail.list(kind, s) {
                *entries += 1;
                if id < floor || !records.contains_key(&id) {
                    fault(
                        Some(id),
                        format!("in-memory containment entry of a document below the floor {floor} or not live"),
                    );
                    continue;
                }
                *per_doc.entry(id).or_insert(0) += 1;
                if kind == KeyKind::Short {
                    *short_in_index.entry(s).or_insert(0) += 1;
                }
            }
        }
        Ok((per_doc, short_in_index))
    }

    /// One live document's keys (from its stored set) in the index: in the tail at or above the
    /// floor, in RocksDB below it. Returns (its keys, how many are missing, how many do not hold
    /// its key count).
    fn check_contain_doc(
        &self,
        mem: &ContainMem,
        cfg: ContainmentConfig,
        cf: &rocksdb::ColumnFamily,
        id: u64,
        set: &[u32],
    ) -> (usize, usize, usize) {
        let (kind, keys) = stored_keys(set, cfg.sampling());
        let (mut missing, mut wrong) = (0usize, 0usize);
        if id >= mem.tail.floor {
            for &k in &keys {
                match mem.tail.list(kind, k).find(|&(d, _)| d == id) {
                    Some((_, n)) if n as usize == keys.len() => {}
                    Some(_) => wrong += 1,
                    None => missing += 1,
                }
            }
        } else {
            let wanted: Vec<[u8; 13]> = keys.iter().map(|&k| contain_key(kind, k, id)).collect();
            for v in &self.rocks.batched_multi_get_cf(cf, wanted.iter(), true) {
                match v {
                    Ok(Some(v)) if decode_contain_value(v) == Some(keys.len() as u32) => {}
                    Ok(Some(_)) => wrong += 1,
                    _ => missing += 1,
                }
            }
        }
        (keys.len(), missing, wrong)
    }
}
