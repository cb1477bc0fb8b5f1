//! Unusual input gets a defined result: huge and binary documents, boundary keys.

use fpdb::{CreateOptions, Db, Error, QueryOptions};

#[test]
fn a_100_mb_document_is_stored_and_found() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    let mut big = String::with_capacity(100 << 20);
    let mut x = 1u64;
    while big.len() < 100 << 20 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        big.push_str(&format!("w{} ", x >> 44));
    }
    let out = db.insert("huge", &big).unwrap();
    assert!(out.id.is_some());
    let doc = db.get("huge").unwrap().unwrap();
    assert!(doc.record.count > 1_000_000, "{}", doc.record.count);
    let hits = db.query(&big, &QueryOptions::default()).unwrap();
    assert_eq!((hits[0].key.as_str(), hits[0].jaccard), ("huge", Some(1.0)));
    assert!(db.check().unwrap().faults.is_empty());
}

#[test]
fn binary_looking_text_either_fingerprints_or_is_rejected_as_wordless() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    let control: String = (0u8..32).map(char::from).collect();
    match db.insert("ctl", &control) {
        Err(Error::InvalidInput { message, .. }) => assert!(message.contains("no words")),
        other => panic!("expected a wordless rejection, got {other:?}"),
    }
    // Bytes decoded lossily by a caller still have alphanumeric runs: stored like any text.
    let bytes: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
    let lossy = String::from_utf8_lossy(&bytes).into_owned();
    let out = db.insert("bin", &lossy).unwrap();
    assert!(out.id.is_some());
    assert_eq!(db.query(&lossy, &QueryOptions::default()).unwrap()[0].key, "bin");
}

#[test]
fn keys_of_zero_bytes_are_rejected_and_of_64_kib_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    assert!(db.insert("", "a b c").unwrap_err().to_string().contains("key is empty"));
    let k = "é".repeat(32 * 1024);
    assert_eq!(k.len(), 64 * 1024);
    db.insert(&k, "some words to store").unwrap();
    assert_eq!(db.get(&k).unwrap().unwrap().record.key, k);
    let too_long = format!("{k}x");
    assert!(matches!(db.insert(&too_long, "a b c"), Err(Error::InvalidInput { .. })));
    let path = db.path().to_path_buf();
    drop(db);
    assert_eq!(Db::open(&path).unwrap().get(&k).unwrap().unwrap().record.key.len(), 64 * 1024);
}

#[test]
fn a_second_writing_process_gets_a_clear_lock_error_and_readers_work_beside_the_writer() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    db.insert("held", "a document inserted while the writer holds the lock").unwrap();
    let fpdb = |args: &[&str]| std::process::Command::new(env!("CARGO_BIN_EXE_fpdb")).args(args).output().unwrap();
    let path = db.path().to_str().unwrap().to_string();
    let o = fpdb(&["delete", &path, "held"]);
    assert_eq!(o.status.code(), Some(5));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("locked by another process"), "{err}");
    // Read-only commands open beside the writer and see its committed documents.
    let o = fpdb(&[
        "query",
        &path,
        "--text",
        "a document inserted while the writer holds the lock",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"held\""));
    assert!(fpdb(&["check", &path]).status.success());
}
