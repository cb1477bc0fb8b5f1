//! One file per command. Each converts its clap arguments into a plain `Config`, then runs it
//! against the library; this module dispatches and holds the helpers they share.

mod backup;
mod bench_query;
mod check;
mod compact;
mod completions;
mod delete;
mod eval;
mod export;
mod get;
mod import;
mod ingest;
mod init;
mod insert;
mod man;
mod pairs;
mod query;
mod reindex;
mod review;
mod semantic;
#[cfg(feature = "serve")]
mod serve;
mod stats;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use fpdb::{Db, Error, FingerprintSpec, Options, Weighting};

use crate::cli::{Cli, Cmd, KeyArgs};
use crate::print::note;
use fpdb::input;

/// Runs the parsed command; output goes through one buffered stdout (nowhere under `-q`).
pub fn run(cli: Cli) -> Result<ExitCode> {
    crate::print::set_quiet(cli.quiet);
    let mut out: Box<dyn Write> = if cli.quiet {
        Box::new(io::sink())
    } else {
        Box::new(io::BufWriter::new(io::stdout().lock()))
    };
    let json = cli.json;
    let code = match cli.cmd {
        Cmd::Init(a) => init::run(init::Config::from_args(a)?, json, &mut out)?,
        Cmd::Insert(a) => insert::run(insert::Config::from(a), json, &mut out)?,
        Cmd::Query(a) => query::run(query::Config::from_args(a)?, json, &mut out)?,
        Cmd::Ingest(a) => ingest::run(ingest::Config::from(a), json, &mut out)?,
        Cmd::Get(a) => get::run(get::Config::from(a), json, &mut out)?,
        Cmd::Delete(a) => delete::run(KeyConfig::from(a), json, &mut out)?,
        Cmd::Export(a) => export::run(export::Config::from(a), &mut out)?,
        Cmd::Import(a) => import::run(import::Config::from(a), json, &mut out)?,
        Cmd::Backup(a) => backup::run(backup::Config::from(a), json, &mut out)?,
        Cmd::Stats(a) => stats::run(&a.db, json, &mut out)?,
        Cmd::Compact(a) => compact::run(compact::Config::from(a), json, &mut out)?,
        Cmd::Check(a) => check::run(&a.db, json, &mut out)?,
        Cmd::Reindex(a) => reindex::run(reindex::Config::from_args(a)?, json, &mut out)?,
        Cmd::Pairs(a) => pairs::run(pairs::Config::from(a), json, &mut out)?,
        Cmd::Eval(a) => eval::run(eval::Config::from_args(a)?, &mut out)?,
        Cmd::BenchQuery(a) => bench_query::run(bench_query::Config::from(a), json, &mut out)?,
        #[cfg(feature = "serve")]
        Cmd::Serve(a) => serve::run(serve::config(a, cli.quiet))?,
        Cmd::Semantic(c) => semantic::run(semantic::Config::from_args(c)?, json, &mut out)?,
        Cmd::Completions(a) => completions::run(completions::Config::from(a), &mut out)?,
        Cmd::Man(a) => man::run(man::Config::from(a), &mut out)?,
        Cmd::Review(c) => review::run(review::Config::from(c), json, &mut out)?,
    };
    out.flush()?;
    Ok(code)
}

/// The plain config of the commands that name one document (`get`, `delete`).
pub struct KeyConfig {
    pub db: PathBuf,
    pub key: String,
}

impl From<KeyArgs> for KeyConfig {
    fn from(a: KeyArgs) -> KeyConfig {
        KeyConfig { db: a.db, key: a.key }
    }
}

/// Opens for writing; reports what recovery did (torn tails, orphans, damaged records) on stderr.
pub fn open(db: &Path, sync: bool) -> Result<Db> {
    let opts = Options {
        sync,
        ..Options::default()
    };
    let d = Db::open_with(db, opts).with_context(|| format!("cannot open database {}", db.display()))?;
    let r = d.recovery();
    if r.truncated_bytes > 0 || !r.orphans_removed.is_empty() || r.damaged_records > 0 {
        eprintln!(
            "fpdb: recovery of {}: cut {} bytes of torn segment tails, removed {} orphan file(s), left out {} damaged doc record(s){}",
            db.display(),
            r.truncated_bytes,
            r.orphans_removed.len(),
            r.damaged_records,
            if r.damaged_records > 0 {
                " (run `fpdb check` to list them)"
            } else {
                ""
            }
        );
    }
    Ok(d)
}

/// Commands that only read open read-only: they work beside a writing process and see the database
/// as of their start.
pub fn open_ro(db: &Path) -> Result<Db> {
    open_ro_with(db, Options::default())
}

/// [`open_ro`] with other handle options (`read_only` is set here).
pub fn open_ro_with(db: &Path, opts: Options) -> Result<Db> {
    let opts = Options { read_only: true, ..opts };
    Db::open_with(db, opts).with_context(|| format!("cannot open database {}", db.display()))
}

/// A text file, or standard input when there is none.
pub fn read_input(file: Option<&PathBuf>) -> Result<String> {
    match file {
        Some(p) => Ok(input::read_text_file(p)?),
        None => Ok(input::read_text(io::stdin(), "standard input")?),
    }
}

/// The frozen IDF table of the texts of a JSONL corpus (its "text" fields; unreadable lines
/// are skipped and counted on stderr), its words those of normalizer version `normalizer`.
pub fn idf_table(corpus: &Path, normalizer: u32) -> Result<fpdb::fingerprint::weighted::IdfTable, Error> {
    let (table, skipped) = fpdb::fingerprint::weighted::IdfTable::from_jsonl_with(corpus, normalizer)?;
    note!(
        "fpdb: IDF table from {}: {} documents, {} words ({skipped} lines skipped)",
        corpus.display(),
        table.docs(),
        table.len()
    );
    Ok(table)
}

/// A spec from `--shingle` and `--weights`.
pub fn spec_from(shingle: &str, weights: Weighting) -> Result<FingerprintSpec, Error> {
    let mut spec: FingerprintSpec = shingle.parse()?;
    spec.weighting = weights;
    Ok(spec)
}
