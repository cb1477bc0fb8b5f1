//! The document reader (feature `input`): JSONL files, WARC and WET files, stdin and directories
//! of text files into documents, for the `fpdb` CLI and Python's `fpdb.read` (start with [`open`]).
//! Every input is first looked at by `sniff.rs`: gzip and zstd are decompressed, a
//! UTF-8 byte-order mark dropped, and formats fpdb does not read are refused with one error. A
//! stream that starts with a WARC version line is read as WARC (`warc.rs`): one document per
//! `response` or `conversion` record, the other records skipped and counted.
//!
//! Policy for bad input (docs/durability.md, "Bad input"): every problem is reported per item with
//! its line number or path, and the rest of the input is still ingested. Invalid UTF-8 is rejected
//! (not repaired lossily): a mangled text would get a fingerprint that matches nothing.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::{Error, NewDoc};

use self::fastjson::Fields;
use self::origin::{line_origin, record_origin, Origin};
pub use self::origin::{lock, OriginLog, Origins};

mod fastjson;
mod origin;
mod sniff;
mod warc;

fn bad(origin: &str, key: Option<&str>, msg: impl std::fmt::Display) -> Error {
    let key = key.map(|k| format!(" (key {k:?})")).unwrap_or_default();
    Error::InvalidInput {
        key: None,
        message: format!("{origin}{key}: {msg}"),
    }
}

/// What is wrong with bytes that are not UTF-8 from byte `at` on, and what to do.
fn invalid_utf8(at: usize) -> String {
    format!(
        "invalid UTF-8 at byte {at} (fpdb rejects invalid UTF-8; re-encode the input, e.g. `iconv -f WINDOWS-1252 -t UTF-8 FILE` for \
         Latin-1 text)"
    )
}

/// The line that reports a rejected item on stderr (after `fpdb: rejected `): its error, named by
/// `origin` unless the message names it already. `ingest` and `query --jsonl` report with it.
pub fn rejection(origin: &str, e: &Error) -> String {
    let msg = e.to_string();
    if msg.contains(origin) {
        msg
    } else {
        format!("{origin}: {msg}")
    }
}

/// Parses one JSONL line into a document. Fields other than `key` and `text` are kept as metadata;
/// `title`, `year` and `doi` (optional) also become the document's [`crate::Biblio`] (indexed for
/// exact metadata matches). `origin` names the line in error messages (formatted only for a
/// rejected line).
pub fn parse_line(line: &[u8], origin: impl Fn() -> String, key_field: &str, text_field: &str) -> Result<NewDoc, Error> {
    let bad = |key: Option<&str>, msg: String| bad(&origin(), key, msg);
    let s = std::str::from_utf8(line).map_err(|e| bad(None, invalid_utf8(e.valid_up_to())))?;
    // An object is read field by field (`Fields`): the key and text straight into their values, the
    // other fields into the metadata map. Anything else is parsed whole only to say what it is.
    let fields = if let Some(f) = fastjson::fields(s, key_field, text_field) {
        // An object of string fields, read in one pass (or `None`: serde_json's path below).
        f
    } else if s.trim_start().starts_with('{') {
        let mut de = serde_json::Deserializer::from_str(s);
        serde::de::DeserializeSeed::deserialize(FieldsSeed { key_field, text_field }, &mut de)
            .and_then(|f| de.end().map(|()| f))
            .map_err(|e| bad(None, format!("malformed JSON: {e}")))?
    } else {
        serde_json::from_str::<serde_json::Value>(s).map_err(|e| bad(None, format!("malformed JSON: {e}")))?;
        return Err(bad(
            None,
            "expected a JSON object like {\"key\": \"...\", \"text\": \"...\"}".into(),
        ));
    };
    let Fields { key, text, rest } = fields;
    let key = match key {
        Some(serde_json::Value::String(k)) => k,
        Some(serde_json::Value::Number(n)) => n.to_string(),
        Some(other) => return Err(bad(None, format!("field {key_field:?} must be a string, found {}", kind(&other)))),
        None => return Err(bad(None, format!("missing field {key_field:?}"))),
    };
    let text = match text {
        Some(serde_json::Value::String(t)) => t,
        Some(other) => {
            return Err(bad(
                Some(&key),
                format!("field {text_field:?} must be a string, found {}", kind(&other)),
            ))
        }
        None => return Err(bad(Some(&key), format!("missing field {text_field:?}"))),
    };
    let biblio = biblio_fields(&rest).map_err(|m| bad(Some(&key), m))?;
    let meta = (!rest.is_empty()).then(|| serde_json::Value::Object(rest).to_string());
    Ok(NewDoc { key, text, meta, biblio })
}

