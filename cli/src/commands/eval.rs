//! `fpdb eval`: detection quality on a labelled corpus (exact-Jaccard truth, P/R/F1 over k × t),
//! written as Markdown, JSON and SVG.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use fpdb::eval::methods::{all_methods, compare_methods, CorpusDoc, MethodsOptions};
use fpdb::fingerprint::method::Method;
use fpdb::fingerprint::weighted::IdfTable;
use fpdb::{Error, FingerprintSpec, ShingleUnit, Weighting, DEFAULT_MAX_DISTANCE, DEFAULT_MIN_JACCARD};

use crate::cli::EvalArgs;
use fpdb::input;

pub struct Config {
    pub corpus: PathBuf,
    pub name: String,
    pub out_dir: PathBuf,
    pub img_dir: PathBuf,
    pub truth_t: f64,
    pub spec: FingerprintSpec,
    pub min_words: usize,
    pub limit: Option<usize>,
    /// `--methods`, `--analyses`, `--idf-from`.
    pub methods: Option<String>,
    pub analyses: bool,
    pub idf_from: Option<PathBuf>,
    /// `--semantic MODEL_DIR` and its truncation.
    pub semantic: Option<(PathBuf, usize)>,
}

impl Config {
    pub fn from_args(a: EvalArgs) -> Result<Config, Error> {
        let name = a
            .name
            .unwrap_or_else(|| a.corpus.file_stem().map_or("corpus".into(), |s| s.to_string_lossy().into_owned()));
        let img_dir = a.img_dir.unwrap_or_else(|| a.out_dir.join("img"));
        Ok(Config {
            spec: super::spec_from(&a.shingle, a.weights.into())?,
            corpus: a.corpus,
            name,
            out_dir: a.out_dir,
            img_dir,
            truth_t: a.truth_t,
            min_words: a.min_words,
            limit: a.limit,
            methods: a.methods,
            analyses: a.analyses,
            idf_from: a.idf_from,
            semantic: a.semantic.map(|m| (m, a.semantic_max_tokens)),
        })
    }

    /// The command line that reproduces this report (every option that changes it).
    fn reproduce(&self) -> String {
        let shingle = match self.spec.unit {
            ShingleUnit::Word => format!("word:{}", self.spec.n),
            ShingleUnit::Char => format!("char:{}", self.spec.n),
        };
        let weights = match self.spec.weighting {
            Weighting::Binary => "binary",
            Weighting::Count => "count",
        };
        let mut s = format!(
            "fpdb eval {} --name {} --out-dir {} --truth-t {} --shingle {shingle} --weights {weights}",
            self.corpus.display(),
            self.name,
            self.out_dir.display(),
            self.truth_t
        );
        if self.min_words > 0 {
            s.push_str(&format!(" --min-words {}", self.min_words));
        }
        if let Some(l) = self.limit {
            s.push_str(&format!(" --limit {l}"));
        }
        s
    }
}

fn load(cfg: &Config) -> Result<(Vec<fpdb::eval::EvalDoc>, usize), Error> {
    let f = std::fs::File::open(&cfg.corpus).map_err(|e| Error::Io {
        op: "open corpus",
        path: cfg.corpus.clone(),
        source: e,
    })?;
    let mut fpr = fpdb::Fingerprinter::new(cfg.spec.clone());
    let mut docs = Vec::new();
    let mut skipped = 0usize;
    for item in input::jsonl(f, cfg.corpus.display().to_string(), "key".into(), "text".into(), None)? {
        if cfg.limit.is_some_and(|l| docs.len() >= l) {
            break;
        }
        let Ok(doc) = item else {
            skipped += 1;
            continue;
        };
        if doc.text.split_whitespace().count() < cfg.min_words.max(1) {
            skipped += 1;
            continue;
        }
        let label = doc
            .meta
            .as_deref()
            .and_then(|m| serde_json::from_str::<serde_json::Value>(m).ok())
            .and_then(|v| v.get("label").and_then(|l| l.as_str().map(str::to_string)));
        let fp = fpr.fingerprint(&doc.text);
        if fp.shingles.is_empty() {
            skipped += 1;
            continue;
        }
        docs.push(fpdb::eval::EvalDoc {
            key: doc.key,
            label,
            shingles: fp.shingles,
            simhash: fp.simhash,
        });
    }
    Ok((docs, skipped))
}

fn write_file(p: PathBuf, s: &str) -> Result<(), Error> {
    std::fs::write(&p, s).map_err(|e| Error::Io {
        op: "write report",
        path: p,
        source: e,
    })
}

