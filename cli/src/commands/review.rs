//! `fpdb review same|distinct|undo|list`: curator decisions, kept by key. The groups follow at
//! once (the library regroups in the decision's own commit).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use fpdb::{Decision, DecisionKind};
use serde_json::json;

use crate::cli::{DecideArgs, KeyPairArgs, ReviewCmd};
use crate::print::json_line;

/// `fpdb review …` as plain settings.
pub enum Config {
    Decide {
        db: PathBuf,
        a: String,
        b: String,
        decision: DecisionKind,
        reason: Option<String>,
        author: Option<String>,
    },
    Undo {
        db: PathBuf,
        a: String,
        b: String,
    },
    List {
        db: PathBuf,
    },
}

impl Config {
    fn decide(a: DecideArgs, decision: DecisionKind) -> Config {
        let DecideArgs { pair, reason, author } = a;
        Config::Decide {
            db: pair.db,
            a: pair.key_a,
            b: pair.key_b,
            decision,
            reason,
            author,
        }
    }
}

impl From<ReviewCmd> for Config {
    fn from(c: ReviewCmd) -> Config {
        match c {
            ReviewCmd::Same(a) => Config::decide(a, DecisionKind::Same),
            ReviewCmd::Distinct(a) => Config::decide(a, DecisionKind::Distinct),
            ReviewCmd::Undo(KeyPairArgs { db, key_a, key_b }) => Config::Undo { db, a: key_a, b: key_b },
            ReviewCmd::List(a) => Config::List { db: a.db },
        }
    }
}

fn print_decision(out: &mut impl Write, d: &Decision) -> Result<()> {
    let mut line = format!("{} {:?} {:?} at {} ms", d.decision, d.a, d.b, d.at_ms);
    if let Some(a) = &d.author {
        line += &format!(" by {a:?}");
    }
    if let Some(r) = &d.reason {
        line += &format!(": {r}");
    }
    writeln!(out, "{line}")?;
    Ok(())
}

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    match cfg {
        Config::Decide {
            db,
            a,
            b,
            decision,
            reason,
            author,
        } => {
            let d = super::open(&db, true)?;
            let made = d.decisions().decide(&a, &b, decision, reason.as_deref(), author.as_deref())?;
            // The group each key is in now.
            let groups: Vec<_> = [&a, &b].iter().map(|k| d.get(k).ok().flatten().map(|doc| doc.group)).collect();
            if json {
                json_line(out, &json!({"decision": made, "group_a": groups[0], "group_b": groups[1]}))?;
            } else {
                print_decision(out, &made)?;
                for (k, g) in [&a, &b].iter().zip(&groups) {
                    if let Some(g) = g {
                        writeln!(
                            out,
                            "  {k:?} is in group {} ({} members, canonical {:?})",
                            g.id, g.size, g.canonical
                        )?;
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Config::Undo { db, a, b } => {
            let d = super::open(&db, true)?;
            let undone = d.decisions().undo(&a, &b)?;
            if json {
                json_line(out, &json!({"a": a, "b": b, "undone": undone}))?;
            } else if let Some(u) = &undone {
                write!(out, "undone: ")?;
                print_decision(out, u)?;
            } else {
                writeln!(out, "no decision about {a:?} and {b:?}")?;
            }
            Ok(if undone.is_some() { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Config::List { db } => {
            let d = super::open_ro(&db)?;
            for dec in d.decisions().list() {
                if json {
                    json_line(out, &dec)?;
                } else {
                    print_decision(out, &dec)?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
