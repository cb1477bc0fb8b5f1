//! `fpdb serve`: the database as a real-time near-duplicate service over HTTP (the API of
//! the CORE paper). One process owns the database (the single writer) and serves many clients.
//! The `fpdb` command (the `fpdb-cli` package) parses its flags and calls [`run`] with a plain
//! [`Config`]; this crate has no command-line parser of its own.
//!
//! * `handlers`: one thin function per endpoint, calling the same library API the CLI calls; the
//!   engine's blocking calls run on tokio's blocking pool, never on the async threads.
//! * `writer`: single-document writes (`PUT`) go through one dedicated writer thread fed by a bounded
//!   queue: concurrent requests share a group commit, and a full queue answers 429 with
//!   `Retry-After` (backpressure, never unbounded memory).
//! * `auth`: bearer token from `--token-file`, compared in constant time; required to listen on a
//!   non-loopback address. `metrics`: Prometheus text. `openapi`: the contract, generated from the
//!   handlers' annotations and the request and response types of `schemas`. `errors`: JSON errors
//!   with stable codes.
//!
//! * `conn`: the accept loop (connection cap, header-read timeout, JSON parse errors) and graceful
//!   shutdown; `limits`: per-request admission (requests and duplicate checks in flight) and the
//!   request deadline.
//!
//! Document text is never logged: `--log-requests` prints method, route template, status, latency
//! and request id. See docs/serve.md.

/// A line on stderr that is not an error (the start and shutdown notes): left out when the first
/// argument, [`Config::quiet`], is set (`fpdb -q serve`).
macro_rules! note {
    ($quiet:expr, $($t:tt)*) => {
        if !$quiet {
            eprintln!($($t)*);
        }
    };
}

mod auth;
mod conn;
mod errors;
mod handlers;
mod layers;
mod limits;
pub mod log;
mod metrics;
mod openapi;
mod review;
mod router;
mod schemas;
mod state;
mod writer;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use fpdb::{Db, Error, Options};
pub use log::LogFormat;

/// Everything `fpdb serve` is configured with (the `fpdb` command fills it from its flags).
#[derive(Clone, Debug)]
pub struct Config {
    /// Database directory (created with the default settings when it holds no database).
    pub db: PathBuf,
    /// Address to listen on; port 0 picks a free port (the bound address is printed on stdout).
    pub listen: SocketAddr,
    /// File holding the access token.
    pub token_file: Option<PathBuf>,
    /// Also require the token on reads (GET, POST /v1/duplicates, /metrics, /openapi.json).
    pub token_for_reads: bool,
    /// Largest request body of single-document endpoints.
    pub max_body_bytes: usize,
    /// Largest NDJSON body of `POST /v1/documents`.
    pub max_bulk_bytes: usize,
    /// Documents waiting for the writer at most; beyond, `PUT` answers 429.
    pub queue_depth: usize,
    /// Documents per group commit of the writer, at most.
    pub batch_size: usize,
    /// Concurrent `POST /v1/documents` requests at most; beyond, 429.
    pub bulk_slots: usize,
    /// Fingerprinting threads of each bulk ingest (0 = one per core).
    pub workers: usize,
    /// Threads one query's probe may use (`Options::query_threads`; 0 = one per core).
    pub query_threads: usize,
    /// fsync every commit (default true).
    pub sync: bool,
    /// One stderr line per request (method, route template, status, latency; never text or keys).
    pub log_requests: bool,
    /// After SIGINT/SIGTERM, wait at most this long for in-flight requests.
    pub shutdown_timeout: Duration,
    /// Open connections at most; one more is answered 503 and closed.
    pub max_connections: usize,
    /// Requests being worked on at most (`/healthz`, `/metrics` aside); more: 503 `overloaded`.
    pub max_inflight: usize,
    /// `POST /v1/duplicates` being worked on at most; more: 503 `overloaded`.
    pub max_queries: usize,
    /// The request head must arrive within this.
    pub header_timeout: Duration,
    /// A request body must arrive within this (408).
    pub body_timeout: Duration,
    /// A request must be answered within this (503 `timeout`).
    pub request_timeout: Duration,
    /// A duplicate check verifies at most this many candidates (then `truncated: true`).
    pub max_candidates: usize,
    /// A duplicate check stops verifying this long after its body arrived (then `truncated: true`).
    pub query_deadline: Duration,
    /// A database created here keeps its texts (`--store-text`, as `fpdb init --store-text`).
    pub store_text: bool,
    /// The log's form on stderr (`--log-format`).
    pub log_format: LogFormat,
    /// `fpdb -q serve`: neither the bound address on stdout nor the start and shutdown notes on
    /// stderr (errors and the request log are still written).
    pub quiet: bool,
}

