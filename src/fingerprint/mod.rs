//! Step 1 of the data path: text → fingerprint. Every parameter that changes a fingerprint is a
//! field of the stored [`spec::FingerprintSpec`]; every hash is seeded and fixed (xxh3-64,
//! splitmix64), never std's `DefaultHasher`, so fingerprints are stable across versions and
//! platforms (golden vectors in `tests/golden.rs`).
//!
//! normalize → shingle → simhash, as one reusable object ([`Fingerprinter`]); [`similarity`] holds
//! the measures that compare fingerprints (Hamming, Jaccard).

pub mod biblio;
pub mod containment;
pub mod normalize;
pub mod shingle;
pub mod simhash;
pub mod similarity;
pub mod spec;

use crate::fingerprint::normalize::normalize_into;
use crate::fingerprint::shingle::{shingle_hashes, shingle_set};
use crate::fingerprint::simhash::simhash;
use crate::fingerprint::spec::{FingerprintSpec, Weighting};

/// A document's fingerprint under a spec: its SimHash and its shingle set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    /// 64-bit SimHash.
    pub simhash: u64,
    /// Low 32 bits of each shingle hash, sorted and unique.
    pub shingles: Vec<u32>,
}

/// Computes fingerprints, reusing its buffers between documents. One per thread.
#[derive(Clone, Debug)]
pub struct Fingerprinter {
    spec: FingerprintSpec,
    norm: String,
    hashes: Vec<u64>,
}

impl Fingerprinter {
    /// A fingerprinter for `spec`.
    pub fn new(spec: FingerprintSpec) -> Self {
        Fingerprinter {
            spec,
            norm: String::new(),
            hashes: Vec::new(),
        }
    }

    /// The spec in use.
    pub fn spec(&self) -> &FingerprintSpec {
        &self.spec
    }

    /// Fingerprints `text`. A text with no token gives an empty shingle set and SimHash 0.
    pub fn fingerprint(&mut self, text: &str) -> Fingerprint {
        normalize_into(text, &mut self.norm);
        shingle_hashes(&self.spec, &self.norm, &mut self.hashes);
        let shingles = shingle_set(&self.hashes);
        if self.spec.weighting == Weighting::Binary {
            self.hashes.sort_unstable();
            self.hashes.dedup();
        }
        Fingerprint {
            simhash: simhash(&self.hashes),
            shingles,
        }
    }
}

/// One-shot convenience: fingerprint `text` under `spec`.
pub fn fingerprint(spec: &FingerprintSpec, text: &str) -> Fingerprint {
    Fingerprinter::new(spec.clone()).fingerprint(text)
}
