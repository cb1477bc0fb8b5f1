//! `fpdb import`: a database created from an `export --archive` file (`Db::import`).

use std::io::{BufReader, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use fpdb::Db;

use crate::cli::ImportArgs;

pub struct Config {
    pub db: PathBuf,
    /// The export (`-`: standard input).
    pub file: PathBuf,
}

impl From<ImportArgs> for Config {
    fn from(a: ImportArgs) -> Config {
        Config { db: a.db, file: a.file }
    }
}

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let (db, r) = if cfg.file.as_os_str() == "-" {
        Db::import(&cfg.db, BufReader::new(std::io::stdin()), &cfg.file)?
    } else {
        let f = std::fs::File::open(&cfg.file).with_context(|| format!("cannot open {}", cfg.file.display()))?;
        Db::import(&cfg.db, BufReader::new(f), &cfg.file)?
    };
    if json {
        writeln!(out, "{}", serde_json::to_string(&r)?)?;
    } else {
        writeln!(
            out,
            "imported {} documents ({} with their texts) and {} curator decisions into {}; {} groups",
            r.docs,
            r.texts,
            r.decisions,
            cfg.db.display(),
            db.stats().groups
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
