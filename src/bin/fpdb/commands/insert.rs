//! `fpdb insert`: insert (or replace) one document.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use fpdb::Dedup;

use crate::cli::InsertArgs;
use crate::print::{outcome_json, print_outcome};

pub struct Config {
    pub db: PathBuf,
    pub key: String,
    pub file: Option<PathBuf>,
    pub dedup: Dedup,
    pub sync: bool,
}

impl From<InsertArgs> for Config {
    fn from(a: InsertArgs) -> Config {
        Config {
            db: a.db,
            key: a.key,
            file: a.file,
            dedup: a.dedup.into(),
            sync: !a.write.no_sync,
        }
    }
}

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let text = super::read_input(cfg.file.as_ref())?;
    let d = super::open(&cfg.db, cfg.sync)?;
    let o = d.insert_with(&cfg.key, &text, cfg.dedup)?;
    if json {
        writeln!(out, "{}", outcome_json(&o))?;
    } else {
        print_outcome(out, &o)?;
    }
    Ok(ExitCode::SUCCESS)
}