pub fn run(cfg: Config, out: &mut impl Write) -> Result<ExitCode> {
    if cfg.methods.is_some() {
        return run_methods(cfg, out);
    }
    if let Some((model, max_tokens)) = cfg.semantic.clone() {
        return run_semantic(&cfg, &model, max_tokens, out);
    }
    let t0 = Instant::now();
    let (docs, skipped) = load(&cfg)?;
    crate::print::note!(
        "fpdb eval: {} documents fingerprinted in {:.2} s ({skipped} skipped); computing exact truth ...",
        docs.len(),
        t0.elapsed().as_secs_f64()
    );
    let ks: Vec<u32> = (0..=16).collect();
    let ts: Vec<f64> = (0..=10).map(|i| f64::from(50 + 5 * i) / 100.0).collect();
    let report = fpdb::eval::evaluate(&docs, cfg.truth_t, &ks, &ts);
    create_report_dirs(&cfg)?;
    let name = &cfg.name;
    let mut md = report.to_markdown(name);
    md.push_str(&format!(
        "\n## Reproduce\n\n```\n{}\n```\n\nSpec: {}. {} documents ({skipped} skipped).\n",
        cfg.reproduce(),
        cfg.spec,
        docs.len()
    ));
    write_file(cfg.out_dir.join(format!("{name}.md")), &md)?;
    if let Some(svg) = report.svg_vs_k(name, DEFAULT_MIN_JACCARD) {
        write_file(cfg.img_dir.join(format!("{name}-vs-k.svg")), &svg)?;
    }
    if let Some(svg) = report.svg_vs_t(name, DEFAULT_MAX_DISTANCE) {
        write_file(cfg.img_dir.join(format!("{name}-vs-t.svg")), &svg)?;
    }
    write_file(cfg.out_dir.join(format!("{name}.json")), &serde_json::to_string_pretty(&report)?)?;
    writeln!(out, "{md}")?;
    Ok(ExitCode::SUCCESS)
}

/// The corpus with texts and labels, filtered as [`load`] filters.
fn load_texts(cfg: &Config) -> Result<(Vec<CorpusDoc>, usize), Error> {
    let f = std::fs::File::open(&cfg.corpus).map_err(|e| Error::Io {
        op: "open corpus",
        path: cfg.corpus.clone(),
        source: e,
    })?;
    let mut fpr = fpdb::Fingerprinter::new(cfg.spec.clone());
    let (mut docs, mut skipped) = (Vec::new(), 0usize);
    for item in input::jsonl(f, cfg.corpus.display().to_string(), "key".into(), "text".into(), None)? {
        if cfg.limit.is_some_and(|l| docs.len() >= l) {
            break;
        }
        let Ok(doc) = item else {
            skipped += 1;
            continue;
        };
        if doc.text.split_whitespace().count() < cfg.min_words.max(1) || fpr.fingerprint(&doc.text).shingles.is_empty() {
            skipped += 1;
            continue;
        }
        let label = doc
            .meta
            .as_deref()
            .and_then(|m| serde_json::from_str::<serde_json::Value>(m).ok())
            .and_then(|v| v.get("label").and_then(|l| l.as_str().map(str::to_string)));
        docs.push(CorpusDoc {
            key: doc.key,
            label,
            text: doc.text,
        });
    }
    Ok((docs, skipped))
}

/// `--methods all` or `name[:k],...`.
fn parse_methods(list: &str, idf: Arc<IdfTable>) -> Result<Vec<(Method, u32)>, Error> {
    if list.trim() == "all" {
        return Ok(all_methods(idf));
    }
    list.split(',')
        .map(|item| {
            let (name, k) = match item.split_once(':') {
                Some((n, k)) => (
                    n,
                    Some(k.trim().parse::<u32>().map_err(|_| Error::InvalidOption {
                        name: "methods",
                        message: format!("expected NAME or NAME:K, got {item:?}"),
                    })?),
                ),
                None => (item, None),
            };
            let mut m: Method = name.parse()?;
            if matches!(m, Method::WeightedSimHash(_)) {
                m = Method::weighted(idf.clone());
            }
            let k = k.unwrap_or_else(|| m.default_max_distance());
            Ok((m, k))
        })
        .collect()
}

