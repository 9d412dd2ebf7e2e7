//! The table WebSocket: `GET /api/v1/tables/{id}/ws[?token=SEAT_TOKEN][&since=SEQ]`.
//!
//! The connection is registered with the table before the upgrade, so a bad
//! token or table is an ordinary HTTP error. Afterwards one task writes what
//! the table queued for this connection (and pings), while this task reads
//! the client's messages and hands them to the table. A client must send
//! something (a message or a pong) at least every [`IDLE_LIMIT`].

use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{MaybeCaller, by_cookie, client};
use super::hyper_refusals::ClientAddr;
use super::openapi::refusals;
use super::{ApiError, ApiErrorCode, AppState};
use crate::auth::Revoked;
use crate::limits::{Held, Paced};
use crate::protocol::ws::{ClientMessage, MAX_CLIENT_MESSAGE, WsErrorCode};
use crate::shutdown::Shutdown;
use crate::table::{Connection, Farewell, TableCommand, TableHandle};

/// How often the server pings.
pub const PING_EVERY: Duration = Duration::from_secs(20);
/// A client silent for this long is disconnected.
pub const IDLE_LIMIT: Duration = Duration::from_secs(60);
/// A frame larger than this ends the connection at once (the WebSocket layer
/// refuses to read it); messages between [`MAX_CLIENT_MESSAGE`] and this get
/// a `too_large` error.
const MAX_FRAME: usize = 64 * 1024;
/// At most this many queued messages are written before one flush.
const WRITE_BATCH: usize = 64;
/// The WebSocket read buffer. Client messages are small; the library's
/// default of 128 KiB per connection is really in memory (it is
/// zero-filled), and adds up over many connections (docs/performance.md,
/// "WebSocket connections").
const READ_BUFFER: usize = 4 * 1024;
/// Outgoing data buffered before it is written, and the most that may wait
/// unwritten for a slow socket before the connection fails.
const WRITE_BUFFER: usize = 8 * 1024;
const MAX_WRITE_BUFFER: usize = 1024 * 1024;

/// Close code for a connection the table dropped because it fell behind:
/// reconnect (with `since`, or for a fresh snapshot).
pub const CLOSE_DROPPED: u16 = 4000;

/// Close code for a connection replaced by a newer one for the same seat:
/// the seat is played from elsewhere; do not reconnect.
pub const CLOSE_REPLACED: u16 = 4002;

/// Close code for a connection whose seat was left (`DELETE .../seats`):
/// its token no longer works; do not reconnect.
pub const CLOSE_SEAT_LEFT: u16 = 4003;

/// Close code for a connection whose table another node plays now (cluster
/// mode: its node left, or lost it): reconnect with `since`, through any node.
pub const CLOSE_MOVED: u16 = 4004;

/// Close code for a connection whose account session ended (logged out,
/// out everywhere, password changed, account disabled, sessions ended by an
/// admin), or that plays a seat whose token was given to such a session:
/// log in again.
pub const CLOSE_SESSION_ENDED: u16 = 4001;

/// The WebSocket's route (under `/api/v1`). It has no time limit: the
/// socket outlives its request.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(upgrade))
}

/// The query of the WebSocket URL.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct WsQuery {
    /// The seat token; without it the connection is a spectator's.
    #[serde(default)]
    pub token: Option<String>,
    /// The last sequence number the client saw: resume from there.
    #[serde(default)]
    pub since: Option<u64>,
}

refusals!(
    /// Why a WebSocket is not opened.
    UpgradeRefusals: BadRequest, BadToken, Unauthenticated, AccountDisabled, BadOrigin, NoSuchTable, QuotaExceeded,
        Closed, Recovering
);

