//! `fpdb semantic`: the semantic channel's enable and backfill.

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;
use clap::{Args, Subcommand};

use super::ChannelArgs;

/// `fpdb semantic ...`.
#[derive(Subcommand, Debug)]
pub enum SemanticCmd {
    /// Run the background indexer in the foreground until every acknowledged document is embedded;
    /// with --input, first embed the documents stored before the channel was added (`enable`) from
    /// their texts.
    Backfill(BackfillArgs),
    /// Add the channel to a database created without it (then `backfill --input` with the
    /// documents' texts: fpdb stores shingle sets, not texts).
    Enable(EnableArgs),
}

/// `fpdb semantic enable`.
#[derive(Args, Debug)]
pub struct EnableArgs {
    /// Database directory.
    pub db: PathBuf,
    #[command(flatten)]
    pub channel: ChannelArgs,
}

/// `fpdb semantic backfill`.
#[derive(Args, Debug)]
pub struct BackfillArgs {
    /// Database directory.
    pub db: PathBuf,
    /// Threads the model may use (default: every core; the background indexer of other commands
    /// uses one).
    #[arg(long, value_parser = RangedU64ValueParser::<usize>::new().range(1..=256))]
    pub threads: Option<usize>,
    /// Documents per commit (one embed call, one synced write).
    #[arg(long, default_value_t = 32, value_parser = RangedU64ValueParser::<usize>::new().range(1..=4096))]
    pub batch: usize,
    /// The model directory, when it is no longer where `init --semantic` found it (its identity
    /// must be the same).
    #[arg(long, value_name = "MODEL_DIR")]
    pub model: Option<PathBuf>,
    /// Do not show the progress bar.
    #[arg(long)]
    pub no_progress: bool,
    /// JSONL of stored documents' texts (a file, gzip or not, or `-`): those stored before the
    /// channel was added (`fpdb semantic enable`) and not embedded yet are embedded from it,
    /// matched by key; the others are counted and skipped.
    #[arg(long, value_name = "FILE")]
    pub input: Option<String>,
    /// With --input: the JSON field holding the key.
    #[arg(long, default_value = "key", requires = "input")]
    pub key_field: String,
    /// With --input: the JSON field holding the text.
    #[arg(long, default_value = "text", requires = "input")]
    pub text_field: String,
}
