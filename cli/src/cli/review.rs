//! `fpdb review`: curator decisions.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::DbArg;

/// `fpdb review ...`.
#[derive(Subcommand, Debug)]
pub enum ReviewCmd {
    /// The two documents are one work: they share a group whatever the scores say.
    Same(DecideArgs),
    /// The two documents are different works: no group holds both, now or after any later insert.
    Distinct(DecideArgs),
    /// Remove the decision about two keys; the groups follow. Exit code 1 when there was none.
    Undo(KeyPairArgs),
    /// Every decision (key pair, decision, time, author, reason).
    List(DbArg),
}

/// `fpdb review same|distinct`.
#[derive(Args, Debug)]
pub struct DecideArgs {
    #[command(flatten)]
    pub pair: KeyPairArgs,
    /// Why (kept with the decision).
    #[arg(long)]
    pub reason: Option<String>,
    /// Who decided (kept with the decision).
    #[arg(long)]
    pub author: Option<String>,
}

/// A database and two keys.
#[derive(Args, Debug)]
pub struct KeyPairArgs {
    /// Database directory.
    pub db: PathBuf,
    /// One document's key.
    pub key_a: String,
    /// The other's.
    pub key_b: String,
}