/// Reads a [`Fields`] from a JSON object, the field names decided at run time.
struct FieldsSeed<'a> {
    key_field: &'a str,
    text_field: &'a str,
}

impl<'de> serde::de::DeserializeSeed<'de> for FieldsSeed<'_> {
    type Value = Fields;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<Fields, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for FieldsSeed<'_> {
    type Value = Fields;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<Fields, A::Error> {
        let mut out = Fields {
            key: None,
            text: None,
            rest: serde_json::Map::new(),
        };
        // Field names without escapes are borrowed from the line: no allocation for `key`/`text`.
        while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let value: serde_json::Value = map.next_value()?;
            if name == self.key_field {
                out.key = Some(value);
            } else if name == self.text_field {
                out.text = Some(value);
            } else {
                out.rest.insert(name.into_owned(), value);
            }
        }
        Ok(out)
    }
}

/// Reads the optional `title` (string), `year` (integer, or a string of digits) and `doi` (string)
/// fields of a JSON object; `null` is the same as absent.
pub fn biblio_fields(obj: &serde_json::Map<String, serde_json::Value>) -> Result<crate::Biblio, String> {
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
    Ok(crate::Biblio { title, year, doi })
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

/// The longest JSONL line read, bytes (64 MiB; the server's NDJSON bodies have the same default
/// bound, `--max-bulk-bytes`). A longer line is rejected with its number and skipped without
/// being held in memory: a multi-GB line without a newline cannot exhaust memory.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// JSONL documents from a reader (plain, gzip or zstd, `sniff.rs`); blank lines are skipped,
/// and lines over [`MAX_LINE_BYTES`] are rejected. Each item's origin (its line) goes to `origins`
/// when given. Refused before any line is read when the input is in a format fpdb does not read
/// (UTF-16, xz, ...). A WARC or WET stream is read as such (`warc.rs`).
pub fn jsonl<R: Read + Send + 'static>(
    reader: R,
    name: String,
    key_field: String,
    text_field: String,
    origins: Option<Origins>,
) -> Result<Items, Error> {
    jsonl_capped(reader, name, key_field, text_field, origins, MAX_LINE_BYTES)
}

/// [`jsonl`] with lines of at most `max_line` bytes.
fn jsonl_capped<R: Read + Send + 'static>(
    reader: R,
    name: String,
    key_field: String,
    text_field: String,
    origins: Option<Origins>,
    max_line: usize,
) -> Result<Items, Error> {
    let reader = self::sniff::text_stream(reader, &name)?;
    if let Some(o) = &origins {
        lock(o).name.clone_from(&name);
    }
    let mut r = BufReader::with_capacity(1 << 20, reader);
    let head = r.fill_buf().map_err(|e| Error::Io {
        op: "read ingest input",
        path: PathBuf::from(&name),
        source: e,
    })?;
    if self::warc::is_warc(head) {
        return Ok(warc(r, name, key_field, origins, max_line as u64));
    }
    let mut lineno = 0u64;
    let mut buf = Vec::new();
    let mut done = false;
    Ok(Box::new(std::iter::from_fn(move || loop {
        if done {
            return None;
        }
        buf.clear();
        lineno += 1;
        let origin = || line_origin(&name, lineno);
        match read_line_capped(&mut r, &mut buf, max_line) {
            Ok(None) => return None,
            Ok(Some(false)) => {
                if let Some(o) = &origins {
                    lock(o).push(Origin::Line(lineno));
                }
                return Some(Err(bad(
                    &origin(),
                    None,
                    format!("the line is over {max_line} bytes; it was skipped (split the document or shorten its text)"),
                )));
            }
            Ok(Some(true)) => {
                let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if line.iter().all(|b| b.is_ascii_whitespace()) {
                    continue;
                }
                let item = parse_line(line, origin, &key_field, &text_field);
                if let Some(o) = &origins {
                    lock(o).push(Origin::Line(lineno));
                }
                return Some(item);
            }
            Err(e) => {
                // A read error ends the ingest (exit 3) after what came before is committed: the
                // rest of the input cannot be trusted. Report it once: it would repeat.
                done = true;
                if let Some(o) = &origins {
                    lock(o).push(Origin::Line(lineno));
                }
                return Some(Err(Error::Io {
                    op: "read ingest input",
                    path: PathBuf::from(origin()),
                    source: e,
                }));
            }
        }
    })))
}