fn usage(name: &'static str, message: String) -> anyhow::Error {
    anyhow::Error::new(Error::InvalidOption { name, message })
}

/// Reads and checks the token file: one line, at least 16 characters, surrounding whitespace ignored.
fn read_token(path: &std::path::Path) -> Result<Vec<u8>> {
    let raw = std::fs::read_to_string(path).map_err(|e| Error::Io {
        op: "read token file",
        path: path.to_path_buf(),
        source: e,
    })?;
    let token = raw.trim();
    if token.len() < 16 || token.contains(char::is_whitespace) {
        return Err(usage(
            "token-file",
            format!(
                "{} must hold one token of at least 16 characters without whitespace (e.g. `head -c 32 /dev/urandom | base64 > {}`)",
                path.display(),
                path.display()
            ),
        ));
    }
    Ok(token.as_bytes().to_vec())
}

/// Installs the log ([`log::init`]), runs the server until SIGINT or SIGTERM, then shuts down
/// gracefully: stops accepting, lets in-flight requests finish (at most `shutdown_timeout`), drains
/// the writer queue, flushes and returns success.
pub fn run(cfg: Config) -> Result<ExitCode> {
    log::init(cfg.log_format);
    let token = check_config(&cfg)?;
    let opts = Options {
        sync: cfg.sync,
        query_threads: cfg.query_threads,
        ..Options::default()
    };
    let db = if cfg.db.join("rocksdb").exists() {
        Db::open_with(&cfg.db, opts)
    } else {
        Db::create_with(&cfg.db, &fpdb::CreateOptions::default().with_store_text(cfg.store_text), opts)
    }
    .with_context(|| format!("cannot open database {}", cfg.db.display()))?;

    arm_failpoints();
    // Blocking tasks: each admitted request runs at most one at a time (`--max-inflight`), bulk
    // ingests one each; a few more for requests that outlived their deadline.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("fpdb-serve")
        .max_blocking_threads(cfg.max_inflight + cfg.bulk_slots + 16)
        .build()
        .context("cannot start the tokio runtime")?;
    let metrics = Arc::new(metrics::Metrics::default());
    let health = Arc::new(writer::Health::default());
    let writer = writer::Writer::start(db.clone(), cfg.queue_depth, cfg.batch_size, metrics.clone(), health.clone());
    let state = Arc::new(state::AppState {
        db: db.clone(),
        writer: writer.clone(),
        metrics,
        auth: auth::Auth::new(token, cfg.token_for_reads),
        bulk: Arc::new(tokio::sync::Semaphore::new(cfg.bulk_slots)),
        inflight: Arc::new(tokio::sync::Semaphore::new(cfg.max_inflight)),
        queries: Arc::new(tokio::sync::Semaphore::new(cfg.max_queries)),
        health,
        stopping: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        bound_cache: parking_lot::Mutex::new((None, 0)),
        cfg: cfg.clone(),
    });
    let result = rt.block_on(serve_until_stopped(state, cfg));
    // Drain the writer queue (every accepted document is committed and answered), then flush.
    // The writer thread is joined; a bulk ingest that outlasted the shutdown timeout may still be
    // committing: the exit cuts it as a crash would (its acknowledged documents are durable).
    let drained = writer.close();
    rt.shutdown_timeout(Duration::from_secs(5));
    result?;
    drained?;
    db.flush().context("flushing the database")?;
    eprintln!("fpdb serve: stopped cleanly");
    Ok(ExitCode::SUCCESS)
}

