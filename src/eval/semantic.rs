//! The semantic channel on labelled pairs (feature `semantic`): the CORE paper's Table 4 (text-only:
//! fpdb's verdict, Hamming ≤ k and Jaccard ≥ t; semantic-only: cosine ≥ β; their union) and the
//! calibration of β on hard negatives: per β, the recall of reworded copies and the false rate on
//! hard negatives (texts on one subject written independently) apart from easy ones, the β the
//! rule of [`crate::semantic::calibrate`] picks, checked on the set's held-out split, and a
//! measured second test for semantic-only hits (a minimum word overlap).
//!
//! `fpdb eval PAIRS.jsonl --semantic MODEL_DIR` (lines `{"a": text, "b": text, "dup": bool}` with
//! optional `"hard": bool`, `"kind": str`, `"split": "cal"|"held"`, as
//! `scripts/semantic_calibration.py` and `scripts/semantic_corpus.py` write them);
//! docs/semantic.md has the results.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::fingerprint::similarity::{hamming, jaccard};
use crate::fingerprint::spec::FingerprintSpec;
use crate::fingerprint::Fingerprinter;
use crate::semantic::{calibrate, false_rate, grid_beta, Embedder, HARD_NEGATIVE_TARGET};

use super::{Confusion, Scored};

/// One labelled pair.
#[derive(Clone, Debug, Default)]
pub struct LabelledPair {
    /// One text.
    pub a: String,
    /// The other.
    pub b: String,
    /// Whether they are versions of the same document.
    pub dup: bool,
    /// A negative on the same subject as its partner, written independently (what a β must
    /// reject); false for duplicates and for unrelated negatives.
    pub hard: bool,
    /// How the pair was made (`wordnet`, `translation`, `cross-manual`, ...); empty when unsaid.
    pub kind: String,
    /// In the held-out split (`"split": "held"`): left out of the calibration, scored at its β.
    pub held_out: bool,
}

impl LabelledPair {
    /// The kind, or `duplicate` / `negative` when the pair does not say.
    pub fn kind_or_default(&self) -> &str {
        match (self.kind.as_str(), self.dup) {
            ("", true) => "duplicate",
            ("", false) => "negative",
            (k, _) => k,
        }
    }
}

/// Parses labelled pairs, one JSON object a line (blank lines skipped); `origin` names the input
/// in errors.
pub fn parse_pairs(text: &str, origin: &str) -> Result<Vec<LabelledPair>> {
    let mut pairs = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let bad = |what: String| Error::InvalidInput {
            key: None,
            message: format!("{origin} line {}: {what}", i + 1),
        };
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
        let text = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
        let (Some(a), Some(b), Some(dup)) = (text("a"), text("b"), v.get("dup").and_then(|d| d.as_bool())) else {
            return Err(bad(
                "expected {\"a\": text, \"b\": text, \"dup\": bool} (and optionally \"hard\", \"kind\", \"split\")".into(),
            ));
        };
        let hard = v.get("hard").and_then(|h| h.as_bool()).unwrap_or(false);
        if hard && dup {
            return Err(bad("a pair is either a duplicate or a hard negative, not both".into()));
        }
        let held_out = match text("split").as_deref() {
            None | Some("cal") => false,
            Some("held") => true,
            Some(other) => return Err(bad(format!("\"split\" is \"cal\" or \"held\", not {other:?}"))),
        };
        pairs.push(LabelledPair {
            a,
            b,
            dup,
            hard,
            kind: text("kind").unwrap_or_default(),
            held_out,
        });
    }
    Ok(pairs)
}

/// The share of the words of the shorter text that the other has: words are runs of at least four
/// letters, lowercased, as sets (short function words and numbers do not count). 0 when either
/// text has none.
pub fn word_overlap(a: &str, b: &str) -> f64 {
    let words = |s: &str| -> HashSet<String> {
        s.split(|c: char| !c.is_alphabetic())
            .filter(|w| w.chars().count() >= 4)
            .map(str::to_lowercase)
            .collect()
    };
    let (wa, wb) = (words(a), words(b));
    let n = wa.len().min(wb.len());
    if n == 0 {
        return 0.0;
    }
    wa.intersection(&wb).count() as f64 / n as f64
}

