//! The clap types of every command, and nothing else: each command's file converts its arguments
//! into a plain `Config` (the library never sees clap). Defaults come from the library's constants.
//! The commands with subcommands or many flags have a file here: `review.rs`, `semantic.rs`,
//! `serve.rs`, `eval.rs` (`eval` and `bench-query`).

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};
use fpdb::fingerprint::containment::MAX_SAMPLE;
mod eval;
mod review;
mod semantic;
#[cfg(feature = "serve")]
mod serve;

pub use eval::{BenchQueryArgs, EvalArgs};
pub use review::{DecideArgs, KeyPairArgs, ReviewCmd};
pub use semantic::{BackfillArgs, EnableArgs, SemanticCmd};
#[cfg(feature = "serve")]
pub use serve::{LogFormatArg, ServeArgs};

use fpdb::{Dedup, Weighting, DEFAULT_BATCH_SIZE, DEFAULT_CONTAINMENT, DEFAULT_MIN_JACCARD, MAX_BATCH_SIZE, MAX_DISTANCE, MAX_WORKERS};

pub const EXIT_CODES: &str = "\
EXIT CODES:
  0  success
  1  nothing found where something was asked for: `query` with no hit, `get`/`delete` of a missing key,
     `pairs` with no pair
  2  usage error: bad arguments or options, no database at the path, spec mismatch
  3  I/O or RocksDB error (disk full, permissions, ...), a poisoned handle, or an internal panic
  4  corruption: `check` found faults, or a read hit a damaged record
  5  the database is locked by another process
  6  `ingest` or `query --jsonl` finished, but some input items were rejected (each one is reported
     on stderr)
130  `ingest` stopped by Ctrl-C or SIGTERM: it read no further, committed what it had read and said how
     far it got (a second Ctrl-C exits at once; what was acknowledged is durable either way)";

