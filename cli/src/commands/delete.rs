//! `fpdb delete`: delete a document.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use serde_json::json;

use super::KeyConfig as Config;

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let d = super::open(&cfg.db, true)?;
    let existed = d.delete(&cfg.key)?;
    if json {
        writeln!(out, "{}", json!({"key": cfg.key, "deleted": existed}))?;
    } else if existed {
        writeln!(out, "deleted {:?}", cfg.key)?;
    } else {
        writeln!(out, "no document with key {:?}", cfg.key)?;
    }
    Ok(if existed { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
