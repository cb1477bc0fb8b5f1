//! `fpdb compact`: rewrite segments with dead bytes; with `--index`, merge RocksDB's runs too.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::cli::CompactArgs;

pub struct Config {
    pub db: PathBuf,
    pub min_dead: f64,
    pub index: bool,
}

impl From<CompactArgs> for Config {
    fn from(a: CompactArgs) -> Config {
        Config {
            db: a.db,
            min_dead: a.min_dead,
            index: a.index,
        }
    }
}

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let d = super::open(&cfg.db, true)?;
    let s = d.compact(cfg.min_dead)?;
    if cfg.index {
        d.compact_index()?;
    }
    if json {
        writeln!(out, "{}", serde_json::to_string(&s)?)?;
    } else {
        writeln!(
            out,
            "rewrote {} segment(s), moved {} records, reclaimed {} bytes",
            s.segments_rewritten, s.records_moved, s.bytes_reclaimed
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
