//! The channel as a side index: the shape the db/ seam registers. Each method is one
//! step of the core's life cycle:
//!
//! | core step        | call                                                                |
//! |------------------|---------------------------------------------------------------------|
//! | create           | [`SemanticChannel::create`] (stages the spec into the create batch)  |
//! | open             | [`SemanticChannel::load`] (spec check, vectors into memory, cursor)  |
//! | delete / replace | [`SemanticChannel::write_delete`] into the doc's batch, then         |
//! |                  | [`SemanticChannel::publish_delete`] after it is durable               |
//! | indexer commit   | [`SemanticChannel::write_vectors`] then [`SemanticChannel::publish`] |
//! | query            | [`SemanticChannel::query`] (exact or indexed, β default from spec)  |
//! | check            | [`SemanticChannel::check`]                                          |
//! | compact          | [`SemanticChannel::compact`]                                        |

use parking_lot::RwLock;
use rocksdb::{ColumnFamily, WriteBatch, DB};

use super::config::SearchMode;
use super::error::{corrupt, Result};
use super::model::Embedder;
use super::search::{radius_for, SemanticHit, VectorSet, MISS_TARGET};
use super::store::{self, CheckReport, SemanticSpec, CF_SEMANTIC, CF_SEMANTIC_QUEUE};
use super::vector::{quantize, Hyperplanes, StoredVector};
use crate::store::keys::CF_META;
use crate::Error;

/// The loaded channel: its spec, its hyperplanes, the vectors in memory.
#[derive(Debug)]
pub struct SemanticChannel {
    spec: SemanticSpec,
    planes: Hyperplanes,
    set: RwLock<VectorSet>,
    /// Counts the publishes of vectors: a writer that computed links outside a lock knows from it
    /// whether vectors were published meanwhile.
    generation: std::sync::atomic::AtomicU64,
}

/// The channel's column families (created with the database).
pub const COLUMN_FAMILIES: &[&str] = &[CF_SEMANTIC, CF_SEMANTIC_QUEUE];

fn meta_cf(db: &DB) -> Result<&ColumnFamily> {
    db.cf_handle(CF_META)
        .ok_or_else(|| corrupt(db, None, format!("the database has no `{CF_META}` column family")))
}

fn cfs(db: &DB) -> Result<(&ColumnFamily, &ColumnFamily)> {
    let get = |name: &str| {
        db.cf_handle(name)
            .ok_or_else(|| corrupt(db, None, format!("the database has no `{name}` column family")))
    };
    Ok((get(CF_SEMANTIC)?, get(CF_META)?))
}

