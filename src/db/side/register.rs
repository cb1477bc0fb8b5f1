//! The registration of the side indexes: ONE line each. A new side index adds its folder beside
//! this file (declared by its `mod` line in `side/mod.rs`) and its line here.

use std::path::Path;

use crate::error::Result;
use crate::fingerprint::spec::FingerprintSpec;
use crate::store::doc_record::DbConfig;

use super::Sides;
use crate::db::options::Options;

/// Every side index this database's spec and configuration enable: ONE line each. A side index
/// that can be asked for on a database without it (containment) registers always and answers the
/// usage error itself.
pub(crate) fn register(spec: &FingerprintSpec, config: &DbConfig, opts: &Options, rocks_path: &Path) -> Result<Sides> {
    let mut sides = Sides::default();
    sides.add(Some(super::metadata::Metadata));
    sides.add(super::method::MethodSide::new(spec, config, opts, rocks_path)?);
    sides.add(Some(super::contain::Containment::new(config, opts)));
    sides.add(super::text::StoredText::new(opts)); // before the channel, which takes the text
    sides.add(super::semantic::Semantic::new(opts));
    sides.add(Some(super::decisions::Decisions::default()));
    Ok(sides)
}
