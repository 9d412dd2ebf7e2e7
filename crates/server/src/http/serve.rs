//! The HTTP server's accept loop: hyper's HTTP/1 connections, each counted
//! against its client's address and the process's share of connections
//! ([`crate::limits::Quotas`]), each given a time limit on reading a
//! request's head that also closes a kept-alive connection left idle, then
//! served by the router. (axum's own `serve` offers neither the caps nor
//! hyper's timer.)
//!
//! A connection over a cap is answered `429 quota_exceeded` at once, with
//! the API's JSON body and `Retry-After`, and closed: the server never waits
//! on it, and never fails an `accept` for want of file descriptors. The
//! health probes are the exception: a load balancer must still hear how the
//! server is when it is full, so a few connections over the caps
//! ([`PROBES`] at once) may each ask `/healthz` or `/readyz` once.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

use super::error::{ApiErrorCode, ErrorBody, ErrorDetail};
use super::forwarded::TrustedProxies;
use super::hyper_refusals::{ClientAddr, RefusalWriter};
use crate::limits::{Client, Held, Quotas};
use crate::shutdown::Shutdown;

/// How long an `accept` that failed (out of file descriptors, say) waits
/// before the next: long enough not to spin, short enough not to be noticed.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

/// Connections over the caps that may ask a health probe at once.
pub const PROBES: usize = 8;

/// How long a connection over the caps has to show that it asks a probe.
const PROBE_HEAD_WITHIN: Duration = Duration::from_secs(1);

/// The paths a connection over the caps may ask for.
const PROBE_PATHS: [&str; 2] = ["/healthz", "/readyz"];

/// Serves `router` on `listener` until the `shutdown` signal; then stops
/// accepting, and lets each connection finish the request it is answering
/// (a kept-alive one closes): the connections are tasks of the signal,
/// which [`Shutdown::wait`] waits for. WebSockets, handed their connection
/// by then, hear the same signal and close themselves.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    quotas: Arc<Quotas>,
    proxies: Arc<TrustedProxies>,
    shutdown: Shutdown,
) -> std::io::Result<()> {
    let header_timeout = quotas.limits().header_timeout;
    let probes = Arc::new(tokio::sync::Semaphore::new(PROBES));
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
        // A trusted proxy's connections carry many clients: only the
        // process's share counts (each client is counted by the address
        // the proxy forwards, request by request).
        let held = if proxies.contains(peer.ip()) {
            quotas.hold_proxied()
        } else {
            quotas.hold(&Client::guest(peer.ip()), Held::Connection).await
        };
        let held = match held {
            Ok(held) => held,
            Err(refusal) => {
                match probes.clone().try_acquire_owned() {
                    Ok(probe) => {
                        let router = router.clone();
                        tokio::spawn(probe_or_refuse(tcp, peer, router, refusal, probe));
                    }
                    Err(_) => refuse(tcp, &refusal.message, refusal.retry_after_secs()),
                }
                continue;
            }
        };
        let router = router.clone();
        let stopping = shutdown.clone();
        let proxies = proxies.clone();
        shutdown.spawn(async move {
            let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
                // The client's address, for the handlers (`ConnectInfo<ClientAddr>`):
                // behind a trusted proxy, the one it forwards.
                let client = proxies.client_of(peer, request.headers());
                request.extensions_mut().insert(ConnectInfo(ClientAddr(client)));
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

/// A connection over a cap: if its first line asks for a health probe, it
/// is answered (that one request, then closed); otherwise it is refused.
async fn probe_or_refuse(
    tcp: TcpStream,
    peer: std::net::SocketAddr,
    router: Router,
    refusal: crate::limits::Refusal,
    _probe: tokio::sync::OwnedSemaphorePermit,
) {
    if !asks_a_probe(&tcp).await {
        refuse(tcp, &refusal.message, refusal.retry_after_secs());
        return;
    }
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(ConnectInfo(ClientAddr(peer)));
        let router = router.clone();
        async move {
            // Only the probes: the request line promised one.
            if !PROBE_PATHS.contains(&request.uri().path()) {
                let message = "over the connection caps: only /healthz and /readyz are answered";
                let detail = ErrorDetail { code: ApiErrorCode::QuotaExceeded, message };
                let body = axum::Json(ErrorBody { error: detail });
                let mut answer =
                    axum::response::IntoResponse::into_response((axum::http::StatusCode::TOO_MANY_REQUESTS, body));
                answer.headers_mut().insert(axum::http::header::RETRY_AFTER, 10.into());
                return Ok::<_, std::convert::Infallible>(answer);
            }
            router.oneshot(request.map(axum::body::Body::new)).await
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(PROBE_HEAD_WITHIN).keep_alive(false);
    let _ = builder.serve_connection(TokioIo::new(RefusalWriter::new(tcp)), service).await;
}

/// Whether a connection's first line asks `GET` or `HEAD` of a probe path
/// (read without taking it, within [`PROBE_HEAD_WITHIN`]).
async fn asks_a_probe(tcp: &TcpStream) -> bool {
    let mut head = [0u8; 64];
    let deadline = tokio::time::Instant::now() + PROBE_HEAD_WITHIN;
    loop {
        let Ok(Ok(n)) = tokio::time::timeout_at(deadline, tcp.peek(&mut head)).await else { return false };
        let line = &head[..n];
        let complete = n == head.len() || line.contains(&b' ') && line.split(|&b| b == b' ').count() > 2;
        if n == 0 {
            return false;
        }
        if complete {
            let text = String::from_utf8_lossy(line);
            let mut words = text.split(' ');
            let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
            let path = target.split('?').next().unwrap_or("");
            return matches!(method, "GET" | "HEAD") && PROBE_PATHS.contains(&path);
        }
        // Part of the line only: wait for the rest.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
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
