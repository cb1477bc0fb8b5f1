//! Paper 001's Table 4 on labelled pairs (feature `semantic`): text-only (fpdb's verdict: Hamming
//! ≤ k and Jaccard ≥ t), semantic-only (cosine ≥ β) and union precision/recall/F1, with a β sweep.
//! `fpdb eval PAIRS.jsonl --semantic MODEL_DIR` (lines `{"a": text, "b": text, "dup": bool}`, as
//! `scripts/semantic_corpus.py` writes them); docs/semantic.md has the results.

use serde::Serialize;

use crate::error::Result;
use crate::fingerprint::similarity::{hamming, jaccard};
use crate::fingerprint::spec::FingerprintSpec;
use crate::fingerprint::Fingerprinter;
use crate::semantic::Embedder;

use super::{Confusion, Scored};

/// One labelled pair.
#[derive(Clone, Debug)]
pub struct LabelledPair {
    /// One text.
    pub a: String,
    /// The other.
    pub b: String,
    /// Whether they are versions of the same document.
    pub dup: bool,
}

/// One β of the sweep.
#[derive(Clone, Debug, Serialize)]
pub struct BetaRow {
    /// β.
    pub beta: f32,
    /// Cosine ≥ β alone.
    pub semantic: Scored,
    /// The union: the text channel's verdict or cosine ≥ β.
    pub union: Scored,
}

/// The evaluation.
#[derive(Clone, Debug, Serialize)]
pub struct SemanticEval {
    /// Pairs evaluated.
    pub pairs: usize,
    /// Of which duplicates.
    pub duplicates: usize,
    /// The text channel alone (k, t of the verdict).
    pub text: Scored,
    /// Its k.
    pub max_distance: u32,
    /// Its t.
    pub min_jaccard: f64,
    /// Mean cosine of the duplicates and of the negatives.
    pub mean_cosine: (f32, f32),
    /// Texts embedded per second.
    pub embeds_per_second: f64,
    /// β from 0.50 to 1.00 in steps of 0.02.
    pub sweep: Vec<BetaRow>,
}

fn score(pred: impl Iterator<Item = bool>, truth: &[bool]) -> Scored {
    let mut c = Confusion::default();
    for (p, &t) in pred.zip(truth) {
        match (p, t) {
            (true, true) => c.tp += 1,
            (true, false) => c.fp += 1,
            (false, true) => c.fn_ += 1,
            (false, false) => {}
        }
    }
    c.into()
}

/// Evaluates the two channels and their union on `pairs`.
pub fn semantic_eval(embedder: &Embedder, spec: &FingerprintSpec, k: u32, t: f64, pairs: &[LabelledPair]) -> Result<SemanticEval> {
    let truth: Vec<bool> = pairs.iter().map(|p| p.dup).collect();
    let mut fpr = Fingerprinter::new(spec.clone());
    let text: Vec<bool> = pairs
        .iter()
        .map(|p| {
            let (fa, fb) = (fpr.fingerprint(&p.a), fpr.fingerprint(&p.b));
            hamming(fa.simhash, fb.simhash) <= k && jaccard(&fa.shingles, &fb.shingles).jaccard >= t
        })
        .collect();
    let texts: Vec<&str> = pairs.iter().flat_map(|p| [p.a.as_str(), p.b.as_str()]).collect();
    let start = std::time::Instant::now();
    let v = embedder.embed(&texts)?;
    let embeds_per_second = texts.len() as f64 / start.elapsed().as_secs_f64().max(1e-9);
    let cos: Vec<f32> = v.chunks(2).map(|c| c[0].iter().zip(&c[1]).map(|(x, y)| x * y).sum()).collect();
    let mean = |dup: bool| {
        let c: Vec<f32> = cos.iter().zip(&truth).filter(|(_, t)| **t == dup).map(|(c, _)| *c).collect();
        c.iter().sum::<f32>() / c.len().max(1) as f32
    };
    let sweep = (0..=25)
        .map(|step| {
            let beta = 0.50 + 0.02 * step as f32;
            BetaRow {
                beta,
                semantic: score(cos.iter().map(|c| *c >= beta), &truth),
                union: score(cos.iter().zip(&text).map(|(c, t)| *c >= beta || *t), &truth),
            }
        })
        .collect();
    Ok(SemanticEval {
        pairs: pairs.len(),
        duplicates: truth.iter().filter(|t| **t).count(),
        text: score(text.iter().copied(), &truth),
        max_distance: k,
        min_jaccard: t,
        mean_cosine: (mean(true), mean(false)),
        embeds_per_second,
        sweep,
    })
}

impl SemanticEval {
    /// The β of the best union F1 (the first, on a tie).
    pub fn best_union(&self) -> Option<&BetaRow> {
        self.sweep.iter().fold(None, |best: Option<&BetaRow>, r| match best {
            Some(b) if b.union.f1 >= r.union.f1 => Some(b),
            _ => Some(r),
        })
    }

    /// F1 vs β as an SVG line plot (docs/semantic.md): the semantic channel alone, the union,
    /// and the text channel's F1 (a flat line: it has no β).
    pub fn svg(&self, title: &str) -> String {
        let line = |f: &dyn Fn(&BetaRow) -> f64| self.sweep.iter().map(|r| (f64::from(r.beta), f(r))).collect::<Vec<_>>();
        let series = [
            ("semantic only", line(&|r| r.semantic.f1)),
            ("union (text or semantic)", line(&|r| r.union.f1)),
            ("text only", line(&|_| self.text.f1)),
        ];
        super::svg_line_plot(title, "β (min cosine)", "F1", &series)
    }

    /// The report as Markdown: the text channel's line, then the sweep's table.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "{} pairs ({} duplicates); {:.1} texts embedded/s; mean cosine duplicates {:.3}, negatives {:.3}\n\n",
            self.pairs, self.duplicates, self.embeds_per_second, self.mean_cosine.0, self.mean_cosine.1
        );
        let t = &self.text;
        s += &format!(
            "text-only (d <= {}, J >= {}): P {:.3} R {:.3} F1 {:.3}\n\n",
            self.max_distance, self.min_jaccard, t.precision, t.recall, t.f1
        );
        s += "| β | semantic P | R | F1 | union P | R | F1 |\n|---|---|---|---|---|---|---|\n";
        for r in &self.sweep {
            let (a, b) = (&r.semantic, &r.union);
            s += &format!(
                "| {:.2} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |\n",
                r.beta, a.precision, a.recall, a.f1, b.precision, b.recall, b.f1
            );
        }
        if let Some(b) = self.best_union() {
            s += &format!("\nbest union F1 {:.3} at β = {:.2}\n", b.union.f1, b.beta);
        }
        s
    }
}
