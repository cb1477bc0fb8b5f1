//! The commit of one batch: segment bytes (appended, fsynced), then ONE RocksDB `WriteBatch` across
//! every column family (doc records, keys, table entries — without the mirror; with it they wait in
//! the table tail, `db::background::table_tail` — edges, regrouped records, segment lengths, the id counter),
//! then the publish to readers under the state's write lock.

use std::collections::HashSet;

use rocksdb::{ColumnFamily, IteratorMode, WriteBatch, WriteOptions};

use crate::error::{Error, Result};
use crate::failpoint;
use crate::intmap::IntMap;
use crate::store::doc_record::{self, DocRecord};
use crate::store::keys::{
    decode_table_key, doc_key, edge_key, key_value, seg_key, table_cf, table_key, CF_DOCS, CF_EDGES, CF_KEYS, CF_META,
};
use crate::store::segment::{Appended, SegmentSync};
use crate::store::ShingleLoc;

use super::base::sorted_into;
use super::handle::Db;
use super::pending::{now_ms, Pending, PendingDoc};
use super::side::Parts;
use super::state::{DocMeta, State, Writer, RECENT_CAP};

/// The column families one batch writes.
struct BatchCfs<'a> {
    docs: &'a ColumnFamily,
    keys: &'a ColumnFamily,
    edges: &'a ColumnFamily,
    meta: &'a ColumnFamily,
    tables: Vec<&'a ColumnFamily>,
}

impl Db {
    /// Writes segment bytes, then one RocksDB batch, then publishes the batch to readers.
    /// Must run inside [`Db::mutation`], which poisons the handle when this fails part-way.
    pub(super) fn commit(&self, w: &mut Writer, mut pend: Pending, mut parts: Parts<'_>, moved: Vec<(u64, ShingleLoc)>) -> Result<()> {
        pend.new_docs.retain(|p| p.alive);
        let segments_change = !(pend.seg_created.is_empty() && pend.seg_lengths.is_empty() && pend.seg_dropped.is_empty());
        if pend.new_docs.is_empty()
            && pend.deleted.is_empty()
            && pend.regroup.is_empty()
            && pend.edges_added.is_empty()
            && moved.is_empty()
            && !segments_change
            && !pend.side_changed
        {
            return Ok(());
        }
        let records: Vec<(u64, &[u32])> = pend.new_docs.iter().map(|p| (p.id, p.fp.shingles.as_slice())).collect();
        let mut appended = w.segw.append(&records)?;
        // The segment's fsync runs while the batch is built; the WAL write waits for it below.
        let seg_sync = appended.sync.take();
        let b = self.build_batch(w, &pend, &mut parts, &moved, &appended)?;
        self.write_batch(b, seg_sync)?;
        self.publish(w, pend, parts, moved, appended)?;
        self.after_publish(w);
        Ok(())
    }

