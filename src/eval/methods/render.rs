//! The methods report's rendering: the Markdown tables of docs/methods.md for one corpus (and its
//! plots), from a [`MethodsReport`] that `compare_methods` measured.

use std::fmt::Write as _;

use super::*;

fn f4(x: f64) -> String {
    format!("{x:.4}")
}

fn opt4(x: Option<f64>) -> String {
    x.map_or("–".into(), f4)
}

impl MethodsReport {
    /// The report as Markdown (the tables of docs/methods.md for one corpus).
    pub fn to_markdown(&self, name: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "## {name}\n");
        let _ = writeln!(
            s,
            "{} documents; truth: {} pairs with exact Jaccard ≥ {} ({}); labels: {}. Verification: exact Jaccard ≥ {}. {:.0} s.\n",
            self.docs,
            self.true_pairs,
            self.truth_t,
            self.spec,
            self.label_pairs.map_or("none".into(), |n| format!("{n} same-label pairs")),
            self.verify_t,
            self.seconds
        );
        self.method_rows(&mut s);
        bucket_table(
            &mut s,
            "Henzinger's Table 2 on this corpus: Algorithm B's pairs (B ≥ 2) by B-similarity",
            &self.broder_by_b,
            false,
        );
        bucket_table(
            &mut s,
            "Henzinger's Table 5: Algorithm C's pairs (≥ 372 of 384 bits agree) by C-similarity",
            &self.charikar_by_c,
            false,
        );
        bucket_table(
            &mut s,
            "Henzinger's Table 11: Algorithm B's pairs kept at C-similarity ≥ t (R = correct pairs kept / correct pairs of B)",
            &self.combined_sweep,
            true,
        );
        lexicon_table(
            &mut s,
            "Fan & Huang's Table 1 on this corpus: best F1 (rule alone, k = 0..12) per number of lexicons",
            &self.lexicon_best,
        );
        lexicon_table(&mut s, "The keep share of the lexicons (L = 5)", &self.keep_sweep);
        s
    }

    /// The table of the methods' rows.
    fn method_rows(&self, s: &mut String) {
        let _ = writeln!(
            s,
            "| method | k | pairs | cand./doc | P rule | R rule | F1 rule | R verified | F1 verified | P labels | R labels | µs/doc sketch | bytes/doc | query p50 µs | p99 µs |"
        );
        let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for r in &self.rows {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {:.2} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {:.0} | {:.1} | {:.1} |",
                r.method,
                r.k.map_or("–".into(), |k| k.to_string()),
                r.pairs,
                r.candidates_per_doc,
                f4(r.rule.precision),
                f4(r.rule.recall),
                f4(r.rule.f1),
                f4(r.verified.recall),
                f4(r.verified.f1),
                opt4(r.labels_rule.map(|l| l.precision)),
                opt4(r.labels_rule.map(|l| l.recall)),
                r.sketch_us_per_doc,
                r.bytes_per_doc,
                r.query_p50_us,
                r.query_p99_us
            );
        }
    }

    /// SVG plots: Fan & Huang's best F1 per lexicon count, and Henzinger's combined sweep.
    pub fn svgs(&self, name: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if !self.lexicon_best.is_empty() {
            let f: Vec<(f64, f64)> = self.lexicon_best.iter().map(|r| (f64::from(r.lexicons), r.best.f1)).collect();
            let mut series = vec![("best F1 vs Jaccard truth", f)];
            let lf: Vec<(f64, f64)> = self
                .lexicon_best
                .iter()
                .filter_map(|r| r.label_best.as_ref().map(|b| (f64::from(r.lexicons), b.1.f1)))
                .collect();
            if !lf.is_empty() {
                series.push(("best F1 vs labels", lf));
            }
            out.push((
                format!("{name}-lexicons.svg"),
                svg_line_plot(
                    &format!("{name}: multi-lexicon SimHash, best F1 per lexicon count"),
                    "lexicons",
                    "F1",
                    &series,
                ),
            ));
        }
        if !self.combined_sweep.is_empty() {
            let t = |b: &Bucket| b.label.trim_start_matches("C ≥ ").parse::<f64>().unwrap_or(0.0);
            let p: Vec<(f64, f64)> = self.combined_sweep.iter().map(|b| (t(b), b.precision)).collect();
            let r: Vec<(f64, f64)> = self.combined_sweep.iter().map(|b| (t(b), b.r.unwrap_or(0.0))).collect();
            out.push((
                format!("{name}-combined.svg"),
                svg_line_plot(
                    &format!("{name}: Broder pairs kept at C-similarity ≥ t"),
                    "C-similarity threshold",
                    "ratio",
                    &[("precision", p), ("R (share of B's correct pairs)", r)],
                ),
            ));
        }
        out
    }
}

/// A table of buckets (`r`: with the R columns), under `title`; nothing when `rows` is empty.
fn bucket_table(s: &mut String, title: &str, rows: &[Bucket], r: bool) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(s, "\n{title}\n");
    if r {
        let _ = writeln!(
            s,
            "| rule | pairs | precision | R | precision (labels) | R (labels) |\n|---|---:|---:|---:|---:|---:|"
        );
    } else {
        let _ = writeln!(s, "| bucket | pairs | precision | precision (labels) |\n|---|---:|---:|---:|");
    }
    for b in rows {
        if r {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                b.label,
                b.pairs,
                f4(b.precision),
                opt4(b.r),
                opt4(b.label_precision),
                opt4(b.label_r)
            );
        } else {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                b.label,
                b.pairs,
                f4(b.precision),
                opt4(b.label_precision)
            );
        }
    }
}

/// A table of lexicon rows under `title`; nothing when `rows` is empty.
fn lexicon_table(s: &mut String, title: &str, rows: &[LexiconRow]) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(s, "\n{title}\n");
    let _ = writeln!(s, "| lexicons | keep ‰ | best k | precision | recall | best F1 | best k (labels) | best F1 (labels) |\n|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.lexicons,
            r.keep_permille,
            r.best_k,
            f4(r.best.precision),
            f4(r.best.recall),
            f4(r.best.f1),
            r.label_best.as_ref().map_or("–".into(), |b| b.0.to_string()),
            opt4(r.label_best.as_ref().map(|b| b.1.f1))
        );
    }
}
