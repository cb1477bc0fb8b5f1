//! Compaction: rewriting segments whose dead share is high (one commit repoints the moved records),
//! and settling RocksDB (flush, full compaction).

use std::fs;

use crate::error::{Error, Result};
use crate::store::segment;
use crate::store::ShingleLoc;

use super::commit::Pending;
use super::types::CompactStats;
use super::Db;

impl Db {
    /// Rewrites segments whose dead share is at least `min_dead` (0.0..=1.0) and reclaims their bytes.
    pub fn compact(&self, min_dead: f64) -> Result<CompactStats> {
        let mut w = self.lock_writer()?;
        let mut stats = CompactStats::default();
        let (victims, moved_records) = {
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
            let mut recs: Vec<(u64, Vec<u32>)> = Vec::new();
            let mut ids: Vec<(u64, ShingleLoc)> = st
                .docs
                .iter()
                .filter(|(_, m)| victims.contains(&m.loc.segment))
                .map(|(&id, m)| (id, m.loc))
                .collect();
            ids.sort_unstable_by_key(|&(id, _)| id);
            for (id, loc) in ids {
                recs.push((id, st.segs.read(loc, id)?.into_owned()));
            }
            for v in &victims {
                let (len, live) = st.seg_usage[v];
                stats.bytes_reclaimed += len - live - segment::FILE_HEADER.min(len - live);
            }
            (victims, recs)
        };
        if victims.is_empty() {
            return Ok(stats);
        }
        Self::mutation(&mut w, "compaction", |w| {
            if victims.iter().any(|&v| Some(v) == w.segw.active()) {
                w.segw.seal_active();
            }
            let mut pend = Pending::default();
            let mut moved = Vec::new();
            if !moved_records.is_empty() {
                let refs: Vec<(u64, &[u32])> = moved_records.iter().map(|(id, s)| (*id, s.as_slice())).collect();
                let (seg, locs, len) = w.segw.write_compacted(&refs)?;
                pend.seg_created.push(seg);
                pend.seg_lengths.push((seg, len));
                moved = moved_records.iter().map(|(id, _)| *id).zip(locs).collect();
            }
            pend.seg_dropped = victims.clone();
            stats.records_moved = moved.len() as u64;
            stats.segments_rewritten = victims.len() as u64;
            self.commit(w, pend, moved)
        })?;
        drop(w);
        let dir = self.inner.path.join("segments");
        for v in victims {
            let p = dir.join(segment::file_name(v));
            match fs::remove_file(&p) {
                Ok(()) => {}
                // Already gone: the unlink is idempotent (its committed length is dropped either way).
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("remove compacted segment", &p, e)),
            }
        }
        Ok(stats)
    }

    /// Flushes RocksDB memtables to SST files (optional; the WAL already makes commits durable).
    pub fn flush(&self) -> Result<()> {
        for name in self.inner.column_families() {
            self.inner.rocks.flush_cf(self.cf(&name)?).map_err(self.rocks_err("flush"))?;
        }
        Ok(())
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
