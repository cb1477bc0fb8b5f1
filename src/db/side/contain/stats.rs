//! The containment index's counters (`fpdb stats`): a scan of its live entries below the floor,
//! list by list, then the tail's.

use rocksdb::IteratorMode;

use crate::error::{Error, Result};
use crate::fingerprint::containment::KeyKind;
use crate::store::doc_record::ContainmentConfig;
use crate::store::keys::{decode_contain_key, CF_CONTAIN};

use super::api::ContainmentIndex;
use super::mem::ContainMem;
use super::search::scan_contain;
use crate::db::handle::Db;
use crate::db::state::State;
use crate::db::types::ContainmentStats;

impl Db {
    /// [`ContainmentIndex::stats`] of one state: a scan of the index's live entries below the
    /// floor, list by list, then the tail's.
    fn contain_stats_of(&self, st: &State, mem: &ContainMem, cfg: ContainmentConfig) -> Result<ContainmentStats> {
        let tail = &mem.tail;
        let live = live_below_floor(st, mem.tail.floor);
        let mut scan = StatsScan::new(cfg, st.next_id);
        let mut in_both: std::collections::HashSet<(KeyKind, u32)> = std::collections::HashSet::new();
        let mut cur: Option<(KeyKind, u32)> = None;
        let mut len = 0u64;
        // A list's length: RocksDB's live entries below the floor, then the tail's.
        let mut end_list = |scan: &mut StatsScan, cur: Option<(KeyKind, u32)>, len: u64| {
            let from_tail = cur.map_or(0, |(kind, sh)| tail.list(kind, sh).count()) as u64;
            if from_tail > 0 {
                in_both.extend(cur);
            }
            scan.close(len + from_tail);
        };
        for item in scan_contain(&self.inner.rocks, self.cf(CF_CONTAIN)?, IteratorMode::Start) {
            let (k, _) = item.map_err(self.rocks_err("scan containment index"))?;
            let Some((kind, sh, id)) = decode_contain_key(&k) else {
                return Err(Error::corrupt(
                    &self.inner.rocks_path,
                    None,
                    format!("containment key {k:?} does not decode"),
                ));
            };
            if !live.get(id) {
                continue;
            }
            if cur != Some((kind, sh)) {
                end_list(&mut scan, cur, len);
                cur = Some((kind, sh));
                len = 0;
            }
            len += 1;
            scan.count(kind, id);
        }
        end_list(&mut scan, cur, len);
        for (kind, sh) in tail.keys() {
            let mut n = 0u64;
            for (id, _) in tail.list(kind, sh) {
                scan.count(kind, id);
                n += 1;
            }
            if !in_both.contains(&(kind, sh)) {
                scan.close(n);
            }
        }
        Ok(scan.finish())
    }
}

impl ContainmentIndex<'_> {
    /// The containment index's counters (a scan of the index and the tail; `None` without one).
    pub fn stats(&self) -> Result<Option<ContainmentStats>> {
        let Some(cfg) = self.db.inner.config.containment else {
            return Ok(None);
        };
        let side = self.db.contain_side()?;
        self.db.read_rocks(|st| self.db.contain_stats_of(st, &side.mem(), cfg)).map(Some)
    }
}

/// A set of doc ids below a bound, one bit each (ids at or above the bound are never members).
struct IdBits(Vec<u64>);

/// The live documents below the containment floor. Doc ids are below `next_id`: bit sets (1 bit
/// per id ever allocated) instead of hash lookups for every entry of a full scan (135M entries at
/// 10M documents).
fn live_below_floor(st: &State, floor: u64) -> IdBits {
    let mut live = IdBits::new(st.next_id);
    for &id in st.docs.keys() {
        if id < floor {
            live.set(id);
        }
    }
    live
}

/// [`ContainmentIndex::stats`]'s counters while it scans the index list by list.
struct StatsScan {
    s: ContainmentStats,
    sampled: IdBits,
    short: IdBits,
}

impl StatsScan {
    fn new(cfg: ContainmentConfig, next_id: u64) -> Self {
        StatsScan {
            s: ContainmentStats {
                sample: cfg.sample,
                max_postings: cfg.max_postings,
                max_samples: cfg.max_samples,
                ..ContainmentStats::default()
            },
            sampled: IdBits::new(next_id),
            short: IdBits::new(next_id),
        }
    }

    /// One entry of document `id` under a key of `kind`.
    fn count(&mut self, kind: KeyKind, id: u64) {
        self.s.entries += 1;
        if kind == KeyKind::Short {
            self.s.short_entries += 1;
            self.short.set(id);
        } else {
            self.sampled.set(id);
        }
    }

    /// The end of one key's list of `len` live entries.
    fn close(&mut self, len: u64) {
        let s = &mut self.s;
        if len > 0 {
            s.keys += 1;
            s.longest_posting = s.longest_posting.max(len);
            if len > u64::from(s.max_postings) {
                s.frequent_keys += 1;
                s.frequent_entries += len;
            }
        }
    }

    fn finish(mut self) -> ContainmentStats {
        self.s.sampled_docs = self.sampled.count();
        self.s.short_docs = self.short.count();
        self.s
    }
}

impl IdBits {
    fn new(bound: u64) -> Self {
        IdBits(vec![0; usize::try_from(bound.div_ceil(64)).unwrap_or(0)])
    }

    #[inline]
    fn set(&mut self, id: u64) {
        if let Some(w) = usize::try_from(id / 64).ok().and_then(|i| self.0.get_mut(i)) {
            *w |= 1 << (id % 64);
        }
    }

    #[inline]
    fn get(&self, id: u64) -> bool {
        usize::try_from(id / 64)
            .ok()
            .and_then(|i| self.0.get(i))
            .is_some_and(|w| w >> (id % 64) & 1 == 1)
    }

    fn count(&self) -> u64 {
        self.0.iter().map(|w| u64::from(w.count_ones())).sum()
    }
}
