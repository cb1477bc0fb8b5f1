//! `fpdb init`: create a database.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use fpdb::{CreateOptions, Db, Error, Tables};

use crate::cli::InitArgs;

pub struct Config {
    pub db: PathBuf,
    pub create: CreateOptions,
}

impl Config {
    pub fn from_args(a: InitArgs) -> Result<Config, Error> {
        Ok(Config {
            db: a.db,
            create: CreateOptions {
                spec: super::spec_from(&a.shingle, a.weights.into())?,
                tables: parse_tables(&a.tables)?,
                max_distance: a.max_distance,
                min_jaccard: a.min_jaccard,
            },
        })
    }
}

fn parse_tables(s: &str) -> Result<Tables, Error> {
    match s.trim() {
        "auto" => Ok(Tables::Auto),
        "k+1" | "k1" => Ok(Tables::KPlusOne),
        n => n.parse().map(Tables::Blocks).map_err(|_| Error::InvalidOption {
            name: "tables",
            message: format!("expected a number of tables, `k+1` or `auto`, got {s:?}"),
        }),
    }
}

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let d = Db::create(&cfg.db, &cfg.create).with_context(|| format!("cannot create database {}", cfg.db.display()))?;
    let s = d.stats();
    if json {
        writeln!(out, "{}", serde_json::to_string(&s)?)?;
    } else {
        writeln!(
            out,
            "created {} — spec {}; {} tables; k = {}, t = {}",
            cfg.db.display(),
            s.spec,
            s.tables,
            s.max_distance,
            s.min_jaccard
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
