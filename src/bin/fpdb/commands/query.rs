//! `fpdb query`: near-duplicates of a text, a file or a SimHash.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use fpdb::{Error, QueryOptions};

use crate::cli::QueryArgs;
use crate::print::{hit_json, print_contain_hits, print_hits};

/// What to look up.
pub enum Lookup {
    Text(String),
    File(Option<PathBuf>),
    SimHash(u64),
}

pub struct Config {
    pub db: PathBuf,
    pub lookup: Lookup,
    pub opts: QueryOptions,
}

impl Config {
    pub fn from_args(a: QueryArgs) -> Result<Config, Error> {
        let lookup = match (a.simhash, a.text) {
            (Some(s), _) => Lookup::SimHash(parse_u64(&s).ok_or_else(|| Error::InvalidOption {
                name: "simhash",
                message: format!("expected an unsigned 64-bit integer (decimal or 0x hex), got {s:?}"),
            })?),
            (None, Some(t)) => Lookup::Text(t),
            (None, None) => Lookup::File(a.file),
        };
        Ok(Config {
            db: a.db,
            lookup,
            opts: {
                let mut o = QueryOptions::default();
                o.max_distance = a.k;
                o.min_jaccard = a.min_jaccard;
                o.limit = a.limit;
                o.min_containment = a.min_containment;
                o.min_shared = a.min_shared;
                o
            },
        })
    }
}

fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let d = super::open_ro(&cfg.db)?;
    let hits = match cfg.lookup {
        Lookup::SimHash(v) => d.query_simhash(v, &cfg.opts)?,
        Lookup::Text(t) => d.query(&t, &cfg.opts)?,
        Lookup::File(f) => d.query(&super::read_input(f.as_ref())?, &cfg.opts)?,
    };
    if json {
        for h in &hits {
            writeln!(out, "{}", hit_json(h))?;
        }
    } else if cfg.opts.min_containment.is_some() {
        if hits.is_empty() {
            writeln!(out, "no document contains the text or is contained in it")?;
        } else {
            print_contain_hits(out, &hits)?;
        }
    } else if hits.is_empty() {
        writeln!(out, "no near-duplicates")?;
    } else {
        print_hits(out, &hits)?;
    }
    Ok(if hits.is_empty() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
