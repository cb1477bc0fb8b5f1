//! What a caller sets: creation settings (fixed for the database's life), handle settings, query
//! settings, and the accepted ranges of every value (checked here, once).

use crate::error::{Error, Result};
use crate::fingerprint::spec::FingerprintSpec;
use crate::index::MAX_TABLES;

/// Default maximum Hamming distance `k` of a new database. Zhang & Lu used 8; on the labelled corpora
/// of docs/quality.md k = 8 finds only 94–99% of the pairs with Jaccard ≥ 0.9 and k = 12 ≥ 99.7%.
pub const DEFAULT_MAX_DISTANCE: u32 = 12;
/// Default minimum Jaccard similarity `t` of a verified near-duplicate (Zhang & Lu's threshold).
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

impl std::str::FromStr for Tables {
    type Err = Error;
    /// `auto`, `k+1` or a number of tables (the CLI's `--tables`, the bindings' `tables=`).
    fn from_str(s: &str) -> Result<Tables> {
        match s.trim() {
            "auto" => Ok(Tables::Auto),
            "k+1" | "k1" => Ok(Tables::KPlusOne),
            n => n.parse().map(Tables::Blocks).map_err(|_| Error::InvalidOption {
                name: "tables",
                message: format!("expected a number of tables, `k+1` or `auto`, got {s:?}"),
            }),
        }
    }
}

impl Tables {
    /// The number of tables for default distance `k` at creation.
    pub fn resolve(self, k: u32) -> Result<u32> {
        self.resolve_with(k, auto_tables(k))
    }

    /// The number of tables for default distance `k` in a database of `n` documents (`Db::reindex`):
    /// `Auto` is the modelled best for that size ([`crate::index::layout::best_tables`]).
    pub fn resolve_for(self, k: u32, n: u64) -> Result<u32> {
        self.resolve_with(k, crate::index::layout::best_tables(k, n))
    }

