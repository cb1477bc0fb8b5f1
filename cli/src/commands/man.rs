//! `fpdb man`: the manual page in roff, made from the clap definitions (`man -l` reads it). With
//! `--dir`, one page per command as well (fpdb-ingest.1, fpdb-semantic-backfill.1, ...), as a
//! package installs them under share/man/man1.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::cli::{Cli, ManArgs};
use crate::print::note;

pub struct Config {
    pub dir: Option<PathBuf>,
}

impl From<ManArgs> for Config {
    fn from(a: ManArgs) -> Config {
        Config { dir: a.dir }
    }
}

pub fn run(cfg: Config, out: &mut impl Write) -> Result<ExitCode> {
    let cmd = Cli::command();
    match cfg.dir {
        None => clap_mangen::Man::new(cmd).render(out)?,
        Some(dir) => {
            std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cmd, &dir).with_context(|| format!("cannot write the pages into {}", dir.display()))?;
            note!("fpdb: wrote the manual pages into {}", dir.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
