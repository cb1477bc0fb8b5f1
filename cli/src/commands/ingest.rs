//! `fpdb ingest`: many documents through the library's pipeline ([`fpdb::Db::ingest`]); one line
//! per document after its batch is durable, a progress bar on a terminal, a summary on stderr (one
//! JSON object with `--json`: stdout holds only the documents' lines, which consumers read one
//! outcome per line).

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use fpdb::IngestOptions;

use crate::cli::IngestArgs;
use crate::print::{fmt_j, outcome_line, print_relations, rejection_line};
use fpdb::input;

pub struct Config {
    pub db: PathBuf,
    /// A JSONL file, a directory, or `-` (JSONL on stdin).
    pub input: String,
    pub key_field: String,
    pub text_field: String,
    pub opts: IngestOptions,
    /// No progress bar (`--no-progress`, or `-q`).
    pub no_progress: bool,
    /// A directory input: hidden files and directories too (`--hidden`).
    pub hidden: bool,
    pub sync: bool,
}

impl From<IngestArgs> for Config {
    fn from(a: IngestArgs) -> Config {
        Config {
            db: a.db,
            input: a.input,
            key_field: a.key_field,
            text_field: a.text_field,
            opts: {
                let mut o = IngestOptions::default()
                    .with_workers(a.workers)
                    .with_batch_size(a.batch_size)
                    .with_batch_latency(Duration::from_millis(a.batch_latency_ms))
                    .with_dedup(a.dedup.into());
                o.containment = a.containment;
                o
            },
            no_progress: a.no_progress || crate::print::quiet(),
            hidden: a.hidden,
            sync: !a.write.no_sync,
        }
    }
}

/// The exit code of an ingest stopped by Ctrl-C or SIGTERM after committing what it had read (the
/// shell's code for a SIGINT death; `cli::EXIT_CODES`).
const INTERRUPTED: u8 = 130;

