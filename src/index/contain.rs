//! The containment index's candidate search (the keys: [`crate::fingerprint::containment`]; the
//! bytes: `contain_key` in [`crate::store::keys`]).
//!
//! * [`RocksContain`] — the durable index, column family `contain`: one posting list per
//!   `kind ‖ shingle` prefix, read with one raw iterator seeking the sorted probes; plus the
//!   **tail**, the postings of the documents with ids at or above the *floor*, held in memory
//!   ([`Postings`]) until they are written to RocksDB as one sorted SST file (`db::side::contain`). The
//!   search reads RocksDB's entries below the floor and the tail's above it, so an entry left in
//!   RocksDB above the floor (a flush that stopped before it moved the floor) is never counted twice.
//! * [`ShortKeys`] — in memory: which shingles are keys of short documents (with a count per
//!   shingle so deletes can be applied). Loaded at open from the short key range; it lets a query
//!   probe *every* one of its shingles against the short documents without a seek per shingle.
//! * [`MemContain`] — an in-memory index of the same rule, for the documents of a batch not yet
//!   committed (its lists are [`Postings`] too).
//!
//! **Frequent keys.** A posting list longer than the cap (`max_postings`) is boilerplate (a licence
//! header in every file): reading and verifying it would make one query cost as much as the whole
//! database, so the search skips it and counts it. Candidates through other keys are still found;
//! a document whose only shared keys are all frequent is not.
//!
//! Invariant: the candidates are exactly the documents holding a probed key whose list is within
//! the cap, a list being RocksDB's entries below the floor and the tail's (tested against brute
//! force below, with the documents split between RocksDB and the tail at every floor).

use std::path::Path;

use rocksdb::{ColumnFamily, DB};

use crate::error::{Error, Result};
use crate::fingerprint::containment::{probes, stored_keys, KeyKind, Sampling};
use crate::intmap::IntMap;
use crate::store::keys::{be_u64, contain_key, contain_prefix, decode_contain_value};

/// Which shingles are keys of short documents, with the number of short documents holding each.
#[derive(Clone, Debug, Default)]
pub(crate) struct ShortKeys {
    counts: IntMap<u32, u32>,
}

impl ShortKeys {
    /// Adds the keys of one short document.
    pub(crate) fn add(&mut self, keys: &[u32]) {
        for &k in keys {
            *self.counts.entry(k).or_insert(0) += 1;
        }
    }

    /// Removes the keys of one short document.
    pub(crate) fn remove(&mut self, keys: &[u32]) {
        for k in keys {
            if let Some(c) = self.counts.get_mut(k) {
                *c -= 1;
                if *c == 0 {
                    self.counts.remove(k);
                }
            }
        }
    }

    /// True when some short document has the key `k`.
    #[inline]
    pub(crate) fn contains(&self, k: u32) -> bool {
        self.counts.contains_key(&k)
    }

    /// `(key, count)` pairs, unordered.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.counts.iter().map(|(&k, &c)| (k, c))
    }
}

/// Posting lists in memory: per `kind ‖ shingle` key, the documents holding it with their number of
/// keys. The postings live in one arena, linked per key (newest first), so adding a document
/// allocates nothing per key; ~42 bytes per posting (24 in the arena, the key's map slot).
#[derive(Clone, Debug, Default)]
pub(crate) struct Postings {
    /// `kind << 32 | shingle` → (first posting in `arena`, list length).
    heads: IntMap<u64, (u32, u32)>,
    arena: Vec<Posting>,
    /// Postings in the lists (the arena also holds removed ones until [`Postings::clear`]).
    live: usize,
}

#[derive(Clone, Copy, Debug)]
struct Posting {
    id: u64,
    /// Its key ([`map_key`]), so that [`Postings::for_each_sorted`] reads the arena in order.
    key: u64,
    /// The document's number of keys (at least 1); 0 marks a posting removed from its list.
    keys: u32,
    /// The next posting of the same key, or [`END`].
    next: u32,
}

const END: u32 = u32::MAX;

