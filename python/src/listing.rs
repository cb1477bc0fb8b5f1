//! Iterators over what a database holds, a page at a time (`Db.keys()`, `iter(db)`,
//! `Db.iter_pairs()`), and the typed reports of `Db.reindex` and `Db.semantic_backfill`.

use std::collections::VecDeque;
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::api::{Engine, EngineReindex, Pair as EnginePair};
use crate::errors::OrRaise;
use crate::types::{to_dict, Document, Pair};

/// Documents fetched per page (one library call, the GIL released).
const PAGE: usize = 1000;

/// The state of a walk over the stored documents.
struct Walk {
    engine: Engine,
    after: Option<u64>,
    buf: VecDeque<Document>,
    done: bool,
}

/// An iterator over the stored documents (`iter(db)`: `Document`s) or their keys (`db.keys()`), in
/// id order, fetched a page at a time by a cursor: memory stays flat however large the database.
/// A document inserted during the walk with an id above the cursor is met; one deleted before its
/// page is not.
#[pyclass(frozen, module = "fpdb")]
pub struct DocIter {
    walk: Mutex<Walk>,
    keys_only: bool,
}

impl DocIter {
    pub fn new(engine: Engine, keys_only: bool) -> Self {
        DocIter {
            walk: Mutex::new(Walk {
                engine,
                after: None,
                buf: VecDeque::new(),
                done: false,
            }),
            keys_only,
        }
    }
}

#[pymethods]
impl DocIter {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let mut w = self.walk.lock().unwrap_or_else(|p| p.into_inner());
        if w.buf.is_empty() && !w.done {
            let (engine, after) = (w.engine.clone(), w.after);
            let page = py
                .detach(move || {
                    engine.list_documents(after, PAGE).map(|p| {
                        let next = p.next;
                        let docs: Vec<Document> = p
                            .items
                            .into_iter()
                            .map(|d| {
                                let members = engine.group_members(d.group.id);
                                Document::new(d, members)
                            })
                            .collect();
                        (docs, next)
                    })
                })
                .or_raise(py)?;
            w.buf.extend(page.0);
            w.after = page.1;
            w.done = page.1.is_none();
        }
        match w.buf.pop_front() {
            None => Ok(None),
            Some(d) if self.keys_only => Ok(Some(d.key_string().into_pyobject(py)?.into_any().unbind())),
            Some(d) => Ok(Some(Py::new(py, d)?.into_any())),
        }
    }
}

/// The pairs of `Db.iter_pairs()`, one `Pair` at a time: the engine's list of pairs (ids and
/// scores, 24 bytes each) is made once, and each `Pair` with its keys only when it is reached.
#[pyclass(frozen, module = "fpdb")]
pub struct PairIter {
    engine: Engine,
    pairs: Mutex<std::vec::IntoIter<EnginePair>>,
}

impl PairIter {
    pub fn new(engine: Engine, pairs: Vec<EnginePair>) -> Self {
        PairIter {
            engine,
            pairs: Mutex::new(pairs.into_iter()),
        }
    }
}

#[pymethods]
impl PairIter {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self) -> Option<Pair> {
        let p = self.pairs.lock().unwrap_or_else(|p| p.into_inner()).next()?;
        Some(Pair::new(&p, |id| self.engine.key_of(id).unwrap_or_default()))
    }

    /// Pairs not yet yielded.
    fn __len__(&self) -> usize {
        self.pairs.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

/// What `Db.reindex` did (`fpdb --json reindex`).
#[pyclass(frozen, get_all, module = "fpdb")]
#[derive(Clone, Debug, serde::Serialize)]
pub struct ReindexReport {
    /// Live documents indexed.
    pub docs: u64,
    /// Tables before.
    pub tables_before: u32,
    /// Tables after (equal to `tables_before` when nothing changed).
    pub tables_after: u32,
    /// Table generation now in force.
    pub generation: u32,
    /// Whether the tables were rebuilt.
    pub changed: bool,
    /// Modelled query time at the default distance before, µs.
    pub model_us_before: f64,
    /// Modelled query time at the default distance after, µs.
    pub model_us_after: f64,
}

impl From<EngineReindex> for ReindexReport {
    fn from(r: EngineReindex) -> Self {
        ReindexReport {
            docs: r.docs,
            tables_before: r.tables_before,
            tables_after: r.tables_after,
            generation: r.generation,
            changed: r.changed,
            model_us_before: r.model_us_before,
            model_us_after: r.model_us_after,
        }
    }
}

#[pymethods]
impl ReindexReport {
    fn __repr__(&self) -> String {
        format!(
            "ReindexReport(docs={}, tables_before={}, tables_after={}, generation={}, changed={}, model_us_before={}, model_us_after={})",
            self.docs,
            self.tables_before,
            self.tables_after,
            self.generation,
            if self.changed { "True" } else { "False" },
            self.model_us_before,
            self.model_us_after
        )
    }

    /// The report as a dict, key for key.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_dict(py, self)
    }
}

/// What `Db.semantic_backfill(texts)` did with the texts it was given.
#[pyclass(frozen, get_all, module = "fpdb")]
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct TextBackfill {
    /// Documents embedded from their texts and stored.
    pub embedded: u64,
    /// Given documents that already had a vector (or were queued for the indexer).
    pub already: u64,
    /// Given keys the database does not hold.
    pub unknown: u64,
    /// Given documents with nothing to embed (an empty text or field).
    pub empty: u64,
}

/// What `Db.semantic_backfill` did.
#[pyclass(frozen, get_all, module = "fpdb")]
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct BackfillReport {
    /// Documents this handle's indexer embedded.
    pub embedded: u64,
    /// Vectors the channel holds.
    pub vectors: u64,
    /// With `texts`: what became of them; else None.
    pub from_texts: Option<TextBackfill>,
}

/// The `u64` field `name` of a JSON object (0 when absent).
fn field(v: &serde_json::Value, name: &str) -> u64 {
    v.get(name).and_then(serde_json::Value::as_u64).unwrap_or(0)
}

impl BackfillReport {
    /// From the library's reports (as JSON values: their types exist only with the `semantic`
    /// feature).
    pub fn from_values(report: &serde_json::Value, texts: Option<&serde_json::Value>) -> Self {
        BackfillReport {
            embedded: field(report, "embedded"),
            vectors: field(report, "vectors"),
            from_texts: texts.map(|t| TextBackfill {
                embedded: field(t, "embedded"),
                already: field(t, "already"),
                unknown: field(t, "unknown"),
                empty: field(t, "empty"),
            }),
        }
    }
}

#[pymethods]
impl TextBackfill {
    fn __repr__(&self) -> String {
        format!(
            "TextBackfill(embedded={}, already={}, unknown={}, empty={})",
            self.embedded, self.already, self.unknown, self.empty
        )
    }

    /// The counts as a dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_dict(py, self)
    }
}

#[pymethods]
impl BackfillReport {
    fn __repr__(&self) -> String {
        format!(
            "BackfillReport(embedded={}, vectors={}, from_texts={})",
            self.embedded,
            self.vectors,
            self.from_texts.as_ref().map_or("None".into(), TextBackfill::__repr__)
        )
    }

    /// The report as a dict ("from_texts" absent without texts).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = to_dict(py, self)?;
        if self.from_texts.is_none() {
            d.del_item("from_texts")?;
        }
        Ok(d)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DocIter>()?;
    m.add_class::<PairIter>()?;
    m.add_class::<ReindexReport>()?;
    m.add_class::<BackfillReport>()?;
    m.add_class::<TextBackfill>()?;
    Ok(())
}
