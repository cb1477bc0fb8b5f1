//! `fpdb serve`: the HTTP service (feature `serve`; the service itself is the `fpdb-serve` crate,
//! `fpdb_serve`, which this file hands a plain [`fpdb_serve::Config`]).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use fpdb_serve::{Config, LogFormat};

use crate::cli::{LogFormatArg, ServeArgs};

/// The service's settings from its flags; `quiet` is `fpdb -q`.
pub fn config(a: ServeArgs, quiet: bool) -> Config {
    let log_format = match a.log_format {
        LogFormatArg::Text => LogFormat::Text,
        LogFormatArg::Json => LogFormat::Json,
    };
    Config {
        db: a.db,
        listen: a.listen,
        token_file: a.token_file,
        token_for_reads: a.token_for_reads,
        max_body_bytes: a.max_body_bytes,
        max_bulk_bytes: a.max_bulk_bytes,
        queue_depth: a.queue_depth,
        batch_size: a.batch_size,
        bulk_slots: a.bulk_slots,
        workers: a.workers,
        query_threads: a.query_threads,
        sync: !a.no_sync,
        log_requests: a.log_requests,
        shutdown_timeout: Duration::from_secs(a.shutdown_timeout_s),
        max_connections: a.max_connections,
        max_inflight: a.max_inflight,
        max_queries: match a.max_queries {
            0 => std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1)),
            n => n,
        },
        header_timeout: Duration::from_secs(a.header_timeout_s),
        body_timeout: Duration::from_secs(a.body_timeout_s),
        request_timeout: Duration::from_secs(a.request_timeout_s),
        max_candidates: a.max_candidates,
        query_deadline: Duration::from_millis(a.query_deadline_ms),
        store_text: a.store_text,
        log_format,
        quiet,
    }
}

/// Serves until SIGINT/SIGTERM.
pub fn run(cfg: Config) -> Result<ExitCode> {
    fpdb_serve::run(cfg)
}
