//! One exactness suite, run over every [`TableIndex`] implementation (tantivy's pattern: one suite,
//! several storages): for random fingerprints with planted near neighbours, every layout `m` and
//! every `k`, [`probe`] reports exactly the brute-force set, each entry once.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rocksdb::{Options, DB};

use super::csr::CsrTables;
use super::mem::MemTables;
use super::rocks::RocksTables;
use super::*;
use crate::store::keys::{decode_table_key, table_cf, table_key, table_key_ord};

/// Random fingerprints plus variants of some of them at every distance up to 14.
fn data(seed: u64, n: usize) -> Vec<u64> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut fps: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
    for i in 0..n / 2 {
        let mut f = fps[i];
        for _ in 0..rng.gen_range(0..=14) {
            f ^= 1 << rng.gen_range(0..64);
        }
        fps.push(f);
    }
    fps
}

/// Checks `index` (holding `fps[i]` with id `i`) against brute force for `k = 0..=max_k`.
fn assert_exact<T: TableIndex>(index: &T, fps: &[u64], max_k: u32, what: &str) {
    for k in 0..=max_k {
        for &q in fps.iter().step_by(7).chain([0u64, u64::MAX].iter()) {
            let mut got = Vec::new();
            probe(index, q, k, &mut |id, fp, d| {
                assert_eq!(fp, fps[id as usize], "{what}: id and fingerprint disagree");
                assert_eq!(d, hamming(fp, q));
                got.push(id);
            })
            .unwrap();
            let n = got.len();
            got.sort_unstable();
            got.dedup();
            assert_eq!(
                n,
                got.len(),
                "{what}: m = {}, k = {k}: an entry was reported twice",
                index.layout().tables()
            );
            let want: Vec<u64> = (0..fps.len() as u64).filter(|&i| hamming(fps[i as usize], q) <= k).collect();
            assert_eq!(got, want, "{what}: m = {}, k = {k}, q = {q:#x}", index.layout().tables());
        }
        assert_many_exact(index, fps, k, what);
    }
}

/// Checks [`probe_many`] over a list of queries (repeats and far-off values included) against brute
/// force, query by query: every entry within `k` once, with its own fingerprint and distance.
fn assert_many_exact<T: TableIndex>(index: &T, fps: &[u64], k: u32, what: &str) {
    let qs: Vec<u64> = fps
        .iter()
        .step_by(5)
        .chain([0u64, u64::MAX, fps[0], fps[0]].iter())
        .copied()
        .collect();
    let mut got: Vec<Vec<u64>> = vec![Vec::new(); qs.len()];
    probe_many(index, &qs, k, &mut |i, id, fp, d| {
        assert_eq!(fp, fps[id as usize], "{what}: id and fingerprint disagree (batched)");
        assert_eq!(d, hamming(fp, qs[i]), "{what}: distance (batched)");
        got[i].push(id);
    })
    .unwrap();
    for (i, &q) in qs.iter().enumerate() {
        let mut g = got[i].clone();
        let n = g.len();
        g.sort_unstable();
        g.dedup();
        assert_eq!(
            n,
            g.len(),
            "{what}: m = {}, k = {k}: an entry was reported twice (batched)",
            index.layout().tables()
        );
        let want: Vec<u64> = (0..fps.len() as u64).filter(|&j| hamming(fps[j as usize], q) <= k).collect();
        assert_eq!(g, want, "{what}: m = {}, k = {k}, q = {q:#x} (batched)", index.layout().tables());
    }
}

