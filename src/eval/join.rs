//! Exact all-pairs Jaccard similarity join with prefix filtering.
//!
//! Algorithm (AllPairs / PPJoin, Xiao et al. 2008):
//!
//! 1. Every token is renamed to its rank in the global order "document frequency ascending, then
//!    token value", so that each set's first tokens are its rarest ones (found with one radix
//!    sort of all `(token, position)` keys). Tokens that occur in a single set (ranks
//!    `0..singletons`) can never be shared and are skipped. Sets are sorted by size.
//! 2. For a pair with `J(x, y) >= t` and `|y| <= |x|` the overlap `o` satisfies `o >= ceil(t|x|)`
//!    and `o >= 2t/(1+t)·|y|`, so by the prefix-filtering principle the first
//!    `|x| - ceil(t|x|) + 1` tokens of `x` (its *probe prefix*) and the first
//!    `|y| - ceil(2t/(1+t)|y|) + 1` tokens of `y` (its *index prefix*, never longer than the probe
//!    prefix) share a token. Only index prefixes go into the inverted index.
//! 3. Each set `x` probes its probe prefix against the index, looking only at smaller-or-equal
//!    sets earlier in size order, and only at those with `|y| >= t|x|` (size filter: posting
//!    lists are sorted by record, hence by size, so this is a binary search).
//! 4. Shared prefix tokens are counted per partner `y` in token order (PPJoin's positional
//!    filter: `count + 1 + min(|x| - i - 1, |y| - j - 1)` must reach the required overlap
//!    `ceil(t(|x|+|y|)/(1+t))`, else `y` is dropped for this `x`).
//! 5. Every shared token up to `w = min(last token of x's probe prefix, last token of y's index
//!    prefix)` lies in both prefixes and was counted, so the overlap is `count` plus the overlap
//!    of the suffixes after `w`: a size bound on those suffixes, then an exact merge of them that
//!    stops as soon as the required overlap can no longer be reached.
//!
//! All the filters use thresholds lowered by a tiny epsilon, so floating-point rounding can only
//! make them looser, never drop a pair; the final decision is `jaccard >= t`, computed exactly as
//! [`super::jaccard`] does. Probing is spread over `std::thread::available_parallelism()` threads.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::fingerprint::similarity::{overlap_reaching, ratio};

/// Slack subtracted before every `ceil` in the filters (makes them conservative).
const EPS: f64 = 1e-9;

/// Records handed to a thread at a time.
const CHUNK: usize = 128;

/// `ceil(v)` computed conservatively (never more than the exact ceiling), clamped at 0.
fn ceil_loose(v: f64) -> usize {
    let c = (v - EPS).ceil();
    if c > 0.0 {
        c as usize
    } else {
        0
    }
}

/// The join's parameters derived from `t`.
#[derive(Clone, Copy)]
struct Thresholds {
    t: f64,
}

impl Thresholds {
    /// Length of the probe prefix of a set of size `len`.
    fn probe_prefix(self, len: usize) -> usize {
        let need = ceil_loose(self.t * len as f64);
        (len + 1).saturating_sub(need).min(len)
    }

    /// Length of the index prefix of a set of size `len` (probed only by sets at least as large).
    fn index_prefix(self, len: usize) -> usize {
        if self.t <= 0.0 {
            return len;
        }
        let need = ceil_loose(2.0 * self.t / (1.0 + self.t) * len as f64);
        (len + 1).saturating_sub(need).min(len)
    }

    /// Smallest size a partner of a set of size `len` can have (size filter), at least 1.
    fn min_partner_size(self, len: usize) -> usize {
        ceil_loose(self.t * len as f64).max(1)
    }

    /// Overlap a pair of sizes `lx`, `ly` needs to reach Jaccard `t` (at least 1).
    fn min_overlap(self, lx: usize, ly: usize) -> usize {
        if self.t <= 0.0 {
            return 1;
        }
        ceil_loose(self.t / (1.0 + self.t) * (lx + ly) as f64).max(1)
    }
}

/// A set after renaming its tokens to global ranks; `start..start+len` indexes `Prepared::tokens`.
#[derive(Clone, Copy)]
struct Rec {
    orig: u32,
    start: usize,
    len: usize,
}

struct Prepared {
    /// Records sorted by (size, original index); empty sets are left out (they never match).
    recs: Vec<Rec>,
    /// Rank-renamed tokens of all records, each record's slice sorted ascending.
    tokens: Vec<u32>,
    /// `recs[r].len` as a compact array (hot in the probe loop).
    lens: Vec<u32>,
    /// Number of distinct tokens (ranks are `0..ranks`).
    ranks: u32,
    /// Tokens occurring in one set only: ranks `0..singletons` (the rarest come first). They
    /// can never be shared, so they are neither indexed nor probed.
    singletons: u32,
}

