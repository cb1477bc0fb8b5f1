//! A small dependency-free SVG line-chart writer (for docs/ pages rendered on GitHub).

use std::fmt::Write as _;

const WIDTH: f64 = 780.0;
const HEIGHT: f64 = 440.0;
const LEFT: f64 = 70.0;
const TOP: f64 = 50.0;
/// Right edge of the plot area; the legend sits to its right.
const RIGHT: f64 = 530.0;
const BOTTOM: f64 = 380.0;

const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];
/// Dash patterns, cycled independently of colours so series stay apart in grayscale.
const DASHES: [&str; 4] = ["", "7 4", "2 3", "9 3 2 3"];

/// Escapes text for XML content and attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 does not allow at all.
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' && c != '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Axis range and tick step: `(lo, hi, step)` with `lo`, `hi` multiples of `step`.
fn nice_axis(min: f64, max: f64) -> (f64, f64, f64) {
    let (mut min, mut max) = (min, max);
    if !(min.is_finite() && max.is_finite()) {
        return (0.0, 1.0, 0.1);
    }
    if max - min < 1e-12 {
        let pad = if min.abs() > 1e-12 { min.abs() * 0.1 } else { 1.0 };
        min -= pad;
        max += pad;
    }
    let raw = (max - min) / 8.0;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let step = mag
        * if norm <= 1.0 {
            1.0
        } else if norm <= 2.0 {
            2.0
        } else if norm <= 2.5 {
            2.5
        } else if norm <= 5.0 {
            5.0
        } else {
            10.0
        };
    let lo = (min / step + 1e-9).floor() * step;
    let hi = (max / step - 1e-9).ceil() * step;
    (lo, hi, step)
}

/// Decimals needed to print multiples of `step` exactly (at most 6).
fn decimals(step: f64) -> usize {
    (0..6)
        .find(|&d| {
            let scaled = step * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() < 1e-6
        })
        .unwrap_or(6)
}

/// Writes a line chart as a standalone SVG document.
///
/// Each series is drawn as exactly one `<path>` (points joined in the given order; non-finite
/// points are skipped and break the line) with a circle marker per point, and listed in a legend
/// right of the plot. Series differ in colour and dash pattern, and earlier series are drawn
/// wider so that coinciding series stay distinguishable. The y axis spans 0..1 when every y value lies in `[0, 1]` (precision,
/// recall, F1), otherwise a rounded range around the data; the x axis spans a rounded range
/// around the data. Text is XML-escaped.
pub fn svg_line_plot(title: &str, x_label: &str, y_label: &str, series: &[(&str, Vec<(f64, f64)>)]) -> String {
    let f = Frame::of(series);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="Helvetica, Arial, sans-serif" font-size="13">"#
    );
    let _ = writeln!(s, r#"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="28" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
        WIDTH / 2.0,
        esc(title)
    );
    f.write_grid(&mut s);
    write_axes(&mut s, x_label, y_label);
    // Series: one path each, then markers, then the legend entry.
    for (i, (name, pts)) in series.iter().enumerate() {
        f.write_series(&mut s, i, name, pts);
    }
    s.push_str("</svg>\n");
    s
}

/// The ranges of a plot's axes ([`svg_line_plot`]) and their tick steps.
struct Frame {
    x_lo: f64,
    x_hi: f64,
    x_step: f64,
    y_lo: f64,
    y_hi: f64,
    y_step: f64,
}

impl Frame {
    /// The axes around the finite points of `series`.
    fn of(series: &[(&str, Vec<(f64, f64)>)]) -> Frame {
        let finite: Vec<(f64, f64)> = series
            .iter()
            .flat_map(|(_, pts)| pts.iter().copied())
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        let (x_lo, x_hi, x_step) = if finite.is_empty() {
            (0.0, 1.0, 0.1)
        } else {
            let min = finite.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
            let max = finite.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
            nice_axis(min, max)
        };
        let unit = finite.iter().all(|&(_, y)| (0.0..=1.0).contains(&y));
        let (y_lo, y_hi, y_step) = if unit {
            (0.0, 1.0, 0.1)
        } else {
            let min = finite.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
            let max = finite.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
            nice_axis(min, max)
        };
        Frame {
            x_lo,
            x_hi,
            x_step,
            y_lo,
            y_hi,
            y_step,
        }
    }

    fn px(&self, x: f64) -> f64 {
        LEFT + (x - self.x_lo) / (self.x_hi - self.x_lo) * (RIGHT - LEFT)
    }

    fn py(&self, y: f64) -> f64 {
        BOTTOM - (y - self.y_lo) / (self.y_hi - self.y_lo) * (BOTTOM - TOP)
    }

