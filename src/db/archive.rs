//! Export and import ([`Db::export`], [`Db::import`]): everything a database holds that is not
//! derived, as JSON lines, and a database rebuilt from them. export → import → export is
//! identical byte for byte.
//!
//! **The format** (version 1; docs/format.md, "Export"). One JSON object per line, each with a
//! `"kind"`; fields in the order below; strings escaped by serde_json; no spaces:
//!
//! 1. `{"kind":"fpdb-export","version":1,"spec":HEX,"idf":HEX|null,"config":HEX,"store_text":BOOL,"spec_text":STR}`:
//!    the settings, as the database's own `meta` records (`spec`: `FingerprintSpec::encode`,
//!    `idf`: a weighted-simhash spec's frozen IDF table, `IdfTable::encode`, `config`:
//!    `doc_record::encode_config`), lower-case hex; `spec_text` is the spec's short form, for the
//!    reader (not read back);
//! 2. one line per live document, in id order (the order they were inserted):
//!    `{"kind":"doc","key":STR,"meta":STR|null,"title":STR|null,"year":INT|null,"doi":STR|null,"text":STR}`,
//!    the text when the database stores texts; without them, in its place the document's
//!    fingerprint, `"simhash":U64,"shingles":[U32,...]` (simhash and weighted-simhash databases
//!    only: the other methods' sketches need the text).
//!
//! 3. one line per curator decision, in key-pair order, after the documents:
//!    `{"kind":"decision","a":STR,"b":STR,"decision":"same"|"distinct","at_ms":U64,"author":STR|null,"reason":STR|null}`
//!    (restored with their own times, so the second export equals the first).
//!
//! An import refuses a kind it does not know, naming it. Not carried: ids, groups, edges and every index
//! (derived: the import recomputes them by inserting the documents in order, so ids and groups
//! come out the same), insertion times, the semantic channel (enable it again on the import).

use std::io::{BufRead, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fingerprint::biblio::Biblio;
use crate::fingerprint::method::{IdfHandle, Method};
use crate::fingerprint::spec::FingerprintSpec;
use crate::fingerprint::weighted::IdfTable;
use crate::fingerprint::Fingerprint;
use crate::pipeline::IngestOptions;
use crate::store::doc_record;

use super::handle::Db;
use super::options::{CreateOptions, Dedup, Options, Tables};
use super::side::decisions::Decision;
use super::types::{NewDoc, PreparedDoc};

const VERSION: u32 = 1;
const KIND_HEADER: &str = "fpdb-export";
const KIND_DOC: &str = "doc";
const KIND_DECISION: &str = "decision";

#[derive(Serialize, Deserialize)]
struct Header {
    kind: String,
    version: u32,
    spec: String,
    idf: Option<String>,
    config: String,
    store_text: bool,
    spec_text: String,
}

#[derive(Serialize, Deserialize)]
struct DocLine {
    kind: String,
    key: String,
    meta: Option<String>,
    title: Option<String>,
    year: Option<i32>,
    doi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    simhash: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    shingles: Option<Vec<u32>>,
}

#[derive(Serialize, Deserialize)]
struct DecisionLine {
    kind: String,
    #[serde(flatten)]
    decision: Decision,
}

/// Only `kind`, to dispatch a line.
#[derive(Deserialize)]
struct Kind {
    kind: String,
}

/// What [`Db::export`] or [`Db::import`] carried.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct ArchiveReport {
    /// Documents.
    pub docs: u64,
    /// Of them, with their texts.
    pub texts: u64,
    /// Curator decisions.
    pub decisions: u64,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str, what: &str, path: &Path) -> Result<Vec<u8>> {
    let bad = || Error::corrupt(path, None, format!("the export's {what} is not hex"));
    if !s.len().is_multiple_of(2) {
        return Err(bad());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()).ok_or_else(bad))
        .collect()
}

fn write_line(out: &mut impl Write, v: &impl Serialize) -> Result<()> {
    let io = |e| Error::io("write export", "<export>", e);
    serde_json::to_writer(&mut *out, v).map_err(|e| io(std::io::Error::other(e)))?;
    out.write_all(b"\n").map_err(io)
}

/// A document's export line with its text (`simhash` and `shingles` unset).
fn export_line(doc: NewDoc) -> DocLine {
    DocLine {
        kind: KIND_DOC.into(),
        key: doc.key,
        meta: doc.meta,
        title: doc.biblio.title,
        year: doc.biblio.year,
        doi: doc.biblio.doi,
        text: Some(doc.text),
        simhash: None,
        shingles: None,
    }
}

