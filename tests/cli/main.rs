//! The `cli` test binary: every test that drives the `fpdb` executable. One binary per group of
//! tests (cli, engine, failpoints; crash, serve and semantic on their own) instead of one per file:
//! each integration-test binary links RocksDB, so fewer binaries build and link faster. A suite is a
//! folder: tests/SUITE/main.rs and its modules beside it; `tests/engine/main.rs`'s
//! `every_test_file_is_in_a_suite` checks that none is left out (Cargo.toml sets `autotests = false`).

#[path = "../common/mod.rs"]
mod common;
#[path = "../support/readme.rs"]
mod readme_md;
#[path = "../support/cli.rs"]
mod support;

mod bad_input;
mod cli;
mod cli_containment;
mod cli_front;
mod cli_input;
mod cli_interrupt;
mod cli_text;
mod enospc;
mod methods_cli;
mod readme;
#[path = "../support/skip.rs"]
mod skip;