/// What the evaluation measured of one pair.
#[derive(Clone, Debug, Serialize)]
pub struct PairScore {
    /// The pair's cosine.
    pub cosine: f32,
    /// [`word_overlap`].
    pub overlap: f64,
    /// The Jaccard of the two texts' shingle sets (fpdb's stored evidence).
    pub jaccard: f64,
    /// The share of the smaller shingle set found in the other (word trigrams by default: what a
    /// database holds of every document, so a gate on it needs no new storage).
    pub shingle_overlap: f64,
    /// fpdb's text verdict (Hamming ≤ k and Jaccard ≥ t).
    pub text: bool,
    /// The label.
    pub dup: bool,
    /// A hard negative.
    pub hard: bool,
    /// Held out.
    pub held_out: bool,
    /// [`LabelledPair::kind_or_default`].
    pub kind: String,
}

/// One β of the sweep.
#[derive(Clone, Debug, Serialize)]
pub struct BetaRow {
    /// β.
    pub beta: f32,
    /// Share of the duplicates at cos ≥ β (the reworded copies found).
    pub recall: f64,
    /// Share of the hard negatives at cos ≥ β (different documents on one subject called one).
    pub hard_false_rate: f64,
    /// Share of the other negatives at cos ≥ β.
    pub easy_false_rate: f64,
    /// Cosine ≥ β alone, over all pairs.
    pub semantic: Scored,
    /// The union: the text channel's verdict or cosine ≥ β.
    pub union: Scored,
}

/// One kind of pair at a glance.
#[derive(Clone, Debug, Serialize)]
pub struct KindRow {
    /// The kind.
    pub kind: String,
    /// Duplicates (else negatives).
    pub dup: bool,
    /// Hard negatives.
    pub hard: bool,
    /// Pairs.
    pub pairs: usize,
    /// Cosine: median, 90th percentile and largest (duplicates: 10th percentile and smallest instead).
    pub cosine_median: f32,
    /// 90th percentile (negatives) or 10th (duplicates).
    pub cosine_tail: f32,
    /// Largest (negatives) or smallest (duplicates).
    pub cosine_extreme: f32,
    /// Mean [`word_overlap`].
    pub mean_overlap: f64,
    /// Mean shingle Jaccard.
    pub mean_jaccard: f64,
    /// Mean [`PairScore::shingle_overlap`].
    pub mean_shingle_overlap: f64,
    /// The rule's β on this kind alone (hard negatives only).
    pub rule_beta: Option<f32>,
}

/// The rule's β and its check on the held-out split.
#[derive(Clone, Debug, Serialize)]
pub struct Calibrated {
    /// The rule on every hard negative.
    pub beta: f32,
    /// Recall of the duplicates at `beta`.
    pub recall: f64,
    /// Hard-negative false rate at `beta`.
    pub hard_false_rate: f64,
    /// The rule on the calibration split's hard negatives only, when the set has a held-out split.
    pub cal_beta: Option<f32>,
    /// At `cal_beta`, on the held-out split: recall, hard-negative false rate, and their counts
    /// (duplicates, hard negatives).
    pub held_out: Option<(f64, f64, usize, usize)>,
}

/// Semantic-only hits gated by a minimum lexical overlap: recall and hard-negative false rate.
#[derive(Clone, Debug, Serialize)]
pub struct LexicalRow {
    /// `words` ([`word_overlap`]) or `shingles` ([`PairScore::shingle_overlap`]).
    pub gate: &'static str,
    /// β.
    pub beta: f32,
    /// The minimum overlap.
    pub min_overlap: f64,
    /// Duplicates with cos ≥ β and overlap ≥ the minimum.
    pub recall: f64,
    /// Hard negatives with both.
    pub hard_false_rate: f64,
}

