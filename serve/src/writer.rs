//! The writer thread: single-document writes (`PUT`) wait in one bounded queue; the thread takes
//! every queued document (up to `batch_size`), commits them with one group commit
//! (`Db::commit_prechecked`: one segment fsync, one WAL sync) and answers each request once its
//! document is durable. While a commit runs, new requests queue up and share the next one, so the
//! fsync cost is spread over the concurrent clients. A full queue refuses at once (429): memory
//! stays bounded by `queue_depth` prepared documents.
//!
//! A batch holding several dedup modes is committed as one commit per mode (stable order within
//! each), never one commit per change of mode: clients alternating modes still share fsyncs.
//! A panic in the library during a commit is caught: the batch's requests get 503 `unavailable`,
//! the handle is poisoned (the library's `in_progress` mark), [`Health`] records it and `/healthz`
//! answers 503 so that an orchestrator restarts the process.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{bounded, Receiver, Sender, TrySendError};
use fpdb::{Db, Dedup, InsertOutcome};
use fpdb::{Precheck, PreparedDoc};
use parking_lot::Mutex;
use tokio::sync::oneshot;

use super::errors::ApiError;
use super::metrics::Metrics;

pub struct Job {
    pub doc: PreparedDoc,
    pub pre: Option<Precheck>,
    pub dedup: Dedup,
    pub reply: oneshot::Sender<Result<InsertOutcome, ApiError>>,
}

/// Whether the server can still write: set once, by the first fatal failure (a panic, or an error
/// that poisons the handle); `/healthz` answers 503 with the reason from then on.
#[derive(Default)]
pub struct Health {
    failed: Mutex<Option<String>>,
}

impl Health {
    /// Records the first fatal failure (a short reason without paths or panic texts: `/healthz`
    /// is public).
    pub fn fail(&self, reason: impl Into<String>) {
        let mut g = self.failed.lock();
        if g.is_none() {
            *g = Some(reason.into());
        }
    }

    /// The reason the server can no longer write, if it cannot.
    pub fn failed(&self) -> Option<String> {
        self.failed.lock().clone()
    }

    /// Notes a library error of a write: a fatal one marks the server failed.
    pub fn note(&self, what: &str, e: &fpdb::Error) {
        if ApiError::is_fatal(e) {
            self.fail(format!(
                "{what} failed ({}); the database is closed to writes: restart the server",
                ApiError::of(e).code
            ));
        }
    }
}

pub struct Writer {
    tx: Mutex<Option<Sender<Job>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    metrics: Arc<Metrics>,
}

impl Writer {
    pub fn start(db: Db, queue_depth: usize, batch_size: usize, metrics: Arc<Metrics>, health: Arc<Health>) -> Arc<Writer> {
        let (tx, rx) = bounded::<Job>(queue_depth);
        let m = metrics.clone();
        let thread = std::thread::Builder::new()
            .name("fpdb-writer".into())
            .spawn(move || run(db, rx, batch_size, m, health))
            .ok();
        Arc::new(Writer {
            tx: Mutex::new(thread.is_some().then_some(tx)),
            thread: Mutex::new(thread),
            metrics,
        })
    }

    /// Whether a job would be refused right now (checked before fingerprinting, to shed load early).
    pub fn is_full(&self) -> bool {
        self.tx.lock().as_ref().is_none_or(|tx| tx.is_full())
    }

    /// Queues a job: 429 when the queue is full, 503 when the server is shutting down.
    pub fn submit(&self, job: Job) -> Result<(), ApiError> {
        let guard = self.tx.lock();
        let Some(tx) = guard.as_ref() else {
            return Err(ApiError::shutting_down());
        };
        match tx.try_send(job) {
            Ok(()) => {
                self.metrics.queue_depth.store(tx.len() as u64, Ordering::Relaxed);
                Ok(())
            }
            Err(TrySendError::Full(_)) => {
                self.metrics.rejected_busy.fetch_add(1, Ordering::Relaxed);
                Err(ApiError::queue_full("the writer queue is full (--queue-depth)"))
            }
            Err(TrySendError::Disconnected(_)) => Err(ApiError::shutting_down()),
        }
    }

