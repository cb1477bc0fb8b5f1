//! `fpdb.Db`: an open database handle.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use pyo3::prelude::*;

use crate::api::{
    pairs, report_groups, Biblio, ContainmentConfig, CreateOptions, Engine, Error, IngestOptions, NewDoc, Options, PairsOptions,
    QueryOptions,
};
use crate::convert;
use crate::errors::{raise, Kind, OrRaise};
use crate::ingest::Ingest;
use crate::listing::{BackfillReport, DocIter, PairIter, ReindexReport};
use crate::semantic;
use crate::types::{
    self, CheckReport, CompactStats, ContainPair, DistRow, Document, Hit, InsertOutcome, Pair, PairGroup, PairsReport, QueryAnswer, Spec,
    Stats,
};

/// An open fpdb database. Create one with `Db.create(path, ...)`, open one with `Db.open(path)`.
///
/// Use it as a context manager (`with fpdb.Db.open(path) as db:`) or call `close()`. A handle is
/// safe to share between threads: every call releases the GIL while the engine works, so threads
/// query in parallel, also while another thread inserts or ingests. A database is opened for writing
/// by one handle (one process) at a time; a second writer gets `LockedError`. Read-only handles
/// (`Db.open(path, read_only=True)`) see the database as of their opening.
#[pyclass(frozen, module = "fpdb")]
pub struct Db {
    engine: Mutex<Option<Engine>>,
    path: PathBuf,
}

impl Drop for Db {
    /// A `Db` dropped without `close()`: the last handle's drop flushes RocksDB's memtables and
    /// waits for its background work; do it without the GIL.
    fn drop(&mut self) {
        let engine = self.engine.get_mut().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(engine) = engine {
            crate::without_gil(move || drop(engine));
        }
    }
}

impl Db {
    fn wrap(engine: Engine, path: PathBuf) -> Self {
        Db {
            engine: Mutex::new(Some(engine)),
            path,
        }
    }

    /// A clone of the engine handle (cheap: a reference count), or `ClosedError`. Calls move it into
    /// their `detach` closure, so that dropping the last handle (a concurrent `close`) also happens
    /// without the GIL.
    pub fn engine(&self, py: Python<'_>) -> PyResult<Engine> {
        let guard = self.engine.lock().unwrap_or_else(|p| p.into_inner());
        match guard.as_ref() {
            Some(e) => Ok(e.clone()),
            None => Err(raise(
                py,
                Kind::Closed,
                format!("database {} is closed; open it again with fpdb.Db.open", self.path.display()),
                &[] as &[(&str, _)],
            )),
        }
    }
}

fn query_opts(
    max_distance: Option<u32>,
    min_jaccard: Option<f64>,
    limit: Option<usize>,
    min_containment: Option<f64>,
    min_shared: Option<u32>,
) -> QueryOptions {
    let mut q = QueryOptions::default();
    q.max_distance = max_distance;
    q.min_jaccard = min_jaccard;
    q.limit = limit;
    q.min_containment = min_containment;
    q.min_shared = min_shared;
    q
}

/// The options of `query` and `query_answer` (as `fpdb query`'s flags).
#[allow(clippy::too_many_arguments)]
fn text_query_opts(
    py: Python<'_>,
    max_distance: Option<u32>,
    min_jaccard: Option<f64>,
    limit: Option<usize>,
    min_containment: Option<f64>,
    min_shared: Option<u32>,
    min_cosine: Option<f32>,
    wait_semantic: Option<&Bound<'_, PyAny>>,
) -> PyResult<QueryOptions> {
    let mut q = query_opts(max_distance, min_jaccard, limit, min_containment, min_shared);
    q.semantic.min_cosine = min_cosine;
    q.semantic.wait = semantic::wait(py, wait_semantic)?;
    Ok(q)
}

