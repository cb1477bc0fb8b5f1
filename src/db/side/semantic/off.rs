//! A build without the `semantic` feature: a writer refuses a database created with the channel.

use crate::error::{Error, Result};

use super::super::{Opening, Registering, SideIndex};
use crate::db::handle::Db;

/// The `meta` key of the channel's spec (`crate::semantic::META_SEMANTIC_SPEC` in a build with
/// the feature).
const META_SEMANTIC_SPEC: &[u8] = b"semantic_spec";

/// The channel's absence.
pub(crate) struct Semantic;

impl Semantic {
    pub(crate) fn new(_: &Registering<'_>) -> Result<Option<Semantic>> {
        Ok(Some(Semantic))
    }
}

impl SideIndex for Semantic {
    fn name(&self) -> &'static str {
        "semantic channel (not built)"
    }

    fn load(&self, o: &Opening<'_>) -> Result<()> {
        if o.opts.read_only {
            return Ok(());
        }
        let spec = o
            .rocks
            .get_pinned_cf(o.meta, META_SEMANTIC_SPEC)
            .map_err(|e| Error::rocks("read the semantic spec", o.rocks_path, e))?;
        match spec {
            None => Ok(()),
            Some(_) => Err(Error::InvalidOption {
                name: "semantic",
                message: format!(
                    "{} was created with the semantic channel (`fpdb init --semantic`), and this fpdb was built without the `semantic` feature: its new documents would never be embedded; build fpdb with `--features semantic`, or open the database read-only",
                    o.rocks_path.display()
                ),
            }),
        }
    }
}

impl Db {
    /// No vectors without the channel.
    pub(crate) fn semantic_cosine(&self, _a: u64, _b: u64) -> Option<f32> {
        None
    }
}