/// The documents of a WARC or WET stream ([`self::warc`]): one per `response` or `conversion`
/// record, keyed by its `WARC-Target-URI` (or the WARC field `key_field` names, when it is not the
/// default `key`), with its `WARC-Record-ID`, `WARC-Date` and `WARC-Target-URI` as metadata. The
/// other records are counted in `origins` ([`OriginLog::skipped_records`]). A record over
/// `max_block` bytes is rejected; a stream that stops being WARC ends the input with an error.
fn warc<R: BufRead + Send + 'static>(r: R, name: String, key_field: String, origins: Option<Origins>, max_block: u64) -> Items {
    let key_field = if key_field == "key" {
        "WARC-Target-URI".to_string()
    } else {
        key_field
    };
    let mut records = self::warc::Reader::new(r, max_block);
    let mut n = 0u64;
    Box::new(std::iter::from_fn(move || loop {
        let rec = records.next()?;
        n += 1;
        let offset = match &rec {
            Ok(r) => r.offset,
            Err(self::warc::WarcError::TooLarge { offset, .. } | self::warc::WarcError::Malformed { offset, .. }) => *offset,
            Err(_) => 0,
        };
        let origin = record_origin(&name, n, offset);
        let push = |origins: &Option<Origins>| {
            if let Some(o) = origins {
                lock(o).push(Origin::Record { n, offset });
            }
        };
        let rec = match rec {
            Ok(r) => r,
            Err(self::warc::WarcError::Io(e)) => {
                push(&origins);
                return Some(Err(Error::Io {
                    op: "read ingest input",
                    path: PathBuf::from(origin),
                    source: e,
                }));
            }
            Err(e) => {
                push(&origins);
                return Some(Err(bad(&origin, None, e)));
            }
        };
        let text = match rec.document() {
            Ok(Some(t)) => t,
            Ok(None) => {
                if let Some(o) = &origins {
                    *lock(o).skipped.entry(rec.skip_reason()).or_default() += 1;
                }
                continue;
            }
            Err(e) => {
                push(&origins);
                return Some(Err(bad(&origin, rec.field(&key_field), e)));
            }
        };
        push(&origins);
        let Some(key) = rec.field(&key_field).filter(|k| !k.is_empty()) else {
            return Some(Err(bad(
                &origin,
                None,
                format!("the record has no WARC field {key_field:?} for its key"),
            )));
        };
        let mut meta = serde_json::Map::new();
        for f in ["WARC-Record-ID", "WARC-Date", "WARC-Target-URI"] {
            if let Some(v) = rec.field(f) {
                meta.insert(f.to_string(), serde_json::Value::String(v.to_string()));
            }
        }
        return Some(Ok(NewDoc {
            key: key.to_string(),
            text,
            meta: (!meta.is_empty()).then(|| serde_json::Value::Object(meta).to_string()),
            biblio: crate::Biblio::default(),
        }));
    }))
}

/// Reads one line (its `\n` included) into `buf`, holding at most `max` bytes of it: `None` at the
/// end of the input, `Some(true)` for a line read, `Some(false)` for a line over `max` bytes (the
/// rest of it is read and dropped, `buf` is cleared).
fn read_line_capped(r: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> std::io::Result<Option<bool>> {
    let n = r.by_ref().take(max as u64 + 1).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(None);
    }
    let complete = buf.last() == Some(&b'\n') || n <= max;
    if complete {
        return Ok(Some(true));
    }
    buf.clear();
    // Skip to the end of the line, a buffer at a time.
    loop {
        let chunk = r.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => {
                r.consume(i + 1);
                break;
            }
            None => {
                let len = chunk.len();
                r.consume(len);
            }
        }
    }
    Ok(Some(false))
}

/// The documents of an input, each one or why it was rejected.
pub type Items = Box<dyn Iterator<Item = Result<NewDoc, Error>> + Send>;

