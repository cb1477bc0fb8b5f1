//! Stored texts from the command line: `init --store-text`, `get --text`, `reindex --spec`,
//! `export --archive` / `import`, `backup` (also beside a writing process, and killed with -9).

use crate::common;
use crate::support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{edit, passage, text, vocab};
use support::{docs_in, fpdb, json_lines, ok};

/// A corpus with metadata (a title, a year, a DOI, another field) and near-copies; its path.
fn corpus(dir: &Path, n: u64) -> String {
    let v = vocab();
    let mut lines = String::new();
    for b in 0..n {
        let base = passage(&v, 120, b);
        let line = serde_json::json!({"key": format!("base{b}"), "text": text(&base),
            "title": format!("Paper {b}"), "year": 1990 + (b % 30), "doi": format!("10.1000/p{b}"), "venue": "X"});
        lines.push_str(&line.to_string());
        lines.push('\n');
        if b.is_multiple_of(4) {
            let line = serde_json::json!({"key": format!("copy{b}"), "text": text(&edit(&v, &base, 1, 50 + b))});
            lines.push_str(&line.to_string());
            lines.push('\n');
        }
    }
    let p = dir.join(format!("corpus{n}.jsonl"));
    std::fs::write(&p, lines).unwrap();
    p.display().to_string()
}

fn faults(db: &str) -> u64 {
    let o = fpdb(&["--json", "check", db]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let last = json_lines(&out)
        .pop()
        .unwrap_or_else(|| panic!("check printed nothing: {}", support::stderr(&o)));
    last["faults"].as_u64().unwrap()
}

#[test]
fn get_text_prints_the_text_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db").display().to_string();
    ok(&fpdb(&["init", &db, "--store-text"]));
    let odd = "  two leading spaces, a tab\there, é and 漢字, no final newline";
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, format!("{}\n", serde_json::json!({"key": "k", "text": odd}))).unwrap();
    ok(&fpdb(&["ingest", &db, input.to_str().unwrap()]));
    let o = fpdb(&["get", &db, "k", "--text"]);
    assert_eq!(ok(&o), odd);
    let v = json_lines(&ok(&fpdb(&["--json", "get", &db, "k", "--text"])));
    assert_eq!(v[0]["text"], odd);
    assert_eq!(v[0]["key"], "k");
    assert_eq!(fpdb(&["get", &db, "absent", "--text"]).status.code(), Some(1));
    assert_eq!(faults(&db), 0);
    // a database without stored texts: a usage error naming --store-text
    let plain = support::new_db(dir.path(), "plain");
    ok(&fpdb(&["ingest", &plain, input.to_str().unwrap()]));
    let o = fpdb(&["get", &plain, "k", "--text"]);
    assert!(!o.status.success());
    assert!(support::stderr(&o).contains("--store-text"), "{}", support::stderr(&o));
}

/// Pairs (by keys) and group sizes, as the CLI prints them.
fn pairs_by_key(db: &str) -> Vec<String> {
    let mut v: Vec<String> = json_lines(&ok(&fpdb(&["--json", "pairs", db, "--min-jaccard", "0.5"])))
        .iter()
        .filter(|l| l.get("a_id").is_some())
        .map(|l| {
            let (a, b) = (l["a"].as_str().unwrap().to_string(), l["b"].as_str().unwrap().to_string());
            if a < b {
                format!("{a} {b}")
            } else {
                format!("{b} {a}")
            }
        })
        .collect();
    v.sort();
    v
}

#[test]
fn reindex_spec_from_stored_texts_equals_a_fresh_ingest() {
    let dir = tempfile::tempdir().unwrap();
    let c = corpus(dir.path(), 40);
    let db = dir.path().join("db").display().to_string();
    ok(&fpdb(&["init", &db, "--store-text"]));
    ok(&fpdb(&["ingest", &db, &c]));
    let o = ok(&fpdb(&["--json", "reindex", &db, "--spec", "--shingle", "word:2", "-k", "10"]));
    let r = &json_lines(&o)[0];
    assert!(r["spec_after"].as_str().unwrap().starts_with("word:2"), "{r}");
    let fresh = dir.path().join("fresh").display().to_string();
    ok(&fpdb(&["init", &fresh, "--store-text", "--shingle", "word:2", "-k", "10"]));
    ok(&fpdb(&["ingest", &fresh, &c]));
    let (a, b) = (pairs_by_key(&db), pairs_by_key(&fresh));
    assert!(!a.is_empty());
    assert_eq!(a, b);
    assert_eq!(faults(&db), 0);
    assert_eq!(docs_in(&db), docs_in(&fresh));
    let s = json_lines(&ok(&fpdb(&["--json", "stats", &db])));
    assert_eq!(s[0]["max_distance"], 10);
    // the texts came along
    assert_eq!(ok(&fpdb(&["get", &db, "base3", "--text"])), text(&passage(&vocab(), 120, 3)));
}

