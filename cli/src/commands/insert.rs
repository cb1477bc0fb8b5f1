//! `fpdb insert`: insert (or replace) one document, with its metadata and, on request, its
//! containment relations ([`fpdb::Db::insert_doc`], as Python's `insert`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use fpdb::{Biblio, Dedup, NewDoc};

use crate::cli::InsertArgs;
use crate::print::{outcome_line, print_outcome, print_relations};

pub struct Config {
    pub db: PathBuf,
    pub key: String,
    pub file: Option<PathBuf>,
    pub dedup: Dedup,
    pub biblio: Biblio,
    pub containment: Option<f64>,
    pub sync: bool,
}

impl From<InsertArgs> for Config {
    fn from(a: InsertArgs) -> Config {
        Config {
            db: a.db,
            key: a.key,
            file: a.file,
            dedup: a.dedup.into(),
            biblio: Biblio {
                title: a.title,
                year: a.year,
                doi: a.doi,
            },
            containment: a.containment,
            sync: !a.write.no_sync,
        }
    }
}

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let text = super::read_input(cfg.file.as_ref())?;
    let d = super::open(&cfg.db, cfg.sync)?;
    let doc = NewDoc {
        key: cfg.key,
        text,
        meta: None,
        biblio: cfg.biblio,
    };
    let o = d.insert_doc(doc, cfg.dedup, cfg.containment)?;
    if json {
        outcome_line(out, &o)?;
    } else {
        print_outcome(out, &o)?;
        print_relations(out, &o)?;
    }
    Ok(ExitCode::SUCCESS)
}