/// Bits of a key ([`map_key`]: kind ‖ shingle), and of each digit that
/// [`Postings::for_each_sorted`] radix-sorts the keys by.
const KEY_BITS: u32 = 33;
const DIGIT_BITS: u32 = 8;

#[inline]
fn map_key(kind: KeyKind, s: u32) -> u64 {
    (kind as u64) << 32 | u64::from(s)
}

/// The kind and shingle of a [`map_key`].
#[inline]
fn unmap_key(k: u64) -> Option<(KeyKind, u32)> {
    Some((KeyKind::from_byte((k >> 32) as u8)?, k as u32))
}

impl Postings {
    /// Adds document `id` under each of its `keys` (all of one kind); its value is the number of keys.
    pub(crate) fn add(&mut self, id: u64, kind: KeyKind, keys: &[u32]) -> Result<()> {
        if self.arena.len() + keys.len() >= END as usize {
            return Err(Error::InvalidInput {
                key: None,
                message: format!(
                    "more than {END} containment postings in memory at once ({} held, {} more): commit smaller batches",
                    self.arena.len(),
                    keys.len()
                ),
            });
        }
        let count = keys.len() as u32;
        for &k in keys {
            let i = self.arena.len() as u32;
            let head = self.heads.entry(map_key(kind, k)).or_insert((END, 0));
            self.arena.push(Posting {
                id,
                key: map_key(kind, k),
                keys: count,
                next: head.0,
            });
            *head = (i, head.1 + 1);
        }
        self.live += keys.len();
        Ok(())
    }

    /// Removes document `id` from the lists of `keys` (those it is not in are left alone).
    pub(crate) fn remove(&mut self, id: u64, kind: KeyKind, keys: &[u32]) {
        for &k in keys {
            self.unlink(map_key(kind, k), id);
        }
    }

    /// Removes document `id` from every list (a scan: for a document whose keys are unknown).
    pub(crate) fn remove_everywhere(&mut self, id: u64) {
        let keys: Vec<u64> = self.heads.keys().copied().collect();
        for k in keys {
            self.unlink(k, id);
        }
    }

    fn unlink(&mut self, key: u64, id: u64) {
        let Some(&(head, len)) = self.heads.get(&key) else { return };
        let (mut prev, mut i) = (END, head);
        while i != END {
            let p = self.arena[i as usize];
            if p.id == id {
                self.arena[i as usize].keys = 0;
                if prev == END {
                    if len == 1 {
                        self.heads.remove(&key);
                    } else {
                        self.heads.insert(key, (p.next, len - 1));
                    }
                } else {
                    self.arena[prev as usize].next = p.next;
                    self.heads.insert(key, (head, len - 1));
                }
                self.live -= 1;
                return;
            }
            (prev, i) = (i, p.next);
        }
    }

    /// The number of documents under a key.
    #[inline]
    pub(crate) fn list_len(&self, kind: KeyKind, s: u32) -> usize {
        self.heads.get(&map_key(kind, s)).map_or(0, |h| h.1 as usize)
    }

