//! Tests of the evaluation module: hand-computed grids, the join against brute force, reports.

use super::*;

/// The crate's one Jaccard, as a plain number.
fn jaccard(a: &[u32], b: &[u32]) -> f64 {
    crate::fingerprint::similarity::jaccard(a, b).jaccard
}

/// splitmix64: a tiny deterministic generator (the module has no `rand`).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn set(v: &[u32]) -> Vec<u32> {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.dedup();
    v
}

fn doc(key: &str, label: Option<&str>, shingles: Vec<u32>, simhash: u64) -> EvalDoc {
    EvalDoc {
        key: key.to_string(),
        label: label.map(str::to_string),
        shingles,
        simhash,
    }
}

fn brute_join(sets: &[Vec<u32>], t: f64) -> Vec<(u32, u32, f64)> {
    let mut out = Vec::new();
    for i in 0..sets.len() {
        for j in i + 1..sets.len() {
            let jac = jaccard(&sets[i], &sets[j]);
            if jac > 0.0 && jac >= t {
                out.push((i as u32, j as u32, jac));
            }
        }
    }
    out
}

fn refs(sets: &[Vec<u32>]) -> Vec<&[u32]> {
    sets.iter().map(Vec::as_slice).collect()
}

// ---------------------------------------------------------------- jaccard, Confusion

#[test]
fn jaccard_of_hand_computed_sets() {
    assert_eq!(jaccard(&[1, 2, 3], &[2, 3, 4]), 0.5);
    assert_eq!(jaccard(&[1, 2, 3], &[1, 2, 3]), 1.0);
    assert_eq!(jaccard(&[1, 2], &[3, 4]), 0.0);
    assert_eq!(jaccard(&[1, 2, 3, 4], &[4]), 0.25);
    assert_eq!(jaccard(&[], &[1]), 0.0);
}

#[test]
fn jaccard_of_two_empty_sets_is_zero_by_convention() {
    assert_eq!(jaccard(&[], &[]), 0.0);
}

#[test]
fn confusion_zero_denominators_follow_the_documented_conventions() {
    let none = Confusion::default();
    assert_eq!((none.precision(), none.recall(), none.f1()), (1.0, 1.0, 1.0));
    let missed = Confusion { tp: 0, fp: 0, fn_: 3 };
    assert_eq!((missed.precision(), missed.recall(), missed.f1()), (1.0, 0.0, 0.0));
    let wrong = Confusion { tp: 0, fp: 2, fn_: 0 };
    assert_eq!((wrong.precision(), wrong.recall(), wrong.f1()), (0.0, 1.0, 0.0));
    let some = Confusion { tp: 2, fp: 2, fn_: 1 };
    assert_eq!(some.precision(), 0.5);
    assert_eq!(some.recall(), 2.0 / 3.0);
    assert_eq!(some.f1(), 4.0 / 7.0);
}

// ---------------------------------------------------------------- hand-computed grid

/// Four documents:
///
/// | doc | shingles           | simhash      | label |
/// |-----|--------------------|--------------|-------|
/// | A   | 1..=10             | 0            | x     |
/// | B   | 1..=9, 11          | 0b111        | x     |
/// | C   | 1..=10             | 0x3FF        | y     |
/// | D   | 1..=5, 20..=24     | 0b1          | none  |
///
/// Pairs (Jaccard, Hamming): AB (9/11, 3), AC (1, 10), AD (1/3, 1), BC (9/11, 7),
/// BD (1/3, 2), CD (1/3, 9). Truth at 0.8: AB, AC, BC.
fn four_docs() -> Vec<EvalDoc> {
    let a: Vec<u32> = (1..=10).collect();
    let b: Vec<u32> = (1..=9).chain([11]).collect();
    let d: Vec<u32> = (1..=5).chain(20..=24).collect();
    vec![
        doc("A", Some("x"), a.clone(), 0),
        doc("B", Some("x"), b, 0b111),
        doc("C", Some("y"), a, 0x3FF),
        doc("D", None, d, 0b1),
    ]
}

