//! Ctrl-C during `fpdb ingest`: the first SIGINT stops reading, commits what was read, says how far
//! the input was read and exits 130; a second exits at once. Either way every acknowledged document
//! is in the database and `check` is clean.
#![cfg(unix)]

use crate::common;
use crate::support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use common::{passage, text, vocab};
use support::{docs_in, fpdb, new_db, ok};

fn lines(from: u64, n: u64) -> String {
    let v = vocab();
    (from..from + n)
        .map(|i| serde_json::json!({"key": format!("doc{i}"), "text": text(&passage(&v, 80, i))}).to_string() + "\n")
        .collect()
}

/// `fpdb ingest DB - --json`, its input kept open; its output lines arrive on the receiver (read
/// on a thread of their own, so that a missing line fails the test by a timeout instead of hanging
/// it).
fn ingest(db: &str) -> (Child, ChildStdin, Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fpdb"))
        .args(["ingest", db, "-", "--json", "--batch-latency-ms", "5"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fpdb ingest");
    let stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, stdin, rx)
}

/// Writes `n` documents and waits until each is acknowledged: its line is printed once its batch
/// is durable, and must reach a reader of the pipe then, not when the output buffer fills.
fn feed_and_wait(stdin: &mut ChildStdin, acks: &Receiver<String>, from: u64, n: u64) {
    stdin.write_all(lines(from, n).as_bytes()).unwrap();
    stdin.flush().unwrap();
    for i in from..from + n {
        let line = acks
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|e| panic!("no acknowledgement of doc{i} within 60 s ({e})"));
        let ack: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(ack["key"], format!("doc{i}"));
    }
}

fn signal(child: &Child, sig: &str) {
    assert!(Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    // Let the handler run before the test goes on (the flag is all it sets).
    std::thread::sleep(Duration::from_millis(300));
}

/// The exit status within 60 s, else the process is killed and the test fails (never hangs).
fn exits(child: &mut Child) -> ExitStatus {
    let end = Instant::now() + Duration::from_secs(60);
    while Instant::now() < end {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    panic!("fpdb ingest did not exit after the signal");
}

/// The database holds `docs` documents and `check` finds no fault.
fn assert_holds(db: &str, docs: u64) {
    assert_eq!(docs_in(db), docs);
    assert!(ok(&fpdb(&["check", db])).contains("0 fault(s)"));
}

#[test]
fn the_first_ctrl_c_commits_what_was_read_and_reads_no_further() {
    let dir = tempfile::tempdir().unwrap();
    let db = new_db(dir.path(), "db");
    let (mut child, mut stdin, acks) = ingest(&db);
    feed_and_wait(&mut stdin, &acks, 0, 50);
    signal(&child, "-INT");
    // The reader waits in a read of the (open, idle) input: the next line is the last one read.
    stdin.write_all(lines(50, 20).as_bytes()).unwrap();
    stdin.flush().unwrap();
    let status = exits(&mut child);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        summary_items(&stderr) == Some(51) && stderr.contains("interrupted: the input was read up to stdin line 51,"),
        "{stderr}"
    );
    let rest: Vec<String> = acks.iter().collect();
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert!(rest[0].contains("\"doc50\""), "{rest:?}");
    drop(stdin);
    assert_holds(&db, 51);
}

#[test]
fn a_second_ctrl_c_exits_at_once_and_keeps_what_was_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let db = new_db(dir.path(), "db");
    let (mut child, mut stdin, acks) = ingest(&db);
    feed_and_wait(&mut stdin, &acks, 0, 30);
    // The input stays open and idle: the first signal cannot end the read, the second exits.
    signal(&child, "-INT");
    assert!(
        child.try_wait().unwrap().is_none(),
        "the first Ctrl-C must not end a reading ingest"
    );
    signal(&child, "-INT");
    assert_eq!(exits(&mut child).code(), Some(130));
    drop(stdin);
    assert_holds(&db, 30);
}

#[test]
fn sigterm_stops_a_streaming_ingest_like_ctrl_c() {
    // The input is a pipe that a thread keeps writing to and never closes: the ingest cannot end
    // by itself, so the signal lands mid-ingest by construction, wherever the reader is.
    let dir = tempfile::tempdir().unwrap();
    let db = new_db(dir.path(), "db");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fpdb"))
        .args(["ingest", &db, "-", "--json", "--dedup", "off"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        // Unique keys: the database must end with exactly the items read. Ends when the pipe
        // breaks (the process exited).
        let mut from = 0;
        while stdin.write_all(lines(from, 100).as_bytes()).is_ok() {
            from += 100;
        }
        from
    });
    // The first acknowledgement: the handlers are installed (before the first item is read).
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.contains("\"doc0\""), "{first}");
    let drain = std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    signal(&child, "-TERM");
    let status = exits(&mut child);
    drain.join().unwrap().unwrap();
    let written = feeder.join().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(130), "an endless input can only end by the signal: {stderr}");
    let line: u64 = stderr
        .split("read up to stdin line ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no line in {stderr}"));
    assert!(
        line >= 1 && line <= written,
        "read up to line {line} of {written} written: {stderr}"
    );
    assert_eq!(summary_items(&stderr), Some(line), "{stderr}");
    // Every item read was stored (the keys are unique), and nothing after it.
    assert_holds(&db, line);
}

/// `items` of the `--json` summary line on stderr.
fn summary_items(stderr: &str) -> Option<u64> {
    stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| v["summary"]["items"].as_u64())
}
