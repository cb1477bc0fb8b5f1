//! method: `fpdb init --method` and the commands on a non-default method, spawned as processes.

mod common;
#[path = "support/cli.rs"]
mod support;

use std::path::Path;

use common::{edit, passage, text, vocab};
use serde_json::Value;
use support::{fpdb, ok};

fn corpus(dir: &Path) -> String {
    let v = vocab();
    let mut lines = String::new();
    for b in 0..6u64 {
        let base = passage(&v, 300, b);
        lines.push_str(&serde_json::json!({"key": format!("base{b}"), "text": text(&base)}).to_string());
        lines.push('\n');
        lines.push_str(&serde_json::json!({"key": format!("copy{b}"), "text": text(&edit(&v, &base, 1, 9 + b))}).to_string());
        lines.push('\n');
    }
    let p = dir.join("corpus.jsonl");
    std::fs::write(&p, lines).unwrap();
    p.display().to_string()
}

#[test]
fn every_method_inits_ingests_queries_pairs_checks_and_compacts() {
    let dir = tempfile::tempdir().unwrap();
    let c = corpus(dir.path());
    let copy0 = text(&edit(&vocab(), &passage(&vocab(), 300, 0), 1, 9));
    for method in [
        "simhash",
        "broder",
        "charikar",
        "broder-charikar",
        "weighted-simhash",
        "multi-lexicon",
    ] {
        let db = dir.path().join(method).display().to_string();
        let mut init = vec!["--json", "init", &db, "--method", method];
        if method == "weighted-simhash" {
            init.extend(["--idf-from", &c]);
        }
        let stats: Value = serde_json::from_str(ok(&fpdb(&init)).trim()).unwrap();
        if method != "simhash" {
            assert!(stats["spec"].as_str().unwrap().contains(&format!("method={method}")), "{stats}");
        }
        ok(&fpdb(&["ingest", &db, &c]));
        let hits = ok(&fpdb(&["--json", "query", &db, "--text", &copy0]));
        let keys: Vec<String> = hits
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["key"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(keys, ["copy0", "base0"], "{method}: {hits}");
        let first: Value = serde_json::from_str(hits.lines().next().unwrap()).unwrap();
        assert!(
            first["score"].is_object() || first["score"].is_number() || first["score"].is_array(),
            "{method}: {first}"
        );
        let pairs = ok(&fpdb(&["pairs", &db, "--summary"]));
        let _ = pairs;
        ok(&fpdb(&["delete", &db, "base1"]));
        ok(&fpdb(&["compact", &db]));
        ok(&fpdb(&["check", &db]));
    }
}

#[test]
fn init_refuses_unknown_methods_and_misplaced_options() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db").display().to_string();
    for args in [
        vec!["init", &db, "--method", "minhash"],
        vec!["init", &db, "--method", "weighted-simhash"],
        vec!["init", &db, "--method", "broder", "--idf-from", "x.jsonl"],
        vec!["init", &db, "--method", "charikar", "--min-shared", "2"],
    ] {
        let o = fpdb(&args);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(!dir.path().join("db").exists(), "{args:?} left a database behind");
    }
}