/// The first SIGINT or SIGTERM sets the returned flag (the input is then read no further); a
/// second one, with the flag set, exits at once with [`INTERRUPTED`]: what was acknowledged is
/// durable either way, as after a crash. `None` where the handlers cannot be installed: the
/// signals then kill the process as before.
fn stop_on_signals() -> Option<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // The exit goes first, so that the signal that sets the flag does not also exit.
        signal_hook::flag::register_conditional_shutdown(sig, i32::from(INTERRUPTED), stop.clone()).ok()?;
        signal_hook::flag::register(sig, stop.clone()).ok()?;
    }
    Some(stop)
}

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let d = super::open(&cfg.db, cfg.sync)?;
    let origins = input::Origins::default();
    let mut items = input::open(&cfg.input, &cfg.key_field, &cfg.text_field, cfg.hidden, &origins)?;
    // After a stop signal the next item is not read: the pipeline commits what it holds and ends
    // as at the end of the input.
    let stopping = stop_on_signals();
    let cut = Arc::new(AtomicBool::new(false));
    let cutting = cut.clone();
    let items = std::iter::from_fn(move || {
        if stopping.as_ref().is_some_and(|s| s.load(Ordering::SeqCst)) {
            cutting.store(true, Ordering::SeqCst);
            None
        } else {
            items.next()
        }
    });
    let mut last_origin: Option<String> = None;
    let bar = (!cfg.no_progress && io::stderr().is_terminal()).then(progress_bar);
    let started = Instant::now();
    let mut write_err: Option<io::Error> = None;
    let stats = d.ingest(items, &cfg.opts, |r| {
        if let Some(b) = &bar {
            b.inc(1);
        }
        // Taken for every item, in order, so the log holds only what is in flight.
        let origin = input::lock(&origins).take(r.seq);
        last_origin.clone_from(&origin);
        let res = print_item(out, json, &r, origin, bar.as_ref());
        // A batch's lines go out together, at once: a consumer reading them through a pipe must
        // not wait for the buffer to fill (or for the end of the input) to see its acknowledgements.
        let res = res.and_then(|()| if r.batch_end { out.flush() } else { Ok(()) });
        if let Err(e) = res {
            write_err.get_or_insert(e);
        }
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    // What was reported is durable: flush it before an error ends the run.
    out.flush()?;
    if let Some(e) = write_err {
        return Err(e.into());
    }
    let stats = stats?;
    // The close's work, timed with the rest: the containment tail and RocksDB's memtables go to
    // files now, so the rate below is what the whole command costs (the drop then has nothing left).
    let flushing = Instant::now();
    d.flush()?;
    let flush_secs = flushing.elapsed().as_secs_f64();
    let records_skipped = input::lock(&origins).skipped_records();
    print_summary(
        &cfg,
        &stats,
        started.elapsed().as_secs_f64().max(1e-9),
        flush_secs,
        json,
        records_skipped,
    );
    if cut.load(Ordering::SeqCst) {
        eprintln!(
            "fpdb: interrupted: the input was read up to {}, and every item read is committed (or reported \
             above); the rest was not read",
            last_origin.as_deref().unwrap_or("its start")
        );
        return Ok(ExitCode::from(INTERRUPTED));
    }
    Ok(if stats.errors > 0 { ExitCode::from(6) } else { ExitCode::SUCCESS })
}

/// The spinner on a terminal: documents ingested, rate, time.
fn progress_bar() -> indicatif::ProgressBar {
    let b = indicatif::ProgressBar::new_spinner();
    b.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {pos} docs ingested ({per_sec}) {elapsed_precise}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    b.enable_steady_tick(Duration::from_millis(200));
    b
}

/// One item's report once its batch is durable: its `--json` line, or a line for a skipped or
/// near-duplicate document and its containment relations; a rejected item also on stderr.
fn print_item(
    out: &mut impl Write,
    json: bool,
    r: &fpdb::DocResult,
    origin: Option<String>,
    bar: Option<&indicatif::ProgressBar>,
) -> io::Result<()> {
    match &r.result {
        Ok(o) if json => outcome_line(out, o),
        Ok(o) => {
            if o.id.is_none() {
                writeln!(
                    out,
                    "skipped {:?}: duplicates {}",
                    o.key,
                    o.duplicates
                        .first()
                        .map_or(String::new(), |h| format!("{:?} (J = {})", h.key, fmt_j(h.jaccard)))
                )?;
            } else if let (Some(h), Some(id)) = (o.duplicates.first(), o.id) {
                writeln!(
                    out,
                    "stored {:?} as doc {id}: near-duplicate of {:?} (J = {}), group {}",
                    o.key,
                    h.key,
                    fmt_j(h.jaccard),
                    o.group.as_ref().map_or(id, |g| g.id)
                )?;
            }
            print_relations(out, o)
        }
        Err(e) => {
            let origin = origin.unwrap_or_else(|| format!("item {}", r.seq + 1));
            let line = input::rejection(&origin, e);
            if let Some(b) = bar {
                b.suspend(|| eprintln!("fpdb: rejected {line}"));
            } else {
                eprintln!("fpdb: rejected {line}");
            }
            if json {
                rejection_line(out, r.seq, &origin, e)
            } else {
                Ok(())
            }
        }
    }
}

/// The summary on stderr (left out under `-q`): a sentence, or with `--json` one JSON object
/// `{"summary": {items, stored, skipped, with_duplicates, errors, with_containment, batches,
/// text_bytes, seconds, flush_seconds, records_skipped}}` (`records_skipped`: the WARC records
/// that held no document).
fn print_summary(cfg: &Config, stats: &fpdb::IngestStats, secs: f64, flush_secs: f64, json: bool, records_skipped: (u64, String)) {
    if json {
        let mut v = serde_json::to_value(stats).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("seconds".into(), secs.into());
            o.insert("flush_seconds".into(), flush_secs.into());
            o.insert("records_skipped".into(), records_skipped.0.into());
        }
        crate::print::note!("{}", serde_json::json!({ "summary": v }));
        return;
    }
    let records = if records_skipped.0 > 0 {
        format!(
            "; {} WARC records without a document skipped ({})",
            records_skipped.0, records_skipped.1
        )
    } else {
        String::new()
    };
    crate::print::note!(
        "fpdb: ingested {} items in {:.2} s ({:.2} s of it the final flush): {} stored, {} skipped as duplicates, {} with near-duplicates, {}{} rejected; {:.0} docs/s, {:.1} MB/s, {} batches{records}",
        stats.items,
        secs,
        flush_secs,
        stats.stored,
        stats.skipped,
        stats.with_duplicates,
        if cfg.opts.containment.is_some() { format!("{} with containment relations, ", stats.with_containment) } else { String::new() },
        stats.errors,
        stats.items as f64 / secs,
        stats.text_bytes as f64 / secs / 1e6,
        stats.batches
    );
}
