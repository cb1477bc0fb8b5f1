//! Python values → library values: text (str or UTF-8 bytes), option strings, ingest items.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::api::{Dedup, Error, FingerprintSpec, NewDoc, Tables, Weighting};
use crate::errors::{invalid_option, to_py};

/// Why a Python value is not a text.
pub enum Bad {
    /// Not a str/bytes at all.
    Type(String),
    /// bytes that are not UTF-8, or a str with lone surrogates.
    Encoding(String),
}

impl Bad {
    /// The exception a direct call raises: `TypeError` or `InvalidInputError`.
    pub fn into_py(self, py: Python<'_>, key: Option<&str>) -> PyErr {
        match self {
            Bad::Type(m) => PyTypeError::new_err(m),
            Bad::Encoding(message) => to_py(
                py,
                Error::InvalidInput {
                    key: key.map(str::to_string),
                    message,
                },
            ),
        }
    }

    /// The per-item rejection an ingest reports.
    pub fn into_error(self, key: Option<&str>) -> Error {
        let message = match self {
            Bad::Type(m) | Bad::Encoding(m) => m,
        };
        Error::InvalidInput {
            key: key.map(str::to_string),
            message,
        }
    }
}

fn utf8(bytes: &[u8], what: &str) -> Result<String, Bad> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_owned()),
        Err(e) => {
            let at = e.valid_up_to();
            let byte = bytes.get(at).copied().unwrap_or(0);
            let why = match e.error_len() {
                Some(_) => format!("invalid UTF-8 at byte offset {at} (byte 0x{byte:02x})"),
                None => format!("truncated UTF-8 sequence at byte offset {at} (the bytes end inside a character)"),
            };
            Err(Bad::Encoding(format!(
                "{what} is bytes with {why}; fpdb stores UTF-8 text only: decode it first (e.g. data.decode(\"cp1252\")) and pass a str"
            )))
        }
    }
}

/// The text of `obj`: a `str`, or `bytes`/`bytearray` holding UTF-8. `what` names it in errors.
pub fn text(obj: &Bound<'_, PyAny>, what: &str) -> Result<String, Bad> {
    if let Ok(s) = obj.cast::<PyString>() {
        return s.to_cow().map(|c| c.into_owned()).map_err(|_| {
            Bad::Encoding(format!(
                "{what} is a str that cannot be encoded as UTF-8 (it holds lone surrogates, e.g. from a \
                 surrogateescape decode); fix the text first"
            ))
        });
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return utf8(b.as_bytes(), what);
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return utf8(&b.to_vec(), what);
    }
    let ty = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
    Err(Bad::Type(format!("{what} must be str or bytes (UTF-8), not {ty}")))
}

/// [`text`] for a direct argument: raises `TypeError` or `InvalidInputError`.
pub fn text_arg(py: Python<'_>, obj: &Bound<'_, PyAny>, what: &str, key: Option<&str>) -> PyResult<String> {
    text(obj, what).map_err(|b| b.into_py(py, key))
}

/// `"link"`, `"skip"` or `"off"` (parsed by the library).
pub fn dedup(py: Python<'_>, s: &str) -> PyResult<Dedup> {
    s.parse().map_err(|e| to_py(py, e))
}

/// An int, `"auto"` or `"k+1"`.
pub fn tables(py: Python<'_>, obj: Option<&Bound<'_, PyAny>>) -> PyResult<Tables> {
    let Some(obj) = obj else { return Ok(Tables::Auto) };
    if let Ok(n) = obj.extract::<u32>() {
        return Ok(Tables::Blocks(n));
    }
    match obj.extract::<String>() {
        Ok(s) => s.parse().map_err(|e| to_py(py, e)),
        Err(_) => Err(invalid_option(
            py,
            "tables",
            format!(
                "expected a number of tables, \"k+1\" or \"auto\", got {}",
                obj.repr().map(|r| r.to_string()).unwrap_or_default()
            ),
        )),
    }
}

