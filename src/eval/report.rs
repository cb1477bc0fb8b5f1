//! Markdown tables and SVG plots of a [`GridReport`].

use super::{svg_line_plot, GridCell, GridReport, HAMMING_BINS};
use std::fmt::Write as _;

/// The verification threshold the report's k-table is shown at: the database default `t`.
pub const DEFAULT_T: f64 = crate::db::DEFAULT_MIN_JACCARD;
/// The Hamming radius the report's t-table falls back to when the grid has no best point: the
/// database default `k` (Zhang & Lu used 8; see docs/quality.md for why fpdb defaults to 12).
pub const DEFAULT_K: u32 = crate::db::DEFAULT_MAX_DISTANCE;

fn fmt_ratio(x: f64) -> String {
    format!("{x:.4}")
}

/// A threshold for display: at most 6 decimals, trailing zeros dropped (0.9, not
/// 0.9000000000000001 from a grid built by repeated addition).
pub(crate) fn fmt_t(t: f64) -> String {
    let s = format!("{t:.6}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

impl GridReport {
    /// The grid's `t` closest to `want` (ties: the larger), `None` when the grid has no `t`.
    pub fn nearest_t(&self, want: f64) -> Option<f64> {
        self.ts.iter().copied().min_by(|a, b| {
            let (da, db) = ((a - want).abs(), (b - want).abs());
            da.total_cmp(&db).then(b.total_cmp(a))
        })
    }

    /// The grid's `k` closest to `want` (ties: the smaller), `None` when the grid has no `k`.
    pub fn nearest_k(&self, want: u32) -> Option<u32> {
        self.ks.iter().copied().min_by_key(|&k| (k.abs_diff(want), k))
    }

    /// The markdown report with the default choices: the k-table at `t = 0.9` (or the grid's
    /// nearest `t`), the t-table at the best operating point's `k` (or the grid's `k` nearest the
    /// database default).
    pub fn to_markdown(&self, corpus_name: &str) -> String {
        let t_ref = self.nearest_t(DEFAULT_T);
        let k_ref = self.best.map(|b| b.k).or_else(|| self.nearest_k(DEFAULT_K));
        self.to_markdown_at(corpus_name, t_ref, k_ref)
    }

    /// The markdown report with the k-table's verification column at `t_ref` and the t-table
    /// at `k_ref` (each section is left out when its value is `None` or not in the grid).
    pub fn to_markdown_at(&self, corpus_name: &str, t_ref: Option<f64>, k_ref: Option<u32>) -> String {
        let mut s = String::new();
        let t_ref = t_ref.filter(|t| self.ts.contains(t));
        let k_ref = k_ref.filter(|k| self.ks.contains(k));
        let _ = writeln!(s, "## Near-duplicate evaluation: {corpus_name}\n");
        let _ = writeln!(
            s,
            "- Documents: {} ({} with no shingles); all pairs: {}.",
            self.n_docs, self.empty_docs, self.all_pairs
        );
        let _ = writeln!(
            s,
            "- Truth: pairs with exact Jaccard ≥ {} over the shingle sets: **{}** pairs \
             (exact prefix-filtered join at t = {}: {} pairs in {:.2} s).",
            fmt_t(self.truth_t),
            self.true_pairs,
            fmt_t(self.join_t),
            self.join_pairs,
            self.timings.join_s
        );
        let _ = writeln!(
            s,
            "- Rule scored: SimHash Hamming ≤ k (candidate), then exact Jaccard ≥ t \
             (verification). \"SimHash only\" = Hamming ≤ k without verification \
             (all-pairs Hamming pass: {:.2} s).",
            self.timings.hamming_s
        );
        let _ = writeln!(s, "- Precision with no predicted pair counts as 1; F1 = 2TP / (2TP + FP + FN).\n");

        if let Some(b) = self.best {
            let c = b.score.counts;
            let _ = writeln!(
                s,
                "**Best operating point** (max F1; ties → smaller k, then larger t): \
                 k = {}, t = {}: precision {}, recall {}, F1 {} (TP {}, FP {}, FN {}).\n",
                b.k,
                fmt_t(b.t),
                fmt_ratio(b.score.precision),
                fmt_ratio(b.score.recall),
                fmt_ratio(b.score.f1),
                c.tp,
                c.fp,
                c.fn_
            );
        }

        self.k_table(&mut s, t_ref);
        if let Some(k) = k_ref {
            self.t_table(&mut s, k);
        }
        self.hist_table(&mut s);
        if let Some(t) = t_ref {
            self.label_table(&mut s, t);
        }
        s
    }

    fn k_table(&self, s: &mut String, t_ref: Option<f64>) {
        let _ = writeln!(s, "### Precision / recall vs k\n");
        match t_ref {
            Some(t) => {
                let _ = write!(s, "Verified columns at t = {}. Truth: Jaccard ≥ {}.", fmt_t(t), fmt_t(self.truth_t));
                if t >= self.truth_t {
                    let _ = write!(
                        s,
                        " (With t ≥ the truth threshold every verified pair is true, so verified \
                         precision is 1 by construction; recall shows what the Hamming radius \
                         misses, SimHash-only precision what verification removes.)"
                    );
                }
                s.push_str("\n\n");
                let _ = writeln!(
                    s,
                    "| k | pairs Hamming ≤ k | SimHash-only precision | SimHash-only recall \
                     | verified pairs | verified precision | verified recall | verified F1 |"
                );
                let _ = writeln!(s, "|---:|---:|---:|---:|---:|---:|---:|---:|");
            }
            None => {
                let _ = writeln!(s, "(No verification threshold in the grid.)\n");
                let _ = writeln!(s, "| k | pairs Hamming ≤ k | SimHash-only precision | SimHash-only recall |");
                let _ = writeln!(s, "|---:|---:|---:|---:|");
            }
        }
        for row in &self.hamming_only {
            let _ = write!(
                s,
                "| {} | {} | {} | {} |",
                row.k,
                row.pairs_within_k,
                fmt_ratio(row.score.precision),
                fmt_ratio(row.score.recall)
            );
            if let Some(c) = t_ref.and_then(|t| self.cell(row.k, t)) {
                let _ = write!(
                    s,
                    " {} | {} | {} | {} |",
                    c.score.counts.predicted(),
                    fmt_ratio(c.score.precision),
                    fmt_ratio(c.score.recall),
                    fmt_ratio(c.score.f1)
                );
            }
            s.push('\n');
        }
        s.push('\n');
    }

    fn t_table(&self, s: &mut String, k: u32) {
        let _ = writeln!(s, "### Precision / recall vs t at k = {k}\n");
        let _ = writeln!(s, "| t | predicted pairs | TP | FP | FN | precision | recall | F1 |");
        let _ = writeln!(s, "|---:|---:|---:|---:|---:|---:|---:|---:|");
        for c in self.grid.iter().filter(|c| c.k == k) {
            let n = c.score.counts;
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                fmt_t(c.t),
                n.predicted(),
                n.tp,
                n.fp,
                n.fn_,
                fmt_ratio(c.score.precision),
                fmt_ratio(c.score.recall),
                fmt_ratio(c.score.f1)
            );
        }
        s.push('\n');
    }

    fn hist_table(&self, s: &mut String) {
        let _ = writeln!(s, "### Hamming distance of the true pairs (Jaccard ≥ {})\n", fmt_t(self.truth_t));
        let last = self.true_hamming_hist.iter().rposition(|&c| c > 0).unwrap_or(0);
        let _ = writeln!(
            s,
            "| Hamming distance d | true pairs at d | recall of Hamming ≤ d | all pairs at d |"
        );
        let _ = writeln!(s, "|---:|---:|---:|---:|");
        let mut cum = 0u64;
        for d in 0..=last.min(HAMMING_BINS - 1) {
            let c = self.true_hamming_hist.get(d).copied().unwrap_or(0);
            cum += c;
            let recall = if self.true_pairs == 0 {
                1.0
            } else {
                cum as f64 / self.true_pairs as f64
            };
            let _ = writeln!(
                s,
                "| {d} | {c} | {} | {} |",
                fmt_ratio(recall),
                self.all_hamming_hist.get(d).copied().unwrap_or(0)
            );
        }
        s.push('\n');
    }

    fn label_table(&self, s: &mut String, t: f64) {
        let Some(l) = &self.labels else {
            return;
        };
        let _ = writeln!(s, "### Against labels (same label = duplicate), t = {}\n", fmt_t(t));
        let _ = writeln!(
            s,
            "{} labelled documents, {} labels, {} same-label pairs. Jaccard-true pairs \
             (≥ {}) with the same label: {}; with different labels: {}. Pairs with an \
             unlabelled document are left out.\n",
            l.labelled_docs,
            l.distinct_labels,
            l.same_label_pairs,
            fmt_t(self.truth_t),
            l.same_label_true_pairs,
            l.different_label_true_pairs
        );
        let _ = writeln!(s, "| k | verified labelled pairs | same label | label precision | label recall |");
        let _ = writeln!(s, "|---:|---:|---:|---:|---:|");
        for c in l.grid.iter().filter(|c| c.t == t) {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                c.k,
                c.score.counts.predicted(),
                c.score.counts.tp,
                fmt_ratio(c.score.precision),
                fmt_ratio(c.score.recall)
            );
        }
        s.push('\n');
    }

    /// Precision and recall vs `k` (Zhang & Lu's Figure 1): the verified rule at `t` and the
    /// SimHash-only rule. `None` when `t` is not in the grid.
    pub fn svg_vs_k(&self, corpus_name: &str, t: f64) -> Option<String> {
        if !self.ts.contains(&t) {
            return None;
        }
        let at_t: Vec<&GridCell> = self.grid.iter().filter(|c| c.t == t).collect();
        let pts = |f: &dyn Fn(&GridCell) -> f64| -> Vec<(f64, f64)> { at_t.iter().map(|c| (c.k as f64, f(c))).collect() };
        let verified_p = format!("precision, verified t = {}", fmt_t(t));
        let verified_r = format!("recall, verified t = {}", fmt_t(t));
        let series: Vec<(&str, Vec<(f64, f64)>)> = vec![
            (verified_p.as_str(), pts(&|c| c.score.precision)),
            (verified_r.as_str(), pts(&|c| c.score.recall)),
            (
                "precision, SimHash only",
                self.hamming_only.iter().map(|r| (r.k as f64, r.score.precision)).collect(),
            ),
            (
                "recall, SimHash only",
                self.hamming_only.iter().map(|r| (r.k as f64, r.score.recall)).collect(),
            ),
        ];
        let title = format!("{corpus_name}: precision / recall vs k (truth: Jaccard ≥ {})", fmt_t(self.truth_t));
        Some(svg_line_plot(&title, "Hamming distance threshold k", "precision / recall", &series))
    }

    /// Precision, recall and F1 vs `t` at `k` (Zhang & Lu's Figure 3). `None` when `k` is not in
    /// the grid.
    pub fn svg_vs_t(&self, corpus_name: &str, k: u32) -> Option<String> {
        if !self.ks.contains(&k) {
            return None;
        }
        let at_k: Vec<&GridCell> = self.grid.iter().filter(|c| c.k == k).collect();
        let pts = |f: &dyn Fn(&GridCell) -> f64| -> Vec<(f64, f64)> { at_k.iter().map(|c| (c.t, f(c))).collect() };
        let series: Vec<(&str, Vec<(f64, f64)>)> = vec![
            ("precision", pts(&|c| c.score.precision)),
            ("recall", pts(&|c| c.score.recall)),
            ("F1", pts(&|c| c.score.f1)),
        ];
        let title = format!(
            "{corpus_name}: precision / recall vs t at k = {k} (truth: Jaccard ≥ {})",
            fmt_t(self.truth_t)
        );
        Some(svg_line_plot(
            &title,
            "Jaccard verification threshold t",
            "precision / recall / F1",
            &series,
        ))
    }
}
