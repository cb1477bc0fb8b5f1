//! The two halves of a handle's memory: the published [`State`] readers see (changed only by the
//! writer, under the write lock, after a batch committed) and the [`Writer`]'s private structures
//! (under the writer mutex), with the rules that keep them honest: the poison mark of a mutation
//! and the consistent reads of RocksDB.

use std::collections::VecDeque;

use crate::error::{Error, Result};
use crate::index::mem::MemTables;
use crate::intmap::IntMap;
use crate::store::segment::{SegmentSet, SegmentWriter};
use crate::store::ShingleLoc;

use super::method::MethodState;
use super::Db;

#[derive(Clone, Debug)]
pub(super) struct DocMeta {
    pub(super) key: Box<str>,
    pub(super) simhash: u64,
    pub(super) loc: ShingleLoc,
    pub(super) group: u64,
}

/// What queries read; changed only by the writer, under the write lock, after a batch committed.
pub(super) struct State {
    pub(super) docs: IntMap<u64, DocMeta>,
    pub(super) tables: Option<MemTables>,
    pub(super) segs: SegmentSet,
    /// Per segment: (committed length, live record bytes).
    pub(super) seg_usage: IntMap<u32, (u64, u64)>,
    /// Members of every group with at least two members (sorted ids).
    pub(super) members: IntMap<u64, Vec<u64>>,
    /// The next doc id the writer will allocate (all committed ids are smaller).
    pub(super) next_id: u64,
    /// Ids and SimHashes (two parallel deques, so the scan of the SimHashes is a plain loop over
    /// `u64`s) of the most recently committed documents, oldest first: every committed document
    /// with id ≥ `recent_floor` is here. Lets the writer finish a [`Precheck`] cheaply.
    pub(super) recent_ids: VecDeque<u64>,
    pub(super) recent_fps: VecDeque<u64>,
    pub(super) recent_floor: u64,
    /// RocksDB's sequence number when this state was published: reads of RocksDB are consistent
    /// with the state only while RocksDB's latest sequence number still equals it
    /// ([`Db::read_rocks`](crate::Db::read_rocks)).
    pub(super) published_seq: u64,
    // containment:
    /// Keys of the short documents in the containment index (empty without the index).
    pub(super) contain_short: crate::index::contain::ShortKeys,
    /// The containment index's postings held in memory: those of the documents at or above its
    /// floor, not yet written to RocksDB (`db::contain_tail::tail_after_commit`).
    pub(super) contain: crate::index::contain::Tail,
    /// method: sketches and the bucket mirror of the other methods.
    pub(super) method: MethodState,
}

/// How many recently committed documents [`State::recent`] keeps.
pub(super) const RECENT_CAP: usize = 1 << 16;

/// The writer's private structures (under the writer mutex).
pub(super) struct Writer {
    pub(super) segw: SegmentWriter,
    pub(super) next_id: u64,
    pub(super) edges: IntMap<u64, Vec<u64>>,
    pub(super) members: IntMap<u64, Vec<u64>>,
    pub(super) poisoned: Option<String>,
    /// Set while a mutation runs (from its first change to its publish). Still set when the lock is
    /// next taken means the mutation stopped part-way (a panic unwound through it): the handle is
    /// poisoned. parking_lot mutexes do not poison, so this flag does.
    pub(super) in_progress: Option<&'static str>,
    /// The mirror's merge running on its own thread, if any ([`Db::merge_mirror`]).
    pub(super) merge: Option<std::thread::JoinHandle<Option<crate::index::mem::MergedRun>>>,
    // containment:
    /// The containment tail's write running in the background, if any.
    pub(super) contain_job: Option<Job<Option<std::path::PathBuf>>>,
    /// With the mirror: the documents committed since the table floor (`(id, SimHash)`, in id
    /// order) whose table entries are neither in RocksDB nor being written (`db::table_tail`).
    pub(super) table_tail: Vec<(u64, u64)>,
    /// Ids at or above the table floor deleted (or replaced) since they were committed: left out
    /// of the tail's next write (`db::table_tail`).
    pub(super) table_dead: std::collections::HashSet<u64, std::hash::BuildHasherDefault<crate::intmap::IntHasher>>,
    /// The table tail's write running in the background, if any.
    pub(super) table_job: Option<super::table_tail::TableJob>,
    /// The table floor: every live document below it has its table entries in RocksDB. A writer's
    /// starts at the next doc id (the open writes what a crash left above it).
    pub(super) table_floor: u64,
}

