//! The semantic channel's arguments (docs/semantic.md): Python keywords into the
//! library's `SemanticConfig` (Db.create, as `fpdb init --semantic`), `SemanticOptions` (a
//! handle, as `fpdb semantic backfill --threads`), the query's wait (`fpdb query
//! --wait-semantic`), and `Db::semantic_backfill`. Built with the feature `semantic` (the
//! default); without it a database with the channel cannot be created and the options raise
//! InvalidOptionError, as the CLI built without the feature does.

use std::path::PathBuf;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyBool;

use crate::api::{CreateOptions, Engine, Error, Options};
use crate::errors::invalid_option;

/// How long `wait_semantic=True` waits: the CLI's `--wait-semantic-secs` default.
pub const DEFAULT_WAIT_SECS: u64 = 3600;

/// Db.create's channel, as `fpdb init --semantic MODEL_DIR [--min-cosine B] [--semantic-field F]
/// [--semantic-max-tokens N] [--groups text|union]`.
pub struct CreateArgs {
    pub model: Option<PathBuf>,
    pub min_cosine: Option<f32>,
    pub field: Option<String>,
    pub max_tokens: Option<usize>,
    pub groups: Option<String>,
}

/// How one handle runs the channel (`SemanticOptions`); None keeps the library's default.
#[cfg_attr(not(feature = "semantic"), allow(dead_code))]
pub struct HandleArgs {
    pub model: Option<PathBuf>,
    pub threads: Option<usize>,
    pub batch: Option<usize>,
    pub indexer: Option<bool>,
    pub search: Option<String>,
    pub nice: Option<i32>,
}

/// `wait_semantic` of a query: None or False (do not wait), True (the CLI's default bound,
/// [`DEFAULT_WAIT_SECS`]) or a number of seconds >= 0.
pub fn wait(py: Python<'_>, v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Duration>> {
    let Some(v) = v.filter(|v| !v.is_none()) else { return Ok(None) };
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(b.is_true().then(|| Duration::from_secs(DEFAULT_WAIT_SECS)));
    }
    match v.extract::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 => Ok(Some(Duration::from_secs_f64(s))),
        _ => Err(invalid_option(
            py,
            "wait_semantic",
            format!("expected True, False, None or a number of seconds >= 0, got {}", v.repr()?),
        )),
    }
}

/// The options that only mean something with a channel to create, when none is.
fn needs_model(py: Python<'_>, a: &CreateArgs) -> PyResult<()> {
    let given = [
        ("min_cosine", a.min_cosine.is_some()),
        ("semantic_field", a.field.is_some()),
        ("semantic_max_tokens", a.max_tokens.is_some()),
        ("groups", a.groups.is_some()),
    ];
    match given.into_iter().find(|(_, g)| *g) {
        Some((name, _)) if a.model.is_none() => Err(invalid_option(
            py,
            name,
            "configures the semantic channel: give `semantic` (the model directory) too, as `fpdb init --semantic MODEL_DIR`".into(),
        )),
        _ => Ok(()),
    }
}

#[cfg(feature = "semantic")]
mod imp {
    use super::*;
    use crate::errors::OrRaise;
    use fpdb::semantic::{BackfillReport, SearchMode, SemanticConfig, TextBackfill};

    type Report = BackfillReport;

    /// `--semantic MODEL_DIR` and its options into the library's [`SemanticConfig`] (as
    /// `fpdb init`'s `with_semantic`).
    pub fn create(py: Python<'_>, create: CreateOptions, a: CreateArgs) -> PyResult<CreateOptions> {
        needs_model(py, &a)?;
        let Some(dir) = a.model else { return Ok(create) };
        let mut c = SemanticConfig::new(dir);
        c.min_cosine = a.min_cosine;
        c.field = a.field;
        c.max_tokens = a.max_tokens.unwrap_or(c.max_tokens);
        if let Some(g) = a.groups {
            c.groups = g.parse().or_raise(py)?;
        }
        Ok(create.with_semantic(Some(c)))
    }

