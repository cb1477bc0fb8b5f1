//! The method indexes against brute force: random sketches with planted neighbours at every
//! distance, every threshold of every rule, in memory and in RocksDB, before and after removals.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rocksdb::{Options, DB};

use super::*;
use crate::fingerprint::method::{BroderParams, CharikarParams, LexiconParams};
use crate::store::keys::mindex_key;

type R = rand::rngs::StdRng;

fn flip(rng: &mut R, v: &mut [u64], bits: u32, d: u32) {
    // d distinct bits.
    let mut done = Vec::new();
    while done.len() < d as usize {
        let b = rng.gen_range(0..bits);
        if !done.contains(&b) {
            done.push(b);
            v[(b / 64) as usize] ^= 1 << (b % 64);
        }
    }
}

/// Sketches of `method`: `n` random ones, then variants of half of them at distances 0..=max_d
/// (bit vectors) or with some positions changed (supershingles from a small alphabet, so every
/// B-similarity occurs).
fn sketches(method: &Method, seed: u64, n: usize, max_d: u32) -> Vec<Vec<u64>> {
    let mut rng = R::seed_from_u64(seed);
    let ss = |rng: &mut R, m: usize| -> Vec<u64> { (0..m).map(|_| rng.gen_range(0..3u64)).collect() };
    let mut out: Vec<Vec<u64>> = Vec::new();
    for _ in 0..n {
        out.push(match method {
            Method::Broder(b) => ss(&mut rng, b.supershingles as usize),
            Method::Charikar(c) => (0..c.bits / 64).map(|_| rng.gen()).collect(),
            Method::BroderCharikar(b, c) => {
                let mut v = ss(&mut rng, b.supershingles as usize);
                v.extend((0..c.bits / 64).map(|_| rng.gen::<u64>()));
                v
            }
            Method::MultiLexicon(l) => {
                let mut v = vec![rng.gen::<u64>() & ((1 << l.lexicons) - 1)];
                v.extend((0..l.lexicons).map(|_| rng.gen::<u64>()));
                v
            }
            _ => unreachable!(),
        });
    }
    for i in 0..n / 2 {
        let mut v = out[i].clone();
        let d = rng.gen_range(0..=max_d);
        match method {
            Method::Broder(_) => {
                for x in v.iter_mut() {
                    if rng.gen_bool(0.3) {
                        *x = rng.gen_range(0..3);
                    }
                }
            }
            Method::Charikar(c) => flip(&mut rng, &mut v, c.bits, d),
            Method::BroderCharikar(b, c) => {
                let n = b.supershingles as usize;
                for x in v[..n].iter_mut() {
                    if rng.gen_bool(0.3) {
                        *x = rng.gen_range(0..3);
                    }
                }
                flip(&mut rng, &mut v[n..], c.bits, d);
            }
            Method::MultiLexicon(l) => {
                let j = rng.gen_range(0..l.lexicons as usize);
                flip(&mut rng, &mut v[1 + j..2 + j], 64, d);
                if rng.gen_bool(0.2) {
                    v[0] ^= 1 << rng.gen_range(0..l.lexicons);
                }
            }
            _ => unreachable!(),
        }
        out.push(v);
    }
    out
}

fn mem(index: &MethodIndex, sk: &[Vec<u64>]) -> MemBuckets {
    let mut b = MemBuckets::new(index.clone());
    for (i, s) in sk.iter().enumerate() {
        b.insert(i as u64, s);
    }
    b
}

fn rocks(dir: &Path, index: &MethodIndex, sk: &[Vec<u64>]) -> DB {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    let db = DB::open_cf(&o, dir, ["mindex"]).unwrap();
    let cf = db.cf_handle("mindex").unwrap();
    for (i, s) in sk.iter().enumerate() {
        index.entries(s, &mut |t, v| db.put_cf(cf, mindex_key(t, v, i as u64), []).unwrap());
    }
    db
}

fn run<B: BucketIndex>(index: &MethodIndex, b: &B, sk: &[Vec<u64>], live: &[bool], q: &[u64], rule: Rule) -> Vec<(u64, MethodScore)> {
    let mut got = Vec::new();
    search(
        index,
        b,
        q,
        rule,
        live.iter().filter(|&&l| l).count() as u64,
        |id| live[id as usize].then(|| sk[id as usize].as_slice()),
        (0..sk.len() as u64).filter(|&i| live[i as usize]),
        |id, s| got.push((id, s)),
    )
    .unwrap();
    got
}

fn brute(index: &MethodIndex, sk: &[Vec<u64>], live: &[bool], q: &[u64], rule: Rule) -> Vec<(u64, MethodScore)> {
    (0..sk.len())
        .filter(|&i| live[i])
        .map(|i| (i as u64, index.compare(q, &sk[i])))
        .filter(|(_, s)| s.satisfies(rule))
        .collect()
}

/// Every rule of the method: (k, s) pairs covering the whole threshold range.
fn rules(method: &Method) -> Vec<Rule> {
    match method {
        Method::Broder(b) => (0..=b.supershingles)
            .map(|s| Rule {
                max_distance: 0,
                min_shared: s,
            })
            .collect(),
        Method::BroderCharikar(b, _) => (0..=b.supershingles)
            .flat_map(|s| {
                [0, 12, 29, 40].map(|k| Rule {
                    max_distance: k,
                    min_shared: s,
                })
            })
            .collect(),
        _ => (0..=16)
            .map(|k| Rule {
                max_distance: k,
                min_shared: 1,
            })
            .collect(),
    }
}

