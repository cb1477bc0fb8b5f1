//! `fpdb bench-query` (hidden; a benchmark tool): every text of a JSONL file as a query, in-process,
//! with p50/p99/mean latency.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use fpdb::{Error, Options, QueryOptions};
use serde_json::json;

use crate::cli::BenchQueryArgs;
use fpdb::input;

pub struct Config {
    pub db: PathBuf,
    pub queries: PathBuf,
    pub opts: QueryOptions,
    pub query_threads: usize,
}

impl From<BenchQueryArgs> for Config {
    fn from(a: BenchQueryArgs) -> Config {
        Config {
            db: a.db,
            queries: a.queries,
            query_threads: a.query_threads,
            opts: {
                let mut o = QueryOptions::default();
                o.max_distance = a.max_distance;
                o.min_jaccard = a.min_jaccard;
                o.min_containment = a.min_containment;
                o
            },
        }
    }
}

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let d = super::open_ro_with(
        &cfg.db,
        Options {
            query_threads: cfg.query_threads,
            ..Options::default()
        },
    )?;
    let f = std::fs::File::open(&cfg.queries).map_err(|e| Error::Io {
        op: "open queries",
        path: cfg.queries.clone(),
        source: e,
    })?;
    let mut lat = Vec::new();
    let mut hits = 0usize;
    for item in input::jsonl(f, cfg.queries.display().to_string(), "key".into(), "text".into(), None)? {
        let Ok(doc) = item else { continue };
        let t = Instant::now();
        hits += d.query(&doc.text, &cfg.opts)?.len();
        lat.push(t.elapsed().as_secs_f64() * 1e6);
    }
    lat.sort_by(|a, b| a.total_cmp(b));
    let at = |p: f64| {
        lat.get(((lat.len().max(1) - 1) as f64 * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let mean = lat.iter().sum::<f64>() / lat.len().max(1) as f64;
    let k = cfg.opts.max_distance.unwrap_or(d.config().max_distance);
    let c = cfg.opts.min_containment;
    if json {
        writeln!(
            out,
            "{}",
            json!({"queries": lat.len(), "k": k, "min_containment": c, "hits": hits, "p50_us": at(0.5), "p99_us": at(0.99), "mean_us": mean})
        )?;
    } else {
        let what = match c {
            Some(c) => format!("containment queries at c = {c}"),
            None => format!("queries at k = {k}"),
        };
        writeln!(
            out,
            "{} {what}: p50 {:.1} µs, p99 {:.1} µs, mean {:.1} µs, {hits} hits",
            lat.len(),
            at(0.5),
            at(0.99),
            mean
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
