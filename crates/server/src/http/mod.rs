//! The HTTP interface: REST under `/api/v1` (the lobby, the settlement
//! calculator, the presets and the admins' option management, the score
//! queries, game files), the table WebSockets,
//! `/healthz`, `/readyz`, `/metrics` ([`metrics`]), the API's OpenAPI document with its reference page
//! ([`openapi`]), and the browser client at `/` ([`web`]).
//!
//! Each module gives its routes as `routes() -> OpenApiRouter<AppState>`,
//! every handler with its `#[utoipa::path]`: [`api`] merges them, and the
//! document is made from the same routes the server serves.
//!
//! Every failure is a JSON body `{"error": {"code": ..., "message": ...}}`
//! ([`error`]): a refusal with a 4xx status changes nothing; an internal
//! failure is logged and answered with a generic message. Around the routes:
//! one tracing span per request (method and path, never the query string,
//! which may carry a seat token, nor any header), a limit on URIs and on
//! bodies, a timeout on REST requests (not on the WebSocket), and panics
//! turned into `500 internal`.

pub mod archive;
pub mod audit;
pub mod auth;
pub mod budget;
pub mod cluster;
pub mod error;
pub mod extract;
pub mod forwarded;
pub mod games;
pub mod hyper_refusals;
pub mod metrics;
pub mod openapi;
pub mod options;
pub mod paging;
pub mod readiness;
pub mod serve;
pub mod starting;
pub mod tables;
pub mod web;
pub mod ws;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Request};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

pub use error::{ApiError, ApiErrorCode};

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
    /// The server's stop signal: WebSockets close when it is given, and
    /// are waited for.
    pub shutdown: crate::shutdown::Shutdown,
    /// The REST requests' time limits.
    pub timeouts: Timeouts,
    /// The accounts and their sessions.
    pub accounts: Arc<crate::auth::Accounts>,
    /// `--require-accounts`: only logged-in players may sit.
    pub require_accounts: bool,
    /// The process's metrics recorder, rendered at `/metrics`.
    pub metrics: crate::metrics::Metrics,
    /// What each client may hold and how fast it may ask.
    pub quotas: std::sync::Arc<crate::limits::Quotas>,
    /// The origins besides the server's own from which a WebSocket
    /// authenticated by the session cookie may be opened (`--allowed-origin`).
    pub allowed_origins: std::sync::Arc<Vec<String>>,
    /// Cluster mode: this node's part in the cluster.
    pub cluster: Option<Arc<crate::cluster::Cluster>>,
    /// Who may read `/metrics`, and where.
    pub metrics_access: Arc<metrics::MetricsAccess>,
}

/// The whole HTTP interface.
pub fn router(state: AppState) -> Router {
    let (api, _) = api(state.timeouts).split_for_parts();
    let routes = api
        .merge(openapi::docs_page())
        .merge(web::routes())
        .fallback(|| async { ApiError::refused(ApiErrorCode::NotFound, "no such endpoint") })
        .layer(DefaultBodyLimit::max(MAX_BODY));
    edge(routes).with_state(state)
}

/// Every documented route, `/api/v1/...`, `/healthz`, `/readyz` and `/metrics`, with its time
/// limit, and the document they make ([`openapi::document`] adds what the
/// layers of [`router`] answer for every route).
pub fn api(timeouts: Timeouts) -> OpenApiRouter<AppState> {
    let timed = OpenApiRouter::new()
        .merge(tables::routes())
        .merge(games::routes())
        .merge(auth::routes())
        .merge(options::routes())
        .merge(budget::routes())
        .merge(cluster::routes())
        .merge(openapi::routes());
    let timed = refusing(
        timed.layer(TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, timeouts.request)),
        &[ApiErrorCode::Timeout],
    );
    // The WebSocket outlives its request: no timeout.
    let v1 = timed.merge(game_files(timeouts.game_file)).merge(ws::routes());
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .nest("/api/v1", v1)
        .merge(openapi::health_routes())
        .merge(metrics::routes())
        .merge(readiness::routes())
}

/// `router`'s routes, documented as answering these codes too (those of
/// the layers just put around them).
fn refusing(mut router: OpenApiRouter<AppState>, codes: &[ApiErrorCode]) -> OpenApiRouter<AppState> {
    openapi::add_refusals(router.get_openapi_mut(), codes, |_| true);
    router
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
                    crate::metrics::http_response(response.status().as_u16());
                    tracing::info!(status = response.status().as_u16(), ?latency, "answered");
                })
                // Failures are logged where they happen, with their details.
                .on_failure(()),
        )
}

/// The game file routes, with their own body limit (set inside the
/// server-wide one, so it is the one in force for them) and time limit.
fn game_files(timeout: Duration) -> OpenApiRouter<AppState> {
    let routes = archive::routes()
        .layer(DefaultBodyLimit::max(archive::MAX_GAME_FILE))
        .layer(TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, timeout));
    refusing(routes, &[ApiErrorCode::Timeout])
}

/// A request's span: its method and path, never its query string (a
/// WebSocket's carries the seat token) nor its headers (`Authorization`).
fn request_span(request: &Request) -> tracing::Span {
    // The client's address (behind a trusted proxy, the one it forwards).
    let client = request.extensions().get::<ConnectInfo<hyper_refusals::ClientAddr>>().map(|c| c.0.0.ip());
    let client = tracing::field::display(client.map_or_else(|| "-".to_string(), |c| c.to_string()));
    tracing::info_span!("request", method = %request.method(), path = %request.uri().path(), client)
}

/// Refuses a URI over [`MAX_URI`] bytes. (hyper itself refuses one over
/// 65,534 bytes before any of this runs: see [`hyper_refusals`].)
async fn limit_uri(request: Request, next: Next) -> Response {
    let length = request.uri().path_and_query().map_or(0, |pq| pq.as_str().len());
    if length > MAX_URI {
        let message = format!("a URI is at most {MAX_URI} bytes; this one has {length}");
        return axum::response::IntoResponse::into_response(ApiError::refused(ApiErrorCode::UriTooLong, message));
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
    let code = ApiErrorCode::for_status(status);
    let text = axum::body::to_bytes(response.into_body(), 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_string();
    if status.is_server_error() {
        tracing::error!(status = status.as_u16(), "answering internal: {text}");
        return error::error_body(status, code, "the server failed to answer; the failure is logged");
    }
    let message = match code {
        _ if !text.is_empty() => text,
        ApiErrorCode::Timeout => "the request took too long to answer: try again".to_string(),
        _ => status.canonical_reason().unwrap_or("refused").to_lowercase(),
    };
    error::error_body(status, code, &message)
}

#[cfg(test)]
mod tests {
    use axum::routing::get;

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
        let app = edge(routes);
        let (status, body) = ask(&app, "GET").await;
        assert_eq!((status, body["error"]["code"].as_str()), (500, Some("internal")), "{body}");
        assert!(!body.to_string().contains("secret"), "{body}");
        let (status, body) = ask(&app, "POST").await;
        assert_eq!((status, body["error"]["code"].as_str()), (405, Some("method_not_allowed")), "{body}");
    }

    /// `method /boom` through the whole edge, as a connection would hand it over.
    async fn ask(app: &Router, method: &str) -> (u16, serde_json::Value) {
        use tower::ServiceExt;
        let request = axum::http::Request::builder().method(method).uri("/boom").body(axum::body::Body::empty());
        let answer = app.clone().oneshot(request.unwrap()).await.unwrap();
        let status = answer.status().as_u16();
        let bytes = axum::body::to_bytes(answer.into_body(), 1 << 16).await.unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }
}
