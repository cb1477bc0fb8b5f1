//! `fpdb serve`: the HTTP service's flags (each also an `FPDB_` variable).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// `fpdb serve`. Every flag can also be given by an environment variable, `FPDB_` and its name in
/// capitals with `_` for `-` (`FPDB_LISTEN=0.0.0.0:7878`, `FPDB_TOKEN_FILE=...`, `FPDB_DB=...`);
/// a flag on the command line wins. A switch is on when its variable is set to anything but
/// `false`, `no`, `off`, `0` or nothing.
#[cfg(feature = "serve")]
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Database directory (created with default settings when it holds no database).
    #[arg(env = "FPDB_DB")]
    pub db: PathBuf,
    /// A database created here keeps its documents' texts (as `fpdb init --store-text`).
    #[arg(long, env = "FPDB_STORE_TEXT", value_parser = clap::builder::FalseyValueParser::new())]
    pub store_text: bool,
    /// Address to listen on (port 0: any free port). A non-loopback address needs --token-file.
    #[arg(long, env = "FPDB_LISTEN", default_value = "127.0.0.1:7878")]
    pub listen: std::net::SocketAddr,
    /// File holding the access token required on writes (`Authorization: Bearer <token>`).
    #[arg(long, env = "FPDB_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// Require the token on reads too (everything but /healthz).
    #[arg(long, env = "FPDB_TOKEN_FOR_READS", value_parser = clap::builder::FalseyValueParser::new())]
    pub token_for_reads: bool,
    /// Largest body of PUT and POST /v1/duplicates, bytes (larger: 413).
    #[arg(long, env = "FPDB_MAX_BODY_BYTES", default_value_t = 8 << 20)]
    pub max_body_bytes: usize,
    /// Largest NDJSON body of POST /v1/documents, bytes (larger: 413).
    #[arg(long, env = "FPDB_MAX_BULK_BYTES", default_value_t = 64 << 20)]
    pub max_bulk_bytes: usize,
    /// Documents waiting for the writer at most (more: 429 with Retry-After).
    #[arg(long, env = "FPDB_QUEUE_DEPTH", default_value_t = 1024)]
    pub queue_depth: usize,
    /// Documents per group commit, at most.
    #[arg(long, env = "FPDB_BATCH_SIZE", default_value_t = 1024)]
    pub batch_size: usize,
    /// Concurrent POST /v1/documents requests at most (more: 429).
    #[arg(long, env = "FPDB_BULK_SLOTS", default_value_t = 2)]
    pub bulk_slots: usize,
    /// Fingerprinting threads per bulk request (default: one per core).
    #[arg(long, env = "FPDB_WORKERS", default_value_t = 0)]
    pub workers: usize,
    /// Threads one query's probe may use (0: one per core; 1: the request's thread alone, for a
    /// server saturated by concurrent queries). Only probes that scan many entries are split
    /// (from about 2.6M documents at k = 12).
    #[arg(long, env = "FPDB_QUERY_THREADS", default_value_t = 0)]
    pub query_threads: usize,
    /// Log one line per request on stderr (method, route, status, latency, request id; never text
    /// or keys).
    #[arg(long, env = "FPDB_LOG_REQUESTS", value_parser = clap::builder::FalseyValueParser::new())]
    pub log_requests: bool,
    /// The log's form on stderr: `text` (lines `fpdb serve: ...`) or `json` (one object per line:
    /// timestamp, level, message and fields such as method, route, status, ms, request_id).
    #[arg(long, env = "FPDB_LOG_FORMAT", value_enum, default_value_t = LogFormatArg::Text)]
    pub log_format: LogFormatArg,
    /// Seconds to wait for in-flight requests after SIGINT/SIGTERM.
    #[arg(long, env = "FPDB_SHUTDOWN_TIMEOUT_S", default_value_t = 30)]
    pub shutdown_timeout_s: u64,
    /// Open connections at most (one more: 503 with Retry-After, closed at once).
    #[arg(long, env = "FPDB_MAX_CONNECTIONS", default_value_t = 4096)]
    pub max_connections: usize,
    /// Requests being worked on at most, /healthz and /metrics aside (more: 503 `overloaded`).
    #[arg(long, env = "FPDB_MAX_INFLIGHT", default_value_t = 64)]
    pub max_inflight: usize,
    /// POST /v1/duplicates being worked on at most (more: 503 `overloaded`). 0: half the cores, at
    /// least 1 — duplicate checks never take the cores the writes need.
    #[arg(long, env = "FPDB_MAX_QUERIES", default_value_t = 0)]
    pub max_queries: usize,
    /// Seconds a client has to send a request head (then the connection is closed).
    #[arg(long, env = "FPDB_HEADER_TIMEOUT_S", default_value_t = 10)]
    pub header_timeout_s: u64,
    /// Seconds a client has to send a request body (then 408).
    #[arg(long, env = "FPDB_BODY_TIMEOUT_S", default_value_t = 30)]
    pub body_timeout_s: u64,
    /// Seconds a request may take in all (then 503 `timeout`).
    #[arg(long, env = "FPDB_REQUEST_TIMEOUT_S", default_value_t = 60)]
    pub request_timeout_s: u64,
    /// Candidates a duplicate check verifies at most (more: the answer says `truncated: true`).
    #[arg(long, env = "FPDB_MAX_CANDIDATES", default_value_t = 10_000)]
    pub max_candidates: usize,
    /// Milliseconds a duplicate check may verify candidates (then `truncated: true`).
    #[arg(long, env = "FPDB_QUERY_DEADLINE_MS", default_value_t = 500)]
    pub query_deadline_ms: u64,
    /// Do not fsync on commit: survives a process crash, not a power loss.
    #[arg(long, env = "FPDB_NO_SYNC", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_sync: bool,
}

/// `fpdb serve --log-format`.
#[cfg(feature = "serve")]
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormatArg {
    Text,
    Json,
}