#[test]
fn export_import_export_is_identical_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let c = corpus(dir.path(), 30);
    for store in [true, false] {
        let a = dir.path().join(format!("a{store}")).display().to_string();
        let mut init = vec!["init", a.as_str(), "--shingle", "word:4"];
        if store {
            init.push("--store-text");
        }
        ok(&fpdb(&init));
        ok(&fpdb(&["ingest", &a, &c]));
        ok(&fpdb(&["delete", &a, "base5"]));
        // curator decisions travel too
        ok(&fpdb(&[
            "review",
            "distinct",
            &a,
            "base1",
            "base2",
            "--reason",
            "two editions",
            "--author",
            "ci",
        ]));
        ok(&fpdb(&["review", "same", &a, "base3", "base4"]));
        let first = ok(&fpdb(&["export", &a, "--archive"]));
        let lines = json_lines(&first);
        let decisions: Vec<_> = lines.iter().filter(|l| l["kind"] == "decision").collect();
        assert_eq!(decisions.len(), 2, "{first}");
        assert_eq!(decisions[0]["decision"], "distinct");
        assert_eq!(decisions[0]["reason"], "two editions");
        assert_eq!(decisions[1]["b"], "base4");
        assert_eq!(lines.last().unwrap()["kind"], "decision", "decisions follow the documents");
        assert_eq!(lines[0]["kind"], "fpdb-export");
        assert_eq!(lines[0]["store_text"], store);
        let doc = lines.iter().find(|l| l["key"] == "base7").unwrap();
        assert_eq!(doc["title"], "Paper 7");
        assert_eq!(doc["year"], 1997);
        assert_eq!(doc["doi"], "10.1000/p7");
        assert!(doc["meta"].as_str().unwrap().contains("venue"), "{doc}");
        assert_eq!(doc.get("text").is_some(), store, "{doc}");
        let file = dir.path().join(format!("export{store}.jsonl"));
        std::fs::write(&file, &first).unwrap();
        let b = dir.path().join(format!("b{store}")).display().to_string();
        ok(&fpdb(&["import", &b, file.to_str().unwrap()]));
        let second = ok(&fpdb(&["export", &b, "--archive"]));
        assert!(first == second, "export → import → export differs (store_text {store})");
        assert_eq!(
            ok(&fpdb(&["--json", "review", "list", &a])),
            ok(&fpdb(&["--json", "review", "list", &b]))
        );
        assert_eq!(pairs_by_key(&a), pairs_by_key(&b));
        assert_eq!(faults(&b), 0);
    }
    // an unknown record kind is refused, naming it
    let bad = dir.path().join("bad.jsonl");
    let head = ok(&fpdb(&["export", &dir.path().join("atrue").display().to_string(), "--archive"]));
    let head = head.lines().next().unwrap();
    std::fs::write(&bad, format!("{head}\n{{\"kind\":\"future\"}}\n")).unwrap();
    let o = fpdb(&["import", &dir.path().join("c").display().to_string(), bad.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(support::stderr(&o).contains("\"future\""), "{}", support::stderr(&o));
}

#[test]
fn backup_copies_beside_a_writing_process_and_the_copy_checks() {
    let dir = tempfile::tempdir().unwrap();
    let c = corpus(dir.path(), 3000);
    let db = dir.path().join("db").display().to_string();
    ok(&fpdb(&["init", &db, "--store-text"]));
    // another process writes while the backups are made
    let mut ingest = Command::new(env!("CARGO_BIN_EXE_fpdb"))
        .args(["ingest", &db, &c, "--batch-size", "64"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut copies = Vec::new();
    for i in 0..3 {
        std::thread::sleep(Duration::from_millis(150));
        let copy = dir.path().join(format!("copy{i}")).display().to_string();
        let o = fpdb(&["backup", &db, &copy]);
        if o.status.success() {
            copies.push(copy);
        } else {
            // only a database not created yet by the ingest's first batch may refuse
            assert!(
                support::stderr(&o).contains("no fpdb database") || i == 0,
                "{}",
                support::stderr(&o)
            );
        }
    }
    assert!(ingest.wait().unwrap().success());
    assert!(!copies.is_empty());
    let total = docs_in(&db);
    let texts: std::collections::HashMap<String, String> = json_lines(&std::fs::read_to_string(&c).unwrap())
        .into_iter()
        .map(|l| (l["key"].as_str().unwrap().to_string(), l["text"].as_str().unwrap().to_string()))
        .collect();
    let mut most = 0;
    for copy in &copies {
        assert_eq!(faults(copy), 0, "{copy}");
        let n = docs_in(copy);
        assert!(n <= total);
        most = most.max(n);
        // every document the copy holds has its text, the one ingested
        let lines = json_lines(&ok(&fpdb(&["export", copy, "--archive"])));
        assert_eq!(lines.len() as u64, n + 1);
        for l in &lines[1..] {
            assert_eq!(
                l["text"].as_str(),
                texts.get(l["key"].as_str().unwrap()).map(|s| s.as_str()),
                "{copy}"
            );
        }
    }
    assert!(most > 0, "no copy caught a committed document");
    // the destination must not exist
    let o = fpdb(&["backup", &db, &copies[0]]);
    assert!(!o.status.success());
}

#[test]
fn backup_killed_leaves_the_source_whole_and_no_copy_that_opens_half_made() {
    let dir = tempfile::tempdir().unwrap();
    let c = corpus(dir.path(), 4000);
    let db = dir.path().join("db").display().to_string();
    ok(&fpdb(&["init", &db, "--store-text"]));
    ok(&fpdb(&["ingest", &db, &c]));
    let total = docs_in(&db);
    for (i, ms) in [0u64, 5, 15, 30, 60, 120].into_iter().enumerate() {
        let copy = dir.path().join(format!("copy{i}"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_fpdb"))
            .args(["backup", &db, copy.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(ms));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let tmp = dir.path().join(format!("copy{i}.tmp"));
        for p in [&copy, &tmp] {
            if let Ok(d) = fpdb::Db::open(p) {
                // whatever opens is whole: every document, no fault
                assert_eq!(d.stats().docs, total, "{} opened half-made", p.display());
                assert!(d.check().unwrap().faults.is_empty(), "{}", p.display());
            }
        }
        assert_eq!(faults(&db), 0);
        assert_eq!(docs_in(&db), total);
        // the next backup to the same place finishes
        if !copy.exists() {
            ok(&fpdb(&["backup", &db, copy.to_str().unwrap()]));
            assert_eq!(docs_in(copy.to_str().unwrap()), total);
        }
    }
}
