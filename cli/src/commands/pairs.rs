//! `fpdb pairs`: every pair within k (and Jaccard ≥ t), each once, or the duplicate groups.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use fpdb::output::{ContainPairLine, GroupLine, PairLine};
use fpdb::{Db, PairsOptions, PairsReport};
use serde_json::json;

use crate::cli::PairsArgs;
use crate::print::{fmt_j, json_line};

pub struct Config {
    pub db: PathBuf,
    /// `None`: the database's k.
    pub k: Option<u32>,
    pub min_jaccard: Option<f64>,
    pub groups: bool,
    pub summary: bool,
    pub threads: usize,
    /// Containment pairs at or above this (instead of Hamming pairs).
    pub min_containment: Option<f64>,
    pub min_shared: Option<u32>,
    /// Semantic pairs (cos ≥ β, the database's β when `None`), by the index when `.1`.
    pub semantic: Option<(Option<f32>, bool)>,
}

impl From<PairsArgs> for Config {
    fn from(a: PairsArgs) -> Config {
        Config {
            db: a.db,
            k: a.max_distance,
            min_jaccard: a.min_jaccard,
            groups: a.groups,
            summary: a.summary,
            threads: a.threads,
            min_containment: a.min_containment,
            min_shared: a.min_shared,
            semantic: a.semantic.then_some((a.min_cosine, a.semantic_index)),
        }
    }
}

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let d = super::open_ro(&cfg.db)?;
    if let Some(c) = cfg.min_containment {
        return containment_pairs(out, json, &d, c, cfg.threads, cfg.summary);
    }
    if let (Some((beta, index)), false) = (cfg.semantic, cfg.groups) {
        return semantic_pairs(out, json, &d, beta, index);
    }
    let opts = PairsOptions {
        max_distance: cfg.k.unwrap_or(d.config().max_distance),
        min_jaccard: cfg.min_jaccard,
        threads: cfg.threads,
        min_shared: cfg.min_shared,
    };
    let rep = fpdb::pairs(&d, &opts)?;
    let groups = match cfg.groups {
        true => Some(fpdb::report_groups(&d, &rep, cfg.semantic)?),
        false => None,
    };
    // exit 1 when nothing was found (no group with --groups: over the union, there may be
    // groups without text pairs)
    let none = groups.as_ref().map_or(rep.pairs.is_empty(), Vec::is_empty);
    print_pairs(out, json, &d, &rep, groups, cfg.summary)?;
    Ok(if none { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn print_pairs(
    out: &mut impl Write,
    json: bool,
    d: &Db,
    rep: &PairsReport,
    groups: Option<Vec<(u64, Vec<u64>)>>,
    summary: bool,
) -> Result<()> {
    // The handle is read-only: every id of the report has a key.
    let key = |id: u64| d.key_of(id).unwrap_or_else(|| format!("#{id}"));
    if let Some(groups) = groups {
        for (canonical, members) in groups {
            let keys: Vec<String> = members.iter().map(|&m| key(m)).collect();
            if json {
                json_line(
                    out,
                    &GroupLine {
                        group: canonical,
                        canonical: key(canonical),
                        size: members.len(),
                        members: keys,
                    },
                )?;
            } else {
                writeln!(
                    out,
                    "group {canonical} ({} members, canonical {:?}): {}",
                    members.len(),
                    key(canonical),
                    keys.join(", ")
                )?;
            }
        }
    } else if !summary {
        for p in &rep.pairs {
            if json {
                json_line(out, &PairLine::new(p, key))?;
            } else {
                writeln!(out, "{}\t{}\t{}\t{}", key(p.a), key(p.b), p.hamming, fmt_j(p.jaccard))?;
            }
        }
    }
    if json && summary {
        writeln!(
            out,
            "{}",
            json!({"docs": rep.docs, "pairs": rep.pairs.len(), "by_hamming": rep.by_hamming, "by_jaccard": rep.by_jaccard,
            "hamming_seconds": rep.hamming_seconds, "verify_seconds": rep.verify_seconds})
        )?;
    } else if (!json || summary) && !crate::print::quiet() {
        let mut err = io::stderr().lock();
        writeln!(
            err,
            "{} pairs among {} documents (Hamming search {:.3} s, Jaccard {:.3} s)",
            rep.pairs.len(),
            rep.docs,
            rep.hamming_seconds,
            rep.verify_seconds
        )?;
        writeln!(err, "{:>10} {:>10} {:>10}", "hamming", "pairs", "docs")?;
        for r in &rep.by_hamming {
            writeln!(err, "{:>10} {:>10} {:>10}", r.label, r.pairs, r.docs)?;
        }
        if !rep.by_jaccard.is_empty() {
            writeln!(err, "{:>10} {:>10} {:>10}", "jaccard", "pairs", "docs")?;
            for r in &rep.by_jaccard {
                writeln!(err, "{:>10} {:>10} {:>10}", r.label, r.pairs, r.docs)?;
            }
        }
    }
    Ok(())
}

/// `pairs --min-containment C`: every pair once, with the direction: `a<b` (a inside b), `b<a`, or
/// `both` (each inside the other at >= C).
fn containment_pairs(out: &mut impl Write, json: bool, d: &Db, c: f64, threads: usize, summary: bool) -> Result<ExitCode> {
    let t0 = std::time::Instant::now();
    let pairs = d.containment().pairs(c, threads)?;
    let secs = t0.elapsed().as_secs_f64();
    let key = |id: u64| d.key_of(id).unwrap_or_else(|| format!("#{id}"));
    if !summary {
        for p in &pairs {
            let line = ContainPairLine::new(p, c, key);
            if json {
                json_line(out, &line)?;
            } else {
                writeln!(
                    out,
                    "{}\t{}\t{}\t{:.4}\t{:.4}\t{:.4}",
                    line.a, line.b, line.direction, p.a_in_b, p.b_in_a, p.jaccard
                )?;
            }
        }
    }
    let docs = d.stats().docs;
    if json && summary {
        writeln!(out, "{}", json!({"docs": docs, "pairs": pairs.len(), "seconds": secs}))?;
    } else if !json || summary {
        crate::print::note!(
            "{} containment pairs (>= {c} in either direction) among {docs} documents ({secs:.3} s); columns: a, b, direction (a<b: a inside b), a_in_b, b_in_a, jaccard",
            pairs.len()
        );
    }
    Ok(if pairs.is_empty() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// `--semantic`: the pairs of embedded documents with cosine ≥ β.
#[cfg(feature = "semantic")]
fn semantic_pairs(out: &mut impl Write, json: bool, d: &Db, beta: Option<f32>, index: bool) -> Result<ExitCode> {
    let mode = if index {
        fpdb::semantic::SearchMode::Indexed
    } else {
        fpdb::semantic::SearchMode::Exact
    };
    let pairs = d.semantic().pairs(beta, mode)?;
    let key = |id: u64| d.key_of(id).unwrap_or_else(|| format!("#{id}"));
    for &(a, b, cosine) in &pairs {
        if json {
            writeln!(
                out,
                "{}",
                json!({"a": key(a), "b": key(b), "a_id": a, "b_id": b, "cosine": cosine, "channels": ["semantic"]})
            )?;
        } else {
            writeln!(out, "{}\t{}\t{cosine:.4}", key(a), key(b))?;
        }
    }
    crate::print::note!(
        "{} semantic pairs among {} embedded documents ({} not embedded yet)",
        pairs.len(),
        d.stats().semantic_vectors,
        d.stats().semantic_pending
    );
    Ok(if pairs.is_empty() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

#[cfg(not(feature = "semantic"))]
fn semantic_pairs(_: &mut impl Write, _: bool, _: &Db, _: Option<f32>, _: bool) -> Result<ExitCode> {
    Err(fpdb::Error::InvalidOption {
        name: "semantic",
        message: "this fpdb was built without the `semantic` feature; build it with `cargo build --features semantic`".into(),
    }
    .into())
}