/// fpdb — an embedded, persistent near-duplicate fingerprint database.
///
/// Each document becomes word-trigram shingles and a 64-bit SimHash; SimHashes live in permuted
/// tables (RocksDB), shingle sets in memory-mapped segments, and every candidate within Hamming
/// distance k is verified by exact Jaccard similarity. Every command takes the database directory
/// first.
#[derive(Parser, Debug)]
#[command(name = "fpdb", version, after_help = EXIT_CODES, propagate_version = true)]
pub struct Cli {
    /// Print JSON lines instead of readable tables.
    #[arg(long, global = true)]
    pub json: bool,
    /// Print nothing but errors (no results, summaries, progress or notes; rejected input items are
    /// errors and are still reported on stderr); exit codes are unchanged. `ingest --no-progress`
    /// hides only the progress bar.
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Create a database with a fingerprint spec and defaults.
    Init(InitArgs),
    /// Insert (or replace) one document, with its title, year and DOI when given; prints it, its
    /// verified near-duplicates and metadata matches (and, with --containment C, its containment
    /// relations), as `ingest` does for each of its documents.
    Insert(InsertArgs),
    /// Find near-duplicates of a text, a file or a SimHash. Exit code 1 when nothing is found.
    Query(QueryArgs),
    /// Ingest many documents through the parallel pipeline (JSONL file, directory, or - for stdin).
    ///
    /// JSONL lines are {"key": ..., "text": ...}; other fields are kept as metadata. A WARC or WET
    /// file (crawl.warc.gz) gives one document per response or conversion record, keyed by its
    /// WARC-Target-URI; other records are skipped and counted. A directory gives one document per
    /// file, keyed by relative path, hidden files and directories (.git) left out unless --hidden.
    /// Inputs may be gzip- or zstd-compressed (papers.jsonl.gz, crawl.jsonl.zst, a .gz file in a
    /// directory) and may start with a UTF-8 byte-order mark; UTF-16, xz, bzip2, zip/Office, PDF
    /// and image inputs are refused with the command that converts them.
    /// With --json, one line per document is printed (and flushed with its batch) after its batch
    /// is durably committed. A read error of the input or a failed commit ends the run (exit 3)
    /// after reporting everything committed before it. Ctrl-C or SIGTERM stops reading the input,
    /// commits what was read and says up to which line (exit 130); a second Ctrl-C exits at once.
    Ingest(IngestArgs),
    /// Show a stored document and its group (with --text: its stored text, exactly as given).
    /// Exit code 1 when the key is absent.
    Get(GetArgs),
    /// Delete a document (its group splits if it was a bridge). Exit code 1 when the key is absent.
    Delete(KeyArgs),
    /// Export every document as JSON lines {"key","id","simhash","shingles","group"}; with
    /// --archive, everything the database holds that is not derived, for `fpdb import`.
    Export(ExportArgs),
    /// Create a database from an `export --archive` file (its settings, then its documents in
    /// order): exporting the new database gives the same bytes.
    Import(ImportArgs),
    /// A consistent copy of a database into a new directory, also while another process (e.g.
    /// `fpdb serve`) writes to it; the copy opens and passes `check` (docs/durability.md).
    Backup(BackupArgs),
    /// Counters: documents, groups, segments, bytes, spec.
    Stats(DbArg),
    /// Rewrite segments with dead bytes and reclaim the space.
    Compact(CompactArgs),
    /// Verify every record, pointer, checksum and index entry. Exit code 4 on any fault.
    Check(DbArg),
    /// Rebuild the SimHash tables with another number of tables (crash-safe; results unchanged,
    /// only query cost). `--tables auto` picks the modelled best for the current size.
    Reindex(ReindexArgs),
    /// Every pair of documents within k (and Jaccard >= t when given), each once; distribution tables
    /// on stderr (or as a final JSON line with --summary).
    Pairs(PairsArgs),
    /// Evaluate detection quality on a labelled JSONL corpus: exact-Jaccard truth, precision/recall/F1
    /// over a grid of k and t; writes a Markdown report and SVG plots.
    Eval(EvalArgs),
    /// (Benchmark tool, not a user command.) Run every text of a JSONL file as a query in-process
    /// and report p50/p99/mean latency in µs.
    #[command(hide = true)]
    BenchQuery(BenchQueryArgs),
    /// Serve the database over HTTP (JSON API; docs/serve.md): one process owns the database and
    /// serves many clients. Stops gracefully on SIGINT/SIGTERM. Prints the bound address on stdout.
    #[cfg(feature = "serve")]
    Serve(ServeArgs),
    /// The semantic channel (a database made with `init --semantic`, or given the channel later by
    /// `enable`): `backfill` embeds every acknowledged document not embedded yet,
    /// with progress, and returns when it has caught up.
    #[command(subcommand)]
    Semantic(SemanticCmd),
    /// Print a shell completion script: `fpdb completions bash > /etc/bash_completion.d/fpdb`
    /// (zsh: a file `_fpdb` in a directory of $fpath; fish: ~/.config/fish/completions/fpdb.fish).
    Completions(CompletionsArgs),
    /// Print the manual page (roff) of fpdb on stdout, or with --dir write one page per command
    /// (fpdb.1, fpdb-ingest.1, ...) into a directory: `fpdb man | man -l -`.
    Man(ManArgs),
    /// Curator decisions, kept by key: `same` (one work, whatever the scores say), `distinct`
    /// (never in one group), `undo`, `list`. The groups follow at once; a decision that
    /// contradicts others is refused with them as evidence (exit code 2).
    #[command(subcommand)]
    Review(ReviewCmd),
}

/// `fpdb completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `fpdb man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write fpdb.1 and one page per command into this directory instead of fpdb.1 on stdout.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Just the database.
#[derive(Args, Debug)]
pub struct DbArg {
    /// Database directory.
    pub db: PathBuf,
}

