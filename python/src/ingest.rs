//! `Db.ingest`: the engine's pipeline fed from a Python iterable, results handed back as an iterator.
//!
//! The pipeline (`fpdb::Db::ingest`) runs on a thread of its own and reads documents from a bounded
//! channel. `Ingest.__next__` is the only place that touches Python: it pulls items from the
//! caller's iterator while the channel has room, converts them, and hands back each result once the
//! engine reports it (after its batch committed). Whenever it would wait — the channel is full, or
//! the input is exhausted and results are pending — it waits with the GIL released, for whichever
//! comes first: room in the channel or a result. So the Python producer, the fingerprinting workers
//! and the writer all run at once, and at most `input channel + pipeline + result channel` items
//! (a few batches) exist at any moment, whatever the length of the input.

use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Select, Sender, TrySendError};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyIterator;

use crate::api::{DocResult, Engine, Error, IngestOptions, IngestStats as EngineIngestStats, NewDoc};
use crate::convert;
use crate::errors::to_py;
use crate::types::{IngestStats, InsertOutcome};

/// How often a wait wakes up to let Python handle signals (Ctrl-C).
const TICK: Duration = Duration::from_millis(100);

type Item = Result<NewDoc, Error>;

struct Running {
    /// The caller's iterator; None once exhausted (or once it raised).
    input: Option<Py<PyIterator>>,
    /// Feeds the pipeline; dropped when the input ends, which lets the pipeline finish.
    tx: Option<Sender<Item>>,
    /// An item taken from the input that the full channel has not accepted yet.
    stash: Option<Item>,
    results: Receiver<DocResult>,
    thread: Option<JoinHandle<Result<EngineIngestStats, Error>>>,
    /// An exception raised by the caller's iterator: raised after the results before it.
    input_error: Option<PyErr>,
}

impl Running {
    fn close_input(&mut self) {
        self.input = None;
        self.tx = None;
        self.stash = None;
    }

    /// Stops feeding: the item already taken from the caller's iterator still goes to the engine
    /// (every item pulled from the input is ingested), results reported meanwhile are discarded.
    /// Call without the GIL.
    fn stop(&mut self) {
        if let (Some(item), Some(tx)) = (self.stash.take(), self.tx.as_ref()) {
            let mut item = Some(item);
            while let Some(it) = item.take() {
                let mut sel = Select::new();
                let send = sel.send(tx);
                sel.recv(&self.results);
                let op = sel.select();
                if op.index() == send {
                    let _ = op.send(tx, it);
                } else {
                    let _ = op.recv(&self.results);
                    item = Some(it);
                }
            }
        }
        self.close_input();
    }

    /// Waits for the pipeline thread (the caller has closed the input).
    fn join(&mut self) -> Option<Result<EngineIngestStats, Option<Error>>> {
        self.thread.take().map(|t| match t.join() {
            Ok(Ok(s)) => Ok(s),
            Ok(Err(e)) => Err(Some(e)),
            Err(_) => Err(None),
        })
    }
}

impl Drop for Running {
    /// An abandoned ingest: stop feeding, let the pipeline commit what it already took, wait for it
    /// — with the GIL released (the wait lasts as long as the batches in flight take to commit).
    fn drop(&mut self) {
        // The Python objects are released here, with the GIL; the wait below needs none.
        let input = self.input.take();
        let input_error = self.input_error.take();
        crate::without_gil(|| {
            self.stop();
            let (_, dead) = bounded::<DocResult>(0);
            drop(std::mem::replace(&mut self.results, dead));
            let _ = self.join();
        });
        drop((input, input_error));
    }
}

enum State {
    Running(Box<Running>),
    Finished,
}

/// The iterator returned by `Db.ingest`: yields one IngestResult per input item, in input order,
/// each after its batch was durably committed. `stats` is set once it is exhausted.
#[pyclass(frozen, module = "fpdb")]
pub struct Ingest {
    state: Mutex<State>,
    stats: Mutex<Option<IngestStats>>,
}

