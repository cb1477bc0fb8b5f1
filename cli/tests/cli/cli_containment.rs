//! The containment options of the CLI, spawned as processes: `init --containment`, `ingest
//! --containment`, `query --min-containment`, `pairs --min-containment`, `stats`, and the usage
//! error (exit 2) on a database without the index.

use crate::common;
use crate::support;

use common::{passage, text, vocab};
use serde_json::Value;
use support::{fpdb, json_lines, ok};

#[test]
fn containment_from_the_command_line() {
    let v = vocab();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db").display().to_string();
    let out = ok(&fpdb(&["init", &db, "--containment", "on", "--containment-sample", "4"]));
    assert!(out.contains("containment index on (sample 1/4"), "{out}");
    // An abstract, the paper that holds it, and an unrelated paper.
    let abs = passage(&v, 120, 1);
    let rest = passage(&v, 2000, 2);
    let paper: Vec<String> = abs.iter().chain(&rest).cloned().collect();
    let corpus = dir.path().join("c.jsonl");
    let lines: Vec<String> = [
        ("abstract", text(&abs)),
        ("paper", text(&paper)),
        ("other", text(&passage(&v, 500, 3))),
    ]
    .iter()
    .map(|(k, t)| serde_json::json!({"key": k, "text": t}).to_string())
    .collect();
    std::fs::write(&corpus, lines.join("\n")).unwrap();
    let out = ok(&fpdb(&[
        "--json",
        "ingest",
        &db,
        corpus.to_str().unwrap(),
        "--containment",
        "0.8",
        "--no-progress",
    ]));
    let rows = json_lines(&out);
    let paper_row = rows.iter().find(|r| r["key"] == "paper").unwrap();
    let rel = &paper_row["containment"][0];
    assert_eq!(rel["key"], "abstract");
    assert_eq!(rel["reverse_containment"], 1.0);
    assert_eq!(paper_row["group_size"], 1, "containment does not join groups");

    // Query by text, both directions, with all three numbers.
    let abs_file = dir.path().join("abstract.txt");
    std::fs::write(&abs_file, text(&abs)).unwrap();
    let out = ok(&fpdb(&[
        "--json",
        "query",
        &db,
        abs_file.to_str().unwrap(),
        "--min-containment",
        "0.9",
    ]));
    let hits = json_lines(&out);
    let keys: Vec<&str> = hits.iter().map(|h| h["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["abstract", "paper"]);
    assert_eq!(hits[1]["containment"], 1.0);
    assert!(hits[1]["reverse_containment"].as_f64().unwrap() < 0.1);
    assert!(hits[1]["jaccard"].as_f64().unwrap() < 0.1);
    let out = ok(&fpdb(&["query", &db, "--text", &text(&paper), "--min-containment", "0.9"]));
    assert!(out.contains("IN DOC") && out.contains("abstract"), "{out}");
    // The plain near-duplicate query does not see the abstract in the paper.
    let o = fpdb(&["query", &db, abs_file.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.starts_with("paper"))
            .count(),
        0
    );

    // All pairs, once, with the direction.
    let out = ok(&fpdb(&["--json", "pairs", &db, "--min-containment", "0.9"]));
    let pairs = json_lines(&out);
    assert_eq!(pairs.len(), 1);
    assert_eq!(
        (pairs[0]["a"].as_str(), pairs[0]["b"].as_str(), pairs[0]["direction"].as_str()),
        (Some("abstract"), Some("paper"), Some("a<b"))
    );

    let s: Value = serde_json::from_str(&ok(&fpdb(&["--json", "stats", &db]))).unwrap();
    assert_eq!(s["containment"]["sample"], 4);
    assert!(s["containment"]["entries"].as_u64().unwrap() > 0);
    let out = ok(&fpdb(&["check", &db]));
    assert!(!out.is_empty());
}

#[test]
fn containment_on_a_database_without_the_index_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db").display().to_string();
    ok(&fpdb(&["init", &db, "--containment", "off"]));
    let o = fpdb(&["query", &db, "--text", "some words to look up here", "--min-containment", "0.5"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no containment index") && err.contains("--containment on"), "{err}");
    let o = fpdb(&["pairs", &db, "--min-containment", "0.5"]);
    assert_eq!(o.status.code(), Some(2));
    let corpus = dir.path().join("c.jsonl");
    std::fs::write(&corpus, "{\"key\": \"a\", \"text\": \"one two three four\"}\n").unwrap();
    let o = fpdb(&["ingest", &db, corpus.to_str().unwrap(), "--containment", "0.5"]);
    assert_eq!(o.status.code(), Some(2));
    let out = ok(&fpdb(&["stats", &db]));
    assert!(out.contains("containment    off"), "{out}");
    // Out of range.
    let o = fpdb(&["init", &dir.path().join("db2").display().to_string(), "--containment-sample", "0"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn sampling_options_without_the_index_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db").display().to_string();
    for extra in [
        ["--containment-sample", "4"],
        ["--containment-max-postings", "100"],
        ["--containment-max-samples", "64"],
    ] {
        let mut args = vec!["init", db.as_str(), "--containment", "off"];
        args.extend(extra);
        let o = fpdb(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&extra[0][2..].replace('-', "_")) && err.contains("containment index on"),
            "{err}"
        );
        assert!(!dir.path().join("db").exists(), "{args:?} left a database behind");
    }
    // With the index on, the options are stored; without them, the defaults.
    ok(&fpdb(&[
        "init",
        &db,
        "--containment-sample",
        "4",
        "--containment-max-postings",
        "100",
        "--json",
    ]));
    let s: Value = serde_json::from_str(ok(&fpdb(&["stats", &db, "--json"])).trim()).unwrap();
    let text = s.to_string();
    assert!(text.contains("\"sample\":4") && text.contains("100"), "{text}");
    assert_eq!(s["containment"]["max_samples"], 256, "the default sample cap: {s}");
    let db2 = dir.path().join("db2").display().to_string();
    let created: Value = serde_json::from_str(ok(&fpdb(&["init", &db2, "--json"])).trim()).unwrap();
    assert_eq!(created["containment"], serde_json::json!([8, 2048]), "{created}");
    // the sample cap: stored, 0 is none
    for (cap, want) in [("64", serde_json::json!(64)), ("0", Value::Null)] {
        let d = dir.path().join(format!("cap{cap}")).display().to_string();
        ok(&fpdb(&["init", &d, "--containment-max-samples", cap]));
        let s: Value = serde_json::from_str(ok(&fpdb(&["stats", &d, "--json"])).trim()).unwrap();
        assert_eq!(s["containment"]["max_samples"], want, "{s}");
        assert!(ok(&fpdb(&["stats", &d])).contains(if cap == "0" { "no sample cap" } else { "at most ~64 samples" }));
    }
}

/// `fpdb insert` takes what `ingest` takes: title, year, DOI and `--containment C`, with
/// the same output fields; document by document it answers what `ingest` answers for the same
/// JSONL lines (both go through the library's one decision).
#[test]
fn insert_takes_metadata_and_containment_as_ingest_does() {
    let v = vocab();
    let dir = tempfile::tempdir().unwrap();
    let abs = passage(&v, 120, 1);
    let paper: Vec<String> = abs.iter().chain(&passage(&v, 2000, 2)).cloned().collect();
    let docs = [
        serde_json::json!({"key": "abstract", "text": text(&abs), "title": "A Study", "year": 2024}),
        serde_json::json!({"key": "paper", "text": text(&paper), "doi": "10.1145/x.1"}),
        // Other words, the same title and year: a metadata match, not a text one.
        serde_json::json!({"key": "retitled", "text": text(&passage(&v, 300, 3)), "title": "a study", "year": 2024}),
        // Other words, the same DOI.
        serde_json::json!({"key": "same-doi", "text": text(&passage(&v, 300, 4)), "doi": "https://doi.org/10.1145/X.1"}),
    ];
    let mut by_ingest = Vec::new();
    let mut by_insert = Vec::new();
    let ingest_db = dir.path().join("ingest").display().to_string();
    let insert_db = dir.path().join("insert").display().to_string();
    for db in [&ingest_db, &insert_db] {
        ok(&fpdb(&["init", db, "--containment", "on", "--containment-sample", "4"]));
    }
    for (i, d) in docs.iter().enumerate() {
        // ingest, one line at a time (the same commits as the inserts)
        let f = dir.path().join(format!("{i}.jsonl"));
        std::fs::write(&f, d.to_string() + "\n").unwrap();
        let out = ok(&fpdb(&[
            "--json",
            "ingest",
            &ingest_db,
            f.to_str().unwrap(),
            "--containment",
            "0.8",
            "--no-progress",
        ]));
        by_ingest.extend(json_lines(&out));
        // insert, with the same fields as options
        let t = dir.path().join(format!("{i}.txt"));
        std::fs::write(&t, d["text"].as_str().unwrap()).unwrap();
        let mut args = vec![
            "--json".to_string(),
            "insert".into(),
            insert_db.clone(),
            "--key".into(),
            d["key"].as_str().unwrap().into(),
        ];
        args.push(t.to_str().unwrap().into());
        for f in ["title", "doi"] {
            if let Some(s) = d[f].as_str() {
                args.extend([format!("--{f}"), s.to_string()]);
            }
        }
        if let Some(y) = d["year"].as_i64() {
            args.extend(["--year".to_string(), y.to_string()]);
        }
        args.extend(["--containment".to_string(), "0.8".into()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        by_insert.extend(json_lines(&ok(&fpdb(&args))));
    }
    assert_eq!(by_insert, by_ingest);
    let row = |k: &str| by_insert.iter().find(|r| r["key"] == k).unwrap().clone();
    assert_eq!(row("paper")["containment"][0]["key"], "abstract", "{}", row("paper"));
    assert_eq!(row("retitled")["duplicates"][0]["key"], "abstract", "{}", row("retitled"));
    assert_eq!(row("retitled")["duplicates"][0]["match"], "title_year", "{}", row("retitled"));
    assert_eq!(row("same-doi")["duplicates"][0]["key"], "paper", "{}", row("same-doi"));
    assert_eq!(row("same-doi")["duplicates"][0]["match"], "doi", "{}", row("same-doi"));
    // Stored with the document.
    let got = json_lines(&ok(&fpdb(&["--json", "get", &insert_db, "abstract"])));
    assert_eq!(
        (got[0]["title"].as_str(), got[0]["year"].as_i64()),
        (Some("A Study"), Some(2024)),
        "{}",
        got[0]
    );
    // The text form names the relation, as ingest's.
    let t = dir.path().join("again.txt");
    std::fs::write(&t, text(&paper)).unwrap();
    let out = ok(&fpdb(&[
        "insert",
        &insert_db,
        "--key",
        "paper2",
        t.to_str().unwrap(),
        "--containment",
        "0.8",
    ]));
    assert!(out.contains("containment: \"paper2\" contains \"abstract\""), "{out}");
    // A bad DOI is refused (exit 2), --containment without the index too.
    let o = fpdb(&["insert", &insert_db, "--key", "x", t.to_str().unwrap(), "--doi", "not a doi"]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    let plain = dir.path().join("plain").display().to_string();
    ok(&fpdb(&["init", &plain, "--containment", "off"]));
    let o = fpdb(&["insert", &plain, "--key", "x", t.to_str().unwrap(), "--containment", "0.8"]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
}