impl Db {
    /// Writes the export of this database (module docs of `db::archive`; docs/format.md) to `out`,
    /// as of one RocksDB snapshot for the documents with texts.
    pub fn export(&self, out: &mut impl Write) -> Result<ArchiveReport> {
        let store_text = self.texts().enabled();
        self.export_header(out, store_text)?;
        let mut rep = ArchiveReport::default();
        if store_text {
            self.texts().for_each(|_, doc| {
                rep.docs += 1;
                rep.texts += 1;
                write_line(out, &export_line(doc))
            })?;
        } else {
            self.export_fingerprints(out, &mut rep)?;
        }
        for decision in self.decisions().list() {
            rep.decisions += 1;
            write_line(
                out,
                &DecisionLine {
                    kind: KIND_DECISION.into(),
                    decision,
                },
            )?;
        }
        Ok(rep)
    }

    /// Writes the export's header line: the settings as stored (hex) and the spec's short form.
    fn export_header(&self, out: &mut impl Write, store_text: bool) -> Result<()> {
        let spec = &self.inner.spec;
        write_line(
            out,
            &Header {
                kind: KIND_HEADER.into(),
                version: VERSION,
                spec: hex(&spec.encode()?),
                idf: spec.method.idf().map(|t| hex(&t.encode())),
                config: hex(&doc_record::encode_config(&self.inner.config)?),
                store_text,
                spec_text: spec.to_string(),
            },
        )
    }

    /// Writes a document line with its fingerprint (simhash and shingles) in place of the text, for
    /// each live document of a database without stored texts; refuses the methods whose sketches
    /// need the texts.
    fn export_fingerprints(&self, out: &mut impl Write, rep: &mut ArchiveReport) -> Result<()> {
        let spec = &self.inner.spec;
        if !matches!(spec.method, Method::SimHash | Method::WeightedSimHash(_)) {
            return Err(Error::InvalidOption {
                name: "export",
                message: format!(
                    "a {} database without stored texts cannot be exported: its sketches need the texts (create it with --store-text)",
                    spec.method
                ),
            });
        }
        self.for_each_doc(|id, r| {
            let shingles = self
                .shingles(id)?
                .ok_or_else(|| Error::corrupt(&self.inner.path, Some(id), "a doc record without a live shingle set"))?;
            let mut l = export_line(NewDoc {
                key: r.key.clone(),
                text: String::new(),
                meta: r.meta.clone(),
                biblio: r.biblio.clone(),
            });
            l.text = None;
            l.simhash = Some(r.simhash);
            l.shingles = Some(shingles);
            rep.docs += 1;
            write_line(out, &l)
        })
    }

    /// Creates a database at `path` from an export read from `input` (`name` names it in errors):
    /// the settings of its header, then its documents inserted in order (so ids, pairs and groups
    /// equal the exported database's, and exporting the new one gives the same bytes).
    pub fn import(path: impl AsRef<Path>, input: impl BufRead + Send, name: &Path) -> Result<(Db, ArchiveReport)> {
        let mut lines = input.lines();
        let h = read_header(&mut lines, name)?;
        let db = create_from_header(path.as_ref(), &h, name)?;
        let mut rep = ArchiveReport::default();
        let mut failed: Option<Error> = None;
        let mut n = 1usize;
        // The first decision line ends the documents.
        let mut first_decision: Option<String> = None;
        let docs = lines.by_ref().map_while(|l| {
            n += 1;
            match l.map_err(|e| Error::io("read export", name, e)).and_then(|l| doc_line(l, n, name)) {
                Ok(Line::Doc(d)) => Some(*d),
                Ok(Line::Decision(l)) => {
                    first_decision = Some(l);
                    None
                }
                Err(e) => {
                    failed.get_or_insert(e);
                    None
                }
            }
        });
        if h.store_text {
            let stored = ingest_texts(&db, docs)?;
            rep.docs = stored;
            rep.texts = stored;
        } else {
            rep.docs = commit_fingerprints(&db, docs)?;
        }
        if let Some(e) = failed {
            return Err(e);
        }
        let decisions = read_decisions(first_decision.into_iter().map(Ok).chain(lines), n, name)?;
        if !decisions.is_empty() {
            db.decisions().restore(&decisions)?;
            rep.decisions = decisions.len() as u64;
        }
        db.flush()?;
        Ok((db, rep))
    }
}

/// The error of line `line` of the export `name`.
fn bad(name: &Path, line: usize, what: String) -> Error {
    Error::input(None, format!("{} line {line}: {what}", name.display()))
}

/// Reads the export's first line, its settings, and refuses a kind or version this build does not read.
fn read_header(lines: &mut impl Iterator<Item = std::io::Result<String>>, name: &Path) -> Result<Header> {
    let first = lines
        .next()
        .ok_or_else(|| bad(name, 1, "empty; an export starts with its settings line".into()))?
        .map_err(|e| Error::io("read export", name, e))?;
    let h: Header = serde_json::from_str(&first).map_err(|e| bad(name, 1, format!("not an fpdb export's settings line: {e}")))?;
    if h.kind != KIND_HEADER || h.version != VERSION {
        return Err(bad(
            name,
            1,
            format!(
                "kind {:?} version {} (this build reads {KIND_HEADER:?} version {VERSION})",
                h.kind, h.version
            ),
        ));
    }
    Ok(h)
}

