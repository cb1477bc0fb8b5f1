//! The commit of one batch: segment bytes (appended, fsynced), then ONE RocksDB `WriteBatch` across
//! every column family (doc records, keys, table entries — without the mirror; with it they wait in
//! the table tail, `db::background::table_tail` — edges, regrouped records, segment lengths, the id counter),
//! then the publish to readers under the state's write lock.

use std::collections::HashSet;

use rocksdb::{IteratorMode, WriteBatch, WriteOptions};

use crate::error::{Error, Result};
use crate::failpoint;
use crate::intmap::IntMap;
use crate::store::doc_record::{self, DocRecord};
use crate::store::keys::{decode_meta_idx_key, CF_META_IDX};
use crate::store::keys::{
    decode_table_key, doc_key, edge_key, key_value, seg_key, table_cf, table_key, CF_DOCS, CF_EDGES, CF_KEYS, CF_META,
};
use crate::store::ShingleLoc;

use super::handle::Db;
use super::pending::{now_ms, Pending};
use super::state::{DocMeta, Writer, RECENT_CAP};

impl Db {
    /// Writes segment bytes, then one RocksDB batch, then publishes the batch to readers.
    /// Must run inside [`Db::mutation`], which poisons the handle when this fails part-way.
    pub(super) fn commit(&self, w: &mut Writer, mut pend: Pending, moved: Vec<(u64, ShingleLoc)>) -> Result<()> {
        pend.new_docs.retain(|p| p.alive);
        let segments_change = !(pend.seg_created.is_empty() && pend.seg_lengths.is_empty() && pend.seg_dropped.is_empty());
        if pend.new_docs.is_empty() && pend.deleted.is_empty() && pend.regroup.is_empty() && moved.is_empty() && !segments_change {
            return Ok(());
        }
        let records: Vec<(u64, &[u32])> = pend.new_docs.iter().map(|p| (p.id, p.fp.shingles.as_slice())).collect();
        let mut appended = w.segw.append(&records)?;
        // The segment's fsync runs while the batch is built; the WAL write waits for it below.
        let seg_sync = appended.sync.take();
        let layout = &self.inner.layout;
        let mut b = WriteBatch::default();
        let (docs_cf, keys_cf, edges_cf, meta_cf) = (self.cf(CF_DOCS)?, self.cf(CF_KEYS)?, self.cf(CF_EDGES)?, self.cf(CF_META)?);
        let tcfs: Vec<&rocksdb::ColumnFamily> = (0..layout.tables() as usize)
            .map(|i| self.cf(&table_cf(self.inner.table_gen, i)))
            .collect::<Result<_>>()?;
        let meta_idx_cf = self.cf(CF_META_IDX)?; // metadata:
        let st = self.inner.state.read();
        let mut tdel: Vec<Vec<[u8; 16]>> = vec![Vec::new(); tcfs.len()];
        let mut tput: Vec<Vec<[u8; 16]>> = vec![Vec::with_capacity(pend.new_docs.len()); tcfs.len()];
        let mut kput: Vec<(&[u8], [u8; 8])> = Vec::with_capacity(pend.new_docs.len());
        for &id in &pend.deleted {
            let Some(m) = st.docs.get(&id) else {
                // A damaged record (left out at open): remove it and whatever index entries name it.
                b.delete_cf(docs_cf, doc_key(id));
                self.method_delete(&mut b, id, None)?; // method:
                for (i, cf) in tcfs.iter().enumerate() {
                    for item in self.inner.rocks.iterator_cf(*cf, IteratorMode::Start) {
                        let (k, _) = item.map_err(self.rocks_err("scan table"))?;
                        if decode_table_key(layout, i, &k).is_some_and(|(_, d)| d == id) {
                            b.delete_cf(*cf, k);
                        }
                    }
                }
                // metadata: and its metadata index entries.
                for item in self.inner.rocks.iterator_cf(meta_idx_cf, IteratorMode::Start) {
                    let (k, _) = item.map_err(self.rocks_err("scan meta_idx"))?;
                    if decode_meta_idx_key(&k).is_some_and(|(_, _, d)| d == id) {
                        b.delete_cf(meta_idx_cf, k);
                    }
                }
                continue;
            };
            // metadata: the deleted (or replaced) document's index entries go in the same batch.
            if let Some(r) = self.read_record(id)? {
                for k in super::metadata::index_keys(&r.biblio, id) {
                    b.delete_cf(meta_idx_cf, k);
                }
            }
            b.delete_cf(docs_cf, doc_key(id));
            b.delete_cf(keys_cf, m.key.as_bytes());
            self.method_delete(&mut b, id, st.method.sketches.get(&id).map(|s| &s[..]))?; // method:
            for (i, t) in tdel.iter_mut().enumerate() {
                t.push(table_key(layout, i, m.simhash, id));
            }
        }
        for k in &pend.deleted_keys {
            b.delete_cf(keys_cf, k.as_bytes());
        }
        // Keys are added to each column family in sorted order: RocksDB's memtable skiplist then
        // reuses its insertion splice instead of recomputing it for every random key (measured: the
        // largest single cost of a batch before this).
        for (t, cf) in tdel.iter_mut().zip(&tcfs) {
            t.sort_unstable();
            for key in t.iter() {
                b.delete_cf(*cf, key);
            }
        }
        for &(a, c) in &pend.edges_removed {
            b.delete_cf(edges_cf, edge_key(a, c));
            b.delete_cf(edges_cf, edge_key(c, a));
        }
        // With the mirror, the new documents' table entries wait in the table tail
        // (`db::background::table_tail`); a delete's tombstones above are written wherever its entries are.
        let table_tail = self.inner.opts.mirror;
        let now = now_ms();
        for (p, loc) in pend.new_docs.iter().zip(&appended.locs) {
            let rec = DocRecord {
                key: p.key.clone(),
                simhash: p.fp.simhash,
                segment: loc.segment,
                offset: loc.offset,
                count: loc.count,
                group: pend.regroup.get(&p.id).copied().unwrap_or(p.group),
                inserted_at_ms: now,
                meta: p.meta.clone(),
                biblio: p.biblio.clone(), // metadata:
            };
            b.put_cf(docs_cf, doc_key(p.id), doc_record::encode_doc(&rec)?);
            for k in super::metadata::index_keys(&p.biblio, p.id) {
                b.put_cf(meta_idx_cf, k, []); // metadata: the new document's index entries
            }
            kput.push((p.key.as_bytes(), key_value(p.id)));
            self.method_put(&mut b, p.id, &p.fp.sketch)?; // method:
            if !table_tail {
                for (i, t) in tput.iter_mut().enumerate() {
                    t.push(table_key(layout, i, p.fp.simhash, p.id));
                }
            }
        }
        kput.sort_unstable();
        for (k, v) in &kput {
            b.put_cf(keys_cf, k, v);
        }
        for (t, cf) in tput.iter_mut().zip(&tcfs) {
            t.sort_unstable();
            for key in t.iter() {
                b.put_cf(*cf, key, []);
            }
        }
        let new_ids: HashSet<u64> = pend.new_docs.iter().map(|p| p.id).collect();
        let is_new = |id: u64| new_ids.contains(&id);
        // Alive at the end of the batch: committed and not deleted, or new and not replaced since.
        let alive = |id: u64| is_new(id) || (st.docs.contains_key(&id) && !pend.deleted.contains(&id));
        for &(a, c) in &pend.edges_added {
            if alive(a) && alive(c) {
                b.put_cf(edges_cf, edge_key(a, c), []);
                b.put_cf(edges_cf, edge_key(c, a), []);
            }
        }
        // Committed docs whose group or location changed: rewrite their records.
        let mut rewrite: IntMap<u64, DocRecord> = IntMap::default();
        for (&id, &g) in &pend.regroup {
            if is_new(id) || pend.deleted.contains(&id) || !st.docs.contains_key(&id) {
                continue;
            }
            let mut r = self
                .read_record(id)?
                .ok_or_else(|| Error::corrupt(&self.inner.rocks_path, Some(id), "live doc has no record"))?;
            r.group = g;
            rewrite.insert(id, r);
        }
        for &(id, loc) in &moved {
            let r = match rewrite.get_mut(&id) {
                Some(r) => r,
                None => {
                    let r = self
                        .read_record(id)?
                        .ok_or_else(|| Error::corrupt(&self.inner.rocks_path, Some(id), "live doc has no record"))?;
                    rewrite.entry(id).or_insert(r)
                }
            };
            r.segment = loc.segment;
            r.offset = loc.offset;
            r.count = loc.count;
        }
        for (id, r) in &rewrite {
            b.put_cf(docs_cf, doc_key(*id), doc_record::encode_doc(r)?);
        }
        for &(seg, len) in &appended.lengths {
            b.put_cf(meta_cf, seg_key(seg), len.to_le_bytes());
        }
        for &(seg, len) in &pend.seg_lengths {
            b.put_cf(meta_cf, seg_key(seg), len.to_le_bytes());
        }
        for &seg in &pend.seg_dropped {
            b.delete_cf(meta_cf, seg_key(seg));
        }
        b.put_cf(meta_cf, b"next_doc", w.next_id.to_le_bytes());
        // containment: the index's keys, in the same batch.
        let contain = match self.contain_delta(&st, &pend)? {
            Some(d) => Some(d.write(self, &mut b)?),
            None => None,
        };
        drop(st);
        let mut wo = WriteOptions::default();
        wo.set_sync(self.inner.opts.sync);
        if let Some(sync) = seg_sync {
            sync.wait()?;
        }
        failpoint!("wal.write");
        self.inner.rocks.write_opt(b, &wo).map_err(self.rocks_err("commit batch"))?;
        failpoint!("batch.commit");
        failpoint::pause_point("batch.publish");

        // Committed: open new segments, then publish to readers.
        let mut new_readers = Vec::new();
        for &id in appended.created.iter().chain(pend.seg_created.iter()) {
            new_readers.push(w.segw.reader(id, Some(id) != w.segw.active())?);
        }
        let mut resealed = Vec::new();
        for &id in &appended.sealed {
            resealed.push(w.segw.reader(id, true)?);
        }
        let mut st = self.inner.state.write();
        st.published_seq = self.inner.rocks.latest_sequence_number();
        if let Some(c) = contain {
            c.publish(&mut st)?; // containment:
        }
        for r in new_readers.into_iter().chain(resealed) {
            st.segs.insert(r);
        }
        for &(seg, len) in appended.lengths.iter().chain(&pend.seg_lengths) {
            st.seg_usage.entry(seg).or_insert((0, 0)).0 = len;
        }
        for id in &pend.deleted {
            if table_tail && *id >= w.table_floor {
                w.table_dead.insert(*id); // left out of the table tail's write (`db::background::table_tail`)
            }
            st.method.remove(*id); // method:
            if let Some(m) = st.docs.remove(id) {
                if let Some(t) = st.tables.as_mut() {
                    t.remove(m.simhash, *id);
                }
                if let Some(u) = st.seg_usage.get_mut(&m.loc.segment) {
                    u.1 = u.1.saturating_sub(m.loc.record_len());
                }
            }
        }
        for (p, loc) in pend.new_docs.into_iter().zip(appended.locs) {
            if let Some(t) = st.tables.as_mut() {
                t.insert(p.fp.simhash, p.id);
            }
            if table_tail {
                w.table_tail.push((p.id, p.fp.simhash));
            }
            st.recent_ids.push_back(p.id);
            st.recent_fps.push_back(p.fp.simhash);
            if self.inner.mindex.is_some() {
                st.method.insert(p.id, &p.fp.sketch); // method:
            }
            if let Some(u) = st.seg_usage.get_mut(&loc.segment) {
                u.1 += loc.record_len();
            }
            let group = pend.regroup.get(&p.id).copied().unwrap_or(p.group);
            st.docs.insert(
                p.id,
                DocMeta {
                    key: p.key.into_boxed_str(),
                    simhash: p.fp.simhash,
                    loc,
                    group,
                },
            );
        }
        for (id, g) in pend.regroup {
            if let Some(m) = st.docs.get_mut(&id) {
                m.group = g;
            }
        }
        for (id, loc) in moved {
            let st = &mut *st;
            if let Some(m) = st.docs.get_mut(&id) {
                if let Some(u) = st.seg_usage.get_mut(&m.loc.segment) {
                    u.1 = u.1.saturating_sub(m.loc.record_len());
                }
                m.loc = loc;
            }
            if let Some(u) = st.seg_usage.get_mut(&loc.segment) {
                u.1 += loc.record_len();
            }
        }
        for seg in &pend.seg_dropped {
            st.segs.remove(*seg);
            st.seg_usage.remove(seg);
        }
        st.next_id = w.next_id;
        while st.recent_ids.len() > RECENT_CAP {
            st.recent_ids.pop_front();
            st.recent_fps.pop_front();
            st.recent_floor = st.recent_ids.front().copied().unwrap_or(st.next_id);
        }
        for g in pend.touched_groups {
            match w.members.get(&g) {
                Some(m) => st.members.insert(g, m.clone()),
                None => st.members.remove(&g),
            };
        }
        drop(st);
        self.after_publish(w);
        Ok(())
    }

    /// The background work a commit drives once its batch is durable and published: the mirror's
    /// merge, the containment tail, the table tail. A failure there is not the batch's (it is
    /// stored and visible, and reported so): it poisons the handle, and the next call says why
    /// (issue 31 item 5).
    fn after_publish(&self, w: &mut Writer) {
        self.merge_mirror(w);
        let r = super::background::contain_tail::tail_after_commit(&self.inner, w) // containment:
            .and_then(|()| super::background::table_tail::table_tail_after_commit(&self.inner, w));
        if let Err(e) = r {
            if w.poisoned.is_none() {
                w.poisoned = Some(format!("background work after a commit: {e}"));
            }
        }
    }
}
