//! `/metrics` in the Prometheus text format (version 0.0.4): requests by route template, method and
//! status; latency histograms by route; errors by code; documents, group commits and the writer queue.
//! Labels are route templates (`/v1/documents/{key}`, `unmatched` for every unknown path), never
//! keys or text, and methods are the nine standard ones or `other`: a client cannot grow the label
//! set (and the memory of this page) by inventing paths or methods.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use parking_lot::Mutex;

use super::errors::{self, ErrorCode, RequestId};
use super::state::AppState;

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
            let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}");
        }
        o
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

/// Middleware (the outermost): gives the request its id, counts and times it, and finishes its
/// answer (error bodies get the request id, details go to the log: [`errors::finish`]); with
/// `--log-requests`, one stderr line per request (method, route template, status, milliseconds,
/// request id; never keys or text).
pub async fn track(State(state): State<Arc<AppState>>, mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = route_label(&req);
    let method = method_label(req.method());
    let id = RequestId::next();
    req.extensions_mut().insert(id.clone());
    let resp = errors::finish(next.run(req).await, &id);
    let took = started.elapsed();
    let code = resp.extensions().get::<ErrorCode>().map(|c| c.0);
    state.metrics.observe(&route, method, resp.status().as_u16(), took, code);
    if state.cfg.log_requests {
        eprintln!(
            "fpdb serve: {method} {route} {} {:.3} ms {}{}",
            resp.status().as_u16(),
            took.as_secs_f64() * 1e3,
            id.0,
            code.map(|c| format!(" {c}")).unwrap_or_default()
        );
    }
    resp
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
