//! Metadata matches through `fpdb ingest` and `fpdb get` (tests/engine/metadata.rs has the
//! library's): title, year and DOI are read from the JSONL fields, stored and matched.

use std::process::Command;

use crate::common::texts;

#[test]
fn cli_ingest_reads_title_year_and_doi() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db").display().to_string();
    let t = texts(6, 120, 100);
    let input = dir.path().join("in.jsonl");
    let lines = [
        serde_json::json!({"key": "p1", "text": t[0], "title": "A Paper", "year": 2020, "doi": "10.5555/P1", "source": "x"}),
        serde_json::json!({"key": "p2", "text": t[1], "doi": "doi:10.5555/p1"}),
        serde_json::json!({"key": "p3", "text": t[2], "title": "a paper", "year": "2020"}),
        serde_json::json!({"key": "p4", "text": t[3], "year": "soon"}),
        serde_json::json!({"key": "p5", "text": t[4], "doi": "not-a-doi"}),
    ];
    std::fs::write(&input, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let bin = env!("CARGO_BIN_EXE_fpdb");
    assert!(Command::new(bin).args(["init", &db]).status().unwrap().success());
    let out = Command::new(bin)
        .args(["--json", "ingest", &db, &input.display().to_string()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(6),
        "two lines are bad: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let res: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(res[1]["duplicates"][0]["key"], "p1");
    assert_eq!(res[1]["duplicates"][0]["match"], "doi");
    assert_eq!(res[2]["duplicates"][0]["match"], "title_year");
    assert!(res[3]["error"].as_str().unwrap().contains("year"));
    assert!(res[4]["error"].as_str().unwrap().contains("not a DOI"));
    let out = Command::new(bin).args(["--json", "get", &db, "p1"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["title"], "A Paper");
    assert_eq!(v["year"], 2020);
    assert_eq!(v["doi"], "10.5555/P1");
    // Metadata keeps every extra field, as before metadata matches existed.
    assert_eq!(
        v["meta"],
        serde_json::json!({"source": "x", "title": "A Paper", "year": 2020, "doi": "10.5555/P1"})
    );
    assert!(Command::new(bin).args(["check", &db]).status().unwrap().success());
}
