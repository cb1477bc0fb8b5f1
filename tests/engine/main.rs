//! The `engine` test binary: the library's tests that need no CLI and arm no failpoint. See
//! cli/tests/cli/main.rs for the grouping.

#[path = "../common/mod.rs"]
mod common;

mod containment;
mod corruption;
mod decisions;
mod engine;
mod fuzz_regressions;
mod golden;
mod listing;
mod metadata;
mod methods;
mod normalizer;
mod text;

/// With `autotests = false` Cargo builds only the test binaries a manifest names: a test file that
/// no binary includes would never run. In each package with tests (this one, the library; `cli/`,
/// the `fpdb` executable's), every tests/*.rs is a `[[test]]` of its own; every tests/SUITE/*.rs is a
/// `mod` of its folder's main.rs, and every such folder a `[[test]]`.
#[test]
fn every_test_file_is_in_a_suite() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut orphans = Vec::new();
    for package in [root.to_path_buf(), root.join("cli")] {
        let manifest = std::fs::read_to_string(package.join("Cargo.toml")).unwrap();
        assert!(manifest.contains("autotests = false"), "{}: autotests", package.display());
        let at = package.strip_prefix(root).unwrap().join("tests");
        for e in std::fs::read_dir(package.join("tests")).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".rs") {
                if !manifest.contains(&format!("path = \"tests/{name}\"")) {
                    orphans.push(at.join(&name).display().to_string());
                }
                continue;
            }
            let main = path.join("main.rs");
            if !main.exists() {
                continue; // common/, support/, data/: the kit and the data, included by path
            }
            if !manifest.contains(&format!("path = \"tests/{name}/main.rs\"")) {
                orphans.push(at.join(&name).join("main.rs").display().to_string());
            }
            let suite = std::fs::read_to_string(&main).unwrap();
            for m in std::fs::read_dir(&path).unwrap() {
                let file = m.unwrap().file_name().to_string_lossy().into_owned();
                let Some(module) = file.strip_suffix(".rs") else { continue };
                if module != "main" && !suite.lines().any(|l| l.trim() == format!("mod {module};")) {
                    orphans.push(at.join(&name).join(&file).display().to_string());
                }
            }
        }
    }
    assert!(
        orphans.is_empty(),
        "test files in no test binary (a `mod` line in their folder's main.rs, or a [[test]] in their Cargo.toml): {orphans:?}"
    );
}
