//! The server's log on stderr, through `tracing`: each event has a message and fields (a request's
//! `method`, `route`, `status`, `ms`, `request_id`, `code`; never keys or text). `--log-format text`
//! (the default) writes the message alone, `fpdb serve: ...`, one line per event; `--log-format
//! json` writes one JSON object per line with a timestamp, the level, the message and every field,
//! for a log collector.

use tracing_subscriber::fmt::format::{debug_fn, FmtSpan};

/// How the log is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// Installs the log for the rest of the process (a second call changes nothing).
pub fn init(format: LogFormat) {
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_span_events(FmtSpan::NONE)
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false);
    let _ = match format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .try_init(),
        LogFormat::Text => builder
            .without_time()
            .with_level(false)
            .with_target(false)
            // The message only: the fields are in it already, as words.
            .fmt_fields(debug_fn(|w, field, value| {
                if field.name() == "message" {
                    write!(w, "fpdb serve: {value:?}")
                } else {
                    Ok(())
                }
            }))
            .try_init(),
    };
}