    /// The documents under a key with their numbers of keys (newest first).
    pub(crate) fn list(&self, kind: KeyKind, s: u32) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.walk(self.heads.get(&map_key(kind, s)).map_or(END, |h| h.0))
    }

    /// The list starting at arena position `head`.
    fn walk(&self, head: u32) -> impl Iterator<Item = (u64, u32)> + '_ {
        let mut i = head;
        std::iter::from_fn(move || {
            let p = self.arena.get(i as usize)?;
            i = p.next;
            Some((p.id, p.keys))
        })
    }

    /// Every key with postings, unordered.
    pub(crate) fn keys(&self) -> impl Iterator<Item = (KeyKind, u32)> + '_ {
        self.heads.keys().filter_map(|&k| unmap_key(k))
    }

    /// Postings held.
    pub(crate) fn len(&self) -> usize {
        self.live
    }

    /// True when no posting is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Every posting as its RocksDB entry, in key order: `f(contain_key, doc id, number of keys)`,
    /// stopping at the first error. The order of `contain_key`'s bytes is the numeric order of
    /// (kind ‖ shingle, id). The arena is read once, in order (following the lists instead was a
    /// cache miss per key: most lists hold one posting): each live posting becomes one `u128`,
    /// `key << 64 | (id − least id) << 32 | keys`, and those are radix-sorted by the key's 33 bits
    /// (stable passes of 8 bits). Within a key they then keep the arena's order, which is
    /// ascending id when ids were added ascending (always, in the engine: batches publish in id
    /// order, the open re-derives in id order); a run of one key that is not is sorted. Ids that
    /// span 2^32 or more take a comparison sort of the postings instead.
    pub(crate) fn for_each_sorted(&self, mut f: impl FnMut(&[u8; 13], u64, u32) -> Result<()>) -> Result<()> {
        let live = || self.arena.iter().filter(|p| p.keys != 0);
        let (lo, hi) = live().fold((u64::MAX, 0), |(lo, hi), p| (lo.min(p.id), hi.max(p.id)));
        if lo > hi {
            return Ok(());
        }
        if hi - lo > u64::from(u32::MAX) {
            let mut all: Vec<(u64, u64, u32)> = live().map(|p| (p.key, p.id, p.keys)).collect();
            all.sort_unstable();
            for (key, id, n) in all {
                let Some((kind, s)) = unmap_key(key) else { continue };
                f(&contain_key(kind, s, id), id, n)?;
            }
            return Ok(());
        }
        let mut v: Vec<u128> = live()
            .map(|p| u128::from(p.key) << 64 | u128::from(p.id - lo) << 32 | u128::from(p.keys))
            .collect();
        radix_sort_keys(&mut v);
        let key_of = |e: u128| (e >> 64) as u64;
        let mut start = 0;
        while start < v.len() {
            let key = key_of(v[start]);
            let end = start + v[start..].iter().take_while(|&&e| key_of(e) == key).count();
            let run = &mut v[start..end];
            if run.windows(2).any(|w| w[0] > w[1]) {
                run.sort_unstable();
            }
            let Some((kind, s)) = unmap_key(key) else {
                start = end;
                continue;
            };
            for &e in run.iter() {
                let id = lo + (e >> 32) as u32 as u64;
                f(&contain_key(kind, s, id), id, e as u32)?;
            }
            start = end;
        }
        Ok(())
    }

    /// [`Postings::for_each_sorted`] collected.
    #[cfg(test)]
    pub(crate) fn sorted_entries(&self) -> Vec<([u8; 13], u32)> {
        let mut out = Vec::with_capacity(self.live);
        let _ = self.for_each_sorted(|k, _, n| {
            out.push((*k, n));
            Ok(())
        });
        out
    }

    /// Drops every posting; the memory is kept for the next fill (the tail refills to the same size).
    pub(crate) fn clear(&mut self) {
        self.heads.clear();
        self.arena.clear();
        self.live = 0;
    }
}

/// Sorts `v` stably by bits 64..97 (a [`map_key`] above the low 64 bits): an LSD radix sort, one
/// pass per digit of [`DIGIT_BITS`], the counts of all digits taken in one read; a digit that is the
/// same in every element (the kind, when no document is short) is not passed over.
fn radix_sort_keys(v: &mut Vec<u128>) {
    const BUCKETS: usize = 1 << DIGIT_BITS;
    const PASSES: usize = KEY_BITS.div_ceil(DIGIT_BITS) as usize;
    let digit = |e: u128, pass: usize| ((e >> (64 + DIGIT_BITS as usize * pass)) as usize) & (BUCKETS - 1);
    let mut counts = vec![[0usize; BUCKETS]; PASSES];
    for &e in v.iter() {
        for (pass, c) in counts.iter_mut().enumerate() {
            c[digit(e, pass)] += 1;
        }
    }
    let mut out = vec![0u128; v.len()];
    for (pass, c) in counts.iter_mut().enumerate() {
        if c.contains(&v.len()) {
            continue; // one bucket holds everything: this pass would not move anything
        }
        let mut sum = 0;
        for n in c.iter_mut() {
            (*n, sum) = (sum, sum + *n);
        }
        for &e in v.iter() {
            let d = digit(e, pass);
            out[c[d]] = e;
            c[d] += 1;
        }
        std::mem::swap(v, &mut out);
    }
}