/// Checks the mirror's search split in two — the mutable delta (`probe_many_delta`) and the sealed
/// runs taken at the same moment (`sealed().probe_many`, dead entries included) — against brute
/// force once the caller's liveness filter is applied: an entry is live when `fps[id]` is its
/// fingerprint (removed ids and replaced fingerprints are not).
fn assert_split_exact(t: &MemTables, fps: &[u64], k: u32, what: &str) {
    let qs: Vec<u64> = fps.iter().step_by(5).chain([0u64, fps[0]].iter()).copied().collect();
    let mut got: Vec<Vec<u64>> = vec![Vec::new(); qs.len()];
    let mut keep = |i: usize, id: u64, fp: u64, d: u32| {
        assert_eq!(d, hamming(fp, qs[i]), "{what}: distance (split)");
        if fps.get(id as usize) == Some(&fp) {
            got[i].push(id);
        }
    };
    // One set of probe lists for both, as the ingest workers use them.
    let mut lists = ProbeLists::new(qs.clone(), k);
    t.probe_many_delta(&mut lists, &mut keep);
    t.sealed().probe_many_lists(&mut lists, &mut keep);
    for (i, &q) in qs.iter().enumerate() {
        let mut g = got[i].clone();
        g.sort_unstable();
        let want: Vec<u64> = (0..fps.len() as u64).filter(|&j| hamming(fps[j as usize], q) <= k).collect();
        assert_eq!(g, want, "{what}: k = {k}, q = {q:#x} (delta + sealed runs)");
    }
}

#[test]
fn the_batched_search_is_exact_where_it_visits_buckets() {
    // Large enough that the probes do not exceed the entries (no scan fallback) for these layouts
    // at k <= 12, so every bucket-ordered path runs: the base run (whole-block and shared offset
    // ranges), the delta and a base with a delta and removals.
    let fps = data(7, 6000);
    // m = 3: blocks of 21-22 bits, the delta's hashed buckets; the others are direct arrays.
    for m in [3, 4, 5, 6, 9, 13] {
        let layout = Layout::new(m).unwrap();
        for (t, what) in mems(&layout, &fps) {
            for k in [0, 3, 8, 12] {
                assert_many_exact(&t, &fps, k, what);
                assert_split_exact(&t, &fps, k, what);
            }
        }
        let csr = CsrTables::new(fps.clone(), layout.clone());
        let narrow = CsrTables::with_index_bits(fps.clone(), layout.clone(), 6);
        for k in [0, 5, 12] {
            assert_many_exact(&csr, &fps, k, "csr");
            assert_many_exact(&narrow, &fps, k, "csr, shared offset ranges");
        }
    }
}

