//! The conventions a user expects of a command-line tool: shell completions that the shell parses,
//! a manual page, one name per setting (`--max-distance`, with `--k` read as its alias), and every
//! `fpdb serve` flag also from an `FPDB_...` environment variable.

use std::process::Command;

use crate::common;
use crate::support;

use common::{passage, text, vocab};
use support::{fpdb, fpdb_stdin, json_lines, new_db, ok, stderr};

fn have(shell: &str) -> bool {
    Command::new(shell).arg("-c").arg("true").output().is_ok_and(|o| o.status.success())
}

#[test]
fn completion_scripts_are_made_for_every_shell_and_bash_parses_its_script() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = ok(&fpdb(&["completions", shell]));
        // Every command is offered (the script is made from the parser's own definitions).
        for cmd in ["ingest", "query", "pairs", "serve", "completions", "man"] {
            assert!(script.contains(cmd), "{shell}: {cmd} missing");
        }
        assert!(script.contains("max-distance"), "{shell}: --max-distance missing");
        let f = dir.path().join(format!("fpdb.{shell}"));
        std::fs::write(&f, &script).unwrap();
        // The shells at hand check the syntax of their script (`-n`: parse, run nothing).
        let check: &[&str] = match shell {
            "bash" => &["bash", "-n"],
            "zsh" => &["zsh", "-n"],
            "fish" => &["fish", "--no-execute"],
            _ => &[],
        };
        if let Some((sh, flags)) = check.split_first() {
            if *sh == "bash" || have(sh) {
                let o = Command::new(sh).args(flags).arg(&f).output().unwrap();
                assert!(
                    o.status.success(),
                    "{sh} -n {}: {}",
                    f.display(),
                    String::from_utf8_lossy(&o.stderr)
                );
            }
        }
    }
    // Sourced in bash, the script registers its completion function for `fpdb`.
    let f = dir.path().join("fpdb.bash");
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!("source {} && complete -p fpdb", f.display()))
        .output()
        .unwrap();
    assert!(
        o.status.success() && String::from_utf8_lossy(&o.stdout).contains("fpdb"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = fpdb(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2), "an unknown shell is a usage error");
}

#[test]
fn the_manual_page_is_roff_and_one_page_per_command_goes_to_a_directory() {
    let page = ok(&fpdb(&["man"]));
    assert!(
        page.starts_with(".ie") || page.contains(".TH fpdb 1"),
        "{}",
        &page[..page.len().min(300)]
    );
    assert!(page.contains(".TH fpdb 1") && page.contains("ingest"), "no title or commands");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man1");
    ok(&fpdb(&["man", "--dir", out.to_str().unwrap()]));
    for page in [
        "fpdb.1",
        "fpdb-ingest.1",
        "fpdb-query.1",
        "fpdb-serve.1",
        "fpdb-semantic-backfill.1",
    ] {
        let text = std::fs::read_to_string(out.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.contains(".TH"), "{page}");
    }
    let query = std::fs::read_to_string(out.join("fpdb-query.1")).unwrap();
    assert!(query.contains("max\\-distance"), "fpdb-query.1 names --max-distance");
}

#[test]
fn max_distance_is_one_name_in_every_command_and_k_is_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let db = new_db(dir.path(), "db");
    let v = vocab();
    let a = text(&passage(&v, 150, 1));
    ok(&fpdb_stdin(&["insert", &db, "--key", "a"], a.as_bytes()));
    let hits = |flag: &str| json_lines(&ok(&fpdb(&["query", &db, "--text", &a, flag, "3", "--json"])));
    let new = hits("--max-distance");
    assert_eq!(new.len(), 1);
    assert_eq!(new, hits("--k"), "--k is the old name of --max-distance");
    assert_eq!(new, hits("-k"));
    for cmd in ["query", "pairs"] {
        let help = ok(&fpdb(&[cmd, "--help"]));
        assert!(help.contains("--max-distance"), "{cmd} --help");
        assert!(!help.contains("--k "), "{cmd} --help shows the hidden alias: {help}");
    }
    // a copy, so that pairs finds one (it exits 1 when it finds none); timings left out
    ok(&fpdb_stdin(&["insert", &db, "--key", "b"], a.as_bytes()));
    let summary = |flag: &str| {
        let mut v: serde_json::Value = serde_json::from_str(ok(&fpdb(&["pairs", &db, flag, "3", "--json", "--summary"])).trim()).unwrap();
        let o = v.as_object_mut().unwrap();
        o.retain(|k, _| !k.ends_with("_seconds"));
        v
    };
    let pairs = summary("--max-distance");
    assert_eq!(pairs["pairs"], 1, "{pairs}");
    assert_eq!(pairs, summary("--k"));
}

#[test]
fn every_serve_flag_has_an_environment_variable_and_it_is_read() {
    let help = ok(&fpdb(&["serve", "--help"]));
    let flags: Vec<&str> = help
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("--"))
        .filter_map(|l| l.split([' ', '<']).next())
        .filter(|f| !matches!(*f, "help" | "version" | "json" | "quiet"))
        .collect();
    assert!(flags.len() >= 20, "{flags:?}");
    for flag in &flags {
        let var = format!("FPDB_{}", flag.to_uppercase().replace('-', "_"));
        assert!(help.contains(&format!("[env: {var}=")), "--{flag} has no {var}:\n{help}");
    }
    assert!(help.contains("[env: FPDB_DB="), "the database directory has FPDB_DB");
    // Read: a non-loopback address from FPDB_LISTEN is refused without a token, as --listen is.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let o = Command::new(env!("CARGO_BIN_EXE_fpdb"))
        .arg("serve")
        .env("FPDB_DB", &db)
        .env("FPDB_LISTEN", "0.0.0.0:0")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("0.0.0.0:0 is not a loopback address"), "{}", stderr(&o));
    // A flag on the command line wins over its variable.
    let o = Command::new(env!("CARGO_BIN_EXE_fpdb"))
        .args(["serve", db.to_str().unwrap(), "--listen", "0.0.0.0:1"])
        .env("FPDB_LISTEN", "0.0.0.0:0")
        .output()
        .unwrap();
    assert!(stderr(&o).contains("0.0.0.0:1 is not a loopback address"), "{}", stderr(&o));
    // A bad value names its variable.
    let o = Command::new(env!("CARGO_BIN_EXE_fpdb"))
        .args(["serve", db.to_str().unwrap()])
        .env("FPDB_QUEUE_DEPTH", "many")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("many"), "{}", stderr(&o));
}