#[pymethods]
impl Db {
    /// Db.create(path, *, max_distance=12, tables="auto", shingle="word:3", weights="binary",
    ///           min_jaccard=0.9, sync=True, method="simhash", idf_from=None, min_shared=None,
    ///           containment=True, containment_sample=None, containment_max_postings=None,
    ///           containment_max_samples=None, normalizer=2, store_text=False) -> Db
    ///
    /// Creates a database in `path` (a missing or empty directory) and opens it for writing.
    /// `max_distance` (k) and `min_jaccard` (t) are the defaults of queries and dedup; `tables` is a
    /// number of permuted tables, "k+1" or "auto"; `shingle` is "word:N" or "char:N"; `weights` is
    /// "binary" or "count". None takes the library's default (shown above). `sync=False` skips the
    /// fsyncs: a process crash loses nothing, a power loss may lose the last batches.
    ///
    /// `method` is the near-duplicate method, as `fpdb init --method`: "simhash", "broder",
    /// "charikar", "broder-charikar", "weighted-simhash" or "multi-lexicon" (the default
    /// `max_distance` is then the method's: 29 for broder-charikar, 6 for multi-lexicon, else 12).
    /// "weighted-simhash" needs `idf_from`: the corpus whose document frequencies are frozen into
    /// the database, a path to a JSONL file (its "text" fields, as `--idf-from`) or an iterable of
    /// texts. `min_shared` (broder, broder-charikar) is the default number of equal supershingles a
    /// near-duplicate needs.
    ///
    /// `containment` keeps the containment index (needed by `query(min_containment=...)`,
    /// `insert`/`ingest(containment=...)` and `containment_pairs`); `containment_sample` (one
    /// shingle in N is indexed), `containment_max_postings` (queries skip longer posting lists) and
    /// `containment_max_samples` (a long document is sampled at a coarser rate to keep near this
    /// many samples; 0: no cap; default 256) tune it, None taking the library's defaults; giving
    /// any with `containment=False` raises InvalidOptionError (as `fpdb init --containment off
    /// --containment-sample N` exits 2).
    /// `normalizer` is the text normalizer's version (`fpdb init --normalizer`): 2 makes each
    /// Chinese, Japanese, Thai … character a word; 1 is what fpdb builds before it can open.
    /// `store_text` keeps every document's text, compressed (`fpdb init --store-text`): `text(key)`.
    ///
    /// `semantic` (a model directory: `bash scripts/fetch-model.sh` fetches all-MiniLM-L6-v2 and
    /// prints it) adds the CORE paper's semantic channel, as `fpdb init --semantic MODEL_DIR`
    /// (docs/semantic.md): documents are embedded by a background indexer after they are
    /// acknowledged, and queries add the stored documents whose embedding has cosine >= β with
    /// the query's (hits with "semantic" in `channels`). `min_cosine` is the default β (None:
    /// the model's calibrated β, 0.81 for all-MiniLM-L6-v2; 0.76 for a model without one), `semantic_field` the metadata field embedded instead of the text (e.g. "abstract";
    /// a document without it is embedded by its text), `semantic_max_tokens` the truncation (None:
    /// 256), `groups` which matches form groups ("text", the default, or "union"). Giving these
    /// without `semantic` raises InvalidOptionError. `semantic_threads`, `semantic_batch`,
    /// `semantic_indexer`, `semantic_search` and `semantic_nice` are this handle's options, as in
    /// `Db.open`.
    /// Raises AlreadyExistsError, InvalidOptionError, IoError, ModelMissingError, ModelInvalidError.
    #[staticmethod]
    #[pyo3(signature = (path, *, max_distance = None, tables = None, shingle = None, weights = None, min_jaccard = None, sync = true,
                        method = None, idf_from = None, min_shared = None, containment = None, containment_sample = None,
                        containment_max_postings = None, containment_max_samples = None, normalizer = None, semantic = None, min_cosine = None,
                        semantic_field = None, semantic_max_tokens = None, groups = None, semantic_threads = None,
                        semantic_batch = None, semantic_indexer = None, semantic_search = None, semantic_nice = None,
                        store_text = false, hash = None))]
    #[allow(clippy::too_many_arguments)]
    fn create(
        py: Python<'_>,
        path: PathBuf,
        max_distance: Option<u32>,
        tables: Option<&Bound<'_, PyAny>>,
        shingle: Option<&str>,
        weights: Option<&str>,
        min_jaccard: Option<f64>,
        sync: bool,
        method: Option<&str>,
        idf_from: Option<&Bound<'_, PyAny>>,
        min_shared: Option<u32>,
        containment: Option<bool>,
        containment_sample: Option<u32>,
        containment_max_postings: Option<u32>,
        containment_max_samples: Option<u32>,
        normalizer: Option<u32>,
        semantic: Option<PathBuf>,
        min_cosine: Option<f32>,
        semantic_field: Option<String>,
        semantic_max_tokens: Option<usize>,
        groups: Option<String>,
        semantic_threads: Option<usize>,
        semantic_batch: Option<usize>,
        semantic_indexer: Option<bool>,
        semantic_search: Option<String>,
        semantic_nice: Option<i32>,
        store_text: bool,
        hash: Option<&str>,
    ) -> PyResult<Db> {
        let defaults = CreateOptions::default();
        let spec = convert::spec(py, shingle, weights, None, normalizer, hash)?;
        let method = convert::method(py, spec.normalizer, method, idf_from.filter(|c| !c.is_none()), min_shared)?;
        let contain = ContainmentConfig::from_options(containment, containment_sample, containment_max_postings, containment_max_samples)
            .or_raise(py)?;
        let create = CreateOptions::default()
            .with_spec(spec.with_method(method.clone()))
            .with_tables(convert::tables(py, tables)?)
            .with_max_distance(max_distance.unwrap_or_else(|| method.default_max_distance()))
            .with_min_jaccard(min_jaccard.unwrap_or(defaults.min_jaccard))
            .with_containment(contain)
            .with_store_text(store_text);
        let create = semantic::create(
            py,
            create,
            semantic::CreateArgs {
                model: semantic,
                min_cosine,
                field: semantic_field,
                max_tokens: semantic_max_tokens,
                groups,
            },
        )?;
        let opts = Options {
            sync,
            ..Options::default()
        };
        let opts = semantic::handle(
            py,
            opts,
            semantic::HandleArgs {
                model: None,
                threads: semantic_threads,
                batch: semantic_batch,
                indexer: semantic_indexer,
                search: semantic_search,
                nice: semantic_nice,
            },
        )?;
        let p = path.clone();
        let engine = py.detach(|| Engine::create_with(&p, &create, opts)).or_raise(py)?;
        Ok(Db::wrap(engine, path))
    }

    /// Db.reindex(path, tables="auto") -> dict
    ///
    /// Rebuilds the permuted tables of the database at `path` with `tables` tables (a number,
    /// "k+1", or "auto": the modelled best for its current size), crash-safe; every query answers
    /// the same before and after, only its cost changes (`fpdb reindex`). No handle may be writing
    /// to it (LockedError). Returns a ReindexReport (docs, tables_before, tables_after,
    /// generation, changed, model_us_before, model_us_after; `to_dict()` is `fpdb --json
    /// reindex`'s line).
    #[staticmethod]
    #[pyo3(signature = (path, tables = None))]
    fn reindex(py: Python<'_>, path: PathBuf, tables: Option<&Bound<'_, PyAny>>) -> PyResult<ReindexReport> {
        let tables = convert::tables(py, tables)?;
        let r = py.detach(move || Engine::reindex(&path, tables, |_, _| {})).or_raise(py)?;
        Ok(r.into())
    }

    /// Db.open(path, *, read_only=False, sync=True, spec=None, semantic_model=None,
    ///         semantic_threads=None, semantic_batch=None, semantic_indexer=None,
    ///         semantic_search=None, semantic_nice=None) -> Db
    ///
    /// Opens an existing database. `read_only=True` writes nothing and takes no lock (it sees the
    /// database as of now; writes raise ReadOnlyError). `spec` (a FingerprintSpec or "word:3"-style
    /// string) is checked against the stored spec: SpecMismatchError names the first field that
    /// differs. Raises NotFoundError, LockedError (another writer holds it), CorruptionError.
    ///
    /// A database created with the semantic channel loads its model: `semantic_model` is the
    /// model directory (None: the one recorded at creation); a missing one raises
    /// ModelMissingError, another model SemanticSpecMismatchError. A handle opened for writing
    /// runs the background indexer that embeds acknowledged documents (`semantic_indexer=False`
    /// turns it off: queries then see only what is embedded), on `semantic_threads` threads
    /// (None: 1, so the text path keeps the other cores) committing `semantic_batch` documents
    /// at a time (None: 16), at niceness `semantic_nice` (None: 19; 0 runs it at normal
    /// priority). `semantic_search` is how queries search the vectors: "exact" (the default scan)
    /// or "index" (the sign-code index). These options do nothing on a database without the
    /// channel.
    #[staticmethod]
    #[pyo3(signature = (path, *, read_only = false, sync = true, spec = None, semantic_model = None, semantic_threads = None,
                        semantic_batch = None, semantic_indexer = None, semantic_search = None, semantic_nice = None))]
    #[allow(clippy::too_many_arguments)]
    fn open(
        py: Python<'_>,
        path: PathBuf,
        read_only: bool,
        sync: bool,
        spec: Option<&Bound<'_, PyAny>>,
        semantic_model: Option<PathBuf>,
        semantic_threads: Option<usize>,
        semantic_batch: Option<usize>,
        semantic_indexer: Option<bool>,
        semantic_search: Option<String>,
        semantic_nice: Option<i32>,
    ) -> PyResult<Db> {
        let expect_spec = match spec {
            Some(s) if !s.is_none() => Some(types::spec_arg(py, Some(s))?),
            _ => None,
        };
        let opts = Options {
            sync,
            read_only,
            expect_spec,
            ..Options::default()
        };
        let opts = semantic::handle(
            py,
            opts,
            semantic::HandleArgs {
                model: semantic_model,
                threads: semantic_threads,
                batch: semantic_batch,
                indexer: semantic_indexer,
                search: semantic_search,
                nice: semantic_nice,
            },
        )?;
        let p = path.clone();
        let engine = py.detach(|| Engine::open_with(&p, opts)).or_raise(py)?;
        Ok(Db::wrap(engine, path))
    }

    /// Closes the handle (idempotent). An ingest still running keeps the database open until it
    /// finishes; other threads' calls already in progress complete first.
    fn close(&self, py: Python<'_>) {
        let engine = self.engine.lock().unwrap_or_else(|p| p.into_inner()).take();
        // Dropping the last handle flushes RocksDB's memtables: do it without the GIL.
        py.detach(move || drop(engine));
    }

    /// True once `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.engine.lock().unwrap_or_else(|p| p.into_inner()).is_none()
    }

    /// The database directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The stored fingerprint spec.
    #[getter]
    fn spec(&self, py: Python<'_>) -> PyResult<Spec> {
        Ok(Spec(self.engine(py)?.spec().clone()))
    }

    /// Default maximum Hamming distance k (fixed at creation).
    #[getter]
    fn max_distance(&self, py: Python<'_>) -> PyResult<u32> {
        Ok(self.engine(py)?.config().max_distance)
    }

    /// Default minimum Jaccard similarity t (fixed at creation).
    #[getter]
    fn min_jaccard(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.engine(py)?.config().min_jaccard)
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close(py);
        false
    }

    fn __repr__(&self) -> String {
        let state = if self.closed() { "closed" } else { "open" };
        format!("<fpdb.Db {} {state}>", crate::types::r(&self.path.display().to_string()))
    }

    /// insert(key, text, *, dedup="link", containment=None, title=None, year=None, doi=None,
    ///        meta=None) -> InsertOutcome
    ///
    /// Inserts (or replaces, when the key exists) one document, durably: on return it is on disk.
    /// `key` and `text` are str or UTF-8 bytes. dedup: "link" stores it and joins its
    /// near-duplicates' group, "skip" does not store it when it has near-duplicates, "off" stores
    /// it without looking. The outcome lists its verified near-duplicates and its group. With
    /// `containment=C` (0..=1; needs the containment index) it also lists the stored documents
    /// with containment at least C in either direction (`outcome.containment`). `title`, `year`
    /// and `doi` are stored and matched exactly: a stored document with the same DOI, or the same
    /// title and year, is a duplicate (its hit's `match` is "doi" or "title_year"). `meta` (a dict,
    /// or any JSON-serialisable value) is stored with it as JSON and comes back as
    /// `Document.meta`, as the other fields of an `fpdb ingest` line do.
    /// Raises InvalidInputError (empty or oversized key, bytes that are not UTF-8, a malformed
    /// DOI, a meta that is not JSON-serialisable), InvalidOptionError, ReadOnlyError.
    #[pyo3(signature = (key, text, *, dedup = "link", containment = None, title = None, year = None, doi = None, meta = None))]
    #[allow(clippy::too_many_arguments)]
    fn insert(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        text: &Bound<'_, PyAny>,
        dedup: &str,
        containment: Option<f64>,
        title: Option<String>,
        year: Option<i32>,
        doi: Option<String>,
        meta: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<InsertOutcome> {
        let key = convert::text_arg(py, key, "the key", None)?;
        let text = convert::text_arg(py, text, "the text", Some(&key))?;
        let meta = match meta {
            Some(m) => convert::meta(py, m, &key).or_raise(py)?,
            None => None,
        };
        let dedup = convert::dedup(py, dedup)?;
        let engine = self.engine(py)?;
        let biblio = Biblio { title, year, doi };
        let out = py
            .detach(move || {
                // The library's one decision of a single insert (as `fpdb insert`).
                engine.insert_doc(NewDoc { key, text, meta, biblio }, dedup, containment)
            })
            .or_raise(py)?;
        Ok(out.into())
    }

    /// ingest(docs, *, batch_size=4096, workers=0, dedup="link", batch_latency=0.05,
    ///        containment=None) -> Ingest
    ///
    /// Ingests an iterable (a list, a generator, a file reader ...) of `(key, text)` or
    /// `(key, text, meta)` tuples or of dicts with "key" and "text" (other entries become the
    /// document's metadata, as in `fpdb ingest`; a metadata dict's "title", "year" and "doi" are
    /// also stored as the document's title, year and DOI and matched exactly, like a near-duplicate)
    /// through the engine's parallel pipeline. With `containment=C` (0..=1; needs the containment
    /// index) each outcome also lists the documents with containment at least C in either
    /// direction (`outcome.containment`), as `fpdb ingest --containment C`. Returns an
    /// iterator of IngestResult, one per item in input order, each yielded only after its batch was
    /// durably committed. Items are pulled from `docs` as the engine takes them: memory stays
    /// bounded by a few batches however long the input is. A malformed item is reported (its
    /// result's `error`), not raised; an exception raised by `docs` itself is raised after the
    /// results of the items before it. `workers=0` uses one fingerprinting thread per core.
    /// Consume the iterator (or call its `run()`), or `close()` it to stop early.
    #[pyo3(signature = (docs, *, batch_size = None, workers = None, dedup = "link", batch_latency = None, containment = None))]
    #[allow(clippy::too_many_arguments)]
    fn ingest(
        &self,
        py: Python<'_>,
        docs: &Bound<'_, PyAny>,
        batch_size: Option<usize>,
        workers: Option<usize>,
        dedup: &str,
        batch_latency: Option<f64>,
        containment: Option<f64>,
    ) -> PyResult<Ingest> {
        let defaults = IngestOptions::default();
        let batch_latency = match batch_latency {
            None => defaults.batch_latency,
            Some(s) if s.is_finite() && s >= 0.0 => Duration::from_secs_f64(s),
            Some(s) => {
                return Err(crate::errors::invalid_option(
                    py,
                    "batch_latency",
                    format!("must be a number of seconds >= 0, got {s}"),
                ))
            }
        };
        let mut opts = IngestOptions::default()
            .with_workers(workers.unwrap_or(defaults.workers))
            .with_batch_size(batch_size.unwrap_or(defaults.batch_size))
            .with_batch_latency(batch_latency)
            .with_dedup(convert::dedup(py, dedup)?);
        if let Some(c) = containment {
            opts = opts.with_containment(c);
        }
        let iter = docs.try_iter()?;
        Ingest::start(self.engine(py)?, iter, opts)
    }

    /// query(text, *, max_distance=None, min_jaccard=None, limit=None, min_containment=None,
    ///       min_shared=None, min_cosine=None, wait_semantic=None) -> list[Hit]
    ///
    /// Stored documents within Hamming distance `max_distance` of `text`'s SimHash (under another
    /// method: its distance) whose exact Jaccard similarity is at least `min_jaccard` (None: the
    /// database's defaults; 0.0 keeps every candidate), best first, at most `limit`. `min_shared`
    /// (broder, broder-charikar) is the fewest equal supershingles a hit needs (None: the
    /// database's). With `min_containment=C` it is a containment query instead: the stored
    /// documents that contain the text, or that the text contains, with containment at least C
    /// (0..=1) in either direction, found through the containment index (`max_distance` and
    /// `min_jaccard` are then not used; InvalidOptionError without the index).
    ///
    /// On a database with the semantic channel the text is also embedded and the stored
    /// documents whose cosine is at least `min_cosine` (None: the database's β) are added, before
    /// the limit (their hits have "semantic" in `channels` and their `cosine`; a hit found by that
    /// channel alone has `match` "semantic" and no Jaccard). Documents acknowledged but not yet
    /// embedded cannot match that way (`query_answer(...).semantic_pending` counts them):
    /// `wait_semantic=True` first waits until every document acknowledged before the query is
    /// embedded (at most an hour, as `fpdb query --wait-semantic`), a number waits at most that
    /// many seconds; a wait past its bound raises SemanticTimeoutError. Waiting needs a handle
    /// that runs the indexer (opened for writing, `semantic_indexer` on).
    #[pyo3(signature = (text, *, max_distance = None, min_jaccard = None, limit = None, min_containment = None, min_shared = None,
                        min_cosine = None, wait_semantic = None))]
    #[allow(clippy::too_many_arguments)]
    fn query(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        max_distance: Option<u32>,
        min_jaccard: Option<f64>,
        limit: Option<usize>,
        min_containment: Option<f64>,
        min_shared: Option<u32>,
        min_cosine: Option<f32>,
        wait_semantic: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<Hit>> {
        Ok(self
            .query_answer(
                py,
                text,
                max_distance,
                min_jaccard,
                limit,
                min_containment,
                min_shared,
                min_cosine,
                wait_semantic,
            )?
            .into_hits())
    }

    /// query_answer(text, *, max_distance=None, min_jaccard=None, limit=None,
    ///              min_containment=None, min_shared=None, min_cosine=None, wait_semantic=None)
    ///     -> QueryAnswer
    ///
    /// `query` with the answer's bounds (the library's `Db::query_answer`, the HTTP API's
    /// answer): its hits, how many candidates were verified, whether some were left unverified,
    /// and `semantic_pending`, the acknowledged documents the semantic channel had not embedded
    /// (0 after `wait_semantic`, and without the channel).
    #[pyo3(signature = (text, *, max_distance = None, min_jaccard = None, limit = None, min_containment = None, min_shared = None,
                        min_cosine = None, wait_semantic = None))]
    #[allow(clippy::too_many_arguments)]
    fn query_answer(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        max_distance: Option<u32>,
        min_jaccard: Option<f64>,
        limit: Option<usize>,
        min_containment: Option<f64>,
        min_shared: Option<u32>,
        min_cosine: Option<f32>,
        wait_semantic: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<QueryAnswer> {
        let text = convert::text_arg(py, text, "the text", None)?;
        let opts = text_query_opts(
            py,
            max_distance,
            min_jaccard,
            limit,
            min_containment,
            min_shared,
            min_cosine,
            wait_semantic,
        )?;
        let engine = self.engine(py)?;
        let answer = py.detach(move || engine.query_answer(&text, &opts)).or_raise(py)?;
        Ok(answer.into())
    }

    /// query_simhash(simhash, *, max_distance=None, limit=None) -> list[Hit]
    ///
    /// Stored documents within Hamming distance of a 64-bit SimHash (no Jaccard: `jaccard` and
    /// `shared` of the hits are None).
    #[pyo3(signature = (simhash, *, max_distance = None, limit = None))]
    fn query_simhash(&self, py: Python<'_>, simhash: u64, max_distance: Option<u32>, limit: Option<usize>) -> PyResult<Vec<Hit>> {
        let opts = query_opts(max_distance, None, limit, None, None);
        let engine = self.engine(py)?;
        let hits = py.detach(move || engine.query_simhash(simhash, &opts)).or_raise(py)?;
        Ok(hits.into_iter().map(Hit::from).collect())
    }

    /// get(key) -> Document | None
    ///
    /// The stored document with this key and its group, or None.
    fn get(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<Document>> {
        let key = convert::text_arg(py, key, "the key", None)?;
        let engine = self.engine(py)?;
        let doc = py
            .detach(move || {
                engine.get(&key).map(|d| {
                    d.map(|d| {
                        let members = engine.group_members(d.group.id);
                        Document::new(d, members)
                    })
                })
            })
            .or_raise(py)?;
        Ok(doc)
    }

    /// text(key) -> str | None
    ///
    /// The stored text of the document with this key, exactly as it was inserted, or None (a
    /// database made with `store_text=True`; another raises InvalidOptionError).
    fn text(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let key = convert::text_arg(py, key, "the key", None)?;
        let engine = self.engine(py)?;
        py.detach(move || engine.texts().get(&key)).or_raise(py)
    }

    /// backup(dir) -> dict
    ///
    /// A consistent copy of this database in `dir` (which must not exist), made while this handle
    /// goes on writing (`fpdb backup`; docs/durability.md): the copy opens and passes `check`.
    /// Returns dir, entries, segments, bytes, tries, seconds. Raises AlreadyExistsError, IoError.
    fn backup<'py>(&self, py: Python<'py>, dir: PathBuf) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let engine = self.engine(py)?;
        let r = py.detach(move || engine.backup(&dir)).or_raise(py)?;
        types::to_dict(py, &r)
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.get(py, key)?.is_some())
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        let engine = self.engine(py)?;
        Ok(py.detach(move || engine.stats()).docs as usize)
    }

    /// keys() -> Iterator[str]
    ///
    /// The keys of the stored documents, in id order (insertion order; a replaced document moves
    /// to the end), fetched a page at a time: memory stays flat however large the database.
    fn keys(&self, py: Python<'_>) -> PyResult<DocIter> {
        Ok(DocIter::new(self.engine(py)?, true))
    }

    /// iter(db) -> Iterator[Document]: every stored document, as `keys()` orders them.
    fn __iter__(&self, py: Python<'_>) -> PyResult<DocIter> {
        Ok(DocIter::new(self.engine(py)?, false))
    }

    /// delete(key) -> bool
    ///
    /// Deletes the document with this key (its group splits if it was a bridge); False when there
    /// was none.
    fn delete(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = convert::text_arg(py, key, "the key", None)?;
        let engine = self.engine(py)?;
        py.detach(move || engine.delete(&key)).or_raise(py)
    }

    /// decide(a, b, decision, *, reason=None, author=None) -> dict
    ///
    /// A curator's decision about two stored documents, kept by key: "same" (one group whatever
    /// the scores say) or "distinct" (never one group). The groups follow at once. Raises
    /// FpdbError (attributes `evidence`, the decisions it contradicts) on a contradiction.
    #[pyo3(signature = (a, b, decision, *, reason = None, author = None))]
    fn decide(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
        decision: &str,
        reason: Option<String>,
        author: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let a = convert::text_arg(py, a, "the first key", None)?;
        let b = convert::text_arg(py, b, "the second key", None)?;
        let kind: fpdb::DecisionKind = decision.parse().or_raise(py)?;
        let engine = self.engine(py)?;
        let d = py
            .detach(move || engine.decisions().decide(&a, &b, kind, reason.as_deref(), author.as_deref()))
            .or_raise(py)?;
        crate::types::py_value(py, &d)
    }

    /// undecide(a, b) -> dict | None
    ///
    /// Removes the decision about two keys (the groups follow); returns it, None when there was none.
    fn undecide(&self, py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let a = convert::text_arg(py, a, "the first key", None)?;
        let b = convert::text_arg(py, b, "the second key", None)?;
        let engine = self.engine(py)?;
        let d = py.detach(move || engine.decisions().undo(&a, &b)).or_raise(py)?;
        crate::types::py_value(py, &d)
    }

    /// decisions() -> list[dict]
    ///
    /// Every decision: {"a", "b", "decision", "at_ms", "author", "reason"}, by key pair.
    fn decisions(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let engine = self.engine(py)?;
        let ds = py.detach(move || engine.decisions().list());
        crate::types::py_value(py, &ds)
    }

    /// stats() -> Stats: documents, groups, segments, bytes, defaults, spec and the containment
    /// index's counters (`fpdb stats`; the latter scan the index: `len(db)` is the cheap count).
    fn stats(&self, py: Python<'_>) -> PyResult<Stats> {
        let engine = self.engine(py)?;
        let (s, c) = py
            .detach(move || engine.containment().stats().map(|c| (engine.stats(), c)))
            .or_raise(py)?;
        Ok(Stats::new(s, c))
    }

    /// check() -> CheckReport
    ///
    /// Verifies every record, pointer, checksum and table entry; the report lists every fault
    /// (`report.ok` is True when there is none).
    fn check(&self, py: Python<'_>) -> PyResult<CheckReport> {
        let engine = self.engine(py)?;
        Ok(py.detach(move || engine.check()).or_raise(py)?.into())
    }

    /// flush() -> None
    ///
    /// Writes what the handle holds in memory to files, as a clean close does: the containment
    /// index's tail, the SimHash tables' tail and RocksDB's memtables (`Db::flush`, which
    /// `fpdb ingest` times with its run).
    /// Optional — every commit is already durable — but a bulk load can time it, and the next open
    /// then replays nothing. Raises ReadOnlyError on a read-only handle; a failure poisons the
    /// handle, as a failed commit does.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let engine = self.engine(py)?;
        py.detach(move || engine.flush()).or_raise(py)
    }

    /// compact(min_dead=0.3, *, index=False) -> CompactStats
    ///
    /// Rewrites the segments in which at least `min_dead` of the bytes are dead (deleted or
    /// replaced documents) and reclaims the space. With `index=True`, also merges every RocksDB
    /// column family into one sorted run (`fpdb compact --index`; after a bulk load the
    /// containment index holds up to 16 unmerged runs, which its queries seek one by one).
    #[pyo3(signature = (min_dead = 0.3, *, index = false))]
    fn compact(&self, py: Python<'_>, min_dead: f64, index: bool) -> PyResult<CompactStats> {
        let engine = self.engine(py)?;
        Ok(py
            .detach(move || {
                let s = engine.compact(min_dead)?;
                if index {
                    engine.compact_index()?;
                }
                Ok::<_, Error>(s)
            })
            .or_raise(py)?
            .into())
    }

    /// pairs(*, max_distance=None, min_jaccard=None, threads=0, min_shared=None, semantic=False, min_cosine=None, semantic_index=False) -> PairsReport
    ///
    /// Every pair of stored documents within Hamming distance `max_distance` (None: the database's
    /// k), each once; with `min_jaccard`, only pairs whose exact Jaccard is at least that (each pair
    /// verified). Also their groups (connected components) and distribution tables, as
    /// `fpdb pairs` prints them. `threads=0` uses one per core. `min_shared` (broder,
    /// broder-charikar): the fewest equal supershingles (None: the database's). The groups are
    /// over the text pairs and the semantic pairs (cos >= `min_cosine`, None: the database's β;
    /// `semantic_index`: the sign-code index instead of the exact scan) in a database created with
    /// `groups="union"`, or with `semantic=True` (`fpdb pairs --groups [--semantic]`).
    #[pyo3(signature = (*, max_distance = None, min_jaccard = None, threads = 0, min_shared = None, semantic = false, min_cosine = None, semantic_index = false))]
    #[allow(clippy::too_many_arguments)]
    fn pairs(
        &self,
        py: Python<'_>,
        max_distance: Option<u32>,
        min_jaccard: Option<f64>,
        threads: usize,
        min_shared: Option<u32>,
        semantic: bool,
        min_cosine: Option<f32>,
        semantic_index: bool,
    ) -> PyResult<PairsReport> {
        let sem = semantic.then_some((min_cosine, semantic_index));
        let engine = self.engine(py)?;
        let report = py
            .detach(move || -> Result<PairsReport, crate::api::Error> {
                let opts = PairsOptions {
                    max_distance: max_distance.unwrap_or(engine.config().max_distance),
                    min_jaccard,
                    threads,
                    min_shared,
                };
                let rep = pairs(&engine, &opts)?;
                let key = |id: u64| engine.key_of(id).unwrap_or_default();
                let groups = report_groups(&engine, &rep, sem)?
                    .into_iter()
                    .map(|(id, members)| PairGroup {
                        id,
                        canonical: key(id),
                        members: members.into_iter().map(key).collect(),
                    })
                    .collect();
                let rows = |rows: Vec<crate::api::DistRowEngine>| {
                    rows.into_iter()
                        .map(|r| DistRow {
                            label: r.label,
                            pairs: r.pairs,
                            docs: r.docs,
                        })
                        .collect()
                };
                Ok(PairsReport {
                    docs: rep.docs,
                    pairs: rep.pairs.into_iter().map(|p| Pair::new(&p, key)).collect(),
                    groups,
                    by_hamming: rows(rep.by_hamming),
                    by_jaccard: rows(rep.by_jaccard),
                    hamming_seconds: rep.hamming_seconds,
                    verify_seconds: rep.verify_seconds,
                })
            })
            .or_raise(py)?;
        Ok(report)
    }

    /// iter_pairs(*, max_distance=None, min_jaccard=None, threads=0, min_shared=None) -> Iterator[Pair]
    ///
    /// The pairs of `pairs()` (the same options, the same order) one at a time, without the
    /// groups and tables: the engine finds them all first (ids and scores, 24 bytes a pair), and
    /// each `Pair` with its keys is made only when the loop reaches it.
    #[pyo3(signature = (*, max_distance = None, min_jaccard = None, threads = 0, min_shared = None))]
    fn iter_pairs(
        &self,
        py: Python<'_>,
        max_distance: Option<u32>,
        min_jaccard: Option<f64>,
        threads: usize,
        min_shared: Option<u32>,
    ) -> PyResult<PairIter> {
        let engine = self.engine(py)?;
        let e = engine.clone();
        let rep = py
            .detach(move || {
                let opts = PairsOptions {
                    max_distance: max_distance.unwrap_or(e.config().max_distance),
                    min_jaccard,
                    threads,
                    min_shared,
                };
                pairs(&e, &opts)
            })
            .or_raise(py)?;
        Ok(PairIter::new(engine, rep.pairs))
    }

    /// containment_pairs(min_containment, *, threads=0) -> list[ContainPair]
    ///
    /// Every pair of stored documents where one is inside the other with containment at least
    /// `min_containment` (0..=1) in either direction, each once (a < b by doc id), as
    /// `fpdb pairs --min-containment`. `threads=0` uses one per core. Raises InvalidOptionError
    /// when the database has no containment index.
    #[pyo3(signature = (min_containment, *, threads = 0))]
    fn containment_pairs(&self, py: Python<'_>, min_containment: f64, threads: usize) -> PyResult<Vec<ContainPair>> {
        let engine = self.engine(py)?;
        py.detach(move || {
            let pairs = engine.containment().pairs(min_containment, threads)?;
            let key = |id: u64| engine.key_of(id).unwrap_or_else(|| format!("#{id}"));
            Ok(pairs.into_iter().map(|p| ContainPair::new(p, min_containment, key)).collect())
        })
        .or_raise(py)
    }

    /// semantic_backfill(texts=None, *, batch=32) -> BackfillReport
    ///
    /// Runs this handle's semantic indexer until every document acknowledged so far is embedded
    /// (`fpdb semantic backfill`; the GIL is released meanwhile, so other threads go on, and
    /// `stats().semantic_pending` shows the progress). Open the handle with
    /// `semantic_threads=os.cpu_count()` to use every core, as the CLI does. Returns a
    /// BackfillReport: `embedded`, the documents this handle's indexer embedded, and `vectors`,
    /// the vectors the channel holds. Raises InvalidOptionError on a database without the channel, SemanticError when
    /// the handle runs no indexer (read-only, or `semantic_indexer=False`) and documents are
    /// pending, or the error that stopped the indexer.
    ///
    /// With `texts` (an iterable of the items `ingest` takes: `(key, text)`, `(key, text, meta)`
    /// or dicts), first the stored documents that have no vector — those stored before the
    /// channel was added by `Db.enable_semantic` — are embedded from them, matched by key, `batch`
    /// at a time (`fpdb semantic backfill --input`); the report's `from_texts` then says how many
    /// of the given documents were embedded from their texts (a TextBackfill: `embedded`,
    /// `already`, `unknown`, `empty`; None without texts).
    #[pyo3(signature = (texts = None, *, batch = 32))]
    fn semantic_backfill<'py>(&self, py: Python<'py>, texts: Option<&Bound<'py, PyAny>>, batch: usize) -> PyResult<BackfillReport> {
        let engine = self.engine(py)?;
        // The iterable is read a part at a time (eight batches), each part embedded with the GIL
        // released: memory stays bounded whatever the input's length.
        let from_texts = match texts {
            Some(t) => {
                let mut items = t.try_iter()?;
                let part = batch.max(1).saturating_mul(8);
                let mut total = semantic::TextReport::default();
                loop {
                    let mut docs = Vec::with_capacity(part);
                    for o in items.by_ref().take(part) {
                        docs.push(convert::item(py, &o?));
                    }
                    if docs.is_empty() {
                        break;
                    }
                    let e = engine.clone();
                    let r = py.detach(move || semantic::backfill_texts(&e, docs, batch)).or_raise(py)?;
                    semantic::add_texts(&mut total, r);
                }
                Some(total)
            }
            None => None,
        };
        let report = py.detach(move || semantic::backfill(&engine)).or_raise(py)?;
        // The library's reports by their serde shapes (their types exist only with `semantic`).
        let texts = from_texts.as_ref().map(|t| serde_json::to_value(t).unwrap_or_default());
        let report = serde_json::to_value(report).unwrap_or_default();
        Ok(BackfillReport::from_values(&report, texts.as_ref()))
    }

    /// semantic_pairs(*, min_cosine=None, index=False) -> list[tuple[str, str, float]]
    ///
    /// Every pair of embedded documents with cosine >= `min_cosine` (None: the database's β),
    /// each once, as (key a, key b, cosine) with a stored before b, by the exact scan (or the
    /// sign-code index with `index=True`): `fpdb pairs --semantic`. Raises InvalidOptionError on a
    /// database without the channel.
    #[pyo3(signature = (*, min_cosine = None, index = false))]
    fn semantic_pairs(&self, py: Python<'_>, min_cosine: Option<f32>, index: bool) -> PyResult<Vec<(String, String, f32)>> {
        let engine = self.engine(py)?;
        py.detach(move || {
            let pairs = semantic::pairs(&engine, min_cosine, index)?;
            let key = |id: u64| engine.key_of(id).unwrap_or_else(|| format!("#{id}"));
            Ok(pairs.into_iter().map(|(a, b, c)| (key(a), key(b), c)).collect())
        })
        .or_raise(py)
    }

    /// Db.enable_semantic(path, semantic, *, min_cosine=None, semantic_field=None, semantic_max_tokens=None, groups=None) -> None
    ///
    /// Adds the semantic channel to the closed database at `path`, created without it (`fpdb
    /// semantic enable`): documents inserted from then on are embedded in the background; embed
    /// the stored ones with `db.semantic_backfill(texts)`. The options are `Db.create`'s.
    /// Raises InvalidOptionError when the database already has the channel.
    #[staticmethod]
    #[pyo3(signature = (path, semantic, *, min_cosine = None, semantic_field = None, semantic_max_tokens = None, groups = None))]
    fn enable_semantic(
        py: Python<'_>,
        path: PathBuf,
        semantic: PathBuf,
        min_cosine: Option<f32>,
        semantic_field: Option<String>,
        semantic_max_tokens: Option<usize>,
        groups: Option<String>,
    ) -> PyResult<()> {
        let args = semantic::CreateArgs {
            model: Some(semantic),
            min_cosine,
            field: semantic_field,
            max_tokens: semantic_max_tokens,
            groups,
        };
        let r = semantic::enable(py, &path, args)?;
        r.or_raise(py)
    }

    /// The semantic channel's stored spec as a dict (the model's identity: name, weights hash,
    /// dim, pooling; max_tokens, field, min_cosine, groups, model_dir ...: `fpdb --json init`'s
    /// "semantic"), or None when the database has no channel.
    #[getter]
    fn semantic_spec(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let engine = self.engine(py)?;
        semantic::spec(&engine).map(|v| types::py_value(py, &v)).transpose()
    }

    /// Db is not picklable or copyable: open the path again in the other process.
    fn __reduce__(&self) -> PyResult<()> {
        Err(pyo3::exceptions::PyTypeError::new_err(
            "fpdb.Db cannot be pickled: pass the path and open it with fpdb.Db.open in the other process",
        ))
    }
}
