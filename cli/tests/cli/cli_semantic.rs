//! The semantic channel through the `fpdb` executable (feature `semantic`): `pairs --groups` over
//! both channels, `semantic enable` and `semantic backfill` (tests/semantic.rs has the library's
//! tests of the channel).
#![cfg(feature = "semantic")]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::semantic::{sentence, tiny};
use fpdb::semantic::SearchMode;

/// Five documents, `d0`..`d4`, in the tiny model's words: `dir/docs.jsonl`.
fn write_docs(dir: &Path) -> PathBuf {
    let docs = dir.join("docs.jsonl");
    let lines: Vec<String> = (0..5)
        .map(|i| serde_json::json!({"key": format!("d{i}"), "text": sentence(i)}).to_string())
        .collect();
    std::fs::write(&docs, lines.join("\n") + "\n").unwrap();
    docs
}

/// Runs the `fpdb` executable, which must succeed; its stdout.
fn fpdb(args: &[&OsStr]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fpdb")).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `fpdb pairs --groups` groups over both channels in a database made with `--groups union` (and
/// with `--semantic` in any): at β = -1 every embedded pair is a semantic match, so four distinct
/// texts form one group there and none by their text.
#[test]
fn cli_pairs_groups_over_the_union() {
    use fpdb::semantic::{Groups, SemanticConfig, SemanticOptions};
    use fpdb::{CreateOptions, Db, Options};
    let t = tempfile::tempdir().unwrap();
    let model = tiny(t.path(), 1);
    let made = |name: &str, groups: Groups| {
        let path = t.path().join(name);
        let mut cfg = SemanticConfig::new(&model);
        (cfg.min_cosine, cfg.max_tokens, cfg.groups) = (Some(-1.0), 32, groups);
        Db::create(&path, &CreateOptions::default().with_semantic(Some(cfg))).unwrap();
        let opts = Options {
            semantic: SemanticOptions {
                search: SearchMode::Exact,
                ..SemanticOptions::default()
            },
            ..Options::default()
        };
        let d = Db::open_with(&path, opts).unwrap();
        for i in 0..4 {
            d.insert(&format!("k{i}"), &sentence(i)).unwrap();
        }
        d.semantic().wait(Duration::from_secs(60)).unwrap();
        path
    };
    let pairs = |db: &Path, extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_fpdb"))
            .arg("pairs")
            .arg(db)
            .args(["--groups", "--json"])
            .args(extra)
            .output()
            .unwrap();
        let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (out.status.code(), lines)
    };
    let union = made("union", Groups::Union);
    let (code, lines) = pairs(&union, &[]);
    assert_eq!(code, Some(0));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["members"], serde_json::json!(["k0", "k1", "k2", "k3"]));
    // the stored groups agree (the indexer linked them)
    let d = Db::open_with(&union, Options::default()).unwrap();
    assert_eq!(d.get("k3").unwrap().unwrap().group.size, 4);
    drop(d);
    let text = made("text", Groups::Text);
    let (code, lines) = pairs(&text, &[]);
    assert_eq!((code, lines.len()), (Some(1), 0), "{lines:?}");
    let (_, lines) = pairs(&text, &["--semantic", "--min-cosine=-1"]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["size"], 4);
}

/// `fpdb semantic enable` on a database made by `fpdb init` without the channel, then `fpdb
/// semantic backfill --input` with the texts: every stored document gets its vector.
#[test]
fn cli_enable_then_backfill_from_texts() {
    let t = tempfile::tempdir().unwrap();
    let model = tiny(t.path(), 1);
    let db = t.path().join("db");
    let docs = write_docs(t.path());
    let os = |s: &str| std::ffi::OsString::from(s);
    fpdb(&[&os("init"), db.as_os_str()]);
    fpdb(&[&os("ingest"), db.as_os_str(), docs.as_os_str(), &os("--quiet")]);
    fpdb(&[
        &os("semantic"),
        &os("enable"),
        db.as_os_str(),
        &os("--semantic"),
        model.as_os_str(),
        &os("--semantic-max-tokens"),
        &os("32"),
    ]);
    // the read-only commands right after `enable` (no writer has opened it since)
    fpdb(&[&os("check"), db.as_os_str()]);
    fpdb(&[&os("stats"), db.as_os_str()]);
    let out = fpdb(&[
        &os("--json"),
        &os("semantic"),
        &os("backfill"),
        db.as_os_str(),
        &os("--input"),
        docs.as_os_str(),
    ]);
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!((first["embedded"].as_u64(), first["unknown"].as_u64()), (Some(5), Some(0)), "{out}");
    let d = fpdb::Db::open_with(&db, fpdb::Options::default()).unwrap();
    assert_eq!(d.stats().semantic_vectors, 5);
    assert!(d.check().unwrap().faults.is_empty());
}

/// A database made with `--store-text`: `fpdb semantic enable` embeds its documents from their
/// stored texts, and `fpdb semantic backfill` without --input reads them too.
#[test]
fn cli_enable_and_backfill_from_stored_texts() {
    let t = tempfile::tempdir().unwrap();
    let model = tiny(t.path(), 1);
    let docs = write_docs(t.path());
    let os = |s: &str| std::ffi::OsString::from(s);
    for enable_embeds in [true, false] {
        let db = t.path().join(format!("db{enable_embeds}"));
        fpdb(&[&os("init"), db.as_os_str(), &os("--store-text")]);
        fpdb(&[&os("ingest"), db.as_os_str(), docs.as_os_str(), &os("--quiet")]);
        let out = if enable_embeds {
            fpdb(&[
                &os("--json"),
                &os("semantic"),
                &os("enable"),
                db.as_os_str(),
                &os("--semantic"),
                model.as_os_str(),
                &os("--semantic-max-tokens"),
                &os("32"),
            ])
        } else {
            // the library's enable embeds nothing; the backfill without --input reads the texts
            let mut cfg = fpdb::semantic::SemanticConfig::new(&model);
            cfg.max_tokens = 32;
            fpdb::Db::enable_semantic(&db, &cfg, fpdb::Options::default()).unwrap();
            fpdb(&[&os("--json"), &os("semantic"), &os("backfill"), db.as_os_str()])
        };
        let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        assert_eq!((first["embedded"].as_u64(), first["unknown"].as_u64()), (Some(5), Some(0)), "{out}");
        let d = fpdb::Db::open_with(&db, fpdb::Options::default()).unwrap();
        assert_eq!(d.stats().semantic_vectors, 5);
        assert!(d.check().unwrap().faults.is_empty());
    }
}
