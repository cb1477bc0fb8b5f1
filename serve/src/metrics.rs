//! `/metrics` in the Prometheus text format (version 0.0.4): requests by route template, method and
//! status; latency histograms by route; errors by code; documents, group commits and the writer queue;
//! duplicates found; the semantic channel's backlog; the build; the process's CPU time, resident
//! memory and open files (from /proc/self, on Linux).
//! Labels are route templates (`/v1/documents/{key}`, `unmatched` for every unknown path), never
//! keys or text, and methods are the nine standard ones or `other`: a client cannot grow the label
//! set (and the memory of this page) by inventing paths or methods.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::{MatchedPath, Request};
use parking_lot::Mutex;

/// Upper bounds of the latency buckets, seconds.
const BUCKETS: [f64; 14] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    latency: Mutex<BTreeMap<String, Histogram>>,
    errors: Mutex<BTreeMap<&'static str, u64>>,
    /// Group commits made by the writer thread.
    pub batches: AtomicU64,
    /// Documents committed by the writer thread (stored or skipped).
    pub batch_docs: AtomicU64,
    /// Documents waiting for the writer.
    pub queue_depth: AtomicU64,
    /// Documents committed through `POST /v1/documents`.
    pub bulk_docs: AtomicU64,
    /// Requests refused because a queue or slot was full.
    pub rejected_busy: AtomicU64,
    /// Duplicate checks (`POST /v1/duplicates`, each line of the batch form) answered with at
    /// least one hit.
    pub checks_with_hits: AtomicU64,
}

impl Metrics {
    pub fn observe(&self, route: &str, method: &'static str, status: u16, took: Duration, code: Option<&'static str>) {
        *self
            .requests
            .lock()
            .entry((route.to_string(), method.to_string(), status))
            .or_default() += 1;
        let s = took.as_secs_f64();
        let mut lat = self.latency.lock();
        let h = lat.entry(route.to_string()).or_default();
        for (i, b) in BUCKETS.iter().enumerate() {
            if s <= *b {
                h.counts[i] += 1;
            }
        }
        h.count += 1;
        h.sum += s;
        drop(lat);
        if let Some(c) = code {
            *self.errors.lock().entry(c).or_default() += 1;
        }
    }

    pub fn render(&self, stats: &fpdb::Stats, inflight: u64) -> String {
        let mut o = String::new();
        self.render_requests(&mut o);
        self.render_counts(&mut o, stats, inflight);
        self.render_duplicates(&mut o, stats);
        render_build(&mut o);
        render_process(&mut o);
        render_semantic(&mut o, stats);
        o
    }

    /// The documents, groups and segment bytes, the writer thread's counters and queue, the bulk
    /// documents, the requests in flight and those refused busy.
    fn render_counts(&self, o: &mut String, stats: &fpdb::Stats, inflight: u64) {
        let ld = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let gauges: [(&str, &str, &str, u64); 9] = [
            ("fpdb_documents", "Live documents in the database.", "gauge", stats.docs),
            ("fpdb_groups", "Duplicate groups with at least two members.", "gauge", stats.groups),
            (
                "fpdb_segment_bytes",
                "Bytes in shingle segment files.",
                "gauge",
                stats.segment_bytes,
            ),
            (
                "fpdb_writer_batches_total",
                "Group commits of the writer thread (PUT).",
                "counter",
                ld(&self.batches),
            ),
            (
                "fpdb_writer_documents_total",
                "Documents committed by the writer thread (PUT).",
                "counter",
                ld(&self.batch_docs),
            ),
            (
                "fpdb_writer_queue_depth",
                "Documents waiting for the writer thread.",
                "gauge",
                ld(&self.queue_depth),
            ),
            (
                "fpdb_bulk_documents_total",
                "Documents committed through POST /v1/documents.",
                "counter",
                ld(&self.bulk_docs),
            ),
            (
                "fpdb_http_inflight",
                "Requests being worked on (--max-inflight bounds it; /healthz and /metrics aside).",
                "gauge",
                inflight,
            ),
            (
                "fpdb_rejected_busy_total",
                "Requests refused (429 or 503) because a queue, slot or bound was full.",
                "counter",
                ld(&self.rejected_busy),
            ),
        ];
        for (name, help, kind, v) in gauges {
            scalar(o, name, help, kind, v);
        }
    }

