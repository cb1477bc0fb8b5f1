//! `fpdb init`: create a database.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};

use fpdb::fingerprint::method::Method;
use fpdb::{ContainmentConfig, CreateOptions, Db, Error};

use crate::cli::{InitArgs, OnOff};

pub struct Config {
    pub db: PathBuf,
    pub create: CreateOptions,
}

impl Config {
    pub fn from_args(a: InitArgs) -> Result<Config, Error> {
        let method = method_from(a.normalizer, &a.method, a.idf_from.as_deref(), a.min_shared)?;
        let mut spec = super::spec_from(&a.shingle, a.weights.into())?.with_method(method.clone());
        spec.normalizer = a.normalizer;
        let containment =
            ContainmentConfig::from_options(Some(a.containment == OnOff::On), a.containment_sample, a.containment_max_postings)?;
        Ok(Config {
            db: a.db,
            create: CreateOptions::default()
                .with_spec(spec)
                .with_tables(a.tables.parse()?)
                .with_max_distance(a.max_distance.unwrap_or_else(|| method.default_max_distance()))
                .with_min_jaccard(a.min_jaccard)
                .with_containment(containment),
        })
    }
}

/// `--method NAME` with its options: the IDF table of weighted-simhash (built from
/// `--idf-from`, tokenized with the database's normalizer `normalizer`), Broder's `--min-shared`.
fn method_from(normalizer: u32, name: &str, idf_from: Option<&std::path::Path>, min_shared: Option<u32>) -> Result<Method, Error> {
    Method::with_options_for(normalizer, name, idf_from.map(|p| move |n| super::idf_table(p, n)), min_shared)
}

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let d = Db::create(&cfg.db, &cfg.create).with_context(|| format!("cannot create database {}", cfg.db.display()))?;
    let s = d.stats();
    let containment = match d.config().containment {
        Some(c) => format!("containment index on (sample 1/{}, posting cap {})", c.sample, c.max_postings),
        None => "containment index off".into(),
    };
    if json {
        let mut v = serde_json::to_value(&s)?;
        v["containment"] = serde_json::to_value(d.config().containment.map(|c| (c.sample, c.max_postings)))?;
        writeln!(out, "{v}")?;
    } else {
        writeln!(
            out,
            "created {} — spec {}; {} tables; k = {}, t = {}; {containment}",
            cfg.db.display(),
            s.spec,
            s.tables,
            s.max_distance,
            s.min_jaccard
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
