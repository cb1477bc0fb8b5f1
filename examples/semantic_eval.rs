//! The CORE paper's Table 4 on our labelled pairs: text-only (fpdb's verdict: Hamming ≤ k and Jaccard ≥
//! the default), semantic-only (cosine ≥ β) and union P/R/F1, with a β sweep that separates the
//! recall of reworded copies from the false rate on hard negatives, and the calibrated β
//! (docs/semantic.md).
//! The same evaluation as `fpdb eval PAIRS.jsonl --semantic MODEL_DIR` (`fpdb::eval::semantic`),
//! with the thread count chosen.
//!
//! ```text
//! bash scripts/fetch-model.sh
//! python3 scripts/semantic_calibration.py --out data/semantic_calibration.jsonl   # its header: the apt packages
//! cargo run --features semantic --example semantic_eval -- data/semantic_calibration.jsonl [--max-tokens 256] [--threads 2]
//! ```

use std::path::PathBuf;

use fpdb::eval::semantic::{parse_pairs, semantic_eval};
use fpdb::semantic::{Embedder, EmbedderOptions};
use fpdb::{FingerprintSpec, DEFAULT_MAX_DISTANCE, DEFAULT_MIN_JACCARD};

fn main() {
    let mut it = std::env::args().skip(1);
    let mut path = PathBuf::from("data/semantic_calibration.jsonl");
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
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e} (make it with scripts/semantic_calibration.py)", path.display()));
    let pairs = parse_pairs(&text, &path.display().to_string()).expect("labelled pairs");
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
    let report = semantic_eval(&m, &FingerprintSpec::default(), DEFAULT_MAX_DISTANCE, DEFAULT_MIN_JACCARD, &pairs).expect("eval");
    println!("{max_tokens} tokens, {threads} threads");
    print!("{}", report.markdown());
}