/// The fate of one ingested item.
#[pyclass(frozen, module = "fpdb")]
pub struct IngestResult {
    /// Position of the item in the input (0-based).
    #[pyo3(get)]
    pub seq: u64,
    /// The item's key (None when the item had no readable key).
    #[pyo3(get)]
    pub key: Option<String>,
    /// What the insert did (None when the item was rejected).
    #[pyo3(get)]
    pub outcome: Option<Py<InsertOutcome>>,
    /// Why the item was rejected: an FpdbError instance (InvalidInputError for a malformed item),
    /// or None.
    #[pyo3(get)]
    pub error: Option<Py<PyAny>>,
}

#[pymethods]
impl IngestResult {
    /// True when the item was accepted (stored, or skipped as a duplicate with dedup="skip").
    #[getter]
    fn ok(&self) -> bool {
        self.error.is_none()
    }

    /// True when the document was stored.
    #[getter]
    fn stored(&self) -> bool {
        self.outcome.as_ref().is_some_and(|o| o.get().stored())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        match (&self.outcome, &self.error) {
            (Some(o), _) => format!(
                "IngestResult(seq={}, outcome={})",
                self.seq,
                o.bind(py).repr().map(|r| r.to_string()).unwrap_or_default()
            ),
            (None, Some(e)) => format!(
                "IngestResult(seq={}, key={}, error={})",
                self.seq,
                crate::types::ro(&self.key),
                e.bind(py).repr().map(|r| r.to_string()).unwrap_or_default()
            ),
            (None, None) => format!("IngestResult(seq={})", self.seq),
        }
    }
}

fn result_of(py: Python<'_>, r: DocResult) -> PyResult<IngestResult> {
    Ok(match r.result {
        Ok(o) => IngestResult {
            seq: r.seq,
            key: Some(o.key.clone()),
            outcome: Some(Py::new(py, InsertOutcome::from(o))?),
            error: None,
        },
        Err(e) => {
            let key = match &e {
                Error::InvalidInput { key, .. } => key.clone(),
                _ => None,
            };
            IngestResult {
                seq: r.seq,
                key,
                outcome: None,
                error: Some(to_py(py, e).into_value(py).into_any()),
            }
        }
    })
}

enum Waited {
    Sent,
    Result(DocResult, Item),
    Timeout(Item),
    /// The pipeline stopped taking input (a commit failed): stop feeding.
    Closed,
}

impl Ingest {
    pub fn start(engine: Engine, input: Bound<'_, PyIterator>, opts: IngestOptions) -> PyResult<Ingest> {
        let cap = opts.batch_size.max(1);
        let (tx, rx) = bounded::<Item>(cap);
        let (res_tx, results) = bounded::<DocResult>(cap);
        let thread = std::thread::Builder::new()
            .name("fpdb-ingest".into())
            .spawn(move || {
                engine.ingest(rx, &opts, |r| {
                    // The receiver is gone only when the caller abandoned the ingest.
                    let _ = res_tx.send(r);
                })
            })
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start the ingest thread: {e}")))?;
        Ok(Ingest {
            state: Mutex::new(State::Running(Box::new(Running {
                input: Some(input.unbind()),
                tx: Some(tx),
                stash: None,
                results,
                thread: Some(thread),
                input_error: None,
            }))),
            stats: Mutex::new(None),
        })
    }

    /// The next result, feeding the pipeline as needed; None once everything was reported.
    fn step(&self, py: Python<'_>, st: &mut Running) -> PyResult<Option<DocResult>> {
        loop {
            if let Ok(r) = st.results.try_recv() {
                return Ok(Some(r));
            }
            let Some(tx) = st.tx.clone() else { break };
            let item = match st.stash.take() {
                Some(item) => item,
                None => {
                    let next = st.input.as_ref().and_then(|it| it.bind(py).clone().next());
                    match next {
                        None => {
                            st.close_input();
                            continue;
                        }
                        Some(Err(e)) => {
                            st.input_error = Some(e);
                            st.close_input();
                            continue;
                        }
                        Some(Ok(obj)) => convert::item(py, &obj),
                    }
                }
            };
            let item = match tx.try_send(item) {
                Ok(()) => continue,
                Err(TrySendError::Disconnected(_)) => {
                    st.close_input();
                    continue;
                }
                Err(TrySendError::Full(item)) => item,
            };
            // The pipeline is busy: wait without the GIL for room or for a result.
            let results = st.results.clone();
            let waited = py.detach(move || {
                let mut sel = Select::new();
                let send = sel.send(&tx);
                let recv = sel.recv(&results);
                match sel.select_timeout(TICK) {
                    Ok(op) if op.index() == send => match op.send(&tx, item) {
                        Ok(()) => Waited::Sent,
                        Err(_) => Waited::Closed,
                    },
                    Ok(op) if op.index() == recv => match op.recv(&results) {
                        Ok(r) => Waited::Result(r, item),
                        Err(_) => Waited::Closed,
                    },
                    _ => Waited::Timeout(item),
                }
            });
            match waited {
                Waited::Sent => {}
                Waited::Result(r, item) => {
                    // The item goes out first on the next call.
                    st.stash = Some(item);
                    return Ok(Some(r));
                }
                Waited::Timeout(item) => {
                    st.stash = Some(item);
                    py.check_signals()?;
                }
                Waited::Closed => st.close_input(),
            }
        }
        // Input closed: drain what the pipeline still reports.
        loop {
            let results = st.results.clone();
            match py.detach(move || results.recv_timeout(TICK)) {
                Ok(r) => return Ok(Some(r)),
                Err(RecvTimeoutError::Timeout) => py.check_signals()?,
                Err(RecvTimeoutError::Disconnected) => return Ok(None),
            }
        }
    }

