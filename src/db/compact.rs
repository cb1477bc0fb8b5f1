//! Compaction: rewriting segments whose dead share is high (one commit repoints the moved records),
//! and settling RocksDB (flush, full compaction).

use std::fs;

use crate::error::{Error, Result};
use crate::failpoint;
use crate::store::segment::{self, SegmentSet};
use crate::store::ShingleLoc;

use super::handle::Db;
use super::pending::Pending;
use super::side::Parts;
use super::state::Writer;
use super::types::CompactStats;

/// What a compaction rewrites, taken under the state's read lock: the victim segments, their live
/// records (`(id, location)`, in id order) and the segment readers to copy them from (`Arc`s).
struct Plan {
    victims: Vec<u32>,
    live: Vec<(u64, ShingleLoc)>,
    segs: SegmentSet,
}

impl Db {
    /// Rewrites segments whose dead share is at least `min_dead` (0.0..=1.0) and reclaims their
    /// bytes. Streamed: the live records are copied into new segments of the normal size
    /// (`Options::segment_size`), one segment's worth in memory at a time, with no state lock held
    /// (queries go on); one commit then repoints the moved records and drops the victims. Writes
    /// wait for it (the writer lock is held throughout).
    pub fn compact(&self, min_dead: f64) -> Result<CompactStats> {
        let mut w = self.lock_writer()?;
        let mut stats = CompactStats::default();
        let plan = self.compaction_plan(min_dead, &mut stats);
        if plan.victims.is_empty() {
            return Ok(stats);
        }
        Self::mutation(&mut w, "compaction", |w| {
            if plan.victims.iter().any(|&v| Some(v) == w.segw.active()) {
                w.segw.seal_active();
            }
            let mut pend = Pending::default();
            let moved = self.copy_live(w, &plan, &mut pend)?;
            pend.seg_dropped = plan.victims.clone();
            stats.records_moved = moved.len() as u64;
            stats.segments_rewritten = plan.victims.len() as u64;
            self.commit(w, pend, Parts::begin(&self.inner.sides), moved)?;
            // The victims' files may go only once the commit that stops naming them is durable:
            // with sync off it is not yet, and a power cut that lost it while the files were gone
            // would leave doc records naming missing segments.
            self.sync_wal()
        })?;
        drop(w);
        self.remove_segments(&plan.victims)?;
        Ok(stats)
    }

    /// The segments whose dead share is at least `min_dead`, their live records and the bytes
    /// their rewrite reclaims (into `stats`).
    fn compaction_plan(&self, min_dead: f64, stats: &mut CompactStats) -> Plan {
        let st = self.inner.state.read();
        let mut victims: Vec<u32> = st
            .seg_usage
            .iter()
            .filter(|(_, &(len, live))| {
                let data = len.saturating_sub(segment::FILE_HEADER);
                data > 0 && (data - live.min(data)) as f64 >= min_dead * data as f64 && live < data
            })
            .map(|(&id, _)| id)
            .collect();
        victims.sort_unstable();
        let mut live: Vec<(u64, ShingleLoc)> = st
            .docs
            .iter()
            .filter(|(_, m)| victims.binary_search(&m.loc.segment).is_ok())
            .map(|(&id, m)| (id, m.loc))
            .collect();
        live.sort_unstable_by_key(|&(id, _)| id);
        for v in &victims {
            let (len, live) = st.seg_usage[v];
            stats.bytes_reclaimed += len - live - segment::FILE_HEADER.min(len - live);
        }
        Plan {
            victims,
            live,
            segs: st.segs.clone(),
        }
    }

    /// Copies the plan's live records into new segments of at most `Options::segment_size` bytes
    /// (a single larger record gets a segment of its own), holding one segment's records at a
    /// time; records the new segments in `pend`. Returns each record's new location.
    fn copy_live(&self, w: &mut Writer, plan: &Plan, pend: &mut Pending) -> Result<Vec<(u64, ShingleLoc)>> {
        let target = self.inner.opts.segment_size.saturating_sub(segment::FILE_HEADER);
        let mut moved = Vec::with_capacity(plan.live.len());
        let mut chunk: Vec<(u64, Vec<u32>)> = Vec::new();
        let mut bytes = 0u64;
        let mut write = |chunk: &mut Vec<(u64, Vec<u32>)>, w: &mut Writer| -> Result<()> {
            if chunk.is_empty() {
                return Ok(());
            }
            let refs: Vec<(u64, &[u32])> = chunk.iter().map(|(id, s)| (*id, s.as_slice())).collect();
            let (seg, locs, len) = w.segw.write_compacted(&refs)?;
            pend.seg_created.push(seg);
            pend.seg_lengths.push((seg, len));
            moved.extend(chunk.drain(..).map(|(id, _)| id).zip(locs));
            Ok(())
        };
        for &(id, loc) in &plan.live {
            // The copies are written at the current segment format, whatever the source's.
            let len = loc.record_len(segment::FORMAT_VERSION);
            if bytes + len > target {
                write(&mut chunk, w)?;
                bytes = 0;
            }
            failpoint::pause_point("compact.copy");
            chunk.push((id, plan.segs.read(loc, id)?.into_owned()));
            bytes += len;
        }
        write(&mut chunk, w)?;
        Ok(moved)
    }

