//! The background indexer: embeds acknowledged documents after the text path has stored them.
//!
//! One thread walks a durable cursor over the doc ids: it asks the [`Corpus`] for the next batch of
//! live documents at or above the cursor, embeds them (on the embedder's bounded pool), and hands
//! the vectors and the new cursor to [`Corpus::commit`], which writes both in ONE RocksDB
//! `WriteBatch` ([`super::store::stage_vectors`]). So at every instant the durable state is
//! "every live doc below the cursor has exactly one vector, none at or above it has one": a kill -9
//! anywhere loses at most the batch in flight, and the next start resumes at the durable cursor —
//! nothing embedded twice into the index, nothing skipped.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::error::{Result, SemanticError};
use super::model::Embedder;
use super::vector::{encode, quantize, Hyperplanes, StoredVector};

/// One batch of work from the corpus.
#[derive(Clone, Debug, Default)]
pub struct Scan {
    /// Live documents with id ≥ the cursor, ascending, each with the text to embed (the spec's
    /// field, or the document's text).
    pub docs: Vec<(u64, String)>,
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
    /// Durably writes `vectors` (encoded records) and moves the cursor from `from` to `cursor` in
    /// ONE WriteBatch, leaving out documents deleted since [`Corpus::scan`] read them, then
    /// publishes them to the queries.
    fn commit(&self, vectors: Vec<(u64, StoredVector, Vec<u8>)>, from: u64, cursor: u64) -> Result<()>;
}

/// The indexer's settings.
#[derive(Clone, Debug)]
pub struct IndexerOptions {
    /// Documents per commit (one embed call, one WriteBatch).
    pub batch: usize,
    /// How often an idle indexer looks for new documents without being notified.
    pub poll: Duration,
}

impl Default for IndexerOptions {
    fn default() -> Self {
        IndexerOptions {
            batch: 32,
            poll: Duration::from_millis(200),
        }
    }
}

#[derive(Debug)]
struct State {
    cursor: u64,
    stop: bool,
    wake: bool,
    error: Option<String>,
    embedded: u64,
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
            return Err(SemanticError::InvalidOption {
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
                embedded: 0,
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
            .map_err(|e| SemanticError::InvalidOption {
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
                return Err(SemanticError::IndexerStopped { cause: cause.clone() });
            }
            if st.stop {
                return Err(SemanticError::IndexerStopped { cause: "stopped".into() });
            }
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(SemanticError::WaitTimeout {
                    target,
                    cursor: st.cursor,
                    waited_ms: start.elapsed().as_millis() as u64,
                });
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
            Some(e) => Err(e),
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

/// The loop: wait for work, scan, embed, commit, advance.
fn run(shared: &Shared, corpus: &dyn Corpus, embedder: &Embedder, planes: &Hyperplanes, opts: &IndexerOptions) -> Result<()> {
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
        let scan = corpus.scan(cursor, opts.batch)?;
        if scan.next <= cursor {
            return Err(SemanticError::Corruption {
                what: format!("the corpus scan from {cursor} did not advance (next = {})", scan.next),
                doc: None,
            });
        }
        let texts: Vec<&str> = scan.docs.iter().map(|(_, t)| t.as_str()).collect();
        let vectors = embedder.embed(&texts)?;
        let records = scan
            .docs
            .iter()
            .zip(vectors)
            .map(|((id, _), v)| {
                let stored = quantize(&v, planes);
                let bytes = encode(&stored);
                (*id, stored, bytes)
            })
            .collect::<Vec<_>>();
        let n = records.len() as u64;
        if shared.lock().stop {
            return Ok(()); // as if killed between batches: the durable cursor did not move
        }
        corpus.commit(records, cursor, scan.next)?;
        let mut st = shared.lock();
        st.cursor = scan.next;
        st.embedded += n;
        shared.changed.notify_all();
    }
}
