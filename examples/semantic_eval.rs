//! Paper 001's Table 4 on our labelled pairs: text-only (fpdb's verdict: Hamming ≤ k and Jaccard ≥
//! the default), semantic-only (cosine ≥ β) and union P/R/F1, with a β sweep (docs/semantic.md).
//!
//! ```text
//! bash scripts/fetch-model.sh
//! apt-get install -y wordnet && python3 scripts/semantic_corpus.py --out data/semantic_pairs.jsonl
//! cargo run --features semantic --example semantic_eval -- data/semantic_pairs.jsonl [--max-tokens 256] [--threads 2]
//! ```

use std::path::PathBuf;
use std::time::Instant;

use fpdb::fingerprint::similarity::{hamming, jaccard};
use fpdb::semantic::{Embedder, EmbedderOptions};
use fpdb::{fingerprint, FingerprintSpec, DEFAULT_MAX_DISTANCE, DEFAULT_MIN_JACCARD};

struct Pair {
    a: String,
    b: String,
    dup: bool,
}

fn prf(pred: &[bool], truth: &[bool]) -> (f64, f64, f64) {
    let tp = pred.iter().zip(truth).filter(|(p, t)| **p && **t).count() as f64;
    let fp = pred.iter().zip(truth).filter(|(p, t)| **p && !**t).count() as f64;
    let fn_ = pred.iter().zip(truth).filter(|(p, t)| !**p && **t).count() as f64;
    let p = if tp + fp > 0.0 { tp / (tp + fp) } else { 1.0 };
    let r = if tp + fn_ > 0.0 { tp / (tp + fn_) } else { 1.0 };
    let f = if p + r > 0.0 { 2.0 * p * r / (p + r) } else { 0.0 };
    (p, r, f)
}

fn main() {
    let mut it = std::env::args().skip(1);
    let mut path = PathBuf::from("data/semantic_pairs.jsonl");
    let mut model = PathBuf::from("data/models/all-MiniLM-L6-v2");
    let (mut max_tokens, mut threads) = (256usize, 2usize);
    while let Some(k) = it.next() {
        match k.as_str() {
            "--model" => model = it.next().expect("--model DIR").into(),
            "--max-tokens" => max_tokens = it.next().and_then(|v| v.parse().ok()).expect("--max-tokens N"),
            "--threads" => threads = it.next().and_then(|v| v.parse().ok()).expect("--threads N"),
            other => path = other.into(),
        }
    }
    let pairs: Vec<Pair> = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (make it with scripts/semantic_corpus.py)", path.display()))
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("JSONL");
            Pair {
                a: v["a"].as_str().expect("a").into(),
                b: v["b"].as_str().expect("b").into(),
                dup: v["dup"].as_bool().expect("dup"),
            }
        })
        .collect();
    let truth: Vec<bool> = pairs.iter().map(|p| p.dup).collect();

    let spec = FingerprintSpec::default();
    let text: Vec<bool> = pairs
        .iter()
        .map(|p| {
            let (fa, fb) = (fingerprint(&spec, &p.a), fingerprint(&spec, &p.b));
            hamming(fa.simhash, fb.simhash) <= DEFAULT_MAX_DISTANCE && jaccard(&fa.shingles, &fb.shingles).jaccard >= DEFAULT_MIN_JACCARD
        })
        .collect();

    let m = Embedder::load(
        &model,
        &EmbedderOptions {
            max_tokens,
            threads,
            batch: 8,
            nice: 0,
        },
    )
    .expect("model");
    let texts: Vec<&str> = pairs.iter().flat_map(|p| [p.a.as_str(), p.b.as_str()]).collect();
    let t = Instant::now();
    let v = m.embed(&texts).expect("embed");
    let secs = t.elapsed().as_secs_f64();
    let cos: Vec<f32> = v.chunks(2).map(|c| c[0].iter().zip(&c[1]).map(|(x, y)| x * y).sum()).collect();
    let mean = |dup: bool| {
        let c: Vec<f32> = cos.iter().zip(&truth).filter(|(_, t)| **t == dup).map(|(c, _)| *c).collect();
        c.iter().sum::<f32>() / c.len().max(1) as f32
    };
    println!(
        "{} pairs ({} duplicates), {max_tokens} tokens, {threads} threads: {} texts embedded in {secs:.1} s ({:.1}/s); mean cosine duplicates {:.3}, same-topic {:.3}",
        pairs.len(),
        truth.iter().filter(|t| **t).count(),
        texts.len(),
        texts.len() as f64 / secs,
        mean(true),
        mean(false)
    );
    let (p, r, f) = prf(&text, &truth);
    println!("text-only (d <= {DEFAULT_MAX_DISTANCE}, J >= {DEFAULT_MIN_JACCARD}): P {p:.3} R {r:.3} F1 {f:.3}");
    println!("| β | semantic P | R | F1 | union P | R | F1 |");
    println!("|---|---|---|---|---|---|---|");
    let mut best = (0.0, 0.0);
    for step in 0..=25 {
        let beta = 0.50 + 0.02 * step as f32;
        let sem: Vec<bool> = cos.iter().map(|c| *c >= beta).collect();
        let uni: Vec<bool> = sem.iter().zip(&text).map(|(s, t)| *s || *t).collect();
        let (sp, sr, sf) = prf(&sem, &truth);
        let (up, ur, uf) = prf(&uni, &truth);
        if uf > best.1 {
            best = (beta, uf);
        }
        println!("| {beta:.2} | {sp:.3} | {sr:.3} | {sf:.3} | {up:.3} | {ur:.3} | {uf:.3} |");
    }
    println!("best union F1 {:.3} at β = {:.2}", best.1, best.0);
}