#[test]
fn four_docs_join_finds_the_hand_computed_pairs() {
    let docs = four_docs();
    let sets: Vec<&[u32]> = docs.iter().map(|d| d.shingles.as_slice()).collect();
    assert_eq!(
        jaccard_join(&sets, 0.3),
        vec![
            (0, 1, 9.0 / 11.0),
            (0, 2, 1.0),
            (0, 3, 1.0 / 3.0),
            (1, 2, 9.0 / 11.0),
            (1, 3, 1.0 / 3.0),
            (2, 3, 1.0 / 3.0),
        ]
    );
    assert_eq!(jaccard_join(&sets, 0.8), vec![(0, 1, 9.0 / 11.0), (0, 2, 1.0), (1, 2, 9.0 / 11.0)]);
    assert_eq!(jaccard_join(&sets, 0.9), vec![(0, 2, 1.0)]);
}

fn counts(r: &GridReport, k: u32, t: f64) -> Confusion {
    match r.cell(k, t) {
        Some(c) => c.score.counts,
        None => panic!("no cell ({k}, {t})"),
    }
}

#[test]
fn four_docs_grid_matches_hand_computed_confusions() {
    let r = evaluate(&four_docs(), 0.8, &[8, 2], &[0.9, 0.3, 0.8]);
    assert_eq!(r.ks, vec![2, 8]);
    assert_eq!(r.ts, vec![0.3, 0.8, 0.9]);
    assert_eq!(r.join_t, 0.3);
    assert_eq!(r.join_pairs, 6);
    assert_eq!(r.true_pairs, 3);
    assert_eq!(r.all_pairs, 6);

    // k = 2: predicted {AD, BD} at t = 0.3, nothing at t >= 0.8.
    assert_eq!(counts(&r, 2, 0.3), Confusion { tp: 0, fp: 2, fn_: 3 });
    assert_eq!(counts(&r, 2, 0.8), Confusion { tp: 0, fp: 0, fn_: 3 });
    assert_eq!(counts(&r, 2, 0.9), Confusion { tp: 0, fp: 0, fn_: 3 });
    // k = 8: {AB, AD, BD, BC} at 0.3; {AB, BC} at 0.8; nothing at 0.9 (AC is at Hamming 10).
    assert_eq!(counts(&r, 8, 0.3), Confusion { tp: 2, fp: 2, fn_: 1 });
    assert_eq!(counts(&r, 8, 0.8), Confusion { tp: 2, fp: 0, fn_: 1 });
    assert_eq!(counts(&r, 8, 0.9), Confusion { tp: 0, fp: 0, fn_: 3 });

    let c = r.cell(8, 0.3).map(|c| c.score);
    assert_eq!(c.map(|s| (s.precision, s.recall)), Some((0.5, 2.0 / 3.0)));
    assert_eq!(c.map(|s| s.f1), Some(4.0 / 7.0));
    let c = r.cell(8, 0.8).map(|c| c.score);
    assert_eq!(c.map(|s| (s.precision, s.recall, s.f1)), Some((1.0, 2.0 / 3.0, 0.8)));
    // Empty prediction: precision 1 by convention, recall 0, F1 0.
    let c = r.cell(2, 0.9).map(|c| c.score);
    assert_eq!(c.map(|s| (s.precision, s.recall, s.f1)), Some((1.0, 0.0, 0.0)));

    // Best: F1 4/5 at (8, 0.8).
    let best = r.best.map(|b| (b.k, b.t, b.score.f1));
    assert_eq!(best, Some((8, 0.8, 0.8)));
}

#[test]
fn four_docs_hamming_only_and_histograms_match_hand_computed() {
    let r = evaluate(&four_docs(), 0.8, &[2, 8], &[0.3, 0.8, 0.9]);
    // Hamming distances of all pairs: AD 1, BD 2, AB 3, BC 7, CD 9, AC 10.
    let mut all = vec![0u64; 65];
    for d in [1, 2, 3, 7, 9, 10] {
        all[d] = 1;
    }
    assert_eq!(r.all_hamming_hist, all);
    let mut tru = vec![0u64; 65];
    for d in [3, 7, 10] {
        tru[d] = 1;
    }
    assert_eq!(r.true_hamming_hist, tru);

    let k2 = r.hamming_row(2).map(|h| (h.pairs_within_k, h.score.counts));
    assert_eq!(k2, Some((2, Confusion { tp: 0, fp: 2, fn_: 3 })));
    let k8 = r.hamming_row(8).map(|h| (h.pairs_within_k, h.score.counts));
    assert_eq!(k8, Some((4, Confusion { tp: 2, fp: 2, fn_: 1 })));
    let p8 = r.hamming_row(8).map(|h| (h.score.precision, h.score.recall));
    assert_eq!(p8, Some((0.5, 2.0 / 3.0)));
}

