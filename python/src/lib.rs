//! `fpdb._fpdb`: the native half of the `fpdb` Python package.
//!
//! The binding only converts: Python arguments into the library's option structs, the library's
//! results into small frozen Python classes, `fpdb::Error` into typed Python exceptions. Every engine
//! call runs with the GIL released (`Python::detach`), so Python threads query, insert and ingest in
//! parallel. Nothing here decides anything about documents: that is the library's job.

mod convert;
mod db;
mod errors;
mod ingest;
mod listing;
mod read;
mod scale;
mod semantic;
mod types;

/// The only place that names the library's API: the library is being reorganised, and a moved item
/// is a one-line fix here. Everything else in this crate uses `crate::api::*`.
mod api {
    pub use fpdb::fingerprint::method::Method;
    pub use fpdb::fingerprint::weighted::IdfTable;
    pub use fpdb::input;
    pub use fpdb::ReindexReport as EngineReindex;
    pub use fpdb::{
        fingerprint, CheckReport, CompactStats, CreateOptions, Db as Engine, Dedup, Document, Error, FingerprintSpec,
        GroupInfo as EngineGroup, HashKind, Hit as EngineHit, InsertOutcome as EngineOutcome, NewDoc, Options, QueryAnswer as EngineAnswer,
        QueryOptions, Stats, Tables,
    };
    pub use fpdb::{pairs, report_groups, DistRow as DistRowEngine, Pair, PairsOptions};
    pub use fpdb::{Biblio, ContainPair, ContainmentConfig, ContainmentStats};
    pub use fpdb::{DocResult, IngestOptions, IngestStats};
    pub use fpdb::{ShingleUnit, Weighting};
}

use pyo3::prelude::*;

/// Runs `f` with the GIL released. For the drops that wait on the engine (an abandoned `Ingest`
/// draining its pipeline, a `Db` dropped without `close()` flushing RocksDB): Python runs a
/// class's drop with the GIL held, and other Python threads must not stop while it waits. Where
/// this thread cannot attach (interpreter shutting down, inside a GC traversal) `f` runs as is.
pub(crate) fn without_gil(f: impl FnOnce() + Send) {
    let mut f = Some(f);
    let _ = Python::try_attach(|py| {
        py.detach(|| {
            if let Some(f) = f.take() {
                f();
            }
        })
    });
    if let Some(f) = f.take() {
        f();
    }
}

/// Native module; import `fpdb` instead.
#[pymodule]
fn _fpdb(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    m.add_class::<db::Db>()?;
    m.add_class::<ingest::Ingest>()?;
    m.add_class::<read::Reader>()?;
    m.add_class::<read::ReadItem>()?;
    m.add_function(wrap_pyfunction!(read::read, m)?)?;
    m.add_class::<ingest::IngestResult>()?;
    types::register(m)?;
    m.add_function(wrap_pyfunction!(types::fingerprint, m)?)?;
    scale::register(m)?;
    listing::register(m)?;
    Ok(())
}
