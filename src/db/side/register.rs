//! The registration of the side indexes: ONE line each, in [`side_indexes!`]'s list below. A new
//! side index adds its folder beside this file (declared by its `mod` line in `side/mod.rs`) and
//! its line here: its field of [`Sides`] (held by its own type, so that its API finds it as
//! `inner.sides.FIELD`) and the expression that makes it from the database's settings (`None`:
//! not enabled for this database).

use crate::error::Result;

use super::contain::Containment;
use super::decisions::Decisions;
use super::metadata::Metadata;
use super::method::MethodSide;
use super::semantic::Semantic;
use super::text::StoredText;
use super::{QuerySide, Registering, SideIndex};
use crate::db::candidates::CandidateSource;

/// Declares [`Sides`] (one `Option` field a side index, in registration order: the order every
/// hook runs in), its constructor and its iteration.
macro_rules! side_indexes {
    ($r:ident => $($field:ident: $ty:ty = $make:expr;)*) => {
        /// The side indexes of a database, each held by its own type (`None`: not enabled here).
        pub(crate) struct Sides {
            $(pub(crate) $field: Option<$ty>,)*
        }

        impl Sides {
            /// Every side index the database's spec and configuration enable.
            pub(crate) fn register($r: &Registering<'_>) -> Result<Sides> {
                Ok(Sides { $($field: $make,)* })
            }

            /// Every registered side index, in registration order.
            pub(crate) fn iter(&self) -> impl Iterator<Item = &dyn SideIndex> {
                [$(self.$field.as_ref().map(|s| s as &dyn SideIndex),)*].into_iter().flatten()
            }
        }
    };
}

// A side index that can be asked for on a database without it (containment, decisions) registers
// always and answers the usage error itself.
side_indexes! { r =>
    metadata: Metadata = Some(Metadata);
    method: MethodSide = MethodSide::new(r.spec, r.config, r.opts, r.rocks_path)?;
    contain: Containment = Some(Containment::new(r.config, r.opts));
    text: StoredText = StoredText::new(r)?; // before the channel, which takes the text
    semantic: Semantic = Semantic::new(r)?;
    decisions: Decisions = Some(Decisions::default());
}

impl std::fmt::Debug for Sides {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter().map(|s| s.name())).finish()
    }
}

impl Sides {
    /// The candidate source a side index provides in the SimHash tables' place, if one does (at
    /// most one side index of a handle does: the other methods' bucket index).
    pub(crate) fn candidate_source(&self) -> Option<&dyn CandidateSource> {
        self.iter().find_map(|s| s.candidate_source())
    }

    /// What the side indexes add to queries, in registration order.
    pub(crate) fn queries(&self) -> impl Iterator<Item = &dyn QuerySide> {
        self.iter().filter_map(|s| s.query())
    }

    /// Every side index's column families.
    pub(crate) fn column_families(&self) -> Vec<String> {
        self.iter().flat_map(|s| s.column_families()).collect()
    }

    /// Runs `f` on every side index, stopping at the first error.
    pub(crate) fn each(&self, f: impl FnMut(&dyn SideIndex) -> Result<()>) -> Result<()> {
        self.iter().try_for_each(f)
    }
}
