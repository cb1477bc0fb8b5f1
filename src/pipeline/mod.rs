//! The parallel ingestion pipeline: reader → N fingerprinting workers → one writer with group commit.
//!
//! Bounded crossbeam channels connect the stages, so memory stays flat however long the input is.
//! The writer restores input order before batching (dedup decisions and group canonicals are then the
//! same as a sequential insert loop), commits each batch with one segment fsync and one WAL sync, and
//! only then reports the batch's documents to the caller.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};

use crate::db::{Db, Dedup, InsertOutcome, NewDoc, Precheck, PreparedDoc};
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprinter;

/// A worker's output: the prepared document and its precheck, or why the item was rejected.
type Checked = Result<(PreparedDoc, Option<Precheck>)>;

/// Default documents per group commit (measured: 32.6K → 50.5K docs/s durable ingest going from 1024
/// to 4096, docs/performance.md, "Measured in git history").
pub const DEFAULT_BATCH_SIZE: usize = 4096;
/// Most input items a worker takes at once (what the input has ready, up to this): their duplicate
/// searches run together, each mirror bucket read once for all of them (`Db::precheck_many`).
const WORKER_CHUNK: usize = 1024;
/// Largest accepted [`IngestOptions::batch_size`].
pub const MAX_BATCH_SIZE: usize = 1_000_000;
/// Largest accepted [`IngestOptions::workers`].
pub const MAX_WORKERS: usize = 1024;

/// Pipeline settings. Build with [`IngestOptions::default`] and the `with_*` methods.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct IngestOptions {
    /// Fingerprinting threads (0 = one per core; at most [`MAX_WORKERS`]).
    pub workers: usize,
    /// Documents per group commit, at most (1..=[`MAX_BATCH_SIZE`]).
    pub batch_size: usize,
    /// A partial batch is committed once its first document has waited this long.
    pub batch_latency: Duration,
    /// What to do with near-duplicates.
    pub dedup: Dedup,
    /// Report containment relations: each document's [`InsertOutcome::containment`] lists the
    /// documents with containment at least this in either direction (needs the containment index;
    /// refused without it). Groups are not affected.
    pub containment: Option<f64>,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            workers: 0,
            batch_size: DEFAULT_BATCH_SIZE,
            batch_latency: Duration::from_millis(50),
            dedup: Dedup::Link,
            containment: None,
        }
    }
}

impl IngestOptions {
    /// With a number of fingerprinting threads (0 = one per core).
    pub fn with_workers(mut self, workers: usize) -> Self {
        self.workers = workers;
        self
    }

    /// With a batch size.
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size;
        self
    }

    /// With a batch latency.
    pub fn with_batch_latency(mut self, latency: Duration) -> Self {
        self.batch_latency = latency;
        self
    }

    /// With a dedup mode.
    pub fn with_dedup(mut self, dedup: Dedup) -> Self {
        self.dedup = dedup;
        self
    }

    /// Reporting containment relations at or above `c` ([`IngestOptions::containment`]).
    pub fn with_containment(mut self, c: f64) -> Self {
        self.containment = Some(c);
        self
    }
}

/// The fate of one input item, reported after its batch is durably committed.
#[derive(Debug)]
#[non_exhaustive]
pub struct DocResult {
    /// Position in the input (0-based).
    pub seq: u64,
    /// The outcome, or why this item was not stored.
    pub result: Result<InsertOutcome>,
    /// The last item of its batch: nothing more is reported until the next commit, which may wait
    /// for input. A caller that buffers what it reports flushes here (`fpdb ingest --json` does,
    /// so a consumer reading its acknowledgements through a pipe sees each batch at once).
    pub batch_end: bool,
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
    /// Documents with at least one containment relation (when asked for).
    pub with_containment: u64,
    /// Group commits.
    pub batches: u64,
    /// Bytes of text fingerprinted.
    pub text_bytes: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl IngestOptions {
    /// Checks the settings against their accepted ranges.
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_BATCH_SIZE).contains(&self.batch_size) {
            return Err(Error::InvalidOption {
                name: "batch_size",
                message: format!("must be within 1..={MAX_BATCH_SIZE}, got {}", self.batch_size),
            });
        }
        if self.workers > MAX_WORKERS {
            return Err(Error::InvalidOption {
                name: "workers",
                message: format!("must be within 0..={MAX_WORKERS} (0 = one per core), got {}", self.workers),
            });
        }
        Ok(())
    }
}

