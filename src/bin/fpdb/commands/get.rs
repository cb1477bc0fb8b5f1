//! `fpdb get`: a stored document and its group.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use fpdb::output::DocumentLine;

use crate::print::json_line;

use super::KeyConfig as Config;

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let d = super::open_ro(&cfg.db)?;
    let Some(doc) = d.get(&cfg.key)? else {
        if !json {
            writeln!(out, "no document with key {:?}", cfg.key)?;
        }
        return Ok(ExitCode::from(1));
    };
    let members = d.group_members(doc.group.id);
    if json {
        json_line(out, &DocumentLine::new(&doc, &members))?;
    } else {
        writeln!(out, "key       {}", doc.record.key)?;
        writeln!(out, "id        {}", doc.id)?;
        writeln!(out, "simhash   {} ({:#018x})", doc.record.simhash, doc.record.simhash)?;
        writeln!(out, "shingles  {}", doc.record.count)?;
        writeln!(
            out,
            "group     {} (canonical {:?}, {} members)",
            doc.group.id, doc.group.canonical, doc.group.size
        )?;
        for (id, k) in members {
            writeln!(out, "  member  {id}  {k}")?;
        }
        if let Some(m) = &doc.record.meta {
            writeln!(out, "meta      {m}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
