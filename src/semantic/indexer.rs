//! The background indexer: embeds acknowledged documents after the text path has stored them.
//!
//! One thread walks a durable cursor over the doc ids: it asks the [`Corpus`] for the next batch of
//! live documents at or above the cursor, embeds them (on the embedder's bounded pool), and hands
//! the vectors and the new cursor to [`Corpus::commit`], which writes both in ONE RocksDB
//! `WriteBatch` ([`super::store::stage_vectors`]). So at every instant the durable state is
//! "every live doc below the cursor has exactly one vector, none at or above it has one": a kill -9
//! anywhere loses at most the batch in flight, and the next start resumes at the durable cursor —
//! nothing embedded twice into the index, nothing skipped.
//!
//! Failures: a document the model fails on alone (its batch is embedded again one text at a time
//! to find it), or whose queued value does not decode, is set aside — committed with the batch as
//! a set-aside entry ([`super::store::Aside`]) instead of a vector, the cursor moving past it — so
//! one bad document never stops the channel. Any other error of a step (a RocksDB read or write,
//! the writer lock of a poisoned handle) leaves the durable cursor where it was and is retried
//! after a backoff that doubles from [`IndexerOptions::retry_min`] to [`IndexerOptions::retry_max`];
//! meanwhile the state is [`IndexerState::Degraded`] with that error, back to `Running` at the
//! next commit. Only a closed database, a scan that does not advance or a panic stop the thread
//! ([`IndexerState::Stopped`]).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::error::{Result, SemanticError};
use super::model::Embedder;
use super::store::Aside;
use super::vector::{encode, quantize, Hyperplanes, StoredVector};
use crate::Error;

/// One batch of work from the corpus.
#[derive(Clone, Debug, Default)]
pub struct Scan {
    /// Live documents with id ≥ the cursor, ascending, each with the text to embed (the spec's
    /// field, or the document's text).
    pub docs: Vec<(u64, String)>,
    /// Documents among them whose queued text cannot be read (why): set aside.
    pub unreadable: Vec<(u64, String)>,
    /// Where the cursor may move once these are stored: above every id scanned (deleted ids
    /// included), at most [`Corpus::acknowledged`].
    pub next: u64,
}

/// What the indexer needs from the database. The db/ integration implements it; the tests implement
/// it over a bare RocksDB ([`super::testkit::RocksCorpus`]).
pub trait Corpus: Send + Sync + 'static {
    /// Up to `max` live documents at or above `from` (see [`Scan`]).
    fn scan(&self, from: u64, max: usize) -> Result<Scan>;
    /// One past the highest acknowledged doc id (the text path's `next_doc`).
    fn acknowledged(&self) -> u64;
    /// Durably writes `vectors` (encoded records) and the set-aside entries `aside` (id, kind,
    /// reason), and moves the cursor from `from` to `cursor`, in ONE WriteBatch, leaving out
    /// documents deleted since [`Corpus::scan`] read them, then publishes them to the queries.
    fn commit(&self, vectors: Vec<(u64, StoredVector, Vec<u8>)>, aside: Vec<(u64, Aside, String)>, from: u64, cursor: u64) -> Result<()>;
}

/// The indexer's settings.
#[derive(Clone, Debug)]
pub struct IndexerOptions {
    /// Documents per commit (one embed call, one WriteBatch).
    pub batch: usize,
    /// How often an idle indexer looks for new documents without being notified.
    pub poll: Duration,
    /// The first wait before a failed step is tried again.
    pub retry_min: Duration,
    /// The longest wait between two tries of a failed step.
    pub retry_max: Duration,
}

impl Default for IndexerOptions {
    fn default() -> Self {
        IndexerOptions {
            batch: 32,
            poll: Duration::from_millis(200),
            retry_min: Duration::from_millis(100),
            retry_max: Duration::from_secs(30),
        }
    }
}

