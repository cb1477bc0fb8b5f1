//! The containment index's tail on its way to RocksDB, by the tail protocol
//! (`db::background::tail`; its `TailFiles` here: [`ContainFiles`]): the postings of new documents
//! are held in memory (`index::contain::Tail`) and written, on a thread of its own, as one sorted
//! SST file that RocksDB ingests whole, every `Options::contain_tail_postings` postings
//! (its [`Background`] step after a commit) and at a clean close (its flush). The **floor** in `meta` says which
//! documents' postings RocksDB holds (ids below it); the open re-derives the tail of the documents
//! at or above it from their stored shingle sets ([`Containment::load_contain`]) — so the postings never pass
//! through the WAL or a memtable, and a crash loses nothing (measured: docs/performance.md,
//! "Measured in git history"; bytes: docs/format.md). The rest of the index's side: `db::side::contain`.

use std::path::{Path, PathBuf};

use rocksdb::{IteratorMode, SstFileWriter, DB};

use crate::error::{Error, Result};
use crate::failpoint;
use crate::fingerprint::containment::{stored_keys, KeyKind};
use crate::index::contain::{Postings, ShortKeys};
use crate::intmap::IntMap;
use crate::store::doc_record::ContainmentConfig;
use crate::store::keys::{contain_value, decode_contain_key, CF_CONTAIN, META_CONTAIN_FLOOR};
use crate::store::segment::SegmentSet;

use super::Containment;
use crate::db::background::floor::{read_floor, write_floor};
use crate::db::background::sst;
use crate::db::background::tail::{self, Freezing, TailFiles};
use crate::db::background::Background;
use crate::db::background::View;
use crate::db::cfs;
use crate::db::state::DocMeta;
use crate::db::state::Writer;

/// Writes `postings` (those `keep` accepts) as one sorted SST file at `path`; `None` when there is
/// no posting to write (RocksDB refuses an empty file).
fn write_tail_file(rp: &Path, path: &Path, postings: &Postings, keep: impl Fn(u64) -> bool) -> Result<Option<PathBuf>> {
    let sst_opts = crate::db::rocks_options::contain_file_options();
    let mut w = SstFileWriter::create(&sst_opts);
    w.open(path).map_err(|e| Error::rocks("create the containment tail file", rp, e))?;
    let mut any = false;
    postings.for_each_sorted(|k, id, n| {
        if !keep(id) {
            return Ok(());
        }
        any = true;
        let (v, len) = contain_value(n);
        w.put(k, &v[..len])
            .map_err(|e| Error::rocks("write the containment tail file", rp, e))
    })?;
    if !any {
        drop(w);
        let _ = std::fs::remove_file(path);
        return Ok(None);
    }
    w.finish().map_err(|e| Error::rocks("finish the containment tail file", rp, e))?;
    failpoint!("contain.flush.file");
    Ok(Some(path.to_path_buf()))
}

/// Name prefix of the tail's SST file while it is written (in the RocksDB directory); one left by
/// a crash before its ingest is removed at the next writable open.
const TAIL_FILE_PREFIX: &str = "contain-tail-";

impl Containment {
    /// At open (with the index): the floor. Absent in a database written before the tail existed:
    /// every posting is then in RocksDB, so the floor is the next doc id, and a writer records it
    /// (synced) before anything lands in the tail. A writer also removes the files of tail writes that
    /// stopped before their ingest.
    pub(super) fn open_floor(rocks: &DB, meta: &rocksdb::ColumnFamily, rocks_path: &Path, next_id: u64, read_only: bool) -> Result<u64> {
        let floor = match read_floor(rocks, meta, rocks_path, META_CONTAIN_FLOOR, next_id)? {
            Some(f) => f,
            None => {
                if !read_only {
                    write_floor(rocks, rocks_path, META_CONTAIN_FLOOR, next_id, true)?;
                }
                next_id
            }
        };
        if !read_only {
            sst::remove_stale_files(rocks_path, TAIL_FILE_PREFIX)?;
        }
        Ok(floor)
    }

    /// At open: the short-key set and the tail. The short keys of RocksDB's short key range below the
    /// floor (entries at or above it are left by a flush that stopped before moving the floor, and are
    /// re-derived like the rest of the tail), then the keys of every live document at or above the
    /// floor, recomputed from its stored set (a set that cannot be read is left to `check`).
    pub(super) fn load_contain(
        rocks: &DB,
        path: &Path,
        cfg: ContainmentConfig,
        floor: u64,
        docs: &IntMap<u64, DocMeta>,
        segs: &SegmentSet,
    ) -> Result<(ShortKeys, Postings)> {
        let cf = rocks.cf_handle(CF_CONTAIN).ok_or_else(|| {
            Error::corrupt(
                path,
                None,
                "the config has a containment index but column family `contain` is missing",
            )
        })?;
        let mut short = ShortKeys::default();
        let start = [KeyKind::Short as u8];
        for item in super::search::scan_contain(rocks, cf, IteratorMode::From(&start, rocksdb::Direction::Forward)) {
            let (k, _) = item.map_err(|e| Error::rocks("load containment index", path, e))?;
            match decode_contain_key(&k) {
                Some((KeyKind::Short, s, id)) if id < floor => short.add(&[s]),
                Some((KeyKind::Short, _, _)) => {}
                Some(_) => break,
                None => return Err(Error::corrupt(path, None, format!("containment key {k:?} does not decode"))),
            }
        }
        let mut tail = Postings::default();
        let mut ids: Vec<u64> = docs.keys().copied().filter(|&id| id >= floor).collect();
        ids.sort_unstable();
        for id in ids {
            let Some(set) = docs.get(&id).and_then(|m| segs.read(m.loc, id).ok()) else {
                continue;
            };
            let (kind, keys) = stored_keys(&set, cfg.sampling());
            if kind == KeyKind::Short {
                short.add(&keys);
            }
            tail.add(id, kind, &keys)?;
        }
        Ok((short, tail))
    }