/// The evaluation.
#[derive(Clone, Debug, Serialize)]
pub struct SemanticEval {
    /// Pairs evaluated.
    pub pairs: usize,
    /// Of which duplicates.
    pub duplicates: usize,
    /// Of which hard negatives.
    pub hard_negatives: usize,
    /// Pairs in the held-out split.
    pub held_out: usize,
    /// The text channel alone (k, t of the verdict).
    pub text: Scored,
    /// Its k.
    pub max_distance: u32,
    /// Its t.
    pub min_jaccard: f64,
    /// Mean cosine of the duplicates and of the negatives.
    pub mean_cosine: (f32, f32),
    /// Distinct texts embedded per second.
    pub embeds_per_second: f64,
    /// Per kind of pair.
    pub kinds: Vec<KindRow>,
    /// β from 0.50 to 1.00 in steps of 0.01.
    pub sweep: Vec<BetaRow>,
    /// The rule's β (when the set has hard negatives).
    pub calibrated: Option<Calibrated>,
    /// The word-overlap gate at a few β.
    pub lexical: Vec<LexicalRow>,
    /// Every pair's scores, in input order.
    pub scores: Vec<PairScore>,
}

fn score(pred: impl Iterator<Item = bool>, truth: impl Iterator<Item = bool>) -> Scored {
    let mut c = Confusion::default();
    for (p, t) in pred.zip(truth) {
        match (p, t) {
            (true, true) => c.tp += 1,
            (true, false) => c.fp += 1,
            (false, true) => c.fn_ += 1,
            (false, false) => {}
        }
    }
    c.into()
}

fn share(s: &[&PairScore], hit: impl Fn(&PairScore) -> bool) -> f64 {
    s.iter().filter(|p| hit(p)).count() as f64 / s.len().max(1) as f64
}

