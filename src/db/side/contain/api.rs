//! The containment index's API on [`Db`]: commits that report containment relations, and the
//! side index itself for the queries, pairs and counters of this folder.

use super::{contain_cfg, Containment};
use crate::db::handle::Db;
use crate::db::options::{check_c, Dedup};
use crate::db::side::Asked;
use crate::db::types::{InsertOutcome, Precheck, PreparedDoc};
use crate::error::{Error, Result};

impl Db {
    /// Whether the tail's active part is empty, and its floor (for the tests of `Db::flush`).
    #[cfg(test)]
    pub(crate) fn contain_tail_of_test(&self) -> (bool, u64) {
        let side = self.inner.sides.contain.as_ref().expect("registered in every database");
        let mem = side.mem();
        (mem.tail.active.is_empty(), mem.tail.floor)
    }

    /// The containment side index (registered in every database).
    pub(super) fn contain_side(&self) -> Result<&Containment> {
        self.inner
            .sides
            .contain
            .as_ref()
            .ok_or_else(|| Error::corrupt(&self.inner.rocks_path, None, "the containment side index is not registered"))
    }

    /// The index settings, or the usage error of a containment request on a database without one.
    pub(crate) fn contain_cfg(&self) -> Result<crate::store::doc_record::ContainmentConfig> {
        contain_cfg(&self.inner)
    }
}

/// The containment index of a database ([`Db::containment`]): commits that report each
/// document's containment relations, every pair with containment ≥ c, and the index's counters.
/// On a database created without the index, each refuses with [`Error::InvalidOption`] (`stats`:
/// `None`).
#[derive(Clone, Copy, Debug)]
pub struct ContainmentIndex<'a> {
    pub(crate) db: &'a Db,
}

impl Db {
    /// The containment index's API ([`ContainmentIndex`]).
    pub fn containment(&self) -> ContainmentIndex<'_> {
        ContainmentIndex { db: self }
    }
}

impl ContainmentIndex<'_> {
    /// [`Db::commit_prechecked`] that also reports each document's containment relations with
    /// containment ≥ `containment` in either direction ([`InsertOutcome::containment`]). Refused
    /// (before anything is written) when asked for on a database without the containment index.
    pub fn commit_prechecked(
        &self,
        docs: Vec<Result<(PreparedDoc, Option<Precheck>)>>,
        dedup: Dedup,
        containment: Option<f64>,
    ) -> Result<Vec<Result<InsertOutcome>>> {
        if let Some(c) = containment {
            check_c(c)?;
            contain_cfg(&self.db.inner)?;
        }
        let asked = Asked {
            dedup,
            min_containment: containment,
        };
        self.db.commit_asked(docs, asked)
    }
}
