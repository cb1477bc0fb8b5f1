//! The connection layer: accepts connections and serves HTTP/1.1 on each with hyper, with the
//! bounds `axum::serve` does not have:
//!
//! * at most `--max-connections` open connections; one more is answered at once with 503
//!   `overloaded`, `Retry-After: 1` and `Connection: close` (never left waiting in the backlog);
//! * the request head must arrive within `--header-timeout-s` (hyper's header-read timer: a
//!   client trickling its headers, or an idle keep-alive connection, is closed);
//! * the answers hyper writes itself to requests it cannot parse (400, 414 for a request line over
//!   65,534 bytes, 431) are JSON with a stable code like every other error ([`JsonParseErrors`]).
//!
//! Graceful shutdown: the listener closes, every connection finishes its in-flight request and
//! closes (hyper-util's `GracefulShutdown`), bounded by `--shutdown-timeout-s`.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use super::errors::parse_error_response;

/// What the accept loop is configured with.
pub struct Limits {
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub shutdown_timeout: Duration,
}

/// Serves `app` on `listener` until `stop` completes, then shuts down gracefully (at most
/// `shutdown_timeout`). Returns false when connections were still open at the deadline.
pub async fn serve(listener: TcpListener, app: Router, limits: Limits, stop: impl Future<Output = ()>) -> bool {
    let graceful = GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let mut stop = std::pin::pin!(stop);
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = &mut stop => break,
        };
        let stream = match accepted {
            Ok((s, _)) => s,
            Err(e) => {
                // Out of file descriptors and the like: wait a little instead of spinning.
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            tokio::spawn(refuse(stream));
            continue;
        };
        let _ = stream.set_nodelay(true);
        let svc = TowerToHyperService::new(app.clone());
        let conn = builder.serve_connection(TokioIo::new(JsonParseErrors::new(stream)), svc);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
            drop(permit);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => true,
        () = tokio::time::sleep(limits.shutdown_timeout) => false,
    }
}

/// Answers a connection over `--max-connections` with 503 and closes it.
async fn refuse(mut stream: TcpStream) {
    let body = serde_json::json!({"error": {
        "code": "overloaded",
        "message": "too many open connections (--max-connections); nothing was done, retry after 1 second",
    }})
    .to_string();
    let msg = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        stream.write_all(msg.as_bytes()).await?;
        stream.shutdown().await?;
        // Read what the client sent (briefly) so that closing does not reset the connection
        // before it has read the answer.
        let mut sink = [0u8; 4096];
        loop {
            if tokio::io::AsyncReadExt::read(&mut stream, &mut sink).await? == 0 {
                return io::Result::Ok(());
            }
        }
    })
    .await;
}

/// A connection whose automatic parse-error answers (written by hyper itself, with an empty body)
/// are replaced by JSON ones ([`parse_error_response`]). The application's own answers always
/// carry a `content-type`; hyper's automatic ones are the only 4xx heads without one.
pub struct JsonParseErrors<S> {
    inner: S,
    /// A replacement being written: (bytes, written so far, length of what hyper handed us).
    pending: Option<(Vec<u8>, usize, usize)>,
}

impl<S> JsonParseErrors<S> {
    pub fn new(inner: S) -> Self {
        JsonParseErrors { inner, pending: None }
    }
}

/// The status of an automatic parse-error answer in `buf` (400, 414 or 431), if it is one.
fn automatic_error(buf: &[u8]) -> Option<u16> {
    let head_end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&buf[..head_end]).ok()?.to_ascii_lowercase();
    let status: u16 = head.strip_prefix("http/1.1 ")?.get(..3)?.parse().ok()?;
    let automatic = matches!(status, 400 | 414 | 431) && !head.contains("\r\ncontent-type:") && head_end + 4 == buf.len();
    automatic.then_some(status)
}

impl<S: AsyncRead + Unpin> AsyncRead for JsonParseErrors<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for JsonParseErrors<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.pending.is_none() {
            match automatic_error(buf) {
                Some(status) => this.pending = Some((parse_error_response(status), 0, buf.len())),
                None => return Pin::new(&mut this.inner).poll_write(cx, buf),
            }
        }
        loop {
            let Some((bytes, done, claimed)) = this.pending.as_mut() else {
                return Poll::Ready(Ok(0));
            };
            if *done == bytes.len() {
                let n = *claimed;
                this.pending = None;
                return Poll::Ready(Ok(n));
            }
            match Pin::new(&mut this.inner).poll_write(cx, &bytes[*done..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => *done += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_automatic_error_heads_are_replaced() {
        assert_eq!(
            automatic_error(b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\ndate: x\r\n\r\n"),
            Some(414)
        );
        assert_eq!(automatic_error(b"HTTP/1.1 431 Request Header Fields Too Large\r\n\r\n"), Some(431));
        assert_eq!(
            automatic_error(b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n"),
            None
        );
        assert_eq!(automatic_error(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}"), None);
        assert_eq!(automatic_error(b"HTTP/1.1 200 OK\r\n\r\n"), None);
    }
}
