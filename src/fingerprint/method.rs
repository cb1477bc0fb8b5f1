//! The near-duplicate *method* of a database: which sketch a document gets besides its shingle set,
//! and which rule makes two documents candidates. A method is a value of the spec
//! ([`FingerprintSpec::method`](super::spec::FingerprintSpec)), with every parameter a field, so a
//! database stores it, compares it on open and pins it with golden vectors like any other spec field.
//!
//! | method | sketch (words of [`Fingerprint::sketch`](super::Fingerprint)) | candidate rule | paper |
//! |---|---|---|---|
//! | `simhash` | none (the 64-bit SimHash is all) | Hamming ≤ k of 64 | 000 |
//! | `broder` | `supershingles` u64 supershingles | ≥ `min_shared` equal supershingles (same position) | 004 Alg. B |
//! | `charikar` | `bits / 64` words of the projection | ≤ k of `bits` bits differ | 004 Alg. C |
//! | `broder-charikar` | the supershingles, then the projection | Broder's rule, then ≤ k bits differ (k = 29: C-similarity ≥ 355) | 004 combined |
//! | `weighted-simhash` | none (the SimHash is IDF-weighted) | Hamming ≤ k of 64 | 002 §3.1 |
//! | `multi-lexicon` | a presence mask, then one SimHash per lexicon | Hamming ≤ k in any lexicon both documents have | 002 §3.2 |
//!
//! Every method keeps the document's shingle set (the spec's `unit`/`n`, word trigrams by default)
//! for exact Jaccard verification, and its 64-bit SimHash in the permuted tables. `k` is the
//! database's `max_distance` (default per method: [`Method::default_max_distance`]); `min_shared`
//! is stored here and can be changed per query.
//!
//! All hashes are seeded from the spec's `seed` with a fixed domain constant per use (xxh3-64 and
//! splitmix64 only), so sketches are stable across versions and platforms.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::fingerprint::idf::IdfTable;
use crate::fingerprint::normalize::NORMALIZER_VERSION;
pub use crate::fingerprint::params::{BroderParams, CharikarParams, IdfHandle, LexiconParams, WeightedParams};

/// The method of a database (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Hash, Default)]
pub enum Method {
    /// 64-bit SimHash over the spec's shingles (as Zhang & Lu use it; fpdb's original method).
    #[default]
    SimHash,
    /// Supershingles (Henzinger's Algorithm B).
    Broder(BroderParams),
    /// 384-bit random projection (Henzinger's Algorithm C).
    Charikar(CharikarParams),
    /// Algorithm B's candidates kept when the projections differ in at most k bits (Henzinger's
    /// combined algorithm; k = 29 is its C-similarity threshold 355 of 384).
    BroderCharikar(BroderParams, CharikarParams),
    /// IDF-weighted shingle SimHash (Fan & Huang §3.1).
    WeightedSimHash(WeightedParams),
    /// One SimHash per random sub-lexicon (Fan & Huang §3.2).
    MultiLexicon(LexiconParams),
}

/// The names accepted by [`Method::from_str`] (`fpdb init --method`).
pub const METHOD_NAMES: [&str; 6] = [
    "simhash",
    "broder",
    "charikar",
    "broder-charikar",
    "weighted-simhash",
    "multi-lexicon",
];

