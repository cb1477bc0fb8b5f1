//! `fpdb`: the command-line front end. Parses arguments with clap, converts them into the library's
//! plain option structs, and maps errors to exit codes (see `fpdb --help`).

mod input;
#[cfg(feature = "serve")]
mod serve;

use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use fpdb::ingest::IngestOptions;
use fpdb::pairs::{PairsOptions, PairsReport};
use fpdb::{CreateOptions, Db, Dedup, Error, FingerprintSpec, Hit, InsertOutcome, NewDoc, Options, QueryOptions, Tables};
use serde_json::json;

const EXIT_CODES: &str = "\
EXIT CODES:
  0  success
  1  nothing found where something was asked for: `query` with no hit, `get`/`delete` of a missing key,
     `pairs` with no pair
  2  usage error: bad arguments or options, no database at the path, spec mismatch
  3  I/O or RocksDB error (disk full, permissions, ...) or a poisoned handle
  4  corruption: `check` found faults, or a read hit a damaged record
  5  the database is locked by another process
  6  `ingest` finished, but some input items were rejected (each one is reported on stderr)";

/// fpdb — an embedded, persistent near-duplicate fingerprint database.
///
/// Each document becomes word-trigram shingles and a 64-bit SimHash; SimHashes live in permuted
/// tables (RocksDB), shingle sets in memory-mapped segments, and every candidate within Hamming
/// distance k is verified by exact Jaccard similarity. Every command takes the database directory
/// first.
#[derive(Parser, Debug)]
#[command(name = "fpdb", version, after_help = EXIT_CODES, propagate_version = true)]
struct Cli {
    /// Print JSON lines instead of readable tables.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Create a database with a fingerprint spec and defaults.
    Init {
        /// Database directory (must not hold a database yet).
        db: PathBuf,
        /// Default maximum Hamming distance k for queries and dedup.
        #[arg(long, short = 'k', default_value_t = 12)]
        max_distance: u32,
        /// Table layout: a number of blocks m, `k+1` (classic exact-block layout) or `auto`
        /// (measured choice, see docs/performance.md).
        #[arg(long, default_value = "auto")]
        tables: String,
        /// Shingles: `word:N` (default word:3) or `char:N`.
        #[arg(long, default_value = "word:3")]
        shingle: String,
        /// Default minimum Jaccard similarity t of a verified duplicate.
        #[arg(long, default_value_t = 0.9)]
        min_jaccard: f64,
        /// SimHash weights: `binary` (each distinct shingle once; default) or `count` (occurrences).
        #[arg(long, value_enum, default_value_t = WeightArg::Binary)]
        weights: WeightArg,
    },
    /// Insert (or replace) one document; prints it and its verified near-duplicates.
    Insert {
        /// Database directory.
        db: PathBuf,
        /// The document's key (replaces an existing document with the same key).
        #[arg(long)]
        key: String,
        /// Text file to insert; standard input when absent.
        file: Option<PathBuf>,
        /// What to do when near-duplicates exist.
        #[arg(long, value_enum, default_value_t = DedupArg::Link)]
        dedup: DedupArg,
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Find near-duplicates of a text, a file or a SimHash. Exit code 1 when nothing is found.
    Query {
        /// Database directory.
        db: PathBuf,
        /// Text file to look up (standard input when no FILE, --text or --simhash is given).
        file: Option<PathBuf>,
        /// Text to look up.
        #[arg(long, conflicts_with_all = ["file", "simhash"])]
        text: Option<String>,
        /// A SimHash (unsigned decimal, or hex with 0x) to look up; no Jaccard is computed.
        #[arg(long, conflicts_with = "file")]
        simhash: Option<String>,
        /// Maximum Hamming distance (default: the database's).
        #[arg(long, short = 'k')]
        k: Option<u32>,
        /// Minimum Jaccard (default: the database's; 0 keeps every candidate within k).
        #[arg(long)]
        min_jaccard: Option<f64>,
        /// At most this many hits, best first.
        #[arg(long)]
        limit: Option<usize>,
    },
    /// Ingest many documents through the parallel pipeline (JSONL file, directory, or - for stdin).
    ///
    /// JSONL lines are {"key": ..., "text": ...}; other fields are kept as metadata. A directory
    /// gives one document per file, keyed by relative path. With --json, one line per document is
    /// printed after its batch is durably committed.
    Ingest {
        /// Database directory.
        db: PathBuf,
        /// JSONL file, directory of text files, or `-` for JSONL on standard input.
        input: String,
        /// skip: do not store near-duplicates; link: store and join their group; off: store without checking.
        #[arg(long, value_enum, default_value_t = DedupArg::Link)]
        dedup: DedupArg,
        /// Documents per group commit (at most; a partial batch commits after --batch-latency-ms).
        /// Larger batches mean fewer fsyncs: see docs/performance.md.
        #[arg(long, default_value_t = 4096)]
        batch_size: usize,
        /// Commit a partial batch after this many milliseconds.
        #[arg(long, default_value_t = 50)]
        batch_latency_ms: u64,
        /// Fingerprinting threads (default: one per core).
        #[arg(long, default_value_t = 0)]
        workers: usize,
        /// JSON field holding the key.
        #[arg(long, default_value = "key")]
        key_field: String,
        /// JSON field holding the text.
        #[arg(long, default_value = "text")]
        text_field: String,
        /// Do not show a progress bar even on a terminal.
        #[arg(long)]
        quiet: bool,
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Show a stored document and its group. Exit code 1 when the key is absent.
    Get {
        /// Database directory.
        db: PathBuf,
        /// The key.
        key: String,
    },
    /// Delete a document (its group splits if it was a bridge). Exit code 1 when the key is absent.
    Delete {
        /// Database directory.
        db: PathBuf,
        /// The key.
        key: String,
    },
    /// Export every document as JSON lines {"key","id","simhash","shingles","group"}.
    Export {
        /// Database directory.
        db: PathBuf,
        /// Also print each shingle set ("shingle_set": [...]).
        #[arg(long)]
        shingle_sets: bool,
    },
    /// Counters: documents, groups, segments, bytes, spec.
    Stats {
        /// Database directory.
        db: PathBuf,
    },
    /// Rewrite segments with dead bytes and reclaim the space.
    Compact {
        /// Database directory.
        db: PathBuf,
        /// Rewrite a segment when at least this share of its bytes is dead.
        #[arg(long, default_value_t = 0.3)]
        min_dead: f64,
    },
    /// Verify every record, pointer, checksum and index entry. Exit code 4 on any fault.
    Check {
        /// Database directory.
        db: PathBuf,
    },
    /// Every pair of documents within k (and Jaccard >= t when given), each once; distribution tables
    /// on stderr (or as a final JSON line with --summary).
    Pairs {
        /// Database directory.
        db: PathBuf,
        /// Maximum Hamming distance (default: the database's).
        #[arg(long, short = 'k')]
        k: Option<u32>,
        /// Verify pairs by exact Jaccard and keep those >= T.
        #[arg(long)]
        min_jaccard: Option<f64>,
        /// Print duplicate groups (connected components, canonical = earliest member) instead of pairs.
        #[arg(long)]
        groups: bool,
        /// Print only the summary tables, not the pairs.
        #[arg(long)]
        summary: bool,
        /// Threads (default: one per core).
        #[arg(long, default_value_t = 0)]
        threads: usize,
    },
    /// Measure query latency in-process: run every text of a JSONL file as a query and report
    /// p50/p99/mean (µs) as one line (JSON with --json). For benchmarks.
    BenchQuery {
        /// Database directory.
        db: PathBuf,
        /// JSONL file of queries, in the ingest format ({"key": ..., "text": ...}).
        #[arg(long)]
        queries: PathBuf,
        /// Maximum Hamming distance (default: the database's).
        #[arg(long, short = 'k')]
        k: Option<u32>,
        /// Minimum Jaccard (default: the database's).
        #[arg(long)]
        min_jaccard: Option<f64>,
    },
    /// Serve the database over HTTP (JSON API; docs/serve.md): one process owns the database and
    /// serves many clients. Stops gracefully on SIGINT/SIGTERM. Prints the bound address on stdout.
    #[cfg(feature = "serve")]
    Serve {
        /// Database directory (created with default settings when it holds no database).
        db: PathBuf,
        /// Address to listen on (port 0: any free port). A non-loopback address needs --token-file.
        #[arg(long, default_value = "127.0.0.1:7878")]
        listen: std::net::SocketAddr,
        /// File holding the access token required on writes (`Authorization: Bearer <token>`).
        #[arg(long)]
        token_file: Option<PathBuf>,
        /// Require the token on reads too (everything but /healthz).
        #[arg(long)]
        token_for_reads: bool,
        /// Largest body of PUT and POST /v1/duplicates, bytes (larger: 413).
        #[arg(long, default_value_t = 8 << 20)]
        max_body_bytes: usize,
        /// Largest NDJSON body of POST /v1/documents, bytes (larger: 413).
        #[arg(long, default_value_t = 64 << 20)]
        max_bulk_bytes: usize,
        /// Documents waiting for the writer at most (more: 429 with Retry-After).
        #[arg(long, default_value_t = 1024)]
        queue_depth: usize,
        /// Documents per group commit, at most.
        #[arg(long, default_value_t = 1024)]
        batch_size: usize,
        /// Concurrent POST /v1/documents requests at most (more: 429).
        #[arg(long, default_value_t = 2)]
        bulk_slots: usize,
        /// Fingerprinting threads per bulk request (default: one per core).
        #[arg(long, default_value_t = 0)]
        workers: usize,
        /// Print one line per request on stderr (method, route, status, latency; never text or keys).
        #[arg(long)]
        log_requests: bool,
        /// Seconds to wait for in-flight requests after SIGINT/SIGTERM.
        #[arg(long, default_value_t = 30)]
        shutdown_timeout_s: u64,
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Evaluate detection quality on a labelled JSONL corpus: exact-Jaccard truth, precision/recall/F1
    /// over a grid of k and t; writes a Markdown report and SVG plots.
    Eval {
        /// JSONL corpus with "key", "text" and optionally "label".
        corpus: PathBuf,
        /// Corpus name used in the report and file names.
        #[arg(long)]
        name: Option<String>,
        /// Output directory (the report is NAME.md, the numbers NAME.json).
        #[arg(long, default_value = "docs/quality")]
        out_dir: PathBuf,
        /// Directory of the SVG plots NAME-vs-k.svg and NAME-vs-t.svg (default: OUT_DIR/img).
        #[arg(long)]
        img_dir: Option<PathBuf>,
        /// Jaccard threshold that defines a true near-duplicate pair.
        #[arg(long, default_value_t = 0.9)]
        truth_t: f64,
        /// Shingles: `word:N` or `char:N`.
        #[arg(long, default_value = "word:3")]
        shingle: String,
        /// SimHash weights.
        #[arg(long, value_enum, default_value_t = WeightArg::Binary)]
        weights: WeightArg,
        /// Skip documents with fewer words than this.
        #[arg(long, default_value_t = 0)]
        min_words: usize,
        /// Use at most this many documents.
        #[arg(long)]
        limit: Option<usize>,
    },
}

#[derive(Args, Debug)]
struct WriteArgs {
    /// Do not fsync on commit: survives a process crash, not a power loss.
    #[arg(long)]
    no_sync: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum DedupArg {
    Link,
    Skip,
    Off,
}

impl From<DedupArg> for Dedup {
    fn from(d: DedupArg) -> Dedup {
        match d {
            DedupArg::Link => Dedup::Link,
            DedupArg::Skip => Dedup::Skip,
            DedupArg::Off => Dedup::Off,
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum WeightArg {
    Count,
    Binary,
}

fn spec_from(shingle: &str, weights: WeightArg) -> Result<FingerprintSpec, Error> {
    let mut spec: FingerprintSpec = shingle.parse()?;
    spec.weighting = match weights {
        WeightArg::Count => fpdb::spec::Weighting::Count,
        WeightArg::Binary => fpdb::spec::Weighting::Binary,
    };
    Ok(spec)
}

fn parse_tables(s: &str) -> Result<Tables, Error> {
    match s.trim() {
        "auto" => Ok(Tables::Auto),
        "k+1" | "k1" => Ok(Tables::KPlusOne),
        n => n.parse().map(Tables::Blocks).map_err(|_| Error::InvalidOption {
            name: "tables",
            message: format!("expected a number of tables, `k+1` or `auto`, got {s:?}"),
        }),
    }
}

fn exit_code_of(e: &anyhow::Error) -> u8 {
    for cause in e.chain() {
        if let Some(err) = cause.downcast_ref::<Error>() {
            return match err {
                Error::Io { .. } | Error::Rocks { .. } | Error::Poisoned { .. } => 3,
                Error::Corruption { .. } | Error::Version { .. } => 4,
                Error::Locked { .. } => 5,
                _ => 2,
            };
        }
        if cause.downcast_ref::<io::Error>().is_some() {
            return 3;
        }
    }
    3
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let mut msg = format!("fpdb: error: {e}");
            for cause in e.chain().skip(1) {
                msg.push_str(&format!("\n  caused by: {cause}"));
            }
            eprintln!("{msg}");
            ExitCode::from(exit_code_of(&e))
        }
    }
}

fn open(db: &Path, sync: bool) -> Result<Db> {
    let opts = Options {
        sync,
        ..Options::default()
    };
    Db::open_with(db, opts).with_context(|| format!("cannot open database {}", db.display()))
}

/// Commands that only read open read-only: they work beside a writing process and see the database
/// as of their start.
fn open_ro(db: &Path) -> Result<Db> {
    let opts = Options {
        read_only: true,
        ..Options::default()
    };
    Db::open_with(db, opts).with_context(|| format!("cannot open database {}", db.display()))
}

fn read_input(file: Option<&PathBuf>) -> Result<String> {
    match file {
        Some(p) => Ok(input::read_text_file(p)?),
        None => {
            let mut bytes = Vec::new();
            io::stdin().read_to_end(&mut bytes).context("reading standard input")?;
            Ok(input::utf8(bytes, "standard input")?)
        }
    }
}

fn hit_json(h: &Hit) -> serde_json::Value {
    json!({"key": h.key, "id": h.id, "hamming": h.hamming, "jaccard": h.jaccard, "shared": h.shared, "match": h.matched.as_str()})
}

fn outcome_json(o: &InsertOutcome) -> serde_json::Value {
    json!({
        "key": o.key,
        "id": o.id,
        "stored": o.id.is_some(),
        "replaced": o.replaced,
        "duplicates": o.duplicates.iter().map(hit_json).collect::<Vec<_>>(),
        "group": o.group.as_ref().map(|g| g.id),
        "canonical": o.group.as_ref().map(|g| g.canonical.clone()),
        "group_size": o.group.as_ref().map(|g| g.size),
    })
}

fn fmt_j(j: Option<f64>) -> String {
    j.map_or("-".into(), |j| format!("{j:.4}"))
}

fn print_hits(out: &mut impl Write, hits: &[Hit]) -> io::Result<()> {
    writeln!(out, "{:<40} {:>8} {:>8} {:>8}", "KEY", "HAMMING", "JACCARD", "SHARED")?;
    for h in hits {
        let shared = h.shared.map_or("-".into(), |s| s.to_string());
        writeln!(out, "{:<40} {:>8} {:>8} {:>8}", h.key, h.hamming, fmt_j(h.jaccard), shared)?;
    }
    Ok(())
}

fn print_outcome(out: &mut impl Write, o: &InsertOutcome) -> io::Result<()> {
    match (o.id, &o.group) {
        (Some(id), Some(g)) => {
            let replaced = o.replaced.map(|r| format!(", replaced doc {r}")).unwrap_or_default();
            writeln!(
                out,
                "stored {:?} as doc {id}{replaced}; group {} (canonical {:?}, {} member{})",
                o.key,
                g.id,
                g.canonical,
                g.size,
                if g.size == 1 { "" } else { "s" }
            )?;
        }
        _ => writeln!(out, "skipped {:?}: it duplicates {} stored document(s)", o.key, o.duplicates.len())?,
    }
    if o.duplicates.is_empty() {
        writeln!(out, "no near-duplicates")
    } else {
        print_hits(out, &o.duplicates)
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let json = cli.json;
    let code = match cli.cmd {
        Cmd::Init {
            db,
            max_distance,
            tables,
            shingle,
            min_jaccard,
            weights,
        } => {
            let create = CreateOptions {
                spec: spec_from(&shingle, weights)?,
                tables: parse_tables(&tables)?,
                max_distance,
                min_jaccard,
            };
            let d = Db::create(&db, &create).with_context(|| format!("cannot create database {}", db.display()))?;
            let s = d.stats();
            if json {
                writeln!(out, "{}", serde_json::to_string(&s)?)?;
            } else {
                writeln!(
                    out,
                    "created {} — spec {}; {} tables; k = {}, t = {}",
                    db.display(),
                    s.spec,
                    s.tables,
                    s.max_distance,
                    s.min_jaccard
                )?;
            }
            ExitCode::SUCCESS
        }
        Cmd::Insert {
            db,
            key,
            file,
            dedup,
            write,
        } => {
            let text = read_input(file.as_ref())?;
            let d = open(&db, !write.no_sync)?;
            let o = d.insert_with(&key, &text, dedup.into())?;
            if json {
                writeln!(out, "{}", outcome_json(&o))?;
            } else {
                print_outcome(&mut out, &o)?;
            }
            ExitCode::SUCCESS
        }
        Cmd::Query {
            db,
            file,
            text,
            simhash,
            k,
            min_jaccard,
            limit,
        } => {
            let d = open_ro(&db)?;
            let opts = QueryOptions {
                max_distance: k,
                min_jaccard,
                limit,
            };
            let hits = match (simhash, text) {
                (Some(s), _) => {
                    let v = parse_u64(&s).ok_or_else(|| Error::InvalidOption {
                        name: "simhash",
                        message: format!("expected an unsigned 64-bit integer (decimal or 0x hex), got {s:?}"),
                    })?;
                    d.query_simhash(v, &opts)?
                }
                (None, Some(t)) => d.query(&t, &opts)?,
                (None, None) => d.query(&read_input(file.as_ref())?, &opts)?,
            };
            if json {
                for h in &hits {
                    writeln!(out, "{}", hit_json(h))?;
                }
            } else if hits.is_empty() {
                writeln!(out, "no near-duplicates")?;
            } else {
                print_hits(&mut out, &hits)?;
            }
            if hits.is_empty() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Cmd::Ingest {
            db,
            input,
            dedup,
            batch_size,
            batch_latency_ms,
            workers,
            key_field,
            text_field,
            quiet,
            write,
        } => ingest(
            &mut out,
            json,
            &db,
            &input,
            dedup,
            batch_size,
            batch_latency_ms,
            workers,
            key_field,
            text_field,
            quiet,
            !write.no_sync,
        )?,
        Cmd::Get { db, key } => {
            let d = open_ro(&db)?;
            match d.get(&key)? {
                None => {
                    if !json {
                        writeln!(out, "no document with key {key:?}")?;
                    }
                    ExitCode::from(1)
                }
                Some(doc) => {
                    let members = d.group_members(doc.group.id);
                    if json {
                        let meta: serde_json::Value = doc
                            .record
                            .meta
                            .as_deref()
                            .and_then(|m| serde_json::from_str(m).ok())
                            .unwrap_or(serde_json::Value::Null);
                        writeln!(
                            out,
                            "{}",
                            json!({"key": doc.record.key, "id": doc.id, "simhash": doc.record.simhash, "shingles": doc.record.count,
                                   "group": doc.group.id, "canonical": doc.group.canonical, "group_members": members.iter().map(|m| &m.1).collect::<Vec<_>>(),
                                   "inserted_at_ms": doc.record.inserted_at_ms, "meta": meta,
                                   "title": doc.record.biblio.title, "year": doc.record.biblio.year, "doi": doc.record.biblio.doi})
                        )?;
                    } else {
                        writeln!(out, "key       {}", doc.record.key)?;
                        writeln!(out, "id        {}", doc.id)?;
                        writeln!(out, "simhash   {} ({:#018x})", doc.record.simhash, doc.record.simhash)?;
                        writeln!(out, "shingles  {}", doc.record.count)?;
                        writeln!(
                            out,
                            "group     {} (canonical {:?}, {} members)",
                            doc.group.id, doc.group.canonical, doc.group.size
                        )?;
                        for (id, k) in members {
                            writeln!(out, "  member  {id}  {k}")?;
                        }
                        if let Some(m) = &doc.record.meta {
                            writeln!(out, "meta      {m}")?;
                        }
                    }
                    ExitCode::SUCCESS
                }
            }
        }
        Cmd::Delete { db, key } => {
            let d = open(&db, true)?;
            let existed = d.delete(&key)?;
            if json {
                writeln!(out, "{}", json!({"key": key, "deleted": existed}))?;
            } else if existed {
                writeln!(out, "deleted {key:?}")?;
            } else {
                writeln!(out, "no document with key {key:?}")?;
            }
            if existed {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Cmd::Export { db, shingle_sets } => {
            let d = open_ro(&db)?;
            d.for_each_doc(|id, r| {
                let mut v = json!({"key": r.key, "id": id, "simhash": r.simhash, "shingles": r.count, "group": r.group});
                if shingle_sets {
                    v["shingle_set"] = json!(d.shingles(id)?.unwrap_or_default());
                }
                writeln!(out, "{v}").map_err(|e| Error::Io {
                    op: "write export",
                    path: PathBuf::from("<stdout>"),
                    source: e,
                })
            })?;
            ExitCode::SUCCESS
        }
        Cmd::Stats { db } => {
            let d = open_ro(&db)?;
            let s = d.stats();
            if json {
                writeln!(out, "{}", serde_json::to_string(&s)?)?;
            } else {
                writeln!(out, "documents      {}", s.docs)?;
                writeln!(out, "groups (>=2)   {} holding {} documents", s.groups, s.grouped_docs)?;
                writeln!(
                    out,
                    "segments       {} ({} bytes, {} live)",
                    s.segments, s.segment_bytes, s.live_bytes
                )?;
                writeln!(out, "tables         {}", s.tables)?;
                writeln!(out, "defaults       k = {}, t = {}", s.max_distance, s.min_jaccard)?;
                writeln!(out, "spec           {}", s.spec)?;
            }
            ExitCode::SUCCESS
        }
        Cmd::Compact { db, min_dead } => {
            let d = open(&db, true)?;
            let s = d.compact(min_dead)?;
            if json {
                writeln!(out, "{}", serde_json::to_string(&s)?)?;
            } else {
                writeln!(
                    out,
                    "rewrote {} segment(s), moved {} records, reclaimed {} bytes",
                    s.segments_rewritten, s.records_moved, s.bytes_reclaimed
                )?;
            }
            ExitCode::SUCCESS
        }
        Cmd::Check { db } => {
            let d = open_ro(&db)?;
            let rep = d.check()?;
            if json {
                for f in &rep.faults {
                    writeln!(out, "{}", serde_json::to_string(f)?)?;
                }
                writeln!(
                    out,
                    "{}",
                    json!({"docs": rep.docs, "table_entries": rep.table_entries, "faults": rep.faults.len()})
                )?;
            } else {
                for f in &rep.faults {
                    let doc = f.doc.map(|d| format!("doc {d}")).unwrap_or_default();
                    let key = f.key.as_ref().map(|k| format!(" key {k:?}")).unwrap_or_default();
                    writeln!(out, "FAULT {doc}{key} in {}: {}", f.path, f.what)?;
                }
                writeln!(
                    out,
                    "checked {} documents and {} table entries: {} fault(s)",
                    rep.docs,
                    rep.table_entries,
                    rep.faults.len()
                )?;
            }
            if rep.faults.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(4)
            }
        }
        Cmd::Pairs {
            db,
            k,
            min_jaccard,
            groups,
            summary,
            threads,
        } => {
            let d = open_ro(&db)?;
            let opts = PairsOptions {
                max_distance: k.unwrap_or(d.config().max_distance),
                min_jaccard,
                threads,
            };
            let rep = fpdb::pairs::pairs(&d, &opts)?;
            print_pairs(&mut out, json, &d, &rep, groups, summary)?;
            if rep.pairs.is_empty() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Cmd::BenchQuery {
            db,
            queries,
            k,
            min_jaccard,
        } => {
            let d = open_ro(&db)?;
            let opts = QueryOptions {
                max_distance: k,
                min_jaccard,
                limit: None,
            };
            let origins: input::Origins = Arc::new(Mutex::new(Vec::new()));
            let f = std::fs::File::open(&queries).map_err(|e| Error::Io {
                op: "open queries",
                path: queries.clone(),
                source: e,
            })?;
            let mut lat = Vec::new();
            let mut hits = 0usize;
            for item in input::jsonl(f, queries.display().to_string(), "key".into(), "text".into(), origins) {
                let Ok(doc) = item else { continue };
                let t = Instant::now();
                hits += d.query(&doc.text, &opts)?.len();
                lat.push(t.elapsed().as_secs_f64() * 1e6);
            }
            lat.sort_by(|a, b| a.total_cmp(b));
            let at = |p: f64| {
                lat.get(((lat.len().max(1) - 1) as f64 * p).round() as usize)
                    .copied()
                    .unwrap_or(0.0)
            };
            let mean = lat.iter().sum::<f64>() / lat.len().max(1) as f64;
            let k = k.unwrap_or(d.config().max_distance);
            if json {
                writeln!(
                    out,
                    "{}",
                    json!({"queries": lat.len(), "k": k, "hits": hits, "p50_us": at(0.5), "p99_us": at(0.99), "mean_us": mean})
                )?;
            } else {
                writeln!(
                    out,
                    "{} queries at k = {k}: p50 {:.1} µs, p99 {:.1} µs, mean {:.1} µs, {hits} hits",
                    lat.len(),
                    at(0.5),
                    at(0.99),
                    mean
                )?;
            }
            ExitCode::SUCCESS
        }
        #[cfg(feature = "serve")]
        Cmd::Serve {
            db,
            listen,
            token_file,
            token_for_reads,
            max_body_bytes,
            max_bulk_bytes,
            queue_depth,
            batch_size,
            bulk_slots,
            workers,
            log_requests,
            shutdown_timeout_s,
            write,
        } => serve::run(serve::ServeConfig {
            db,
            listen,
            token_file,
            token_for_reads,
            max_body_bytes,
            max_bulk_bytes,
            queue_depth,
            batch_size,
            bulk_slots,
            workers,
            sync: !write.no_sync,
            log_requests,
            shutdown_timeout: Duration::from_secs(shutdown_timeout_s),
        })?,
        Cmd::Eval {
            corpus,
            name,
            out_dir,
            img_dir,
            truth_t,
            shingle,
            weights,
            min_words,
            limit,
        } => {
            let spec = spec_from(&shingle, weights)?;
            let name = name.unwrap_or_else(|| corpus.file_stem().map_or("corpus".into(), |s| s.to_string_lossy().into_owned()));
            let img_dir = img_dir.unwrap_or_else(|| out_dir.join("img"));
            eval(&mut out, &corpus, &name, &out_dir, &img_dir, truth_t, spec, min_words, limit)?;
            ExitCode::SUCCESS
        }
    };
    out.flush()?;
    Ok(code)
}

fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn print_pairs(out: &mut impl Write, json: bool, d: &Db, rep: &PairsReport, groups: bool, summary: bool) -> Result<()> {
    let key = |id: u64| d.key_of(id).unwrap_or_default();
    if groups {
        for (canonical, members) in fpdb::pairs::groups(&rep.pairs) {
            let keys: Vec<String> = members.iter().map(|&m| key(m)).collect();
            if json {
                writeln!(
                    out,
                    "{}",
                    json!({"group": canonical, "canonical": key(canonical), "size": members.len(), "members": keys})
                )?;
            } else {
                writeln!(
                    out,
                    "group {canonical} ({} members, canonical {:?}): {}",
                    members.len(),
                    key(canonical),
                    keys.join(", ")
                )?;
            }
        }
    } else if !summary {
        for p in &rep.pairs {
            if json {
                writeln!(
                    out,
                    "{}",
                    json!({"a": key(p.a), "b": key(p.b), "a_id": p.a, "b_id": p.b, "hamming": p.hamming, "jaccard": p.jaccard})
                )?;
            } else {
                writeln!(out, "{}\t{}\t{}\t{}", key(p.a), key(p.b), p.hamming, fmt_j(p.jaccard))?;
            }
        }
    }
    if json && summary {
        writeln!(
            out,
            "{}",
            json!({"docs": rep.docs, "pairs": rep.pairs.len(), "by_hamming": rep.by_hamming, "by_jaccard": rep.by_jaccard,
            "hamming_seconds": rep.hamming_seconds, "verify_seconds": rep.verify_seconds})
        )?;
    } else if !json || summary {
        let mut err = io::stderr().lock();
        writeln!(
            err,
            "{} pairs among {} documents (Hamming search {:.3} s, Jaccard {:.3} s)",
            rep.pairs.len(),
            rep.docs,
            rep.hamming_seconds,
            rep.verify_seconds
        )?;
        writeln!(err, "{:>10} {:>10} {:>10}", "hamming", "pairs", "docs")?;
        for r in &rep.by_hamming {
            writeln!(err, "{:>10} {:>10} {:>10}", r.label, r.pairs, r.docs)?;
        }
        if !rep.by_jaccard.is_empty() {
            writeln!(err, "{:>10} {:>10} {:>10}", "jaccard", "pairs", "docs")?;
            for r in &rep.by_jaccard {
                writeln!(err, "{:>10} {:>10} {:>10}", r.label, r.pairs, r.docs)?;
            }
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn ingest(
    out: &mut impl Write,
    json: bool,
    db: &Path,
    input: &str,
    dedup: DedupArg,
    batch_size: usize,
    batch_latency_ms: u64,
    workers: usize,
    key_field: String,
    text_field: String,
    quiet: bool,
    sync: bool,
) -> Result<ExitCode> {
    let d = open(db, sync)?;
    let origins: input::Origins = Arc::new(Mutex::new(Vec::new()));
    let items: Box<dyn Iterator<Item = Result<NewDoc, Error>> + Send> = if input == "-" {
        Box::new(input::jsonl(io::stdin(), "stdin".into(), key_field, text_field, origins.clone()))
    } else {
        let p = PathBuf::from(input);
        let meta = std::fs::metadata(&p).map_err(|e| Error::Io {
            op: "open ingest input",
            path: p.clone(),
            source: e,
        })?;
        if meta.is_dir() {
            Box::new(input::directory(&p, origins.clone())?)
        } else {
            let f = std::fs::File::open(&p).map_err(|e| Error::Io {
                op: "open ingest input",
                path: p.clone(),
                source: e,
            })?;
            Box::new(input::jsonl(f, p.display().to_string(), key_field, text_field, origins.clone()))
        }
    };
    let opts = IngestOptions {
        workers,
        batch_size,
        batch_latency: Duration::from_millis(batch_latency_ms),
        dedup: dedup.into(),
    };
    let bar = (!quiet && io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new_spinner();
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {pos} docs ingested ({per_sec}) {elapsed_precise}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        b.enable_steady_tick(Duration::from_millis(200));
        b
    });
    let started = Instant::now();
    let mut write_err: Option<io::Error> = None;
    let stats = d.ingest(items, &opts, |r| {
        if let Some(b) = &bar {
            b.inc(1);
        }
        let res = match &r.result {
            Ok(o) => {
                if json {
                    writeln!(out, "{}", outcome_json(o))
                } else if o.id.is_none() {
                    writeln!(
                        out,
                        "skipped {:?}: duplicates {}",
                        o.key,
                        o.duplicates
                            .first()
                            .map_or(String::new(), |h| format!("{:?} (J = {})", h.key, fmt_j(h.jaccard)))
                    )
                } else if let Some(h) = o.duplicates.first() {
                    writeln!(
                        out,
                        "stored {:?} as doc {}: near-duplicate of {:?} (J = {}), group {}",
                        o.key,
                        o.id.unwrap_or_default(),
                        h.key,
                        fmt_j(h.jaccard),
                        o.group.as_ref().map_or(0, |g| g.id)
                    )
                } else {
                    Ok(())
                }
            }
            Err(e) => {
                let origin = origins
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get(r.seq as usize)
                    .cloned()
                    .unwrap_or_default();
                let msg = e.to_string();
                let line = if msg.contains(&origin) { msg } else { format!("{origin}: {msg}") };
                if let Some(b) = &bar {
                    b.suspend(|| eprintln!("fpdb: rejected {line}"));
                } else {
                    eprintln!("fpdb: rejected {line}");
                }
                if json {
                    writeln!(out, "{}", json!({"seq": r.seq, "origin": origin, "error": e.to_string()}))
                } else {
                    Ok(())
                }
            }
        };
        if let Err(e) = res {
            write_err.get_or_insert(e);
        }
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if let Some(e) = write_err {
        return Err(e.into());
    }
    let stats = stats?;
    let secs = started.elapsed().as_secs_f64().max(1e-9);
    eprintln!(
        "fpdb: ingested {} items in {:.2} s: {} stored, {} skipped as duplicates, {} with near-duplicates, {} rejected; {:.0} docs/s, {:.1} MB/s, {} batches",
        stats.items,
        secs,
        stats.stored,
        stats.skipped,
        stats.with_duplicates,
        stats.errors,
        stats.items as f64 / secs,
        stats.text_bytes as f64 / secs / 1e6,
        stats.batches
    );
    Ok(if stats.errors > 0 { ExitCode::from(6) } else { ExitCode::SUCCESS })
}

#[allow(clippy::too_many_arguments)]
fn eval(
    out: &mut impl Write,
    corpus: &Path,
    name: &str,
    out_dir: &Path,
    img_dir: &Path,
    truth_t: f64,
    spec: FingerprintSpec,
    min_words: usize,
    limit: Option<usize>,
) -> Result<()> {
    let origins: input::Origins = Arc::new(Mutex::new(Vec::new()));
    let f = std::fs::File::open(corpus).map_err(|e| Error::Io {
        op: "open corpus",
        path: corpus.to_path_buf(),
        source: e,
    })?;
    let mut fpr = fpdb::Fingerprinter::new(spec.clone());
    let mut docs = Vec::new();
    let mut skipped = 0usize;
    let t0 = Instant::now();
    for item in input::jsonl(f, corpus.display().to_string(), "key".into(), "text".into(), origins) {
        if limit.is_some_and(|l| docs.len() >= l) {
            break;
        }
        let Ok(doc) = item else {
            skipped += 1;
            continue;
        };
        if doc.text.split_whitespace().count() < min_words.max(1) {
            skipped += 1;
            continue;
        }
        let label = doc
            .meta
            .as_deref()
            .and_then(|m| serde_json::from_str::<serde_json::Value>(m).ok())
            .and_then(|v| v.get("label").and_then(|l| l.as_str().map(str::to_string)));
        let fp = fpr.fingerprint(&doc.text);
        if fp.shingles.is_empty() {
            skipped += 1;
            continue;
        }
        docs.push(fpdb::eval::EvalDoc {
            key: doc.key,
            label,
            shingles: fp.shingles,
            simhash: fp.simhash,
        });
    }
    let fp_secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "fpdb eval: {} documents fingerprinted in {fp_secs:.2} s ({skipped} skipped); computing exact truth ...",
        docs.len()
    );
    let ks: Vec<u32> = (0..=16).collect();
    let ts: Vec<f64> = (0..=10).map(|i| f64::from(50 + 5 * i) / 100.0).collect();
    let report = fpdb::eval::evaluate(&docs, truth_t, &ks, &ts);
    for dir in [out_dir, img_dir] {
        std::fs::create_dir_all(dir).map_err(|e| Error::Io {
            op: "create report directory",
            path: dir.to_path_buf(),
            source: e,
        })?;
    }
    let mut md = report.to_markdown(name);
    md.push_str(&format!(
        "\n## Reproduce\n\n```\nfpdb eval {} --name {name} --out-dir {} --truth-t {truth_t} --shingle {}{}\n```\n\nSpec: {spec}. {} documents ({skipped} skipped).\n",
        corpus.display(),
        out_dir.display(),
        match spec.unit {
            fpdb::spec::ShingleUnit::Word => format!("word:{}", spec.n),
            fpdb::spec::ShingleUnit::Char => format!("char:{}", spec.n),
        },
        if min_words > 0 { format!(" --min-words {min_words}") } else { String::new() },
        docs.len()
    ));
    let write = |p: PathBuf, s: &str| {
        std::fs::write(&p, s).map_err(|e| Error::Io {
            op: "write report",
            path: p,
            source: e,
        })
    };
    write(out_dir.join(format!("{name}.md")), &md)?;
    if let Some(svg) = report.svg_vs_k(name, 0.9) {
        write(img_dir.join(format!("{name}-vs-k.svg")), &svg)?;
    }
    if let Some(svg) = report.svg_vs_t(name, fpdb::CreateOptions::default().max_distance) {
        write(img_dir.join(format!("{name}-vs-t.svg")), &svg)?;
    }
    write(out_dir.join(format!("{name}.json")), &serde_json::to_string_pretty(&report)?)?;
    writeln!(out, "{md}")?;
    Ok(())
}