fn run_methods(cfg: Config, out: &mut impl Write) -> Result<ExitCode> {
    let t0 = Instant::now();
    let (docs, skipped) = load_texts(&cfg)?;
    let idf = match &cfg.idf_from {
        Some(p) => super::idf_table(p, fpdb::fingerprint::spec::NORMALIZER_VERSION)?,
        None => IdfTable::from_texts(docs.iter().map(|d| d.text.as_str())),
    };
    let methods = parse_methods(cfg.methods.as_deref().unwrap_or("all"), Arc::new(idf))?;
    crate::print::note!(
        "fpdb eval --methods: {} documents read in {:.2} s ({skipped} skipped); comparing {} methods ...",
        docs.len(),
        t0.elapsed().as_secs_f64(),
        methods.len()
    );
    let opts = MethodsOptions {
        spec: cfg.spec.clone(),
        truth_t: cfg.truth_t,
        verify_t: DEFAULT_MIN_JACCARD,
        methods,
        analyses: cfg.analyses,
    };
    let rep = compare_methods(&docs, &opts);
    create_report_dirs(&cfg)?;
    let name = &cfg.name;
    let mut md = rep.to_markdown(name);
    let mut reproduce = format!("{} --methods {}", cfg.reproduce(), cfg.methods.as_deref().unwrap_or("all"));
    if cfg.analyses {
        reproduce.push_str(" --analyses");
    }
    if let Some(p) = &cfg.idf_from {
        reproduce.push_str(&format!(" --idf-from {}", p.display()));
    }
    md.push_str(&format!(
        "\nReproduce (2-core dev box): `{reproduce}`. {} documents ({skipped} skipped); weighted-simhash's IDF table from {}.\n",
        docs.len(),
        cfg.idf_from
            .as_ref()
            .map_or("the corpus itself".into(), |p| p.display().to_string())
    ));
    for (file, svg) in rep.svgs(name) {
        write_file(cfg.img_dir.join(file), &svg)?;
    }
    write_file(cfg.out_dir.join(format!("{name}-methods.md")), &md)?;
    write_file(
        cfg.out_dir.join(format!("{name}-methods.json")),
        &serde_json::to_string_pretty(&rep)?,
    )?;
    writeln!(out, "{md}")?;
    Ok(ExitCode::SUCCESS)
}

/// The report and image directories of `--out-dir` / `--img-dir`.
fn create_report_dirs(cfg: &Config) -> Result<(), Error> {
    for dir in [&cfg.out_dir, &cfg.img_dir] {
        std::fs::create_dir_all(dir).map_err(|e| Error::Io {
            op: "create report directory",
            path: dir.clone(),
            source: e,
        })?;
    }
    Ok(())
}

/// `--semantic`: the CORE paper's Table 4 on labelled pairs, and β calibrated on their hard negatives.
#[cfg(feature = "semantic")]
fn run_semantic(cfg: &Config, model: &std::path::Path, max_tokens: usize, out: &mut impl Write) -> Result<ExitCode> {
    use fpdb::eval::semantic::{parse_pairs, semantic_eval};
    use fpdb::semantic::{Embedder, EmbedderOptions};
    let text = std::fs::read_to_string(&cfg.corpus).map_err(|e| Error::Io {
        op: "read the labelled pairs",
        path: cfg.corpus.clone(),
        source: e,
    })?;
    let pairs = parse_pairs(&text, &cfg.corpus.display().to_string())?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let embedder = Embedder::load(
        model,
        &EmbedderOptions {
            max_tokens,
            threads,
            ..EmbedderOptions::default()
        },
    )?;
    let report = semantic_eval(&embedder, &cfg.spec, fpdb::DEFAULT_MAX_DISTANCE, fpdb::DEFAULT_MIN_JACCARD, &pairs)?;
    let md = format!(
        "# {}: text, semantic and union (the CORE paper's Table 4); β on hard negatives\n\n{} (weights xxh3 {:016x}; calibrated β {}), {max_tokens} tokens\n\n{}",
        cfg.name,
        embedder.info().name,
        embedder.info().weights_xxh3,
        embedder.info().calibrated_min_cosine.map_or("none".into(), |b| format!("{b:.2}")),
        report.markdown()
    );
    std::fs::create_dir_all(&cfg.out_dir).map_err(|e| Error::Io {
        op: "create the output directory",
        path: cfg.out_dir.clone(),
        source: e,
    })?;
    let path = cfg.out_dir.join(format!("{}-semantic", cfg.name));
    let write = |ext: &str, bytes: &[u8]| {
        std::fs::write(path.with_extension(ext), bytes).map_err(|e| Error::Io {
            op: "write the report",
            path: path.with_extension(ext),
            source: e,
        })
    };
    write("md", md.as_bytes())?;
    write("json", serde_json::to_string_pretty(&report)?.as_bytes())?;
    write(
        "svg",
        report
            .svg(&format!(
                "{}: recall and false rates vs β ({}, {max_tokens} tokens)",
                cfg.name,
                embedder.info().name
            ))
            .as_bytes(),
    )?;
    write!(out, "{md}")?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "semantic"))]
fn run_semantic(_: &Config, _: &std::path::Path, _: usize, _: &mut impl Write) -> Result<ExitCode> {
    Err(Error::InvalidOption {
        name: "semantic",
        message: "this fpdb was built without the `semantic` feature; build it with `cargo build --features semantic`".into(),
    }
    .into())
}
