//! Running the `fpdb` binary from the CLI tests (`cli.rs`, `cli_input.rs`, `cli_containment.rs`,
//! `methods_cli.rs`): spawn it, feed it standard input, insist on success, read its JSON lines.
#![allow(dead_code)]

use std::io::Write;
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
