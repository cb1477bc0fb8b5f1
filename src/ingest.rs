//! The parallel ingestion pipeline: reader → N fingerprinting workers → one writer with group commit.
//!
//! Bounded crossbeam channels connect the stages, so memory stays flat however long the input is.
//! The writer restores input order before batching (dedup decisions and group canonicals are then the
//! same as a sequential insert loop), commits each batch with one segment fsync and one WAL sync, and
//! only then reports the batch's documents to the caller.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, RecvTimeoutError};

use crate::db::{Db, Dedup, InsertOutcome, NewDoc, Precheck, PreparedDoc};
use crate::error::{Error, Result};

/// A worker's output: the prepared document and its precheck, or why the item was rejected.
type Checked = Result<(PreparedDoc, Option<Precheck>)>;

/// Pipeline settings.
#[derive(Clone, Debug)]
pub struct IngestOptions {
    /// Fingerprinting threads (0 = one per core).
    pub workers: usize,
    /// Documents per group commit, at most.
    pub batch_size: usize,
    /// A partial batch is committed once its first document has waited this long.
    pub batch_latency: Duration,
    /// What to do with near-duplicates.
    pub dedup: Dedup,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            workers: 0,
            batch_size: 4096,
            batch_latency: Duration::from_millis(50),
            dedup: Dedup::Link,
        }
    }
}

/// The fate of one input item, reported after its batch is durably committed.
#[derive(Debug)]
pub struct DocResult {
    /// Position in the input (0-based).
    pub seq: u64,
    /// The outcome, or why this item was not stored.
    pub result: Result<InsertOutcome>,
}

/// Totals of one ingest run.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct IngestStats {
    /// Input items seen.
    pub items: u64,
    /// Documents stored.
    pub stored: u64,
    /// Documents not stored because they duplicate a stored one (`Dedup::Skip`).
    pub skipped: u64,
    /// Stored documents that had at least one verified near-duplicate.
    pub with_duplicates: u64,
    /// Items rejected (bad input).
    pub errors: u64,
    /// Group commits.
    pub batches: u64,
    /// Bytes of text fingerprinted.
    pub text_bytes: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl Db {
    /// Ingests `input` through the pipeline; `on_done` is called for every item, in input order, after
    /// its batch committed. Input items that are `Err` (e.g. a malformed line) are reported, not stored.
    /// Returns `Err` only when a commit fails (the remaining input is not consumed).
    pub fn ingest<I>(&self, input: I, opts: &IngestOptions, mut on_done: impl FnMut(DocResult)) -> Result<IngestStats>
    where
        I: IntoIterator<Item = Result<NewDoc>>,
        I::IntoIter: Send,
    {
        let started = Instant::now();
        let workers = if opts.workers == 0 {
            std::thread::available_parallelism().map_or(2, |n| n.get())
        } else {
            opts.workers
        };
        let batch_size = opts.batch_size.max(1);
        let (work_tx, work_rx) = bounded::<(u64, Result<NewDoc>)>(batch_size * 2);
        let (done_tx, done_rx) = bounded::<(u64, Checked, u64)>(batch_size * 2);
        let mut stats = IngestStats::default();
        let dedup = opts.dedup;
        let outcome = std::thread::scope(|s| -> Result<()> {
            let input = input.into_iter();
            s.spawn(move || {
                for (seq, item) in input.enumerate() {
                    if work_tx.send((seq as u64, item)).is_err() {
                        break;
                    }
                }
            });
            for _ in 0..workers {
                let rx = work_rx.clone();
                let tx = done_tx.clone();
                s.spawn(move || {
                    let mut fpr = self.fingerprinter();
                    for (seq, item) in rx {
                        let bytes = item.as_ref().map_or(0, |d| d.text.len() as u64);
                        // Workers also verify duplicates against the committed documents, so the
                        // single writer only checks what was committed since and its own batch.
                        let prepared = item.and_then(|d| self.prepare(&mut fpr, d)).and_then(|d| {
                            let pre = if dedup == Dedup::Off { None } else { Some(self.precheck(&d)?) };
                            Ok((d, pre))
                        });
                        if tx.send((seq, prepared, bytes)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(done_tx);
            drop(work_rx);
            let mut pending: BTreeMap<u64, Checked> = BTreeMap::new();
            let mut next = 0u64;
            let mut batch: Vec<(u64, Checked)> = Vec::with_capacity(batch_size);
            let mut deadline: Option<Instant> = None;
            let mut flush = |batch: &mut Vec<(u64, Checked)>, stats: &mut IngestStats| -> Result<()> {
                if batch.is_empty() {
                    return Ok(());
                }
                let seqs: Vec<u64> = batch.iter().map(|(s, _)| *s).collect();
                let docs: Vec<Checked> = batch.drain(..).map(|(_, d)| d).collect();
                let results = self.commit_prechecked(docs, opts.dedup)?;
                stats.batches += 1;
                for (seq, result) in seqs.into_iter().zip(results) {
                    match &result {
                        Ok(o) if o.id.is_some() => {
                            stats.stored += 1;
                            stats.with_duplicates += u64::from(!o.duplicates.is_empty());
                        }
                        Ok(_) => stats.skipped += 1,
                        Err(_) => stats.errors += 1,
                    }
                    on_done(DocResult { seq, result });
                }
                Ok(())
            };
            loop {
                let msg = match deadline {
                    Some(d) => done_rx.recv_timeout(d.saturating_duration_since(Instant::now())),
                    None => done_rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                };
                match msg {
                    Ok((seq, doc, bytes)) => {
                        stats.items += 1;
                        stats.text_bytes += bytes;
                        pending.insert(seq, doc);
                        while let Some(doc) = pending.remove(&next) {
                            batch.push((next, doc));
                            next += 1;
                            deadline.get_or_insert_with(|| Instant::now() + opts.batch_latency);
                            if batch.len() >= batch_size {
                                flush(&mut batch, &mut stats)?;
                                deadline = None;
                            }
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {
                        flush(&mut batch, &mut stats)?;
                        deadline = None;
                    }
                    Err(RecvTimeoutError::Disconnected) => {
                        if !pending.is_empty() {
                            return Err(Error::input(
                                None,
                                "a fingerprinting worker stopped early (panic?); the handle is unchanged past the last reported document",
                            ));
                        }
                        return flush(&mut batch, &mut stats);
                    }
                }
            }
        });
        stats.seconds = started.elapsed().as_secs_f64();
        outcome.map(|()| stats)
    }
}