#[test]
fn four_docs_label_scores_match_hand_computed() {
    let r = evaluate(&four_docs(), 0.8, &[2, 8], &[0.3, 0.8, 0.9]);
    let Some(l) = &r.labels else { panic!("labels expected") };
    // Labelled: A(x), B(x), C(y). Same-label pairs: AB only.
    assert_eq!((l.labelled_docs, l.distinct_labels, l.same_label_pairs), (3, 2, 1));
    // Jaccard-true pairs among labelled: AB (same), AC (different), BC (different).
    assert_eq!((l.same_label_true_pairs, l.different_label_true_pairs), (1, 2));
    let cell = |k: u32, t: f64| l.grid.iter().find(|c| c.k == k && c.t == t).map(|c| c.score.counts);
    // (8, 0.3): predicted AB, AD, BD, BC; AD and BD have an unlabelled side; AB same, BC not.
    assert_eq!(cell(8, 0.3), Some(Confusion { tp: 1, fp: 1, fn_: 0 }));
    // (2, 0.3): AD, BD only, both left out.
    assert_eq!(cell(2, 0.3), Some(Confusion { tp: 0, fp: 0, fn_: 1 }));
    assert_eq!(evaluate_labels(&four_docs(), 0.8, &[2, 8], &[0.3, 0.8, 0.9]).as_ref(), Some(l));
}

#[test]
fn evaluate_without_labels_has_no_label_report() {
    let mut docs = four_docs();
    for d in &mut docs {
        d.label = None;
    }
    let r = evaluate(&docs, 0.8, &[8], &[0.9]);
    assert!(r.labels.is_none());
}

#[test]
fn best_cell_breaks_ties_by_smaller_k_then_larger_t() {
    let cell = |k: u32, t: f64, tp: u64, fp: u64, fn_: u64| GridCell {
        k,
        t,
        score: Confusion { tp, fp, fn_ }.into(),
    };
    // All three have F1 = 2/3 (tp 1, fp 1, fn 0 → 2/3; tp 2, fp 1, fn 1 → 4/6).
    let grid = vec![cell(2, 0.5, 1, 1, 0), cell(2, 0.7, 2, 1, 1), cell(4, 0.9, 1, 1, 0)];
    assert_eq!(best_cell(&grid).map(|c| (c.k, c.t)), Some((2, 0.7)));
    let grid = vec![cell(4, 0.9, 1, 1, 0), cell(3, 0.5, 1, 1, 0)];
    assert_eq!(best_cell(&grid).map(|c| (c.k, c.t)), Some((3, 0.5)));
    // A strictly better F1 wins regardless of k.
    let grid = vec![cell(2, 0.9, 1, 1, 0), cell(9, 0.5, 5, 0, 1)];
    assert_eq!(best_cell(&grid).map(|c| (c.k, c.t)), Some((9, 0.5)));
    assert!(best_cell(&[]).is_none());
}

#[test]
fn verified_recall_equals_hamming_only_recall_when_t_is_at_most_truth_t() {
    let docs = random_docs(400, 11);
    let r = evaluate(&docs, 0.6, &[0, 3, 8, 16, 64], &[0.3, 0.6, 0.9]);
    assert!(r.true_pairs > 0, "generator should plant true pairs");
    for h in &r.hamming_only {
        for t in [0.3, 0.6] {
            let v = counts(&r, h.k, t);
            assert_eq!(v.tp, h.score.counts.tp, "k={} t={t}", h.k);
        }
        // k = 64 accepts every pair.
        if h.k == 64 {
            assert_eq!(h.pairs_within_k, r.all_pairs);
            assert_eq!(h.score.counts.fn_, 0);
        }
    }
}

/// Documents over a small vocabulary with planted near-duplicates (edited copies) whose
/// SimHash differs from the original in a few bits.
fn random_docs(n: usize, seed: u64) -> Vec<EvalDoc> {
    let mut rng = Rng(seed);
    let mut docs: Vec<EvalDoc> = Vec::with_capacity(n);
    for i in 0..n {
        let (shingles, simhash) = if i > 0 && rng.below(3) == 0 {
            let src = &docs[rng.below(i as u64) as usize];
            let mut v = src.shingles.clone();
            for _ in 0..rng.below(4) {
                if !v.is_empty() {
                    let at = rng.below(v.len() as u64) as usize;
                    v.remove(at);
                }
                v.push(rng.below(500) as u32);
            }
            let mut flip = 0u64;
            for _ in 0..rng.below(6) {
                flip |= 1 << rng.below(64);
            }
            (set(&v), src.simhash ^ flip)
        } else {
            let len = rng.below(30) as usize;
            let v: Vec<u32> = (0..len).map(|_| rng.below(500) as u32).collect();
            (set(&v), rng.next())
        };
        docs.push(doc(&format!("d{i}"), None, shingles, simhash));
    }
    docs
}

