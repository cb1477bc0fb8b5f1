//! `fpdb`: the command-line front end. `main` parses the arguments ([`cli`]), runs the command (one
//! file per command under `commands/`, each converting its arguments into a plain `Config` for the
//! library, or for `fpdb_serve`, the HTTP service's crate) and maps errors to the documented exit
//! codes.

mod cli;
mod commands;
mod print;

use std::io;
use std::process::ExitCode;

use clap::Parser;
use fpdb::Error;

/// The binary allocates through mimalloc instead of glibc's malloc (the library leaves the choice to
/// the program that links it). Measured on the 1M-passage crawler loop, alternating builds: 26,099 /
/// 26,274 -> 27,798 / 27,733 docs/s linked, 40,610 / 40,861 -> 44,122 / 45,456 with `--dedup off`,
/// peak RSS +2% (docs/performance.md, "Measured in git history").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The exit code of an error (see `cli::EXIT_CODES`): the library's class of it
/// (`fpdb::Error::class`), 3 for another I/O error.
fn exit_code_of(e: &anyhow::Error) -> u8 {
    for cause in e.chain() {
        if let Some(err) = cause.downcast_ref::<Error>() {
            return err.class().exit_code;
        }
        if cause.downcast_ref::<io::Error>().is_some() {
            return 3;
        }
    }
    3
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match commands::run(cli) {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let mut msg = format!("fpdb: error: {e}");
            for cause in e.chain().skip(1) {
                msg.push_str(&format!("\n  caused by: {cause}"));
            }
            eprintln!("{msg}");
            ExitCode::from(exit_code_of(&e))
        }
    }
}
