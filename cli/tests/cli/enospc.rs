//! A real full disk (not an injected one): a database on a 3 MB tmpfs fills up during `ingest`.
//! `Db::ingest` and `fpdb ingest` must end with an I/O error (exit 3) instead of hanging, every
//! acknowledged document must be present after the disk grows again, and `check` must be clean.
//!
//! Needs root (to mount a tmpfs). Where it cannot mount one, the test says so on stderr and is
//! counted as skipped in scripts/test.sh's summary (tests/support/skip.rs) — and under `CI=true`
//! it FAILS instead: CI runs as root, so a CI run that cannot make the real fault has not tested it.

use crate::common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use common::{assert_acked_present, passage, text, vocab};
use fpdb::IngestOptions;
use fpdb::{CreateOptions, Db, Error, NewDoc};

/// A test that cannot make its real fault: fails under `CI=true`, else says so on stderr.
fn skip(why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("SKIPPED: {why} — the full-disk test did not run; CI=true requires it to run (CI runs as root)");
    }
    crate::skip::skipped("enospc (a real full disk)", why);
}

struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().ok()?.keep();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = std::fs::remove_dir(&dir);
            skip("cannot mount a tmpfs (needs root and mount permission)");
            return None;
        }
        Some(Tmpfs(dir))
    }

    fn grow(&self, size: &str) {
        let st = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(st.success());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Distinct passages of ~60 words: 58,000 of them are far more than 3 MB.
fn docs(n: usize) -> impl Iterator<Item = fpdb::Result<NewDoc>> + Send + 'static {
    let v = vocab();
    (0..n).map(move |i| {
        Ok(NewDoc {
            key: format!("p{i}"),
            text: text(&passage(&v, 60, 7_000_000 + i as u64)),
            meta: None,
            biblio: Default::default(),
        })
    })
}

#[test]
fn ingest_on_a_full_disk_ends_with_an_io_error_and_loses_nothing_acknowledged() {
    if !cfg!(target_os = "linux") {
        skip("tmpfs mounts are Linux-only");
        return;
    }
    let Some(fs) = Tmpfs::mount("3m") else { return };
    let path = fs.0.join("db");
    let db = Db::create(&path, &CreateOptions::default()).unwrap();
    let (tx, rx) = mpsc::channel();
    {
        let db = db.clone();
        std::thread::spawn(move || {
            let mut acked = Vec::new();
            let opts = IngestOptions::default().with_batch_size(512);
            let r = db.ingest(docs(58_000), &opts, |d| {
                if let Ok(o) = d.result {
                    acked.push(o.key);
                }
            });
            drop(db);
            let _ = tx.send((r, acked));
        });
    }
    let (r, acked) = rx.recv_timeout(Duration::from_secs(120)).expect("Db::ingest hung on a full disk");
    match &r {
        Err(Error::Io { source, .. }) => assert_eq!(source.raw_os_error(), Some(28), "{r:?}"),
        Err(Error::Rocks { kind, message, .. }) => {
            assert_eq!(*kind, fpdb::RocksKind::Io, "{r:?}");
            assert!(message.contains("space"), "{message}");
        }
        other => panic!("expected a full-disk I/O error, got {other:?}"),
    }
    assert!(!acked.is_empty() && acked.len() < 58_000, "{}", acked.len());
    assert!(matches!(
        db.insert("late", "a write after the disk filled up"),
        Err(Error::Poisoned { .. })
    ));
    drop(db);
    fs.grow("64m");
    assert_acked_present(&path, &acked);
}

#[test]
fn fpdb_ingest_on_a_full_disk_exits_3_with_the_reason() {
    if !cfg!(target_os = "linux") {
        skip("tmpfs mounts are Linux-only");
        return;
    }
    let Some(fs) = Tmpfs::mount("3m") else { return };
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("big.jsonl");
    let mut lines = String::new();
    for d in docs(58_000) {
        let d = d.unwrap();
        lines.push_str(&serde_json::json!({"key": d.key, "text": d.text}).to_string());
        lines.push('\n');
    }
    std::fs::write(&input, lines).unwrap();
    let db = fs.0.join("db");
    let fpdb = env!("CARGO_BIN_EXE_fpdb");
    assert!(Command::new(fpdb).arg("init").arg(&db).status().unwrap().success());
    let child = Command::new(fpdb)
        .arg("ingest")
        .arg(&db)
        .arg(&input)
        .arg("--json")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait with a deadline (a hang is the failure this test exists for), draining the pipes meanwhile.
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Ok(out) = rx.recv_timeout(Duration::from_secs(120)) else {
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        panic!("`fpdb ingest` hung on a full disk");
    };
    let out = out.unwrap();
    let status = out.status;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    let acked: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["stored"] == true)
        .filter_map(|v| v["key"].as_str().map(str::to_string))
        .collect();
    assert!(!acked.is_empty());
    fs.grow("64m");
    assert_acked_present(&db, &acked);
}