/// A spec from `shingle` (`"word:3"`, `"char:5"`), `weights` (`"binary"`, `"count"`) and `seed`.
pub fn spec(py: Python<'_>, shingle: Option<&str>, weights: Option<&str>, seed: Option<u64>) -> PyResult<FingerprintSpec> {
    let mut spec = match shingle {
        Some(s) => s.parse::<FingerprintSpec>().map_err(|e| to_py(py, e))?,
        None => FingerprintSpec::default(),
    };
    if let Some(w) = weights {
        spec.weighting = w.parse::<Weighting>().map_err(|e| to_py(py, e))?;
    }
    if let Some(seed) = seed {
        spec.seed = seed;
    }
    Ok(spec)
}

static DUMPS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// JSON text of a metadata value, in the form the CLI stores (compact, keys sorted).
fn json(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<String> {
    let dumps = DUMPS.get_or_try_init(py, || -> PyResult<Py<PyAny>> { Ok(py.import("json")?.getattr("dumps")?.unbind()) })?;
    let kw = PyDict::new(py);
    kw.set_item("sort_keys", true)?;
    kw.set_item("separators", (",", ":"))?;
    kw.set_item("ensure_ascii", false)?;
    dumps.bind(py).call((value,), Some(&kw))?.extract()
}

fn meta(py: Python<'_>, value: &Bound<'_, PyAny>, key: &str) -> Result<Option<String>, Error> {
    if value.is_none() {
        return Ok(None);
    }
    if let Ok(s) = value.cast::<PyString>() {
        return s
            .to_cow()
            .map(|c| Some(c.into_owned()))
            .map_err(|_| Bad::Encoding("meta is not encodable as UTF-8".into()).into_error(Some(key)));
    }
    json(py, value).map(Some).map_err(|e| Error::InvalidInput {
        key: Some(key.to_string()),
        message: format!("meta is not JSON-serialisable: {e}"),
    })
}

fn key_of(obj: &Bound<'_, PyAny>) -> Result<String, Bad> {
    // A JSON number key is accepted by the CLI as its decimal text; so is a Python int here.
    if obj.is_instance_of::<pyo3::types::PyInt>() {
        return Ok(obj.str().map(|s| s.to_string()).unwrap_or_default());
    }
    text(obj, "the key")
}

/// One ingest item → a document or its per-item rejection (reported in input order, like a bad
/// JSONL line in `fpdb ingest`): `(key, text)`, `(key, text, meta)`, or a dict with "key" and
/// "text" whose other entries are the metadata.
pub fn item(py: Python<'_>, obj: &Bound<'_, PyAny>) -> Result<NewDoc, Error> {
    let expected = "expected a (key, text) tuple, a (key, text, meta) tuple or a dict with \"key\" and \"text\"";
    let shape = |m: String, key: Option<&str>| Bad::Type(format!("{expected}; {m}")).into_error(key);
    let (key, t, m): (String, Bound<'_, PyAny>, Option<Bound<'_, PyAny>>) = if let Ok(d) = obj.cast::<PyDict>() {
        let get = |f: &str| d.get_item(f).ok().flatten();
        let Some(k) = get("key") else {
            return Err(shape("the dict has no \"key\"".into(), None));
        };
        let key = key_of(&k).map_err(|b| b.into_error(None))?;
        let Some(t) = get("text") else {
            return Err(shape("the dict has no \"text\"".into(), Some(&key)));
        };
        let rest = if d.len() > 2 {
            let rest = d.copy().map_err(|e| shape(e.to_string(), Some(&key)))?;
            let _ = rest.del_item("key");
            let _ = rest.del_item("text");
            Some(rest.into_any())
        } else {
            None
        };
        (key, t, rest)
    } else if obj.is_instance_of::<PyTuple>() || obj.is_instance_of::<PyList>() {
        let n = obj.len().unwrap_or(0);
        if !(2..=3).contains(&n) {
            return Err(shape(format!("got a sequence of length {n}"), None));
        }
        let at = |i: usize| obj.get_item(i).map_err(|e| shape(e.to_string(), None));
        let key = key_of(&at(0)?).map_err(|b| b.into_error(None))?;
        (key, at(1)?, if n == 3 { Some(at(2)?) } else { None })
    } else {
        let ty = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
        return Err(shape(format!("got {ty}"), None));
    };
    let text = text(&t, "the text").map_err(|b| b.into_error(Some(&key)))?;
    let meta = match m {
        Some(m) => meta(py, &m, &key)?,
        None => None,
    };
    Ok(NewDoc {
        key,
        text,
        meta,
        biblio: Default::default(),
    })
}
