//! The library's result structs as small frozen Python classes (plus `to_dict()` for JSON and tests).
//!
//! This module holds the helpers they share and `register`; the classes live in its submodules, by
//! topic, and are re-exported here.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::IntoPyObjectExt;

mod docs;
mod hits;
mod pairs;
mod spec;
mod stats;

pub use docs::Document;
pub use hits::{GroupInfo, Hit, InsertOutcome};
pub use pairs::{ContainPair, DistRow, Pair, PairGroup, PairsReport};
pub use spec::{fingerprint, spec_arg, Fingerprint, Spec};
pub use stats::{CheckReport, CompactStats, ContainmentStats, Fault, IngestStats, Stats};

fn dict<'py>(py: Python<'py>, items: &[(&str, Py<PyAny>)]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in items {
        d.set_item(*k, v)?;
    }
    Ok(d)
}

fn o<'py, T: IntoPyObject<'py>>(py: Python<'py>, v: T) -> PyResult<Py<PyAny>> {
    v.into_py_any(py)
}

/// A str as Python's repr() shows it (single quotes when the text has none).
pub(crate) fn r(s: &str) -> String {
    if s.contains(['\'', '"', '\\']) || s.chars().any(char::is_control) {
        format!("{s:?}")
    } else {
        format!("'{s}'")
    }
}

pub(crate) fn ro(s: &Option<String>) -> String {
    s.as_deref().map_or("None".into(), r)
}

fn jaccard_repr(j: Option<f64>) -> String {
    j.map_or("None".into(), |j| format!("{j:?}"))
}

fn int_repr<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("None".into(), |v| v.to_string())
}

/// Adds the result classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Hit>()?;
    m.add_class::<GroupInfo>()?;
    m.add_class::<InsertOutcome>()?;
    m.add_class::<Document>()?;
    m.add_class::<Stats>()?;
    m.add_class::<ContainmentStats>()?;
    m.add_class::<ContainPair>()?;
    m.add_class::<Fault>()?;
    m.add_class::<CheckReport>()?;
    m.add_class::<CompactStats>()?;
    m.add_class::<Pair>()?;
    m.add_class::<PairGroup>()?;
    m.add_class::<DistRow>()?;
    m.add_class::<PairsReport>()?;
    m.add_class::<IngestStats>()?;
    m.add_class::<Spec>()?;
    m.add_class::<Fingerprint>()?;
    Ok(())
}
