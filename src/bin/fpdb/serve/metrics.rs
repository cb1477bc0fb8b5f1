//! `/metrics` in the Prometheus text format (version 0.0.4): requests by route template, method and
//! status; latency histograms by route; errors by code; documents, group commits and the writer queue.
//! Labels are route templates (`/v1/documents/{key}`), never keys or text.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use parking_lot::Mutex;

use super::errors::ErrorCode;
use super::router::AppState;

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
}

impl Metrics {
    pub fn observe(&self, route: &str, method: &str, status: u16, took: Duration, code: Option<&'static str>) {
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

    pub fn render(&self, stats: &fpdb::Stats) -> String {
        let mut o = String::new();
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
        let g = |o: &mut String, name: &str, help: &str, kind: &str, v: String| {
            let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}");
        };
        let ld = |a: &AtomicU64| a.load(Ordering::Relaxed).to_string();
        g(
            &mut o,
            "fpdb_documents",
            "Live documents in the database.",
            "gauge",
            stats.docs.to_string(),
        );
        g(
            &mut o,
            "fpdb_groups",
            "Duplicate groups with at least two members.",
            "gauge",
            stats.groups.to_string(),
        );
        g(
            &mut o,
            "fpdb_segment_bytes",
            "Bytes in shingle segment files.",
            "gauge",
            stats.segment_bytes.to_string(),
        );
        g(
            &mut o,
            "fpdb_writer_batches_total",
            "Group commits of the writer thread (PUT).",
            "counter",
            ld(&self.batches),
        );
        g(
            &mut o,
            "fpdb_writer_documents_total",
            "Documents committed by the writer thread (PUT).",
            "counter",
            ld(&self.batch_docs),
        );
        g(
            &mut o,
            "fpdb_writer_queue_depth",
            "Documents waiting for the writer thread.",
            "gauge",
            ld(&self.queue_depth),
        );
        g(
            &mut o,
            "fpdb_bulk_documents_total",
            "Documents committed through POST /v1/documents.",
            "counter",
            ld(&self.bulk_docs),
        );
        g(
            &mut o,
            "fpdb_rejected_busy_total",
            "Requests answered 429 because a queue or slot was full.",
            "counter",
            ld(&self.rejected_busy),
        );
        o
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// Middleware: counts and times every request; with `--log-requests`, one stderr line per request
/// (method, route template, status, milliseconds; never keys or text).
pub async fn track(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |m| m.as_str().to_string());
    let method = req.method().to_string();
    let resp = next.run(req).await;
    let took = started.elapsed();
    let code = resp.extensions().get::<ErrorCode>().map(|c| c.0);
    state.metrics.observe(&route, &method, resp.status().as_u16(), took, code);
    if state.cfg.log_requests {
        eprintln!(
            "fpdb serve: {method} {route} {} {:.3} ms{}",
            resp.status().as_u16(),
            took.as_secs_f64() * 1e3,
            code.map(|c| format!(" {c}")).unwrap_or_default()
        );
    }
    resp
}