/// The settings refused before anything opens: a token is required off loopback and for
/// `--token-for-reads`, and every bound is at least 1. Returns the token read from its file.
fn check_config(cfg: &Config) -> Result<Option<Vec<u8>>> {
    let token = cfg.token_file.as_deref().map(read_token).transpose()?;
    if token.is_none() && !cfg.listen.ip().is_loopback() {
        return Err(usage(
            "listen",
            format!(
                "{} is not a loopback address: listening there requires an access token (--token-file PATH), so that no one on the network can write without it",
                cfg.listen
            ),
        ));
    }
    if token.is_none() && cfg.token_for_reads {
        return Err(usage("token-for-reads", "needs --token-file".into()));
    }
    for (name, v) in [
        ("max-body-bytes", cfg.max_body_bytes),
        ("max-bulk-bytes", cfg.max_bulk_bytes),
        ("queue-depth", cfg.queue_depth),
        ("batch-size", cfg.batch_size),
        ("bulk-slots", cfg.bulk_slots),
        ("max-connections", cfg.max_connections),
        ("max-inflight", cfg.max_inflight),
        ("max-queries", cfg.max_queries),
        ("max-candidates", cfg.max_candidates),
    ] {
        if v == 0 {
            return Err(usage(name, "must be at least 1".into()));
        }
    }
    Ok(token)
}

/// Binds, prints the address, serves until SIGINT/SIGTERM, then waits for the bulk ingests still
/// running to commit what they took.
async fn serve_until_stopped(state: Arc<state::AppState>, cfg: Config) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(cfg.listen).await.map_err(|e| Error::Io {
        op: "listen",
        path: PathBuf::from(cfg.listen.to_string()),
        source: e,
    })?;
    let addr = listener.local_addr().context("reading the bound address")?;
    // The one line on stdout: scripts and tests read the bound address from it.
    if !cfg.quiet {
        println!("fpdb serve: listening on http://{addr}");
        use std::io::Write as _;
        std::io::stdout().flush().ok();
    }
    note!(
        cfg.quiet,
        "fpdb serve: database {} ({} documents); token {}; writer queue {} documents",
        cfg.db.display(),
        state.db.stats().docs,
        if state.auth.enabled() {
            if cfg.token_for_reads {
                "required for every request"
            } else {
                "required for writes"
            }
        } else {
            "off (loopback only)"
        },
        cfg.queue_depth
    );
    let app = router::router(state.clone());
    let signal = async {
        shutdown_signal().await;
        note!(
            cfg.quiet,
            "fpdb serve: shutting down: no new connections, finishing in-flight requests"
        );
        // A second signal ends the process at once (as a crash: what was acknowledged is durable).
        tokio::spawn(async {
            shutdown_signal().await;
            eprintln!("fpdb serve: a second signal: exiting now");
            std::process::exit(130);
        });
    };
    let limits = conn::Limits {
        max_connections: cfg.max_connections,
        header_timeout: cfg.header_timeout,
        shutdown_timeout: cfg.shutdown_timeout,
    };
    if !conn::serve(listener, app, limits, signal).await {
        eprintln!(
            "fpdb serve: in-flight requests still open after {:?}; closing anyway",
            cfg.shutdown_timeout
        );
    }
    // Bulk ingests still running (their clients were cut off at the deadline) stop taking
    // documents and commit what they took, and streamed answers stop waiting for their clients
    // (`handlers::send_line`); wait for each to finish its commit, at most --shutdown-timeout-s
    // more (a commit that outlasts it is cut as a crash would cut it: the acknowledged documents
    // are durable).
    state.stopping.store(true, std::sync::atomic::Ordering::Relaxed);
    let all = state.bulk.acquire_many(cfg.bulk_slots as u32);
    if tokio::time::timeout(cfg.shutdown_timeout, all).await.is_err() {
        eprintln!(
            "fpdb serve: bulk ingests still committing after {:?}; exiting anyway",
            cfg.shutdown_timeout
        );
    }
    Ok(())
}

/// Test builds (feature `failpoints`) arm the failpoints named in `FPDB_FAILPOINTS`
/// (`name=n,name=n`: fail on the n-th hit) — how cli/tests/serve.rs makes the writer panic.
fn arm_failpoints() {
    #[cfg(feature = "failpoints")]
    if let Ok(spec) = std::env::var("FPDB_FAILPOINTS") {
        for item in spec.split(',').filter(|s| !s.is_empty()) {
            let (name, n) = item.split_once('=').unwrap_or((item, "1"));
            let name: &'static str = Box::leak(name.to_string().into_boxed_str());
            fpdb::failpoint::set(name, n.parse().unwrap_or(1));
        }
    }
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("fpdb serve: cannot watch SIGTERM ({e}); only SIGINT stops the server");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