impl Prepared {
    fn set(&self, r: usize) -> &[u32] {
        let rec = self.recs[r];
        &self.tokens[rec.start..rec.start + rec.len]
    }
}

/// Sorts `keys` by their high 32 bits (LSD radix sort, 11-bit digits; order within equal high
/// halves is unspecified).
fn radix_sort_by_high_u32(keys: &mut Vec<u64>) {
    const BITS: u32 = 11;
    const BUCKETS: usize = 1 << BITS;
    let mut buf = vec![0u64; keys.len()];
    let mut shift = 32;
    while shift < 64 {
        let digit = |k: u64| ((k >> shift) as usize) & (BUCKETS - 1);
        let mut count = vec![0usize; BUCKETS + 1];
        for &k in keys.iter() {
            count[digit(k) + 1] += 1;
        }
        // All keys in one bucket: this pass would not move anything.
        if count.contains(&keys.len()) {
            shift += BITS;
            continue;
        }
        for i in 1..=BUCKETS {
            count[i] += count[i - 1];
        }
        for &k in keys.iter() {
            let d = digit(k);
            buf[count[d]] = k;
            count[d] += 1;
        }
        std::mem::swap(keys, &mut buf);
        shift += BITS;
    }
}

/// Renames tokens to global-frequency ranks and sorts the records by size.
fn prepare(sets: &[&[u32]], threads: usize) -> Prepared {
    // Inputs outside the sorted-unique contract are treated as the sets of their elements.
    let cleaned: Vec<Option<Vec<u32>>> = sets
        .iter()
        .map(|s| {
            if s.windows(2).all(|w| w[0] < w[1]) {
                None
            } else {
                let mut v = s.to_vec();
                v.sort_unstable();
                v.dedup();
                Some(v)
            }
        })
        .collect();
    let view: Vec<&[u32]> = sets.iter().zip(&cleaned).map(|(s, c)| c.as_deref().unwrap_or(s)).collect();
    let (recs, mut tokens) = lay_out(&view);
    let (ranks, singletons) = rename_by_frequency(&mut tokens);
    sort_records(&recs, &mut tokens, threads);
    let lens = recs.iter().map(|r| r.len as u32).collect();
    Prepared {
        recs,
        tokens,
        lens,
        ranks,
        singletons,
    }
}

/// The non-empty sets sorted by size, their tokens laid out flat in that order.
fn lay_out(sets: &[&[u32]]) -> (Vec<Rec>, Vec<u32>) {
    let mut by_size: Vec<u32> = (0..sets.len() as u32).filter(|&i| !sets[i as usize].is_empty()).collect();
    by_size.sort_unstable_by_key(|&i| (sets[i as usize].len(), i));
    let mut recs = Vec::with_capacity(by_size.len());
    let mut tokens: Vec<u32> = Vec::new();
    for &i in &by_size {
        let set = sets[i as usize];
        recs.push(Rec {
            orig: i,
            start: tokens.len(),
            len: set.len(),
        });
        tokens.extend_from_slice(set);
    }
    assert!(
        tokens.len() <= u32::MAX as usize,
        "jaccard_join: at most u32::MAX elements in all sets together (got {})",
        tokens.len()
    );
    (recs, tokens)
}

/// Renames every token to its rank by document frequency (rarest first); returns the number of
/// ranks and of tokens that occur once (the ranks below it).
fn rename_by_frequency(tokens: &mut [u32]) -> (u32, u32) {
    // Group equal tokens: (token << 32 | position), sorted by token.
    let mut keys: Vec<u64> = tokens
        .iter()
        .enumerate()
        .map(|(pos, &tok)| (u64::from(tok) << 32) | pos as u64)
        .collect();
    radix_sort_by_high_u32(&mut keys);
    // Runs of one token: (frequency, token, start in keys). Sets are unique, so the run length
    // is the token's document frequency.
    let mut runs: Vec<(u32, u32, usize)> = Vec::new();
    let mut start = 0usize;
    while start < keys.len() {
        let tok = (keys[start] >> 32) as u32;
        let mut end = start + 1;
        while end < keys.len() && (keys[end] >> 32) as u32 == tok {
            end += 1;
        }
        runs.push(((end - start) as u32, tok, start));
        start = end;
    }
    runs.sort_unstable();
    let singletons = runs.partition_point(|r| r.0 == 1) as u32;
    let ranks = runs.len() as u32;
    for (rank, &(freq, _, start)) in runs.iter().enumerate() {
        for &k in &keys[start..start + freq as usize] {
            tokens[(k & u64::from(u32::MAX)) as usize] = rank as u32;
        }
    }
    (ranks, singletons)
}