/// Upgrades to a WebSocket on the table: a player's with its seat token (or
/// its account's session, for a seat that belongs to the account), a
/// spectator's without. The messages are in docs/protocol.md. A request
/// without the WebSocket upgrade headers is refused `400 bad_request`; one
/// authenticated by the session cookie from a page of another origin, `403
/// bad_origin`; one over the WebSockets an address may hold, `429
/// quota_exceeded`.
#[utoipa::path(
    get,
    path = "/tables/{id}/ws",
    operation_id = "connect_table_websocket",
    tag = "lobby",
    params(("id" = String, Path, description = "The table's id."), WsQuery),
    security((), ("account_token" = []), ("session_cookie" = [])),
    responses((status = 101, description = "Switching Protocols: the connection is the table's WebSocket"), UpgradeRefusals)
)]
pub async fn upgrade(
    State(state): State<AppState>,
    Path(id): Path<String>,
    query: Result<Query<WsQuery>, axum::extract::rejection::QueryRejection>,
    addr: ConnectInfo<ClientAddr>,
    headers: HeaderMap,
    MaybeCaller(caller): MaybeCaller,
    ws: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    // A browser sends the cookie with any page's WebSocket: only the
    // server's own pages (or those allowed) may use it.
    if caller.is_some() && by_cookie(&headers) && !same_origin(&headers, &state.allowed_origins) {
        return Err(ApiError::refused(
            ApiErrorCode::BadOrigin,
            "a WebSocket authenticated by the session cookie must be opened from this server's own pages",
        ));
    }
    let client = client(&addr, caller.as_ref());
    let held = state.quotas.hold(&client, Held::WebSocket).await?;
    state.quotas.pace(&client, Paced::ConnectionsOpened).await?;
    // A connection made with an account session lives as long as the session.
    let account = caller.as_ref().map(|c| c.user_id);
    let session = caller.map(|c| Watched {
        user: c.user_id,
        token_sha256: c.session.token_sha256,
        news: state.accounts.revocations(),
        accounts: state.accounts.clone(),
    });
    let handle = state.lobby.find(&id).await?;
    let (token, since) = (query.token, query.since);
    let connection =
        handle.ask(|reply| TableCommand::Connect { token, account, since, replay_hand: false, reply }).await??;
    Ok(ws
        .read_buffer_size(READ_BUFFER)
        .write_buffer_size(WRITE_BUFFER)
        .max_write_buffer_size(MAX_WRITE_BUFFER)
        .max_message_size(MAX_FRAME)
        .max_frame_size(MAX_FRAME)
        .on_upgrade(move |socket| async move {
            // A task of the stop signal: the server waits for it to close.
            let shutdown = state.shutdown.clone();
            let _ = shutdown.spawn(serve(socket, handle, connection, state.shutdown, session)).await;
            drop(held);
        }))
}

/// Whether the request's `Origin` (if it has one: browsers always send it
/// with a WebSocket) is the server's own (the scheme's host and port are
/// the request's `Host`) or one of `allowed`.
fn same_origin(headers: &HeaderMap, allowed: &[String]) -> bool {
    let Some(origin) = headers.get(axum::http::header::ORIGIN) else { return true };
    let Ok(origin) = origin.to_str() else { return false };
    let origin = origin.trim_end_matches('/');
    if allowed.iter().any(|a| a.trim_end_matches('/').eq_ignore_ascii_case(origin)) {
        return true;
    }
    let host = headers.get(axum::http::header::HOST).and_then(|h| h.to_str().ok());
    let authority = origin.split_once("://").map(|(_, rest)| rest);
    matches!((authority, host), (Some(a), Some(h)) if a.eq_ignore_ascii_case(h))
}

/// The account session a connection was made with, and the news of ended
/// sessions.
struct Watched {
    user: i64,
    token_sha256: String,
    news: tokio::sync::broadcast::Receiver<Revoked>,
    accounts: std::sync::Arc<crate::auth::Accounts>,
}

/// Completes when the watched session ends (never without one).
async fn session_ended(watched: &mut Option<Watched>) {
    use tokio::sync::broadcast::error::RecvError;
    let Some(w) = watched else { return std::future::pending().await };
    loop {
        match w.news.recv().await {
            Ok(revoked) if revoked.ends(w.user, &w.token_sha256) => return,
            Ok(_) => {}
            // News was missed: ask the store.
            Err(RecvError::Lagged(_)) => {
                if !w.accounts.session_lives(&w.token_sha256).await.unwrap_or(true) {
                    return;
                }
            }
            Err(RecvError::Closed) => return std::future::pending().await,
        }
    }
}

