//! `fpdb init`: create a database.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};

use fpdb::fingerprint::method::Method;
use fpdb::{ContainmentConfig, CreateOptions, Db, Error};

use crate::cli::{ChannelArgs, InitArgs, OnOff};

pub struct Config {
    pub db: PathBuf,
    pub create: CreateOptions,
}

impl Config {
    pub fn from_args(a: InitArgs) -> Result<Config, Error> {
        let method = method_from(a.normalizer, &a.method, a.idf_from.as_deref(), a.min_shared)?;
        let mut spec = super::spec_from(&a.shingle, a.weights.into())?.with_method(method.clone());
        spec.normalizer = a.normalizer;
        if let Some(hash) = &a.hash {
            spec.hash = hash.parse()?;
        }
        spec.validate()?;
        let containment = ContainmentConfig::from_options(
            Some(a.containment == OnOff::On),
            a.containment_sample,
            a.containment_max_postings,
            a.containment_max_samples,
        )?;
        let create = CreateOptions::default()
            .with_spec(spec)
            .with_tables(a.tables.parse()?)
            .with_max_distance(a.max_distance.unwrap_or_else(|| method.default_max_distance()))
            .with_min_jaccard(a.min_jaccard)
            .with_containment(containment)
            .with_store_text(a.store_text);
        let create = with_semantic(create, &a.channel)?;
        Ok(Config { db: a.db, create })
    }
}

/// `--semantic MODEL_DIR` and its options into the library's [`fpdb::semantic::SemanticConfig`].
#[cfg(feature = "semantic")]
fn with_semantic(create: CreateOptions, a: &ChannelArgs) -> Result<CreateOptions, Error> {
    Ok(match semantic_config(a)? {
        Some(c) => create.with_semantic(Some(c)),
        None => create,
    })
}

#[cfg(not(feature = "semantic"))]
fn with_semantic(create: CreateOptions, a: &ChannelArgs) -> Result<CreateOptions, Error> {
    semantic_config(a).map(|_| create)
}

/// The channel's settings (`init --semantic …`, `semantic enable`), `None` without `--semantic`.
#[cfg(feature = "semantic")]
pub fn semantic_config(a: &ChannelArgs) -> Result<Option<fpdb::semantic::SemanticConfig>, Error> {
    let Some(dir) = &a.semantic else { return Ok(None) };
    let mut c = fpdb::semantic::SemanticConfig::new(dir);
    c.min_cosine = a.min_cosine;
    c.field = a.semantic_field.clone();
    c.max_tokens = a.semantic_max_tokens.unwrap_or(c.max_tokens);
    if let Some(g) = &a.groups {
        c.groups = g.parse()?;
    }
    Ok(Some(c))
}

/// Without the `semantic` feature, `--semantic` is refused.
#[cfg(not(feature = "semantic"))]
pub fn semantic_config(a: &ChannelArgs) -> Result<Option<std::convert::Infallible>, Error> {
    match a.semantic {
        None => Ok(None),
        Some(_) => Err(Error::InvalidOption {
            name: "semantic",
            message: "this fpdb was built without the `semantic` feature; build it with `cargo build --features semantic`".into(),
        }),
    }
}

/// `--method NAME` with its options: the IDF table of weighted-simhash (built from
/// `--idf-from`, tokenized with the database's normalizer `normalizer`), Broder's `--min-shared`.
fn method_from(normalizer: u32, name: &str, idf_from: Option<&std::path::Path>, min_shared: Option<u32>) -> Result<Method, Error> {
    Method::with_options_for(normalizer, name, idf_from.map(|p| move |n| super::idf_table(p, n)), min_shared)
}

pub fn run(cfg: Config, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let d = Db::create(&cfg.db, &cfg.create).with_context(|| format!("cannot create database {}", cfg.db.display()))?;
    let s = d.stats();
    let containment = match d.config().containment {
        Some(c) => format!(
            "containment index on (sample 1/{}, {}, posting cap {})",
            c.sample,
            crate::print::cap_words(c.max_samples),
            c.max_postings
        ),
        None => "containment index off".into(),
    };
    let semantic = semantic_line(&d);
    if json {
        let mut v = serde_json::to_value(&s)?;
        v["containment"] = serde_json::to_value(d.config().containment.map(|c| (c.sample, c.max_postings)))?;
        #[cfg(feature = "semantic")]
        {
            v["semantic"] = serde_json::to_value(d.semantic().spec())?;
        }
        writeln!(out, "{v}")?;
    } else {
        writeln!(
            out,
            "created {} — spec {}; {} tables; k = {}, t = {}; {containment}{semantic}",
            cfg.db.display(),
            s.spec,
            s.tables,
            s.max_distance,
            s.min_jaccard
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The semantic channel's part of the summary line.
#[cfg(not(feature = "semantic"))]
fn semantic_line(_: &Db) -> String {
    String::new()
}

/// The semantic channel's part of the summary line.
#[cfg(feature = "semantic")]
fn semantic_line(d: &Db) -> String {
    match d.semantic().spec() {
        Some(s) => format!(
            "; semantic channel {} ({} dims, {} tokens, β = {} ({}), {}, groups {})",
            s.model.name,
            s.model.dim,
            s.max_tokens,
            s.min_cosine,
            match s.model.calibrated_min_cosine {
                Some(c) if c == s.min_cosine => "the model's calibrated β".to_string(),
                Some(c) => format!("given; the model's calibrated β is {c}"),
                None => "the model has no calibration: measure one with `fpdb eval PAIRS --semantic MODEL_DIR`".to_string(),
            },
            s.field.as_deref().map_or("the text".to_string(), |f| format!("field `{f}`")),
            s.groups
        ),
        None => String::new(),
    }
}