    /// Stops accepting jobs, lets the thread commit what is queued, and joins it.
    pub fn close(&self) -> anyhow::Result<()> {
        drop(self.tx.lock().take());
        if let Some(t) = self.thread.lock().take() {
            t.join().map_err(|_| anyhow::anyhow!("the writer thread panicked"))?;
        }
        Ok(())
    }
}

fn run(db: Db, rx: Receiver<Job>, batch_size: usize, metrics: Arc<Metrics>, health: Arc<Health>) {
    let mut batch: Vec<Job> = Vec::with_capacity(batch_size);
    while let Ok(first) = rx.recv() {
        batch.push(first);
        while batch.len() < batch_size {
            match rx.try_recv() {
                Ok(j) => batch.push(j),
                Err(_) => break,
            }
        }
        metrics.queue_depth.store(rx.len() as u64, Ordering::Relaxed);
        // One commit per dedup mode of the batch (the mode is a per-batch setting of the engine).
        for run in by_mode(std::mem::take(&mut batch), |j: &Job| j.dedup) {
            let mode = run[0].dedup;
            let (docs, replies): (Vec<_>, Vec<_>) = run.into_iter().map(|j| (Ok((j.doc, j.pre)), j.reply)).unzip();
            let result = std::panic::catch_unwind(AssertUnwindSafe(|| db.commit_prechecked(docs, mode)));
            match result {
                Ok(Ok(results)) => {
                    metrics.batches.fetch_add(1, Ordering::Relaxed);
                    metrics.batch_docs.fetch_add(results.len() as u64, Ordering::Relaxed);
                    for (reply, r) in replies.into_iter().zip(results) {
                        let _ = reply.send(r.map_err(ApiError::from));
                    }
                }
                Ok(Err(e)) => {
                    health.note("a group commit", &e);
                    let e = ApiError::from(e);
                    tracing::error!(
                        code = e.code,
                        "group commit failed: {} ({})",
                        e.code,
                        e.detail.as_deref().unwrap_or(&e.message)
                    );
                    for reply in replies {
                        let _ = reply.send(Err(e.clone()));
                    }
                }
                Err(payload) => {
                    let text = payload
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| payload.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "a non-text panic".into());
                    tracing::error!("the writer thread panicked in a group commit: {text}");
                    health.fail("the writer panicked during a group commit; the database is closed to writes: restart the server");
                    let e = ApiError::new(
                        axum::http::StatusCode::SERVICE_UNAVAILABLE,
                        "unavailable",
                        "the server failed while committing this document and is closed to writes; restart it (the document may not be stored: GET it after the restart)",
                    )
                    .with_detail(format!("writer panic: {text}"));
                    for reply in replies {
                        let _ = reply.send(Err(e.clone()));
                    }
                }
            }
        }
    }
}

/// The batch split into one run per dedup mode, in the order each mode first appears; the jobs of
/// a run keep their queue order.
fn by_mode<T>(mut batch: Vec<T>, mode: impl Fn(&T) -> Dedup) -> Vec<Vec<T>> {
    let mut runs = Vec::new();
    while let Some(m) = batch.first().map(&mode) {
        let (run, rest): (Vec<T>, Vec<T>) = batch.into_iter().partition(|j| mode(j) == m);
        runs.push(run);
        batch = rest;
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternating_modes_make_one_commit_per_mode() {
        use Dedup::{Link, Off, Skip};
        let batch: Vec<(Dedup, usize)> = [Link, Off, Link, Off, Skip, Link, Off].into_iter().zip(0..).collect();
        let runs = by_mode(batch, |j| j.0);
        let ids: Vec<Vec<usize>> = runs.iter().map(|r| r.iter().map(|j| j.1).collect()).collect();
        assert_eq!(ids, [vec![0, 2, 5], vec![1, 3, 6], vec![4]]);
        assert!(runs.iter().all(|r| r.iter().all(|j| j.0 == r[0].0)));
        assert!(by_mode(Vec::<(Dedup, usize)>::new(), |j| j.0).is_empty());
    }
}