impl Method {
    /// The method's name (one of [`METHOD_NAMES`]).
    pub fn name(&self) -> &'static str {
        match self {
            Method::SimHash => "simhash",
            Method::Broder(_) => "broder",
            Method::Charikar(_) => "charikar",
            Method::BroderCharikar(..) => "broder-charikar",
            Method::WeightedSimHash(_) => "weighted-simhash",
            Method::MultiLexicon(_) => "multi-lexicon",
        }
    }

    /// The default maximum distance k of a new database with this method: the papers' values
    /// (Charikar 12 of 384 = C-similarity 372; the combined algorithm 29 = C-similarity 355) and
    /// fpdb's measured defaults for the 64-bit SimHashes (docs/methods.md).
    pub fn default_max_distance(&self) -> u32 {
        match self {
            Method::SimHash | Method::WeightedSimHash(_) | Method::Broder(_) | Method::Charikar(_) => 12,
            Method::BroderCharikar(..) => 29,
            Method::MultiLexicon(_) => 6,
        }
    }

    /// Number of u64 words of the method's sketch.
    pub fn sketch_words(&self) -> usize {
        match self {
            Method::SimHash | Method::WeightedSimHash(_) => 0,
            Method::Broder(b) => b.supershingles as usize,
            Method::Charikar(c) => c.bits as usize / 64,
            Method::BroderCharikar(b, c) => b.supershingles as usize + c.bits as usize / 64,
            Method::MultiLexicon(l) => 1 + l.lexicons as usize,
        }
    }

    /// Whether the candidate search is the SimHash tables' (simhash, weighted-simhash) rather than
    /// a method index.
    pub fn uses_simhash_tables(&self) -> bool {
        matches!(self, Method::SimHash | Method::WeightedSimHash(_))
    }

    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<()> {
        match self {
            Method::SimHash => Ok(()),
            Method::Broder(b) => broder(b),
            Method::Charikar(c) => charikar(c),
            Method::BroderCharikar(b, c) => broder(b).and_then(|()| charikar(c)),
            Method::WeightedSimHash(w) => weighted(w),
            Method::MultiLexicon(l) => lexicons(l),
        }
    }

    /// `(field, value)` for the method and each parameter, in a fixed order: what `check_matches`
    /// compares and names.
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        let mut v = vec![("method", self.name().to_string())];
        let broder = |v: &mut Vec<(&'static str, String)>, b: &BroderParams| {
            v.push(("method.shingle", b.shingle.to_string()));
            v.push(("method.minhashes", b.minhashes.to_string()));
            v.push(("method.supershingles", b.supershingles.to_string()));
            v.push(("method.min_shared", b.min_shared.to_string()));
        };
        let charikar = |v: &mut Vec<(&'static str, String)>, c: &CharikarParams| {
            v.push(("method.bits", c.bits.to_string()));
            v.push(("method.blocks", c.blocks.to_string()));
        };
        match self {
            Method::SimHash => {}
            Method::Broder(b) => broder(&mut v, b),
            Method::Charikar(c) => charikar(&mut v, c),
            Method::BroderCharikar(b, c) => {
                broder(&mut v, b);
                charikar(&mut v, c);
            }
            Method::WeightedSimHash(w) => {
                v.push(("method.shingle", w.shingle.to_string()));
                v.push(("method.idf_hash", format!("{:#x}", w.idf_hash)));
            }
            Method::MultiLexicon(l) => {
                v.push(("method.lexicons", l.lexicons.to_string()));
                v.push(("method.keep_permille", l.keep_permille.to_string()));
                v.push(("method.shingle", l.shingle.to_string()));
            }
        }
        v
    }

    /// The IDF table of a weighted-simhash method, when loaded.
    pub fn idf(&self) -> Option<&Arc<IdfTable>> {
        match self {
            Method::WeightedSimHash(w) => w.idf.0.as_ref(),
            _ => None,
        }
    }

    /// A method by name with its options, as `fpdb init --method NAME [--idf-from CORPUS]
    /// [--min-shared S]` and the Python `Db.create(method=, idf_from=, min_shared=)` build it:
    /// `idf` builds the IDF table (called only once the name is known to be weighted-simhash, so a
    /// wrong combination is refused before a corpus is read); required by weighted-simhash and
    /// refused by the others. `min_shared` applies to broder and broder-charikar only. The result
    /// is validated. The table must be tokenized by the spec's normalizer
    /// ([`Method::with_options_for`] says which; this one builds for the current default).
    pub fn with_options<F>(name: &str, idf: Option<F>, min_shared: Option<u32>) -> Result<Method>
    where
        F: FnOnce() -> Result<IdfTable>,
    {
        Self::with_options_for(NORMALIZER_VERSION, name, idf.map(|b| move |_| b()), min_shared)
    }

    /// [`Method::with_options`] for a spec with normalizer `normalizer`: `idf` is called with it, to
    /// tokenize the training texts as the database will (`IdfTable::from_jsonl_with(path, n)`).
    pub fn with_options_for<F>(normalizer: u32, name: &str, idf: Option<F>, min_shared: Option<u32>) -> Result<Method>
    where
        F: FnOnce(u32) -> Result<IdfTable>,
    {
        let mut method: Method = name.parse()?;
        match (&method, idf) {
            (Method::WeightedSimHash(_), Some(build)) => method = Method::weighted(Arc::new(build(normalizer)?)),
            (Method::WeightedSimHash(_), None) => {
                return Err(Error::InvalidOption {
                    name: "idf_from",
                    message: "weighted-simhash needs an IDF table: the training corpus whose document frequencies are frozen into the database (fpdb init --idf-from CORPUS.jsonl; Python: idf_from=)".into(),
                })
            }
            (_, Some(_)) => {
                return Err(Error::InvalidOption {
                    name: "idf_from",
                    message: format!("an IDF table only applies to weighted-simhash, not {name}"),
                })
            }
            (_, None) => {}
        }
        match (&mut method, min_shared) {
            (Method::Broder(b) | Method::BroderCharikar(b, _), Some(s)) => b.min_shared = s,
            (_, Some(_)) => {
                return Err(Error::InvalidOption {
                    name: "min_shared",
                    message: format!("the number of equal supershingles only applies to broder and broder-charikar, not {name}"),
                })
            }
            (_, None) => {}
        }
        method.validate()?;
        Ok(method)
    }

    /// A weighted-simhash method over `table` with the paper's shingle size.
    pub fn weighted(table: Arc<IdfTable>) -> Method {
        Method::WeightedSimHash(WeightedParams {
            shingle: 2,
            idf_hash: table.hash(),
            idf: IdfHandle(Some(table)),
        })
    }
}

