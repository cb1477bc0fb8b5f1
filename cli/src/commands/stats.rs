//! `fpdb stats`: counters.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use fpdb::output::StatsLine;

use crate::print::json_line;

pub fn run(db: &Path, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let d = super::open_ro(db)?;
    let s = d.stats();
    let c = d.containment().stats()?;
    if json {
        json_line(out, &StatsLine::new(&s, c.as_ref()))?;
    } else {
        writeln!(out, "documents      {}", s.docs)?;
        writeln!(out, "groups (>=2)   {} holding {} documents", s.groups, s.grouped_docs)?;
        writeln!(
            out,
            "segments       {} ({} bytes, {} live)",
            s.segments, s.segment_bytes, s.live_bytes
        )?;
        if s.best_tables == s.tables {
            writeln!(out, "tables         {}", s.tables)?;
        } else {
            writeln!(
                out,
                "tables         {} (the cost model prefers {} at this size: `fpdb reindex DB` re-lays out)",
                s.tables, s.best_tables
            )?;
        }
        writeln!(out, "defaults       k = {}, t = {}", s.max_distance, s.min_jaccard)?;
        writeln!(out, "spec           {}", s.spec)?;
        match c {
            None => writeln!(out, "containment    off")?,
            Some(c) => {
                writeln!(
                    out,
                    "containment    on: sample 1/{} ({}), {} entries ({} docs by samples, {} short docs by all {} of their shingles)",
                    c.sample,
                    crate::print::cap_words(c.max_samples),
                    c.entries,
                    c.sampled_docs,
                    c.short_docs,
                    c.short_entries
                )?;
                writeln!(
                    out,
                    "               {} keys; {} frequent keys (> {} docs, skipped by queries) holding {} entries; longest list {}",
                    c.keys, c.frequent_keys, c.max_postings, c.frequent_entries, c.longest_posting
                )?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