#[derive(Args, Debug)]
pub struct InitArgs {
    /// Database directory (must not hold a database yet).
    pub db: PathBuf,
    /// Default maximum distance k for queries and dedup: differing bits of the SimHash (of the
    /// 384-bit projection for charikar and broder-charikar, per lexicon for multi-lexicon).
    /// Default: the method's (12; 29 for broder-charikar, i.e. C-similarity >= 355; 6 for
    /// multi-lexicon).
    #[arg(long, short = 'k', value_parser = clap::value_parser!(u32).range(0..=MAX_DISTANCE as i64))]
    pub max_distance: Option<u32>,
    /// The near-duplicate method (docs/methods.md): simhash (default), broder, charikar,
    /// broder-charikar, weighted-simhash (needs --idf-from), multi-lexicon.
    #[arg(long, default_value = "simhash")]
    pub method: String,
    /// weighted-simhash: the JSONL corpus ("text" field) whose document frequencies become the
    /// database's frozen IDF table.
    #[arg(long)]
    pub idf_from: Option<PathBuf>,
    /// broder, broder-charikar: the default number of equal supershingles a near-duplicate needs
    /// (1..=6; Henzinger: 2).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub min_shared: Option<u32>,
    /// Table layout: a number of blocks m, `k+1` (classic exact-block layout) or `auto`
    /// (measured choice, see docs/performance.md, "The table-layout decision").
    #[arg(long, default_value = "auto")]
    pub tables: String,
    /// Shingles: `word:N` (default word:3) or `char:N`.
    #[arg(long, default_value = "word:3")]
    pub shingle: String,
    /// Default minimum Jaccard similarity t of a verified duplicate (0..=1).
    #[arg(long, default_value_t = DEFAULT_MIN_JACCARD, value_parser = unit_interval)]
    pub min_jaccard: f64,
    /// SimHash weights: `binary` (each distinct shingle once; default) or `count` (occurrences).
    #[arg(long, value_enum, default_value_t = WeightArg::Binary)]
    pub weights: WeightArg,
    /// Word shingle hash: `word-mix` (each word hashed once, a shingle's hash combined from its
    /// words'; default) or `xxh3-64` (each shingle's bytes; the hash of databases made before
    /// word-mix, which fpdb builds older than it need). Fingerprints of the two never match.
    #[arg(long)]
    pub hash: Option<String>,
    /// Text normalizer version. 2 (default) makes each character of Chinese, Japanese, Thai, Lao,
    /// Khmer and Myanmar text a word, keeps combining marks in their word and drops soft hyphens
    /// and zero-width characters; 1 is the normalizer of databases made before it, which fpdb
    /// builds older than it need. The two agree on ASCII text (docs/format.md, spec record).
    #[arg(long, default_value_t = fpdb::fingerprint::spec::NORMALIZER_VERSION,
          value_parser = clap::value_parser!(u32).range(1..=fpdb::fingerprint::spec::NORMALIZER_VERSION as i64))]
    pub normalizer: u32,
    /// Keep a containment index (finds a document inside a longer one: `query --min-containment`,
    /// `pairs --min-containment`, `ingest --containment`). Costs disk and ingest time: see
    /// docs/containment.md.
    #[arg(long, value_enum, default_value_t = if DEFAULT_CONTAINMENT { OnOff::On } else { OnOff::Off })]
    pub containment: OnOff,
    /// Containment sampling rate N: one shingle in N is indexed (smaller N finds shorter texts
    /// inside longer ones, at a larger index). Default: 8. Only with `--containment on`.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_SAMPLE as i64))]
    pub containment_sample: Option<u32>,
    /// Containment queries skip index keys held by more documents than this (boilerplate).
    /// Default: 2048. Only with `--containment on`.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub containment_max_postings: Option<u32>,
    /// A stored document's containment samples are capped near this many: a longer document is
    /// sampled at a coarser rate (fewer index entries and less disk for full-length papers; a
    /// short passage searched inside a much longer document is found less often). 0: no cap.
    /// Default: 256 (docs/containment.md, "Long documents: the sample cap"). Only with
    /// `--containment on`.
    #[arg(long, value_parser = clap::value_parser!(u32))]
    pub containment_max_samples: Option<u32>,
    /// Keep every document's text, zstd-compressed with a dictionary trained on the first
    /// documents (0.40 of the raw bytes on ~1 KB passages, 0.31 on full-length papers:
    /// docs/format.md, "Stored texts"): `get --text`,
    /// `reindex --spec`, `semantic backfill` without --input, `export` with the texts.
    #[arg(long)]
    pub store_text: bool,
    #[command(flatten)]
    pub channel: ChannelArgs,
}

