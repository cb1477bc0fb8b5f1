//! `fpdb export`: every document as a JSON line; with `--archive`, the database's export
//! (`Db::export`: what `fpdb import` reads).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use fpdb::Error;
use serde_json::json;

use crate::cli::ExportArgs;

pub struct Config {
    pub db: PathBuf,
    pub shingle_sets: bool,
    /// Everything not derived (`Db::export`).
    pub archive: bool,
}

impl From<ExportArgs> for Config {
    fn from(a: ExportArgs) -> Config {
        Config {
            db: a.db,
            shingle_sets: a.shingle_sets,
            archive: a.archive,
        }
    }
}

pub fn run(cfg: Config, out: &mut impl Write) -> Result<ExitCode> {
    let d = super::open_ro(&cfg.db)?;
    if cfg.archive {
        d.export(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    d.for_each_doc(|id, r| {
        let mut v = json!({"key": r.key, "id": id, "simhash": r.simhash, "shingles": r.count, "group": r.group});
        if cfg.shingle_sets {
            let set = d.shingles(id)?.ok_or_else(|| Error::Corruption {
                path: cfg.db.clone(),
                doc: Some(id),
                what: "a doc record without a live shingle set".into(),
            })?;
            v["shingle_set"] = json!(set);
        }
        writeln!(out, "{v}").map_err(|e| Error::Io {
            op: "write export",
            path: PathBuf::from("<stdout>"),
            source: e,
        })
    })?;
    Ok(ExitCode::SUCCESS)
}
