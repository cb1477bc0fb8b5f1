//! The `failpoints` test binary: the tests that arm failpoints (needs `--features failpoints` for
//! most of them). Failpoints are process-wide, so every test of this binary that arms one, or that
//! could trip one armed by another, holds [`SERIAL`]. See cli/tests/cli/main.rs for the grouping.

#[path = "../common/mod.rs"]
mod common;

/// The one lock of this binary: an armed failpoint fires in whichever thread reaches it first.
pub static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

mod failpoints;
mod pairs_panic;
mod reindex;