    /// Removes compacted segments' files (their committed lengths are already dropped).
    fn remove_segments(&self, victims: &[u32]) -> Result<()> {
        let dir = self.inner.path.join("segments");
        for v in victims {
            let p = dir.join(segment::file_name(*v));
            match fs::remove_file(&p) {
                Ok(()) => {}
                // Already gone: the unlink is idempotent (its committed length is dropped either way).
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("remove compacted segment", &p, e)),
            }
        }
        Ok(())
    }

    /// Makes every commit so far durable: with sync off, syncs RocksDB's WAL (with sync on, each
    /// commit already was).
    fn sync_wal(&self) -> Result<()> {
        crate::failpoint!("compact.durable");
        if !self.inner.opts.sync {
            self.inner.rocks.flush_wal(true).map_err(self.rocks_err("sync the WAL"))?;
        }
        Ok(())
    }

    /// Writes what the handle holds in memory to files, as a clean close does: the side indexes'
    /// tails (the containment index's: one ingested SST file), the table tail (one per table, `db::background::table_tail`) and
    /// RocksDB's memtables, two column families at a time. Optional — the WAL (and the stored
    /// shingle sets and doc records, for the tails) already make every commit durable — but it takes the close's work out of the drop, so that a bulk load can time and
    /// report it, and the next open neither replays the WAL nor re-derives the tail. A failure
    /// writing the tail poisons the handle, as a failed commit does.
    pub fn flush(&self) -> Result<()> {
        {
            let mut w = self.lock_writer()?;
            Self::mutation(&mut w, "flush", |w| {
                self.inner.background().try_for_each(|b| b.flush(&self.inner.view(), w))
            })?;
        }
        self.inner.flush_memtables()
    }

    /// Flushes and fully compacts every RocksDB column family, the containment index's included,
    /// then returns: the settled state a long-running database reaches (for benchmarks, and after
    /// bulk loads: the containment index keeps up to 16 ingested runs unmerged, which its searches
    /// then seek one by one).
    pub fn compact_index(&self) -> Result<()> {
        self.flush()?;
        for name in self.inner.column_families() {
            self.inner.rocks.compact_range_cf(self.cf(&name)?, None::<&[u8]>, None::<&[u8]>);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{ContainmentConfig, CreateOptions, Db, Error, Options};

    /// Entries in each column family's memtables (active and immutable).
    fn memtable_entries(db: &Db) -> Vec<(String, u64)> {
        db.inner
            .column_families()
            .into_iter()
            .map(|n| {
                let cf = db.cf(&n).unwrap();
                let count = |p: &str| db.inner.rocks.property_int_value_cf(cf, p).unwrap().unwrap_or(0);
                let e = count("rocksdb.num-entries-active-mem-table") + count("rocksdb.num-entries-imm-mem-tables");
                (n, e)
            })
            .collect()
    }

    fn text(i: usize) -> String {
        (0..80)
            .map(|j| format!("w{}", (i * 37 + j * 13 + j * j) % 900))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// `Db::flush` does the close's work: every column family's memtable is flushed (side by side,
    /// `Inner::flush_memtables`), and the containment tail and the table tail are written to
    /// RocksDB (both floors move to the next doc id). A read-only handle refuses it.
    #[test]
    fn flush_empties_every_memtable_and_writes_both_tails() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        // The tail is never written before a flush or the close.
        let opts = Options {
            contain_tail_postings: usize::MAX,
            ..Options::default()
        };
        let create = CreateOptions::default().with_containment(Some(ContainmentConfig::new(4)));
        let db = Db::create_with(&path, &create, opts).unwrap();
        for i in 0..30 {
            db.insert(&format!("k{i}"), &text(i)).unwrap();
        }
        let before = memtable_entries(&db);
        let is_table = |n: &str| crate::store::keys::parse_table_cf(n).is_some();
        assert!(before.iter().filter(|(n, _)| is_table(n)).count() >= 2, "{before:?}");
        assert!(
            before.iter().filter(|(n, e)| !is_table(n) && *e > 0).count() >= 3,
            "docs, keys and meta hold entries: {before:?}"
        );
        assert!(
            before.iter().all(|(n, e)| !is_table(n) || *e == 0),
            "with the mirror, the table entries wait in the table tail: {before:?}"
        );
        {
            let w = db.inner.writer.lock();
            assert_eq!((w.table_tail.len(), w.table_floor), (30, 0));
        }
        {
            let (active_empty, floor) = db.contain_tail_of_test();
            assert!(!active_empty && floor == 0, "the postings are in the tail");
        }
        db.flush().unwrap();
        let after = memtable_entries(&db);
        assert!(after.iter().all(|(_, e)| *e == 0), "{after:?}");
        {
            let (active_empty, floor) = db.contain_tail_of_test();
            let st = db.inner.state.read();
            assert!(active_empty, "the tail was written");
            assert_eq!(floor, st.next_id, "the floor moved past every document");
            let w = db.inner.writer.lock();
            assert!(w.table_tail.is_empty() && w.table_floor == st.next_id, "the table tail was written");
        }
        let rep = db.check().unwrap();
        assert!(rep.faults.is_empty(), "{:?}", rep.faults);
        assert_eq!(
            rep.table_entries,
            30 * u64::from(db.layout().tables()),
            "every table holds every document"
        );
        drop(db);
        let ro = Db::open_with(
            &path,
            Options {
                read_only: true,
                ..Options::default()
            },
        )
        .unwrap();
        assert!(matches!(ro.flush(), Err(Error::ReadOnly { .. })));
    }
}
