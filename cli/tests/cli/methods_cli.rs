//! method: `fpdb init --method` and the commands on a non-default method, spawned as processes.

use crate::common;
use crate::support;

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
        // The score is the method's own measure, an object named after it.
        let first: Value = serde_json::from_str(hits.lines().next().unwrap()).unwrap();
        let (name, fields): (&str, &[&str]) = match method {
            "simhash" | "weighted-simhash" => ("hamming", &[]),
            "broder" => ("supershingles", &["equal", "of"]),
            "charikar" => ("projection", &["agree", "bits"]),
            "broder-charikar" => ("combined", &["equal", "of", "agree", "bits"]),
            _ => ("lexicons", &[]),
        };
        let score = first["score"]
            .as_object()
            .unwrap_or_else(|| panic!("{method}: score is not an object: {first}"));
        assert_eq!(score.keys().collect::<Vec<_>>(), [name], "{method}: {first}");
        match method {
            "simhash" | "weighted-simhash" => assert!(score[name].is_u64(), "{method}: {first}"),
            "multi-lexicon" => assert!(
                score[name]
                    .as_array()
                    .is_some_and(|a| !a.is_empty() && a.iter().all(|d| d.is_u64() || d.is_null())),
                "{method}: {first}"
            ),
            _ => {
                for f in fields {
                    assert!(score[name][f].is_u64(), "{method}: {f} in {first}");
                }
            }
        }
        // Pairs: exactly the (base, copy) pairs that a query of the copy finds under this method
        // (Broder's supershingles may miss a 1-word edit; the two views must agree), base0 with
        // copy0 among them (the query above found it).
        let pairs = ok(&fpdb(&["--json", "pairs", &db]));
        let mut got: Vec<(String, String)> = pairs
            .lines()
            .map(|l| {
                let p: Value = serde_json::from_str(l).unwrap();
                let (a, b) = (p["a"].as_str().unwrap().to_string(), p["b"].as_str().unwrap().to_string());
                if a < b {
                    (a, b)
                } else {
                    (b, a)
                }
            })
            .collect();
        got.sort();
        let want: Vec<(String, String)> = (0..6u64)
            .filter(|&b| {
                let copy = text(&edit(&vocab(), &passage(&vocab(), 300, b), 1, 9 + b));
                ok(&fpdb(&["--json", "query", &db, "--text", &copy]))
                    .lines()
                    .any(|l| serde_json::from_str::<Value>(l).unwrap()["key"] == format!("base{b}"))
            })
            .map(|b| (format!("base{b}"), format!("copy{b}")))
            .collect();
        assert!(want.contains(&("base0".to_string(), "copy0".to_string())), "{method}");
        assert_eq!(got, want, "{method}: {pairs}");
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

/// A weighted-simhash database on normalizer 1 trains its IDF table with normalizer 1's words:
/// `init` succeeds, and the stored table is the one the library validates against the spec. A
/// CLI that did not pass the normalizer through would get the mismatched table refused.
#[test]
fn weighted_simhash_on_normalizer_one_trains_with_its_normalizer() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("zh.jsonl");
    let lines: String = [
        "我们研究了近重复文档的检测方法。",
        "ภาษาไทยไม่มีช่องว่างระหว่างคำ",
        "plain english words here",
    ]
    .iter()
    .enumerate()
    .map(|(i, t)| serde_json::json!({"key": format!("d{i}"), "text": t}).to_string() + "\n")
    .collect();
    std::fs::write(&c, lines).unwrap();
    let c = c.display().to_string();
    for n in ["1", "2"] {
        let db = dir.path().join(format!("db{n}")).display().to_string();
        ok(&fpdb(&[
            "init",
            &db,
            "--method",
            "weighted-simhash",
            "--idf-from",
            &c,
            "--normalizer",
            n,
        ]));
        ok(&fpdb(&["ingest", &db, &c]));
        let stats: Value = serde_json::from_str(&ok(&fpdb(&["stats", &db, "--json"]))).unwrap();
        assert_eq!(stats["docs"], 3, "normalizer {n}: {stats}");
    }
}
