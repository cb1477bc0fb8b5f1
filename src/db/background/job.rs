//! The job type of the writer's background work: a piece of work on a thread of its own (or done
//! here when no thread can be started), its result taken later under the writer lock, a panic
//! there an error of its named stage. A leaf: the engine's state holds these, nothing here reads it.

use crate::error::{Error, Result};

/// Runs `run(job)` on a new thread named `name` (`Ok`: its handle; the thread yields `None` only if
/// the job never reached it), or here when no thread can be started (`Err`: the result). The job is
/// sent after the spawn, so a failed spawn still has it. The writer's background work uses it: the
/// mirror's merge, and through [`Job`] the containment tail's file and the table tail's files.
pub(in crate::db) fn spawn_or_run<J: Send + 'static, T: Send + 'static>(
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
pub(in crate::db) enum Job<T> {
    Running(std::thread::JoinHandle<Option<Result<T>>>),
    Done(Result<T>),
}

impl<T: Send + 'static> Job<T> {
    /// Starts `run(job)` on a thread named `name`, or runs it here ([`spawn_or_run`]).
    pub(in crate::db) fn spawn<J: Send + 'static>(name: &str, job: J, run: fn(J) -> Result<T>) -> Self {
        match spawn_or_run(name, job, run) {
            Ok(h) => Job::Running(h),
            Err(done) => Job::Done(done),
        }
    }

    /// True when [`Job::wait`] would not wait.
    pub(in crate::db) fn is_finished(&self) -> bool {
        match self {
            Job::Running(h) => h.is_finished(),
            Job::Done(_) => true,
        }
    }

    /// The result, once the thread has ended; a panic there is [`Error::Panicked`] of `stage`.
    pub(in crate::db) fn wait(self, stage: &'static str) -> Result<T> {
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
pub(in crate::db) fn for_each_on_threads<S>(
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
