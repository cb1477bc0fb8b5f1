//! The `failpoints` test binary: the tests that arm failpoints (needs `--features failpoints` for
//! most of them). Failpoints are process-wide, so every test of this binary that arms one, or that
//! could trip one armed by another, holds [`SERIAL`]. See tests/suites/cli.rs for the grouping.

#[path = "../common/mod.rs"]
mod common;

/// The one lock of this binary: an armed failpoint fires in whichever thread reaches it first.
pub static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[path = "../failpoints.rs"]
mod failpoints;
#[path = "../pairs_panic.rs"]
mod pairs_panic;
#[path = "../reindex.rs"]
mod reindex;
