//! `fpdb serve`: the HTTP service (feature `serve`; the service itself is in `crate::serve`).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;

use crate::cli::{LogFormatArg, ServeArgs};
use crate::serve::log::LogFormat;

/// The service's settings and the log's form.
pub struct Config {
    pub serve: crate::serve::ServeConfig,
    pub log: LogFormat,
}

impl From<ServeArgs> for Config {
    fn from(a: ServeArgs) -> Config {
        let log = match a.log_format {
            LogFormatArg::Text => LogFormat::Text,
            LogFormatArg::Json => LogFormat::Json,
        };
        Config {
            serve: serve_config(a),
            log,
        }
    }
}

fn serve_config(a: ServeArgs) -> crate::serve::ServeConfig {
    crate::serve::ServeConfig {
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
    }
}

/// Serves until SIGINT/SIGTERM.
pub fn run(cfg: Config) -> Result<ExitCode> {
    crate::serve::log::init(cfg.log);
    crate::serve::run(cfg.serve)
}