    fn batch_cfs(&self) -> Result<BatchCfs<'_>> {
        Ok(BatchCfs {
            docs: self.cf(CF_DOCS)?,
            keys: self.cf(CF_KEYS)?,
            edges: self.cf(CF_EDGES)?,
            meta: self.cf(CF_META)?,
            tables: (0..self.inner.layout.tables() as usize)
                .map(|i| self.cf(&table_cf(self.inner.table_gen, i)))
                .collect::<Result<_>>()?,
        })
    }

    /// The batch's one `WriteBatch`, built against the published state: the deletes, the new
    /// documents, the edges, the rewritten records, the segment lengths and the id counter, the
    /// side indexes' keys.
    fn build_batch(
        &self,
        w: &Writer,
        pend: &Pending,
        parts: &mut Parts<'_>,
        moved: &[(u64, ShingleLoc)],
        appended: &Appended,
    ) -> Result<WriteBatch> {
        let cfs = self.batch_cfs()?;
        let mut b = WriteBatch::default();
        let st = self.inner.state.read();
        self.batch_deletes(&st, pend, &cfs, &mut b)?;
        for &(a, c) in &pend.edges_removed {
            b.delete_cf(cfs.edges, edge_key(a, c));
            b.delete_cf(cfs.edges, edge_key(c, a));
        }
        self.batch_new_docs(pend, &appended.locs, &cfs, &mut b)?;
        batch_edges(&st, pend, &cfs, &mut b);
        self.batch_rewrites(&st, pend, moved, &cfs, &mut b)?;
        for &(seg, len) in appended.lengths.iter().chain(&pend.seg_lengths) {
            b.put_cf(cfs.meta, seg_key(seg), len.to_le_bytes());
        }
        for &seg in &pend.seg_dropped {
            b.delete_cf(cfs.meta, seg_key(seg));
        }
        b.put_cf(cfs.meta, b"next_doc", w.next_id.to_le_bytes());
        parts.each(|p| p.write(&self.inner, &st, pend, &mut b))?;
        Ok(b)
    }

    /// The deleted (or replaced) documents' records, keys and table entries (their side-index
    /// entries: `BatchPart::write`).
    fn batch_deletes(&self, st: &State, pend: &Pending, cfs: &BatchCfs, b: &mut WriteBatch) -> Result<()> {
        let layout = &self.inner.layout;
        let mut tdel: Vec<Vec<[u8; 16]>> = vec![Vec::new(); cfs.tables.len()];
        for &id in &pend.deleted {
            let Some(m) = st.docs.get(&id) else {
                self.batch_delete_damaged(id, cfs, b)?;
                continue;
            };
            b.delete_cf(cfs.docs, doc_key(id));
            b.delete_cf(cfs.keys, m.key.as_bytes());
            for (i, t) in tdel.iter_mut().enumerate() {
                t.push(table_key(layout, i, m.simhash, id));
            }
        }
        for k in &pend.deleted_keys {
            b.delete_cf(cfs.keys, k.as_bytes());
        }
        for (t, cf) in tdel.into_iter().zip(&cfs.tables) {
            sorted_into(b, cf, t, false);
        }
        Ok(())
    }

    /// A damaged record (left out at open): removes it and whatever table entries name it (found by
    /// scans).
    fn batch_delete_damaged(&self, id: u64, cfs: &BatchCfs, b: &mut WriteBatch) -> Result<()> {
        b.delete_cf(cfs.docs, doc_key(id));
        for (i, cf) in cfs.tables.iter().enumerate() {
            for item in self.inner.rocks.iterator_cf(*cf, IteratorMode::Start) {
                let (k, _) = item.map_err(self.rocks_err("scan table"))?;
                if decode_table_key(&self.inner.layout, i, &k).is_some_and(|(_, d)| d == id) {
                    b.delete_cf(*cf, k);
                }
            }
        }
        Ok(())
    }

    /// The new documents' records, keys and (without the mirror) table entries. With the mirror, their table entries wait in the table tail
    /// (`db::background::table_tail`); a delete's tombstones are written wherever its entries are.
    fn batch_new_docs(&self, pend: &Pending, locs: &[ShingleLoc], cfs: &BatchCfs, b: &mut WriteBatch) -> Result<()> {
        let layout = &self.inner.layout;
        let table_tail = self.inner.opts.mirror;
        let mut tput: Vec<Vec<[u8; 16]>> = vec![Vec::with_capacity(pend.new_docs.len()); cfs.tables.len()];
        let mut kput: Vec<(&[u8], [u8; 8])> = Vec::with_capacity(pend.new_docs.len());
        let now = now_ms();
        for (p, loc) in pend.new_docs.iter().zip(locs) {
            let rec = DocRecord {
                key: p.key.clone(),
                simhash: p.fp.simhash,
                segment: loc.segment,
                offset: loc.offset,
                count: loc.count,
                group: pend.regroup.get(&p.id).copied().unwrap_or(p.group),
                inserted_at_ms: now,
                meta: p.meta.clone(),
                biblio: p.biblio.clone(),
            };
            b.put_cf(cfs.docs, doc_key(p.id), doc_record::encode_doc(&rec)?);
            kput.push((p.key.as_bytes(), key_value(p.id)));
            if !table_tail {
                for (i, t) in tput.iter_mut().enumerate() {
                    t.push(table_key(layout, i, p.fp.simhash, p.id));
                }
            }
        }
        kput.sort_unstable();
        for (k, v) in &kput {
            b.put_cf(cfs.keys, k, v);
        }
        for (t, cf) in tput.into_iter().zip(&cfs.tables) {
            sorted_into(b, cf, t, true);
        }
        Ok(())
    }

    /// Committed documents whose group or location changed: their records rewritten.
    fn batch_rewrites(&self, st: &State, pend: &Pending, moved: &[(u64, ShingleLoc)], cfs: &BatchCfs, b: &mut WriteBatch) -> Result<()> {
        let new_ids: HashSet<u64> = pend.new_docs.iter().map(|p| p.id).collect();
        let record = |id: u64| {
            self.read_record(id)?
                .ok_or_else(|| Error::corrupt(&self.inner.rocks_path, Some(id), "live doc has no record"))
        };
        let mut rewrite: IntMap<u64, DocRecord> = IntMap::default();
        for (&id, &g) in &pend.regroup {
            if new_ids.contains(&id) || pend.deleted.contains(&id) || !st.docs.contains_key(&id) {
                continue;
            }
            let mut r = record(id)?;
            r.group = g;
            rewrite.insert(id, r);
        }
        for &(id, loc) in moved {
            let r = match rewrite.get_mut(&id) {
                Some(r) => r,
                None => rewrite.entry(id).or_insert(record(id)?),
            };
            r.segment = loc.segment;
            r.offset = loc.offset;
            r.count = loc.count;
        }
        for (id, r) in &rewrite {
            b.put_cf(cfs.docs, doc_key(*id), doc_record::encode_doc(r)?);
        }
        Ok(())
    }

    /// Writes the batch (after the segment's fsync): from here it is durable (with sync on).
    fn write_batch(&self, b: WriteBatch, seg_sync: Option<SegmentSync>) -> Result<()> {
        let mut wo = WriteOptions::default();
        wo.set_sync(self.inner.opts.sync);
        if let Some(sync) = seg_sync {
            sync.wait()?;
        }
        failpoint!("wal.write");
        self.inner.rocks.write_opt(b, &wo).map_err(self.rocks_err("commit batch"))?;
        failpoint!("batch.commit");
        failpoint::pause_point("batch.publish");
        Ok(())
    }

    /// Publishes a committed batch to readers: the new segments opened, then under the state's
    /// write lock the side indexes, the segments, the deletes, the new documents, the regrouped
    /// and moved documents, the id counter and the groups.
    fn publish(&self, w: &mut Writer, pend: Pending, parts: Parts<'_>, moved: Vec<(u64, ShingleLoc)>, appended: Appended) -> Result<()> {
        let mut readers = Vec::new();
        for &id in appended.created.iter().chain(pend.seg_created.iter()) {
            readers.push(w.segw.reader(id, Some(id) != w.segw.active())?);
        }
        for &id in &appended.sealed {
            readers.push(w.segw.reader(id, true)?);
        }
        let mut st = self.inner.state.write();
        // Cleared at the end: a stop in between leaves it set for readers (`State::whole`).
        st.torn = true;
        st.published_seq = self.inner.rocks.latest_sequence_number();
        parts.publish(&mut st, &pend)?;
        for r in readers {
            st.segs.insert(r);
        }
        for &(seg, len) in appended.lengths.iter().chain(&pend.seg_lengths) {
            st.seg_usage.entry(seg).or_insert((0, 0)).0 = len;
        }
        self.publish_deletes(&mut st, w, &pend.deleted);
        failpoint::panic_point("batch.publish.mid");
        let Pending {
            new_docs,
            regroup,
            seg_dropped,
            touched_groups,
            ..
        } = pend;
        self.publish_new_docs(&mut st, w, new_docs, appended.locs, &regroup);
        for (id, g) in regroup {
            if let Some(m) = st.docs.get_mut(&id) {
                m.group = g;
            }
        }
        publish_moves(&mut st, moved);
        for seg in &seg_dropped {
            st.segs.remove(*seg);
            st.seg_usage.remove(seg);
        }
        st.next_id = w.next_id;
        while st.recent_ids.len() > RECENT_CAP {
            st.recent_ids.pop_front();
            st.recent_fps.pop_front();
            st.recent_floor = st.recent_ids.front().copied().unwrap_or(st.next_id);
        }
        for g in touched_groups {
            match w.members.get(&g) {
                Some(m) => st.members.insert(g, m.clone()),
                None => st.members.remove(&g),
            };
        }
        st.torn = false;
        Ok(())
    }

    /// The deleted documents leave the state (and, at or above the table floor, the table tail's
    /// next write: `db::background::table_tail`).
    fn publish_deletes(&self, st: &mut State, w: &mut Writer, deleted: &HashSet<u64>) {
        let table_tail = self.inner.opts.mirror;
        for id in deleted {
            if table_tail && *id >= w.table_floor {
                w.table_dead.insert(*id);
            }
            if let Some(m) = st.docs.remove(id) {
                if let Some(t) = st.tables.as_mut() {
                    t.remove(m.simhash, *id);
                }
                if let Some(u) = st.seg_usage.get_mut(&m.loc.segment) {
                    u.1 = u.1.saturating_sub(st.segs.record_len(m.loc));
                }
            }
        }
    }

    /// The new documents enter the state (the mirror, the recent documents, the segments' live
    /// bytes) and, with the mirror, the table tail.
    fn publish_new_docs(
        &self,
        st: &mut State,
        w: &mut Writer,
        new_docs: Vec<PendingDoc>,
        locs: Vec<ShingleLoc>,
        regroup: &IntMap<u64, u64>,
    ) {
        let table_tail = self.inner.opts.mirror;
        for (p, loc) in new_docs.into_iter().zip(locs) {
            if let Some(t) = st.tables.as_mut() {
                t.insert(p.fp.simhash, p.id);
            }
            if table_tail {
                w.table_tail.push((p.id, p.fp.simhash));
            }
            st.recent_ids.push_back(p.id);
            st.recent_fps.push_back(p.fp.simhash);
            if let Some(u) = st.seg_usage.get_mut(&loc.segment) {
                u.1 += st.segs.record_len(loc);
            }
            let group = regroup.get(&p.id).copied().unwrap_or(p.group);
            st.docs.insert(
                p.id,
                DocMeta {
                    key: p.key.into(),
                    simhash: p.fp.simhash,
                    loc,
                    group,
                },
            );
        }
    }

    /// The background work a commit drives once its batch is durable and published (every piece
    /// of `Inner::background`, in order). A failure there is not the batch's (it is stored and
    /// visible, and reported so): it poisons the handle, and the next call says why.
    fn after_publish(&self, w: &mut Writer) {
        let r = self.inner.background().try_for_each(|b| b.after_commit(&self.inner.view(), w));
        if let Err(e) = r {
            if w.poisoned.is_none() {
                w.poisoned = Some(format!("background work after a commit: {e}"));
            }
        }
    }
}