fn assert_exact<B: BucketIndex>(index: &MethodIndex, b: &B, sk: &[Vec<u64>], live: &[bool], what: &str) {
    for rule in rules(index.method()) {
        for q in sk.iter().step_by(5) {
            let got = run(index, b, sk, live, q, rule);
            let ids: Vec<u64> = got.iter().map(|g| g.0).collect();
            let mut uniq = ids.clone();
            uniq.dedup();
            assert_eq!(ids, uniq, "{what}: a document reported twice");
            assert_eq!(got, brute(index, sk, live, q, rule), "{what}: {rule:?}");
        }
    }
}

fn methods() -> Vec<Method> {
    vec![
        Method::Broder(BroderParams::default()),
        Method::Charikar(CharikarParams::default()),
        Method::BroderCharikar(BroderParams::default(), CharikarParams::default()),
        Method::MultiLexicon(LexiconParams::default()),
        Method::MultiLexicon(LexiconParams {
            lexicons: 3,
            ..LexiconParams::default()
        }),
    ]
}

#[test]
fn every_method_index_is_exact_in_memory_and_in_rocksdb() {
    for (n, method) in methods().into_iter().enumerate() {
        for tables in [3, 5, 13] {
            let Some(index) = MethodIndex::new(&method, tables) else { continue };
            let sk = sketches(&method, 100 + n as u64, 160, 18);
            let live = vec![true; sk.len()];
            assert_exact(&index, &mem(&index, &sk), &sk, &live, &format!("{} mem m={tables}", method.name()));
            let dir = tempfile::tempdir().unwrap();
            let db = rocks(dir.path(), &index, &sk);
            let rb = RocksBuckets {
                db: &db,
                cf: db.cf_handle("mindex").unwrap(),
                path: dir.path(),
            };
            assert_exact(&index, &rb, &sk, &live, &format!("{} rocks m={tables}", method.name()));
            if !matches!(method, Method::MultiLexicon(_)) {
                break; // the table count only shapes the lexicon layouts
            }
        }
    }
}

#[test]
fn removals_keep_the_mirror_exact() {
    for method in methods() {
        let index = MethodIndex::new(&method, 5).unwrap();
        let sk = sketches(&method, 7, 120, 16);
        let mut b = mem(&index, &sk);
        let mut live = vec![true; sk.len()];
        for i in (0..sk.len()).step_by(3) {
            b.remove(i as u64, &sk[i]);
            live[i] = false;
        }
        assert_exact(&index, &b, &sk, &live, &format!("{} after removals", method.name()));
        let mut want = 0;
        for (_, s) in sk.iter().enumerate().filter(|(i, _)| live[*i]) {
            index.entries(s, &mut |_, _| want += 1);
        }
        assert_eq!(b.entries(), want, "{}: removed documents leave no bucket entry", method.name());
    }
}

/// The pair the paper's 12 × 32-bit pieces miss: 12 differing bits, one in each piece.
#[test]
fn charikar_finds_pairs_at_exactly_twelve_bits_that_twelve_pieces_miss() {
    let method = Method::Charikar(CharikarParams::default());
    let index = MethodIndex::new(&method, 5).unwrap();
    let a = vec![0x0123_4567_89AB_CDEFu64, 1, 2, 3, 4, 5];
    let mut b = a.clone();
    for piece in 0..12u32 {
        let bit = piece * 32 + 7;
        b[(bit / 64) as usize] ^= 1 << (bit % 64);
    }
    let sk = vec![a.clone(), b];
    let live = [true, true];
    let rule = Rule {
        max_distance: 12,
        min_shared: 1,
    };
    let got = run(&index, &mem(&index, &sk), &sk, &live, &a, rule);
    assert_eq!(
        got,
        vec![
            (0, MethodScore::Projection { agree: 384, bits: 384 }),
            (1, MethodScore::Projection { agree: 372, bits: 384 })
        ]
    );
    // Every 32-bit piece differs, so no piece of the paper's scheme would bring the pair together.
    let pieces = |v: &[u64]| (0..12).map(|p| (v[p / 2] >> (32 * (p % 2))) as u32).collect::<Vec<_>>();
    assert!(pieces(&sk[0]).iter().zip(pieces(&sk[1])).all(|(x, y)| *x != y));
}

proptest! {
    #[test]
    fn charikar_at_every_threshold_up_to_twelve_matches_brute_force(seed in any::<u64>(), k in 0u32..=12) {
        let method = Method::Charikar(CharikarParams::default());
        let index = MethodIndex::new(&method, 5).unwrap();
        let sk = sketches(&method, seed, 40, 14);
        let live = vec![true; sk.len()];
        let b = mem(&index, &sk);
        let rule = Rule { max_distance: k, min_shared: 1 };
        for q in &sk {
            prop_assert_eq!(run(&index, &b, &sk, &live, q, rule), brute(&index, &sk, &live, q, rule));
        }
    }

    #[test]
    fn broder_and_lexicons_match_brute_force(seed in any::<u64>(), s in 0u32..=6, k in 0u32..=14) {
        for method in [Method::Broder(BroderParams::default()), Method::MultiLexicon(LexiconParams::default())] {
            let index = MethodIndex::new(&method, 5).unwrap();
            let sk = sketches(&method, seed, 40, 14);
            let live = vec![true; sk.len()];
            let b = mem(&index, &sk);
            let rule = Rule { max_distance: k, min_shared: s };
            for q in &sk {
                prop_assert_eq!(run(&index, &b, &sk, &live, q, rule), brute(&index, &sk, &live, q, rule));
            }
        }
    }
}