    /// The duplicate documents, the duplicate checks with hits, the semantic channel's backlog.
    fn render_duplicates(&self, o: &mut String, stats: &fpdb::Stats) {
        let ld = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let more: [(&str, &str, &str, u64); 3] = [
            (
                "fpdb_duplicate_documents",
                "Stored documents that are near-duplicates of an earlier one (group members other than the canonical).",
                "gauge",
                stats.grouped_docs.saturating_sub(stats.groups),
            ),
            (
                "fpdb_duplicate_checks_with_hits_total",
                "Duplicate checks answered with at least one hit.",
                "counter",
                ld(&self.checks_with_hits),
            ),
            (
                "fpdb_semantic_pending",
                "Acknowledged documents the semantic channel has not embedded yet (0 without the channel).",
                "gauge",
                stats.semantic_pending,
            ),
        ];
        for (name, help, kind, v) in more {
            scalar(o, name, help, kind, v);
        }
    }

    /// The per-route families: requests by status, the latency histograms, errors by code.
    fn render_requests(&self, o: &mut String) {
        let _ = writeln!(
            o,
            "# HELP fpdb_http_requests_total HTTP requests by route template, method and status."
        );
        let _ = writeln!(o, "# TYPE fpdb_http_requests_total counter");
        for ((route, method, status), n) in self.requests.lock().iter() {
            let _ = writeln!(
                o,
                "fpdb_http_requests_total{{route=\"{}\",method=\"{method}\",status=\"{status}\"}} {n}",
                escape(route)
            );
        }
        let _ = writeln!(o, "# HELP fpdb_http_request_duration_seconds Request latency by route template.");
        let _ = writeln!(o, "# TYPE fpdb_http_request_duration_seconds histogram");
        for (route, h) in self.latency.lock().iter() {
            let r = escape(route);
            for (b, c) in BUCKETS.iter().zip(h.counts) {
                let _ = writeln!(o, "fpdb_http_request_duration_seconds_bucket{{route=\"{r}\",le=\"{b}\"}} {c}");
            }
            let _ = writeln!(
                o,
                "fpdb_http_request_duration_seconds_bucket{{route=\"{r}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(o, "fpdb_http_request_duration_seconds_sum{{route=\"{r}\"}} {}", h.sum);
            let _ = writeln!(o, "fpdb_http_request_duration_seconds_count{{route=\"{r}\"}} {}", h.count);
        }
        let _ = writeln!(o, "# HELP fpdb_http_errors_total Error responses by stable error code.");
        let _ = writeln!(o, "# TYPE fpdb_http_errors_total counter");
        for (code, n) in self.errors.lock().iter() {
            let _ = writeln!(o, "fpdb_http_errors_total{{code=\"{code}\"}} {n}");
        }
    }
}

/// The build's info line: version and whether the semantic feature is in.
fn render_build(o: &mut String) {
    let _ = writeln!(
        o,
        "# HELP fpdb_build_info The running build: version and features.\n# TYPE fpdb_build_info gauge\nfpdb_build_info{{version=\"{}\",semantic=\"{}\"}} 1",
        env!("CARGO_PKG_VERSION"),
        cfg!(feature = "semantic"),
    );
}

/// One scalar family: its HELP and TYPE lines and its value.
fn scalar(o: &mut String, name: &str, help: &str, kind: &str, v: u64) {
    let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}");
}

/// The process metrics of the Prometheus conventions, read from /proc/self (absent where it is not
/// readable): CPU seconds (utime + stime of /proc/self/stat, in the kernel's fixed USER_HZ of 100
/// ticks a second), resident bytes (VmRSS of /proc/self/status) and open file descriptors (the
/// entries of /proc/self/fd).
fn render_process(o: &mut String) {
    let stat = std::fs::read_to_string("/proc/self/stat").ok();
    // The fields after the command name (which may hold spaces), from field 3 on: utime is field 14.
    let cpu = stat.as_deref().and_then(|s| {
        let rest = &s[s.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split(' ').collect();
        let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
        Some(ticks as f64 / 100.0)
    });
    let start = stat.as_deref().and_then(|s| {
        let rest = &s[s.rfind(')')? + 2..];
        rest.split(' ').nth(19)?.parse::<u64>().ok()
    });
    let rss = std::fs::read_to_string("/proc/self/status").ok().and_then(|s| {
        let kb = s.lines().find_map(|l| l.strip_prefix("VmRSS:"))?;
        Some(kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok()? * 1024)
    });
    let fds = std::fs::read_dir("/proc/self/fd").ok().map(|d| d.count() as u64);
    let boot = std::fs::read_to_string("/proc/stat").ok().and_then(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("btime "))
            .and_then(|b| b.trim().parse::<u64>().ok())
    });
    let mut line = |name: &str, help: &str, kind: &str, v: Option<String>| {
        if let Some(v) = v {
            let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}");
        }
    };
    line(
        "process_cpu_seconds_total",
        "User and system CPU time spent, seconds.",
        "counter",
        cpu.map(|c| format!("{c}")),
    );
    line(
        "process_resident_memory_bytes",
        "Resident memory, bytes.",
        "gauge",
        rss.map(|r| r.to_string()),
    );
    line("process_open_fds", "Open file descriptors.", "gauge", fds.map(|n| n.to_string()));
    line(
        "process_start_time_seconds",
        "Start time of the process since the Unix epoch, seconds.",
        "gauge",
        start.zip(boot).map(|(s, b)| format!("{}", b as f64 + s as f64 / 100.0)),
    );
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// The label of a method: one of the nine standard methods, else `other`.
pub fn method_label(m: &axum::http::Method) -> &'static str {
    use axum::http::Method as M;
    for (known, label) in [
        (M::GET, "GET"),
        (M::PUT, "PUT"),
        (M::POST, "POST"),
        (M::DELETE, "DELETE"),
        (M::HEAD, "HEAD"),
        (M::OPTIONS, "OPTIONS"),
        (M::PATCH, "PATCH"),
        (M::TRACE, "TRACE"),
        (M::CONNECT, "CONNECT"),
    ] {
        if *m == known {
            return label;
        }
    }
    "other"
}