#[test]
fn grid_counts_match_a_brute_force_evaluation() {
    let docs = random_docs(300, 5);
    let ks = [0u32, 2, 5, 9, 20];
    let ts = [0.2, 0.5, 0.75, 1.0];
    let truth_t = 0.5;
    let r = evaluate(&docs, truth_t, &ks, &ts);
    for &k in &ks {
        for &t in &ts {
            let mut c = Confusion::default();
            for i in 0..docs.len() {
                for j in i + 1..docs.len() {
                    let jac = jaccard(&docs[i].shingles, &docs[j].shingles);
                    let truth = jac > 0.0 && jac >= truth_t;
                    let d = (docs[i].simhash ^ docs[j].simhash).count_ones();
                    let pred = d <= k && jac > 0.0 && jac >= t;
                    match (pred, truth) {
                        (true, true) => c.tp += 1,
                        (true, false) => c.fp += 1,
                        (false, true) => c.fn_ += 1,
                        (false, false) => {}
                    }
                }
            }
            assert_eq!(counts(&r, k, t), c, "k={k} t={t}");
        }
    }
}

// ---------------------------------------------------------------- join vs brute force

fn random_sets(rng: &mut Rng, n: usize, vocab: u64, max_len: u64) -> Vec<Vec<u32>> {
    let mut sets: Vec<Vec<u32>> = Vec::with_capacity(n);
    for i in 0..n {
        let v = match rng.below(10) {
            // Empty sets (never match anything, not even each other).
            0 => Vec::new(),
            // Identical copy of an earlier set.
            1 if i > 0 => sets[rng.below(i as u64) as usize].clone(),
            // Near-duplicate: an earlier set with a few edits.
            2 | 3 if i > 0 => {
                let mut v = sets[rng.below(i as u64) as usize].clone();
                for _ in 0..rng.below(3) + 1 {
                    if !v.is_empty() && rng.below(2) == 0 {
                        let at = rng.below(v.len() as u64) as usize;
                        v.remove(at);
                    } else {
                        v.push(rng.below(vocab) as u32);
                    }
                }
                set(&v)
            }
            _ => {
                let len = rng.below(max_len + 1) as usize;
                set(&(0..len).map(|_| rng.below(vocab) as u32).collect::<Vec<_>>())
            }
        };
        sets.push(v);
    }
    sets
}

const THRESHOLDS: [f64; 14] = [
    -0.5,
    0.0,
    0.05,
    0.1,
    0.25,
    1.0 / 3.0,
    0.5,
    0.6,
    2.0 / 3.0,
    0.75,
    0.8,
    0.9,
    0.95,
    1.0,
];

#[test]
fn join_equals_brute_force_on_random_sets() {
    let mut rng = Rng(42);
    for round in 0..6 {
        let vocab = [20, 60, 200, 1000, 40, 5000][round];
        let max_len = [8, 25, 40, 60, 3, 120][round];
        let sets = random_sets(&mut rng, 250, vocab, max_len);
        for &t in &THRESHOLDS {
            let want = brute_join(&sets, t);
            let got = jaccard_join(&refs(&sets), t);
            assert_eq!(got, want, "round {round} t={t}");
        }
    }
}

#[test]
fn join_equals_brute_force_on_larger_sets_with_skewed_tokens() {
    // Token frequencies skewed (squares of uniform values favour small tokens), so the global
    // ordering matters.
    let mut rng = Rng(7);
    let mut sets: Vec<Vec<u32>> = Vec::new();
    for i in 0..600 {
        if i % 5 == 4 {
            let mut v = sets[rng.below(i as u64) as usize].clone();
            for _ in 0..rng.below(20) {
                let at = rng.below(v.len().max(1) as u64) as usize;
                if at < v.len() {
                    v[at] = (rng.below(3000) * rng.below(3000) / 3000) as u32;
                }
            }
            sets.push(set(&v));
        } else {
            let len = 50 + rng.below(150) as usize;
            let v: Vec<u32> = (0..len).map(|_| (rng.below(3000) * rng.below(3000) / 3000) as u32).collect();
            sets.push(set(&v));
        }
    }
    for &t in &[0.3, 0.5, 0.7, 0.85, 0.9, 0.97] {
        let want = brute_join(&sets, t);
        let got = jaccard_join(&refs(&sets), t);
        assert_eq!(got, want, "t={t}");
    }
}

