//! method: the candidate index of the methods other than SimHash (fingerprint/method.rs) — one
//! search over *buckets*: every document puts its id under a few `(table, value)` keys
//! ([`MethodIndex::entries`]), a query looks up a few `(table, value)` keys
//! ([`MethodIndex::probes`]), and every id found is compared exactly
//! ([`similarity::compare`](crate::fingerprint::similarity::compare)) and kept when it satisfies
//! the rule. Exact for every rule, each document reported once:
//!
//! * **broder** (and **broder-charikar**): table `j` = supershingle position `j`, value = the
//!   supershingle. A document with at least `s ≥ 1` equal supershingles shares at least one, so it
//!   is in one of the query's `m'` buckets. (`s = 0`, every document, falls back to a scan.)
//! * **charikar**: table `i` = block `i` of a [`WideLayout`] of the projection (13 blocks by
//!   default), value = the block; the query probes the generalized pigeonhole plan (exact block
//!   match for `k ≤ blocks − 1`, Hamming balls beyond).
//! * **multi-lexicon**: table `j·m + i` = block `i` of lexicon `j`'s SimHash (m = the database's
//!   table count), for the lexicons the document has; a pair within `k` in lexicon `j` is found by
//!   lexicon `j`'s pigeonhole plan.
//!
//! When a query would probe more bucket values than there are documents, a scan over all sketches
//! gives the same answer. Two storages: [`MemBuckets`] (the in-memory mirror) and [`RocksBuckets`]
//! (the durable column family `mindex`, keys in [`crate::store::keys::mindex_key`]).
//!
//! For multi-lexicon the mirror keeps each entry's lexicon SimHash beside its id, and a probe of
//! lexicon `j`'s bucket yields only the ids within `k` of the query in lexicon `j`
//! ([`BucketIndex::bucket_near`], one [`for_each_within`] scan of the bucket): exactly the ids
//! the rule accepts through that lexicon, so the comparison runs for the hits alone (a 13-bit
//! block value is shared by ~n/8192 documents, and 5 lexicons × 31 probes made that thousands of
//! comparisons per query at 200K documents).

use std::path::Path;

use rocksdb::{ColumnFamily, DB};

use super::wide::WideLayout;
use crate::error::{Error, Result};
use crate::fingerprint::method::Method;
use crate::fingerprint::similarity::{compare, for_each_within, lexicons_within, MethodScore, Rule};
use crate::intmap::IntMap;
use crate::store::keys::{decode_mindex_key, mindex_prefix};

#[derive(Clone, Debug)]
enum Shape {
    /// Equal values at each of `n` positions (supershingles).
    Equal(usize),
    /// Blocks of a projection.
    Projection(WideLayout),
    /// Blocks of each lexicon's SimHash, after the mask word.
    Lexicons(usize, WideLayout),
}

/// The bucket keys of a method (see the module docs).
#[derive(Clone, Debug)]
pub struct MethodIndex {
    method: Method,
    shape: Shape,
}

impl MethodIndex {
    /// The index of `method`; `tables` is the database's table count (the blocks per lexicon).
    /// `None` for the methods searched by the SimHash tables, or parameters with no layout.
    pub fn new(method: &Method, tables: u32) -> Option<MethodIndex> {
        let shape = match method {
            Method::SimHash | Method::WeightedSimHash(_) => return None,
            Method::Broder(b) | Method::BroderCharikar(b, _) => Shape::Equal(b.supershingles as usize),
            Method::Charikar(c) => Shape::Projection(WideLayout::new(c.bits, c.blocks)?),
            Method::MultiLexicon(l) => Shape::Lexicons(l.lexicons as usize, WideLayout::new(64, tables)?),
        };
        Some(MethodIndex {
            method: method.clone(),
            shape,
        })
    }

    /// The method.
    #[cfg(test)]
    pub fn method(&self) -> &Method {
        &self.method
    }

    /// Number of tables (the range of the `table` of every key).
    pub fn tables(&self) -> usize {
        match &self.shape {
            Shape::Equal(n) => *n,
            Shape::Projection(l) => l.blocks(),
            Shape::Lexicons(n, l) => n * l.blocks(),
        }
    }

    /// Calls `f(table, value)` for every bucket a document with `sketch` is in.
    pub fn entries(&self, sketch: &[u64], f: &mut impl FnMut(u16, u64)) {
        self.keyed_entries(sketch, &mut |t, v, _| f(t, v));
    }

    /// [`MethodIndex::entries`] with each entry's *word*: for multi-lexicon the lexicon's whole
    /// SimHash (the mirror keeps it beside the id, [`MemBuckets`]), `None` for the other shapes.
    fn keyed_entries(&self, sketch: &[u64], f: &mut impl FnMut(u16, u64, Option<u64>)) {
        match &self.shape {
            Shape::Equal(n) => {
                for (j, &v) in sketch.iter().take(*n).enumerate() {
                    f(j as u16, v, None);
                }
            }
            Shape::Projection(l) => {
                for i in 0..l.blocks() {
                    f(i as u16, l.block(i, sketch), None);
                }
            }
            Shape::Lexicons(n, l) => {
                let Some((&mask, fps)) = sketch.split_first() else { return };
                for (j, fp) in fps.iter().take(*n).enumerate() {
                    if mask >> j & 1 == 1 {
                        for i in 0..l.blocks() {
                            f((j * l.blocks() + i) as u16, l.block(i, std::slice::from_ref(fp)), Some(*fp));
                        }
                    }
                }
            }
        }
    }