/// The error of a parameter out of its range ([`Method::validate`]).
fn bad(name: &'static str, message: String) -> Result<()> {
    Err(Error::InvalidOption { name, message })
}

/// [`Method::validate`] of Broder's parameters.
fn broder(b: &BroderParams) -> Result<()> {
    if !(1..=32).contains(&b.shingle) {
        return bad(
            "spec.method.shingle",
            format!("Broder shingles must be 1..=32 tokens, got {}", b.shingle),
        );
    }
    if !(1..=64).contains(&b.supershingles) {
        return bad(
            "spec.method.supershingles",
            format!("the number of supershingles must be 1..=64, got {}", b.supershingles),
        );
    }
    if b.minhashes == 0 || b.minhashes > 1024 || !b.minhashes.is_multiple_of(b.supershingles) {
        return bad(
            "spec.method.minhashes",
            format!(
                "the number of min-hashes must be a multiple of the {} supershingles, at most 1024; got {}",
                b.supershingles, b.minhashes
            ),
        );
    }
    if !(1..=b.supershingles).contains(&b.min_shared) {
        return bad(
            "spec.method.min_shared",
            format!(
                "min_shared must be 1..={} (the supershingles), got {}",
                b.supershingles, b.min_shared
            ),
        );
    }
    Ok(())
}

/// [`Method::validate`] of Charikar's parameters.
fn charikar(c: &CharikarParams) -> Result<()> {
    if c.bits == 0 || c.bits > 1024 || !c.bits.is_multiple_of(64) {
        return bad(
            "spec.method.bits",
            format!("the projection must have 64..=1024 bits, a multiple of 64; got {}", c.bits),
        );
    }
    if !(1..=64).contains(&c.blocks) || c.bits.div_ceil(c.blocks) > 64 {
        return bad(
            "spec.method.blocks",
            format!(
                "the index needs 1..=64 blocks of at most 64 bits each, got {} for {} bits",
                c.blocks, c.bits
            ),
        );
    }
    Ok(())
}

/// [`Method::validate`] of weighted-simhash's parameters and IDF table.
fn weighted(w: &WeightedParams) -> Result<()> {
    if !(1..=32).contains(&w.shingle) {
        return bad("spec.method.shingle", format!("shingles must be 1..=32 words, got {}", w.shingle));
    }
    match &w.idf.0 {
        None => bad(
            "spec.method.idf",
            "the weighted-simhash method needs its IDF table (build one with `fpdb init --method weighted-simhash --idf-from CORPUS.jsonl`)".into(),
        ),
        Some(t) if t.hash() != w.idf_hash => bad(
            "spec.method.idf_hash",
            format!("the IDF table hashes to {:#x}, the spec names {:#x}", t.hash(), w.idf_hash),
        ),
        Some(_) => Ok(()),
    }
}