/// The semantic channel's settings at its creation (`init`, `semantic enable`).
#[derive(Args, Debug)]
pub struct ChannelArgs {
    /// The CORE paper's semantic channel (an fpdb built with the `semantic` feature): the
    /// sentence-transformer directory (`bash scripts/fetch-model.sh` fetches all-MiniLM-L6-v2 and
    /// prints it). Documents are embedded in the background after they are acknowledged; queries
    /// add the documents whose cosine is >= --min-cosine to the text hits (docs/semantic.md).
    #[arg(long, value_name = "MODEL_DIR")]
    pub semantic: Option<PathBuf>,
    /// The semantic channel's default β: cosine >= β is a semantic match (default: the model's
    /// calibrated β, 0.81 for all-MiniLM-L6-v2 (docs/semantic.md); 0.76 for a model without one).
    #[arg(long, value_parser = cosine, requires = "semantic")]
    pub min_cosine: Option<f32>,
    /// Embed this JSONL field (e.g. `abstract`, as the CORE paper does) instead of the text; a document
    /// without it is embedded by its text.
    #[arg(long, requires = "semantic")]
    pub semantic_field: Option<String>,
    /// Tokens embedded per document (the rest is ignored; default 256, the model's own limit).
    #[arg(long, requires = "semantic", value_parser = RangedU64ValueParser::<usize>::new().range(3..=8192))]
    pub semantic_max_tokens: Option<usize>,
    /// Which matches form duplicate groups: `text` (default; semantic matches are reported in
    /// answers but link nothing) or `union` (the background indexer links each document it embeds
    /// to every document at cosine >= β, merging their groups; a group is final once
    /// `semantic_pending` is 0; `fpdb pairs --groups` then groups over both channels too).
    #[arg(long, requires = "semantic", value_parser = ["text", "union"])]
    pub groups: Option<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnOff {
    On,
    Off,
}

#[derive(Args, Debug)]
pub struct InsertArgs {
    /// Database directory.
    pub db: PathBuf,
    /// The document's key (replaces an existing document with the same key).
    #[arg(long)]
    pub key: String,
    /// Text file to insert (plain or gzip); standard input when absent.
    pub file: Option<PathBuf>,
    /// What to do when near-duplicates exist.
    #[arg(long, value_enum, default_value_t = DedupArg::Link)]
    pub dedup: DedupArg,
    /// The document's title (stored; with --year, matched exactly like a near-duplicate: the
    /// JSONL field "title" of `ingest`).
    #[arg(long)]
    pub title: Option<String>,
    /// The document's year (with --title; the JSONL field "year" of `ingest`).
    #[arg(long, allow_negative_numbers = true)]
    pub year: Option<i32>,
    /// The document's DOI (stored and matched exactly; the JSONL field "doi" of `ingest`).
    #[arg(long)]
    pub doi: Option<String>,
    /// Also report containment relations, as `ingest --containment`: the stored documents this one
    /// contains or is contained in with containment >= C (0..=1). Needs `--containment on`.
    #[arg(long, value_parser = unit_interval)]
    pub containment: Option<f64>,
    #[command(flatten)]
    pub write: WriteArgs,
}

#[derive(Args, Debug)]
pub struct QueryArgs {
    /// Database directory.
    pub db: PathBuf,
    /// Text file to look up, plain or gzip (standard input when no FILE, --text or --simhash is
    /// given).
    pub file: Option<PathBuf>,
    /// Text to look up.
    #[arg(long, conflicts_with_all = ["file", "simhash"])]
    pub text: Option<String>,
    /// Look up every document of a JSONL file (`-` for standard input; the ingest format
    /// {"key": ..., "text": ...}, plain or gzip), in input order: one result per document (with
    /// --json, {"seq","key","hits"}). Nothing is stored. Exit code 1 when no document has a hit, 6
    /// when some line was rejected (each reported on stderr).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["file", "text", "simhash"])]
    pub jsonl: Option<String>,
    /// With --jsonl: the JSON field holding each document's key (as `ingest --key-field`; default
    /// "key").
    #[arg(long)]
    pub key_field: Option<String>,
    /// With --jsonl: the JSON field holding each document's text (as `ingest --text-field`; default
    /// "text").
    #[arg(long)]
    pub text_field: Option<String>,
    /// A SimHash (unsigned decimal, or hex with 0x) to look up; no Jaccard is computed.
    #[arg(long, conflicts_with = "file")]
    pub simhash: Option<String>,
    /// Maximum Hamming distance k (default: the database's; `--k` is an old name for it).
    #[arg(long, short = 'k', alias = "k", value_parser = clap::value_parser!(u32).range(0..=MAX_DISTANCE as i64))]
    pub max_distance: Option<u32>,
    /// broder, broder-charikar: fewest equal supershingles (default: the database's).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub min_shared: Option<u32>,
    /// Minimum Jaccard (default: the database's; 0 keeps every candidate within k).
    #[arg(long, value_parser = unit_interval)]
    pub min_jaccard: Option<f64>,
    /// At most this many hits, best first.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Containment query: stored documents that contain the text, or that the text contains, with
    /// containment >= C (0..=1) in either direction (needs a database created with `--containment on`;
    /// -k and --min-jaccard are then not used).
    #[arg(long, value_parser = unit_interval, conflicts_with = "simhash")]
    pub min_containment: Option<f64>,
    /// Semantic channel: wait until every document acknowledged before the query is embedded
    /// (at most --wait-semantic-secs), so the answer misses none of them.
    #[arg(long)]
    pub wait_semantic: bool,
    /// The longest --wait-semantic waits, in seconds.
    #[arg(long, default_value_t = 3600, requires = "wait_semantic")]
    pub wait_semantic_secs: u64,
    /// Semantic channel: β of this query (default: the database's).
    #[arg(long, value_parser = cosine)]
    pub min_cosine: Option<f32>,
}

#[derive(Args, Debug)]
pub struct IngestArgs {
    /// Database directory.
    pub db: PathBuf,
    /// JSONL file (plain or gzip), directory of text files, or `-` for JSONL on standard input.
    pub input: String,
    /// skip: do not store near-duplicates; link: store and join their group; off: store without checking.
    #[arg(long, value_enum, default_value_t = DedupArg::Link)]
    pub dedup: DedupArg,
    /// Documents per group commit (at most; a partial batch commits after --batch-latency-ms).
    /// Larger batches mean fewer fsyncs (one per commit).
    #[arg(long, default_value_t = DEFAULT_BATCH_SIZE, value_parser = RangedU64ValueParser::<usize>::new().range(1..=MAX_BATCH_SIZE as u64))]
    pub batch_size: usize,
    /// Commit a partial batch after this many milliseconds (0..=3600000).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    pub batch_latency_ms: u64,
    /// Fingerprinting threads (0 = one per core).
    #[arg(long, default_value_t = 0, value_parser = RangedU64ValueParser::<usize>::new().range(0..=MAX_WORKERS as u64))]
    pub workers: usize,
    /// JSON field holding the key (of a WARC input: the WARC field, WARC-Target-URI when this is
    /// left at `key`).
    #[arg(long, default_value = "key")]
    pub key_field: String,
    /// JSON field holding the text.
    #[arg(long, default_value = "text")]
    pub text_field: String,
    /// Do not show a progress bar even on a terminal (results and the summary are still printed;
    /// `-q/--quiet` prints nothing but errors).
    #[arg(long)]
    pub no_progress: bool,
    /// A directory input: also ingest hidden files and directories (names starting with `.`,
    /// `.git` among them), which are left out by default.
    #[arg(long)]
    pub hidden: bool,
    /// Also report containment relations: the stored documents each new one contains or is
    /// contained in with containment >= C (0..=1); a relation apart from the near-duplicate groups.
    /// Needs a database created with `--containment on`.
    #[arg(long, value_parser = unit_interval)]
    pub containment: Option<f64>,
    #[command(flatten)]
    pub write: WriteArgs,
}

#[derive(Args, Debug)]
pub struct KeyArgs {
    /// Database directory.
    pub db: PathBuf,
    /// The key.
    pub key: String,
}

#[derive(Args, Debug)]
pub struct GetArgs {
    #[command(flatten)]
    pub key: KeyArgs,
    /// Print the document's stored text exactly as it was inserted (a database made with
    /// `init --store-text`); with --json, the document's line gets a "text" field.
    #[arg(long)]
    pub text: bool,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Database directory.
    pub db: PathBuf,
    /// Also print each shingle set ("shingle_set": [...]).
    #[arg(long)]
    pub shingle_sets: bool,
    /// Write everything the database holds that is not derived instead: a settings line, then
    /// per document its key, metadata, title, year, DOI and stored text (docs/format.md, "Export").
    #[arg(long, conflicts_with = "shingle_sets")]
    pub archive: bool,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Database directory to create (must not hold a database yet).
    pub db: PathBuf,
    /// The `export --archive` file (- for standard input).
    pub file: PathBuf,
}

#[derive(Args, Debug)]
pub struct BackupArgs {
    /// Database directory.
    pub db: PathBuf,
    /// The copy's directory (must not exist; made through DIR.tmp, renamed when complete).
    pub dir: PathBuf,
}

#[derive(Args, Debug)]
pub struct CompactArgs {
    /// Database directory.
    pub db: PathBuf,
    /// Rewrite a segment when at least this share of its bytes is dead (0..=1).
    #[arg(long, default_value_t = 0.3, value_parser = unit_interval)]
    pub min_dead: f64,
    /// Also merge every RocksDB column family into one sorted run (after a bulk load: the
    /// containment index keeps up to 16 ingested runs unmerged, which its queries seek one by one).
    #[arg(long)]
    pub index: bool,
}

#[derive(Args, Debug)]
pub struct ReindexArgs {
    /// Database directory (no other process may be writing to it).
    pub db: PathBuf,
    /// Number of tables m (1..=32), `k+1`, or `auto`: the lowest modelled cost per document at the
    /// database's current size and default k (the cost model of docs/performance.md,
    /// "The table-layout decision").
    #[arg(long, default_value = "auto")]
    pub tables: String,
    /// Fingerprint every document again from its stored text (a database made with
    /// `init --store-text`) under a new spec: the options below, each defaulting to the
    /// database's. The result equals a fresh ingest of the same documents under that spec.
    #[arg(long)]
    pub spec: bool,
    /// With --spec: shingles, `word:N` or `char:N`.
    #[arg(long, requires = "spec")]
    pub shingle: Option<String>,
    /// With --spec: the method (as `init --method`; weighted-simhash is not offered here).
    #[arg(long, requires = "spec")]
    pub method: Option<String>,
    /// With --spec: broder, broder-charikar's default number of equal supershingles.
    #[arg(long, requires = "spec", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub min_shared: Option<u32>,
    /// With --spec: the normalizer version.
    #[arg(long, requires = "spec",
          value_parser = clap::value_parser!(u32).range(1..=fpdb::fingerprint::spec::NORMALIZER_VERSION as i64))]
    pub normalizer: Option<u32>,
    /// With --spec: SimHash weights.
    #[arg(long, requires = "spec", value_enum)]
    pub weights: Option<WeightArg>,
    /// With --spec: the default maximum distance k.
    #[arg(long, short = 'k', requires = "spec", value_parser = clap::value_parser!(u32).range(0..=MAX_DISTANCE as i64))]
    pub max_distance: Option<u32>,
    /// With --spec: the default minimum Jaccard t.
    #[arg(long, requires = "spec", value_parser = unit_interval)]
    pub min_jaccard: Option<f64>,
}