    /// Freezes the active tail (documents up to the next doc id) and starts writing it to an SST file
    /// (on a thread of its own when `background`); readers keep seeing it, frozen, until
    /// [`finish_tail_write`] installs it.
    fn start_tail_write(&self, inner: &View<'_>, background: bool) -> Result<()> {
        let (frozen, split) = {
            let st = inner.state.write();
            let split = st.next_id;
            let mut mem = self.mem.write();
            let t = &mut mem.tail;
            if t.frozen.is_some() || (t.active.is_empty() && t.split == split) {
                return Ok(());
            }
            let next = std::mem::take(&mut t.spare);
            let frozen = std::sync::Arc::new(std::mem::replace(&mut t.active, next));
            t.frozen = Some(frozen.clone());
            t.split = split;
            (frozen, split)
        };
        let ctx = std::sync::Arc::new(inner.rocks_path.clone());
        *self.job.lock() = Some(Freezing::start(ctx, frozen, split, background));
        Ok(())
    }

    /// Installs the frozen tail's file ([`tail::Written::install`]), then the floor in memory moves
    /// to the frozen part's end and the frozen part is dropped — all under the state's write lock,
    /// so readers see each posting in exactly one place. A stop anywhere leaves a database the next
    /// open reads right: before the ingest, a stray file (removed at open); after it, entries at or
    /// above the old floor, which the searches skip and the tail re-derives.
    fn finish_tail_write(&self, inner: &View<'_>) -> Result<()> {
        let job = self.job.lock().take();
        let Some(job) = job else {
            return Ok(());
        };
        let written = job.wait()?;
        let mut st = inner.state.write();
        let mut mem = self.mem.write();
        let t = &mut mem.tail;
        if t.frozen.is_none() {
            return Ok(());
        }
        let dead = &t.frozen_dead;
        t.floor = written.install(&inner.rocks, &inner.rocks_path, inner.opts.sync, !dead.is_empty(), |id| {
            !dead.contains(&id)
        })?;
        if let Some(Ok(mut spare)) = t.frozen.take().map(std::sync::Arc::try_unwrap) {
            spare.clear();
            t.spare = spare;
        }
        t.frozen_dead.clear();
        st.published_seq = inner.rocks.latest_sequence_number();
        Ok(())
    }
}

/// The tail's way to RocksDB as background work, under the writer lock.
impl Background for Containment {
    /// The tail protocol's step ([`tail::after_commit`]), once the active tail holds
    /// `Options::contain_tail_postings` postings.
    fn after_commit(&self, inner: &View<'_>, _w: &mut Writer) -> Result<()> {
        if self.cfg.is_none() {
            return Ok(());
        }
        let finished = self.job.lock().as_ref().is_some_and(Freezing::is_finished);
        let len = self.mem().tail.active.len();
        tail::after_commit(
            &mut (),
            finished,
            len,
            self.tail_postings,
            |_| self.finish_tail_write(inner),
            |_, background| self.start_tail_write(inner, background),
        )
    }

    /// The whole tail to RocksDB now (`Db::flush`, a clean close): a running write finished,
    /// then the rest written.
    fn flush(&self, inner: &View<'_>, _w: &mut Writer) -> Result<()> {
        if self.cfg.is_none() {
            return Ok(());
        }
        tail::write_all(
            &mut (),
            |_| self.finish_tail_write(inner),
            |_, background| self.start_tail_write(inner, background),
        )
    }

    /// A poisoned or read-only close: a background write of the tail still running ends (its file,
    /// never ingested, is removed by the next open).
    fn abandon(&self, _w: &mut Writer) {
        if let Some(job) = self.job.lock().take() {
            job.abandon();
        }
    }
}

/// The containment tail's files ([`tail`]): a frozen part is its postings; one SST file.
pub(super) struct ContainFiles;

impl TailFiles for ContainFiles {
    type Part = Postings;
    /// The RocksDB directory.
    type Ctx = PathBuf;
    const THREAD: &'static str = "fpdb-contain-tail";
    const STAGE: &'static str = "containment tail writer";
    const FLOOR: &'static [u8] = META_CONTAIN_FLOOR;
    const WRITTEN: &'static str = "contain.tail.written";

    fn write(rp: &PathBuf, postings: &Postings, split: u64, keep: &dyn Fn(u64) -> bool) -> Result<Vec<PathBuf>> {
        let path = rp.join(format!("{TAIL_FILE_PREFIX}{split}.sst"));
        Ok(write_tail_file(rp, &path, postings, keep)?.into_iter().collect())
    }

    fn ingest(rp: &PathBuf, rocks: &DB, files: &[PathBuf]) -> Result<()> {
        let cf = cfs::cf(rocks, rp, CF_CONTAIN)?;
        for f in files {
            sst::ingest_moved(rocks, cf, f, rp, "ingest the containment tail file")?;
        }
        failpoint!("contain.flush.ingested");
        Ok(())
    }
}