/// The semantic channel of a database as health checks see it (`SemanticIndex::status`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct SemanticStatus {
    /// `running`, `degraded` (a failed step being retried, or documents set aside), `stopped`,
    /// or `off` (this handle runs no indexer: read-only, or `SemanticOptions::indexer` off).
    pub state: &'static str,
    /// Why it is degraded or stopped.
    pub reason: Option<String>,
    /// Live documents set aside (the model failed on them, or their queued text was unreadable).
    pub set_aside: u64,
    /// Failed tries of the indexer's steps since the handle opened (each retried after a backoff).
    pub retries: u64,
    /// Documents the indexer embedded since the handle opened.
    pub embedded: u64,
}

/// What the indexer is doing.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IndexerState {
    /// Embedding, or waiting for documents.
    Running,
    /// Its last step failed (`reason`) and is being retried ([`IndexerOptions::retry_min`]).
    Degraded {
        /// The error of the last try.
        reason: String,
        /// Tries that failed since the last commit.
        failures: u64,
    },
    /// Ended by an error it cannot retry (`reason`): reopen the database.
    Stopped {
        /// Why.
        reason: String,
    },
}

impl IndexerState {
    /// `running`, `degraded` or `stopped`.
    pub fn word(&self) -> &'static str {
        match self {
            IndexerState::Running => "running",
            IndexerState::Degraded { .. } => "degraded",
            IndexerState::Stopped { .. } => "stopped",
        }
    }

    /// The reason of a degraded or stopped indexer.
    pub fn reason(&self) -> Option<&str> {
        match self {
            IndexerState::Running => None,
            IndexerState::Degraded { reason, .. } | IndexerState::Stopped { reason } => Some(reason),
        }
    }
}

#[derive(Debug)]
struct State {
    cursor: u64,
    stop: bool,
    wake: bool,
    error: Option<String>,
    /// The last failed try of a step and the number of failures since the last commit.
    degraded: Option<(String, u64)>,
    /// Failed tries of steps, in all.
    retries: u64,
    embedded: u64,
    set_aside: u64,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A running indexer. Dropping it stops it (the batch in flight is abandoned, not committed).
pub struct Indexer {
    shared: Arc<Shared>,
    corpus: Arc<dyn Corpus>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Indexer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Indexer")
            .field("state", &*self.shared.lock())
            .finish_non_exhaustive()
    }
}