fn quantile(sorted: &[f32], q: f64) -> f32 {
    if sorted.is_empty() {
        return f32::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// The minimum word overlaps the report measures.
pub const OVERLAP_GRID: [f64; 6] = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5];

/// The minimum shingle overlaps the report measures.
pub const SHINGLE_GRID: [f64; 5] = [0.0, 0.02, 0.05, 0.1, 0.2];

/// Evaluates the two channels and their union on `pairs`, and calibrates β on its hard negatives.
/// Each distinct text is embedded once.
pub fn semantic_eval(embedder: &Embedder, spec: &FingerprintSpec, k: u32, t: f64, pairs: &[LabelledPair]) -> Result<SemanticEval> {
    let mut fpr = Fingerprinter::new(spec.clone());
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut texts: Vec<&str> = Vec::new();
    for p in pairs {
        for s in [p.a.as_str(), p.b.as_str()] {
            index.entry(s).or_insert_with(|| {
                texts.push(s);
                texts.len() - 1
            });
        }
    }
    let start = std::time::Instant::now();
    let v = embedder.embed(&texts)?;
    let embeds_per_second = texts.len() as f64 / start.elapsed().as_secs_f64().max(1e-9);
    let cos = |a: &str, b: &str| -> f32 { v[index[a]].iter().zip(&v[index[b]]).map(|(x, y)| x * y).sum() };
    let scores: Vec<PairScore> = pairs
        .iter()
        .map(|p| {
            let (fa, fb) = (fpr.fingerprint(&p.a), fpr.fingerprint(&p.b));
            let sim = jaccard(&fa.shingles, &fb.shingles);
            let j = sim.jaccard;
            PairScore {
                cosine: cos(&p.a, &p.b),
                overlap: word_overlap(&p.a, &p.b),
                jaccard: j,
                shingle_overlap: f64::from(sim.shared) / fa.shingles.len().min(fb.shingles.len()).max(1) as f64,
                text: hamming(fa.simhash, fb.simhash) <= k && j >= t,
                dup: p.dup,
                hard: p.hard,
                held_out: p.held_out,
                kind: p.kind_or_default().to_string(),
            }
        })
        .collect();
    Ok(SemanticEval::from_scores(scores, k, t, embeds_per_second))
}

/// The cosines of `s`, in its order.
fn cosines(s: &[&PairScore]) -> Vec<f32> {
    s.iter().map(|p| p.cosine).collect()
}

/// The sweep of β from 0.50 to 1.00: recall, false rates, the semantic channel's and the union's scores.
fn sweep_rows(scores: &[PairScore], dups: &[&PairScore], hard: &[&PairScore], easy: &[&PairScore]) -> Vec<BetaRow> {
    let truth = || scores.iter().map(|p| p.dup);
    (50..=100)
        .map(|step| {
            let beta = grid_beta(step);
            BetaRow {
                beta,
                recall: share(dups, |p| p.cosine >= beta),
                hard_false_rate: share(hard, |p| p.cosine >= beta),
                easy_false_rate: share(easy, |p| p.cosine >= beta),
                semantic: score(scores.iter().map(|p| p.cosine >= beta), truth()),
                union: score(scores.iter().map(|p| p.cosine >= beta || p.text), truth()),
            }
        })
        .collect()
}

/// The rule's β on all hard negatives, and its check on the held-out split (β from the rest).
fn calibrated_beta(dups: &[&PairScore], hard: &[&PairScore]) -> Option<Calibrated> {
    calibrate(&cosines(hard)).map(|beta| {
        let cal: Vec<&PairScore> = hard.iter().copied().filter(|p| !p.held_out).collect();
        let held_dups: Vec<&PairScore> = dups.iter().copied().filter(|p| p.held_out).collect();
        let held_hard: Vec<&PairScore> = hard.iter().copied().filter(|p| p.held_out).collect();
        let cal_beta = if held_hard.is_empty() { None } else { calibrate(&cosines(&cal)) };
        Calibrated {
            beta,
            recall: share(dups, |p| p.cosine >= beta),
            hard_false_rate: false_rate(&cosines(hard), beta),
            cal_beta,
            held_out: cal_beta.map(|b| {
                (
                    share(&held_dups, |p| p.cosine >= b),
                    share(&held_hard, |p| p.cosine >= b),
                    held_dups.len(),
                    held_hard.len(),
                )
            }),
        }
    })
}

/// One row per (duplicate or not, hard or not, kind): its cosine quantiles, mean overlaps and rule's β.
fn kind_rows(scores: &[PairScore]) -> Vec<KindRow> {
    let mut by_kind: BTreeMap<(bool, bool, &str), Vec<&PairScore>> = BTreeMap::new();
    for p in scores {
        by_kind.entry((!p.dup, p.hard, p.kind.as_str())).or_default().push(p);
    }
    by_kind
        .into_iter()
        .map(|((neg, hard, kind), s)| {
            let mut c = cosines(&s);
            c.sort_by(f32::total_cmp);
            let (tail, extreme) = if neg {
                (quantile(&c, 0.9), quantile(&c, 1.0))
            } else {
                (quantile(&c, 0.1), quantile(&c, 0.0))
            };
            KindRow {
                kind: kind.to_string(),
                dup: !neg,
                hard,
                pairs: s.len(),
                cosine_median: quantile(&c, 0.5),
                cosine_tail: tail,
                cosine_extreme: extreme,
                mean_overlap: s.iter().map(|p| p.overlap).sum::<f64>() / s.len() as f64,
                mean_jaccard: s.iter().map(|p| p.jaccard).sum::<f64>() / s.len() as f64,
                mean_shingle_overlap: s.iter().map(|p| p.shingle_overlap).sum::<f64>() / s.len() as f64,
                rule_beta: if hard { calibrate(&c) } else { None },
            }
        })
        .collect()
}

/// The word and shingle overlap gates at β 0.70, 0.76 and the rule's β: recall and hard false rate per minimum overlap.
fn lexical_rows(dups: &[&PairScore], hard: &[&PairScore], calibrated: Option<&Calibrated>) -> Vec<LexicalRow> {
    let mut lex_betas = vec![0.70, 0.76];
    lex_betas.extend(calibrated.map(|c| c.beta));
    /// A lexical gate: its name, the overlaps tried, the overlap of a pair.
    type Gate = (&'static str, &'static [f64], fn(&PairScore) -> f64);
    let gates: [Gate; 2] = [
        ("words", &OVERLAP_GRID, |p| p.overlap),
        ("shingles", &SHINGLE_GRID, |p| p.shingle_overlap),
    ];
    let mut lexical = Vec::new();
    for (gate, grid, of) in gates {
        for &beta in &lex_betas {
            for &min_overlap in grid {
                let hit = |p: &PairScore| p.cosine >= beta && of(p) >= min_overlap;
                lexical.push(LexicalRow {
                    gate,
                    beta,
                    min_overlap,
                    recall: share(dups, hit),
                    hard_false_rate: share(hard, hit),
                });
            }
        }
    }
    lexical
}

impl SemanticEval {
    /// The report of already scored pairs.
    pub fn from_scores(scores: Vec<PairScore>, k: u32, t: f64, embeds_per_second: f64) -> SemanticEval {
        let dups: Vec<&PairScore> = scores.iter().filter(|p| p.dup).collect();
        let hard: Vec<&PairScore> = scores.iter().filter(|p| p.hard).collect();
        let easy: Vec<&PairScore> = scores.iter().filter(|p| !p.dup && !p.hard).collect();
        let negatives: Vec<&PairScore> = scores.iter().filter(|p| !p.dup).collect();
        let mean = |s: &[&PairScore]| s.iter().map(|p| p.cosine).sum::<f32>() / s.len().max(1) as f32;
        let sweep = sweep_rows(&scores, &dups, &hard, &easy);
        let calibrated = calibrated_beta(&dups, &hard);
        let kinds = kind_rows(&scores);
        let lexical = lexical_rows(&dups, &hard, calibrated.as_ref());
        SemanticEval {
            pairs: scores.len(),
            duplicates: dups.len(),
            hard_negatives: hard.len(),
            held_out: scores.iter().filter(|p| p.held_out).count(),
            text: score(scores.iter().map(|p| p.text), scores.iter().map(|p| p.dup)),
            max_distance: k,
            min_jaccard: t,
            mean_cosine: (mean(&dups), mean(&negatives)),
            embeds_per_second,
            kinds,
            sweep,
            calibrated,
            lexical,
            scores,
        }
    }

    /// The β of the best union F1 (the first, on a tie).
    pub fn best_union(&self) -> Option<&BetaRow> {
        self.sweep.iter().fold(None, |best: Option<&BetaRow>, r| match best {
            Some(b) if b.union.f1 >= r.union.f1 => Some(b),
            _ => Some(r),
        })
    }

    /// The sweep's row at `beta` (to the grid's 0.01).
    pub fn at(&self, beta: f32) -> Option<&BetaRow> {
        self.sweep.iter().find(|r| (r.beta - beta).abs() < 0.005)
    }

    /// Recall of the duplicates and the false rates of the hard and of the easy negatives vs β as
    /// an SVG line plot (docs/semantic.md), with the semantic channel's F1 over all pairs.
    pub fn svg(&self, title: &str) -> String {
        let line = |f: &dyn Fn(&BetaRow) -> f64| self.sweep.iter().map(|r| (f64::from(r.beta), f(r))).collect::<Vec<_>>();
        let mut series = vec![("recall of reworded copies", line(&|r| r.recall))];
        if self.hard_negatives > 0 {
            series.push(("false rate, hard negatives (same subject)", line(&|r| r.hard_false_rate)));
        }
        if self.pairs > self.duplicates + self.hard_negatives {
            series.push(("false rate, other negatives", line(&|r| r.easy_false_rate)));
        }
        series.push(("F1, semantic only (all pairs)", line(&|r| r.semantic.f1)));
        super::svg_line_plot(title, "β (min cosine)", "share of pairs at cos ≥ β", &series)
    }

    /// The report as Markdown: counts, per kind, the rule's β and its held-out check, the sweep,
    /// the word-overlap gate.
    pub fn markdown(&self) -> String {
        let mut s = self.md_counts();
        s += &self.md_kinds();
        s += &self.md_rule();
        s += &self.md_sweep();
        s += &self.md_lexical();
        s
    }

    /// The counts, the embedding rate, the mean cosines and the text-only score, as Markdown.
    fn md_counts(&self) -> String {
        let mut s = format!(
            "{} pairs ({} duplicates, {} hard negatives, {} other negatives; {} held out); {:.1} texts embedded/s; \
             mean cosine duplicates {:.3}, negatives {:.3}\n\n",
            self.pairs,
            self.duplicates,
            self.hard_negatives,
            self.pairs - self.duplicates - self.hard_negatives,
            self.held_out,
            self.embeds_per_second,
            self.mean_cosine.0,
            self.mean_cosine.1
        );
        let t = &self.text;
        s += &format!(
            "text-only (d <= {}, J >= {}): P {:.3} R {:.3} F1 {:.3}\n\n",
            self.max_distance, self.min_jaccard, t.precision, t.recall, t.f1
        );
        s
    }

    /// The per-kind table, as Markdown.
    fn md_kinds(&self) -> String {
        let mut s = String::from("| kind | label | pairs | cos median | cos p10 / p90 | cos min / max | word overlap | shingle overlap | shingle J | rule's β on it |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for k in &self.kinds {
            let label = match (k.dup, k.hard) {
                (true, _) => "duplicate",
                (false, true) => "hard negative",
                (false, false) => "negative",
            };
            s += &format!(
                "| {} | {label} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} |\n",
                k.kind,
                k.pairs,
                k.cosine_median,
                k.cosine_tail,
                k.cosine_extreme,
                k.mean_overlap,
                k.mean_shingle_overlap,
                k.mean_jaccard,
                k.rule_beta.map_or("—".into(), |b| format!("{b:.2}"))
            );
        }
        s
    }

    /// The rule's β and its held-out check (empty without a calibration), as Markdown.
    fn md_rule(&self) -> String {
        let mut s = String::new();
        if let Some(c) = &self.calibrated {
            s += &format!(
                "\nthe rule (lowest β with hard-negative false rate <= {:.0}%): β = {:.2}: recall {:.3}, hard-negative false rate {:.3}\n",
                HARD_NEGATIVE_TARGET * 100.0,
                c.beta,
                c.recall,
                c.hard_false_rate
            );
            if let (Some(b), Some((r, f, nd, nh))) = (c.cal_beta, c.held_out) {
                s += &format!(
                    "held-out check: the rule on the calibration split gives β = {b:.2}; on the held-out split ({nd} duplicates, {nh} hard negatives) \
                     recall {r:.3}, hard-negative false rate {f:.3}\n"
                );
            }
        }
        s
    }

    /// The β sweep's table and the best union F1, as Markdown.
    fn md_sweep(&self) -> String {
        let mut s = String::from("\n| β | recall (duplicates) | false rate, hard negatives | false rate, other negatives | semantic P | R | F1 | union P | R | F1 |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for r in &self.sweep {
            let (a, b) = (&r.semantic, &r.union);
            s += &format!(
                "| {:.2} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |\n",
                r.beta, r.recall, r.hard_false_rate, r.easy_false_rate, a.precision, a.recall, a.f1, b.precision, b.recall, b.f1
            );
        }
        if let Some(b) = self.best_union() {
            s += &format!("\nbest union F1 {:.3} at β = {:.2}\n", b.union.f1, b.beta);
        }
        s
    }

    /// The word-overlap gate's table (empty without hard negatives), as Markdown.
    fn md_lexical(&self) -> String {
        let mut s = String::new();
        if self.hard_negatives > 0 {
            s += "\nsemantic-only hits that also need a lexical overlap (words: distinct words of ≥ 4 letters shared / those of the \
                  shorter text; shingles: the stored shingles shared / those of the smaller set):\n\n\
                  | gate | β | min overlap | recall (duplicates) | false rate, hard negatives |\n|---|---|---|---|---|\n";
            for l in &self.lexical {
                s += &format!(
                    "| {} | {:.2} | {:.2} | {:.3} | {:.3} |\n",
                    l.gate, l.beta, l.min_overlap, l.recall, l.hard_false_rate
                );
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ps(cosine: f32, dup: bool, hard: bool, held_out: bool) -> PairScore {
        PairScore {
            cosine,
            overlap: if dup { 0.6 } else { 0.2 },
            jaccard: 0.0,
            shingle_overlap: 0.0,
            text: false,
            dup,
            hard,
            held_out,
            kind: String::new(),
        }
    }

    #[test]
    fn word_overlap_counts_long_words_of_the_shorter_text() {
        assert_eq!(word_overlap("the Quick brown fox", "a quick red fox jumps high"), 1.0 / 2.0);
        assert_eq!(word_overlap("", "anything here"), 0.0);
        assert_eq!(word_overlap("same words here", "here same words"), 1.0);
    }

    #[test]
    fn parse_reads_the_optional_fields_and_refuses_contradictions() {
        let p = parse_pairs(
            "{\"a\":\"x\",\"b\":\"y\",\"dup\":false,\"hard\":true,\"kind\":\"k\",\"split\":\"held\"}\n\n{\"a\":\"x\",\"b\":\"y\",\"dup\":true}\n",
            "t",
        )
        .unwrap();
        assert_eq!((p[0].hard, p[0].held_out, p[0].kind.as_str()), (true, true, "k"));
        assert_eq!((p[1].hard, p[1].held_out, p[1].kind_or_default()), (false, false, "duplicate"));
        assert!(parse_pairs("{\"a\":\"x\",\"b\":\"y\",\"dup\":true,\"hard\":true}", "t").is_err());
        assert!(parse_pairs("{\"a\":\"x\",\"b\":\"y\",\"dup\":true,\"split\":\"test\"}", "t").is_err());
        let e = parse_pairs("{\"a\":\"x\"}", "pairs.jsonl").unwrap_err().to_string();
        assert!(e.contains("pairs.jsonl line 1"), "{e}");
    }

    #[test]
    fn report_separates_hard_negatives_and_checks_the_held_out_split() {
        let mut s = Vec::new();
        for i in 0..100 {
            // hard negatives 0.403, 0.407, ... 0.795 and one at 0.953, every fourth held out;
            // duplicates 0.80..0.998
            let hard = if i == 99 { 0.953 } else { 0.403 + 0.004 * i as f32 };
            s.push(ps(hard, false, true, i % 4 == 0));
            s.push(ps(0.8 + 0.002 * i as f32, true, false, i % 4 == 0));
            s.push(ps(0.1, false, false, false));
        }
        let r = SemanticEval::from_scores(s, 3, 0.5, 1.0);
        assert_eq!((r.pairs, r.duplicates, r.hard_negatives, r.held_out), (300, 100, 100, 50));
        let c = r.calibrated.as_ref().unwrap();
        // 1% of 100: one hard negative may be at or above β (0.953); 0.79 would keep 0.795 too
        assert_eq!(c.beta, 0.8);
        assert!((c.hard_false_rate - 0.01).abs() < 1e-9);
        let row = r.at(0.76).unwrap();
        assert!((row.hard_false_rate - 0.10).abs() < 1e-9, "{}", row.hard_false_rate);
        assert_eq!((row.recall, row.easy_false_rate), (1.0, 0.0));
        // the calibration split's 75 allow none above: β passes 0.953
        assert_eq!(c.cal_beta, Some(0.96));
        let (_, f, nd, nh) = c.held_out.unwrap();
        assert_eq!((nd, nh, f), (25, 25, 0.0));
        assert!(r.markdown().contains("held-out check"));
        assert!(r.svg("t").contains("hard negatives"));
        // the overlap gate at 0.3 keeps the duplicates (0.6) and drops the negatives (0.2)
        let l = r
            .lexical
            .iter()
            .find(|l| l.gate == "words" && l.beta == 0.76 && l.min_overlap == 0.3)
            .unwrap();
        assert_eq!((l.recall, l.hard_false_rate), (1.0, 0.0));
    }
}
