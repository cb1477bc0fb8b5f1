//! "cosine ≥ β" over the stored vectors: the exact brute-force scan (the reference) and the sign-code
//! index (a Hamming filter over the 256-bit codes, then the exact cosine on the survivors).
//!
//! Memory: the vectors live in flat arrays (ids, q row-major, Σq², codes): dim + 8·W + 12 bytes per
//! document (436 at dim 384, W = 4) plus the id → row map.
//!
//! The index's Hamming radius comes from the angle: for a pair at angle θ each random hyperplane
//! separates it with probability θ/π, so the Hamming distance of a pair at cos = β is
//! Binomial(bits, acos(β)/π); the radius is the smallest r with P[distance > r] ≤ [`MISS_TARGET`]
//! at β, and pairs above β are separated less often. Recall against the exact scan is measured
//! (tests/semantic.rs, examples/semantic_bench.rs), not assumed: the ±1 planes follow the θ/π law
//! only approximately.

use std::collections::HashMap;

use super::vector::{cosine_from, dot_i8, StoredVector};

/// Per-pair miss probability the radius is chosen for (at exactly cos = β).
pub const MISS_TARGET: f64 = 1e-6;

/// A semantic match: a document and its cosine with the query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SemanticHit {
    /// The document id.
    pub id: u64,
    /// cos(query, document) on the stored vectors.
    pub cosine: f32,
}

/// The in-memory vectors of a database (loaded from the `semantic` column family).
#[derive(Clone, Debug, Default)]
pub struct VectorSet {
    dim: usize,
    words: usize,
    ids: Vec<u64>,
    q: Vec<i8>,
    norm2: Vec<i32>,
    codes: Vec<u64>,
    row: HashMap<u64, usize>,
}

/// The smallest Hamming radius r with P[Binomial(bits, acos(β)/π) > r] ≤ `miss`.
pub fn radius_for(beta: f32, bits: usize, miss: f64) -> u32 {
    let p = (beta.clamp(-1.0, 1.0) as f64).acos() / std::f64::consts::PI;
    if p <= 0.0 {
        return 0;
    }
    if p >= 1.0 {
        return bits as u32;
    }
    // pmf(k+1) = pmf(k) · (n−k)/(k+1) · p/(1−p); the tail above r is 1 − cdf(r).
    let n = bits as f64;
    let mut pmf = (1.0 - p).powf(n);
    let mut cdf = pmf;
    for k in 0..bits {
        if 1.0 - cdf <= miss {
            return k as u32;
        }
        pmf *= (n - k as f64) / (k as f64 + 1.0) * p / (1.0 - p);
        cdf += pmf;
    }
    bits as u32
}

