//! The `cli` test binary: every test that drives the `fpdb` executable. One binary per group of
//! tests (cli, engine, failpoints; crash, serve and semantic on their own) instead of one per file:
//! each integration-test binary links RocksDB, so fewer binaries build and link faster. The module
//! files stay at tests/<name>.rs; `tests/suites/engine.rs`'s `every_test_file_is_in_a_suite` checks
//! that none is left out (Cargo.toml sets `autotests = false`).

#[path = "../common/mod.rs"]
mod common;
#[path = "../support/readme.rs"]
mod readme_md;
#[path = "../support/cli.rs"]
mod support;

#[path = "../bad_input.rs"]
mod bad_input;
#[path = "../cli.rs"]
mod cli;
#[path = "../cli_containment.rs"]
mod cli_containment;
#[path = "../cli_front.rs"]
mod cli_front;
#[path = "../cli_input.rs"]
mod cli_input;
#[path = "../cli_interrupt.rs"]
mod cli_interrupt;
#[path = "../cli_text.rs"]
mod cli_text;
#[path = "../enospc.rs"]
mod enospc;
#[path = "../methods_cli.rs"]
mod methods_cli;
#[path = "../readme.rs"]
mod readme;
#[path = "../support/skip.rs"]
mod skip;
