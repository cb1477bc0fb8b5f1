//! What the CLI makes of inputs as crawlers and Windows tools write them: gzip-compressed JSONL and
//! text files, a UTF-8 byte-order mark with CRLF lines, and formats it does not read (UTF-16, zstd,
//! PDF), which are refused with one error instead of one rejection per line.

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
    // zstd on standard input, and UTF-16 inside gzip.
    let o = fpdb_stdin(&["ingest", &db, "-", "--no-progress"], b"\x28\xB5\x2F\xFD\x04\x00\x00\x00\x00\x00");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("stdin: zstd-compressed data") && err.contains("zstd -dc FILE"),
        "{err}"
    );
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