async fn serve(
    socket: WebSocket,
    table: TableHandle,
    connection: Connection,
    shutdown: Shutdown,
    mut session: Option<Watched>,
) {
    let (mut sink, mut stream) = socket.split();
    let Connection { id, seat, mut outbound, farewell } = connection;
    // Counted as open until this function returns.
    let _open = crate::metrics::SocketCount::open(seat.is_some());
    let writer_shutdown = shutdown.clone();
    let table_gone = table.clone();
    let writer = tokio::spawn(async move {
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.tick().await;
        loop {
            tokio::select! {
                // The shutdown first: when the server stops, its tables end
                // too, and the socket must close with 1001, not as dropped.
                biased;
                _ = writer_shutdown.stopped() => {
                    let frame = CloseFrame { code: 1001, reason: "the server is shutting down".into() };
                    let _ = sink.send(Message::Close(Some(frame))).await;
                    return;
                }
                _ = session_ended(&mut session) => {
                    let frame = CloseFrame { code: CLOSE_SESSION_ENDED, reason: "the session has ended: log in again".into() };
                    let _ = sink.send(Message::Close(Some(frame))).await;
                    return;
                }
                next = outbound.recv() => match next {
                    Some(text) => {
                        // Queue what else is already waiting, then flush once:
                        // a burst of events costs one write, not one each.
                        let mut batch = vec![text];
                        while batch.len() < WRITE_BATCH {
                            match outbound.try_recv() {
                                Ok(more) => batch.push(more),
                                Err(_) => break,
                            }
                        }
                        let written = batch.len();
                        for text in batch {
                            if sink.feed(Message::Text(Utf8Bytes::from(&*text))).await.is_err() {
                                return;
                            }
                        }
                        if sink.flush().await.is_err() {
                            return;
                        }
                        crate::metrics::messages_delivered(written);
                    }
                    None => {
                        // Let go by a table still up: why, in its own code.
                        // The table itself gone (closed: its last event said
                        // why): done.
                        let closed = tokio::time::timeout(Duration::from_millis(200), table_gone.closed()).await.is_ok();
                        let frame = match farewell.get() {
                            Some(Farewell::Moved) => CloseFrame {
                                code: CLOSE_MOVED,
                                reason: "the table moved to another node: reconnect".into(),
                            },
                            _ if closed => CloseFrame { code: 1000, reason: "the table has closed".into() },
                            Some(Farewell::Closed) => CloseFrame { code: 1000, reason: "the table has closed".into() },
                            Some(Farewell::Replaced) => CloseFrame {
                                code: CLOSE_REPLACED,
                                reason: "a newer connection plays this seat".into(),
                            },
                            Some(Farewell::SeatLeft) => {
                                CloseFrame { code: CLOSE_SEAT_LEFT, reason: "the seat was left".into() }
                            }
                            Some(Farewell::SessionEnded) => CloseFrame {
                                code: CLOSE_SESSION_ENDED,
                                reason: "the session has ended: log in again".into(),
                            },
                            Some(Farewell::FellBehind) | None => {
                                CloseFrame { code: CLOSE_DROPPED, reason: "fell behind: reconnect".into() }
                            }
                        };
                        let _ = sink.send(Message::Close(Some(frame))).await;
                        return;
                    }
                },
                _ = ping.tick() => {
                    if sink.send(Message::Ping(Default::default())).await.is_err() {
                        return;
                    }
                }
            }
        }
    });
    let mut writer = writer;
    let mut writer_done = false;
    loop {
        let next = tokio::select! {
            next = tokio::time::timeout(IDLE_LIMIT, stream.next()) => next,
            _ = shutdown.stopped() => break,
            // The writer ended the connection (dropped, session ended):
            // nothing more is read from it.
            _ = &mut writer => {
                writer_done = true;
                break;
            }
        };
        let next = match next {
            Ok(Some(Ok(message))) => message,
            // Silent too long, a protocol error (e.g. an oversized frame), or closed.
            _ => break,
        };
        let command = match next {
            Message::Text(text) if text.len() > MAX_CLIENT_MESSAGE => TableCommand::BadMessage {
                connection: id,
                code: WsErrorCode::TooLarge,
                reason: format!("a message is at most {MAX_CLIENT_MESSAGE} bytes; this one has {}", text.len()),
            },
            Message::Text(text) => match crate::protocol::json::from_str::<ClientMessage>(&text) {
                Ok(message) => TableCommand::Message { connection: id, message },
                Err(e) => {
                    TableCommand::BadMessage { connection: id, code: WsErrorCode::BadMessage, reason: e.to_string() }
                }
            },
            Message::Binary(_) => TableCommand::BadMessage {
                connection: id,
                code: WsErrorCode::BadMessage,
                reason: "messages are JSON text, not binary".into(),
            },
            Message::Close(_) => break,
            Message::Ping(_) | Message::Pong(_) => continue,
        };
        if table.send(command).await.is_err() {
            break;
        }
    }
    if shutdown.is_stopping() && !writer_done {
        // The writer is sending its close frame: give it a moment.
        let _ = tokio::time::timeout(Duration::from_millis(500), &mut writer).await;
    }
    writer.abort();
    let _ = table.send(TableCommand::Disconnect { connection: id }).await;
}
