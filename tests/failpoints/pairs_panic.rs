//! All-pairs failure paths: a panicking worker must never shorten the result (it surfaces as
//! `Error::Panicked` carrying the worker's message; needs `--features failpoints`), and
//! out-of-range options are rejected before any work.

use fpdb::{pairs, PairsOptions};
use fpdb::{CreateOptions, Db};

/// 2,000 fingerprints in 1,000 pairs at distance 1.
#[cfg(feature = "failpoints")]
fn fps() -> Vec<u64> {
    (0..2000u64)
        .map(|i| (i / 2).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i & 1))
        .collect()
}

#[cfg(feature = "failpoints")]
#[test]
fn a_panicking_worker_is_an_error_never_a_shorter_result() {
    // Failpoints are process-wide: hold the `failpoints` suite's one lock.
    let _g = crate::SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    use fpdb::{all_pairs_fps, failpoint, Error};

    let fps = fps();
    let all = all_pairs_fps(&fps, 3, 4).unwrap();
    assert!(all.len() >= 1000, "{}", all.len());
    // Each of the 4 workers of the first table, and one of a later table.
    for nth in [1, 2, 3, 4, 6] {
        failpoint::set("pairs.worker", nth);
        let r = all_pairs_fps(&fps, 3, 4);
        failpoint::clear();
        match r {
            Ok(v) => panic!("worker {nth} panicked but the caller got {} of {} pairs", v.len(), all.len()),
            Err(Error::Panicked { stage, message }) => {
                assert_eq!(stage, "pairs worker");
                assert!(message.contains("pairs.worker"), "worker {nth}: {message}");
            }
            Err(e) => panic!("worker {nth}: expected Error::Panicked, got {e}"),
        }
    }
    // Disarmed, the same call is whole again.
    assert_eq!(all_pairs_fps(&fps, 3, 4).unwrap(), all);

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
        min_shared: None,
    };
    assert_eq!(pairs(&db, &opts).unwrap().pairs.len(), 28);
    failpoint::set("pairs.worker", 1);
    let r = pairs(&db, &opts);
    failpoint::clear();
    assert!(
        matches!(r, Err(Error::Panicked { stage: "pairs worker", .. })),
        "the caller got {:?}",
        r.map(|p| p.pairs.len())
    );
}

#[test]
fn pairs_rejects_distances_and_thresholds_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    for (k, t) in [
        (fpdb::MAX_DISTANCE + 1, None),
        (4_000_000_000, None),
        (3, Some(1.5)),
        (3, Some(f64::NAN)),
    ] {
        let opts = PairsOptions {
            max_distance: k,
            min_jaccard: t,
            threads: 1,
            min_shared: None,
        };
        match pairs(&db, &opts) {
            Err(fpdb::Error::InvalidOption { .. }) => {}
            other => panic!("k = {k}, t = {t:?}: expected InvalidOption, got {:?}", other.map(|r| r.pairs.len())),
        }
    }
}
