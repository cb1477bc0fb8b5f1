//! Python values → library values: text (str or UTF-8 bytes), option strings, ingest items.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::api::{Biblio, Dedup, Error, FingerprintSpec, HashKind, IdfTable, Method, NewDoc, Tables, Weighting};
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
/// A spec from its Python arguments (None: the library's default), checked by the library
/// (`FingerprintSpec::validate`: e.g. a normalizer this build does not implement).
pub fn spec(
    py: Python<'_>,
    shingle: Option<&str>,
    weights: Option<&str>,
    seed: Option<u64>,
    normalizer: Option<u32>,
    hash: Option<&str>,
) -> PyResult<FingerprintSpec> {
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
    if let Some(v) = normalizer {
        spec.normalizer = v;
    }
    if let Some(h) = hash {
        spec.hash = h.parse::<HashKind>().map_err(|e| to_py(py, e))?;
    }
    spec.validate().map_err(|e| to_py(py, e))?;
    Ok(spec)
}

/// The IDF table of an `idf_from` argument: a path (str or os.PathLike) to a JSONL corpus, read by
/// the library as `fpdb init --idf-from` reads it, or an iterable of texts.
fn idf_table(py: Python<'_>, corpus: &Bound<'_, PyAny>, normalizer: u32) -> fpdb::Result<IdfTable> {
    let is_path = corpus.is_instance_of::<PyString>() || corpus.hasattr("__fspath__").unwrap_or(false);
    if is_path {
        let path: std::path::PathBuf = corpus.extract().map_err(|e: PyErr| Error::InvalidOption {
            name: "idf_from",
            message: e.to_string(),
        })?;
        return py.detach(|| IdfTable::from_jsonl_with(&path, normalizer)).map(|(t, _)| t);
    }
    let mut texts = Vec::new();
    let items = corpus.try_iter().map_err(|e| Error::InvalidOption {
        name: "idf_from",
        message: format!("expected a path to a JSONL corpus or an iterable of texts: {e}"),
    })?;
    for t in items {
        let text = t.and_then(|t| t.extract::<String>()).map_err(|e| Error::InvalidOption {
            name: "idf_from",
            message: format!("every text of the iterable must be a str: {e}"),
        })?;
        texts.push(text);
    }
    Ok(py.detach(|| IdfTable::from_texts_with(normalizer, texts.iter().map(String::as_str))))
}

/// The method of `Db.create`: `name` with its options, built by the library as `fpdb init
/// --method NAME [--idf-from CORPUS] [--min-shared S]` builds it, the IDF table's words those of
/// the database's normalizer `normalizer`.
pub fn method(
    py: Python<'_>,
    normalizer: u32,
    name: Option<&str>,
    idf_from: Option<&Bound<'_, PyAny>>,
    min_shared: Option<u32>,
) -> PyResult<Method> {
    Method::with_options_for(
        normalizer,
        name.unwrap_or("simhash"),
        idf_from.map(|c| move |n| idf_table(py, c, n)),
        min_shared,
    )
    .map_err(|e| to_py(py, e))
}

static DUMPS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
/// The name of a value's JSON kind, as the CLI's errors word it.
fn kind(v: &Bound<'_, PyAny>) -> String {
    if v.is_none() {
        "null".into()
    } else if v.is_instance_of::<pyo3::types::PyBool>() {
        "a boolean".into()
    } else if v.is_instance_of::<pyo3::types::PyInt>() || v.is_instance_of::<pyo3::types::PyFloat>() {
        "a number".into()
    } else if v.is_instance_of::<PyString>() {
        "a string".into()
    } else if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        "an array".into()
    } else if v.is_instance_of::<PyDict>() {
        "an object".into()
    } else {
        v.get_type().name().map(|n| format!("a {n}")).unwrap_or_else(|_| "?".into())
    }
}

/// The optional "title" (str), "year" (int, or a str of digits) and "doi" (str) entries of an
/// item's metadata dict, read as `fpdb ingest` reads them from a JSONL line (None = absent).
fn biblio(d: &Bound<'_, PyDict>) -> Result<Biblio, String> {
    let get = |f: &str| d.get_item(f).ok().flatten().filter(|v| !v.is_none());
    let string = |name: &str| -> Result<Option<String>, String> {
        match get(name) {
            None => Ok(None),
            Some(v) => match v.cast::<PyString>() {
                Ok(s) => s
                    .to_cow()
                    .map(|c| Some(c.into_owned()))
                    .map_err(|_| format!("field {name:?} is not encodable as UTF-8")),
                Err(_) => Err(format!("field {name:?} must be a string, found {}", kind(&v))),
            },
        }
    };
    let title = string("title")?;
    let doi = string("doi")?;
    let year = match get("year") {
        None => None,
        Some(v) if v.is_instance_of::<pyo3::types::PyBool>() => {
            return Err(format!("field \"year\" must be an integer, found {}", kind(&v)))
        }
        Some(v) if v.is_instance_of::<pyo3::types::PyInt>() => Some(
            v.extract::<i32>()
                .map_err(|_| format!("field \"year\" must be an integer year, found {v}"))?,
        ),
        Some(v) if v.is_instance_of::<pyo3::types::PyFloat>() => return Err(format!("field \"year\" must be an integer year, found {v}")),
        Some(v) if v.is_instance_of::<PyString>() => {
            let s = v.to_string();
            Some(
                s.trim()
                    .parse::<i32>()
                    .map_err(|_| format!("field \"year\" must be an integer year, found {s:?}"))?,
            )
        }
        Some(v) => return Err(format!("field \"year\" must be an integer, found {}", kind(&v))),
    };
    Ok(Biblio { title, year, doi })
}

/// JSON text of a metadata value, in the form the CLI stores (compact, keys sorted).
fn json(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<String> {
    let dumps = DUMPS.get_or_try_init(py, || -> PyResult<Py<PyAny>> { Ok(py.import("json")?.getattr("dumps")?.unbind()) })?;
    let kw = PyDict::new(py);
    kw.set_item("sort_keys", true)?;
    kw.set_item("separators", (",", ":"))?;
    kw.set_item("ensure_ascii", false)?;
    dumps.bind(py).call((value,), Some(&kw))?.extract()
}

/// A metadata argument (a dict or any JSON-serialisable value, or a str of JSON text) as the JSON
/// text stored; None stays None.
pub(crate) fn meta(py: Python<'_>, value: &Bound<'_, PyAny>, key: &str) -> Result<Option<String>, Error> {
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
/// "text" whose other entries are the metadata. A metadata dict's "title", "year" and "doi" are
/// also the document's title, year and DOI (indexed for exact metadata matches), as in
/// `fpdb ingest`. An item of `fpdb.read` is taken as read.
pub fn item(py: Python<'_>, obj: &Bound<'_, PyAny>) -> Result<NewDoc, Error> {
    if let Ok(read) = obj.cast::<crate::read::ReadItem>() {
        return read.get().item();
    }
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
    let biblio = match m.as_ref().map(|m| m.cast::<PyDict>()) {
        Some(Ok(d)) => biblio(d).map_err(|message| Error::InvalidInput {
            key: Some(key.clone()),
            message,
        })?,
        _ => Biblio::default(),
    };
    let meta = match m {
        Some(m) => meta(py, &m, &key)?,
        None => None,
    };
    Ok(NewDoc { key, text, meta, biblio })
}
