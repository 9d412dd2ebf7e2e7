//! The HTTP interface: REST under `/api/v1` (the lobby, the settlement
//! calculator, the presets and the admins' option management, the score
//! queries, game files), the table WebSockets, and `/healthz`.
//!
//! Every failure is a JSON body `{"error": {"code": ..., "message": ...}}`
//! ([`error`]): a refusal with a 4xx status changes nothing; an internal
//! failure is logged and answered with a generic message. Around the routes:
//! one tracing span per request (method and path, never the query string,
//! which may carry a seat token, nor any header), a limit on URIs and on
//! bodies, a timeout on REST requests (not on the WebSocket), and panics
//! turned into `500 internal`.

pub mod archive;
pub mod auth;
pub mod error;
pub mod games;
pub mod hyper_refusals;
pub mod options;
pub mod tables;
pub mod ws;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::{delete, get, post, put};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

pub use error::{ApiError, ErrorCode};

use crate::table::Lobby;

/// The largest REST request body, in bytes.
pub const MAX_BODY: usize = 64 * 1024;

/// The longest request URI (path and query), in bytes.
pub const MAX_URI: usize = 8 * 1024;

/// How long a REST request may take, and a game file's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Any REST request but the game files'.
    pub request: Duration,
    /// Loading or exporting a game file (up to 32 MiB, replayed).
    pub game_file: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts { request: Duration::from_secs(30), game_file: Duration::from_secs(120) }
    }
}

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    /// The tables.
    pub lobby: Arc<Lobby>,
    /// The server's settings for new tables (from its flags).
    pub defaults: Arc<crate::table::TableDefaults>,
    /// The presets and the defaults in force, which admins change.
    pub rulebook: Arc<crate::table::Rulebook>,
    /// Becomes `true` when the server shuts down: WebSockets close.
    pub shutdown: tokio::sync::watch::Receiver<bool>,
    /// The REST requests' time limits.
    pub timeouts: Timeouts,
    /// The accounts and their sessions.
    pub accounts: Arc<crate::auth::Accounts>,
    /// `--require-accounts`: only logged-in players may sit.
    pub require_accounts: bool,
}

/// The whole HTTP interface.
pub fn router(state: AppState) -> Router {
    let timeouts = state.timeouts;
    let rest = Router::new()
        .route("/tables", post(tables::create).get(tables::list))
        .route("/tables/{id}", get(tables::get_one).delete(tables::close))
        .route("/tables/{id}/seats", post(tables::sit).delete(tables::leave))
        .route("/tables/{id}/robots", post(tables::add_robot))
        .route("/tables/{id}/robots/{seat}", delete(tables::remove_robot))
        .route("/tables/{id}/start", post(tables::start))
        .route("/settle", post(tables::settle))
        .route("/presets", get(options::presets))
        .route("/presets/{name}", get(options::preset))
        .route("/games", get(games::list))
        .route("/games/{id}", get(games::get_one))
        .route("/games/{id}/hands", get(games::hands))
        .route("/games/{id}/hands/{n}", get(games::hand))
        .route("/games/{id}/hands/{n}/events", get(games::hand_events))
        .route("/standings", get(games::standings))
        .route("/auth/register", post(auth::register))
        .route("/auth/login", post(auth::login))
        .route("/auth/logout", post(auth::logout))
        .route("/auth/logout-everywhere", post(auth::logout_everywhere))
        .route("/auth/password", post(auth::change_password))
        .route("/me", get(auth::me))
        .route("/admin/users", get(auth::list_users))
        .route("/admin/users/{id}", get(auth::get_user).patch(auth::update_user))
        .route("/admin/users/{id}/sessions", delete(auth::end_user_sessions))
        .route("/admin/defaults", get(options::defaults).put(options::set_defaults).delete(options::reset_defaults))
        .route("/admin/presets", post(options::create_preset))
        .route("/admin/presets/{name}", put(options::update_preset).delete(options::delete_preset))
        .route("/admin/audit", get(options::audit))
        .layer(TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, timeouts.request))
        .merge(game_files(timeouts.game_file));
    // The WebSocket outlives its request: no timeout.
    let api = rest.route("/tables/{id}/ws", get(ws::upgrade));
    let routes = Router::new()
        .nest("/api/v1", api)
        .route("/healthz", get(|| async { "ok" }))
        .fallback(|| async { ApiError::refused(ErrorCode::NotFound, "no such endpoint") })
        .layer(DefaultBodyLimit::max(MAX_BODY));
    edge(routes).with_state(state)
}

