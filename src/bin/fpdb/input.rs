//! Turning CLI inputs (JSONL files, stdin, directories of text files) into documents.
//!
//! Policy for bad input (docs/durability.md, "Bad input"): every problem is reported per item with
//! its line number or path, and the rest of the input is still ingested. Invalid UTF-8 is rejected
//! (not repaired lossily): a mangled text would get a fingerprint that matches nothing.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use fpdb::{Error, NewDoc};

/// Where each item came from (`line 12`, or a path), by input position.
pub type Origins = Arc<Mutex<Vec<String>>>;

fn bad(origin: &str, key: Option<&str>, msg: impl std::fmt::Display) -> Error {
    let key = key.map(|k| format!(" (key {k:?})")).unwrap_or_default();
    Error::InvalidInput {
        key: None,
        message: format!("{origin}{key}: {msg}"),
    }
}

/// Parses one JSONL line into a document. Fields other than `key` and `text` are kept as metadata;
/// `title`, `year` and `doi` (optional) also become the document's [`fpdb::Biblio`] (indexed for
/// exact metadata matches).
pub fn parse_line(line: &[u8], origin: &str, key_field: &str, text_field: &str) -> Result<NewDoc, Error> {
    let s = std::str::from_utf8(line).map_err(|e| {
        bad(
            origin,
            None,
            format!(
                "invalid UTF-8 at byte {} (fpdb rejects invalid UTF-8; re-encode the input)",
                e.valid_up_to()
            ),
        )
    })?;
    let v: serde_json::Value = serde_json::from_str(s).map_err(|e| bad(origin, None, format!("malformed JSON: {e}")))?;
    let serde_json::Value::Object(mut obj) = v else {
        return Err(bad(
            origin,
            None,
            "expected a JSON object like {\"key\": \"...\", \"text\": \"...\"}",
        ));
    };
    let key = match obj.remove(key_field) {
        Some(serde_json::Value::String(k)) => k,
        Some(serde_json::Value::Number(n)) => n.to_string(),
        Some(other) => {
            return Err(bad(
                origin,
                None,
                format!("field {key_field:?} must be a string, found {}", kind(&other)),
            ))
        }
        None => return Err(bad(origin, None, format!("missing field {key_field:?}"))),
    };
    let text = match obj.remove(text_field) {
        Some(serde_json::Value::String(t)) => t,
        Some(other) => {
            return Err(bad(
                origin,
                Some(&key),
                format!("field {text_field:?} must be a string, found {}", kind(&other)),
            ))
        }
        None => return Err(bad(origin, Some(&key), format!("missing field {text_field:?}"))),
    };
    let biblio = biblio_fields(&obj).map_err(|m| bad(origin, Some(&key), m))?;
    let meta = (!obj.is_empty()).then(|| serde_json::Value::Object(obj).to_string());
    Ok(NewDoc { key, text, meta, biblio })
}

/// Reads the optional `title` (string), `year` (integer, or a string of digits) and `doi` (string)
/// fields of a JSON object; `null` is the same as absent.
pub fn biblio_fields(obj: &serde_json::Map<String, serde_json::Value>) -> Result<fpdb::Biblio, String> {
    use serde_json::Value;
    let string = |name: &str, v: Option<Value>| match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!("field {name:?} must be a string, found {}", kind(&other))),
    };
    let title = string("title", obj.get("title").cloned())?;
    let doi = string("doi", obj.get("doi").cloned())?;
    let year = match obj.get("year").cloned() {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => Some(
            n.as_i64()
                .and_then(|y| i32::try_from(y).ok())
                .ok_or_else(|| format!("field \"year\" must be an integer year, found {n}"))?,
        ),
        Some(Value::String(s)) => Some(
            s.trim()
                .parse::<i32>()
                .map_err(|_| format!("field \"year\" must be an integer year, found {s:?}"))?,
        ),
        Some(other) => return Err(format!("field \"year\" must be an integer, found {}", kind(&other))),
    };
    Ok(fpdb::Biblio { title, year, doi })
}

fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// JSONL documents from a reader; blank lines are skipped.
pub fn jsonl<R: Read + Send + 'static>(
    reader: R,
    name: String,
    key_field: String,
    text_field: String,
    origins: Origins,
) -> impl Iterator<Item = Result<NewDoc, Error>> + Send {
    let mut r = BufReader::with_capacity(1 << 20, reader);
    let mut lineno = 0u64;
    let mut buf = Vec::new();
    let mut done = false;
    std::iter::from_fn(move || loop {
        if done {
            return None;
        }
        buf.clear();
        lineno += 1;
        let origin = || format!("{name} line {lineno}");
        match r.read_until(b'\n', &mut buf) {
            Ok(0) => return None,
            Ok(_) => {
                let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if line.iter().all(|b| b.is_ascii_whitespace()) {
                    continue;
                }
                let item = parse_line(line, &origin(), &key_field, &text_field);
                origins.lock().unwrap_or_else(|p| p.into_inner()).push(origin());
                return Some(item);
            }
            Err(e) => {
                // A read error ends the ingest (exit 3) after what came before is committed: the
                // rest of the input cannot be trusted. Report it once: it would repeat.
                done = true;
                origins.lock().unwrap_or_else(|p| p.into_inner()).push(origin());
                return Some(Err(Error::Io {
                    op: "read ingest input",
                    path: PathBuf::from(format!("{name} line {lineno}")),
                    source: e,
                }));
            }
        }
    })
}

/// Every regular file under `dir` (sorted, recursively), as documents keyed by relative path.
pub fn directory(dir: &Path, origins: Origins) -> Result<impl Iterator<Item = Result<NewDoc, Error>> + Send, Error> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let rd = std::fs::read_dir(&d).map_err(|e| Error::Io {
            op: "list input directory",
            path: d.clone(),
            source: e,
        })?;
        for entry in rd {
            let entry = entry.map_err(|e| Error::Io {
                op: "list input directory",
                path: d.clone(),
                source: e,
            })?;
            let p = entry.path();
            let ft = entry.file_type().map_err(|e| Error::Io {
                op: "stat input file",
                path: p.clone(),
                source: e,
            })?;
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_file() {
                files.push(p);
            }
        }
    }
    files.sort();
    let root = dir.to_path_buf();
    Ok(files.into_iter().map(move |p| {
        let key = relative_key(&root, &p);
        origins.lock().unwrap_or_else(|e| e.into_inner()).push(p.display().to_string());
        // One unreadable file is that item's problem (reported, exit 6), not the whole run's.
        read_text_file(&p)
            .map_err(|e| match e {
                Error::Io { source, path, .. } => bad(&path.display().to_string(), None, format!("cannot read: {source}")),
                other => other,
            })
            .map(|text| NewDoc {
                key,
                text,
                meta: None,
                biblio: fpdb::Biblio::default(),
            })
    }))
}

fn relative_key(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).to_string_lossy().replace('\\', "/")
}

/// Reads a whole text file, rejecting invalid UTF-8 with the byte offset.
pub fn read_text_file(p: &PathBuf) -> Result<String, Error> {
    let mut bytes = Vec::new();
    File::open(p).and_then(|mut f| f.read_to_end(&mut bytes)).map_err(|e| Error::Io {
        op: "read input file",
        path: p.clone(),
        source: e,
    })?;
    utf8(bytes, &p.display().to_string())
}

/// Bytes to text, rejecting invalid UTF-8 with its offset.
pub fn utf8(bytes: Vec<u8>, origin: &str) -> Result<String, Error> {
    String::from_utf8(bytes).map_err(|e| {
        bad(
            origin,
            None,
            format!(
                "invalid UTF-8 at byte {} (fpdb rejects invalid UTF-8; re-encode the input)",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}