    /// Grid lines and tick labels.
    fn write_grid(&self, s: &mut String) {
        let (x_lo, x_step, y_lo, y_step) = (self.x_lo, self.x_step, self.y_lo, self.y_step);
        let x_dec = decimals(x_step);
        let y_dec = decimals(y_step);
        let x_ticks = ((self.x_hi - x_lo) / x_step).round() as usize;
        let y_ticks = ((self.y_hi - y_lo) / y_step).round() as usize;
        let _ = writeln!(s, r##"<g stroke="#e0e0e0" stroke-width="1">"##);
        for i in 0..=x_ticks {
            let x = self.px(x_lo + i as f64 * x_step);
            let _ = writeln!(s, r#"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{BOTTOM}"/>"#);
        }
        for i in 0..=y_ticks {
            let y = self.py(y_lo + i as f64 * y_step);
            let _ = writeln!(s, r#"<line x1="{LEFT}" y1="{y:.1}" x2="{RIGHT}" y2="{y:.1}"/>"#);
        }
        let _ = writeln!(s, "</g>");
        let _ = writeln!(s, r##"<g fill="#333">"##);
        for i in 0..=x_ticks {
            let v = x_lo + i as f64 * x_step;
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{}" text-anchor="middle">{:.*}</text>"#,
                self.px(v),
                BOTTOM + 18.0,
                x_dec,
                v
            );
        }
        for i in 0..=y_ticks {
            let v = y_lo + i as f64 * y_step;
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{:.1}" text-anchor="end">{:.*}</text>"#,
                LEFT - 6.0,
                self.py(v) + 4.0,
                y_dec,
                v
            );
        }
        let _ = writeln!(s, "</g>");
    }

    /// Series `i`: its path, its markers and its legend entry.
    fn write_series(&self, s: &mut String, i: usize, name: &str, pts: &[(f64, f64)]) {
        let color = COLORS[i % COLORS.len()];
        let dash = DASHES[i % DASHES.len()];
        // Earlier series are drawn wider, so a later series lying exactly on top of an earlier
        // one (e.g. two recalls that coincide) leaves the earlier one visible at its edges.
        let width = (3.0 - 0.5 * i as f64).max(1.5);
        let dash_attr = if dash.is_empty() {
            String::new()
        } else {
            format!(r#" stroke-dasharray="{dash}""#)
        };
        let mut d = String::new();
        let mut pen_down = false;
        for &(x, y) in pts {
            if x.is_finite() && y.is_finite() {
                let _ = write!(d, "{}{:.1} {:.1} ", if pen_down { "L" } else { "M" }, self.px(x), self.py(y));
                pen_down = true;
            } else {
                pen_down = false;
            }
        }
        let _ = writeln!(
            s,
            r#"<path d="{}" fill="none" stroke="{color}" stroke-width="{width}"{dash_attr}/>"#,
            d.trim_end()
        );
        let _ = writeln!(s, r#"<g fill="{color}">"#);
        for &(x, y) in pts.iter().filter(|(x, y)| x.is_finite() && y.is_finite()) {
            let _ = writeln!(s, r#"<circle cx="{:.1}" cy="{:.1}" r="3"/>"#, self.px(x), self.py(y));
        }
        let _ = writeln!(s, "</g>");
        let ly = TOP + 12.0 + i as f64 * 22.0;
        let lx = RIGHT + 16.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="{width}"{dash_attr}/>"#,
            lx + 28.0
        );
        let _ = writeln!(s, r#"<circle cx="{}" cy="{ly}" r="3" fill="{color}"/>"#, lx + 14.0);
        let _ = writeln!(s, r#"<text x="{}" y="{}">{}</text>"#, lx + 36.0, ly + 4.0, esc(name));
    }
}

/// The plot's frame and the axes' labels.
fn write_axes(s: &mut String, x_label: &str, y_label: &str) {
    let _ = writeln!(
        s,
        r##"<rect x="{LEFT}" y="{TOP}" width="{}" height="{}" fill="none" stroke="#333" stroke-width="1"/>"##,
        RIGHT - LEFT,
        BOTTOM - TOP
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (LEFT + RIGHT) / 2.0,
        BOTTOM + 42.0,
        esc(x_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{0}" text-anchor="middle" transform="rotate(-90 18 {0})">{1}</text>"#,
        (TOP + BOTTOM) / 2.0,
        esc(y_label)
    );
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn nice_axis_covers_data_with_round_ticks() {
        let (lo, hi, step) = nice_axis(0.0, 16.0);
        assert_eq!((lo, hi, step), (0.0, 16.0, 2.0));
        let (lo, hi, step) = nice_axis(0.5, 0.99);
        assert!(lo <= 0.5 && hi >= 0.99, "{lo} {hi}");
        assert!((step - 0.1).abs() < 1e-12 || (step - 0.05).abs() < 1e-12, "{step}");
        let (lo, hi, _) = nice_axis(3.0, 3.0);
        assert!(lo < 3.0 && hi > 3.0);
    }

    #[test]
    fn decimals_match_step() {
        assert_eq!(decimals(2.0), 0);
        assert_eq!(decimals(0.1), 1);
        assert_eq!(decimals(0.25), 2);
        assert_eq!(decimals(0.05), 2);
    }

    #[test]
    fn esc_escapes_markup() {
        assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