impl VectorSet {
    /// An empty set of `dim`-dimensional vectors with `words`-word codes.
    pub fn new(dim: usize, words: usize) -> VectorSet {
        VectorSet {
            dim,
            words,
            ..Default::default()
        }
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Whether `id` has a vector.
    pub fn contains(&self, id: u64) -> bool {
        self.row.contains_key(&id)
    }

    /// The ids held, in row order.
    pub fn ids(&self) -> &[u64] {
        &self.ids
    }

    /// The stored vector of `id`.
    pub fn get(&self, id: u64) -> Option<StoredVector> {
        let &r = self.row.get(&id)?;
        Some(StoredVector {
            scale: 0.0, // the scale is not kept in memory: cosines do not need it
            q: self.q[r * self.dim..(r + 1) * self.dim].to_vec(),
            code: self.codes[r * self.words..(r + 1) * self.words].to_vec(),
        })
    }

    /// Adds (or replaces) `id`'s vector. Panics on a dimension mismatch (the decoder checks it).
    pub fn insert(&mut self, id: u64, v: &StoredVector) {
        assert_eq!((v.q.len(), v.code.len()), (self.dim, self.words), "vector shape");
        if let Some(&r) = self.row.get(&id) {
            self.q[r * self.dim..(r + 1) * self.dim].copy_from_slice(&v.q);
            self.codes[r * self.words..(r + 1) * self.words].copy_from_slice(&v.code);
            self.norm2[r] = v.norm2();
            return;
        }
        self.row.insert(id, self.ids.len());
        self.ids.push(id);
        self.q.extend_from_slice(&v.q);
        self.codes.extend_from_slice(&v.code);
        self.norm2.push(v.norm2());
    }

    /// Removes `id`'s vector (the last row moves into its place). True if it was there.
    pub fn remove(&mut self, id: u64) -> bool {
        let Some(r) = self.row.remove(&id) else { return false };
        let last = self.ids.len() - 1;
        if r != last {
            let moved = self.ids[last];
            self.ids[r] = moved;
            self.norm2[r] = self.norm2[last];
            self.q.copy_within(last * self.dim..(last + 1) * self.dim, r * self.dim);
            self.codes.copy_within(last * self.words..(last + 1) * self.words, r * self.words);
            self.row.insert(moved, r);
        }
        self.ids.pop();
        self.norm2.pop();
        self.q.truncate(last * self.dim);
        self.codes.truncate(last * self.words);
        true
    }

    fn hit(&self, r: usize, query: &StoredVector, qn: i32) -> f32 {
        cosine_from(dot_i8(&self.q[r * self.dim..(r + 1) * self.dim], &query.q), self.norm2[r], qn)
    }

    fn sorted(mut hits: Vec<SemanticHit>) -> Vec<SemanticHit> {
        hits.sort_by(|a, b| b.cosine.total_cmp(&a.cosine).then(a.id.cmp(&b.id)));
        hits
    }

    /// The reference: every stored vector with cos(query, v) ≥ β (except `exclude`), best first.
    pub fn exact(&self, query: &StoredVector, beta: f32, exclude: Option<u64>) -> Vec<SemanticHit> {
        let qn = query.norm2();
        let hits = (0..self.ids.len())
            .filter(|&r| Some(self.ids[r]) != exclude)
            .filter_map(|r| {
                let cosine = self.hit(r, query, qn);
                (cosine >= beta).then_some(SemanticHit { id: self.ids[r], cosine })
            })
            .collect();
        Self::sorted(hits)
    }

    /// The index: rows whose code is within `radius` bits of the query's, then the exact cosine
    /// on those. Returns a subset of [`VectorSet::exact`] (the same cosines, bit for bit).
    pub fn indexed(&self, query: &StoredVector, beta: f32, radius: u32, exclude: Option<u64>) -> Vec<SemanticHit> {
        let qn = query.norm2();
        let w = self.words;
        let hits = self
            .codes
            .chunks_exact(w.max(1))
            .enumerate()
            .filter(|(_, c)| c.iter().zip(&query.code).map(|(a, b)| (a ^ b).count_ones()).sum::<u32>() <= radius)
            .filter(|&(r, _)| Some(self.ids[r]) != exclude)
            .filter_map(|(r, _)| {
                let cosine = self.hit(r, query, qn);
                (cosine >= beta).then_some(SemanticHit { id: self.ids[r], cosine })
            })
            .collect();
        Self::sorted(hits)
    }

    /// All pairs (a < b) with cosine ≥ β, by the exact scan (`radius` = None) or through the codes.
    pub fn pairs(&self, beta: f32, radius: Option<u32>) -> Vec<(u64, u64, f32)> {
        let mut out = Vec::new();
        for r in 0..self.ids.len() {
            let Some(v) = self.get(self.ids[r]) else { continue };
            let hits = match radius {
                None => self.exact(&v, beta, Some(self.ids[r])),
                Some(rad) => self.indexed(&v, beta, rad, Some(self.ids[r])),
            };
            out.extend(
                hits.into_iter()
                    .filter(|h| h.id > self.ids[r])
                    .map(|h| (self.ids[r], h.id, h.cosine)),
            );
        }
        out.sort_by_key(|&(a, b, _)| (a, b));
        out
    }

    /// Approximate heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.ids.capacity() * 8 + self.q.capacity() + self.norm2.capacity() * 4 + self.codes.capacity() * 8 + self.row.capacity() * (16 + 8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radius_grows_as_beta_falls() {
        let r95 = radius_for(0.95, 256, MISS_TARGET);
        let r85 = radius_for(0.85, 256, MISS_TARGET);
        let r50 = radius_for(0.5, 256, MISS_TARGET);
        assert!(r95 < r85 && r85 < r50, "{r95} {r85} {r50}");
        assert_eq!(radius_for(1.0, 256, MISS_TARGET), 0);
        assert_eq!(radius_for(-1.0, 256, MISS_TARGET), 256);
        // mean at 0.85 is 256·acos(0.85)/π ≈ 45.3: the radius sits several σ (≈ 6.1) above it
        assert!((70..=85).contains(&r85), "{r85}");
    }
}