/// True for an input item error that rejects only that item (bad input); any other error from the
/// input (an I/O error reading it) or from a stage of the pipeline ends the ingest.
fn rejects_only_the_item(e: &Error) -> bool {
    matches!(e, Error::InvalidInput { .. })
}

/// The reader stage: numbers the input's items and sends them to the workers until the input ends,
/// `stop` is set, the workers are gone, or an item ends the ingest (a panic in the input included).
fn read_input(mut input: impl Iterator<Item = Result<NewDoc>>, work_tx: &Sender<(u64, Result<NewDoc>)>, stop: &AtomicBool) {
    let mut seq = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let item = match catch_unwind(AssertUnwindSafe(|| input.next())) {
            Ok(Some(item)) => item,
            Ok(None) => break,
            Err(p) => Err(Error::panicked("ingest input reader", p.as_ref())),
        };
        let fatal = item.as_ref().is_err_and(|e| !rejects_only_the_item(e));
        if work_tx.send((seq, item)).is_err() || fatal {
            break;
        }
        seq += 1;
    }
}

/// Counts one committed item's result into `stats`.
fn count_result(stats: &mut IngestStats, result: &Result<InsertOutcome>) {
    match result {
        Ok(o) if o.id.is_some() => {
            stats.with_containment += u64::from(!o.containment.is_empty());
            stats.stored += 1;
            stats.with_duplicates += u64::from(!o.duplicates.is_empty());
        }
        Ok(_) => stats.skipped += 1,
        Err(_) => stats.errors += 1,
    }
}

impl Db {
    /// One document, with what the pipeline takes for each of its items: its metadata (`doc.meta`,
    /// `doc.biblio`: title, year and DOI, stored and matched exactly) and, with `containment` C,
    /// the stored documents it contains or is contained in with containment ≥ C in either
    /// direction ([`InsertOutcome::containment`]; needs the containment index). The one place that
    /// decides a single insert for every front end: `fpdb insert`, Python's `insert`. Without
    /// metadata or containment it is [`Db::insert_with`].
    pub fn insert_doc(&self, doc: NewDoc, dedup: Dedup, containment: Option<f64>) -> Result<InsertOutcome> {
        if containment.is_none() && doc.meta.is_none() && doc.biblio.is_empty() {
            return self.insert_with(&doc.key, &doc.text, dedup);
        }
        let key = doc.key.clone();
        let doc = self.prepare(&mut self.fingerprinter(), doc)?;
        self.containment()
            .commit_prechecked(vec![Ok((doc, None))], dedup, containment)?
            .pop()
            .unwrap_or_else(|| Err(Error::input(Some(key.as_bytes()), "document was not processed")))
    }