/// What every request passes through, outermost first: its tracing span,
/// panics turned into `500 internal`, the JSON body for every refusal of the
/// HTTP layer, and the URI limit.
fn edge<S: Clone + Send + Sync + 'static>(routes: Router<S>) -> Router<S> {
    routes
        .layer(axum::middleware::from_fn(limit_uri))
        .layer(axum::middleware::map_response(json_errors))
        .layer(CatchPanicLayer::custom(panicked))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(request_span)
                .on_request(())
                .on_response(|response: &Response, latency: Duration, _: &tracing::Span| {
                    tracing::info!(status = response.status().as_u16(), ?latency, "answered");
                })
                // Failures are logged where they happen, with their details.
                .on_failure(()),
        )
}

/// The game file routes, with their own body limit (set inside the
/// server-wide one, so it is the one in force for them) and time limit.
fn game_files(timeout: Duration) -> Router<AppState> {
    Router::new()
        .route("/games/{id}/export", get(archive::export))
        .route("/games/import", post(archive::import))
        .route("/games/import-mj-server", post(archive::import_mj_server))
        .layer(DefaultBodyLimit::max(archive::MAX_GAME_FILE))
        .layer(TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, timeout))
}

/// A request's span: its method and path, never its query string (a
/// WebSocket's carries the seat token) nor its headers (`Authorization`).
fn request_span(request: &Request) -> tracing::Span {
    tracing::info_span!("request", method = %request.method(), path = %request.uri().path())
}

/// Refuses a URI over [`MAX_URI`] bytes. (hyper itself refuses one over
/// 65,534 bytes before any of this runs: see [`hyper_refusals`].)
async fn limit_uri(request: Request, next: Next) -> Response {
    let length = request.uri().path_and_query().map_or(0, |pq| pq.as_str().len());
    if length > MAX_URI {
        let message = format!("a URI is at most {MAX_URI} bytes; this one has {length}");
        return axum::response::IntoResponse::into_response(ApiError::refused(ErrorCode::UriTooLong, message));
    }
    next.run(request).await
}

/// A handler that panicked: logged, answered `500 internal`.
fn panicked(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let what = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("a panic without a message");
    axum::response::IntoResponse::into_response(ApiError::internal(format!("a handler panicked: {what}")))
}

/// Refusals made by axum and tower-http themselves (a body over the limit,
/// a wrong method, a path that does not parse, a WebSocket request without
/// its upgrade headers, a timeout) come as plain text or with no body: give
/// them the API's JSON error shape too. A server error without JSON (none
/// is expected) is answered `internal`, its text logged, not sent.
async fn json_errors(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let code = ErrorCode::for_status(status);
    let text = axum::body::to_bytes(response.into_body(), 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_string();
    if status.is_server_error() {
        tracing::error!(status = status.as_u16(), "answering internal: {text}");
        return error::error_body(status, code, "the server failed to answer; the failure is logged");
    }
    let message = match code {
        _ if !text.is_empty() => text,
        ErrorCode::Timeout => "the request took too long to answer: try again".to_string(),
        _ => status.canonical_reason().unwrap_or("refused").to_lowercase(),
    };
    error::error_body(status, code, &message)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A handler that panics is answered `500 internal`, without its text.
    #[tokio::test]
    async fn a_panic_is_answered_internal() {
        let routes: Router = Router::new().route(
            "/boom",
            get(|| async {
                if true {
                    panic!("the secret behind the panic");
                }
                "never"
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, edge(routes)).await });
        let a = crate::tools::client::http(addr, "GET", "/boom", None, None).await.unwrap();
        assert_eq!((a.status, a.body["error"]["code"].as_str()), (500, Some("internal")), "{}", a.body);
        assert!(!a.body.to_string().contains("secret"), "{}", a.body);
        let a = crate::tools::client::http(addr, "POST", "/boom", None, None).await.unwrap();
        assert_eq!((a.status, a.body["error"]["code"].as_str()), (405, Some("method_not_allowed")), "{}", a.body);
    }
}
