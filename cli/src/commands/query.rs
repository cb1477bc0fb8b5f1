//! `fpdb query`: near-duplicates of a text, a file or a SimHash.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use fpdb::output::QueryLine;
use fpdb::{Error, Hit, NewDoc, QueryOptions};

use crate::cli::QueryArgs;
use crate::print::{json_line, print_contain_hits, print_hits, rejection_line};
use fpdb::input;

/// What to look up.
pub enum Lookup {
    Text(String),
    File(Option<PathBuf>),
    SimHash(u64),
    /// Every document of a JSONL input (`-`: standard input), its key and text fields.
    Jsonl {
        input: String,
        key_field: String,
        text_field: String,
    },
}

pub struct Config {
    pub db: PathBuf,
    pub lookup: Lookup,
    pub opts: QueryOptions,
}

impl Config {
    pub fn from_args(a: QueryArgs) -> Result<Config, Error> {
        if a.jsonl.is_none() {
            if let Some((name, _)) = [("key-field", &a.key_field), ("text-field", &a.text_field)]
                .into_iter()
                .find(|(_, v)| v.is_some())
            {
                return Err(Error::InvalidOption {
                    name,
                    message: "names a field of the --jsonl input; without --jsonl there is none".into(),
                });
            }
        }
        let lookup = match (a.simhash, a.text, a.jsonl) {
            (Some(s), _, _) => Lookup::SimHash(parse_u64(&s).ok_or_else(|| Error::InvalidOption {
                name: "simhash",
                message: format!("expected an unsigned 64-bit integer (decimal or 0x hex), got {s:?}"),
            })?),
            (None, Some(t), _) => Lookup::Text(t),
            (None, None, Some(input)) => Lookup::Jsonl {
                input,
                key_field: a.key_field.unwrap_or_else(|| "key".into()),
                text_field: a.text_field.unwrap_or_else(|| "text".into()),
            },
            (None, None, None) => Lookup::File(a.file),
        };
        Ok(Config {
            db: a.db,
            lookup,
            opts: {
                let mut o = QueryOptions::default();
                o.max_distance = a.max_distance;
                o.min_jaccard = a.min_jaccard;
                o.limit = a.limit;
                o.min_containment = a.min_containment;
                o.min_shared = a.min_shared;
                o.semantic.min_cosine = a.min_cosine;
                o.semantic.wait = a.wait_semantic.then(|| std::time::Duration::from_secs(a.wait_semantic_secs));
                o
            },
        })
    }
}

fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    // Waiting for the semantic channel runs its indexer here: a writer's handle.
    let d = match cfg.opts.semantic.wait {
        Some(_) => super::open(&cfg.db, true)?,
        None => super::open_ro(&cfg.db)?,
    };
    let answer = match cfg.lookup {
        Lookup::SimHash(v) => d.query_simhash(v, &cfg.opts).map(plain_answer)?,
        Lookup::Text(t) => d.query_answer(&t, &cfg.opts)?,
        Lookup::File(f) => d.query_answer(&super::read_input(f.as_ref())?, &cfg.opts)?,
        Lookup::Jsonl {
            input,
            key_field,
            text_field,
        } => return run_jsonl(&d, &input, (key_field, text_field), &cfg.opts, json, out),
    };
    if answer.semantic_pending > 0 {
        crate::print::note!(
            "fpdb: the semantic channel has not embedded {} acknowledged documents yet (they cannot match by cosine; --wait-semantic waits)",
            answer.semantic_pending
        );
    }
    let hits = answer.hits;
    if json {
        for h in &hits {
            json_line(out, h)?;
        }
    } else {
        print_result(out, &hits, &cfg.opts)?;
    }
    Ok(if hits.is_empty() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The answer of a lookup that has only hits (a SimHash: no text to embed).
fn plain_answer(hits: Vec<Hit>) -> fpdb::QueryAnswer {
    let mut a = fpdb::QueryAnswer::default();
    a.hits = hits;
    a
}

/// The readable result of one lookup.
fn print_result(out: &mut impl Write, hits: &[Hit], opts: &QueryOptions) -> std::io::Result<()> {
    if opts.min_containment.is_some() {
        if hits.is_empty() {
            writeln!(out, "no document contains the text or is contained in it")
        } else {
            print_contain_hits(out, hits)
        }
    } else if hits.is_empty() {
        writeln!(out, "no near-duplicates")
    } else {
        print_hits(out, hits)
    }
}

/// Documents looked up together ([`fpdb::Db::query_many`], on every core); a chunk's results are
/// printed in input order before the next chunk is read.
const CHUNK: usize = 1024;

/// A chunk also ends once its texts hold this many bytes: the texts of a chunk are allocated and
/// freed together, and 1,024 long documents (28 MB) were fresh pages for every chunk (page faults
/// and zeroing were up to a fifth of `query --jsonl`'s CPU on 28 KB documents).
const CHUNK_BYTES: usize = 4 << 20;

/// The next chunk of input items: [`CHUNK`] of them, or fewer whose texts hold [`CHUNK_BYTES`].
fn next_chunk(items: &mut input::Items) -> Vec<Result<NewDoc, Error>> {
    let mut chunk = Vec::new();
    let mut bytes = 0;
    while chunk.len() < CHUNK && bytes < CHUNK_BYTES {
        let Some(item) = items.next() else { break };
        bytes += item.as_ref().map_or(0, |d| d.text.len());
        chunk.push(item);
    }
    chunk
}

/// `--jsonl`: every document of the input looked up ([`fpdb::Db::query_many`], a chunk at a time),
/// the results printed in input order; rejected lines reported like `ingest` does.
fn run_jsonl(
    d: &fpdb::Db,
    input: &str,
    fields: (String, String),
    opts: &QueryOptions,
    json: bool,
    out: &mut impl Write,
) -> Result<ExitCode> {
    let origins = input::Origins::default();
    let mut items = input::jsonl_named(input, fields.0, fields.1, Some(origins.clone()))?;
    let (mut seq, mut found, mut rejected) = (0u64, 0u64, 0u64);
    loop {
        let chunk = next_chunk(&mut items);
        if chunk.is_empty() {
            break;
        }
        let texts: Vec<&str> = chunk.iter().filter_map(|d| d.as_ref().ok().map(|d| d.text.as_str())).collect();
        // One result per document of the chunk, in order; a line that is not a document has none.
        let mut found_hits = d.query_many(&texts, opts).into_iter();
        for doc in chunk {
            let origin = input::lock(&origins).take(seq).unwrap_or_else(|| format!("item {}", seq + 1));
            let result = doc.and_then(|doc| match found_hits.next() {
                Some(r) => r.map(|hits| (doc, hits)),
                None => unreachable!("query_many gives one result per text"),
            });
            match result {
                Ok((doc, hits)) => {
                    found += u64::from(!hits.is_empty());
                    if json {
                        json_line(
                            out,
                            &QueryLine {
                                seq,
                                key: &doc.key,
                                hits: &hits,
                            },
                        )?;
                    } else {
                        writeln!(out, "{:?}:", doc.key)?;
                        print_result(out, &hits, opts)?;
                    }
                }
                // A line that is not a document, or a document that cannot be looked up (no
                // words): that line's problem, reported with its origin; the rest goes on.
                Err(e @ Error::InvalidInput { .. }) => {
                    rejected += 1;
                    eprintln!("fpdb: rejected {}", input::rejection(&origin, &e));
                    if json {
                        rejection_line(out, seq, &origin, &e)?;
                    }
                }
                Err(e) => return Err(e.into()),
            }
            seq += 1;
        }
        out.flush()?;
    }
    if json {
        let summary = serde_json::json!({"summary": {"documents": seq, "with_hits": found, "rejected": rejected}});
        crate::print::note!("{summary}");
    } else {
        crate::print::note!("fpdb: looked up {seq} documents: {found} with hits, {rejected} rejected");
    }
    Ok(if rejected > 0 {
        ExitCode::from(6)
    } else if found == 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
