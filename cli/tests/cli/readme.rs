//! The README's shell session runs as written: every ```console block is a list of `$ command`
//! lines, each followed by the output it must print (stdout and stderr as a terminal shows them).
//! A JSON line is compared as JSON, without the fields that differ from run to run (`took_us`,
//! `inserted_at_ms`); a line with `…` matches any text in its place. So no sample in the README
//! can go stale. (The Rust example is a doctest of the crate; the Python one is checked by
//! python/tests/test_readme.py, the HTTP one by cli/tests/serve.rs.)

use std::path::Path;
use std::process::Command;

use crate::readme_md::{console_blocks, line_matches};

#[test]
fn the_readme_session_prints_what_the_readme_says() {
    // the repository: the cli package's parent
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let md = std::fs::read_to_string(root.join("README.md")).unwrap();
    let blocks = console_blocks(&md);
    let shell: Vec<_> = blocks
        .into_iter()
        .filter(|b| b.first().is_some_and(|(c, _)| c.starts_with("fpdb ")))
        .collect();
    assert!(!shell.is_empty(), "no fpdb session in README.md");
    let bin = Path::new(env!("CARGO_BIN_EXE_fpdb")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    for block in shell {
        // Each block in a fresh directory that sees the repository's examples/.
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(root.join("examples"), dir.path().join("examples")).unwrap();
        for (cmd, want) in block {
            let o = Command::new("bash")
                .arg("-c")
                .arg(format!("{cmd} 2>&1"))
                .current_dir(dir.path())
                .env("PATH", &path)
                .output()
                .unwrap();
            let out = String::from_utf8_lossy(&o.stdout);
            let got: Vec<&str> = out.lines().collect();
            assert_eq!(
                got.len(),
                want.len(),
                "$ {cmd}\nREADME says:\n{}\nit prints:\n{out}",
                want.join("\n")
            );
            for (w, g) in want.iter().zip(&got) {
                assert!(line_matches(w, g), "$ {cmd}\nREADME says: {w}\nit prints:   {g}");
            }
        }
    }
}

#[test]
fn the_line_matcher_keeps_its_promises() {
    assert!(line_matches("a … b", "a anything b"));
    assert!(!line_matches("a … b", "a anything c"));
    assert!(line_matches(r#"{"x":1,"took_us":5}"#, r#"{"took_us":9,"x":1}"#));
    assert!(!line_matches(r#"{"x":1}"#, r#"{"x":2}"#));
    assert!(!line_matches("exact", "exactly"));
    assert!(line_matches("a … b … c", "a 1 b 2 c"));
    assert!(!line_matches("a … b … c", "a 1 c 2 b"));
    assert!(!line_matches("ab … ba", "aba"));
}