    /// The handle's [`fpdb::semantic::SemanticOptions`].
    pub fn handle(py: Python<'_>, mut opts: Options, a: HandleArgs) -> PyResult<Options> {
        let s = &mut opts.semantic;
        s.model_dir = a.model.or(s.model_dir.take());
        s.threads = a.threads.unwrap_or(s.threads);
        s.batch = a.batch.unwrap_or(s.batch);
        s.indexer = a.indexer.unwrap_or(s.indexer);
        s.nice = a.nice.unwrap_or(s.nice);
        s.search = match a.search.as_deref() {
            None => s.search,
            Some("exact") => SearchMode::Exact,
            Some("index") => SearchMode::Indexed,
            Some(other) => {
                return Err(invalid_option(
                    py,
                    "semantic_search",
                    format!("expected \"exact\" or \"index\", got {other:?}"),
                ))
            }
        };
        Ok(opts)
    }

    /// `fpdb semantic backfill`: the handle's indexer run until every acknowledged document is
    /// embedded.
    pub fn backfill(engine: &Engine) -> Result<Report, Error> {
        engine.semantic().backfill(|_| {})
    }

    /// `fpdb semantic backfill --input`: stored documents without a vector embedded from `docs`.
    pub fn backfill_texts(engine: &Engine, docs: Vec<Result<crate::api::NewDoc, Error>>, batch: usize) -> Result<TextBackfill, Error> {
        engine.semantic().backfill_texts(docs, batch, |_| {})
    }

    /// The report of texts given in several parts: the sum of the parts'.
    pub type TextReport = TextBackfill;

    /// Adds one part's report (`r`) to `total`.
    pub fn add_texts(total: &mut TextBackfill, r: TextBackfill) {
        total.embedded += r.embedded;
        total.already += r.already;
        total.unknown += r.unknown;
        total.empty += r.empty;
    }

    /// `fpdb semantic enable`: the channel added to the database at `path`.
    pub fn enable(py: Python<'_>, path: &std::path::Path, a: CreateArgs) -> PyResult<Result<(), Error>> {
        let Some(cfg) = create(py, CreateOptions::default(), a)?.semantic else {
            return Err(invalid_option(py, "semantic", "the model directory is required".into()));
        };
        Ok(Engine::enable_semantic(path, &cfg, Options::default()))
    }

    /// `fpdb pairs --semantic`: every pair of embedded documents at cos ≥ β, each once.
    pub fn pairs(engine: &Engine, beta: Option<f32>, index: bool) -> Result<Vec<(u64, u64, f32)>, Error> {
        let mode = if index { SearchMode::Indexed } else { SearchMode::Exact };
        engine.semantic().pairs(beta, mode)
    }

    /// The stored spec (`fpdb --json init`'s "semantic"), None without the channel.
    pub fn spec(engine: &Engine) -> Option<serde_json::Value> {
        engine.semantic().spec().and_then(|s| serde_json::to_value(s).ok())
    }
}

#[cfg(not(feature = "semantic"))]
mod imp {
    use super::*;

    type Report = std::collections::BTreeMap<String, u64>;

    fn unbuilt() -> Error {
        Error::InvalidOption {
            name: "semantic",
            message: "this fpdb binding was built without the `semantic` feature; build it with `maturin develop --features semantic`"
                .into(),
        }
    }

    pub fn create(py: Python<'_>, create: CreateOptions, a: CreateArgs) -> PyResult<CreateOptions> {
        needs_model(py, &a)?;
        match a.model {
            None => Ok(create),
            Some(_) => Err(crate::errors::to_py(py, unbuilt())),
        }
    }

    pub fn handle(_: Python<'_>, opts: Options, _: HandleArgs) -> PyResult<Options> {
        Ok(opts)
    }

    pub fn backfill(_: &Engine) -> Result<Report, Error> {
        Err(unbuilt())
    }

    pub fn backfill_texts(_: &Engine, _: Vec<Result<crate::api::NewDoc, Error>>, _: usize) -> Result<Report, Error> {
        Err(unbuilt())
    }

    pub type TextReport = Report;

    pub fn add_texts(total: &mut Report, r: Report) {
        for (k, v) in r {
            *total.entry(k).or_default() += v;
        }
    }

    pub fn enable(_: Python<'_>, _: &std::path::Path, _: CreateArgs) -> PyResult<Result<(), Error>> {
        Ok(Err(unbuilt()))
    }

    pub fn pairs(_: &Engine, _: Option<f32>, _: bool) -> Result<Vec<(u64, u64, f32)>, Error> {
        Err(unbuilt())
    }

    pub fn spec(_: &Engine) -> Option<serde_json::Value> {
        None
    }
}

pub use imp::{add_texts, backfill, backfill_texts, create, enable, handle, pairs, spec, TextReport};