/// Each record's renamed tokens sorted ascending (rarest first), in parallel.
fn sort_records(recs: &[Rec], tokens: &mut [u32], threads: usize) {
    let threads = threads.clamp(1, recs.len().max(1));
    let per = recs.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let mut rest: &mut [u32] = tokens;
        for chunk in recs.chunks(per) {
            let n: usize = chunk.iter().map(|r| r.len).sum();
            let (mine, tail) = rest.split_at_mut(n);
            rest = tail;
            scope.spawn(move || {
                let mut at = 0usize;
                for rec in chunk {
                    mine[at..at + rec.len].sort_unstable();
                    at += rec.len;
                }
            });
        }
    });
}

/// Inverted index over index prefixes (shared tokens only), in CSR form: the postings of rank
/// `r` are `post[off[r - singletons]..off[r - singletons + 1]]`, each `(record, position)`,
/// sorted by record (hence by size).
struct Index {
    off: Vec<u32>,
    post: Vec<(u32, u32)>,
    /// Last token of each record's index prefix.
    last: Vec<u32>,
}

impl Index {
    fn postings(&self, p: &Prepared, tok: u32) -> &[(u32, u32)] {
        let r = (tok - p.singletons) as usize;
        &self.post[self.off[r] as usize..self.off[r + 1] as usize]
    }
}

fn build_index(p: &Prepared, th: Thresholds) -> Index {
    let shared = (p.ranks - p.singletons) as usize;
    let mut off = vec![0u32; shared + 1];
    let mut last = Vec::with_capacity(p.recs.len());
    for r in 0..p.recs.len() {
        let set = p.set(r);
        let prefix = &set[..th.index_prefix(set.len())];
        last.push(prefix.last().copied().unwrap_or(0));
        for &tok in prefix.iter().filter(|&&t| t >= p.singletons) {
            off[(tok - p.singletons) as usize + 1] += 1;
        }
    }
    for i in 1..off.len() {
        off[i] += off[i - 1];
    }
    let mut fill = off.clone();
    let mut post = vec![(0u32, 0u32); off[shared] as usize];
    for r in 0..p.recs.len() {
        let set = p.set(r);
        for (pos, &tok) in set[..th.index_prefix(set.len())].iter().enumerate() {
            if tok >= p.singletons {
                let slot = &mut fill[(tok - p.singletons) as usize];
                post[*slot as usize] = (r as u32, pos as u32);
                *slot += 1;
            }
        }
    }
    Index { off, post, last }
}

/// Per-partner state while one `x` probes: prefix overlap so far and the last match.
#[derive(Clone, Copy, Default)]
struct Acc {
    /// `x + 1` of the probe that last touched this entry (lazy reset).
    mark: u32,
    /// Shared tokens found in the prefixes, or `PRUNED`.
    count: u32,
    /// Positions of the last shared prefix token in `x` and in `y`.
    last_x: u32,
    last_y: u32,
}

const PRUNED: u32 = u32::MAX;

/// Probes records `x` taken from `next` in chunks; returns the verified pairs.
fn probe_worker(p: &Prepared, idx: &Index, th: Thresholds, next: &AtomicUsize) -> Vec<(u32, u32, f64)> {
    let n = p.recs.len();
    let mut out = Vec::new();
    let mut probe = Probe {
        acc: vec![Acc::default(); n],
        cands: Vec::new(),
        need: Vec::new(),
        lists: Vec::new(),
    };
    loop {
        let begin = next.fetch_add(CHUNK, Ordering::Relaxed);
        if begin >= n {
            break;
        }
        for x in begin..(begin + CHUNK).min(n) {
            probe.count(p, idx, th, x);
            probe.verify(p, idx, th, x, &mut out);
        }
    }
    out
}

/// One worker's scratch for probing record `x`: the partners' accumulators, the candidates met,
/// the overlap a partner of each size needs, and the postings lists of `x`'s probe prefix.
struct Probe<'i> {
    acc: Vec<Acc>,
    cands: Vec<u32>,
    /// `need[ly - min_size]`: the overlap a partner of size ly needs (ly <= lx).
    need: Vec<u32>,
    lists: Vec<(usize, &'i [(u32, u32)])>,
}

