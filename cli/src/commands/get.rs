//! `fpdb get`: a stored document and its group (with `--text`, its stored text).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use fpdb::output::DocumentLine;

use crate::cli::GetArgs;
use crate::print::json_line;

pub struct Config {
    pub db: PathBuf,
    pub key: String,
    /// Print the stored text (exactly), or add it to the JSON line.
    pub text: bool,
}

impl From<GetArgs> for Config {
    fn from(a: GetArgs) -> Config {
        Config {
            db: a.key.db,
            key: a.key.key,
            text: a.text,
        }
    }
}

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let d = super::open_ro(&cfg.db)?;
    let Some(doc) = d.get(&cfg.key)? else {
        if !json {
            writeln!(out, "no document with key {:?}", cfg.key)?;
        }
        return Ok(ExitCode::from(1));
    };
    // Read after the document: a writer replacing it meanwhile makes this `None`.
    let text = if cfg.text { d.texts().get(&cfg.key)? } else { None };
    if cfg.text && text.is_none() {
        if !json {
            writeln!(out, "no document with key {:?}", cfg.key)?;
        }
        return Ok(ExitCode::from(1));
    }
    let members = d.group_members(doc.group.id);
    if json {
        let mut v = serde_json::to_value(DocumentLine::new(&doc, &members))?;
        if let Some(t) = text {
            v["text"] = serde_json::Value::String(t);
        }
        json_line(out, &v)?;
    } else if let Some(t) = text {
        out.write_all(t.as_bytes())?;
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
