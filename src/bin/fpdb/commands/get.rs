//! `fpdb get`: a stored document and its group.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use serde_json::json;

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
        let meta: serde_json::Value = doc
            .record
            .meta
            .as_deref()
            .and_then(|m| serde_json::from_str(m).ok())
            .unwrap_or(serde_json::Value::Null);
        writeln!(
            out,
            "{}",
            json!({"key": doc.record.key, "id": doc.id, "simhash": doc.record.simhash, "shingles": doc.record.count,
                   "group": doc.group.id, "canonical": doc.group.canonical, "group_members": members.iter().map(|m| &m.1).collect::<Vec<_>>(),
                   "inserted_at_ms": doc.record.inserted_at_ms, "meta": meta})
        )?;
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
