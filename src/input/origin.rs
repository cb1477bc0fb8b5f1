//! Where each item of an input came from (a line, a WARC record, a file), held between the
//! reader that reads it and the report that names it.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Where each item came from (`line 12`, or a path), by input position, shared between the input
/// reader (which adds each item's origin) and the ingest's report (which takes it back, in input
/// order, as each item is reported). Only the items between the two are held: memory stays flat
/// however long the input is (a continuous ingest of millions of lines kept every origin before).
pub type Origins = Arc<Mutex<OriginLog>>;

/// One item's origin: a line of a named JSONL input, a record of a WARC input, or a file.
#[derive(Debug)]
pub(super) enum Origin {
    Line(u64),
    Record { n: u64, offset: u64 },
    File(PathBuf),
}

/// The origins of the items read and not yet reported ([`Origins`]).
#[derive(Debug, Default)]
pub struct OriginLog {
    /// The name of the JSONL input (`stdin` or its path) that `Origin::Line` refers to.
    pub(super) name: String,
    /// The input position of the first entry of `held`.
    first: u64,
    pub(super) held: VecDeque<Origin>,
    /// WARC records that hold no document, counted by type (`warcinfo`, `request`, `response
    /// (image/png)`, ...).
    pub(super) skipped: std::collections::BTreeMap<String, u64>,
}

impl OriginLog {
    pub(super) fn push(&mut self, o: Origin) {
        self.held.push_back(o);
    }

    /// The origin of item `seq` (`None` if it was not logged); earlier ones are dropped, so each
    /// item is taken once, in input order.
    pub fn take(&mut self, seq: u64) -> Option<String> {
        if seq < self.first {
            return None;
        }
        while self.first < seq {
            self.held.pop_front()?;
            self.first += 1;
        }
        let o = self.held.pop_front()?;
        self.first += 1;
        Some(match o {
            Origin::Line(n) => line_origin(&self.name, n),
            Origin::Record { n, offset } => record_origin(&self.name, n, offset),
            Origin::File(p) => p.display().to_string(),
        })
    }

    /// The WARC records read that held no document, by type, and their number.
    pub fn skipped_records(&self) -> (u64, String) {
        let total = self.skipped.values().sum();
        let by_kind = self.skipped.iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(", ");
        (total, by_kind)
    }
}

pub(super) fn record_origin(name: &str, n: u64, offset: u64) -> String {
    format!("{name} record {n} (byte {offset} decompressed)")
}

pub(super) fn line_origin(name: &str, line: u64) -> String {
    format!("{name} line {line}")
}

/// The origin log, locked (a panic elsewhere while it was held leaves it usable).
pub fn lock(origins: &Origins) -> std::sync::MutexGuard<'_, OriginLog> {
    origins.lock().unwrap_or_else(|p| p.into_inner())
}
