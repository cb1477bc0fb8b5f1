//! `fpdb semantic backfill`: the semantic channel's indexer run in the foreground until every
//! acknowledged document is embedded, with progress.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::cli::{BackfillArgs, SemanticCmd};

pub struct Config {
    pub db: PathBuf,
    pub threads: usize,
    pub batch: usize,
    pub model: Option<PathBuf>,
    pub progress: bool,
}

impl Config {
    pub fn from_args(cmd: SemanticCmd) -> Config {
        let SemanticCmd::Backfill(a) = cmd;
        Config::from(a)
    }
}

impl From<BackfillArgs> for Config {
    fn from(a: BackfillArgs) -> Config {
        Config {
            db: a.db,
            threads: a
                .threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            batch: a.batch,
            model: a.model,
            progress: !a.no_progress,
        }
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
    let start = std::time::Instant::now();
    let total = d.semantic_pending()?;
    let bar = (cfg.progress && !crate::print::quiet() && std::io::IsTerminal::is_terminal(&std::io::stderr())).then(|| {
        let b = indicatif::ProgressBar::new(total);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} docs embedded ({per_sec}, eta {eta}) {elapsed_precise}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    });
    let mut last_note = start;
    let report = d.semantic_backfill(|left| {
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
