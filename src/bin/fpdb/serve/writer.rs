//! The writer thread: single-document writes (`PUT`) wait in one bounded queue; the thread takes
//! every queued document (up to `batch_size`), commits them with one group commit
//! (`Db::commit_prechecked`: one segment fsync, one WAL sync) and answers each request once its
//! document is durable. While a commit runs, new requests queue up and share the next one, so the
//! fsync cost is spread over the concurrent clients. A full queue refuses at once (429): memory
//! stays bounded by `queue_depth` prepared documents.

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

pub struct Writer {
    tx: Mutex<Option<Sender<Job>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    metrics: Arc<Metrics>,
}

impl Writer {
    pub fn start(db: Db, queue_depth: usize, batch_size: usize, metrics: Arc<Metrics>) -> Arc<Writer> {
        let (tx, rx) = bounded::<Job>(queue_depth);
        let m = metrics.clone();
        let thread = std::thread::Builder::new()
            .name("fpdb-writer".into())
            .spawn(move || run(db, rx, batch_size, m))
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

fn run(db: Db, rx: Receiver<Job>, batch_size: usize, metrics: Arc<Metrics>) {
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
        // One commit per run of equal dedup modes (the mode is a per-batch setting of the engine).
        while !batch.is_empty() {
            let mode = batch[0].dedup;
            let n = batch.iter().take_while(|j| j.dedup == mode).count();
            let run: Vec<Job> = batch.drain(..n).collect();
            let (docs, replies): (Vec<_>, Vec<_>) = run.into_iter().map(|j| (Ok((j.doc, j.pre)), j.reply)).unzip();
            match db.commit_prechecked(docs, mode) {
                Ok(results) => {
                    metrics.batches.fetch_add(1, Ordering::Relaxed);
                    metrics.batch_docs.fetch_add(results.len() as u64, Ordering::Relaxed);
                    for (reply, r) in replies.into_iter().zip(results) {
                        let _ = reply.send(r.map_err(ApiError::from));
                    }
                }
                Err(e) => {
                    let e = ApiError::from(e);
                    eprintln!("fpdb serve: group commit failed: {} ({})", e.code, e.message);
                    for reply in replies {
                        let _ = reply.send(Err(e.clone()));
                    }
                }
            }
        }
    }
}
