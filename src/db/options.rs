//! What a caller sets: creation settings (fixed for the database's life), handle settings, query
//! settings, and the accepted ranges of every value (checked here, once).

use crate::error::{Error, Result};
use crate::fingerprint::spec::FingerprintSpec;
use crate::index::MAX_TABLES;

/// Default maximum Hamming distance `k` of a new database. Seed 000 used 8; on the labelled corpora
/// of docs/quality.md k = 8 finds only 94–99% of the pairs with Jaccard ≥ 0.9 and k = 12 ≥ 99.7%.
pub const DEFAULT_MAX_DISTANCE: u32 = 12;
/// Default minimum Jaccard similarity `t` of a verified near-duplicate (seed 000).
pub const DEFAULT_MIN_JACCARD: f64 = 0.9;

/// Largest accepted key, in bytes.
pub const MAX_KEY_BYTES: usize = 64 * 1024;
/// Largest distance a query may ask for.
pub const MAX_DISTANCE: u32 = 32;

/// How many tables (blocks) the database uses; fixed at creation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tables {
    /// Chosen from the default distance by the measured rule in docs/performance.md ([`auto_tables`]).
    Auto,
    /// `k+1` blocks: exact block match for the default distance (the classic layout).
    KPlusOne,
    /// Exactly `m` blocks (1..=32).
    Blocks(u32),
}

/// The measured choice of `--tables auto` for a default distance `k` (docs/performance.md, "The
/// table-layout decision"): exact block match (k+1 tables) up to k = 3, five tables for k = 4..=16
/// (fastest in-memory probe at 1M real documents for k = 8 and k = 12), six beyond (not measured).
pub fn auto_tables(k: u32) -> u32 {
    match k {
        0..=3 => k + 1,
        4..=16 => 5,
        _ => 6,
    }
}

impl Tables {
    /// The number of tables for default distance `k`.
    pub fn resolve(self, k: u32) -> Result<u32> {
        let m = match self {
            Tables::Auto => auto_tables(k),
            Tables::KPlusOne => k + 1,
            Tables::Blocks(m) => m,
        };
        if !(1..=MAX_TABLES).contains(&m) {
            return Err(Error::InvalidOption {
                name: "tables",
                message: format!("the number of tables must be 1..={MAX_TABLES}, got {m}"),
            });
        }
        Ok(m)
    }
}

/// Settings fixed when a database is created.
#[derive(Clone, Debug)]
pub struct CreateOptions {
    /// The fingerprint spec.
    pub spec: FingerprintSpec,
    /// Table layout.
    pub tables: Tables,
    /// Default maximum Hamming distance (k).
    pub max_distance: u32,
    /// Default minimum Jaccard similarity (t).
    pub min_jaccard: f64,
}

impl Default for CreateOptions {
    /// Word trigrams with binary weights, k = 12, t = 0.9, tables chosen automatically. Seed 000 used
    /// k = 8; on the labelled corpora of docs/quality.md k = 8 finds only 94–99% of the pairs with
    /// Jaccard ≥ 0.9 and k = 12 finds ≥ 99.7%.
    fn default() -> Self {
        CreateOptions {
            spec: FingerprintSpec::default(),
            tables: Tables::Auto,
            max_distance: DEFAULT_MAX_DISTANCE,
            min_jaccard: DEFAULT_MIN_JACCARD,
        }
    }
}

/// Settings of one open handle.
#[derive(Clone, Debug)]
pub struct Options {
    /// fsync segments and sync the WAL on every commit (default). Off: a process crash loses nothing,
    /// a power loss may lose the last batches.
    pub sync: bool,
    /// Probe an in-memory mirror of the tables (default) instead of RocksDB.
    pub mirror: bool,
    /// Open without writing anything (no recovery, no lock); writes fail with [`Error::ReadOnly`].
    pub read_only: bool,
    /// Size at which a segment is sealed and a new one started.
    pub segment_size: u64,
    /// RocksDB block cache shared by all column families.
    pub cache_bytes: usize,
    /// The spec the caller expects; a different stored spec is refused.
    pub expect_spec: Option<FingerprintSpec>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sync: true,
            mirror: true,
            read_only: false,
            segment_size: 64 << 20,
            cache_bytes: 64 << 20,
            expect_spec: None,
        }
    }
}

/// What to do with a document that has verified near-duplicates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Dedup {
    /// Store it and join its duplicates' group (default).
    #[default]
    Link,
    /// Do not store it; report its duplicates.
    Skip,
    /// Store it without looking for duplicates (its own group).
    Off,
}

/// Query settings; `None` fields take the database's defaults.
#[derive(Clone, Debug, Default)]
pub struct QueryOptions {
    /// Maximum Hamming distance (default: the database's k).
    pub max_distance: Option<u32>,
    /// Minimum Jaccard (default: the database's t). `Some(0.0)` keeps every candidate within k.
    pub min_jaccard: Option<f64>,
    /// At most this many hits (best first).
    pub limit: Option<usize>,
    /// method: fewest equal supershingles under broder / broder-charikar (default: the spec's
    /// `min_shared`, 2). Ignored by the other methods.
    pub min_shared: Option<u32>,
}

/// Checks a key against the accepted range.
pub fn validate_key(key: &str) -> Result<()> {
    if key.is_empty() {
        return Err(Error::input(None, "the key is empty; every document needs a non-empty key"));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(Error::input(
            Some(key.as_bytes()),
            format!("the key is {} bytes; keys may be at most {MAX_KEY_BYTES} bytes", key.len()),
        ));
    }
    Ok(())
}

pub(super) fn check_t(t: f64) -> Result<f64> {
    if (0.0..=1.0).contains(&t) {
        Ok(t)
    } else {
        Err(Error::InvalidOption {
            name: "min_jaccard",
            message: format!("must be within 0.0..=1.0, got {t}"),
        })
    }
}

pub(super) fn check_k(k: u32) -> Result<u32> {
    if k <= MAX_DISTANCE {
        Ok(k)
    } else {
        Err(Error::InvalidOption {
            name: "max_distance",
            message: format!("must be within 0..={MAX_DISTANCE}, got {k}"),
        })
    }
}