/// The label of a route: its template, or `unmatched`.
pub fn route_label(req: &Request) -> String {
    req.extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |m| m.as_str().to_string())
}

/// The semantic channel's gauges, when the database has the channel: pending, vectors, documents
/// set aside, and the indexer's state (1 for the current one of `running`, `degraded`,
/// `stopped`, `off`).
fn render_semantic(o: &mut String, stats: &fpdb::Stats) {
    let Some(state) = stats.semantic_indexer.as_deref() else { return };
    for (name, help, v) in [
        (
            "fpdb_semantic_vectors",
            "Vectors held by the semantic channel.",
            stats.semantic_vectors,
        ),
        (
            "fpdb_semantic_set_aside",
            "Live documents the semantic indexer set aside (the model failed on them, or their queued text was unreadable).",
            stats.semantic_set_aside,
        ),
    ] {
        let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}");
    }
    let _ = writeln!(
        o,
        "# HELP fpdb_semantic_indexer_state The semantic indexer's state (1 for the current one).\n# TYPE fpdb_semantic_indexer_state gauge"
    );
    for s in ["running", "degraded", "stopped", "off"] {
        let _ = writeln!(o, "fpdb_semantic_indexer_state{{state=\"{s}\"}} {}", u8::from(s == state));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invented_methods_share_one_label() {
        let m = Metrics::default();
        for i in 0..1000 {
            let method = axum::http::Method::from_bytes(format!("M{i}").as_bytes()).unwrap();
            m.observe("unmatched", method_label(&method), 405, Duration::from_millis(1), None);
        }
        m.observe("/healthz", method_label(&axum::http::Method::GET), 200, Duration::ZERO, None);
        assert_eq!(m.requests.lock().len(), 2);
        assert_eq!(m.requests.lock()[&("unmatched".to_string(), "other".to_string(), 405)], 1000);
    }
}
