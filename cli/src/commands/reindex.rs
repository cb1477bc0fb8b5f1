//! `fpdb reindex`: rebuild the tables with another number of tables (the layout follows N), or
//! with `--spec`, fingerprint every document again from its stored text under a new spec.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use fpdb::fingerprint::method::Method;
use fpdb::{CreateOptions, Db, Tables};

use crate::cli::ReindexArgs;

pub struct Config {
    pub db: PathBuf,
    pub tables: Tables,
    /// `--spec`: what the new spec changes (each `None` keeps the database's).
    pub spec: Option<SpecChange>,
}

/// The options of `reindex --spec`.
pub struct SpecChange {
    pub shingle: Option<String>,
    pub method: Option<String>,
    pub min_shared: Option<u32>,
    pub normalizer: Option<u32>,
    pub weights: Option<fpdb::Weighting>,
    pub max_distance: Option<u32>,
    pub min_jaccard: Option<f64>,
}

impl Config {
    pub fn from_args(a: ReindexArgs) -> Result<Config> {
        Ok(Config {
            db: a.db,
            tables: a.tables.parse()?,
            spec: a.spec.then_some(SpecChange {
                shingle: a.shingle,
                method: a.method,
                min_shared: a.min_shared,
                normalizer: a.normalizer,
                weights: a.weights.map(Into::into),
                max_distance: a.max_distance,
                min_jaccard: a.min_jaccard,
            }),
        })
    }
}

/// The new database's creation options: the stored ones with the changes.
fn create_options(d: &Db, c: &SpecChange, tables: Tables) -> Result<CreateOptions> {
    let old = d.spec();
    let mut spec = match &c.shingle {
        Some(s) => s.parse()?,
        None => old.clone(),
    };
    spec.weighting = c.weights.unwrap_or(old.weighting);
    spec.normalizer = c.normalizer.unwrap_or(old.normalizer);
    let method = match &c.method {
        Some(m) => Method::with_options_for(
            spec.normalizer,
            m,
            None::<fn(u32) -> fpdb::Result<fpdb::fingerprint::weighted::IdfTable>>,
            c.min_shared,
        )?,
        None => old.method.clone(),
    };
    let k = c.max_distance.unwrap_or(if c.method.is_some() {
        method.default_max_distance()
    } else {
        d.config().max_distance
    });
    let spec = spec.with_method(method);
    Ok(CreateOptions::default()
        .with_spec(spec)
        .with_tables(tables)
        .with_max_distance(k)
        .with_min_jaccard(c.min_jaccard.unwrap_or(d.config().min_jaccard))
        .with_containment(d.config().containment)
        .with_store_text(true))
}

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    if let Some(c) = &cfg.spec {
        let create = create_options(&super::open_ro(&cfg.db)?, c, cfg.tables)?;
        let r = Db::reindex_spec(&cfg.db, &create, |done| {
            if !json {
                crate::print::note!("fpdb: reindex: {done} documents fingerprinted again");
            }
        })?;
        if json {
            writeln!(out, "{}", serde_json::to_string(&r)?)?;
        } else {
            writeln!(
                out,
                "fingerprinted {} documents again from their stored texts in {:.2} s: spec {} -> {}; {} groups",
                r.docs, r.seconds, r.spec_before, r.spec_after, r.groups
            )?;
        }
        return Ok(ExitCode::SUCCESS);
    }
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