/// The JSONL documents of an input named on the command line: a file (plain or gzip), or `-` for
/// standard input (named `stdin` in messages). See [`jsonl`].
pub fn jsonl_named(input: &str, key_field: String, text_field: String, origins: Option<Origins>) -> Result<Items, Error> {
    if input == "-" {
        return jsonl(std::io::stdin(), "stdin".into(), key_field, text_field, origins);
    }
    let f = File::open(input).map_err(|e| Error::Io {
        op: "open input",
        path: PathBuf::from(input),
        source: e,
    })?;
    jsonl(f, input.to_string(), key_field, text_field, origins)
}

/// The documents of `input`, as `fpdb ingest` reads them: a directory's text files
/// ([`directory`], hidden ones only when `hidden`), else a JSONL, WARC or WET file (`-`: standard
/// input; gzip and zstd decompressed, [`jsonl_named`]). Each item's origin goes to `origins`.
pub fn open(input: &str, key_field: &str, text_field: &str, hidden: bool, origins: &Origins) -> Result<Items, Error> {
    if input != "-" {
        let p = PathBuf::from(input);
        let meta = std::fs::metadata(&p).map_err(|e| Error::Io {
            op: "open input",
            path: p.clone(),
            source: e,
        })?;
        if meta.is_dir() {
            return Ok(Box::new(directory(&p, origins.clone(), hidden)?));
        }
    }
    jsonl_named(input, key_field.to_string(), text_field.to_string(), Some(origins.clone()))
}

/// Every regular file under `dir` (sorted, recursively), as documents keyed by relative path.
/// Hidden files and directories (a name starting with `.`: `.git`, `.DS_Store`, ...) are skipped
/// unless `hidden`, as ripgrep and fd do; `.gitignore` files are not read, and symbolic links are
/// not followed.
pub fn directory(dir: &Path, origins: Origins, hidden: bool) -> Result<impl Iterator<Item = Result<NewDoc, Error>> + Send, Error> {
    let mut files = Vec::new();
    let walk = ignore::WalkBuilder::new(dir)
        .standard_filters(false)
        .hidden(!hidden)
        .follow_links(false)
        .sort_by_file_name(std::cmp::Ord::cmp)
        .build();
    for entry in walk {
        let entry = entry.map_err(|e| {
            let path = match &e {
                ignore::Error::WithPath { path, .. } => path.clone(),
                _ => dir.to_path_buf(),
            };
            let source = match e.into_io_error() {
                Some(io) => io,
                None => std::io::Error::other("cannot walk the directory"),
            };
            Error::Io {
                op: "list input directory",
                path,
                source,
            }
        })?;
        if entry.file_type().is_some_and(|t| t.is_file()) {
            files.push(entry.into_path());
        }
    }
    files.sort();
    let root = dir.to_path_buf();
    Ok(files.into_iter().map(move |p| {
        let key = relative_key(&root, &p);
        lock(&origins).push(Origin::File(p.clone()));
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
                biblio: crate::Biblio::default(),
            })
    }))
}

fn relative_key(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).to_string_lossy().replace('\\', "/")
}

/// Reads a whole text file (plain or gzip, `sniff.rs`), rejecting invalid UTF-8 with the byte
/// offset.
pub fn read_text_file(p: &PathBuf) -> Result<String, Error> {
    let f = File::open(p).map_err(|e| Error::Io {
        op: "read input file",
        path: p.clone(),
        source: e,
    })?;
    read_text(f, &p.display().to_string())
}

/// Reads a whole text stream named `origin` (a file, standard input), as [`read_text_file`].
pub fn read_text(r: impl Read + Send + 'static, origin: &str) -> Result<String, Error> {
    let mut bytes = Vec::new();
    self::sniff::text_stream(r, origin)?
        .read_to_end(&mut bytes)
        .map_err(|e| Error::Io {
            op: "read input",
            path: PathBuf::from(origin),
            source: e,
        })?;
    utf8(bytes, origin)
}

/// Bytes to text, rejecting invalid UTF-8 with its offset.
pub fn utf8(bytes: Vec<u8>, origin: &str) -> Result<String, Error> {
    String::from_utf8(bytes).map_err(|e| bad(origin, None, invalid_utf8(e.utf8_error().valid_up_to())))
}

#[cfg(test)]
mod tests;