/// Creates the empty database at `path` with the settings of the export's header.
fn create_from_header(path: &Path, h: &Header, name: &Path) -> Result<Db> {
    let mut spec = FingerprintSpec::decode(&unhex(&h.spec, "spec", name)?, name)?;
    if let (Method::WeightedSimHash(p), Some(idf)) = (&mut spec.method, &h.idf) {
        p.idf = IdfHandle(Some(std::sync::Arc::new(IdfTable::decode(&unhex(idf, "idf", name)?, name)?)));
    }
    let config = doc_record::decode_config(&unhex(&h.config, "config", name)?, name)?;
    let create = CreateOptions::default()
        .with_spec(spec)
        .with_tables(Tables::Blocks(config.tables))
        .with_max_distance(config.max_distance)
        .with_min_jaccard(config.min_jaccard)
        .with_containment(config.containment)
        .with_store_text(h.store_text);
    Db::create_with(path, &create, Options::default())
}

/// A line of the export's document part: a document, or the first decision line, which ends it.
enum Line {
    Doc(Box<DocLine>),
    Decision(String),
}

/// Parses line `n` of the document part; a kind other than a document or a decision is an error.
fn doc_line(l: String, n: usize, name: &Path) -> Result<Line> {
    let k: Kind = serde_json::from_str(&l).map_err(|e| bad(name, n, format!("not JSON: {e}")))?;
    if k.kind == KIND_DECISION {
        return Ok(Line::Decision(l));
    }
    if k.kind != KIND_DOC {
        return Err(bad(
            name,
            n,
            format!("a record of kind {:?}, which this build does not read", k.kind),
        ));
    }
    serde_json::from_str::<DocLine>(&l)
        .map(|d| Line::Doc(Box::new(d)))
        .map_err(|e| bad(name, n, format!("not a document line: {e}")))
}

/// Ingests documents with their texts in order; the first document's error is the import's.
fn ingest_texts(db: &Db, docs: impl Iterator<Item = DocLine> + Send) -> Result<u64> {
    let texts = docs.map(|d| {
        Ok(NewDoc {
            key: d.key,
            text: d.text.unwrap_or_default(),
            meta: d.meta,
            biblio: Biblio {
                title: d.title,
                year: d.year,
                doi: d.doi,
            },
        })
    });
    let mut doc_err: Option<Error> = None;
    let s = db.ingest(texts, &IngestOptions::default(), |r| {
        if let Err(e) = r.result {
            doc_err.get_or_insert(e);
        }
    })?;
    if let Some(e) = doc_err {
        return Err(e);
    }
    Ok(s.stored)
}

/// Commits documents given by their fingerprints, in order, 1024 at a time; returns how many.
fn commit_fingerprints(db: &Db, docs: impl Iterator<Item = DocLine>) -> Result<u64> {
    let mut stored = 0;
    let mut prepared: Vec<Result<PreparedDoc>> = Vec::new();
    for d in docs {
        let fp = Fingerprint {
            simhash: d.simhash.unwrap_or(0),
            shingles: d.shingles.unwrap_or_default(),
            ..Fingerprint::default()
        };
        let b = Biblio {
            title: d.title,
            year: d.year,
            doi: d.doi,
        };
        prepared.push(PreparedDoc::new(d.key, fp, d.meta).and_then(|p| p.with_biblio(b)));
        if prepared.len() == 1024 {
            stored += commit_all(db, std::mem::take(&mut prepared))?;
        }
    }
    Ok(stored + commit_all(db, prepared)?)
}

/// Reads the decision lines that end the export, the first of them line `n`; any other kind there is an error.
fn read_decisions(rest: impl Iterator<Item = std::io::Result<String>>, n: usize, name: &Path) -> Result<Vec<Decision>> {
    let mut decisions = Vec::new();
    for (i, l) in rest.enumerate() {
        let at = n + i;
        let l = l.map_err(|e| Error::io("read export", name, e))?;
        let k: Kind = serde_json::from_str(&l).map_err(|e| bad(name, at, format!("not JSON: {e}")))?;
        if k.kind != KIND_DECISION {
            return Err(bad(
                name,
                at,
                format!("a record of kind {:?} after the decisions (only decisions may follow them)", k.kind),
            ));
        }
        let d: DecisionLine = serde_json::from_str(&l).map_err(|e| bad(name, at, format!("not a decision line: {e}")))?;
        decisions.push(d.decision);
    }
    Ok(decisions)
}

/// Commits fingerprinted documents in order; the first document's error is the import's.
fn commit_all(db: &Db, docs: Vec<Result<PreparedDoc>>) -> Result<u64> {
    let n = docs.len() as u64;
    for r in db.commit_batch(docs, Dedup::Link)? {
        r?;
    }
    Ok(n)
}