/// [`Method::validate`] of multi-lexicon's parameters.
fn lexicons(l: &LexiconParams) -> Result<()> {
    if !(1..=16).contains(&l.lexicons) {
        return bad(
            "spec.method.lexicons",
            format!("the number of lexicons must be 1..=16, got {}", l.lexicons),
        );
    }
    if !(1..=1000).contains(&l.keep_permille) {
        return bad(
            "spec.method.keep_permille",
            format!("keep_permille must be 1..=1000, got {}", l.keep_permille),
        );
    }
    if !(1..=32).contains(&l.shingle) {
        return bad("spec.method.shingle", format!("shingles must be 1..=32 words, got {}", l.shingle));
    }
    Ok(())
}

impl fmt::Display for Method {
    /// `name(param=value,...)`, or `simhash`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fields = self.fields();
        f.write_str(self.name())?;
        if fields.len() > 1 {
            let inner: Vec<String> = fields[1..]
                .iter()
                .map(|(k, v)| format!("{}={v}", k.trim_start_matches("method.")))
                .collect();
            write!(f, "({})", inner.join(","))?;
        }
        Ok(())
    }
}

impl FromStr for Method {
    type Err = Error;
    /// A method name with the papers' parameters. `weighted-simhash` parses without its table
    /// (attach one before use; `fpdb init --idf-from` does).
    fn from_str(s: &str) -> Result<Method> {
        Ok(match s.trim() {
            "simhash" => Method::SimHash,
            "broder" => Method::Broder(BroderParams::default()),
            "charikar" => Method::Charikar(CharikarParams::default()),
            "broder-charikar" => Method::BroderCharikar(BroderParams::default(), CharikarParams::default()),
            "weighted-simhash" => Method::WeightedSimHash(WeightedParams {
                shingle: 2,
                idf_hash: 0,
                idf: IdfHandle(None),
            }),
            "multi-lexicon" => Method::MultiLexicon(LexiconParams::default()),
            other => {
                return Err(Error::InvalidOption {
                    name: "method",
                    message: format!("unknown method {other:?}; expected one of {}", METHOD_NAMES.join(", ")),
                })
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_to_itself_and_validates() {
        for name in METHOD_NAMES {
            let m: Method = name.parse().unwrap();
            assert_eq!(m.name(), name);
            if name != "weighted-simhash" {
                m.validate().unwrap();
            } else {
                assert!(m.validate().is_err(), "a weighted method without its table is refused");
            }
        }
        assert!("minhash".parse::<Method>().is_err());
    }

    #[test]
    fn out_of_range_parameters_are_refused_by_name() {
        let b = |f: fn(&mut BroderParams)| {
            let mut p = BroderParams::default();
            f(&mut p);
            match Method::Broder(p).validate() {
                Err(Error::InvalidOption { name, .. }) => name,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(b(|p| p.minhashes = 85), "spec.method.minhashes");
        assert_eq!(b(|p| p.min_shared = 7), "spec.method.min_shared");
        assert_eq!(b(|p| p.min_shared = 0), "spec.method.min_shared");
        assert_eq!(b(|p| p.shingle = 0), "spec.method.shingle");
        let c = Method::Charikar(CharikarParams { bits: 100, blocks: 13 });
        assert!(matches!(
            c.validate(),
            Err(Error::InvalidOption {
                name: "spec.method.bits",
                ..
            })
        ));
    }

    #[test]
    fn display_names_every_parameter() {
        assert_eq!(Method::SimHash.to_string(), "simhash");
        assert_eq!(
            "broder".parse::<Method>().unwrap().to_string(),
            "broder(shingle=8,minhashes=84,supershingles=6,min_shared=2)"
        );
        assert_eq!(
            "multi-lexicon".parse::<Method>().unwrap().to_string(),
            "multi-lexicon(lexicons=5,keep_permille=900,shingle=2)"
        );
    }
}
