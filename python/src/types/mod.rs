//! The library's result structs as small frozen Python classes (plus `to_dict()` for JSON and tests).
//!
//! This module holds the helpers they share and `register`; the classes live in its submodules, by
//! topic, and are re-exported here.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::Serialize;

mod docs;
mod hits;
mod pairs;
mod spec;
mod stats;

pub use docs::Document;
pub use hits::{GroupInfo, Hit, InsertOutcome, QueryAnswer};
pub use pairs::{ContainPair, DistRow, Pair, PairGroup, PairsReport};
pub use spec::{fingerprint, spec_arg, Fingerprint, Spec};
pub use stats::{CheckReport, CompactStats, ContainmentStats, Fault, IngestStats, Stats};

/// A value's JSON shape (its serde form, `fpdb::output`) as Python objects: dicts, lists, str,
/// int, float, bool and None, as `json.loads` makes them of the text the CLI prints.
pub(crate) fn py_value<T: Serialize + ?Sized>(py: Python<'_>, v: &T) -> PyResult<Py<PyAny>> {
    let text = serde_json::to_string(v).map_err(|e| PyValueError::new_err(format!("cannot encode a result as JSON: {e}")))?;
    json_loads(py, &text)
}

static LOADS: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();

/// `json.loads(text)`.
pub(crate) fn json_loads(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    let loads = LOADS.get_or_try_init(py, || -> PyResult<Py<PyAny>> { Ok(py.import("json")?.getattr("loads")?.unbind()) })?;
    Ok(loads.bind(py).call1((text,))?.unbind())
}

/// `to_dict()` of a result class: [`py_value`] of the library's value, a dict.
pub(crate) fn to_dict<'py, T: Serialize + ?Sized>(py: Python<'py>, v: &T) -> PyResult<Bound<'py, PyDict>> {
    Ok(py_value(py, v)?.into_bound(py).cast_into::<PyDict>()?)
}

/// `Name(field=repr, ...)`: a result class's repr() from its dict, every field in order.
fn repr_of<T: Serialize + ?Sized>(py: Python<'_>, name: &str, v: &T) -> PyResult<String> {
    let fields = to_dict(py, v)?
        .iter()
        .map(|(k, v)| Ok(format!("{}={}", k.str()?, v.repr()?)))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(format!("{name}({})", fields.join(", ")))
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

fn int_repr<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("None".into(), |v| v.to_string())
}

/// Adds the result classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Hit>()?;
    m.add_class::<QueryAnswer>()?;
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