    /// Calls `f(table, value)` for every bucket a query with `sketch` looks in under `rule`.
    pub fn probes(&self, sketch: &[u64], rule: Rule, f: &mut impl FnMut(u16, u64)) {
        self.keyed_probes(sketch, rule, &mut |t, v, _| f(t, v));
    }

    /// [`MethodIndex::probes`] with the query's word for each bucket (as [`MethodIndex::keyed_entries`]):
    /// for multi-lexicon a bucket of lexicon `j` answers only with the ids whose lexicon-`j` SimHash
    /// is within `k` of the query's, which is exactly the rule's test for that lexicon.
    fn keyed_probes(&self, sketch: &[u64], rule: Rule, f: &mut impl FnMut(u16, u64, Option<u64>)) {
        match &self.shape {
            Shape::Equal(_) => self.keyed_entries(sketch, f),
            Shape::Projection(l) => l.for_each_probe(sketch, rule.max_distance, &mut |i, v| f(i as u16, v, None)),
            Shape::Lexicons(n, l) => {
                let Some((&mask, fps)) = sketch.split_first() else { return };
                for (j, fp) in fps.iter().take(*n).enumerate() {
                    if mask >> j & 1 == 1 {
                        l.for_each_probe(std::slice::from_ref(fp), rule.max_distance, &mut |i, v| {
                            f((j * l.blocks() + i) as u16, v, Some(*fp))
                        });
                    }
                }
            }
        }
    }

    /// Number of bucket values a query probes under `rule` (`u64::MAX` when the buckets cannot
    /// answer the rule and a scan must).
    pub fn probe_count(&self, rule: Rule) -> u64 {
        match &self.shape {
            Shape::Equal(_) if rule.min_shared == 0 => u64::MAX,
            Shape::Equal(n) => *n as u64,
            Shape::Projection(l) => l.probes(rule.max_distance),
            Shape::Lexicons(n, l) => l.probes(rule.max_distance).saturating_mul(*n as u64),
        }
    }

    /// The method's comparison of two sketches.
    pub fn compare(&self, a: &[u64], b: &[u64]) -> MethodScore {
        compare(&self.method, 0, a, 0, b)
    }

    /// [`MethodIndex::compare`] when the pair satisfies `rule`, else `None`; for multi-lexicon the
    /// test runs before the score is built (the score holds a vector: one allocation per hit,
    /// none per candidate).
    fn compare_within(&self, a: &[u64], b: &[u64], rule: Rule) -> Option<MethodScore> {
        if matches!(self.shape, Shape::Lexicons(..)) && !lexicons_within(a, b, rule.max_distance) {
            return None;
        }
        Some(self.compare(a, b)).filter(|s| s.satisfies(rule))
    }
}

/// What the search needs from a storage of buckets.
pub(crate) trait BucketIndex {
    /// Calls `f(id)` for every id in bucket `(table, value)`.
    fn bucket(&self, table: u16, value: u64, f: &mut impl FnMut(u64)) -> Result<()>;

    /// [`BucketIndex::bucket`], where `near = Some((word, k))` lets a storage that keeps each
    /// entry's word leave out the ids whose word is more than `k` bits from `word` (the mirror);
    /// a storage without the words calls `f` for every id (the search's comparison filters them).
    fn bucket_near(&self, table: u16, value: u64, near: Option<(u64, u32)>, f: &mut impl FnMut(u64)) -> Result<()> {
        let _ = near;
        self.bucket(table, value, f)
    }
}

