//! `fpdb eval` and `fpdb bench-query`: quality on a labelled corpus, query timing.

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;
use clap::Args;
use fpdb::{DEFAULT_MIN_JACCARD, MAX_DISTANCE};

use super::{unit_interval, WeightArg};

#[derive(Args, Debug)]
pub struct EvalArgs {
    /// JSONL corpus with "key", "text" and optionally "label".
    pub corpus: PathBuf,
    /// Corpus name used in the report and file names.
    #[arg(long)]
    pub name: Option<String>,
    /// Output directory (the report is NAME.md, the numbers NAME.json).
    #[arg(long, default_value = "docs/quality")]
    pub out_dir: PathBuf,
    /// Directory of the SVG plots NAME-vs-k.svg and NAME-vs-t.svg (default: OUT_DIR/img).
    #[arg(long)]
    pub img_dir: Option<PathBuf>,
    /// Jaccard threshold that defines a true near-duplicate pair (0..=1).
    #[arg(long, default_value_t = DEFAULT_MIN_JACCARD, value_parser = unit_interval)]
    pub truth_t: f64,
    /// Shingles: `word:N` or `char:N`.
    #[arg(long, default_value = "word:3")]
    pub shingle: String,
    /// SimHash weights.
    #[arg(long, value_enum, default_value_t = WeightArg::Binary)]
    pub weights: WeightArg,
    /// Skip documents with fewer words than this.
    #[arg(long, default_value_t = 0)]
    pub min_words: usize,
    /// Use at most this many documents.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Compare near-duplicate methods instead (`all`, or a comma-separated list of
    /// simhash, broder, charikar, broder-charikar, weighted-simhash, multi-lexicon; NAME:K sets a
    /// method's k). Writes NAME-methods.md/.json and, with --analyses, the papers' analyses.
    #[arg(long)]
    pub methods: Option<String>,
    /// With --methods: also run Henzinger's and Fan & Huang's analyses.
    #[arg(long)]
    pub analyses: bool,
    /// With --methods: the IDF table of weighted-simhash from this JSONL corpus (default: the
    /// evaluated corpus itself).
    #[arg(long)]
    pub idf_from: Option<PathBuf>,
    /// The CORE paper's Table 4 instead (an fpdb built with the `semantic` feature): CORPUS holds
    /// labelled pairs {"a": text, "b": text, "dup": bool} (scripts/semantic_corpus.py); text-only,
    /// semantic-only (cosine >= β, β swept 0.50..1.00) and union P/R/F1 with this model. Writes
    /// NAME-semantic.md and .json.
    #[arg(long, value_name = "MODEL_DIR", conflicts_with = "methods")]
    pub semantic: Option<PathBuf>,
    /// With --semantic: tokens embedded per text.
    #[arg(long, default_value_t = 256, requires = "semantic", value_parser = RangedU64ValueParser::<usize>::new().range(3..=8192))]
    pub semantic_max_tokens: usize,
}

#[derive(Args, Debug)]
pub struct BenchQueryArgs {
    /// Database directory.
    pub db: PathBuf,
    /// JSONL file of queries, in the ingest format ({"key": ..., "text": ...}).
    #[arg(long)]
    pub queries: PathBuf,
    /// Maximum Hamming distance k (default: the database's; `--k` is an old name for it).
    #[arg(long, short = 'k', alias = "k", value_parser = clap::value_parser!(u32).range(0..=MAX_DISTANCE as i64))]
    pub max_distance: Option<u32>,
    /// Minimum Jaccard (default: the database's).
    #[arg(long, value_parser = unit_interval)]
    pub min_jaccard: Option<f64>,
    /// Threads one query's probe may use (0: one per core; 1: the calling thread alone). Only
    /// probes that scan many entries are split (from about 2.6M documents at k = 12).
    #[arg(long, default_value_t = 0)]
    pub query_threads: usize,
    /// Containment queries instead (containment >= C in either direction; needs the containment
    /// index): measures the index's read side.
    #[arg(long, value_parser = unit_interval)]
    pub min_containment: Option<f64>,
}