/// The containment postings held in memory by a database handle: those of the documents with ids
/// at or above `floor` (below it, RocksDB holds them). `active` takes new documents (ids at or
/// above `split`); `frozen` (ids in `floor..split`) is being written to an SST file by a background
/// job and no longer changes, so a document of it deleted meanwhile is listed in `frozen_dead`
/// and skipped.
#[derive(Debug, Default)]
pub(crate) struct Tail {
    /// Documents below this id have their postings in RocksDB.
    pub floor: u64,
    /// First id of `active` (equal to `floor` when nothing is frozen).
    pub split: u64,
    /// The postings being written, if any.
    pub frozen: Option<std::sync::Arc<Postings>>,
    /// Documents of `frozen` deleted since it froze.
    pub frozen_dead: std::collections::HashSet<u64>,
    /// The postings of the documents from `split` on.
    pub active: Postings,
    /// An emptied frozen part, kept to be the next active one (its memory already mapped).
    pub spare: Postings,
}

impl Tail {
    /// An empty tail at `floor`.
    pub(crate) fn new(floor: u64, active: Postings) -> Tail {
        Tail {
            floor,
            split: floor,
            active,
            ..Tail::default()
        }
    }

    /// Removes document `id`'s postings under `keys` (or under every key, for `None`).
    pub(crate) fn remove(&mut self, id: u64, keys: Option<(KeyKind, &[u32])>) {
        if id >= self.split {
            match keys {
                Some((kind, keys)) => self.active.remove(id, kind, keys),
                None => self.active.remove_everywhere(id),
            }
        } else if id >= self.floor && self.frozen.is_some() {
            self.frozen_dead.insert(id);
        }
    }

    /// The live documents under a key, frozen then active.
    pub(crate) fn list(&self, kind: KeyKind, s: u32) -> impl Iterator<Item = (u64, u32)> + '_ {
        let frozen = self.frozen.as_deref().into_iter().flat_map(move |f| f.list(kind, s));
        frozen
            .filter(|(id, _)| !self.frozen_dead.contains(id))
            .chain(self.active.list(kind, s))
    }

    /// An upper bound of the list's length (exact when no frozen document died).
    fn list_len_bound(&self, kind: KeyKind, s: u32) -> usize {
        self.active.list_len(kind, s) + self.frozen.as_deref().map_or(0, |f| f.list_len(kind, s))
    }

    /// Every key with postings, each once, unordered.
    pub(crate) fn keys(&self) -> Vec<(KeyKind, u32)> {
        let mut keys: Vec<(KeyKind, u32)> = self.active.keys().collect();
        if let Some(f) = self.frozen.as_deref() {
            keys.extend(f.keys());
            keys.sort_unstable();
            keys.dedup();
        }
        keys
    }
}

/// What one candidate search found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SearchStats {
    /// Keys probed.
    pub probes: u32,
    /// Probes skipped because their list is longer than the cap.
    pub frequent: u32,
}

/// Runs the probes over the lists `fill` gives (it returns true, or a list longer than `cap`, for a
/// list over the cap), calling `f(id, kind, keys)` for each document of each list within the cap.
fn search_lists(
    probes: Vec<(KeyKind, u32)>,
    cap: usize,
    mut fill: impl FnMut(KeyKind, u32, &mut Vec<(u64, u32)>) -> Result<bool>,
    mut f: impl FnMut(u64, KeyKind, u32),
) -> Result<SearchStats> {
    let mut stats = SearchStats {
        probes: probes.len() as u32,
        frequent: 0,
    };
    let mut ids: Vec<(u64, u32)> = Vec::new();
    for (kind, s) in probes {
        ids.clear();
        if fill(kind, s, &mut ids)? || ids.len() > cap {
            stats.frequent += 1;
            continue;
        }
        for &(id, keys) in &ids {
            f(id, kind, keys);
        }
    }
    Ok(stats)
}