    /// The pipeline finished: join it, record the stats, raise what went wrong.
    fn finish(&self, py: Python<'_>, state: &mut State) -> PyResult<()> {
        let State::Running(mut st) = std::mem::replace(state, State::Finished) else {
            return Ok(());
        };
        let input_error = st.input_error.take();
        let joined = py.detach(|| {
            let j = st.join();
            drop(st);
            j
        });
        match joined {
            Some(Ok(s)) => {
                *self.stats.lock().unwrap_or_else(|p| p.into_inner()) = Some(s.into());
            }
            // A commit failed: the engine's typed error (the input after it was not consumed).
            Some(Err(Some(e))) => return Err(to_py(py, e)),
            Some(Err(None)) => return Err(PyRuntimeError::new_err("the ingest pipeline thread panicked")),
            None => {}
        }
        match input_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

fn busy() -> PyErr {
    PyRuntimeError::new_err("this ingest is being advanced by another thread; consume it from one thread")
}

#[pymethods]
impl Ingest {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<IngestResult>> {
        let mut state = self.state.try_lock().map_err(|_| busy())?;
        let State::Running(st) = &mut *state else { return Ok(None) };
        match self.step(py, st) {
            Ok(Some(r)) => result_of(py, r).map(Some),
            Ok(None) => self.finish(py, &mut state).map(|()| None),
            Err(e) => Err(e),
        }
    }

    /// run() -> IngestStats
    ///
    /// Consumes the whole input without building a result per item (rejected items are counted
    /// in `stats.errors`) and returns the totals.
    fn run(&self, py: Python<'_>) -> PyResult<IngestStats> {
        let mut state = self.state.try_lock().map_err(|_| busy())?;
        if let State::Running(st) = &mut *state {
            while self.step(py, st)?.is_some() {}
        }
        self.finish(py, &mut state)?;
        self.stats
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| PyRuntimeError::new_err("the ingest has no totals (it was closed early)"))
    }

    /// close() -> IngestStats | None
    ///
    /// Stops pulling from the input. Items the engine already took (at most a few batches) are
    /// still committed, their results discarded. Returns the totals.
    fn close(&self, py: Python<'_>) -> PyResult<Option<IngestStats>> {
        let mut state = self.state.try_lock().map_err(|_| busy())?;
        if let State::Running(st) = &mut *state {
            let input = st.input.take();
            drop(input);
            py.detach(|| {
                st.stop();
                while st.results.recv().is_ok() {}
            });
            // An input exception is moot once the caller closed the ingest.
            st.input_error = None;
        }
        self.finish(py, &mut state)?;
        Ok(self.stats.lock().unwrap_or_else(|p| p.into_inner()).clone())
    }

    /// Totals (IngestStats) once the ingest is finished, else None.
    #[getter]
    fn stats(&self) -> Option<IngestStats> {
        self.stats.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn __repr__(&self) -> String {
        match self.stats() {
            Some(s) => format!("<fpdb.Ingest finished: {}>", s.__repr__()),
            None => "<fpdb.Ingest running>".into(),
        }
    }
}
