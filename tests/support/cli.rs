//! Running the `fpdb` binary from the CLI tests (cli/tests/cli/: `cli.rs`, `cli_input.rs`,
//! `cli_interrupt.rs`, `cli_containment.rs`, `methods_cli.rs`; cli/tests/serve.rs takes `gzip`):
//! spawn it, feed it standard input, insist on success, read its JSON lines, make a database and
//! count its documents. Only the cli package's tests include it: `env!("CARGO_BIN_EXE_fpdb")` names
//! the executable of the package that owns it.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// Runs `fpdb ARGS` to completion.
pub fn fpdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fpdb")).args(args).output().expect("spawn fpdb")
}

/// Runs `fpdb ARGS` with `stdin` on its standard input, written on a thread of its own while the
/// output is read (fpdb may write more than a pipe holds before it has read all of its input).
/// fpdb may stop reading early (a refused input, an error): a closed pipe is not a failure of the
/// test.
pub fn fpdb_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fpdb"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fpdb");
    let mut input = child.stdin.take().expect("piped stdin");
    let bytes = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let out = child.wait_with_output().expect("wait for fpdb");
    writer.join().expect("the stdin writer");
    out
}

/// The standard output of a run that must have succeeded (else a panic showing both streams).
pub fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).expect("UTF-8 stdout")
}

/// Each line parsed as JSON.
pub fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect()
}

/// Its standard error, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A new database `name` in `dir` (`fpdb init`); its path.
pub fn new_db(dir: &Path, name: &str) -> String {
    let db = dir.join(name).display().to_string();
    ok(&fpdb(&["init", &db]));
    db
}

/// The number of documents `fpdb stats` counts.
pub fn docs_in(db: &str) -> u64 {
    json_lines(&ok(&fpdb(&["stats", db, "--json"])))[0]["docs"]
        .as_u64()
        .expect("stats docs")
}

/// `bytes` gzip-compressed.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).expect("gzip into memory");
    e.finish().expect("gzip into memory")
}