/// The durable containment index: RocksDB's entries of the documents below `floor`, and the tail.
pub(crate) struct RocksContain<'a> {
    pub db: &'a DB,
    pub cf: &'a ColumnFamily,
    pub path: &'a Path,
    /// Sampling rate n.
    pub sample: u32,
    /// Posting lists longer than this are skipped.
    pub max_postings: u32,
    /// The postings of the documents at or above `tail.floor`, read instead of RocksDB's.
    pub tail: &'a Tail,
}

impl RocksContain<'_> {
    /// Every document sharing a probed key with `set` (its samples; its shingles that are short
    /// keys), as `f(doc id, kind of the key, the doc's number of keys)` once per shared key.
    /// Returns the probe counts.
    pub(crate) fn candidates(&self, set: &[u32], short: &ShortKeys, f: impl FnMut(u64, KeyKind, u32)) -> Result<SearchStats> {
        let cap = self.max_postings as usize;
        // Prefix seeks: each run's prefix filter says whether it holds the list at all.
        let mut ro = rocksdb::ReadOptions::default();
        ro.set_prefix_same_as_start(true);
        let mut it = self.db.raw_iterator_cf_opt(self.cf, ro);
        // Probes come sorted by (kind, shingle): the seeks move forward through the key space.
        let stats = search_lists(
            probes(set, self.sample, |s| short.contains(s)),
            cap,
            |kind, s, ids| {
                let prefix = contain_prefix(kind, s);
                it.seek(prefix);
                while let Some(key) = it.key() {
                    if !key.starts_with(&prefix) {
                        break;
                    }
                    let id = key
                        .get(5..)
                        .and_then(be_u64)
                        .ok_or_else(|| Error::corrupt(self.path, None, format!("containment key {key:?} is not 13 bytes")))?;
                    if id < self.tail.floor {
                        let keys = it
                            .value()
                            .and_then(decode_contain_value)
                            .ok_or_else(|| Error::corrupt(self.path, Some(id), format!("containment entry {key:?} has no key count")))?;
                        ids.push((id, keys));
                        if ids.len() > cap {
                            return Ok(true);
                        }
                    }
                    it.next();
                }
                // The bound is exact unless a frozen document died: then count the list itself.
                if ids.len() + self.tail.list_len_bound(kind, s) > cap && self.tail.frozen_dead.is_empty() {
                    return Ok(true);
                }
                ids.extend(self.tail.list(kind, s));
                Ok(false)
            },
            f,
        )?;
        it.status().map_err(|e| Error::rocks("read containment index", self.path, e))?;
        Ok(stats)
    }
}

/// An in-memory containment index (the same keys and the same search as [`RocksContain`]), for the
/// documents of the batch being decided.
#[derive(Debug, Default)]
pub(crate) struct MemContain {
    lists: Postings,
    short: ShortKeys,
}

impl MemContain {
    /// Indexes document `id` with shingle set `set`, sampled as `sampling` says.
    pub(crate) fn add(&mut self, id: u64, set: &[u32], sampling: impl Into<Sampling>) -> Result<()> {
        let (kind, keys) = stored_keys(set, sampling);
        if kind == KeyKind::Short {
            self.short.add(&keys);
        }
        self.lists.add(id, kind, &keys)
    }

    /// True when nothing is indexed.
    pub(crate) fn is_empty(&self) -> bool {
        self.lists.is_empty()
    }

