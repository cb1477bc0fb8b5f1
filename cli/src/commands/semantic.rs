//! `fpdb semantic backfill`: the semantic channel's indexer run in the foreground until every
//! acknowledged document is embedded, with progress; with `--input`, first the documents stored
//! before the channel was added, embedded from their texts (without it, from the stored texts of
//! a database made with `--store-text`). `fpdb semantic enable`: the channel added to a database
//! created without it (with stored texts, its documents are then embedded from them).

// Without the `semantic` feature the settings are still parsed (a bad argument is a usage error
// either way) and `run` refuses them, so their fields are never read.
#![cfg_attr(not(feature = "semantic"), allow(dead_code))]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::cli::{BackfillArgs, EnableArgs, SemanticCmd};

/// `fpdb semantic …` as plain settings.
pub enum Config {
    Backfill(BackfillConfig),
    Enable(EnableConfig),
}

pub struct BackfillConfig {
    pub db: PathBuf,
    pub threads: usize,
    pub batch: usize,
    pub model: Option<PathBuf>,
    pub progress: bool,
    /// JSONL input of stored documents' texts and its key and text fields.
    pub input: Option<(String, String, String)>,
}

pub struct EnableConfig {
    pub db: PathBuf,
    #[cfg(feature = "semantic")]
    pub channel: fpdb::semantic::SemanticConfig,
}

impl Config {
    pub fn from_args(cmd: SemanticCmd) -> Result<Config> {
        Ok(match cmd {
            SemanticCmd::Backfill(a) => Config::Backfill(BackfillConfig::from(a)),
            SemanticCmd::Enable(a) => Config::Enable(EnableConfig::try_from(a)?),
        })
    }
}

impl From<BackfillArgs> for BackfillConfig {
    fn from(a: BackfillArgs) -> BackfillConfig {
        BackfillConfig {
            db: a.db,
            threads: a
                .threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            batch: a.batch,
            model: a.model,
            progress: !a.no_progress,
            input: a.input.map(|i| (i, a.key_field, a.text_field)),
        }
    }
}

impl TryFrom<EnableArgs> for EnableConfig {
    type Error = anyhow::Error;
    fn try_from(a: EnableArgs) -> Result<EnableConfig> {
        let channel = super::init::semantic_config(&a.channel)?;
        let Some(channel) = channel else {
            anyhow::bail!("fpdb semantic enable needs --semantic MODEL_DIR (bash scripts/fetch-model.sh fetches one)");
        };
        #[cfg(not(feature = "semantic"))]
        let _: std::convert::Infallible = channel;
        Ok(EnableConfig {
            db: a.db,
            #[cfg(feature = "semantic")]
            channel,
        })
    }
}

#[cfg(not(feature = "semantic"))]
pub fn run(_: Config, _: bool, _: &mut impl Write) -> Result<ExitCode> {
    Err(fpdb::Error::InvalidOption {
        name: "semantic",
        message: "this fpdb was built without the `semantic` feature; build it with `cargo build --features semantic`".into(),
    }
    .into())
}

#[cfg(feature = "semantic")]
pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    match cfg {
        Config::Backfill(c) => backfill(c, json, out),
        Config::Enable(c) => enable(c, json, out),
    }
}