/// The edges the batch added whose two ends are alive at its end (committed and not deleted, or new
/// and not replaced since).
fn batch_edges(st: &State, pend: &Pending, cfs: &BatchCfs, b: &mut WriteBatch) {
    let new_ids: HashSet<u64> = pend.new_docs.iter().map(|p| p.id).collect();
    let alive = |id: u64| new_ids.contains(&id) || (st.docs.contains_key(&id) && !pend.deleted.contains(&id));
    for &(a, c) in &pend.edges_added {
        if alive(a) && alive(c) {
            b.put_cf(cfs.edges, edge_key(a, c), []);
            b.put_cf(cfs.edges, edge_key(c, a), []);
        }
    }
}

/// Compacted documents move to their new segment (the live bytes of both segments follow).
fn publish_moves(st: &mut State, moved: Vec<(u64, ShingleLoc)>) {
    for (id, loc) in moved {
        if let Some(m) = st.docs.get_mut(&id) {
            if let Some(u) = st.seg_usage.get_mut(&m.loc.segment) {
                u.1 = u.1.saturating_sub(st.segs.record_len(m.loc));
            }
            m.loc = loc;
        }
        if let Some(u) = st.seg_usage.get_mut(&loc.segment) {
            u.1 += st.segs.record_len(loc);
        }
    }
}
