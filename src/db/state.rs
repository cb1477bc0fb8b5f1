//! The two halves of a handle's memory: the published [`State`] readers see (changed only by the
//! writer, under the write lock, after a batch committed) and the [`Writer`]'s private structures
//! (under the writer mutex). A leaf: the rules that keep them honest (the poison mark of a mutation,
//! `db::handle`; the consistent reads of RocksDB, `db::query`) live with the handle.

use std::collections::VecDeque;

use crate::index::mem::MemTables;
use crate::intmap::IntMap;
use crate::store::segment::{SegmentSet, SegmentWriter};
use crate::store::ShingleLoc;

use super::background::table_files::TableFiles;
use super::background::tail::Freezing;

#[derive(Clone, Debug)]
pub(super) struct DocMeta {
    /// Shared, so that a query's snapshot takes a key under the lock without copying it.
    pub(super) key: std::sync::Arc<str>,
    pub(super) simhash: u64,
    pub(super) loc: ShingleLoc,
    pub(super) group: u64,
}

/// What queries read; changed only by the writer, under the write lock, after a batch committed.
/// The side indexes' in-memory parts follow the same rule (`db::side`).
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
    /// Set while the writer publishes a batch (under the write lock); still set when a reader
    /// takes the lock means the publish stopped part-way (a panic or an error): the state is
    /// half-published, and reads that can fail refuse it ([`State::whole`]).
    pub(super) torn: bool,
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
    /// With the mirror: the documents committed since the table floor (`(id, SimHash)`, in id
    /// order) whose table entries are neither in RocksDB nor being written (`db::background::table_tail`).
    pub(super) table_tail: Vec<(u64, u64)>,
    /// Ids at or above the table floor deleted (or replaced) since they were committed: left out
    /// of the tail's next write (`db::background::table_tail`).
    pub(super) table_dead: std::collections::HashSet<u64, std::hash::BuildHasherDefault<crate::intmap::IntHasher>>,
    /// The table tail's write running in the background, if any.
    pub(super) table_job: Option<Freezing<TableFiles>>,
    /// The table floor: every live document below it has its table entries in RocksDB. A writer's
    /// starts at the next doc id (the open writes what a crash left above it).
    pub(super) table_floor: u64,
}

impl State {
    /// `Ok` unless a publish stopped part-way, leaving this state half-published (then the handle is
    /// poisoned; reopening recovers the committed batch whole).
    pub(super) fn whole(&self) -> crate::Result<()> {
        if self.torn {
            return Err(crate::Error::Poisoned {
                cause: "a publish to readers stopped part-way (a panic or an error): the in-memory state is half-published; reopen the database".into(),
            });
        }
        Ok(())
    }
}

impl Writer {
    /// A writer at the open: nothing in progress, no background work, an empty table tail.
    pub(super) fn new(
        segw: SegmentWriter,
        next_id: u64,
        edges: IntMap<u64, Vec<u64>>,
        members: IntMap<u64, Vec<u64>>,
        table_floor: u64,
    ) -> Self {
        Writer {
            segw,
            next_id,
            edges,
            members,
            poisoned: None,
            in_progress: None,
            merge: None,
            table_tail: Vec::new(),
            table_dead: Default::default(),
            table_job: None,
            table_floor,
        }
    }
}
