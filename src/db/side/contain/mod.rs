//! The containment index's side: what a database with the index does beyond the
//! near-duplicate path. Sketch: `fingerprint::containment`; search: `index::contain`; verifier:
//! `fingerprint::similarity::containment`; keys: `store::keys::contain_key`.
//!
//! Its files: ARCHITECTURE.md, "`src/db/` — the handle" (the side indexes row).

mod api;
mod check;
mod delta;
mod mem;
mod pairs;
mod search;
mod stats;
mod tail;

use parking_lot::{Mutex, RwLock};
use rocksdb::WriteBatch;

use crate::error::{Error, Result};
use crate::index::contain::{MemContain, Tail};
use crate::intmap::IntMap;
use crate::store::doc_record::{ContainmentConfig, DbConfig, DocRecord};
use crate::store::keys::{CF_CONTAIN, META_CONTAIN_FLOOR};

use super::{Additions, BatchPart, Creating, Deciding, Opening, QuerySide, SideIndex};
use crate::db::background::tail::Freezing;
use crate::db::background::Background;
use crate::db::base::Base;
use crate::db::options::Options;
use crate::db::pending::Pending;
use crate::db::state::State;
use crate::db::types::CheckReport;

pub use api::ContainmentIndex;
use delta::TailDelta;
use mem::ContainMem;

/// The containment index: registered in every database, so that a request for it on a database
/// without one gets its usage error ([`contain_cfg`]); `cfg` is `None` there and every hook
/// does nothing.
pub(crate) struct Containment {
    cfg: Option<ContainmentConfig>,
    /// `Options::contain_tail_postings`: the tail's size that starts its background write.
    tail_postings: usize,
    /// The published part (under the state's lock rules, `side`).
    mem: RwLock<ContainMem>,
    /// The writer's: the tail's write running in the background, if any (`tail.rs`).
    job: Mutex<Option<Freezing<tail::ContainFiles>>>,
}

impl Containment {
    pub(super) fn new(config: &DbConfig, opts: &Options) -> Containment {
        Containment {
            cfg: config.containment,
            tail_postings: opts.contain_tail_postings,
            mem: RwLock::new(ContainMem::default()),
            job: Mutex::new(None),
        }
    }

    /// The published part (read with the state's read lock held).
    pub(crate) fn mem(&self) -> parking_lot::RwLockReadGuard<'_, ContainMem> {
        self.mem.read()
    }
}

impl SideIndex for Containment {
    fn name(&self) -> &'static str {
        "containment index"
    }

    fn column_families(&self) -> Vec<String> {
        self.cfg.map(|_| CF_CONTAIN.to_string()).into_iter().collect()
    }

    /// Every posting starts in the tail: the floor is 0.
    fn create(&self, c: &Creating<'_>, b: &mut WriteBatch) -> Result<()> {
        if self.cfg.is_some() {
            b.put_cf(c.meta, META_CONTAIN_FLOOR, 0u64.to_le_bytes());
        }
        Ok(())
    }

    /// The floor (a writer's clean-up of a stopped tail write), the short-key set and the tail.
    fn load(&self, o: &Opening<'_>) -> Result<()> {
        let Some(cfg) = self.cfg else { return Ok(()) };
        let floor = Self::open_floor(o.rocks, o.meta, o.rocks_path, o.next_id, o.opts.read_only)?;
        let (short, active) = Self::load_contain(o.rocks, o.rocks_path, cfg, floor, o.docs, o.segs)?;
        *self.mem.write() = ContainMem {
            short,
            tail: Tail::new(floor, active),
        };
        Ok(())
    }

    fn batch(&self) -> Option<Box<dyn BatchPart + '_>> {
        Some(Box::new(ContainBatch {
            side: self,
            batch: MemContain::default(),
            staged: None,
        }))
    }

    fn background(&self) -> Option<&dyn Background> {
        Some(self)
    }

    fn query(&self) -> Option<&dyn QuerySide> {
        Some(self)
    }

    fn check(&self, base: &Base, st: &State, records: &IntMap<u64, DocRecord>, rep: &mut CheckReport) -> Result<()> {
        match self.cfg {
            Some(cfg) => base.check_containment(st, &self.mem(), cfg, records, rep),
            None => Ok(()),
        }
    }
}

/// The containment index's part of a batch: the batch's documents in an in-memory index (filled
/// only when containment relations are asked for), then what its publish applies to the tail.
struct ContainBatch<'a> {
    side: &'a Containment,
    batch: MemContain,
    staged: Option<TailDelta>,
}

impl BatchPart for ContainBatch<'_> {
    /// The containment relations, when asked for.
    fn on_decide(&mut self, d: &Deciding<'_>, add: &mut Additions) -> Result<()> {
        if let Some(c) = d.asked.min_containment {
            add.containment = self.side.relations(d, &self.batch, c)?;
        }
        Ok(())
    }

    fn on_place(&mut self, d: &Deciding<'_>, id: u64) -> Result<()> {
        if let (Some(_), Some(cfg)) = (d.asked.min_containment, self.side.cfg) {
            self.batch.add(id, &d.doc.fp.shingles, cfg.sampling())?;
        }
        Ok(())
    }

    fn write(&mut self, base: &Base, st: &State, pend: &Pending, b: &mut WriteBatch) -> Result<()> {
        let Some(cfg) = self.side.cfg else { return Ok(()) };
        let d = self.side.delta(base, st, cfg, pend)?;
        self.staged = Some(d.write(base, b)?);
        Ok(())
    }

    fn publish(self: Box<Self>, _st: &mut State, _pend: &Pending) -> Result<()> {
        match self.staged {
            Some(d) => d.publish(&mut self.side.mem.write()),
            None => Ok(()),
        }
    }
}

/// The index settings, or the usage error of a containment request on a database without one.
pub(crate) fn contain_cfg(base: &Base) -> Result<ContainmentConfig> {
    base.config.containment.ok_or_else(|| Error::InvalidOption {
        name: "min_containment",
        message: format!(
            "the database {} has no containment index (it was created with containment off, or before the index existed), so it cannot answer containment queries; create a database with containment on (`fpdb init DB --containment on`, or `CreateOptions::with_containment`) and ingest the documents again",
            base.path.display()
        ),
    })
}