#[derive(Args, Debug)]
pub struct PairsArgs {
    /// Database directory.
    pub db: PathBuf,
    /// Maximum Hamming distance k (default: the database's; `--k` is an old name for it).
    #[arg(long, short = 'k', alias = "k", value_parser = clap::value_parser!(u32).range(0..=MAX_DISTANCE as i64))]
    pub max_distance: Option<u32>,
    /// Verify pairs by exact Jaccard and keep those >= T (0..=1).
    #[arg(long, value_parser = unit_interval)]
    pub min_jaccard: Option<f64>,
    /// broder, broder-charikar: fewest equal supershingles (default: the database's).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub min_shared: Option<u32>,
    /// Print duplicate groups (connected components, canonical = earliest member) instead of pairs:
    /// of the text pairs; of the text and semantic pairs with --semantic or in a database made
    /// with `init --groups union`.
    #[arg(long)]
    pub groups: bool,
    /// Print only the summary tables, not the pairs.
    #[arg(long)]
    pub summary: bool,
    /// Threads (0 = one per core).
    #[arg(long, default_value_t = 0, value_parser = RangedU64ValueParser::<usize>::new().range(0..=MAX_WORKERS as u64))]
    pub threads: usize,
    /// Containment pairs instead: every pair where one document is inside the other with
    /// containment >= C (0..=1), each once, with both directions (needs `--containment on`).
    #[arg(long, value_parser = unit_interval, conflicts_with_all = ["max_distance", "min_jaccard", "groups"])]
    pub min_containment: Option<f64>,
    /// Semantic pairs instead (a database made with `init --semantic`): every pair of embedded
    /// documents with cosine >= β (--min-cosine; default the database's), each once, by the exact
    /// scan (or --semantic-index). With --groups: the groups over both channels.
    #[arg(long, conflicts_with_all = ["min_containment"])]
    pub semantic: bool,
    /// With --semantic: β.
    #[arg(long, value_parser = cosine, requires = "semantic")]
    pub min_cosine: Option<f32>,
    /// With --semantic: the sign-code index, then the exact cosine (recall measured in
    /// docs/semantic.md), instead of the exact scan.
    #[arg(long, requires = "semantic")]
    pub semantic_index: bool,
}

#[derive(Args, Debug)]
pub struct WriteArgs {
    /// Do not fsync on commit: survives a process crash, not a power loss.
    #[arg(long)]
    pub no_sync: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum DedupArg {
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
pub enum WeightArg {
    Count,
    Binary,
}

impl From<WeightArg> for Weighting {
    fn from(w: WeightArg) -> Weighting {
        match w {
            WeightArg::Count => Weighting::Count,
            WeightArg::Binary => Weighting::Binary,
        }
    }
}

/// A cosine in -1..=1 (β).
fn cosine(s: &str) -> Result<f32, String> {
    let v: f32 = s.parse().map_err(|_| format!("expected a cosine in -1..=1, got {s:?}"))?;
    if (-1.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is outside the allowed range -1..=1"))
    }
}

/// A number in 0..=1 (thresholds and shares).
fn unit_interval(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("expected a number in 0..=1, got {s:?}"))?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is outside the allowed range 0..=1"))
    }
}
