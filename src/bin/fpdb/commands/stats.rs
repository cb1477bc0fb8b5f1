//! `fpdb stats`: counters.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

pub fn run(db: &Path, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let d = super::open_ro(db)?;
    let s = d.stats();
    if json {
        writeln!(out, "{}", serde_json::to_string(&s)?)?;
    } else {
        writeln!(out, "documents      {}", s.docs)?;
        writeln!(out, "groups (>=2)   {} holding {} documents", s.groups, s.grouped_docs)?;
        writeln!(
            out,
            "segments       {} ({} bytes, {} live)",
            s.segments, s.segment_bytes, s.live_bytes
        )?;
        writeln!(out, "tables         {}", s.tables)?;
        writeln!(out, "defaults       k = {}, t = {}", s.max_distance, s.min_jaccard)?;
        writeln!(out, "spec           {}", s.spec)?;
    }
    Ok(ExitCode::SUCCESS)
}
