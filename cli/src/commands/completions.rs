//! `fpdb completions SHELL`: the shell's completion script for every command and flag, made from
//! the same clap definitions the parser uses (so it cannot fall behind them).

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};

pub struct Config {
    pub shell: clap_complete::Shell,
}

impl From<CompletionsArgs> for Config {
    fn from(a: CompletionsArgs) -> Config {
        Config { shell: a.shell }
    }
}

pub fn run(cfg: Config, out: &mut impl Write) -> Result<ExitCode> {
    clap_complete::generate(cfg.shell, &mut Cli::command(), "fpdb", out);
    Ok(ExitCode::SUCCESS)
}