    /// Ingests `input` through the pipeline; `on_done` is called for every item, in input order, after
    /// its batch committed. Input items that are [`Error::InvalidInput`] (e.g. a malformed line) are
    /// reported through `on_done`, not stored, and the rest of the input is ingested.
    ///
    /// Returns `Err` — within moments, never hanging — when the ingest cannot go on: a commit fails
    /// (I/O error, full disk, failed fsync: the handle is then poisoned), the input yields any other
    /// error (e.g. [`Error::Io`] reading it), or a pipeline thread panics ([`Error::Panicked`]). The
    /// documents before the failing item that could be committed are committed and reported first;
    /// nothing after it is stored. A reader blocked inside the input iterator (a silent pipe) is
    /// noticed when its next item arrives.
    pub fn ingest<I>(&self, input: I, opts: &IngestOptions, mut on_done: impl FnMut(DocResult)) -> Result<IngestStats>
    where
        I: IntoIterator<Item = Result<NewDoc>>,
        I::IntoIter: Send,
    {
        opts.validate()?;
        // Refuse before reading anything.
        if let Some(c) = opts.containment {
            crate::db::check_c(c)?;
            self.contain_cfg()?;
        }
        let started = Instant::now();
        let workers = crate::index::threads_or_cores(opts.workers);
        let batch_size = opts.batch_size;
        let dedup = opts.dedup;
        let (work_tx, work_rx) = bounded::<(u64, Result<NewDoc>)>(batch_size * 2);
        // Checked documents wait here for the writer, which must then compare each with every
        // document committed after its worker's snapshot (the gap scan): two chunks keep the writer
        // fed and the gap short (a queue of 2 × batch_size measured 2-5% slower at 1M documents).
        // Without dedup there is no gap scan, and a queue of two batches lets the workers go on
        // while the writer waits for its fsyncs (1M documents, `--dedup off`: +4-9%).
        let queue = if dedup == Dedup::Off { 2 * batch_size } else { 2 * WORKER_CHUNK };
        let (done_tx, done_rx) = bounded::<(u64, Checked, u64)>(queue);
        let stop = AtomicBool::new(false);
        let mut stats = IngestStats::default();
        let outcome = std::thread::scope(|s| -> Result<()> {
            // Owned by this closure: when the writer returns (an error included) the receiver is
            // dropped, every worker's send fails, the workers drop the work receiver, the reader's
            // send fails — and the scope joins promptly instead of waiting on full channels.
            let done_rx = done_rx;
            let stop = &stop;
            let input = input.into_iter();
            s.spawn(move || read_input(input, &work_tx, stop));
            for _ in 0..workers {
                let rx = work_rx.clone();
                let tx = done_tx.clone();
                s.spawn(move || self.ingest_worker(&rx, &tx, dedup));
            }
            drop(done_tx);
            drop(work_rx);
            let result = self.ingest_writer(&done_rx, opts, &mut stats, &mut on_done);
            if result.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            result
        });
        stats.seconds = started.elapsed().as_secs_f64();
        outcome.map(|()| stats)
    }

    /// A worker stage: checks chunks of input items ([`Db::check_chunk`]) and sends the results on,
    /// until the input ends, the writer is gone, or an item ends the ingest (a panic included).
    fn ingest_worker(&self, rx: &Receiver<(u64, Result<NewDoc>)>, tx: &Sender<(u64, Checked, u64)>, dedup: Dedup) {
        let mut fpr = self.fingerprinter();
        let mut chunk: Vec<(u64, Result<NewDoc>)> = Vec::with_capacity(WORKER_CHUNK);
        // A chunk is what the input has ready, up to WORKER_CHUNK items: the first is
        // waited for, the rest only taken if already there, so a slow stream is never
        // held back to fill a chunk.
        while let Ok(first) = rx.recv() {
            chunk.push(first);
            while chunk.len() < WORKER_CHUNK {
                match rx.try_recv() {
                    Ok(item) => chunk.push(item),
                    Err(_) => break,
                }
            }
            let first_seq = chunk[0].0;
            let checked = catch_unwind(AssertUnwindSafe(|| self.check_chunk(&mut fpr, &mut chunk, dedup)));
            match checked {
                Ok(items) => {
                    for item in items {
                        let fatal = item.1.as_ref().is_err_and(|e| !rejects_only_the_item(e));
                        if tx.send(item).is_err() || fatal {
                            return;
                        }
                    }
                }
                Err(p) => {
                    // The chunk's first item carries the panic: the writer commits
                    // everything before it and ends the ingest there.
                    let _ = tx.send((first_seq, Err(Error::panicked("ingest worker", p.as_ref())), 0));
                    return;
                }
            }
        }
    }

