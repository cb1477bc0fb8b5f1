//! All-pairs failure paths: a panicking worker must never shorten the result (the panic reaches the
//! caller with the worker's own payload; needs `--features failpoints`), and out-of-range options
//! are rejected before any work.

use fpdb::pairs::{pairs, PairsOptions};
use fpdb::{CreateOptions, Db};

/// 2,000 fingerprints in 1,000 pairs at distance 1.
#[cfg(feature = "failpoints")]
fn fps() -> Vec<u64> {
    (0..2000u64)
        .map(|i| (i / 2).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i & 1))
        .collect()
}

#[cfg(feature = "failpoints")]
fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[cfg(feature = "failpoints")]
#[test]
fn a_panicking_worker_panics_the_caller_instead_of_dropping_its_pairs() {
    use fpdb::failpoint;
    use fpdb::pairs::all_pairs_fps;
    use std::panic::{catch_unwind, AssertUnwindSafe};

    let fps = fps();
    let all = all_pairs_fps(&fps, 3, 4);
    assert!(all.len() >= 1000, "{}", all.len());
    // Each of the 4 workers of the first table, and one of a later table.
    for nth in [1, 2, 3, 4, 6] {
        failpoint::set("pairs.worker", nth);
        let r = catch_unwind(|| all_pairs_fps(&fps, 3, 4));
        failpoint::clear();
        match r {
            Ok(v) => panic!("worker {nth} panicked but the caller got {} of {} pairs", v.len(), all.len()),
            Err(p) => assert!(panic_message(p).contains("pairs.worker"), "worker {nth}"),
        }
    }
    // Disarmed, the same call is whole again.
    assert_eq!(all_pairs_fps(&fps, 3, 4), all);

    // Through the database API as well.
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    for i in 0..8 {
        db.insert(&format!("k{i}"), "the same words in the same order every time").unwrap();
    }
    let opts = PairsOptions {
        max_distance: 3,
        min_jaccard: None,
        threads: 2,
    };
    assert_eq!(pairs(&db, &opts).unwrap().pairs.len(), 28);
    failpoint::set("pairs.worker", 1);
    let r = catch_unwind(AssertUnwindSafe(|| pairs(&db, &opts)));
    failpoint::clear();
    assert!(r.is_err(), "the caller got {:?}", r.map(|p| p.map(|p| p.pairs.len())));
}

#[test]
fn pairs_rejects_distances_and_thresholds_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    for (k, t) in [
        (fpdb::db::MAX_DISTANCE + 1, None),
        (4_000_000_000, None),
        (3, Some(1.5)),
        (3, Some(f64::NAN)),
    ] {
        let opts = PairsOptions {
            max_distance: k,
            min_jaccard: t,
            threads: 1,
        };
        match pairs(&db, &opts) {
            Err(fpdb::Error::InvalidOption { .. }) => {}
            other => panic!("k = {k}, t = {t:?}: expected InvalidOption, got {:?}", other.map(|r| r.pairs.len())),
        }
    }
}
