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
use crate::store::keys::{table_cf, table_key};

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
    }
}

fn mem(layout: &Layout, fps: &[u64]) -> MemTables {
    let mut t = MemTables::new(layout.clone());
    for (i, &fp) in fps.iter().enumerate() {
        t.insert(fp, i as u64);
    }
    t
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
        assert_exact(&mem(&layout, &fps), &fps, 12, "mirror");
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
fn the_csr_tables_are_exact_for_every_layout_and_k() {
    let fps = data(3, 300);
    for m in 3..=16 {
        let layout = Layout::new(m).unwrap();
        assert_exact(&CsrTables::new(fps.clone(), layout), &fps, 12, "csr");
    }
}

#[test]
fn removing_from_the_mirror_keeps_it_exact() {
    let mut fps = data(4, 200);
    let layout = Layout::new(5).unwrap();
    let mut t = mem(&layout, &fps);
    // Remove every third entry; mark it unreachable by moving it far away in the reference.
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    for i in (0..fps.len()).step_by(3) {
        t.remove(fps[i], i as u64);
        fps[i] = rng.gen();
        t.insert(fps[i], i as u64);
    }
    assert_eq!(t.len(), fps.len());
    assert_exact(&t, &fps, 12, "mirror after removals");
}

proptest! {
    #[test]
    fn every_implementation_agrees_with_brute_force(seed in any::<u64>(), m in 3u32..=12, k in 0u32..=14) {
        let fps = data(seed, 60);
        let layout = Layout::new(m).unwrap();
        let brute = |q: u64| -> Vec<u64> { (0..fps.len() as u64).filter(|&i| hamming(fps[i as usize], q) <= k).collect() };
        let m_t = mem(&layout, &fps);
        let c_t = CsrTables::new(fps.clone(), layout.clone());
        for &q in &fps[..10] {
            let mut a = Vec::new();
            probe(&m_t, q, k, &mut |id, _, _| a.push(id)).unwrap();
            let mut b = Vec::new();
            probe(&c_t, q, k, &mut |id, _, _| b.push(id)).unwrap();
            a.sort_unstable();
            b.sort_unstable();
            prop_assert_eq!(&a, &brute(q));
            prop_assert_eq!(&b, &brute(q));
        }
    }
}