    /// A worker's step for one chunk of input items, in input order: fingerprints each document
    /// and — unless dedup is off — verifies the chunk's duplicates against the committed documents
    /// in one batched search ([`Db::precheck_many`]), so the single writer only checks what was
    /// committed since and its own batch. Returns `(seq, checked, text bytes)` per item; a failure
    /// of the whole search is reported at the chunk's first document and nothing after it.
    fn check_chunk(&self, fpr: &mut Fingerprinter, chunk: &mut Vec<(u64, Result<NewDoc>)>, dedup: Dedup) -> Vec<(u64, Checked, u64)> {
        let mut items: Vec<(u64, Result<PreparedDoc>, u64)> = chunk
            .drain(..)
            .map(|(seq, item)| {
                crate::failpoint::panic_point("ingest.worker");
                let bytes = item.as_ref().map_or(0, |d| d.text.len() as u64);
                (seq, item.and_then(|d| self.prepare(fpr, d)), bytes)
            })
            .collect();
        if dedup == Dedup::Off {
            return items
                .into_iter()
                .map(|(seq, d, bytes)| (seq, d.map(|d| (d, None)), bytes))
                .collect();
        }
        let docs: Vec<&PreparedDoc> = items.iter().filter_map(|(_, d, _)| d.as_ref().ok()).collect();
        match self.precheck_many(&docs) {
            Ok(pres) => {
                let mut pres = pres.into_iter();
                items
                    .into_iter()
                    .map(|(seq, d, bytes)| {
                        let checked = d.and_then(|d| match pres.next() {
                            Some(pre) => pre.map(|p| (d, Some(p))),
                            None => Err(Error::Panicked {
                                stage: "ingest worker",
                                message: "the batched precheck returned fewer results than documents".into(),
                            }),
                        });
                        (seq, checked, bytes)
                    })
                    .collect()
            }
            Err(e) => {
                let cut = items.iter().position(|(_, d, _)| d.is_ok()).unwrap_or(items.len());
                let mut out: Vec<(u64, Checked, u64)> = items
                    .drain(..cut)
                    .map(|(seq, d, bytes)| (seq, d.map(|d| (d, None)), bytes))
                    .collect();
                if let Some((seq, _, bytes)) = items.into_iter().next() {
                    out.push((seq, Err(e), bytes));
                }
                out
            }
        }
    }

    /// Commits the writer's `batch` (emptying it) and reports each item through `on_done`, the
    /// last one marked as the batch's end. An error here ends the ingest.
    fn commit_and_report(
        &self,
        batch: &mut Vec<(u64, Checked)>,
        opts: &IngestOptions,
        stats: &mut IngestStats,
        on_done: &mut impl FnMut(DocResult),
    ) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let seqs: Vec<u64> = batch.iter().map(|(s, _)| *s).collect();
        let docs: Vec<Checked> = batch.drain(..).map(|(_, d)| d).collect();
        let results = catch_unwind(AssertUnwindSafe(|| {
            self.containment().commit_prechecked(docs, opts.dedup, opts.containment)
        }))
        .unwrap_or_else(|p| Err(Error::panicked("writer", p.as_ref())))?;
        stats.batches += 1;
        let last = seqs.last().copied();
        for (seq, result) in seqs.into_iter().zip(results) {
            count_result(stats, &result);
            on_done(DocResult {
                seq,
                result,
                batch_end: Some(seq) == last,
            });
        }
        Ok(())
    }

    /// The writer stage: restores input order, group-commits batches, reports each item once its
    /// batch is durable. Returns the first error that ends the ingest (see [`Db::ingest`]).
    fn ingest_writer(
        &self,
        done_rx: &Receiver<(u64, Checked, u64)>,
        opts: &IngestOptions,
        stats: &mut IngestStats,
        on_done: &mut impl FnMut(DocResult),
    ) -> Result<()> {
        let batch_size = opts.batch_size;
        let mut pending: BTreeMap<u64, Checked> = BTreeMap::new();
        let mut next = 0u64;
        let mut batch: Vec<(u64, Checked)> = Vec::with_capacity(batch_size.min(1 << 16));
        let mut deadline: Option<Instant> = None;
        let mut flush = |batch: &mut Vec<(u64, Checked)>, stats: &mut IngestStats| self.commit_and_report(batch, opts, stats, on_done);
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
                        if let Err(e) = &doc {
                            if !rejects_only_the_item(e) {
                                // Everything before it is in `batch`, in order: commit and report
                                // that, then stop with the error.
                                flush(&mut batch, stats)?;
                                return doc.map(|_| ());
                            }
                        }
                        batch.push((next, doc));
                        next += 1;
                        deadline.get_or_insert_with(|| Instant::now() + opts.batch_latency);
                        if batch.len() >= batch_size {
                            flush(&mut batch, stats)?;
                            deadline = None;
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    flush(&mut batch, stats)?;
                    deadline = None;
                }
                Err(RecvTimeoutError::Disconnected) => {
                    if !pending.is_empty() {
                        // Unreachable by construction (a worker reports its own panic); kept as a
                        // typed error rather than a silent short result.
                        return Err(Error::Panicked {
                            stage: "ingest worker",
                            message: format!("item {next} never arrived from the workers"),
                        });
                    }
                    return flush(&mut batch, stats);
                }
            }
        }
    }
}