impl Indexer {
    /// Starts the indexer thread at `cursor` (the durable one, [`super::store::read_cursor`]).
    pub fn start(
        embedder: Arc<Embedder>,
        planes: Arc<Hyperplanes>,
        corpus: Arc<dyn Corpus>,
        cursor: u64,
        opts: IndexerOptions,
    ) -> Result<Indexer> {
        if opts.batch == 0 {
            return Err(Error::InvalidOption {
                name: "batch",
                message: "must be at least 1".into(),
            });
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                cursor,
                stop: false,
                wake: false,
                error: None,
                degraded: None,
                retries: 0,
                embedded: 0,
                set_aside: 0,
            }),
            changed: Condvar::new(),
        });
        let (s, c) = (shared.clone(), corpus.clone());
        let nice = embedder.options().nice;
        let thread = std::thread::Builder::new()
            .name("fpdb-semantic".into())
            .spawn(move || {
                super::model::lower_priority(nice);
                let outcome = catch_unwind(AssertUnwindSafe(|| run(&s, &*c, &embedder, &planes, &opts)));
                let error = match outcome {
                    Ok(Ok(())) => None,
                    Ok(Err(e)) => Some(e.to_string()),
                    Err(p) => Some(format!(
                        "panicked: {}",
                        p.downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| p.downcast_ref::<String>().cloned())
                            .unwrap_or_default()
                    )),
                };
                let mut st = s.lock();
                st.error = error;
                st.stop = true;
                s.changed.notify_all();
            })
            .map_err(|e| Error::InvalidOption {
                name: "threads",
                message: format!("cannot start the indexer thread: {e}"),
            })?;
        Ok(Indexer {
            shared,
            corpus,
            thread: Some(thread),
        })
    }

    /// Tells the indexer new documents were acknowledged (it also polls).
    pub fn notify(&self) {
        self.shared.lock().wake = true;
        self.shared.changed.notify_all();
    }

    /// Every live document below this id has its vector (durably and in the queries).
    pub fn cursor(&self) -> u64 {
        self.shared.lock().cursor
    }

    /// Documents embedded by this run.
    pub fn embedded(&self) -> u64 {
        self.shared.lock().embedded
    }

    /// Documents set aside by this run (the model failed on them, or their queued text was
    /// unreadable).
    pub fn set_aside(&self) -> u64 {
        self.shared.lock().set_aside
    }

    /// Failed tries of a step by this run (each retried after a backoff).
    pub fn retries(&self) -> u64 {
        self.shared.lock().retries
    }

    /// What the indexer is doing now.
    pub fn state(&self) -> IndexerState {
        let st = self.shared.lock();
        if let Some(reason) = &st.error {
            return IndexerState::Stopped { reason: reason.clone() };
        }
        if st.stop {
            return IndexerState::Stopped { reason: "stopped".into() };
        }
        match &st.degraded {
            Some((reason, failures)) => IndexerState::Degraded {
                reason: reason.clone(),
                failures: *failures,
            },
            None => IndexerState::Running,
        }
    }

    /// Doc ids acknowledged but not yet covered by the cursor (deleted ids among them included).
    pub fn pending(&self) -> u64 {
        self.corpus.acknowledged().saturating_sub(self.cursor())
    }

    /// The error that stopped the indexer, if any.
    pub fn error(&self) -> Option<SemanticError> {
        self.shared
            .lock()
            .error
            .clone()
            .map(|cause| SemanticError::IndexerStopped { cause })
    }

    /// Waits until the cursor reaches `target` (e.g. the `next_doc` seen when a query arrived), the
    /// indexer stops on an error, or `timeout` passes.
    pub fn wait_until(&self, target: u64, timeout: Duration) -> Result<()> {
        let start = Instant::now();
        let mut st = self.shared.lock();
        loop {
            if st.cursor >= target {
                return Ok(());
            }
            if let Some(cause) = &st.error {
                return Err(SemanticError::IndexerStopped { cause: cause.clone() }.into());
            }
            if st.stop {
                return Err(SemanticError::IndexerStopped { cause: "stopped".into() }.into());
            }
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(SemanticError::WaitTimeout {
                    target,
                    cursor: st.cursor,
                    waited_ms: start.elapsed().as_millis() as u64,
                }
                .into());
            }
            st = self
                .shared
                .changed
                .wait_timeout(st, left)
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    /// Stops the thread after its current step (a batch not yet committed is dropped) and returns
    /// the error that had stopped it, if any.
    pub fn stop(mut self) -> Result<()> {
        self.halt();
        match self.error() {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    fn halt(&mut self) {
        self.shared.lock().stop = true;
        self.shared.changed.notify_all();
        if let Some(t) = self.thread.take() {
            // The last handle of a database may be dropped on the indexer's own thread (it holds
            // the database while it commits): that thread ends by itself after this step.
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
    }
}

impl Drop for Indexer {
    fn drop(&mut self) {
        self.halt();
    }
}

/// The loop: wait for work, then a step (scan, embed, commit, advance); a failed step is retried
/// after a backoff (the state degraded meanwhile), an error it cannot retry ends the loop.
fn run(shared: &Shared, corpus: &dyn Corpus, embedder: &Embedder, planes: &Hyperplanes, opts: &IndexerOptions) -> Result<()> {
    let mut backoff = opts.retry_min;
    loop {
        // `acknowledged` is read with this mutex released: the corpus may take its own locks
        // (the database's state lock), and a thread holding those may want this mutex.
        let cursor = loop {
            let ack = corpus.acknowledged();
            let mut st = shared.lock();
            if st.stop {
                return Ok(());
            }
            if ack > st.cursor {
                break st.cursor;
            }
            if !st.wake {
                st = shared
                    .changed
                    .wait_timeout(st, opts.poll)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|p| p.into_inner().0);
            }
            st.wake = false;
        };
        match step(shared, corpus, embedder, planes, opts, cursor) {
            Ok(()) => backoff = opts.retry_min,
            Err(e) if !retryable(&e) => return Err(e),
            Err(e) => {
                let mut st = shared.lock();
                let failures = st.degraded.as_ref().map_or(0, |d| d.1) + 1;
                st.degraded = Some((e.to_string(), failures));
                st.retries += 1;
                shared.changed.notify_all();
                let until = Instant::now() + backoff;
                while !st.stop {
                    let left = until.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    st = shared
                        .changed
                        .wait_timeout(st, left)
                        .map(|(g, _)| g)
                        .unwrap_or_else(|p| p.into_inner().0);
                }
                backoff = (backoff * 2).min(opts.retry_max.max(opts.retry_min));
            }
        }
    }
}

/// Whether a failed step is tried again: not when the database is gone or the corpus is broken.
fn retryable(e: &Error) -> bool {
    !matches!(e, Error::Semantic(SemanticError::IndexerStopped { .. }) | Error::Corruption { .. })
}

/// One batch: scanned, embedded (the documents the model fails on alone set aside), committed.
fn step(shared: &Shared, corpus: &dyn Corpus, embedder: &Embedder, planes: &Hyperplanes, opts: &IndexerOptions, cursor: u64) -> Result<()> {
    let scan = corpus.scan(cursor, opts.batch)?;
    if scan.next <= cursor {
        return Err(SemanticError::IndexerStopped {
            cause: format!(
                "the corpus scan from {cursor} did not advance (next = {}): a fault of the corpus, not retried",
                scan.next
            ),
        }
        .into());
    }
    let mut aside: Vec<(u64, Aside, String)> = scan.unreadable.into_iter().map(|(id, why)| (id, Aside::Unreadable, why)).collect();
    let records = embed_or_set_aside(embedder, &scan.docs, &mut aside)
        .into_iter()
        .map(|(id, v)| {
            let stored = quantize(&v, planes);
            let bytes = encode(&stored);
            (id, stored, bytes)
        })
        .collect::<Vec<_>>();
    aside.sort_by_key(|a| a.0);
    let (n, n_aside) = (records.len() as u64, aside.len() as u64);
    if shared.lock().stop {
        return Ok(()); // as if killed between batches: the durable cursor did not move
    }
    corpus.commit(records, aside, cursor, scan.next)?;
    let mut st = shared.lock();
    st.cursor = scan.next;
    st.embedded += n;
    st.set_aside += n_aside;
    st.degraded = None;
    shared.changed.notify_all();
    Ok(())
}

/// The vectors of `docs`: one call for the batch; when it fails, each text alone, and a text the
/// model fails on alone goes to `aside` with the model's error.
fn embed_or_set_aside(embedder: &Embedder, docs: &[(u64, String)], aside: &mut Vec<(u64, Aside, String)>) -> Vec<(u64, Vec<f32>)> {
    let texts: Vec<&str> = docs.iter().map(|(_, t)| t.as_str()).collect();
    if let Ok(vectors) = embedder.embed(&texts) {
        return docs.iter().map(|(id, _)| *id).zip(vectors).collect();
    }
    let mut out = Vec::with_capacity(docs.len());
    for (id, text) in docs {
        match embedder.embed(&[text.as_str()]).map(|mut v| v.pop()) {
            Ok(Some(v)) => out.push((*id, v)),
            Ok(None) => aside.push((*id, Aside::EmbedFailed, "the model returned no vector".into())),
            Err(e) => aside.push((*id, Aside::EmbedFailed, e.to_string())),
        }
    }
    out
}