impl SemanticChannel {
    fn with_spec(spec: SemanticSpec, set: VectorSet) -> SemanticChannel {
        let planes = Hyperplanes::new(spec.code_seed, spec.model.dim, spec.code_words);
        SemanticChannel {
            spec,
            planes,
            set: RwLock::new(set),
            generation: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// A new, empty channel: stages its spec into the database's create batch.
    pub fn create(db: &DB, batch: &mut WriteBatch, spec: SemanticSpec) -> Result<SemanticChannel> {
        if !(-1.0..=1.0).contains(&spec.min_cosine) {
            return Err(Error::InvalidOption {
                name: "min_cosine",
                message: format!("{} is outside [-1, 1]", spec.min_cosine),
            });
        }
        let (_, meta) = cfs(db)?;
        store::stage_spec(batch, meta, &spec)?;
        let set = VectorSet::new(spec.model.dim, spec.code_words);
        Ok(Self::with_spec(spec, set))
    }

    /// Opens the channel of a database: `None` when it has none. With `given`, the stored spec must
    /// match it ([`SemanticSpec::check_matches`]). Returns the channel and its durable cursor. A
    /// database whose channel was just added and that no writer opened since has no `semantic`
    /// column family yet (a writer's open creates it): it holds no vector.
    pub fn load(db: &DB, given: Option<&SemanticSpec>) -> Result<Option<(SemanticChannel, u64)>> {
        let meta = meta_cf(db)?;
        let Some(spec) = store::read_spec(db, meta)? else { return Ok(None) };
        if let Some(g) = given {
            spec.check_matches(g)?;
        }
        let set = match db.cf_handle(CF_SEMANTIC) {
            Some(cf) => store::load(db, cf, &spec)?,
            None => VectorSet::new(spec.model.dim, spec.code_words),
        };
        let cursor = store::read_cursor(db, meta)?;
        Ok(Some((Self::with_spec(spec, set), cursor)))
    }

    /// The spec.
    pub fn spec(&self) -> &SemanticSpec {
        &self.spec
    }

    /// The sign-code hyperplanes.
    pub fn planes(&self) -> &Hyperplanes {
        &self.planes
    }

    /// Refuses an embedder whose model is not the one the vectors were made with.
    pub fn check_embedder(&self, embedder: &Embedder) -> Result<()> {
        let mut given = self.spec.clone();
        given.model = embedder.info().clone();
        given.max_tokens = embedder.options().max_tokens;
        self.spec.check_matches(&given)
    }

    /// Embeds a query text with the channel's model and quantises it like the stored vectors.
    pub fn embed_query(&self, embedder: &Embedder, text: &str) -> Result<StoredVector> {
        self.check_embedder(embedder)?;
        let v = embedder.embed(&[text])?;
        Ok(self.quantize(v.first().map(Vec::as_slice).unwrap_or(&[])))
    }

    /// Quantises a float vector of the model's dimension.
    pub fn quantize(&self, v: &[f32]) -> StoredVector {
        quantize(v, &self.planes)
    }

    /// Stages vectors and the new cursor into `batch` (the indexer's commit).
    pub fn write_vectors(&self, db: &DB, batch: &mut WriteBatch, vectors: &[(u64, Vec<u8>)], cursor: u64) -> Result<()> {
        let (cf, meta) = cfs(db)?;
        store::stage_vectors(batch, cf, meta, vectors, cursor);
        Ok(())
    }

    /// Stages the delete of `id`'s vector into the document's delete/replace batch.
    pub fn write_delete(&self, db: &DB, batch: &mut WriteBatch, id: u64) -> Result<()> {
        let (cf, _) = cfs(db)?;
        store::stage_delete(batch, cf, id);
        Ok(())
    }

    /// After the batch of [`SemanticChannel::write_vectors`] is durable: the queries see them.
    pub fn publish(&self, vectors: &[(u64, StoredVector)]) {
        let mut set = self.set.write();
        for (id, v) in vectors {
            set.insert(*id, v);
        }
        self.generation.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// How many publishes of vectors this channel has seen (see the field).
    pub fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// After a delete's batch is durable.
    pub fn publish_delete(&self, id: u64) {
        self.set.write().remove(id);
    }

    /// Whether `id` has a vector (in memory).
    pub fn contains(&self, id: u64) -> bool {
        self.set.read().contains(id)
    }

    /// Vectors held.
    pub fn len(&self) -> usize {
        self.set.read().len()
    }

    /// True when no vector is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes of the in-memory vectors.
    pub fn memory_bytes(&self) -> usize {
        self.set.read().memory_bytes()
    }

    /// The stored vector of `id`.
    pub fn vector(&self, id: u64) -> Option<StoredVector> {
        self.set.read().get(id)
    }

    /// The Hamming radius of the index at `beta`.
    pub fn radius(&self, beta: f32) -> u32 {
        radius_for(beta, self.spec.code_words * 64, MISS_TARGET)
    }

    /// Documents with cos ≥ β (`beta` or the spec's default), best first; `exclude` leaves one id out
    /// (the query document itself).
    pub fn query(&self, q: &StoredVector, beta: Option<f32>, mode: SearchMode, exclude: Option<u64>) -> Vec<SemanticHit> {
        let beta = beta.unwrap_or(self.spec.min_cosine);
        let set = self.set.read();
        match mode {
            SearchMode::Exact => set.exact(q, beta, exclude),
            SearchMode::Indexed => set.indexed(q, beta, self.radius(beta), exclude),
        }
    }

    /// All pairs with cos ≥ β (a < b).
    pub fn pairs(&self, beta: Option<f32>, mode: SearchMode) -> Vec<(u64, u64, f32)> {
        let beta = beta.unwrap_or(self.spec.min_cosine);
        let radius = (mode == SearchMode::Indexed).then(|| self.radius(beta));
        self.set.read().pairs(beta, radius)
    }

    /// Checks the stored vectors against the cursor and the live docs (ascending ids); also that
    /// memory holds exactly what is stored.
    pub fn check(&self, db: &DB, live: &[u64]) -> Result<CheckReport> {
        let meta = meta_cf(db)?;
        let report = store::check(db, db.cf_handle(CF_SEMANTIC), meta, &self.spec, live)?;
        let held = self.len() as u64;
        if report.damaged.is_empty() && held != report.vectors {
            return Err(corrupt(db, None, format!("{} vectors stored but {held} in memory", report.vectors)));
        }
        Ok(report)
    }

    /// Stages deletes of vectors whose doc is no longer live (compaction); publish with
    /// [`SemanticChannel::publish_delete`] once durable. Returns the ids dropped.
    pub fn compact(&self, db: &DB, batch: &mut WriteBatch, live: impl Fn(u64) -> bool) -> Result<Vec<u64>> {
        let (cf, _) = cfs(db)?;
        // every stored record of a dead doc (memory holds exactly what is stored: `check`)
        store::stage_compact(db, cf, batch, &live)?;
        Ok(self.set.read().ids().iter().copied().filter(|&id| !live(id)).collect())
    }
}