/// The mirror holding `fps[i]` with id `i`, in each of its shapes: every entry in the delta, every
/// entry in one base run, and a base run of the first half with the rest in the delta.
fn mems(layout: &Layout, fps: &[u64]) -> [(MemTables, &'static str); 3] {
    let mut delta = MemTables::new(layout.clone());
    for (i, &fp) in fps.iter().enumerate() {
        delta.insert(fp, i as u64);
    }
    let base = MemTables::from_entries(layout.clone(), fps.iter().enumerate().map(|(i, &fp)| (fp, i as u64)));
    let half = fps.len() / 2;
    let mut mixed = MemTables::from_entries(layout.clone(), fps[..half].iter().enumerate().map(|(i, &fp)| (fp, i as u64)));
    for (i, &fp) in fps.iter().enumerate().skip(half) {
        mixed.insert(fp, i as u64);
    }
    [(delta, "mirror delta"), (base, "mirror base"), (mixed, "mirror base + delta")]
}

fn rocks(dir: &std::path::Path, layout: &Layout, fps: &[u64]) -> DB {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    let names: Vec<String> = (0..layout.tables() as usize).map(|i| table_cf(0, i)).collect();
    let db = DB::open_cf(&o, dir, &names).unwrap();
    for i in 0..layout.tables() as usize {
        let cf = db.cf_handle(&table_cf(0, i)).unwrap();
        for (id, &fp) in fps.iter().enumerate() {
            db.put_cf(cf, table_key(layout, i, fp, id as u64), []).unwrap();
        }
    }
    db
}

#[test]
fn the_mirror_is_exact_for_every_layout_and_k() {
    let fps = data(1, 300);
    for m in 1..=16 {
        let layout = Layout::new(m).unwrap();
        for (t, what) in mems(&layout, &fps) {
            assert_eq!(t.len(), fps.len(), "{what}");
            assert_exact(&t, &fps, 12, what);
        }
    }
}

#[test]
fn the_rocksdb_tables_are_exact_for_every_layout_and_k() {
    let fps = data(2, 300);
    for m in [1, 2, 3, 4, 5, 6, 9, 13, 16] {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(m).unwrap();
        let db = rocks(dir.path(), &layout, &fps);
        let tables = RocksTables {
            db: &db,
            path: dir.path(),
            layout: &layout,
            cfs: (0..m as usize).map(|i| db.cf_handle(&table_cf(0, i)).unwrap()).collect(),
            len: fps.len() as u64,
        };
        assert_exact(&tables, &fps, 12, "rocksdb");
    }
}

#[test]
fn csr_tables_in_huge_page_maps_are_exact() {
    // 525,000 fingerprints: each table's fingerprint array (4.2 MB) and, at m = 3, its offsets
    // (2^22 + 1 entries) are large enough for `HugeBuf` to map them; the search over them must be
    // the brute-force set, one query at a time and batched.
    let fps = data(11, 350_000);
    let qs: Vec<u64> = fps.iter().step_by(8_203).chain([0u64, u64::MAX].iter()).copied().collect();
    for m in [3, 5] {
        let csr = CsrTables::new(fps.clone(), Layout::new(m).unwrap());
        assert!(csr.mapped_arrays() >= m as usize, "m = {m}: {} mapped arrays", csr.mapped_arrays());
        for k in [0, 4, 12] {
            let mut many: Vec<Vec<u64>> = vec![Vec::new(); qs.len()];
            probe_many(&csr, &qs, k, &mut |i, id, fp, d| {
                assert_eq!((fp, d), (fps[id as usize], hamming(fp, qs[i])));
                many[i].push(id);
            })
            .unwrap();
            for (i, &q) in qs.iter().enumerate() {
                let mut one = Vec::new();
                probe(&csr, q, k, &mut |id, fp, _| {
                    assert_eq!(fp, fps[id as usize]);
                    one.push(id);
                })
                .unwrap();
                one.sort_unstable();
                many[i].sort_unstable();
                let want: Vec<u64> = (0..fps.len() as u64).filter(|&j| hamming(fps[j as usize], q) <= k).collect();
                assert_eq!(one, want, "m = {m}, k = {k}, q = {q:#x}");
                assert_eq!(many[i], want, "m = {m}, k = {k}, q = {q:#x} (batched)");
            }
        }
    }
}

#[test]
fn the_csr_tables_are_exact_for_every_layout_and_k() {
    let fps = data(3, 300);
    for m in 3..=16 {
        let layout = Layout::new(m).unwrap();
        assert_exact(&CsrTables::new(fps.clone(), layout.clone()), &fps, 12, "csr");
        assert_exact(&CsrTables::with_index_bits(fps.clone(), layout, 4), &fps, 12, "csr, 4 indexed bits");
    }
}

#[test]
fn removing_from_the_mirror_keeps_it_exact() {
    let fps0 = data(4, 200);
    let layout = Layout::new(5).unwrap();
    for (mut t, what) in mems(&layout, &fps0) {
        let mut fps = fps0.clone();
        // Replace every third entry by a random one (removed from the base or the delta, re-added
        // to the delta); removing an absent entry changes nothing.
        let mut rng = rand::rngs::StdRng::seed_from_u64(9);
        for i in (0..fps.len()).step_by(3) {
            t.remove(fps[i], i as u64);
            t.remove(fps[i], i as u64);
            t.remove(fps[i] ^ 1, i as u64);
            fps[i] = rng.gen();
            t.insert(fps[i], i as u64);
        }
        assert_eq!(t.len(), fps.len(), "{what}");
        assert_exact(&t, &fps, 12, what);
        // Merged into one run: the same entries, dead ones gone.
        let run = t.start_merge_now().unwrap().run();
        assert!(t.finish_merge(run), "{what}: the run of this merge is installed");
        assert_eq!(t.len(), fps.len(), "{what} merged");
        assert_exact(&t, &fps, 12, "merged");
    }
}

#[test]
fn changes_made_while_a_merge_runs_are_kept() {
    // A base of the first half, the rest in the delta; a merge starts (the delta freezes); then
    // inserts, removals from the base, from the frozen delta and from the new delta, and
    // re-inserts of removed ids with new fingerprints, all while the job "runs"; every state must
    // answer exactly, and so must the installed result.
    let mut fps = data(5, 400);
    let layout = Layout::new(6).unwrap();
    let half = fps.len() / 2;
    let mut t = MemTables::from_entries(layout.clone(), fps[..half].iter().enumerate().map(|(i, &fp)| (fp, i as u64)));
    for (i, &fp) in fps.iter().enumerate().skip(half) {
        t.insert(fp, i as u64);
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    // Document J (in the base, untouched below) gets a second fingerprint before the freeze.
    const J: usize = 2;
    let fp2: u64 = rng.gen();
    t.remove(fps[J], J as u64);
    t.insert(fp2, J as u64);
    let job = t.start_merge_now().unwrap();
    assert!(t.start_merge_now().is_none(), "one merge at a time");
    // Removals from the base (ids < half) and from the frozen delta (ids >= half), then new
    // fingerprints for them in the new delta.
    for i in (0..fps.len()).step_by(4) {
        t.remove(fps[i], i as u64);
        fps[i] = rng.gen();
        t.insert(fps[i], i as u64);
    }
    // Removed again from the new delta, and re-inserted once more.
    for i in (0..fps.len()).step_by(8) {
        t.remove(fps[i], i as u64);
        fps[i] = rng.gen();
        t.insert(fps[i], i as u64);
    }
    // The same id twice across the freeze: (fp1, j) dead in the base, then (fp2, j) removed from
    // the frozen delta; neither may come back.
    t.remove(fp2, J as u64);
    fps[J] = rng.gen();
    t.insert(fps[J], J as u64);
    let extra: Vec<u64> = (0..50).map(|_| rng.gen()).collect();
    for (j, &fp) in extra.iter().enumerate() {
        t.insert(fp, (fps.len() + j) as u64);
    }
    fps.extend(&extra);
    assert_eq!(t.len(), fps.len());
    assert_exact(&t, &fps, 12, "during the merge");
    for k in [4, 8, 12] {
        assert_split_exact(&t, &fps, k, "during the merge");
    }
    // A run from other tables is refused.
    let mut other = MemTables::new(layout);
    other.insert(1, 1);
    let foreign = other.start_merge_now().unwrap().run();
    assert!(!t.finish_merge(foreign));
    assert!(t.finish_merge(job.run()));
    assert_eq!(t.len(), fps.len());
    assert_exact(&t, &fps, 12, "after the merge");
    // The removals made during the merge stay removed through the next one.
    let run = t.start_merge_now().unwrap().run();
    assert!(t.finish_merge(run));
    assert_exact(&t, &fps, 12, "after a second merge");
}

#[test]
fn an_abandoned_merge_gives_its_entries_back() {
    let mut fps = data(8, 300);
    let layout = Layout::new(5).unwrap();
    let mut t = MemTables::new(layout);
    for (i, &fp) in fps.iter().enumerate() {
        t.insert(fp, i as u64);
    }
    let job = t.start_merge_now().unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(8);
    for i in (0..fps.len()).step_by(3) {
        t.remove(fps[i], i as u64);
        fps[i] = rng.gen();
        t.insert(fps[i], i as u64);
    }
    drop(job);
    t.abandon_merge();
    assert_eq!(t.len(), fps.len());
    assert_exact(&t, &fps, 12, "after an abandoned merge");
    assert!(t.start_merge_now().is_some(), "a new merge can start");
}

#[test]
fn removals_alone_make_a_merge_due() {
    let fps = data(7, 20_000);
    let layout = Layout::new(5).unwrap();
    let mut t = MemTables::from_entries(layout, fps.iter().enumerate().map(|(i, &fp)| (fp, i as u64)));
    let mut removed = 0;
    while !t.merge_due() {
        t.remove(fps[removed], removed as u64);
        removed += 1;
        assert!(removed < fps.len() / 4, "{removed} removals and no merge due");
    }
    assert!(removed > fps.len() / 10, "due after only {removed} removals");
    let run = t.start_merge().unwrap().run();
    assert!(t.finish_merge(run));
    assert_eq!(t.len(), fps.len() - removed);
    assert!(!t.merge_due());
    assert_exact_live(&t, &fps, removed);
}

/// `t` holds `fps[i]` with id `i` for every `i >= removed`: brute force at k = 6.
fn assert_exact_live(t: &MemTables, fps: &[u64], removed: usize) {
    for &q in fps.iter().step_by(101) {
        let mut got = Vec::new();
        t.probe(q, 6, |id, _, _| got.push(id));
        got.sort_unstable();
        let want: Vec<u64> = (removed as u64..fps.len() as u64)
            .filter(|&i| hamming(fps[i as usize], q) <= 6)
            .collect();
        assert_eq!(got, want);
    }
}

#[test]
fn the_mirror_merges_its_delta_when_due_and_stays_exact() {
    let fps = data(6, 12_000);
    let layout = Layout::new(7).unwrap();
    let mut t = MemTables::new(layout);
    let mut merges = 0;
    for (i, &fp) in fps.iter().enumerate() {
        t.insert(fp, i as u64);
        if let Some(job) = t.start_merge() {
            merges += 1;
            assert!(t.finish_merge(job.run()));
            assert!(!t.merge_due());
        }
    }
    assert!(merges >= 2, "{merges} merges over {} inserts", fps.len());
    assert_eq!(t.len(), fps.len());
    for &q in fps.iter().step_by(97) {
        let mut got = Vec::new();
        t.probe(q, 10, |id, _, _| got.push(id));
        got.sort_unstable();
        let want: Vec<u64> = (0..fps.len() as u64).filter(|&i| hamming(fps[i as usize], q) <= 10).collect();
        assert_eq!(got, want);
    }
}

proptest! {
    #[test]
    fn every_implementation_agrees_with_brute_force(seed in any::<u64>(), m in 3u32..=12, k in 0u32..=14) {
        let fps = data(seed, 60);
        let layout = Layout::new(m).unwrap();
        let brute = |q: u64| -> Vec<u64> { (0..fps.len() as u64).filter(|&i| hamming(fps[i as usize], q) <= k).collect() };
        let [(d_t, _), (b_t, _), (x_t, _)] = mems(&layout, &fps);
        let c_t = CsrTables::new(fps.clone(), layout.clone());
        // Few indexed bits: several block values per offset range.
        let p_t = CsrTables::with_index_bits(fps.clone(), layout.clone(), 3);
        fn ids<T: TableIndex>(index: &T, q: u64, k: u32) -> Vec<u64> {
            let mut a = Vec::new();
            probe(index, q, k, &mut |id, _, _| a.push(id)).unwrap();
            a.sort_unstable();
            a
        }
        for &q in &fps[..10] {
            prop_assert_eq!(ids(&d_t, q, k), brute(q));
            prop_assert_eq!(ids(&b_t, q, k), brute(q));
            prop_assert_eq!(ids(&x_t, q, k), brute(q));
            prop_assert_eq!(ids(&c_t, q, k), brute(q));
            prop_assert_eq!(ids(&p_t, q, k), brute(q));
        }
    }
}

/// Checks [`probe_split`] against brute force: every entry within `k`, each exactly once, with the
/// probed buckets cut into `threads` parts.
fn assert_threads_exact<T: TableIndex + Sync>(index: &T, fps: &[u64], k: u32, threads: usize, what: &str) {
    for &q in fps.iter().step_by(37).chain([0u64, u64::MAX].iter()) {
        let mut got = Vec::new();
        probe_split(index, q, k, threads, &mut |id, fp, d| {
            assert_eq!(fp, fps[id as usize], "{what}: id and fingerprint disagree (threads)");
            assert_eq!(d, hamming(fp, q), "{what}: distance (threads)");
            got.push(id);
        })
        .unwrap();
        let n = got.len();
        got.sort_unstable();
        got.dedup();
        assert_eq!(n, got.len(), "{what}: k = {k}, {threads} threads: an entry was reported twice");
        let want: Vec<u64> = (0..fps.len() as u64).filter(|&j| hamming(fps[j as usize], q) <= k).collect();
        assert_eq!(got, want, "{what}: k = {k}, {threads} threads, q = {q:#x}");
    }
}

/// Layouts with unequal blocks: the wider blocks take the larger radii (`Layout::plan`).
fn unequal_layouts() -> Vec<Layout> {
    [
        &[17, 16, 16, 15][..],
        &[14, 14, 14, 11, 11],
        &[14, 14, 14, 14, 8],
        &[19, 18, 18, 9],
        &[40, 24],
        &[3, 61],
    ]
    .iter()
    .map(|w| Layout::with_widths(w).unwrap())
    .collect()
}

#[test]
fn a_query_split_across_threads_is_exact_for_every_layout() {
    // 6,000 fingerprints: enough that the probes at k <= 12 do not exceed the entries for most of
    // these layouts (the bucket path runs); the others take the scan, which must agree too.
    let fps = data(13, 6000);
    let mut layouts: Vec<Layout> = [3, 4, 5, 6, 9].iter().map(|&m| Layout::new(m).unwrap()).collect();
    layouts.extend(unequal_layouts());
    for layout in &layouts {
        let widths: Vec<u32> = layout.blocks().iter().map(|b| b.width).collect();
        for (t, what) in mems(layout, &fps) {
            for k in [4, 12] {
                for threads in [2, 5] {
                    assert_threads_exact(&t, &fps, k, threads, &format!("{what}, widths {widths:?}"));
                }
            }
        }
        let csr = CsrTables::new(fps.clone(), layout.clone());
        assert_threads_exact(&csr, &fps, 12, 2, &format!("csr, widths {widths:?}"));
        // Without the pool (a forked child, or no threads to be had): the parts one after another.
        let mut got = Vec::new();
        for &q in fps.iter().step_by(97) {
            got.clear();
            probe_split_on(&csr, q, 12, 3, None, &mut |id, _, _| got.push(id)).unwrap();
            got.sort_unstable();
            let want: Vec<u64> = (0..fps.len() as u64).filter(|&j| hamming(fps[j as usize], q) <= 12).collect();
            assert_eq!(got, want, "csr without the pool, widths {widths:?}, q = {q:#x}");
        }
    }
}

#[test]
fn layouts_with_unequal_blocks_are_exact_in_every_storage() {
    let fps = data(17, 1500);
    for layout in unequal_layouts() {
        let widths: Vec<u32> = layout.blocks().iter().map(|b| b.width).collect();
        for (t, what) in mems(&layout, &fps) {
            assert_exact(&t, &fps, 12, &format!("{what}, widths {widths:?}"));
            assert_many_exact(&t, &fps, 12, &format!("{what}, widths {widths:?}"));
        }
        assert_exact(&CsrTables::new(fps.clone(), layout.clone()), &fps, 12, "csr");
    }
    // RocksDB seeks once per probed bucket: one layout, fewer documents.
    let fps = data(19, 600);
    let layout = Layout::with_widths(&[14, 14, 14, 11, 11]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = rocks(dir.path(), &layout, &fps);
    let tables = RocksTables {
        db: &db,
        path: dir.path(),
        layout: &layout,
        cfs: (0..layout.tables() as usize)
            .map(|i| db.cf_handle(&table_cf(0, i)).unwrap())
            .collect(),
        len: fps.len() as u64,
    };
    assert_exact(&tables, &fps, 12, "rocksdb, widths [14, 14, 14, 11, 11]");
}

// The table keys (`store::keys`) under the layouts' permutations.

proptest! {
    #[test]
    fn every_table_key_decodes_to_what_was_encoded(a in any::<u64>(), b in any::<u64>(), m in 1u32..=32) {
        let l = Layout::new(m).unwrap();
        for i in 0..m as usize {
            prop_assert_eq!(decode_table_key(&l, i, &table_key(&l, i, a, b)), Some((a, b)));
        }
    }

    /// The whole-file writers sort [`table_key_ord`] integers and write their big-endian
    /// bytes: those bytes are the key, and the integers sort as RocksDB sorts the keys.
    #[test]
    fn table_key_integers_sort_as_their_keys(fps in prop::collection::vec((any::<u64>(), any::<u64>()), 2..40), m in 1u32..=8) {
        let l = Layout::new(m).unwrap();
        for i in 0..m as usize {
            let mut ord: Vec<u128> = fps.iter().map(|&(fp, id)| table_key_ord(&l, i, fp, id)).collect();
            let mut bytes: Vec<[u8; 16]> = fps.iter().map(|&(fp, id)| table_key(&l, i, fp, id)).collect();
            ord.sort_unstable();
            bytes.sort_unstable();
            prop_assert_eq!(ord.iter().map(|k| k.to_be_bytes()).collect::<Vec<_>>(), bytes);
        }
    }
}

#[test]
fn table_keys_of_the_wrong_length_do_not_decode() {
    let l = Layout::new(5).unwrap();
    assert_eq!(decode_table_key(&l, 0, &[0; 17]), None);
}
