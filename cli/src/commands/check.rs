//! `fpdb check`: verify everything; exit 4 on any fault.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use serde_json::json;

pub fn run(db: &Path, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let d = super::open_ro(db)?;
    let rep = d.check()?;
    if json {
        for f in &rep.faults {
            writeln!(out, "{}", serde_json::to_string(f)?)?;
        }
        writeln!(
            out,
            "{}",
            json!({"docs": rep.docs, "table_entries": rep.table_entries, "contain_entries": rep.contain_entries, "faults": rep.faults.len()})
        )?;
    } else {
        for f in &rep.faults {
            let doc = f.doc.map(|d| format!("doc {d}")).unwrap_or_default();
            let key = f.key.as_ref().map(|k| format!(" key {k:?}")).unwrap_or_default();
            writeln!(out, "FAULT {doc}{key} in {}: {}", f.path, f.what)?;
        }
        // The index's entries, when there is one.
        let contain = if rep.contain_entries > 0 {
            format!(" and {} containment-index entries", rep.contain_entries)
        } else {
            String::new()
        };
        writeln!(
            out,
            "checked {} documents and {} table entries{contain}: {} fault(s)",
            rep.docs,
            rep.table_entries,
            rep.faults.len()
        )?;
    }
    Ok(if rep.faults.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(4)
    })
}
