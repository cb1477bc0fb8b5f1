//! The near-duplicate candidate search and its rule: the SimHash tables (`Db::probe`), or the side
//! index that answers it in their place (`side::SideIndex::searches_candidates`: the other
//! methods' bucket index); and the method's comparison of two fingerprints.

use crate::error::{Error, Result};
use crate::fingerprint::method::Method;
use crate::fingerprint::similarity::{compare, MethodScore, Rule};
use crate::fingerprint::Fingerprint;

use super::handle::Db;
use super::options::check_k;
use super::state::State;

impl Db {
    /// Whether the SimHash tables answer the candidate search (no side index does instead).
    pub(super) fn searches_tables(&self) -> bool {
        self.inner.sides().candidate_search().is_none()
    }

    /// The rule of a query: `k` (default: the database's) and `s` (default: the spec's).
    pub(super) fn rule(&self, k: Option<u32>, min_shared: Option<u32>) -> Result<Rule> {
        let max_distance = check_k(k.unwrap_or(self.inner.config.max_distance))?;
        let default_s = match &self.inner.spec.method {
            Method::Broder(b) | Method::BroderCharikar(b, _) => b.min_shared,
            _ => 1,
        };
        let min_shared = min_shared.unwrap_or(default_s);
        if let Method::Broder(b) | Method::BroderCharikar(b, _) = &self.inner.spec.method {
            if !(1..=b.supershingles).contains(&min_shared) {
                return Err(Error::InvalidOption {
                    name: "min_shared",
                    message: format!("must be within 1..={} (the supershingles), got {min_shared}", b.supershingles),
                });
            }
        }
        Ok(Rule { max_distance, min_shared })
    }

    /// The method's comparison of a fingerprint with a stored (or pending) document.
    pub(super) fn compare_with(&self, fp: &Fingerprint, simhash: u64, sketch: &[u64]) -> MethodScore {
        compare(&self.inner.spec.method, fp.simhash, &fp.sketch, simhash, sketch)
    }

    /// Every published document satisfying `rule` against `fp`, once: `f(id, score)`. The SimHash
    /// tables (the mirror, or RocksDB without it, filtered to the published documents), or the
    /// side index that searches in their place.
    pub(super) fn candidates(&self, st: &State, fp: &Fingerprint, rule: Rule, mut f: impl FnMut(u64, MethodScore)) -> Result<()> {
        match self.inner.sides().candidate_search() {
            None => self.probe(st, fp.simhash, rule.max_distance, |id, d| f(id, MethodScore::Hamming(d))),
            Some(side) => side.candidates(self, st, fp, rule, &mut f),
        }
    }
}