#[cfg(feature = "semantic")]
fn enable(cfg: EnableConfig, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    use anyhow::Context;
    fpdb::Db::enable_semantic(&cfg.db, &cfg.channel, fpdb::Options::default())
        .with_context(|| format!("cannot add the semantic channel to {}", cfg.db.display()))?;
    let d = fpdb::Db::open(&cfg.db).with_context(|| format!("cannot open database {}", cfg.db.display()))?;
    if d.texts().enabled() {
        let batch = fpdb::semantic::SemanticOptions::default().batch;
        embed_given(&d, d.texts().iter()?, "the stored texts", batch, false, json, out)?;
        d.semantic().backfill(|_| {})?;
        return Ok(ExitCode::SUCCESS);
    }
    drop(d);
    if json {
        writeln!(out, "{}", serde_json::json!({"enabled": true, "db": cfg.db}))?;
    } else {
        writeln!(
            out,
            "added the semantic channel to {}: new documents are embedded in the background; embed the stored ones with `fpdb semantic backfill {} --input FILE.jsonl`",
            cfg.db.display(),
            cfg.db.display()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(feature = "semantic")]
fn backfill(cfg: BackfillConfig, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    use anyhow::Context;
    use fpdb::semantic::SemanticOptions;
    use fpdb::{Db, Options};

    let opts = Options {
        semantic: SemanticOptions {
            model_dir: cfg.model.clone(),
            threads: cfg.threads,
            batch: cfg.batch,
            ..SemanticOptions::default()
        },
        ..Options::default()
    };
    let d = Db::open_with(&cfg.db, opts).with_context(|| format!("cannot open database {}", cfg.db.display()))?;
    if let Some(input) = &cfg.input {
        from_texts(&d, input, &cfg, json, out)?;
    } else if d.texts().enabled() {
        embed_given(&d, d.texts().iter()?, "the stored texts", cfg.batch, cfg.progress, json, out)?;
    }
    let start = std::time::Instant::now();
    let total = d.semantic().pending()?;
    let bar = (cfg.progress && !crate::print::quiet() && std::io::IsTerminal::is_terminal(&std::io::stderr())).then(|| {
        let b = indicatif::ProgressBar::new(total);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} docs embedded ({per_sec}, eta {eta}) {elapsed_precise}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    });
    let mut last_note = start;
    let report = d.semantic().backfill(|left| {
        let done = total.saturating_sub(left);
        match &bar {
            Some(b) => b.set_position(done),
            None if cfg.progress && last_note.elapsed().as_secs() >= 10 => {
                last_note = std::time::Instant::now();
                crate::print::note!("fpdb: embedded {done} of {total} documents");
            }
            None => {}
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let secs = start.elapsed().as_secs_f64();
    if json {
        writeln!(
            out,
            "{}",
            serde_json::json!({"embedded": report.embedded, "vectors": report.vectors, "seconds": secs})
        )?;
    } else {
        writeln!(
            out,
            "embedded {} documents in {secs:.1} s ({:.1}/s); the channel holds {} vectors",
            report.embedded,
            report.embedded as f64 / secs.max(1e-9),
            report.vectors
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `--input`: the stored documents that have no vector, embedded from the input's texts.
#[cfg(feature = "semantic")]
fn from_texts(
    d: &fpdb::Db,
    (input, key, text): &(String, String, String),
    cfg: &BackfillConfig,
    json: bool,
    out: &mut impl Write,
) -> Result<()> {
    let items = fpdb::input::jsonl_named(input, key.clone(), text.clone(), None)?;
    embed_given(d, items, input, cfg.batch, cfg.progress, json, out)
}

/// The stored documents that have no vector, embedded from the texts of `items` (`input` names
/// them).
#[cfg(feature = "semantic")]
fn embed_given(
    d: &fpdb::Db,
    items: impl IntoIterator<Item = fpdb::Result<fpdb::NewDoc>>,
    input: &str,
    batch: usize,
    progress: bool,
    json: bool,
    out: &mut impl Write,
) -> Result<()> {
    let start = std::time::Instant::now();
    let mut last_note = start;
    let rep = d.semantic().backfill_texts(items, batch, |r| {
        if progress && !crate::print::quiet() && last_note.elapsed().as_secs() >= 10 {
            last_note = std::time::Instant::now();
            crate::print::note!("fpdb: embedded {} stored documents from {input}", r.embedded);
        }
    })?;
    let secs = start.elapsed().as_secs_f64();
    if json {
        writeln!(
            out,
            "{}",
            serde_json::json!({"input": input, "embedded": rep.embedded, "already": rep.already, "unknown": rep.unknown, "empty": rep.empty, "seconds": secs})
        )?;
    } else {
        writeln!(
            out,
            "{input}: embedded {} stored documents in {secs:.1} s; {} had their vector or are queued, {} keys are not in the database, {} had nothing to embed",
            rep.embedded, rep.already, rep.unknown, rep.empty
        )?;
    }
    Ok(())
}
