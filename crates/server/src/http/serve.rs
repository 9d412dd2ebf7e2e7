//! The HTTP server's accept loop: hyper's HTTP/1 connections, each counted
//! against its client's address and the process's share of connections
//! ([`crate::limits::Quotas`]), each given a time limit on reading a
//! request's head that also closes a kept-alive connection left idle, then
//! served by the router. (axum's own `serve` offers neither the caps nor
//! hyper's timer.)
//!
//! A connection over a cap is answered `429 quota_exceeded` at once, with
//! the API's JSON body and `Retry-After`, and closed: the server never waits
//! on it, and never fails an `accept` for want of file descriptors.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

use super::error::{ApiErrorCode, ErrorBody, ErrorDetail};
use super::hyper_refusals::{ClientAddr, RefusalWriter};
use crate::limits::{Client, Held, Quotas};
use crate::shutdown::Shutdown;

/// How long an `accept` that failed (out of file descriptors, say) waits
/// before the next: long enough not to spin, short enough not to be noticed.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

/// Serves `router` on `listener` until the `shutdown` signal; then stops
/// accepting, and lets each connection finish the request it is answering
/// (a kept-alive one closes): the connections are tasks of the signal,
/// which [`Shutdown::wait`] waits for. WebSockets, handed their connection
/// by then, hear the same signal and close themselves.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    quotas: Arc<Quotas>,
    shutdown: Shutdown,
) -> std::io::Result<()> {
    let header_timeout = quotas.limits().header_timeout;
    loop {
        let (tcp, peer) = tokio::select! {
            _ = shutdown.stopped() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!("accept: {e}");
                    tokio::time::sleep(ACCEPT_RETRY).await;
                    continue;
                }
            },
        };
        // Events are small and latency matters: no Nagle delay (with a
        // client's delayed ACK it held a second event back;
        // docs/performance.md, "WebSocket connections").
        let _ = tcp.set_nodelay(true);
        let held = match quotas.hold(&Client::guest(peer.ip()), Held::Connection) {
            Ok(held) => held,
            Err(refusal) => {
                refuse(tcp, &refusal.message, refusal.retry_after_secs());
                continue;
            }
        };
        let router = router.clone();
        let stopping = shutdown.clone();
        shutdown.spawn(async move {
            let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
                // The client's address, for the handlers (`ConnectInfo<ClientAddr>`).
                request.extensions_mut().insert(ConnectInfo(ClientAddr(peer)));
                let router = router.clone();
                router.oneshot(request.map(axum::body::Body::new))
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(header_timeout);
            let io = TokioIo::new(RefusalWriter::new(tcp));
            let connection = builder.serve_connection(io, service).with_upgrades();
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = stopping.stopped() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
            drop(held);
        });
    }
    Ok(())
}

/// Answers a connection over a cap `429 quota_exceeded` and closes it,
/// without waiting on the client (what its socket buffer cannot take is
/// dropped).
fn refuse(tcp: TcpStream, message: &str, retry_after_secs: u64) {
    let body = serde_json::to_string(&ErrorBody { error: ErrorDetail { code: ApiErrorCode::QuotaExceeded, message } })
        .unwrap_or_default();
    let answer = format!(
        "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\nretry-after: {retry_after_secs}\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let _ = tcp.try_write(answer.as_bytes());
    crate::metrics::http_error(ApiErrorCode::QuotaExceeded.as_str());
}
