//! `fpdb reindex`: rebuild the tables with another number of tables (the layout follows N).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use fpdb::{Db, Tables};

use crate::cli::ReindexArgs;

pub struct Config {
    pub db: PathBuf,
    pub tables: Tables,
}

impl Config {
    pub fn from_args(a: ReindexArgs) -> Result<Config> {
        Ok(Config {
            db: a.db,
            tables: a.tables.parse()?,
        })
    }
}

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let r = Db::reindex(&cfg.db, cfg.tables, |done, total| {
        if !json {
            crate::print::note!("fpdb: reindex: table {done} of {total} written");
        }
    })?;
    if json {
        writeln!(out, "{}", serde_json::to_string(&r)?)?;
    } else if r.changed {
        writeln!(
            out,
            "re-laid out {} documents: {} -> {} tables (generation {}); modelled query time at the default k: {:.0} -> {:.0} µs",
            r.docs, r.tables_before, r.tables_after, r.generation, r.model_us_before, r.model_us_after
        )?;
    } else {
        writeln!(
            out,
            "{} documents already use {} tables (modelled query time at the default k: {:.0} µs); nothing to do",
            r.docs, r.tables_after, r.model_us_after
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
