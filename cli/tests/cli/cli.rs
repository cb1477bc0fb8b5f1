//! Every CLI command, spawned as a process in a temporary directory.

use crate::common;
use crate::support;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{edit, passage, text, vocab};
use support::{fpdb, fpdb_stdin, gzip, json_lines, new_db, ok, stderr};

/// A JSONL corpus: 10 base passages and 2 edited copies of each.
fn corpus() -> (String, Vec<(String, String)>) {
    let v = vocab();
    let mut docs = Vec::new();
    for b in 0..10u64 {
        let base = passage(&v, 200, b);
        docs.push((format!("base{b}"), text(&base)));
        for e in 0..2u64 {
            docs.push((format!("copy{b}-{e}"), text(&edit(&v, &base, 2, 100 * b + e))));
        }
    }
    let jsonl = docs
        .iter()
        .map(|(k, t)| serde_json::json!({"key": k, "text": t, "year": 2024}).to_string() + "\n")
        .collect();
    (jsonl, docs)
}

#[test]
fn init_ingest_jsonl_query_get_stats_check() {
    let dir = tempfile::tempdir().unwrap();
    let db = new_db(dir.path(), "db");
    let (jsonl, docs) = corpus();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, jsonl).unwrap();
    let run = fpdb(&["ingest", &db, input.to_str().unwrap(), "--json"]);
    // The summary's time includes the final flush (the close's work), and says how much of it.
    let stderr = String::from_utf8_lossy(&run.stderr);
    let summary: serde_json::Value = stderr
        .lines()
        .find_map(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .ok()
                .filter(|v| v.get("summary").is_some())
        })
        .unwrap_or_else(|| panic!("no JSON summary on stderr: {stderr}"));
    let s = &summary["summary"];
    assert_eq!((s["items"].as_u64(), s["stored"].as_u64()), (Some(30), Some(30)), "{summary}");
    assert!(s["flush_seconds"].as_f64().unwrap() <= s["seconds"].as_f64().unwrap(), "{summary}");
    let out = ok(&run);
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 30);
    for l in &lines {
        assert!(l["id"].is_u64() && l["duplicates"].is_array() && l["group"].is_u64(), "{l}");
    }
    // Each copy joins its base's group.
    let base0 = &lines[0];
    assert_eq!(lines[1]["group"], base0["id"]);
    assert_eq!(lines[1]["duplicates"][0]["key"], "base0");

    // A near-duplicate found by query, with its Jaccard.
    let v = vocab();
    let probe = text(&edit(&v, &passage(&v, 200, 3), 1, 999));
    let out = ok(&fpdb(&["query", &db, "--text", &probe, "--json"]));
    let hits = json_lines(&out);
    assert!(hits.iter().any(|h| h["key"] == "base3"), "{out}");
    for h in &hits {
        let j = h["jaccard"].as_f64().unwrap();
        assert!((0.9..=1.0).contains(&j), "{h}");
        // Within the database's k (12): how far inside depends on the spec's hash.
        assert!(h["hamming"].as_u64().unwrap() <= 12 && h["shared"].as_u64().unwrap() > 0, "{h}");
    }
    // The readable table names the hit too.
    let table = ok(&fpdb(&["query", &db, "--text", &probe]));
    assert!(table.contains("base3") && table.contains("JACCARD"), "{table}");
    // No match: exit code 1.
    let miss = fpdb(&["query", &db, "--text", &text(&passage(&v, 200, 12345))]);
    assert_eq!(miss.status.code(), Some(1));

    let got = json_lines(&ok(&fpdb(&["get", &db, "copy3-0", "--json"])));
    assert_eq!(got[0]["key"], "copy3-0");
    assert_eq!(got[0]["canonical"], "base3");
    assert_eq!(got[0]["meta"]["year"], 2024);
    assert_eq!(fpdb(&["get", &db, "nope"]).status.code(), Some(1));

    // In-process latency measurement over a file of queries.
    let qfile = dir.path().join("queries.jsonl");
    std::fs::write(&qfile, serde_json::json!({"key": "q1", "text": probe}).to_string() + "\n").unwrap();
    let bq = json_lines(&ok(&fpdb(&["bench-query", &db, "--queries", qfile.to_str().unwrap(), "--json"])));
    assert_eq!((bq[0]["queries"].as_u64(), bq[0]["k"].as_u64()), (Some(1), Some(12)));
    assert!(
        bq[0]["hits"].as_u64().unwrap() >= 1 && bq[0]["p50_us"].as_f64().unwrap() > 0.0,
        "{:?}",
        bq
    );
    // The same as containment queries (the index's read side): the near-duplicates contain it.
    let bq = json_lines(&ok(&fpdb(&[
        "bench-query",
        &db,
        "--queries",
        qfile.to_str().unwrap(),
        "--min-containment",
        "0.5",
        "--json",
    ])));
    assert_eq!(bq[0]["min_containment"].as_f64(), Some(0.5));
    assert!(bq[0]["hits"].as_u64().unwrap() >= 1, "{:?}", bq);

    let stats = json_lines(&ok(&fpdb(&["stats", &db, "--json"])));
    assert_eq!(stats[0]["docs"], docs.len());
    assert_eq!(stats[0]["groups"], 10);
    let check = ok(&fpdb(&["check", &db]));
    assert!(check.contains("0 fault(s)"), "{check}");
}