    /// Candidates of `set`: `f(id, kind, keys)` once per shared key; lists longer than `cap`
    /// skipped (and counted in the result).
    pub(crate) fn candidates(&self, set: &[u32], n: u32, cap: u32, f: impl FnMut(u64, KeyKind, u32)) -> SearchStats {
        let cap = cap as usize;
        let lists = &self.lists;
        let search = search_lists(
            probes(set, n, |s| self.short.contains(s)),
            cap,
            |kind, s, ids| {
                if lists.list_len(kind, s) > cap {
                    return Ok(true);
                }
                ids.extend(lists.list(kind, s));
                Ok(false)
            },
            f,
        );
        // The in-memory fill cannot fail.
        search.unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    fn set(max: usize) -> impl Strategy<Value = Vec<u32>> {
        proptest::collection::btree_set(0u32..500, 0..max).prop_map(|s| s.into_iter().collect())
    }

    /// The definition: documents holding a probed key whose list has at most `cap` documents.
    fn brute<'a>(docs: impl Iterator<Item = (u64, &'a Vec<u32>)>, q: &[u32], n: u32, cap: u32) -> BTreeMap<u64, usize> {
        let mut lists: BTreeMap<(KeyKind, u32), BTreeSet<u64>> = BTreeMap::new();
        for (id, d) in docs {
            let (kind, keys) = stored_keys(d, n);
            for k in keys {
                lists.entry((kind, k)).or_default().insert(id);
            }
        }
        let mut out = BTreeMap::new();
        let shorts: BTreeSet<u32> = lists.keys().filter(|k| k.0 == KeyKind::Short).map(|k| k.1).collect();
        for p in probes(q, n, |s| shorts.contains(&s)) {
            if let Some(ids) = lists.get(&p).filter(|l| l.len() <= cap as usize) {
                for &id in ids {
                    *out.entry(id).or_insert(0) += 1;
                }
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// RocksDB and in-memory searches equal the definition; with no cap in the way, every
        /// stored set inside the query, and every stored set the query (with a sample) is inside
        /// of, is a candidate. The documents at or above `floor` are in the tail (and, with
        /// `leftover`, also in RocksDB, as a flush that stopped before moving the floor leaves them):
        /// frozen below `split`, where every `dead`-th one was deleted since it froze, active above.
        #[test]
        fn searches_equal_brute_force(docs in proptest::collection::vec(set(60), 1..30), q in set(120), n in 1u32..12, cap in 1u32..40, floor in 0u64..32, split in 0u64..32, leftover in any::<bool>(), dead in 0u64..4) {
            let split = split.max(floor);
            let is_dead = |id: u64| dead > 0 && id >= floor && id < split && id.is_multiple_of(dead);
            let dir = tempfile::tempdir().unwrap();
            let mut o = rocksdb::Options::default();
            o.create_if_missing(true);
            o.create_missing_column_families(true);
            let db = DB::open_cf(&o, dir.path(), ["contain"]).unwrap();
            let cf = db.cf_handle("contain").unwrap();
            let mut short = ShortKeys::default();
            let mut mem = MemContain::default();
            let (mut frozen, mut active) = (Postings::default(), Postings::default());
            for (id, d) in docs.iter().enumerate() {
                let id = id as u64;
                let (kind, keys) = stored_keys(d, n);
                mem.add(id, d, n).unwrap();
                if kind == KeyKind::Short && !is_dead(id) {
                    short.add(&keys);
                }
                if id < floor || leftover {
                    let (v, len) = crate::store::keys::contain_value(keys.len() as u32);
                    for &k in &keys {
                        db.put_cf(cf, contain_key(kind, k, id), &v[..len]).unwrap();
                    }
                }
                // The frozen part also holds the dead (it no longer changes); the search skips them.
                if id >= split {
                    active.add(id, kind, &keys).unwrap();
                } else if id >= floor {
                    frozen.add(id, kind, &keys).unwrap();
                }
            }
            let tail = Tail {
                floor,
                split,
                frozen: (split > floor).then(|| std::sync::Arc::new(frozen)),
                frozen_dead: (floor..split).filter(|&id| is_dead(id)).collect(),
                active,
                ..Tail::default()
            };
            let idx = RocksContain { db: &db, cf, path: dir.path(), sample: n, max_postings: cap, tail: &tail };
            let mut got: BTreeMap<u64, usize> = BTreeMap::new();
            idx.candidates(&q, &short, |id, _, k| {
                assert_eq!(k as usize, stored_keys(&docs[id as usize], n).1.len());
                *got.entry(id).or_insert(0) += 1;
            }).unwrap();
            let live = || docs.iter().enumerate().map(|(id, d)| (id as u64, d)).filter(|&(id, _)| !is_dead(id));
            let want = brute(live(), &q, n, cap);
            prop_assert_eq!(&got, &want);
            let mut got_mem: BTreeMap<u64, usize> = BTreeMap::new();
            mem.candidates(&q, n, cap, |id, _, _| *got_mem.entry(id).or_insert(0) += 1);
            prop_assert_eq!(&got_mem, &brute(docs.iter().enumerate().map(|(id, d)| (id as u64, d)), &q, n, cap));
            if cap as usize >= docs.len() {
                let qs: BTreeSet<u32> = q.iter().copied().collect();
                let q_has_sample = crate::fingerprint::containment::samples(&q, n).next().is_some();
                for (id, d) in live() {
                    let d_in_q = !d.is_empty() && d.iter().all(|s| qs.contains(s));
                    let ds: BTreeSet<u32> = d.iter().copied().collect();
                    let q_in_d = q_has_sample && q.iter().all(|s| ds.contains(s));
                    if d_in_q || q_in_d {
                        prop_assert!(got.contains_key(&id), "doc {} (containment 1) is not a candidate", id);
                    }
                }
            }
        }
    }

    /// Document ids for [`postings_equal_a_map`]: twenty, three of them far above the rest.
    fn wide_ids() -> impl Strategy<Value = u64> {
        (0u64..20).prop_map(|i| if i >= 17 { i << 33 } else { i })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Adds and removes in any order leave exactly the lists of a plain map: lengths, members,
        /// the count, and the sorted RocksDB entries (ids added in any order, some 2^33 apart so
        /// that the sorted walk's comparison sort runs too).
        #[test]
        fn postings_equal_a_map(ops in proptest::collection::vec((wide_ids(), any::<bool>(), proptest::collection::vec(0u32..100, 0..8), 0u8..4), 0..120)) {
            let mut p = Postings::default();
            let mut model: BTreeMap<(KeyKind, u32), BTreeMap<u64, u32>> = BTreeMap::new();
            let mut held: BTreeMap<u64, (KeyKind, Vec<u32>)> = BTreeMap::new();
            for (id, short, mut keys, op) in ops {
                keys.sort_unstable();
                keys.dedup();
                let kind = if short { KeyKind::Short } else { KeyKind::Sample };
                match (op, held.remove(&id)) {
                    (0, Some((k, ks))) => {
                        p.remove(id, k, &ks);
                        for s in ks {
                            model.entry((k, s)).or_default().remove(&id);
                        }
                    }
                    (1, Some(_)) => {
                        p.remove_everywhere(id);
                        for l in model.values_mut() {
                            l.remove(&id);
                        }
                    }
                    (_, Some(h)) => {
                        held.insert(id, h);
                    }
                    (_, None) => {
                        p.add(id, kind, &keys).unwrap();
                        for &s in &keys {
                            model.entry((kind, s)).or_default().insert(id, keys.len() as u32);
                        }
                        held.insert(id, (kind, keys));
                    }
                }
            }
            model.retain(|_, l| !l.is_empty());
            let mut want_entries = Vec::new();
            for (&(kind, s), l) in &model {
                prop_assert_eq!(p.list_len(kind, s), l.len());
                let got: BTreeMap<u64, u32> = p.list(kind, s).collect();
                prop_assert_eq!(&got, l);
                want_entries.extend(l.iter().map(|(&id, &c)| (contain_key(kind, s, id), c)));
            }
            prop_assert_eq!(p.keys().count(), model.len());
            prop_assert_eq!(p.len(), want_entries.len());
            want_entries.sort_unstable();
            prop_assert_eq!(p.sorted_entries(), want_entries);
        }
    }
}
