//! The server's shared state (`AppState`: the database handle, the writer, the admission
//! semaphores, health, metrics and the configuration) and the distance bound derived from it.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use fpdb::Db;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::auth::Auth;
use super::errors::ApiError;
use super::metrics::Metrics;
use super::writer::{Health, Writer};
use crate::Config;

pub struct AppState {
    pub db: Db,
    pub writer: Arc<Writer>,
    pub metrics: Arc<Metrics>,
    pub auth: Auth,
    pub bulk: Arc<Semaphore>,
    /// Requests being worked on (`--max-inflight`).
    pub inflight: Arc<Semaphore>,
    /// Duplicate checks being worked on (`--max-queries`).
    pub queries: Arc<Semaphore>,
    /// Set once the server is failed (writer panic, poisoned handle): `/healthz` answers 503.
    pub health: Arc<Health>,
    /// Set at shutdown: bulk ingests stop reading their body and commit what they have.
    pub stopping: Arc<AtomicBool>,
    /// When [`AppState::distance_bound`] was computed, and its value.
    pub bound_cache: parking_lot::Mutex<(Option<std::time::Instant>, u32)>,
    pub cfg: Config,
}

/// Modelled probe time (ns) a duplicate check may ask for: see [`AppState::distance_bound`].
pub const PROBE_BUDGET_NS: f64 = 10e6;

impl AppState {
    /// A permit of `sem` (one of the admission semaphores), or — when none is free at once — the
    /// `refusal`, counted as a busy rejection in the metrics. Nothing waits for a permit.
    pub fn permit(&self, sem: &Arc<Semaphore>, refusal: impl FnOnce() -> ApiError) -> Result<OwnedSemaphorePermit, ApiError> {
        sem.clone().try_acquire_owned().map_err(|_| {
            self.metrics.rejected_busy.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            refusal()
        })
    }

    /// The largest `max_distance` a duplicate check may ask for: the database's own k always, and
    /// beyond it every k that the index answers fast at the current number of documents n:
    ///
    /// * the probe, by the layout's cost model (`query_cost_ns`: probed buckets × 380 ns +
    ///   expected entries scanned × 1 ns), within [`PROBE_BUDGET_NS`] (10 ms), and
    /// * the candidates it gathers — the documents within Hamming distance k, n · P(Bin(64, ½) ≤ k)
    ///   for SimHashes spread over the space — at most `--max-candidates`.
    ///
    /// Both run on the published state as a whole (the library collects the candidates under its
    /// read lock and verifies them afterwards on a snapshot, bounded by `--max-candidates` and the
    /// deadline), so this bounds how long one request can make the writer's next publish wait.
    /// At 1M documents and the default layout this is k = 22 (~8,500 expected candidates; k = 32
    /// would gather half the database). The document count is re-read at most once a second.
    pub fn distance_bound(&self) -> u32 {
        let mut cache = self.bound_cache.lock();
        if cache.0.is_none_or(|t| t.elapsed() >= std::time::Duration::from_secs(1)) {
            let docs = self.db.stats().docs;
            let own = self.db.config().max_distance;
            let layout = self.db.layout();
            let max_candidates = self.cfg.max_candidates as f64;
            let fast = |k: u32| {
                use fpdb::internals::layout::{ball_size, query_cost_ns};
                let within = ball_size(64, k) as f64 / 2f64.powi(64) * docs as f64;
                query_cost_ns(layout, k, docs) <= PROBE_BUDGET_NS && within <= max_candidates
            };
            let bound = (own..=fpdb::MAX_DISTANCE)
                .take_while(|&k| k == own || fast(k))
                .last()
                .unwrap_or(own);
            *cache = (Some(std::time::Instant::now()), bound);
        }
        cache.1
    }
}
