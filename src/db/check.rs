//! `check`: every doc record, shingle record, key, table entry and edge verified, and the in-memory
//! state compared with them. Never modifies anything.

use rocksdb::IteratorMode;

use crate::error::Result;
use crate::intmap::IntMap;
use crate::store::doc_record::{self, DocRecord};
use crate::store::keys::{be_u64, decode_edge_key, decode_key_value, decode_table_key, table_cf, CF_DOCS, CF_EDGES, CF_KEYS};
use crate::store::segment;

use super::handle::Db;
use super::state::State;
use super::types::{CheckReport, Fault};

/// The faults found so far; most are RocksDB's (`rp`: its directory).
struct Faults {
    rp: String,
    list: Vec<Fault>,
}

impl Faults {
    fn push(&mut self, doc: Option<u64>, key: Option<String>, path: String, what: String) {
        self.list.push(Fault { doc, key, path, what });
    }

    /// A fault in RocksDB.
    fn rocks(&mut self, doc: Option<u64>, key: Option<String>, what: String) {
        let path = self.rp.clone();
        self.push(doc, key, path, what);
    }
}

impl Db {
    /// Verifies every doc record, shingle record (magic, id, count, checksum), key entry, table entry
    /// and edge, and that index and records agree. Never modifies anything.
    pub fn check(&self) -> Result<CheckReport> {
        // Holding the writer lock keeps RocksDB and the published state in step while we compare them.
        let writer = self.inner.writer.lock();
        let st = self.inner.state.read();
        let mut f = Faults {
            rp: self.inner.rocks_path.display().to_string(),
            list: Vec::new(),
        };
        let records = self.check_doc_records(&mut f)?;
        let mut ids: Vec<u64> = records.keys().copied().collect();
        ids.sort_unstable();
        for &id in &ids {
            self.check_record(&st, &records, id, &mut f);
        }
        let mut rep = CheckReport {
            docs: ids.len() as u64,
            ..CheckReport::default()
        };
        self.check_keys(&records, rep.docs, &mut f)?;
        rep.table_entries += self.check_tables(writer.table_floor, &ids, &records, &mut f)?;
        self.check_edges(&records, &mut f)?;
        rep.faults = f.list;
        // Each side index's entries agree with the records.
        self.inner.sides.each(|s| s.check(&self.inner, &st, &records, &mut rep))?;
        Ok(rep)
    }

    /// Every doc record that decodes (the others are faults).
    fn check_doc_records(&self, f: &mut Faults) -> Result<IntMap<u64, DocRecord>> {
        let mut records: IntMap<u64, DocRecord> = IntMap::default();
        for item in self.inner.rocks.iterator_cf(self.cf(CF_DOCS)?, IteratorMode::Start) {
            let (k, v) = item.map_err(self.rocks_err("scan docs"))?;
            let Some(id) = be_u64(&k) else {
                f.rocks(None, None, format!("doc key {k:?} is not 8 bytes"));
                continue;
            };
            match doc_record::decode_doc(&v, &self.inner.rocks_path, Some(id)) {
                Ok(r) => {
                    records.insert(id, r);
                }
                Err(e) => f.rocks(Some(id), None, e.to_string()),
            }
        }
        Ok(records)
    }

