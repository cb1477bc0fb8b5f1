//! The fingerprint spec (`FingerprintSpec`, and `spec_arg` for spec arguments) and the
//! `fingerprint()` function with its `Fingerprint` result.

use pyo3::prelude::*;
use pyo3::types::PyType;

use super::r;
use crate::api::{fingerprint as engine_fingerprint, FingerprintSpec as EngineSpec, ShingleUnit, Weighting};
use crate::convert;

/// The fingerprint spec: what a shingle is, the hash seed and the SimHash weighting. Databases and
/// fingerprints are comparable only under equal specs.
#[pyclass(frozen, eq, hash, module = "fpdb", name = "FingerprintSpec")]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Spec(pub EngineSpec);

#[pymethods]
impl Spec {
    /// `FingerprintSpec(shingle="word:3", weights="binary", seed=None, normalizer=None, hash=None)`:
    /// word or character n-grams (n in 1..=32), binary (each distinct shingle once) or count
    /// weights, the hash seed, the text normalizer version (1 or 2) and the word-shingle hash
    /// ("word-mix" or "xxh3-64"); None = the library's defaults for new databases.
    #[new]
    #[pyo3(signature = (shingle = "word:3", weights = "binary", seed = None, normalizer = None, hash = None))]
    fn new(py: Python<'_>, shingle: &str, weights: &str, seed: Option<u64>, normalizer: Option<u32>, hash: Option<&str>) -> PyResult<Self> {
        convert::spec(py, Some(shingle), Some(weights), seed, normalizer, hash).map(Spec)
    }

    /// The default spec of new databases.
    #[classmethod]
    fn default(_cls: &Bound<'_, PyType>) -> Self {
        Spec(EngineSpec::default())
    }

    /// "word" or "char".
    #[getter]
    fn unit(&self) -> &'static str {
        match self.0.unit {
            ShingleUnit::Word => "word",
            ShingleUnit::Char => "char",
        }
    }

    /// Shingle length in units.
    #[getter]
    fn n(&self) -> u32 {
        self.0.n
    }

    /// "word:N" or "char:N".
    #[getter]
    fn shingle(&self) -> String {
        format!("{}:{}", self.unit(), self.0.n)
    }

    /// "binary" or "count".
    #[getter]
    fn weights(&self) -> &'static str {
        match self.0.weighting {
            Weighting::Binary => "binary",
            Weighting::Count => "count",
        }
    }

    /// Seed of the shingle hash.
    #[getter]
    fn seed(&self) -> u64 {
        self.0.seed
    }

    /// Text normalizer version: 2 for new databases (each Chinese, Japanese, Thai … character a
    /// word), 1 for databases made before it.
    #[getter]
    fn normalizer(&self) -> u32 {
        self.0.normalizer
    }

    /// The word-shingle hash: "word-mix" for new databases (each word hashed once), "xxh3-64" for
    /// databases made before it.
    #[getter]
    fn hash(&self) -> &'static str {
        self.0.hash.name()
    }

    /// The near-duplicate method with its parameters, e.g. "simhash" or
    /// "broder(supershingles=6,...)" (fixed when the database was created: `Db.create(method=...)`).
    #[getter]
    fn method(&self) -> String {
        self.0.method.to_string()
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "FingerprintSpec(shingle={}, weights={}, seed={:#x}, normalizer={}, hash={})",
            r(&self.shingle()),
            r(self.weights()),
            self.0.seed,
            self.0.normalizer,
            r(self.hash())
        )
    }
}

/// A spec argument: a `FingerprintSpec`, a shingle string like "word:3", or None (the default).
pub fn spec_arg(py: Python<'_>, spec: Option<&Bound<'_, PyAny>>) -> PyResult<EngineSpec> {
    match spec {
        None => Ok(EngineSpec::default()),
        Some(s) if s.is_none() => Ok(EngineSpec::default()),
        Some(s) => {
            if let Ok(sp) = s.cast::<Spec>() {
                return Ok(sp.get().0.clone());
            }
            match s.extract::<String>() {
                Ok(text) => convert::spec(py, Some(&text), None, None, None, None),
                Err(_) => Err(pyo3::exceptions::PyTypeError::new_err(
                    "spec must be a FingerprintSpec, a shingle string such as \"word:3\", or None",
                )),
            }
        }
    }
}

/// A document's fingerprint: its 64-bit SimHash and its sorted shingle hashes.
#[pyclass(frozen, eq, module = "fpdb")]
#[derive(Clone, Debug, PartialEq)]
pub struct Fingerprint {
    /// 64-bit SimHash.
    #[pyo3(get)]
    pub simhash: u64,
    /// Low 32 bits of each distinct shingle hash, sorted.
    #[pyo3(get)]
    pub shingles: Vec<u32>,
}

#[pymethods]
impl Fingerprint {
    fn __repr__(&self) -> String {
        format!(
            "Fingerprint(simhash={:#018x}, shingles=<{} hashes>)",
            self.simhash,
            self.shingles.len()
        )
    }
}

/// fingerprint(text, spec=None) -> Fingerprint
///
/// The SimHash and shingle set of `text` (str, or bytes holding UTF-8) under `spec` (a
/// FingerprintSpec, a shingle string like "word:3", or None for the default) — exactly what a
/// database with that spec stores. The GIL is released while hashing.
#[pyfunction]
#[pyo3(signature = (text, spec = None))]
pub fn fingerprint(py: Python<'_>, text: &Bound<'_, PyAny>, spec: Option<&Bound<'_, PyAny>>) -> PyResult<Fingerprint> {
    let text = convert::text_arg(py, text, "text", None)?;
    let spec = spec_arg(py, spec)?;
    let fp = py.detach(|| engine_fingerprint(&spec, &text));
    Ok(Fingerprint {
        simhash: fp.simhash,
        shingles: fp.shingles,
    })
}
