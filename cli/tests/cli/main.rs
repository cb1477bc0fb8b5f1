//! The `cli` test binary: every test that drives the `fpdb` executable but `fpdb serve` (the `serve`
//! test binary, cli/tests/serve.rs). They are the `fpdb-cli` package's, the package that owns the
//! executable (`env!("CARGO_BIN_EXE_fpdb")`). One binary per group of tests (here cli; engine,
//! failpoints, crash and semantic in the root package) instead of one per file: each
//! integration-test binary links RocksDB, so fewer binaries build and link faster. A suite is a
//! folder: tests/SUITE/main.rs and its modules beside it; the root package's
//! `tests/engine/main.rs` `every_test_file_is_in_a_suite` checks that none is left out (both
//! manifests set `autotests = false`). The test kit is the root package's tests/common/ and
//! tests/support/, one copy included by path.

#[path = "../../../tests/common/mod.rs"]
mod common;
#[path = "../../../tests/support/readme.rs"]
mod readme_md;
#[path = "../../../tests/support/cli.rs"]
mod support;

mod bad_input;
mod cli;
mod cli_containment;
mod cli_corruption;
mod cli_front;
mod cli_input;
mod cli_interrupt;
mod cli_metadata;
mod cli_semantic;
mod cli_text;
mod enospc;
mod methods_cli;
mod readme;
#[path = "../../../tests/support/skip.rs"]
mod skip;