#[test]
fn query_jsonl_looks_up_every_line_in_input_order_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = new_db(dir.path(), "db");
    let (jsonl, _) = corpus();
    let f = dir.path().join("c.jsonl");
    std::fs::write(&f, &jsonl).unwrap();
    ok(&fpdb(&["ingest", &db, f.to_str().unwrap(), "--no-progress"]));
    let v = vocab();
    // 2,500 lookups (three chunks): near-copies of the bases and unrelated passages, alternating,
    // and one line that is not a document.
    let mut queries = String::new();
    for i in 0..2_500u64 {
        let t = if i.is_multiple_of(2) {
            text(&edit(&v, &passage(&v, 200, (i / 2) % 10), 1, 5_000 + i))
        } else {
            text(&passage(&v, 200, 90_000 + i))
        };
        queries.push_str(&(serde_json::json!({"key": format!("q{i}"), "text": t}).to_string() + "\n"));
        if i == 1_700 {
            queries.push_str("{not json\n");
        }
    }
    let q = dir.path().join("queries.jsonl");
    std::fs::write(&q, &queries).unwrap();
    let o = fpdb(&["query", &db, "--jsonl", q.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(6), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("queries.jsonl line 1702: malformed JSON"), "{err}");
    assert!(
        err.contains(r#"{"summary":{"documents":2501,"rejected":1,"with_hits":1250}}"#),
        "with --json the summary is JSON: {err}"
    );
    let out = json_lines(&String::from_utf8(o.stdout).unwrap());
    assert_eq!(out.len(), 2_501);
    for (seq, line) in out.iter().enumerate() {
        assert_eq!(line["seq"], seq as u64, "{line}");
        if seq == 1_701 {
            assert_eq!(line["origin"], format!("{} line 1702", q.display()));
            continue;
        }
        let i = if seq > 1_701 { seq - 1 } else { seq } as u64;
        assert_eq!(line["key"], format!("q{i}"));
        let hits = line["hits"].as_array().unwrap();
        if i.is_multiple_of(2) {
            // Its base, and the base's two copies, all verified.
            assert_eq!(hits[0]["key"], format!("base{}", (i / 2) % 10), "{line}");
            assert!(hits.iter().all(|h| h["jaccard"].as_f64().unwrap() >= 0.9), "{line}");
        } else {
            assert!(hits.is_empty(), "{line}");
        }
    }
    // The same, one at a time, gives the same hits; nothing was stored.
    let one = json_lines(&ok(&fpdb(&[
        "query",
        &db,
        "--text",
        &text(&edit(&v, &passage(&v, 200, 3), 1, 5_006)),
        "--json",
    ])));
    assert_eq!(out[6]["hits"].as_array().unwrap(), &one);
    let stats = json_lines(&ok(&fpdb(&["stats", &db, "--json"])));
    assert_eq!(stats[0]["docs"], 30);
    // gzip on standard input, readable output; no hit at all is exit 1.
    let misses: String = queries.lines().skip(1).step_by(2).take(20).map(|l| format!("{l}\n")).collect();
    let o = fpdb_stdin(&["query", &db, "--jsonl", "-"], &gzip(misses.as_bytes()));
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let table = String::from_utf8(o.stdout).unwrap();
    assert_eq!(table.matches("no near-duplicates").count(), 20, "{table}");
    assert!(table.starts_with("\"q1\":\nno near-duplicates\n"), "{table}");
    // Other field names, as `ingest --key-field/--text-field`.
    let renamed = queries.replace("\"key\":", "\"coreId\":").replace("\"text\":", "\"fullText\":");
    let o = fpdb_stdin(
        &[
            "query",
            &db,
            "--jsonl",
            "-",
            "--key-field",
            "coreId",
            "--text-field",
            "fullText",
            "--json",
        ],
        renamed.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(6), "{}", String::from_utf8_lossy(&o.stderr));
    let again = json_lines(&String::from_utf8(o.stdout).unwrap());
    assert_eq!(again[..1_701], out[..1_701]);
    assert_eq!(again[1_702..], out[1_702..]);
    // The field options mean nothing without --jsonl: a usage error.
    assert_eq!(fpdb(&["query", &db, "--text", "x", "--key-field", "id"]).status.code(), Some(2));
}

#[test]
fn ingest_directory_and_stdin_and_insert_delete_compact_export() {
    let dir = tempfile::tempdir().unwrap();
    let db = new_db(dir.path(), "db");
    let v = vocab();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(docs.join("sub")).unwrap();
    std::fs::write(docs.join("a.txt"), text(&passage(&v, 150, 1))).unwrap();
    std::fs::write(docs.join("sub/b.txt"), text(&passage(&v, 150, 2))).unwrap();
    let out = json_lines(&ok(&fpdb(&["ingest", &db, docs.to_str().unwrap(), "--json"])));
    let keys: Vec<&str> = out.iter().map(|l| l["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["a.txt", "sub/b.txt"]);

    let line = serde_json::json!({"key": "from-stdin", "text": text(&edit(&v, &passage(&v, 150, 1), 1, 5))}).to_string();
    let out = json_lines(&ok(&fpdb_stdin(&["ingest", &db, "-", "--json"], line.as_bytes())));
    assert_eq!(out[0]["duplicates"][0]["key"], "a.txt");

    let file = dir.path().join("c.txt");
    std::fs::write(&file, text(&passage(&v, 150, 3))).unwrap();
    let ins = json_lines(&ok(&fpdb(&["insert", &db, "--key", "c", file.to_str().unwrap(), "--json"])));
    assert_eq!(ins[0]["stored"], true);
    let ins2 = json_lines(&ok(&fpdb_stdin(
        &["insert", &db, "--key", "c2", "--json", "--dedup", "skip"],
        text(&passage(&v, 150, 3)).as_bytes(),
    )));
    assert_eq!(ins2[0]["stored"], false);
    assert_eq!(ins2[0]["duplicates"][0]["key"], "c");

    assert!(ok(&fpdb(&["delete", &db, "c"])).contains("deleted"));
    assert_eq!(fpdb(&["delete", &db, "c"]).status.code(), Some(1));
    let exported = json_lines(&ok(&fpdb(&["export", &db])));
    assert_eq!(exported.len(), 3);
    for e in &exported {
        assert!(
            e["simhash"].is_u64() && e["shingles"].as_u64().unwrap() > 100 && e["group"].is_u64(),
            "{e}"
        );
    }
    let c = json_lines(&ok(&fpdb(&["compact", &db, "--json", "--min-dead", "0.0"])));
    assert!(c[0]["bytes_reclaimed"].as_u64().unwrap() > 0, "{:?}", c);
    assert!(ok(&fpdb(&["check", &db])).contains("0 fault(s)"));
    // --index also merges RocksDB's runs: nothing left to reclaim, and the database stays sound.
    let c = json_lines(&ok(&fpdb(&["compact", &db, "--json", "--index"])));
    assert_eq!(c[0]["bytes_reclaimed"].as_u64(), Some(0), "{:?}", c);
    assert!(ok(&fpdb(&["check", &db])).contains("0 fault(s)"));
}

#[test]
fn bad_lines_get_clear_errors_and_the_rest_still_ingests() {
    let dir = tempfile::tempdir().unwrap();
    let db = new_db(dir.path(), "db");
    let v = vocab();
    let good = |k: &str, s: u64| serde_json::json!({"key": k, "text": text(&passage(&v, 50, s))}).to_string();
    let mut input = Vec::new();
    input.extend(good("g1", 1).as_bytes());
    input.extend(b"\n{\"key\": \"bad-utf8\", \"text\": \"caf\xff\"}\n");
    input.extend(b"{\"key\": \"empty\", \"text\": \"   \"}\n");
    input.extend(b"{\"text\": \"no key here at all\"}\n");
    input.extend(b"{\"key\": 5, \"text\": [1, 2]}\n");
    input.extend(b"{not json\n\n");
    input.extend(good("g2", 2).as_bytes());
    input.push(b'\n');
    let o = fpdb_stdin(&["ingest", &db, "-", "--json"], &input);
    assert_eq!(o.status.code(), Some(6), "partial success exit code");
    let err = String::from_utf8_lossy(&o.stderr);
    for needle in [
        "line 2",
        "invalid UTF-8",
        "line 3",
        "no words",
        "line 4",
        "missing field \"key\"",
        "line 5",
        "must be a string, found an array",
        "line 6",
        "malformed JSON",
    ] {
        assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
    }
    let lines = json_lines(&String::from_utf8(o.stdout).unwrap());
    let stored: Vec<&str> = lines
        .iter()
        .filter(|l| l["stored"] == true)
        .map(|l| l["key"].as_str().unwrap())
        .collect();
    assert_eq!(stored, ["g1", "g2"]);
    assert_eq!(lines.iter().filter(|l| l.get("error").is_some()).count(), 5);
}

#[test]
fn pairs_equal_the_brute_force_set_from_exported_simhashes() {
    let dir = tempfile::tempdir().unwrap();
    let db = new_db(dir.path(), "db");
    let (jsonl, _) = corpus();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, jsonl).unwrap();
    ok(&fpdb(&["ingest", &db, input.to_str().unwrap(), "--dedup", "off"]));
    let exported = json_lines(&ok(&fpdb(&["export", &db])));
    let fps: Vec<(String, u64)> = exported
        .iter()
        .map(|e| (e["key"].as_str().unwrap().to_string(), e["simhash"].as_u64().unwrap()))
        .collect();
    let mut want = Vec::new();
    for i in 0..fps.len() {
        for j in i + 1..fps.len() {
            let d = (fps[i].1 ^ fps[j].1).count_ones();
            if d <= 8 {
                want.push((fps[i].0.clone(), fps[j].0.clone(), d as u64));
            }
        }
    }
    want.sort();
    let out = json_lines(&ok(&fpdb(&["pairs", &db, "--k", "8", "--json"])));
    let mut got: Vec<(String, String, u64)> = out
        .iter()
        .map(|p| {
            (
                p["a"].as_str().unwrap().into(),
                p["b"].as_str().unwrap().into(),
                p["hamming"].as_u64().unwrap(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(got, want);
    assert!(!want.is_empty());

    let groups = json_lines(&ok(&fpdb(&["pairs", &db, "--min-jaccard", "0.9", "--groups", "--json"])));
    assert_eq!(groups.len(), 10);
    assert!(groups
        .iter()
        .all(|g| g["size"] == 3 && g["canonical"].as_str().unwrap().starts_with("base")));
}

#[test]
fn usage_errors_exit_2_and_missing_databases_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(fpdb(&["query"]).status.code(), Some(2));
    let o = fpdb(&["stats", dir.path().join("missing").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("fpdb init"));
    let db = new_db(dir.path(), "db");
    let o = fpdb(&["init", &db]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("already exists"));
    let o = fpdb(&["init", dir.path().join("x").to_str().unwrap(), "--shingle", "sentence:2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("word:N"));
}

/// Runs fpdb, killing it after `secs` (then `None`): a value that makes a command run away must fail
/// this test, not hang it.
fn fpdb_within(args: &[&str], secs: u64) -> Option<Output> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fpdb"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fpdb");
    let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < end {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    None
}

#[test]
fn out_of_range_numbers_are_usage_errors_naming_the_range() {
    let dir = tempfile::tempdir().unwrap();
    let db = new_db(dir.path(), "db");
    let (jsonl, _) = corpus();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, &jsonl).unwrap();
    let input = input.to_str().unwrap();
    let fresh = dir.path().join("fresh").display().to_string();
    let corpus_file = input;
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["ingest", &db, input, "--batch-size", "0"], "1..=1000000"),
        (vec!["ingest", &db, input, "--batch-size", "1000001"], "1..=1000000"),
        (vec!["ingest", &db, input, "--batch-size", "18446744073709551615"], "1..=1000000"),
        (
            vec!["ingest", &db, input, "--batch-latency-ms", "18446744073709551615"],
            "0..=3600000",
        ),
        (vec!["ingest", &db, input, "--workers", "100000000"], "0..=1024"),
        (vec!["pairs", &db, "-k", "4000000000"], "0..=32"),
        (vec!["pairs", &db, "-k", "33"], "0..=32"),
        (vec!["pairs", &db, "--min-jaccard", "1.5"], "0..=1"),
        (vec!["pairs", &db, "--threads", "100000000"], "0..=1024"),
        (vec!["compact", &db, "--min-dead", "1.5"], "0..=1"),
        (vec!["compact", &db, "--min-dead=-0.1"], "0..=1"),
        (vec!["compact", &db, "--min-dead", "NaN"], "0..=1"),
        (vec!["query", &db, "--text", "x", "-k", "33"], "0..=32"),
        (vec!["query", &db, "--text", "x", "--min-jaccard", "2"], "0..=1"),
        (vec!["bench-query", &db, "--queries", input, "-k", "40"], "0..=32"),
        (vec!["bench-query", &db, "--queries", input, "--min-jaccard=-1"], "0..=1"),
        (vec!["init", &fresh, "-k", "33"], "0..=32"),
        (vec!["init", &fresh, "--min-jaccard", "1.01"], "0..=1"),
        (vec!["eval", corpus_file, "--truth-t", "7"], "0..=1"),
    ];
    for (args, range) in cases {
        let o = fpdb_within(&args, 30).unwrap_or_else(|| panic!("fpdb {args:?} ran for 30 s instead of refusing the value"));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "fpdb {args:?}: {:?}\n{err}", o.status);
        // A clap usage error (before the database is touched) that names the accepted range.
        assert!(
            err.starts_with("error: invalid value") && err.contains(range),
            "fpdb {args:?}:\n{err}"
        );
    }
    assert!(!Path::new(&fresh).exists(), "a refused init must not create the database");
    // The bounds themselves are accepted.
    ok(&fpdb(&[
        "ingest",
        &db,
        input,
        "--batch-size",
        "1",
        "--batch-latency-ms",
        "0",
        "--workers",
        "1",
    ]));
    ok(&fpdb(&["compact", &db, "--min-dead", "1"]));
    ok(&fpdb(&["pairs", &db, "-k", "32", "--threads", "1", "--summary"]));
}

#[test]
fn init_normalizer_picks_the_text_normalizer_and_refuses_unknown_versions() {
    let dir = tempfile::tempdir().unwrap();
    let new = new_db(dir.path(), "new");
    let old = dir.path().join("old").display().to_string();
    ok(&fpdb(&["init", &old, "--normalizer", "1"]));
    let spec = |db: &str| {
        json_lines(&ok(&fpdb(&["stats", db, "--json"])))[0]["spec"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(spec(&new).ends_with("normalizer=2"), "{}", spec(&new));
    assert!(spec(&old).ends_with("normalizer=1"), "{}", spec(&old));
    // A Japanese paragraph and a copy with one character changed: a near-duplicate under 2;
    // version 1 saw a few clause-long tokens, and the changed clause took most shingles with it.
    let ja = "重複文書の検出は、電子図書館が同じ論文の異なる版を一つの記録にまとめるために欠かせない技術である。\
              検索エンジンは同じ文書を何度も収集するので、指紋の比較と集合の類似度によって、到着した文書を\
              すぐに既存の記録と照合しなければならない。";
    let near = ja.replacen("論文", "論考", 1);
    for db in [&new, &old] {
        ok(&fpdb_stdin(&["insert", db, "--key", "ja"], ja.as_bytes()));
    }
    let hits = json_lines(&ok(&fpdb(&["query", &new, "--text", &near, "--json"])));
    assert_eq!(hits[0]["key"], "ja", "{hits:?}");
    assert_eq!(fpdb(&["query", &old, "--text", &near]).status.code(), Some(1));
    let bad = fpdb(&["init", &dir.path().join("bad").display().to_string(), "--normalizer", "3"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("1..=2"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

/// `-q/--quiet`: every command prints nothing but errors, with the exit code it has
/// without `-q`; `--no-progress` only hides the bar.
#[test]
fn quiet_prints_nothing_but_errors_and_keeps_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let (jsonl, docs) = corpus();
    let f = dir.path().join("c.jsonl");
    std::fs::write(&f, &jsonl).unwrap();
    let file = f.to_str().unwrap();
    let db = dir.path().join("db").display().to_string();
    let probe = &docs[0].1;
    let unrelated = text(&passage(&vocab(), 200, 777_777));
    let text_file = dir.path().join("t.txt");
    std::fs::write(&text_file, probe).unwrap();
    let tf = text_file.to_str().unwrap();
    // Each command, in order (the database changes along the way), with the exit code expected.
    let runs: Vec<(Vec<&str>, i32)> = vec![
        (vec!["init", &db], 0),
        (vec!["ingest", &db, file], 0),
        (vec!["insert", &db, "--key", "extra", tf], 0),
        (vec!["query", &db, "--text", probe], 0),
        (vec!["query", &db, "--text", &unrelated], 1),
        (vec!["query", &db, "--jsonl", file], 0),
        (vec!["get", &db, "base0"], 0),
        (vec!["get", &db, "absent"], 1),
        (vec!["delete", &db, "extra"], 0),
        (vec!["stats", &db], 0),
        (vec!["check", &db], 0),
        (vec!["pairs", &db], 0),
        (vec!["export", &db], 0),
        (vec!["compact", &db], 0),
        (vec!["reindex", &db, "--tables", "k+1"], 0),
    ];
    for (args, code) in &runs {
        let writes = matches!(args[0], "init" | "ingest" | "insert" | "delete" | "compact" | "reindex");
        for json in [false, true] {
            let mut args = args.clone();
            if json {
                args.push("--json");
            }
            if !writes {
                // The reference: the same read without -q prints something, with the same code.
                let loud = fpdb(&args);
                assert_eq!(loud.status.code(), Some(*code), "{args:?}: {}", stderr(&loud));
                if *code == 0 {
                    assert!(!loud.stdout.is_empty(), "{args:?} prints something without -q");
                }
            }
            // A write runs once (a second run would meet another state): quietly, as text.
            let flags: &[&str] = if writes {
                if json {
                    &[]
                } else {
                    &["-q"]
                }
            } else {
                &["-q", "--quiet"]
            };
            for q in flags {
                let mut quiet = args.clone();
                quiet.insert(0, q);
                let o = fpdb(&quiet);
                assert_eq!(o.status.code(), Some(*code), "{quiet:?}: {}", stderr(&o));
                assert!(o.stdout.is_empty(), "{quiet:?}: stdout {:?}", String::from_utf8_lossy(&o.stdout));
                assert!(o.stderr.is_empty(), "{quiet:?}: stderr {:?}", stderr(&o));
            }
        }
    }
    // Errors still reach stderr, with their exit code.
    let o = fpdb(&["-q", "stats", &dir.path().join("nothing").display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(stderr(&o).contains("fpdb: error:"), "{}", stderr(&o));
    // A rejected input line is an error: reported under -q, exit 6.
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, format!("{}{{not json\n", jsonl.lines().next().unwrap().to_owned() + "\n")).unwrap();
    let o = fpdb(&["ingest", &db, bad.to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(6));
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).contains("rejected") && !stderr(&o).contains("ingested"),
        "{}",
        stderr(&o)
    );
    // --no-progress keeps the results and the summary, with --json one JSON object on stderr.
    let o = fpdb(&["ingest", &db, file, "--no-progress", "--json"]);
    assert_eq!(json_lines(&ok(&o)).len(), docs.len());
    let summary = json_lines(&stderr(&o));
    assert_eq!(summary.len(), 1, "{}", stderr(&o));
    let s = &summary[0]["summary"];
    assert_eq!(s["items"].as_u64(), Some(docs.len() as u64), "{s}");
    assert_eq!(
        s["stored"].as_u64().unwrap() + s["skipped"].as_u64().unwrap(),
        docs.len() as u64,
        "{s}"
    );
    for field in ["with_duplicates", "errors", "batches", "text_bytes", "records_skipped"] {
        assert!(s[field].is_u64(), "{field} in {s}");
    }
    assert!(s["seconds"].as_f64().unwrap() > 0.0 && s["flush_seconds"].is_f64(), "{s}");
}

/// The keys of a printed JSON object, after checking that the line is printed with the keys of
/// every object sorted (as the CLI has always printed them: the canonical form of its value).
/// (Numbers are compared as `N`: serde_json's default float parsing may move the last digit.)
fn printed_keys(line: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(
        numbers_blanked(line),
        numbers_blanked(&v.to_string()),
        "printed with its keys sorted"
    );
    v.as_object().unwrap().keys().cloned().collect()
}

/// JSON text with every number outside strings replaced by `N`.
fn numbers_blanked(json: &str) -> String {
    let (mut out, mut in_string, mut escaped) = (String::new(), false, false);
    for c in json.chars() {
        let number = !in_string && (c.is_ascii_digit() || "+-.eE".contains(c));
        if in_string {
            (in_string, escaped) = (escaped || c != '"', !escaped && c == '\\');
        } else {
            in_string = c == '"';
        }
        if !number {
            out.push(c);
        } else if !out.ends_with('N') {
            out.push('N');
        }
    }
    out
}

#[test]
fn json_lines_print_the_library_shapes_with_their_keys_sorted() {
    let dir = tempfile::tempdir().unwrap();
    let db = new_db(dir.path(), "db");
    let (jsonl, docs) = corpus();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, jsonl.lines().take(2).collect::<Vec<_>>().join("\n")).unwrap();
    let out = ok(&fpdb(&["ingest", &db, input.to_str().unwrap(), "--json"]));
    let lines: Vec<&str> = out.lines().collect();
    let outcome = [
        "canonical",
        "containment",
        "duplicates",
        "group",
        "group_size",
        "id",
        "key",
        "replaced",
        "stored",
    ];
    assert_eq!(printed_keys(lines[1]), outcome);
    let hit = serde_json::to_string(&serde_json::from_str::<serde_json::Value>(lines[1]).unwrap()["duplicates"][0]).unwrap();
    // `channels` and `cosine`: the semantic channel's fields, on every hit
    let hit_keys = [
        "channels",
        "containment",
        "cosine",
        "hamming",
        "id",
        "jaccard",
        "key",
        "match",
        "reverse_containment",
        "score",
        "shared",
    ];
    assert_eq!(printed_keys(&hit), hit_keys);
    let out = ok(&fpdb(&["query", &db, "--text", &docs[1].1, "--json"]));
    assert_eq!(printed_keys(out.lines().next().unwrap()), hit_keys);
    let out = ok(&fpdb(&["get", &db, &docs[0].0, "--json"]));
    let get = [
        "canonical",
        "doi",
        "group",
        "group_members",
        "id",
        "inserted_at_ms",
        "key",
        "meta",
        "shingles",
        "simhash",
        "title",
        "year",
    ];
    assert_eq!(printed_keys(out.trim()), get);
    let out = ok(&fpdb(&["stats", &db, "--json"]));
    let keys = printed_keys(out.trim());
    assert!(
        keys.contains(&"best_tables".to_string()) && keys.contains(&"containment".to_string()),
        "{keys:?}"
    );
}