    fn resolve_with(self, k: u32, auto: u32) -> Result<u32> {
        let m = match self {
            Tables::Auto => auto,
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

/// Settings fixed when a database is created. Build with [`CreateOptions::default`] and the
/// `with_*` methods (or set the public fields of a default value).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CreateOptions {
    /// The fingerprint spec.
    pub spec: FingerprintSpec,
    /// Table layout.
    pub tables: Tables,
    /// Default maximum Hamming distance (k).
    pub max_distance: u32,
    /// Default minimum Jaccard similarity (t).
    pub min_jaccard: f64,
    /// The containment index (`None`: no index; containment queries are then refused).
    pub containment: Option<ContainmentConfig>,
    /// The CORE paper's semantic channel (`None`: none; feature `semantic`).
    #[cfg(feature = "semantic")]
    pub semantic: Option<crate::semantic::SemanticConfig>,
    /// Keep every document's text, compressed (`fpdb init --store-text`; `db::side::text`).
    pub store_text: bool,
}

impl Default for CreateOptions {
    /// Word trigrams with binary weights, k = 12, t = 0.9, tables chosen automatically. Zhang & Lu used
    /// k = 8; on the labelled corpora of docs/quality.md k = 8 finds only 94–99% of the pairs with
    /// Jaccard ≥ 0.9 and k = 12 finds ≥ 99.7%.
    fn default() -> Self {
        CreateOptions {
            spec: FingerprintSpec::default(),
            tables: Tables::Auto,
            max_distance: DEFAULT_MAX_DISTANCE,
            min_jaccard: DEFAULT_MIN_JACCARD,
            containment: DEFAULT_CONTAINMENT.then(ContainmentConfig::default),
            #[cfg(feature = "semantic")]
            semantic: None,
            store_text: false,
        }
    }
}

/// Settings of one open handle.
#[derive(Clone, Debug)]
pub struct Options {
    /// fsync segments and sync the WAL on every commit (default). Off: a process crash loses nothing,
    /// a power loss may lose the last batches.
    pub sync: bool,
    /// Probe an in-memory mirror of the tables (default) instead of RocksDB. It costs about
    /// `12·m + 16` bytes per document (a sealed CSR run; the mutable delta of recent inserts a
    /// little more), and twice that while a merge builds the next run.
    pub mirror: bool,
    /// Open without writing anything (no recovery, no lock); writes fail with [`Error::ReadOnly`].
    pub read_only: bool,
    /// Size at which a segment is sealed and a new one started.
    pub segment_size: u64,
    /// RocksDB block cache shared by all column families.
    pub cache_bytes: usize,
    /// The spec the caller expects; a different stored spec is refused with
    /// [`Error::SpecMismatch`] naming the field. The normalizer version and the hash are not
    /// compared: a database keeps those it was created with, so a default spec of a newer build
    /// opens it.
    pub expect_spec: Option<FingerprintSpec>,
    /// Threads one query's probe of the mirror may use, the calling thread included: 0 (default)
    /// one per core, 1 the calling thread alone. Only a probe expected to scan many entries is
    /// split (`internals::layout::SPLIT_MIN_ENTRIES`: at k = 12 and the default layout, from about
    /// 2.6M documents): at 10M documents a k = 12 probe streams ~3 MB of bucket fingerprints, and
    /// one core's share of the memory bandwidth bounds it. The crawler loop's workers never split
    /// (they already run one per core). Results are the same with any value.
    pub query_threads: usize,
    /// Containment-index postings (about 13 per document of 1 KB at the default sampling) held in
    /// memory before they are written to RocksDB as one sorted file, on a thread of its own (default
    /// 1M, about 34 MB, twice that while one is written; 0 writes them after every batch, before
    /// the commit returns). They never pass through the WAL: a crash loses nothing, the
    /// next open recomputes them from the stored shingle sets, which costs a little at open for
    /// each one held. Without a containment index, unused.
    pub contain_tail_postings: usize,
    /// With the mirror: documents committed before their SimHash table entries are written to
    /// RocksDB as one sorted file per table (default 4M, 16 bytes each while they wait; 0 writes
    /// them after every batch, before the commit returns). Until then the mirror alone indexes
    /// them; they never pass through the WAL, and a crash loses nothing: the next writable open
    /// writes them from the doc records. Without the mirror every commit writes its table entries.
    /// The files are written on a thread of their own while commits go on (~0.4 s of work per 1M
    /// documents on a 2-core machine); the next write waits for the last. Smaller values leave
    /// more overlapping files for RocksDB to merge (10M documents at 1M: 163.5 s instead of
    /// 143-148 s; docs/performance.md, "Measured in git history").
    pub table_tail_docs: usize,
    /// How this handle runs the semantic channel of a database created with one (feature `semantic`).
    #[cfg(feature = "semantic")]
    pub semantic: crate::semantic::SemanticOptions,
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
            query_threads: 0,
            contain_tail_postings: 1 << 20,
            table_tail_docs: 1 << 22,
            #[cfg(feature = "semantic")]
            semantic: crate::semantic::SemanticOptions::default(),
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

impl std::str::FromStr for Dedup {
    type Err = Error;
    /// `link`, `skip` or `off`.
    fn from_str(s: &str) -> Result<Dedup> {
        match s.trim() {
            "link" => Ok(Dedup::Link),
            "skip" => Ok(Dedup::Skip),
            "off" => Ok(Dedup::Off),
            _ => Err(Error::InvalidOption {
                name: "dedup",
                message: format!("expected `link` (store and join the group), `skip` (do not store duplicates) or `off`, got {s:?}"),
            }),
        }
    }
}

/// Query settings; `None` fields take the database's defaults. Build with
/// [`QueryOptions::default`] and the `with_*` methods.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct QueryOptions {
    /// Maximum Hamming distance (default: the database's k).
    pub max_distance: Option<u32>,
    /// Minimum Jaccard (default: the database's t). `Some(0.0)` keeps every candidate within k.
    pub min_jaccard: Option<f64>,
    /// At most this many hits (best first).
    pub limit: Option<usize>,
    /// A containment query: the stored documents whose containment in either direction (the query
    /// inside the document, or the document inside the query) is at least this, found through the
    /// containment index instead of the SimHash tables (`max_distance` and `min_jaccard` are then
    /// not used). Refused with [`Error::InvalidOption`] when the database has no containment index.
    pub min_containment: Option<f64>,
    /// Fewest equal supershingles under broder / broder-charikar (default: the spec's
    /// `min_shared`, 2). Ignored by the other methods.
    pub min_shared: Option<u32>,
    /// At most this many candidates (those that passed the Hamming and size filters, the nearest
    /// first) are verified by exact Jaccard; more make the answer truncated
    /// ([`QueryAnswer::truncated`](crate::QueryAnswer)). `None`: no bound.
    pub max_candidates: Option<usize>,
    /// Verification stops at this instant; candidates left make the answer truncated. `None`: no
    /// bound.
    pub deadline: Option<std::time::Instant>,
    /// The semantic channel's part ([`SemanticQuery`]); ignored without the channel.
    pub semantic: SemanticQuery,
}

/// The semantic channel's settings of one query ([`QueryOptions::semantic`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct SemanticQuery {
    /// β for this query (default: the database's, `fpdb init --min-cosine`).
    pub min_cosine: Option<f32>,
    /// Wait (at most this long) until the channel has embedded every document acknowledged
    /// before the query (`fpdb query --wait-semantic`); an answer that waited too long is an
    /// error. `None`: answer from what is embedded, `QueryAnswer::semantic_pending` says how
    /// much is not.
    pub wait: Option<std::time::Duration>,
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

// The builders of the option structs that gained fields (they are `#[non_exhaustive]`).

/// Whether a new database has the containment index unless told otherwise (measured:
/// docs/containment.md, "Cost and the default").
pub const DEFAULT_CONTAINMENT: bool = true;

use crate::fingerprint::containment::{DEFAULT_MAX_POSTINGS, DEFAULT_MAX_SAMPLES, DEFAULT_SAMPLE, MAX_SAMPLE};
pub use crate::store::doc_record::ContainmentConfig;

impl Default for ContainmentConfig {
    /// One shingle in [`DEFAULT_SAMPLE`] is a sample; posting lists longer than
    /// [`DEFAULT_MAX_POSTINGS`] are skipped by queries; a stored document keeps about
    /// [`DEFAULT_MAX_SAMPLES`] samples at most.
    fn default() -> Self {
        ContainmentConfig {
            sample: DEFAULT_SAMPLE,
            max_postings: DEFAULT_MAX_POSTINGS,
            max_samples: Some(DEFAULT_MAX_SAMPLES),
        }
    }
}

impl ContainmentConfig {
    /// An index sampling one shingle in `sample` (1 = every shingle), default posting cap.
    pub fn new(sample: u32) -> Self {
        ContainmentConfig {
            sample,
            ..ContainmentConfig::default()
        }
    }

    /// The index a front end asked for: `on` (default: [`DEFAULT_CONTAINMENT`](crate::DEFAULT_CONTAINMENT)),
    /// with the sampling rate, posting cap and sample cap given (defaults otherwise; a sample
    /// cap of 0 is "no cap"). A setting without the index is refused (`InvalidOption` naming
    /// `containment_sample`, `containment_max_postings` or `containment_max_samples`) rather than
    /// silently ignored. `fpdb init` and the Python `Db.create` both build their index this way.
    pub fn from_options(
        on: Option<bool>,
        sample: Option<u32>,
        max_postings: Option<u32>,
        max_samples: Option<u32>,
    ) -> Result<Option<Self>> {
        let d = ContainmentConfig::default();
        if !on.unwrap_or(crate::DEFAULT_CONTAINMENT) {
            let given = [
                ("containment_sample", sample.is_some()),
                ("containment_max_postings", max_postings.is_some()),
                ("containment_max_samples", max_samples.is_some()),
            ];
            return match given.into_iter().find(|g| g.1) {
                None => Ok(None),
                Some((name, _)) => Err(Error::InvalidOption {
                    name,
                    message: "only applies with the containment index on (this database would have none)".into(),
                }),
            };
        }
        let c = ContainmentConfig::new(sample.unwrap_or(d.sample))
            .with_max_postings(max_postings.unwrap_or(d.max_postings))
            .with_max_samples(max_samples.map_or(d.max_samples, |m| (m > 0).then_some(m)));
        c.validate()?;
        Ok(Some(c))
    }

    /// With a posting-list cap (see [`ContainmentConfig::max_postings`]).
    pub fn with_max_postings(mut self, max_postings: u32) -> Self {
        self.max_postings = max_postings;
        self
    }

    /// With a cap on a stored document's samples (`None`: every rate-n sample is a key, as in
    /// databases created before the cap; see [`ContainmentConfig::max_samples`]).
    pub fn with_max_samples(mut self, max_samples: Option<u32>) -> Self {
        self.max_samples = max_samples;
        self
    }

    /// Checks the accepted ranges: sample 1..=65536, max_postings ≥ 1, max_samples ≥ 1.
    pub fn validate(&self) -> Result<()> {
        if self.max_samples == Some(0) {
            return Err(Error::InvalidOption {
                name: "containment_max_samples",
                message: "the sample cap must be at least 1 (or none)".into(),
            });
        }
        if !(1..=MAX_SAMPLE).contains(&self.sample) {
            return Err(Error::InvalidOption {
                name: "containment_sample",
                message: format!("the sampling rate must be within 1..={MAX_SAMPLE}, got {}", self.sample),
            });
        }
        if self.max_postings == 0 {
            return Err(Error::InvalidOption {
                name: "containment_max_postings",
                message: "the posting-list cap must be at least 1".into(),
            });
        }
        Ok(())
    }
}

impl CreateOptions {
    /// With a fingerprint spec.
    pub fn with_spec(mut self, spec: FingerprintSpec) -> Self {
        self.spec = spec;
        self
    }

    /// With a table layout.
    pub fn with_tables(mut self, tables: Tables) -> Self {
        self.tables = tables;
        self
    }

    /// With a default maximum Hamming distance k.
    pub fn with_max_distance(mut self, k: u32) -> Self {
        self.max_distance = k;
        self
    }

    /// With a default minimum Jaccard t.
    pub fn with_min_jaccard(mut self, t: f64) -> Self {
        self.min_jaccard = t;
        self
    }

    /// With (`Some`) or without (`None`) the containment index.
    pub fn with_containment(mut self, containment: Option<ContainmentConfig>) -> Self {
        self.containment = containment;
        self
    }

    /// With (`true`) or without the stored texts (`StoredTexts::get`, `Db::reindex_spec`).
    pub fn with_store_text(mut self, store_text: bool) -> Self {
        self.store_text = store_text;
        self
    }

    /// With the semantic channel (feature `semantic`).
    #[cfg(feature = "semantic")]
    pub fn with_semantic(mut self, semantic: Option<crate::semantic::SemanticConfig>) -> Self {
        self.semantic = semantic;
        self
    }
}

impl QueryOptions {
    /// With a maximum Hamming distance.
    pub fn with_max_distance(mut self, k: u32) -> Self {
        self.max_distance = Some(k);
        self
    }

    /// With a minimum Jaccard.
    pub fn with_min_jaccard(mut self, t: f64) -> Self {
        self.min_jaccard = Some(t);
        self
    }

    /// With a limit on the number of hits.
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// A containment query (see [`QueryOptions::min_containment`]).
    pub fn with_min_containment(mut self, c: f64) -> Self {
        self.min_containment = Some(c);
        self
    }

    /// broder, broder-charikar: with the fewest equal supershingles a hit needs (see
    /// [`QueryOptions::min_shared`]).
    pub fn with_min_shared(mut self, s: u32) -> Self {
        self.min_shared = Some(s);
        self
    }

    /// With at most `n` candidates verified (see [`QueryOptions::max_candidates`]).
    pub fn with_max_candidates(mut self, n: usize) -> Self {
        self.max_candidates = Some(n);
        self
    }

    /// With a deadline for the verification (see [`QueryOptions::deadline`]).
    pub fn with_deadline(mut self, deadline: std::time::Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }
}

/// Checks a containment threshold (0..=1).
pub(crate) fn check_c(c: f64) -> Result<f64> {
    if (0.0..=1.0).contains(&c) {
        Ok(c)
    } else {
        Err(Error::InvalidOption {
            name: "min_containment",
            message: format!("must be within 0.0..=1.0, got {c}"),
        })
    }
}
