//! Bench inputs: real English text from the machine (Debian's licence texts) cut into ~1 KB passages.
#![allow(dead_code)]

/// ~1 KB passages of real text. `FPDB_BENCH_TEXT` may name a file or directory to use instead.
pub fn passages() -> Vec<String> {
    let src = std::env::var("FPDB_BENCH_TEXT").unwrap_or_else(|_| "/usr/share/common-licenses".into());
    let mut text = String::new();
    let p = std::path::Path::new(&src);
    let mut files: Vec<std::path::PathBuf> = if p.is_dir() {
        std::fs::read_dir(p)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default()
    } else {
        vec![p.to_path_buf()]
    };
    files.sort();
    for f in files {
        if let Ok(s) = std::fs::read_to_string(&f) {
            text.push_str(&s);
            text.push('\n');
        }
    }
    if text.len() < 10_000 {
        // No real text on this machine: fall back to a deterministic pseudo-text.
        let words = [
            "the",
            "of",
            "near",
            "duplicate",
            "paper",
            "index",
            "table",
            "license",
            "work",
            "copy",
            "software",
            "source",
        ];
        let mut x = 1u64;
        for _ in 0..200_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            text.push_str(words[(x >> 59) as usize % words.len()]);
            text.push(' ');
        }
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in text.lines() {
        cur.push_str(line);
        cur.push('\n');
        if cur.len() >= 1000 {
            out.push(std::mem::take(&mut cur));
        }
    }
    out
}