/// Calls `f(id, score)` exactly once for every document satisfying `rule` against the query
/// `sketch`. `docs` is the number of documents, `sketch_of` gives a live document's sketch (`None`:
/// not live, skipped) and `all` lists every live document (for the scan).
#[allow(clippy::too_many_arguments)]
pub(crate) fn search<'a, B: BucketIndex>(
    index: &MethodIndex,
    buckets: &B,
    sketch: &[u64],
    rule: Rule,
    docs: u64,
    sketch_of: impl Fn(u64) -> Option<&'a [u64]>,
    all: impl Iterator<Item = u64>,
    mut f: impl FnMut(u64, MethodScore),
) -> Result<()> {
    let mut ids: Vec<u64> = Vec::new();
    if index.probe_count(rule) > docs {
        ids.extend(all);
    } else {
        let mut err = None;
        index.keyed_probes(sketch, rule, &mut |t, v, word| {
            if err.is_none() {
                let near = word.map(|w| (w, rule.max_distance));
                if let Err(e) = buckets.bucket_near(t, v, near, &mut |id| ids.push(id)) {
                    err = Some(e);
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
    }
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        if let Some(score) = sketch_of(id).and_then(|s| index.compare_within(sketch, s, rule)) {
            f(id, score);
        }
    }
    Ok(())
}

/// The in-memory buckets: per table, value → ids (and for multi-lexicon each id's lexicon
/// SimHash beside it, so a probe scans the bucket's SimHashes with [`for_each_within`] and only
/// the documents within `k` in that lexicon go on to the comparison, as the SimHash tables do).
#[derive(Clone, Debug)]
pub struct MemBuckets {
    index: MethodIndex,
    tables: Vec<IntMap<u64, Bucket>>,
}

/// One bucket of the mirror: ids, and `words[i]` the word of `ids[i]` (empty for the methods
/// without words, [`MethodIndex::keyed_entries`]).
#[derive(Clone, Debug, Default)]
struct Bucket {
    ids: Vec<u64>,
    words: Vec<u64>,
}

impl MemBuckets {
    /// Empty buckets for `index`.
    pub fn new(index: MethodIndex) -> MemBuckets {
        let tables = vec![IntMap::default(); index.tables()];
        MemBuckets { index, tables }
    }

    /// Adds document `id` with `sketch`.
    pub fn insert(&mut self, id: u64, sketch: &[u64]) {
        let tables = &mut self.tables;
        self.index.keyed_entries(sketch, &mut |t, v, word| {
            let b = tables[t as usize].entry(v).or_default();
            b.ids.push(id);
            b.words.extend(word);
        });
    }

    /// Removes document `id` with `sketch` (no-op when absent).
    pub fn remove(&mut self, id: u64, sketch: &[u64]) {
        let tables = &mut self.tables;
        self.index.entries(sketch, &mut |t, v| {
            let table = &mut tables[t as usize];
            if let Some(b) = table.get_mut(&v) {
                if let Some(pos) = b.ids.iter().position(|&x| x == id) {
                    b.ids.swap_remove(pos);
                    if pos < b.words.len() {
                        b.words.swap_remove(pos);
                    }
                }
                if b.ids.is_empty() {
                    table.remove(&v);
                }
            }
        });
    }

    /// Number of bucket entries.
    pub fn entries(&self) -> usize {
        self.tables.iter().flat_map(|t| t.values()).map(|b| b.ids.len()).sum()
    }
}

impl BucketIndex for MemBuckets {
    #[inline]
    fn bucket(&self, table: u16, value: u64, f: &mut impl FnMut(u64)) -> Result<()> {
        if let Some(b) = self.tables.get(table as usize).and_then(|t| t.get(&value)) {
            b.ids.iter().for_each(|&id| f(id));
        }
        Ok(())
    }

    #[inline]
    fn bucket_near(&self, table: u16, value: u64, near: Option<(u64, u32)>, f: &mut impl FnMut(u64)) -> Result<()> {
        let Some(b) = self.tables.get(table as usize).and_then(|t| t.get(&value)) else {
            return Ok(());
        };
        match near {
            Some((word, k)) if b.words.len() == b.ids.len() => {
                for_each_within(&b.words, word, k, |i, _| f(b.ids[i]));
                Ok(())
            }
            _ => self.bucket(table, value, f),
        }
    }
}

/// The durable buckets: column family `mindex`.
pub(crate) struct RocksBuckets<'a> {
    pub db: &'a DB,
    pub cf: &'a ColumnFamily,
    pub path: &'a Path,
}

impl BucketIndex for RocksBuckets<'_> {
    fn bucket(&self, table: u16, value: u64, f: &mut impl FnMut(u64)) -> Result<()> {
        let prefix = mindex_prefix(table, value);
        let mut it = self.db.raw_iterator_cf(self.cf);
        it.seek(prefix);
        while let Some(key) = it.key() {
            if !key.starts_with(&prefix) {
                break;
            }
            let (_, _, id) =
                decode_mindex_key(key).ok_or_else(|| Error::corrupt(self.path, None, format!("mindex key {key:?} is not 18 bytes")))?;
            f(id);
            it.next();
        }
        it.status().map_err(|e| Error::rocks("probe mindex", self.path, e))
    }
}

#[cfg(test)]
mod tests;

/// The published method state: every live document's sketch, and the bucket mirror.
#[derive(Default)]
pub(crate) struct MethodState {
    pub(crate) sketches: IntMap<u64, Box<[u64]>>,
    pub(crate) buckets: Option<MemBuckets>,
}

impl MethodState {
    pub(crate) fn insert(&mut self, id: u64, sketch: &[u64]) {
        if let Some(b) = self.buckets.as_mut() {
            b.insert(id, sketch);
        }
        self.sketches.insert(id, sketch.into());
    }

    pub(crate) fn remove(&mut self, id: u64) {
        if let Some(s) = self.sketches.remove(&id) {
            if let Some(b) = self.buckets.as_mut() {
                b.remove(id, &s);
            }
        }
    }
}