/// Runs `run(job)` on a new thread named `name` (`Ok`: its handle; the thread yields `None` only if
/// the job never reached it), or here when no thread can be started (`Err`: the result). The job is
/// sent after the spawn, so a failed spawn still has it. The writer's background work uses it: the
/// mirror's merge, and through [`Job`] the containment tail's file and the table tail's files.
pub(super) fn spawn_or_run<J: Send + 'static, T: Send + 'static>(
    name: &str,
    job: J,
    run: fn(J) -> T,
) -> std::result::Result<std::thread::JoinHandle<Option<T>>, T> {
    let (tx, rx) = std::sync::mpsc::channel();
    match std::thread::Builder::new().name(name.into()).spawn(move || rx.recv().ok().map(run)) {
        Ok(h) => {
            let _ = tx.send(job);
            Ok(h)
        }
        Err(_) => Err(run(job)),
    }
}

/// A piece of the writer's background work that yields a result (the containment tail's file,
/// the table tail's files): running on a thread of its own, or done here (no thread could be
/// started, or none was wanted).
pub(super) enum Job<T> {
    Running(std::thread::JoinHandle<Option<Result<T>>>),
    Done(Result<T>),
}

impl<T: Send + 'static> Job<T> {
    /// Starts `run(job)` on a thread named `name`, or runs it here ([`spawn_or_run`]).
    pub(super) fn spawn<J: Send + 'static>(name: &str, job: J, run: fn(J) -> Result<T>) -> Self {
        match spawn_or_run(name, job, run) {
            Ok(h) => Job::Running(h),
            Err(done) => Job::Done(done),
        }
    }

    /// True when [`Job::wait`] would not wait.
    pub(super) fn is_finished(&self) -> bool {
        match self {
            Job::Running(h) => h.is_finished(),
            Job::Done(_) => true,
        }
    }

    /// The result, once the thread has ended; a panic there is [`Error::Panicked`] of `stage`.
    pub(super) fn wait(self, stage: &'static str) -> Result<T> {
        match self {
            Job::Running(h) => match h.join() {
                Ok(Some(r)) => r,
                Ok(None) => Err(Error::panicked(stage, &"its thread never received the job")),
                Err(p) => Err(Error::panicked(stage, p.as_ref())),
            },
            Job::Done(r) => r,
        }
    }
}

/// Runs `job(state, i)` for every `i` in `0..n` on `threads` threads, this one included: each
/// takes the next `i` and keeps its own `state` (from `init`) from one item to the next. Threads are
/// named `name-1`, `name-2`, …; a helper that cannot be started leaves its share to the others. The
/// first error is returned after every thread has stopped (`stage` names a panic). The close's
/// flushes (`Inner::flush_memtables`) and the table tail's files (`db::table_tail`) run on it.
pub(super) fn for_each_on_threads<S>(
    name: &str,
    stage: &'static str,
    threads: usize,
    n: usize,
    init: impl Fn() -> S + Sync,
    job: impl Fn(&mut S, usize) -> Result<()> + Sync,
) -> Result<()> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let run = || -> Result<()> {
        let mut state = init();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if i >= n {
                return Ok(());
            }
            job(&mut state, i)?;
        }
    };
    std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads)
            .filter_map(|i| std::thread::Builder::new().name(format!("{name}-{i}")).spawn_scoped(s, run).ok())
            .collect();
        let mut r = run();
        for h in helpers {
            let hr = h.join().unwrap_or_else(|p| Err(Error::panicked(stage, &*p)));
            r = r.and(hr);
        }
        r
    })
}

impl Db {
    /// Takes the writer lock of a writable, healthy handle.
    pub(super) fn lock_writer(&self) -> Result<parking_lot::MutexGuard<'_, Writer>> {
        self.writable()?;
        let w = self.inner.writer.lock();
        if let Some(p) = &w.poisoned {
            return Err(Error::Poisoned { cause: p.clone() });
        }
        if let Some(op) = w.in_progress {
            return Err(Error::Poisoned {
                cause: format!("an earlier {op} stopped between its first change and its publish (a panic)"),
            });
        }
        Ok(w)
    }

    /// Runs a mutation of the writer's state. Everything between its first change and the publish to
    /// readers happens inside `f`: an error returned from `f` poisons the handle, and so does a panic
    /// unwinding through it (the `in_progress` mark is then left set and seen by the next
    /// [`Db::lock_writer`](crate::Db::lock_writer)).
    pub(super) fn mutation<T>(w: &mut Writer, op: &'static str, f: impl FnOnce(&mut Writer) -> Result<T>) -> Result<T> {
        w.in_progress = Some(op);
        let r = f(w);
        if let Err(e) = &r {
            if w.poisoned.is_none() {
                w.poisoned = Some(format!("{op}: {e}"));
            }
        }
        w.in_progress = None;
        r
    }
}
