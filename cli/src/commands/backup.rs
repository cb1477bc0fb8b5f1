//! `fpdb backup`: a consistent copy of a database, also beside a writing process
//! (`Db::backup_path`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use fpdb::Db;

use crate::cli::BackupArgs;

pub struct Config {
    pub db: PathBuf,
    pub dir: PathBuf,
}

impl From<BackupArgs> for Config {
    fn from(a: BackupArgs) -> Config {
        Config { db: a.db, dir: a.dir }
    }
}

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let r = Db::backup_path(&cfg.db, &cfg.dir)?;
    if json {
        writeln!(out, "{}", serde_json::to_string(&r)?)?;
    } else {
        writeln!(
            out,
            "backed up {} to {}: {} RocksDB entries, {} segment files, {} bytes in {:.2} s",
            cfg.db.display(),
            r.dir.display(),
            r.entries,
            r.segments,
            r.bytes,
            r.seconds
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