impl<'i> Probe<'i> {
    /// Walks the postings of `x`'s probe prefix: the candidates (earlier records large enough)
    /// with their prefix overlap, pruned by the positional filter.
    #[inline]
    fn count(&mut self, p: &Prepared, idx: &'i Index, th: Thresholds, x: usize) {
        let xs = p.set(x);
        let lx = xs.len();
        let px = th.probe_prefix(lx);
        // Records are sorted by size: those from `first` on are large enough (size filter).
        let min_size = th.min_partner_size(lx);
        let first = p.recs[..x].partition_point(|r| r.len < min_size) as u32;
        let mark = x as u32 + 1;
        self.need.clear();
        self.need.extend((min_size..=lx).map(|ly| th.min_overlap(lx, ly) as u32));
        self.cands.clear();
        // Look the lists up first (independent loads overlap), then walk them.
        self.lists.clear();
        self.lists.extend(
            xs[..px]
                .iter()
                .enumerate()
                .filter(|&(_, &tok)| tok >= p.singletons)
                .map(|(i, &tok)| (i, idx.postings(p, tok)))
                .filter(|(_, list)| list.first().is_some_and(|&(y, _)| (y as usize) < x)),
        );
        for &(i, list) in &self.lists {
            let from = match list.first() {
                Some(&(y, _)) if y < first => list.partition_point(|&(y, _)| y < first),
                _ => 0,
            };
            for &(y, j) in &list[from..] {
                if y as usize >= x {
                    break;
                }
                let a = &mut self.acc[y as usize];
                if a.mark != mark {
                    *a = Acc {
                        mark,
                        count: 0,
                        last_x: 0,
                        last_y: 0,
                    };
                    self.cands.push(y);
                } else if a.count == PRUNED {
                    continue;
                }
                // Positional filter: overlap so far + this token + what can still follow.
                let ly = p.lens[y as usize] as usize;
                let bound = a.count as usize + 1 + (lx - i - 1).min(ly - j as usize - 1);
                if bound >= self.need[ly - min_size] as usize {
                    a.count += 1;
                    a.last_x = i as u32;
                    a.last_y = j;
                } else {
                    a.count = PRUNED;
                }
            }
        }
    }

    /// Verifies the candidates [`Probe::count`] left: the overlap beyond the prefixes, then the
    /// exact Jaccard; pairs with Jaccard ≥ t go to `out`.
    #[inline]
    fn verify(&self, p: &Prepared, idx: &Index, th: Thresholds, x: usize, out: &mut Vec<(u32, u32, f64)>) {
        let xs = p.set(x);
        let lx = xs.len();
        let px = th.probe_prefix(lx);
        let min_size = th.min_partner_size(lx);
        for &y in &self.cands {
            let a = self.acc[y as usize];
            if a.count == PRUNED || a.count == 0 {
                continue;
            }
            let ys = p.set(y as usize);
            let ly = ys.len();
            let need = self.need[ly - min_size] as usize;
            let (li, lj) = (a.last_x as usize, a.last_y as usize);
            let found = a.count as usize;
            // Every shared token <= w = min(last of x's probe prefix, last of y's index
            // prefix) lies in both prefixes, so it was counted in `found` (the positional
            // filter prunes, never undercounts). The rest of the overlap is among the tokens
            // > w: x from `from_x`, y from `from_y`.
            let iy = th.index_prefix(ly);
            let (wx, wy) = (xs[px - 1], idx.last[y as usize]);
            let (from_x, from_y) = if wx < wy {
                (px, lj + 1 + ys[lj + 1..iy].partition_point(|&v| v <= wx))
            } else {
                (li + 1 + xs[li + 1..px].partition_point(|&v| v <= wy), iy)
            };
            if found + (lx - from_x).min(ly - from_y) < need {
                continue;
            }
            let Some(rest) = overlap_reaching(&xs[from_x..], &ys[from_y..], need.saturating_sub(found)) else {
                continue;
            };
            let o = found + rest;
            if o < need {
                continue;
            }
            let jac = ratio(o, lx, ly);
            if jac >= th.t {
                let (a, b) = (p.recs[x].orig, p.recs[y as usize].orig);
                out.push((a.min(b), a.max(b), jac));
            }
        }
    }
}

/// [`super::jaccard_join`] with an explicit thread count (tests check it does not matter).
pub(crate) fn join_with_threads(sets: &[&[u32]], t: f64, threads: usize) -> Vec<(u32, u32, f64)> {
    if sets.len() < 2 || t.is_nan() || t > 1.0 {
        return Vec::new();
    }
    assert!(
        sets.len() < u32::MAX as usize,
        "jaccard_join: at most u32::MAX - 1 sets (got {})",
        sets.len()
    );
    let threads = threads.max(1);
    let th = Thresholds { t };
    let p = prepare(sets, threads);
    let idx = build_index(&p, th);
    let next = AtomicUsize::new(0);
    let mut out: Vec<(u32, u32, f64)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads).map(|_| scope.spawn(|| probe_worker(&p, &idx, th, &next))).collect();
        let mut all = Vec::new();
        for h in handles {
            match h.join() {
                Ok(v) => all.extend(v),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        all
    });
    out.sort_unstable_by_key(|&(a, b, _)| (a, b));
    out
}
