//! A test that cannot make its fault or find its input here: it says so on stderr (which the
//! harness shows even for a passing test) and is counted: each skip is appended to the file named
//! by `FPDB_SKIP_LOG`, which scripts/test.sh sets and prints at the end as "N test(s) SKIPPED".

/// Records that `test` did not run, and why.
pub fn skipped(test: &str, why: &str) {
    let msg = format!("SKIPPED {test}: {why}");
    eprintln!("{msg}");
    if let Some(path) = std::env::var_os("FPDB_SKIP_LOG") {
        use std::io::Write as _;
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
            let _ = writeln!(f, "{msg}");
        }
    }
}