#[test]
fn join_result_does_not_depend_on_thread_count() {
    let mut rng = Rng(3);
    let sets = random_sets(&mut rng, 500, 300, 40);
    for &t in &[0.2, 0.5, 0.9] {
        let one = join::join_with_threads(&refs(&sets), t, 1);
        let three = join::join_with_threads(&refs(&sets), t, 3);
        assert_eq!(one, three, "t={t}");
        assert_eq!(one, brute_join(&sets, t), "t={t}");
    }
}

#[test]
fn join_edge_cases() {
    let empty: Vec<&[u32]> = Vec::new();
    assert!(jaccard_join(&empty, 0.5).is_empty());
    assert!(jaccard_join(&[&[1, 2, 3]], 0.5).is_empty());
    // Two empty sets: Jaccard 0 by convention, never reported.
    assert!(jaccard_join(&[&[], &[]], 0.0).is_empty());
    // Identical sets reach t = 1 exactly.
    assert_eq!(jaccard_join(&[&[1, 2], &[1, 2]], 1.0), vec![(0, 1, 1.0)]);
    // t above 1 or NaN: nothing.
    assert!(jaccard_join(&[&[1, 2], &[1, 2]], 1.5).is_empty());
    assert!(jaccard_join(&[&[1, 2], &[1, 2]], f64::NAN).is_empty());
    // Pair exactly at the threshold is kept (3/4 >= 0.75).
    assert_eq!(jaccard_join(&[&[1, 2, 3, 4], &[1, 2, 3]], 0.75), vec![(0, 1, 0.75)]);
    // Unsorted / duplicated input is treated as a set.
    assert_eq!(jaccard_join(&[&[3, 1, 2, 2], &[1, 2, 3]], 0.9), vec![(0, 1, 1.0)]);
}

// ---------------------------------------------------------------- Hamming histogram

#[test]
fn hamming_histogram_matches_naive_count() {
    let mut rng = Rng(9);
    for n in [0usize, 1, 2, 5, 67, 300] {
        // Some equal and some close fingerprints.
        let mut h: Vec<u64> = Vec::new();
        for i in 0..n {
            if i > 0 && rng.below(4) == 0 {
                let src = h[rng.below(i as u64) as usize];
                h.push(src ^ (1 << rng.below(64)));
            } else {
                h.push(rng.next());
            }
        }
        let mut want = vec![0u64; HAMMING_BINS];
        for i in 0..n {
            for j in i + 1..n {
                want[(h[i] ^ h[j]).count_ones() as usize] += 1;
            }
        }
        for threads in [1, 3] {
            assert_eq!(all_pairs_hamming_hist(&h, threads), want, "n={n} threads={threads}");
        }
    }
}

// ---------------------------------------------------------------- reports

/// Checks tags are balanced (a minimal well-formedness check: no parser in the dependencies).
fn assert_balanced_xml(s: &str) {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = s;
    while let Some(open) = rest.find('<') {
        let Some(close) = rest[open..].find('>') else {
            panic!("unterminated tag");
        };
        let tag = &rest[open + 1..open + close];
        rest = &rest[open + close + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name.trim()), "mismatched </{name}>");
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().unwrap_or("");
            stack.push(name.to_string());
        }
        assert!(!tag.contains('<'), "'<' inside a tag: {tag}");
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
}

#[test]
fn svg_is_well_formed_with_one_path_per_series() {
    let series = vec![
        ("precision <verified> & co", vec![(0.0, 1.0), (4.0, 0.9), (8.0, 0.5)]),
        ("recall", vec![(0.0, 0.1), (4.0, f64::NAN), (8.0, 0.99)]),
        ("empty", vec![]),
    ];
    let svg = svg_line_plot("P/R vs k: \"t\" < 1", "k", "value", &series);
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("<path").count(), 3);
    assert!(svg.contains("precision &lt;verified&gt; &amp; co"));
    assert!(svg.contains("P/R vs k: &quot;t&quot; &lt; 1"));
    // The NaN point breaks the recall line: two "M" moves and no "L".
    let recall_path = svg.lines().filter(|l| l.starts_with("<path")).nth(1).unwrap_or("");
    assert_eq!(recall_path.matches('M').count(), 2, "{recall_path}");
    assert!(!recall_path.contains('L'), "{recall_path}");
    assert!(!svg.contains("NaN"));
    // y in [0, 1]: the axis is 0..1 with ticks 0.0 .. 1.0.
    assert!(svg.contains(">0.0</text>") && svg.contains(">1.0</text>"));
    assert_balanced_xml(&svg);
}