    /// One document: its shingle record, its key entry, its group, its in-memory state.
    fn check_record(&self, st: &State, records: &IntMap<u64, DocRecord>, id: u64, f: &mut Faults) {
        let r = &records[&id];
        let key = || Some(r.key.clone());
        let seg_path = st
            .segs
            .path(r.segment)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| segment::file_name(r.segment));
        match st.seg_usage.get(&r.segment) {
            Some(&(len, _)) if r.offset + st.segs.record_len(r.loc()) <= len => match st.segs.read(r.loc(), id) {
                Ok(set) => {
                    if set.len() != r.count as usize {
                        f.push(Some(id), key(), seg_path, "shingle count differs from the record".into());
                    }
                }
                Err(e) => f.push(Some(id), key(), seg_path, e.to_string()),
            },
            Some(&(len, _)) => f.push(
                Some(id),
                key(),
                seg_path,
                format!(
                    "record at {}+{} runs past the committed length {len}",
                    r.offset,
                    st.segs.record_len(r.loc())
                ),
            ),
            None => f.push(Some(id), key(), seg_path, format!("segment {} is not committed", r.segment)),
        }
        match self.committed_id(&r.key) {
            Ok(Some(kid)) if kid == id => {}
            Ok(other) => f.rocks(Some(id), key(), format!("keys entry points at {other:?}, expected {id}")),
            Err(e) => f.rocks(Some(id), key(), e.to_string()),
        }
        if !records.contains_key(&r.group) || records[&r.group].group != r.group || r.group > id {
            f.rocks(
                Some(id),
                key(),
                format!("group {} is not a live canonical member at or before this doc", r.group),
            );
        }
        match st.docs.get(&id) {
            Some(m) if m.simhash == r.simhash && m.loc == r.loc() && m.group == r.group => {}
            _ => f.rocks(Some(id), key(), "in-memory state differs from the record".into()),
        }
    }

    /// Every key entry names a doc with that key, and there is one per doc.
    fn check_keys(&self, records: &IntMap<u64, DocRecord>, docs: u64, f: &mut Faults) -> Result<()> {
        let mut keys = 0u64;
        for item in self.inner.rocks.iterator_cf(self.cf(CF_KEYS)?, IteratorMode::Start) {
            let (k, v) = item.map_err(self.rocks_err("scan keys"))?;
            keys += 1;
            let matches = decode_key_value(&v).is_some_and(|id| records.get(&id).is_some_and(|r| r.key.as_bytes() == &k[..]));
            if !matches {
                f.rocks(
                    None,
                    Some(String::from_utf8_lossy(&k).into_owned()),
                    "keys entry without a matching doc".into(),
                );
            }
        }
        if keys != docs {
            f.rocks(None, None, format!("{keys} key entries for {docs} docs"));
        }
        Ok(())
    }

    /// Every table entry matches a live record, and each table holds every doc below the table
    /// floor once. Documents at or above the floor may have no entries yet
    /// (`db::background::table_tail`); an entry there still has to match a live record. Returns the
    /// entries counted.
    fn check_tables(&self, floor: u64, ids: &[u64], records: &IntMap<u64, DocRecord>, f: &mut Faults) -> Result<u64> {
        let layout = &self.inner.layout;
        let below = ids.iter().filter(|&&id| id < floor).count() as u64;
        let mut entries = 0;
        for i in 0..layout.tables() as usize {
            let (mut n, mut n_below) = (0u64, 0u64);
            for item in self
                .inner
                .rocks
                .iterator_cf(self.cf(&table_cf(self.inner.table_gen, i))?, IteratorMode::Start)
            {
                let (k, _) = item.map_err(self.rocks_err("scan table"))?;
                n += 1;
                match decode_table_key(layout, i, &k) {
                    Some((fp, id)) if records.get(&id).is_some_and(|r| r.simhash == fp) => n_below += u64::from(id < floor),
                    Some((_, id)) => f.rocks(Some(id), None, format!("table t{i} entry without a matching doc")),
                    None => f.rocks(None, None, format!("table t{i} key {k:?} is not 16 bytes")),
                }
            }
            entries += n;
            if n_below != below {
                f.rocks(
                    None,
                    None,
                    format!("table t{i} has {n_below} entries for the {below} docs below the table floor {floor}"),
                );
            }
        }
        Ok(entries)
    }

    /// Every edge links two live docs of one group.
    fn check_edges(&self, records: &IntMap<u64, DocRecord>, f: &mut Faults) -> Result<()> {
        for item in self.inner.rocks.iterator_cf(self.cf(CF_EDGES)?, IteratorMode::Start) {
            let (k, _) = item.map_err(self.rocks_err("scan edges"))?;
            match decode_edge_key(&k) {
                Some((a, c)) if records.contains_key(&a) && records.contains_key(&c) && records[&a].group == records[&c].group => {}
                _ => f.rocks(None, None, format!("edge {k:?} links missing docs or docs of different groups")),
            }
        }
        Ok(())
    }
}
