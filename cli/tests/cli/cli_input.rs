//! What the CLI makes of inputs as crawlers and Windows tools write them: gzip- and zstd-compressed
//! JSONL and text files, a UTF-8 byte-order mark with CRLF lines, WARC and WET files, directories
//! with hidden files, and formats it does not read (UTF-16, xz, PDF), which are refused with one
//! error instead of one rejection per line.

use crate::common;
use crate::support;

use common::{passage, text, vocab};
use support::{docs_in, fpdb, fpdb_stdin, gzip, json_lines, new_db, ok, stderr};

/// Every document's key, SimHash and shingle count, in id order.
fn exported(db: &str) -> Vec<(String, u64, u64)> {
    json_lines(&ok(&fpdb(&["export", db])))
        .iter()
        .map(|e| {
            (
                e["key"].as_str().unwrap().to_string(),
                e["simhash"].as_u64().unwrap(),
                e["shingles"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// 12 documents, 4 of them copies of others, with non-ASCII text.
fn zstd(bytes: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest)
}

fn jsonl() -> String {
    let v = vocab();
    (0..12u64)
        .map(|i| {
            let t = format!("Überblick café {}", text(&passage(&v, 120, i % 8)));
            serde_json::json!({"key": format!("doc{i}"), "text": t}).to_string() + "\n"
        })
        .collect()
}

#[test]
fn gzip_and_bom_with_crlf_ingest_exactly_like_plain_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let plain = jsonl();
    let bom_crlf = format!("\u{feff}{}", plain.replace('\n', "\r\n"));
    let inputs: Vec<(&str, Vec<u8>)> = vec![
        ("plain.jsonl", plain.clone().into_bytes()),
        ("docs.jsonl.gz", gzip(plain.as_bytes())),
        ("bom.jsonl", bom_crlf.clone().into_bytes()),
        ("bom.jsonl.gz", gzip(bom_crlf.as_bytes())),
        ("docs.jsonl.zst", zstd(plain.as_bytes())),
        ("bom.jsonl.zst", zstd(bom_crlf.as_bytes())),
    ];
    let want = {
        let db = new_db(dir.path(), "want");
        let f = dir.path().join("plain.jsonl");
        std::fs::write(&f, &plain).unwrap();
        let out = json_lines(&ok(&fpdb(&["ingest", &db, f.to_str().unwrap(), "--json"])));
        assert_eq!(out.len(), 12);
        // The copies were linked: the texts are what the test says they are.
        assert_eq!(out.iter().filter(|l| !l["duplicates"].as_array().unwrap().is_empty()).count(), 4);
        exported(&db)
    };
    assert_eq!(want.len(), 12);
    for (i, (name, bytes)) in inputs.iter().enumerate() {
        let f = dir.path().join(name);
        std::fs::write(&f, bytes).unwrap();
        let from_file = new_db(dir.path(), &format!("file{i}"));
        ok(&fpdb(&["ingest", &from_file, f.to_str().unwrap(), "--no-progress"]));
        assert_eq!(exported(&from_file), want, "{name} as a file");
        let from_stdin = new_db(dir.path(), &format!("stdin{i}"));
        ok(&fpdb_stdin(&["ingest", &from_stdin, "-", "--no-progress"], bytes));
        assert_eq!(exported(&from_stdin), want, "{name} on standard input");
    }
}

#[test]
fn gzip_text_files_are_read_for_query_insert_and_directories() {
    let dir = tempfile::tempdir().unwrap();
    let db = new_db(dir.path(), "db");
    let v = vocab();
    let (a, b) = (text(&passage(&v, 150, 1)), text(&passage(&v, 150, 2)));
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("a.txt"), &a).unwrap();
    std::fs::write(docs.join("b.txt.gz"), gzip(b.as_bytes())).unwrap();
    let out = json_lines(&ok(&fpdb(&["ingest", &db, docs.to_str().unwrap(), "--json"])));
    let keys: Vec<&str> = out.iter().map(|l| l["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["a.txt", "b.txt.gz"]);
    // The compressed file was stored as its text: the plain text finds it, whole.
    let hit = json_lines(&ok(&fpdb(&["query", &db, "--text", &b, "--json"])));
    assert_eq!((hit[0]["key"].as_str(), hit[0]["jaccard"].as_f64()), (Some("b.txt.gz"), Some(1.0)));
    // A compressed query, as a file and on standard input.
    let qa = dir.path().join("qa.gz");
    std::fs::write(&qa, gzip(a.as_bytes())).unwrap();
    let hit = json_lines(&ok(&fpdb(&["query", &db, qa.to_str().unwrap(), "--json"])));
    assert_eq!((hit[0]["key"].as_str(), hit[0]["jaccard"].as_f64()), (Some("a.txt"), Some(1.0)));
    let hit = json_lines(&ok(&fpdb_stdin(&["query", &db, "--json"], &gzip(b.as_bytes()))));
    assert_eq!(hit[0]["key"].as_str(), Some("b.txt.gz"));
    let ins = json_lines(&ok(&fpdb_stdin(
        &["insert", &db, "--key", "c", "--json", "--dedup", "skip"],
        &gzip(a.as_bytes()),
    )));
    assert_eq!(
        (ins[0]["stored"].as_bool(), ins[0]["duplicates"][0]["key"].as_str()),
        (Some(false), Some("a.txt"))
    );
}

#[test]
fn unreadable_formats_are_refused_with_one_error_and_nothing_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = new_db(dir.path(), "db");
    let plain = jsonl();
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(plain.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let f = dir.path().join("papers.jsonl");
    std::fs::write(&f, &utf16).unwrap();
    let o = fpdb(&["ingest", &db, f.to_str().unwrap(), "--no-progress"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one error, not one per line:\n{err}");
    assert!(
        err.contains("papers.jsonl: UTF-16 text") && err.contains("iconv -f UTF-16 -t UTF-8"),
        "{err}"
    );
    // xz on standard input, and UTF-16 inside gzip.
    let o = fpdb_stdin(&["ingest", &db, "-", "--no-progress"], b"\xFD7zXZ\x00\x00\x04\xE6\xD6");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("stdin: xz-compressed data") && err.contains("xz -dc FILE"), "{err}");
    let gz16 = dir.path().join("papers.jsonl.gz");
    std::fs::write(&gz16, gzip(&utf16)).unwrap();
    let o = fpdb(&["ingest", &db, gz16.to_str().unwrap(), "--no-progress"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("gzip-compressed UTF-16 text"), "{}", stderr(&o));
    assert_eq!(docs_in(&db), 0);

    // In a directory, a PDF is that file's problem (exit 6); the text beside it is stored.
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("paper.pdf"), b"%PDF-1.7\n%\xE2\xE3\xCF\xD3\n1 0 obj").unwrap();
    std::fs::write(docs.join("paper.txt"), text(&passage(&vocab(), 150, 9))).unwrap();
    // Latin-1 text is not refused by its first bytes, but its first non-ASCII byte is invalid
    // UTF-8: rejected with the offset and the conversion.
    std::fs::write(docs.join("latin1.txt"), b"Gr\xFC\xDFe aus M\xFCnchen, caf\xE9 cr\xE8me").unwrap();
    let o = fpdb(&["ingest", &db, docs.to_str().unwrap(), "--no-progress"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(6), "{err}");
    assert!(err.contains("paper.pdf: a PDF file") && err.contains("pdftotext"), "{err}");
    assert!(
        err.contains("latin1.txt: invalid UTF-8 at byte 2") && err.contains("iconv -f WINDOWS-1252 -t UTF-8"),
        "{err}"
    );
    assert_eq!(docs_in(&db), 1);
}

#[test]
fn a_truncated_gzip_input_is_a_read_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = new_db(dir.path(), "db");
    let big: String = (0..40).map(|_| jsonl()).collect();
    let mut gz = gzip(big.as_bytes());
    gz.truncate(gz.len() * 2 / 3);
    let f = dir.path().join("cut.jsonl.gz");
    std::fs::write(&f, &gz).unwrap();
    let o = fpdb(&["ingest", &db, f.to_str().unwrap(), "--no-progress"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("cut.jsonl.gz line"), "{err}");
    // What came before the damage was committed and is sound.
    let n = docs_in(&db);
    assert!(n > 0 && n < 480, "{n} documents");
    assert!(ok(&fpdb(&["check", &db])).contains("0 fault(s)"));
}

/// A WARC record: version line, fields, block, two CRLFs.
fn warc_record(kind: &str, uri: &str, id: u32, block: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nWARC-Record-ID: <urn:uuid:{id}>\r\n\
         WARC-Date: 2024-05-01T00:00:00Z\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    r.extend_from_slice(block);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

fn http(ctype: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[test]
fn a_warc_file_gives_one_document_per_response_and_skips_and_counts_the_other_records() {
    let dir = tempfile::tempdir().unwrap();
    let v = vocab();
    let a = text(&passage(&v, 200, 11));
    // b: a with a few words changed, a near-duplicate.
    let mut words = passage(&v, 200, 11);
    words[50] = "changed".into();
    words[120] = "words".into();
    let b = text(&words);
    let records = [
        warc_record("warcinfo", "", 1, b"software: fpdb-test\r\nformat: WARC File Format 1.0\r\n"),
        warc_record("request", "http://a.example/", 2, b"GET / HTTP/1.1\r\nHost: a.example\r\n\r\n"),
        warc_record(
            "response",
            "http://a.example/",
            3,
            &http(
                "text/html; charset=utf-8",
                &format!("<html><head><style>p {{}}</style><script>var x = 1;</script></head><body><p>{a}</p></body></html>"),
            ),
        ),
        warc_record("response", "http://a.example/logo.png", 4, &http("image/png", "\u{89}PNG")),
        warc_record("response", "http://b.example/page", 5, &http("text/plain", &b)),
        warc_record("metadata", "http://b.example/page", 6, b"fetchTimeMs: 12\r\n"),
    ];
    // A .warc.gz: one gzip member per record, as crawlers write them.
    let gz: Vec<u8> = records.iter().flat_map(|r| gzip(r)).collect();
    let plain: Vec<u8> = records.concat();
    for (name, bytes) in [("crawl.warc.gz", gz), ("crawl.warc", plain)] {
        let db = new_db(dir.path(), &format!("db-{name}"));
        let f = dir.path().join(name);
        std::fs::write(&f, bytes).unwrap();
        let o = fpdb(&["ingest", &db, f.to_str().unwrap(), "--json", "--no-progress"]);
        let out = json_lines(&ok(&o));
        let keys: Vec<&str> = out.iter().map(|l| l["key"].as_str().unwrap()).collect();
        assert_eq!(keys, ["http://a.example/", "http://b.example/page"], "{name}");
        assert_eq!(
            out[1]["duplicates"][0]["key"].as_str(),
            Some("http://a.example/"),
            "{name}: {:?}",
            out[1]
        );
        let summary = &json_lines(&stderr(&o))[0]["summary"];
        assert_eq!(summary["records_skipped"].as_u64(), Some(4), "{name}: {summary}");
        // The HTML page was stored as its text: the text alone finds it, whole.
        let hit = json_lines(&ok(&fpdb(&["query", &db, "--text", &a, "--json"])));
        assert_eq!(
            (hit[0]["key"].as_str(), hit[0]["jaccard"].as_f64()),
            (Some("http://a.example/"), Some(1.0))
        );
        // The record's identity is kept as metadata.
        let got = json_lines(&ok(&fpdb(&["get", &db, "http://b.example/page", "--json"])));
        let meta = got[0]["meta"].to_string();
        assert!(meta.contains("urn:uuid:5") && meta.contains("2024-05-01T00:00:00Z"), "{meta}");
        // Without --json the summary says what was skipped.
        let db2 = new_db(dir.path(), &format!("db2-{name}"));
        let o = fpdb(&["ingest", &db2, f.to_str().unwrap(), "--no-progress"]);
        let err = stderr(&o);
        assert!(
            err.contains("4 WARC records without a document skipped")
                && err.contains("1 warcinfo")
                && err.contains("1 request")
                && err.contains("1 response (image/png)"),
            "{err}"
        );
    }
    // A WET file (conversion records), zstd-compressed, keyed by another WARC field.
    let wet: Vec<u8> = [
        warc_record("warcinfo", "", 7, b"isPartOf: test\r\n"),
        warc_record("conversion", "http://a.example/", 8, a.as_bytes()),
        warc_record("conversion", "http://c.example/", 9, text(&passage(&v, 200, 12)).as_bytes()),
    ]
    .concat();
    let f = dir.path().join("crawl.warc.wet.zst");
    std::fs::write(&f, zstd(&wet)).unwrap();
    let db = new_db(dir.path(), "wet");
    let out = json_lines(&ok(&fpdb(&[
        "ingest",
        &db,
        f.to_str().unwrap(),
        "--json",
        "--key-field",
        "WARC-Record-ID",
    ])));
    let keys: Vec<&str> = out.iter().map(|l| l["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["<urn:uuid:8>", "<urn:uuid:9>"]);
}

#[test]
fn a_damaged_warc_stream_is_reported_with_its_record_and_what_came_before_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let v = vocab();
    let mut bytes = warc_record("conversion", "http://a.example/", 1, text(&passage(&v, 100, 1)).as_bytes());
    bytes.extend_from_slice(b"WARC/1.0\r\nWARC-Type: conversion\r\nContent-Length: lots\r\n\r\nxx");
    let f = dir.path().join("bad.warc");
    std::fs::write(&f, bytes).unwrap();
    let db = new_db(dir.path(), "db");
    let o = fpdb(&["ingest", &db, f.to_str().unwrap(), "--no-progress"]);
    assert_eq!(o.status.code(), Some(6), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("record 2 (byte ") && stderr(&o).contains("no valid Content-Length"),
        "{}",
        stderr(&o)
    );
    assert_eq!(docs_in(&db), 1);
}

#[test]
fn a_directory_walk_skips_hidden_files_and_git_unless_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let v = vocab();
    let docs = dir.path().join("docs");
    for (path, seed) in [
        ("a.txt", 1),
        ("sub/b.txt", 2),
        (".notes.txt", 3),
        (".git/HEAD", 4),
        (".git/objects/ab/cdef", 5),
        ("sub/.cache/c.txt", 6),
    ] {
        let p = docs.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text(&passage(&v, 60, seed))).unwrap();
    }
    let keys = |extra: &[&str]| {
        let db = new_db(dir.path(), &format!("db{}", extra.len()));
        let mut args = vec!["ingest", &db, docs.to_str().unwrap(), "--json"];
        args.extend_from_slice(extra);
        json_lines(&ok(&fpdb(&args)))
            .iter()
            .map(|l| l["key"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(&[]), ["a.txt", "sub/b.txt"]);
    assert_eq!(
        keys(&["--hidden"]),
        [
            ".git/HEAD",
            ".git/objects/ab/cdef",
            ".notes.txt",
            "a.txt",
            "sub/.cache/c.txt",
            "sub/b.txt"
        ]
    );
}
