//! Printers shared by the commands: hits and insert outcomes as tables or JSON lines.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use fpdb::fingerprint::similarity::MethodScore;
use fpdb::output::{OutcomeLine, Rejection};
use fpdb::{Hit, InsertOutcome};
use serde::Serialize;

/// `-q/--quiet`: set once by `main` before the command runs.
static QUIET: AtomicBool = AtomicBool::new(false);

pub fn set_quiet(q: bool) {
    QUIET.store(q, Ordering::Relaxed);
}

/// Whether `-q/--quiet` asked for nothing but errors.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// A line on stderr that is not an error (summaries, progress, notes): left out under `-q`.
macro_rules! note {
    ($($t:tt)*) => {
        if !$crate::print::quiet() {
            eprintln!($($t)*);
        }
    };
}
pub(crate) use note;

/// One `--json` line: the value's shape (`fpdb::output`) as a JSON object with its keys sorted,
/// as every command has printed them.
pub fn json_line(out: &mut impl Write, v: &impl Serialize) -> io::Result<()> {
    let v = serde_json::to_value(v).map_err(io::Error::other)?;
    writeln!(out, "{v}")
}

/// The `--json` line of an insert's outcome ([`OutcomeLine`]: the group flat).
pub fn outcome_line(out: &mut impl Write, o: &InsertOutcome) -> io::Result<()> {
    let v = OutcomeLine(o).to_value().map_err(io::Error::other)?;
    writeln!(out, "{v}")
}

/// The `--json` line of a rejected input item (`ingest`, `query --jsonl`): its position, origin
/// and error.
pub fn rejection_line(out: &mut impl Write, seq: u64, origin: &str, e: &fpdb::Error) -> io::Result<()> {
    json_line(
        out,
        &Rejection {
            seq,
            origin: origin.into(),
            error: e.to_string(),
        },
    )
}

/// A stored document's containment sample cap in words (`init`, `stats`).
pub fn cap_words(max_samples: Option<u32>) -> String {
    match max_samples {
        Some(m) => format!("at most ~{m} samples a document"),
        None => "no sample cap".into(),
    }
}

/// A Jaccard value for a table cell.
pub fn fmt_j(j: Option<f64>) -> String {
    j.map_or("-".into(), |j| format!("{j:.4}"))
}

pub fn print_hits(out: &mut impl Write, hits: &[Hit]) -> io::Result<()> {
    if hits.iter().any(|h| h.cosine.is_some()) {
        return print_semantic_hits(out, hits);
    }
    // The SimHash methods show the Hamming distance; the others their own similarity.
    let simhash = hits.iter().all(|h| matches!(h.score, MethodScore::Hamming(_)));
    if simhash {
        writeln!(out, "{:<40} {:>8} {:>8} {:>8}", "KEY", "HAMMING", "JACCARD", "SHARED")?;
    } else {
        writeln!(out, "{:<40} {:>8} {:>8}  SIMILARITY", "KEY", "JACCARD", "SHARED")?;
    }
    for h in hits {
        let shared = h.shared.map_or("-".into(), |s| s.to_string());
        if simhash {
            writeln!(out, "{:<40} {:>8} {:>8} {:>8}", h.key, h.hamming, fmt_j(h.jaccard), shared)?;
        } else {
            writeln!(out, "{:<40} {:>8} {:>8}  {}", h.key, fmt_j(h.jaccard), shared, h.score)?;
        }
    }
    Ok(())
}

/// Hits of a database with the semantic channel: the channels that matched, the cosine beside
/// the text channel's Hamming distance and Jaccard.
fn print_semantic_hits(out: &mut impl Write, hits: &[Hit]) -> io::Result<()> {
    writeln!(out, "{:<40} {:>8} {:>8} {:>8}  CHANNELS", "KEY", "HAMMING", "JACCARD", "COSINE")?;
    for h in hits {
        let channels: Vec<&str> = h.channels.iter().map(|c| c.as_str()).collect();
        let cosine = h.cosine.map_or("-".into(), |c| format!("{c:.4}"));
        writeln!(
            out,
            "{:<40} {:>8} {:>8} {:>8}  {}",
            h.key,
            h.hamming,
            fmt_j(h.jaccard),
            cosine,
            channels.join("+")
        )?;
    }
    Ok(())
}

/// Containment hits: the query inside the document (`IN DOC`), the document inside the query
/// (`DOC IN`), Jaccard and shared shingles.
pub fn print_contain_hits(out: &mut impl Write, hits: &[Hit]) -> io::Result<()> {
    writeln!(
        out,
        "{:<40} {:>8} {:>8} {:>8} {:>8}",
        "KEY", "IN DOC", "DOC IN", "JACCARD", "SHARED"
    )?;
    for h in hits {
        let shared = h.shared.map_or("-".into(), |s| s.to_string());
        writeln!(
            out,
            "{:<40} {:>8} {:>8} {:>8} {:>8}",
            h.key,
            fmt_j(h.containment),
            fmt_j(h.reverse_containment),
            fmt_j(h.jaccard),
            shared
        )?;
    }
    Ok(())
}

pub fn print_outcome(out: &mut impl Write, o: &InsertOutcome) -> io::Result<()> {
    match (o.id, &o.group) {
        (Some(id), Some(g)) => {
            let replaced = o.replaced.map(|r| format!(", replaced doc {r}")).unwrap_or_default();
            writeln!(
                out,
                "stored {:?} as doc {id}{replaced}; group {} (canonical {:?}, {} member{})",
                o.key,
                g.id,
                g.canonical,
                g.size,
                if g.size == 1 { "" } else { "s" }
            )?;
        }
        _ => writeln!(out, "skipped {:?}: it duplicates {} stored document(s)", o.key, o.duplicates.len())?,
    }
    if o.duplicates.is_empty() {
        writeln!(out, "no near-duplicates")
    } else {
        print_hits(out, &o.duplicates)
    }
}

/// One line per containment relation of a stored or skipped document (`ingest --containment`, `insert --containment`).
pub fn print_relations(out: &mut impl Write, o: &InsertOutcome) -> io::Result<()> {
    for h in &o.containment {
        let (c, r) = (h.containment.unwrap_or(0.0), h.reverse_containment.unwrap_or(0.0));
        let (how, value) = if c >= r { ("is inside", c) } else { ("contains", r) };
        writeln!(
            out,
            "containment: {:?} {how} {:?} ({value:.4}; reverse {:.4}, J = {})",
            o.key,
            h.key,
            if c >= r { r } else { c },
            fmt_j(h.jaccard)
        )?;
    }
    Ok(())
}
