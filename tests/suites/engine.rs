//! The `engine` test binary: the library's tests that need no CLI and arm no failpoint. See
//! tests/suites/cli.rs for the grouping.

#[path = "../common/mod.rs"]
mod common;

#[path = "../containment.rs"]
mod containment;
#[path = "../corruption.rs"]
mod corruption;
#[path = "../decisions.rs"]
mod decisions;
#[path = "../engine.rs"]
mod engine;
#[path = "../fuzz_regressions.rs"]
mod fuzz_regressions;
#[path = "../golden.rs"]
mod golden;
#[path = "../listing.rs"]
mod listing;
#[path = "../metadata.rs"]
mod metadata;
#[path = "../methods.rs"]
mod methods;
#[path = "../normalizer.rs"]
mod normalizer;
#[path = "../text.rs"]
mod text;

/// With `autotests = false` Cargo builds only the test binaries Cargo.toml names: a new file in
/// tests/ that no suite includes would never run. Every tests/*.rs must be a module of a suite
/// (a `#[path = "../<file>"]` in tests/suites/) or a `[[test]]` of its own.
#[test]
fn every_test_file_is_in_a_suite() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let mut suites = String::new();
    for e in std::fs::read_dir(root.join("tests/suites")).unwrap() {
        suites += &std::fs::read_to_string(e.unwrap().path()).unwrap();
    }
    let mut orphans = Vec::new();
    for e in std::fs::read_dir(root.join("tests")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if !name.ends_with(".rs") {
            continue;
        }
        let in_suite = suites.contains(&format!("#[path = \"../{name}\"]"));
        let own = manifest.contains(&format!("path = \"tests/{name}\""));
        if !in_suite && !own {
            orphans.push(name);
        }
    }
    assert!(
        orphans.is_empty(),
        "test files in no suite (add them to tests/suites/*.rs): {orphans:?}"
    );
}