#[test]
fn svg_handles_out_of_unit_values_and_no_series() {
    let svg = svg_line_plot("t", "x", "y", &[("a", vec![(1.0, 5.0), (2.0, 250.0)])]);
    assert_balanced_xml(&svg);
    assert_eq!(svg.matches("<path").count(), 1);
    assert!(svg.contains(">250</text>") || svg.contains(">300</text>"), "{svg}");
    let svg = svg_line_plot("t", "x", "y", &[]);
    assert_balanced_xml(&svg);
    assert_eq!(svg.matches("<path").count(), 0);
}

#[test]
fn report_plots_have_the_expected_series() {
    let r = evaluate(&four_docs(), 0.8, &[2, 8], &[0.3, 0.8, 0.9]);
    let Some(vs_k) = r.svg_vs_k("four", 0.9) else {
        panic!("t = 0.9 is in the grid")
    };
    assert_eq!(vs_k.matches("<path").count(), 4);
    assert_balanced_xml(&vs_k);
    let Some(vs_t) = r.svg_vs_t("four", 8) else {
        panic!("k = 8 is in the grid")
    };
    assert_eq!(vs_t.matches("<path").count(), 3);
    assert_balanced_xml(&vs_t);
    assert!(r.svg_vs_k("four", 0.5).is_none());
    assert!(r.svg_vs_t("four", 3).is_none());
}

#[test]
fn markdown_report_shows_the_hand_computed_rows() {
    let r = evaluate(&four_docs(), 0.8, &[2, 8], &[0.3, 0.8, 0.9]);
    let md = r.to_markdown("four docs");
    assert!(md.starts_with("## Near-duplicate evaluation: four docs"));
    // k-table at t = 0.9: k = 8: 4 pairs within 8, SimHash-only 0.5 / 0.6667, verified none.
    assert!(md.contains("| 8 | 4 | 0.5000 | 0.6667 | 0 | 1.0000 | 0.0000 | 0.0000 |"), "{md}");
    // t-table at the best k = 8.
    assert!(md.contains("### Precision / recall vs t at k = 8"), "{md}");
    assert!(md.contains("| 0.8 | 2 | 2 | 0 | 1 | 1.0000 | 0.6667 | 0.8000 |"), "{md}");
    // Histogram: true pair at distance 3; cumulative recall 1/3; one pair at distance 3 overall.
    assert!(md.contains("| 3 | 1 | 0.3333 | 1 |"), "{md}");
    assert!(md.contains("| 10 | 1 | 1.0000 | 1 |"), "{md}");
    assert!(!md.contains("| 11 |"), "histogram stops at the last non-empty bin");
    assert!(md.contains("k = 8, t = 0.8"), "{md}");
    assert!(md.contains("### Against labels"), "{md}");
}

#[test]
fn json_report_uses_fn_and_carries_metrics() {
    let r = evaluate(&four_docs(), 0.8, &[2, 8], &[0.3, 0.8, 0.9]);
    let json = match r.to_json_pretty() {
        Ok(j) => j,
        Err(e) => panic!("{e}"),
    };
    let v: serde_json::Value = match serde_json::from_str(&json) {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(v["true_pairs"], 3);
    assert_eq!(v["best"]["k"], 8);
    assert_eq!(v["best"]["score"]["tp"], 2);
    assert_eq!(v["best"]["score"]["fn"], 1);
    assert_eq!(v["best"]["score"]["precision"], 1.0);
    assert_eq!(v["grid"].as_array().map(Vec::len), Some(6));
    assert_eq!(v["true_hamming_hist"].as_array().map(Vec::len), Some(65));
}

#[test]
fn thresholds_are_displayed_without_float_noise() {
    assert_eq!(report::fmt_t(0.5 + 0.05 * 7.0), "0.85");
    assert_eq!(report::fmt_t(0.9), "0.9");
    assert_eq!(report::fmt_t(1.0), "1");
    assert_eq!(report::fmt_t(0.875), "0.875");
    assert_eq!(report::fmt_t(-0.5), "-0.5");
}
