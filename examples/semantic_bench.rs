//! Measurements of the semantic channel (docs/semantic.md):
//! 1. embeddings per second of the real model at 128 and 256 tokens (`--threads`, `--docs`);
//! 2. bytes per document on disk (a RocksDB `semantic` CF of `--vectors` records, flushed and compacted)
//!    and in memory;
//! 3. query p50 of the exact scan and of the sign-code index over `--vectors` vectors, and the
//!    index's recall against the exact scan at β (`--beta`, default the channel's default).
//!
//! The search part uses synthetic clustered unit vectors (a real 100K-document embedding run takes
//! hours on 2 cores): groups of 10 around a random centre, cosines to the centre 0.8-0.99.
//!
//! ```text
//! bash scripts/fetch-model.sh
//! cargo run --release --features semantic --example semantic_bench -- --vectors 100000
//! ```

use std::path::PathBuf;
use std::time::Instant;

use fpdb::semantic::testkit::clustered;
use fpdb::semantic::{
    encode, quantize, radius_for, Embedder, EmbedderOptions, Hyperplanes, VectorSet, CF_SEMANTIC, DEFAULT_CODE_SEED, DEFAULT_MIN_COSINE,
    MISS_TARGET,
};

struct Args {
    model: PathBuf,
    docs: usize,
    threads: usize,
    vectors: usize,
    queries: usize,
    beta: f32,
    skip_model: bool,
}

fn args() -> Args {
    let mut a = Args {
        model: PathBuf::from("data/models/all-MiniLM-L6-v2"),
        docs: 48,
        threads: 2,
        vectors: 100_000,
        queries: 200,
        beta: DEFAULT_MIN_COSINE,
        skip_model: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut v = || it.next().unwrap_or_else(|| panic!("{k} needs a value"));
        match k.as_str() {
            "--model" => a.model = v().into(),
            "--docs" => a.docs = v().parse().expect("--docs N"),
            "--threads" => a.threads = v().parse().expect("--threads N"),
            "--vectors" => a.vectors = v().parse().expect("--vectors N"),
            "--queries" => a.queries = v().parse().expect("--queries N"),
            "--beta" => a.beta = v().parse().expect("--beta F"),
            "--skip-model" => a.skip_model = true,
            other => panic!("unknown argument {other}"),
        }
    }
    a
}

/// Real English passages: the repository's own docs cut into ~2,000-character pieces (≥ 256 tokens).
fn passages(n: usize) -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut text = String::new();
    for f in [
        "README.md",
        "ARCHITECTURE.md",
        "docs/format.md",
        "docs/durability.md",
        "docs/performance.md",
    ] {
        text.push_str(&std::fs::read_to_string(root.join(f)).unwrap_or_default());
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    words.chunks(300).filter(|c| c.len() == 300).take(n).map(|c| c.join(" ")).collect()
}

fn embed_rate(a: &Args, max_tokens: usize) {
    let m = Embedder::load(
        &a.model,
        &EmbedderOptions {
            max_tokens,
            threads: a.threads,
            batch: 8,
            nice: 0,
        },
    )
    .expect("model");
    let texts = passages(a.docs);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    m.embed(&refs[..4.min(refs.len())]).expect("warm-up");
    let t = Instant::now();
    m.embed(&refs).expect("embed");
    let s = t.elapsed().as_secs_f64();
    println!(
        "embed: {max_tokens} tokens, {} threads: {} docs in {s:.2} s = {:.1} docs/s ({:.0} ms/doc)",
        a.threads,
        refs.len(),
        refs.len() as f64 / s,
        1000.0 * s / refs.len() as f64
    );
}

fn p50(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn search(a: &Args) {
    let dim = 384;
    let planes = Hyperplanes::new(DEFAULT_CODE_SEED, dim, 4);
    let mut set = VectorSet::new(dim, 4);
    let t = Instant::now();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = rocksdb::Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let db = rocksdb::DB::open_cf(&opts, dir.path(), [CF_SEMANTIC]).expect("rocksdb");
    let cf = db.cf_handle(CF_SEMANTIC).expect("cf");
    let mut batch = rocksdb::WriteBatch::default();
    let mut record_len = 0;
    for i in 0..a.vectors as u64 {
        let v = clustered(i, dim);
        let q = quantize(&v, &planes);
        let bytes = encode(&q);
        record_len = bytes.len();
        batch.put_cf(cf, i.to_be_bytes(), &bytes);
        if batch.len() >= 10_000 {
            db.write(std::mem::take(&mut batch)).expect("write");
        }
        set.insert(i, &q);
    }
    db.write(batch).expect("write");
    db.flush_cf(cf).expect("flush");
    db.compact_range_cf(cf, None::<&[u8]>, None::<&[u8]>);
    let sst: u64 = std::fs::read_dir(dir.path())
        .expect("ls")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "sst"))
        .filter_map(|e| e.metadata().ok().map(|m| m.len()))
        .sum();
    println!(
        "build: {} vectors in {:.1} s; record {record_len} B, on disk {:.0} B/doc (SST after compaction), in memory {:.0} B/doc",
        a.vectors,
        t.elapsed().as_secs_f64(),
        sst as f64 / a.vectors as f64,
        set.memory_bytes() as f64 / a.vectors as f64
    );

    let radius = radius_for(a.beta, 256, MISS_TARGET);
    let (mut te, mut ti, mut truth, mut found) = (Vec::new(), Vec::new(), 0usize, 0usize);
    let step = (a.vectors / a.queries).max(1);
    for qi in (0..a.vectors).step_by(step).take(a.queries) {
        let q = set.get(qi as u64).expect("vector");
        let t = Instant::now();
        let exact = set.exact(&q, a.beta, Some(qi as u64));
        te.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let indexed = set.indexed(&q, a.beta, radius, Some(qi as u64));
        ti.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(
            indexed.iter().all(|h| exact.contains(h)),
            "the index returned a hit the exact scan did not"
        );
        truth += exact.len();
        found += indexed.len();
    }
    println!(
        "query at {} vectors, β {}: exact scan p50 {:.2} ms, index (radius {radius}/256) p50 {:.2} ms; recall {found}/{truth} = {:.5}",
        a.vectors,
        a.beta,
        p50(te),
        p50(ti),
        found as f64 / truth.max(1) as f64
    );
}

fn main() {
    let a = args();
    if !a.skip_model {
        if a.model.join("model.safetensors").is_file() {
            embed_rate(&a, 128);
            embed_rate(&a, 256);
        } else {
            println!("embed: skipped, no model at {} (run scripts/fetch-model.sh)", a.model.display());
        }
    }
    search(&a);
}
