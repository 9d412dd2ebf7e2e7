//! `GET /metrics`: what the server counts ([`crate::metrics`]), in
//! Prometheus's text format, for a Prometheus server to scrape. Every metric
//! is described in docs/metrics.md.
//!
//! It is served beside `/healthz`, outside `/api/v1`. Nothing in it is
//! secret (counts by state, kind, code and status class; no table, player
//! or account is named), but an operator may still keep it from the public
//! ([`MetricsAccess`]): behind a token (`--metrics-token`, sent as
//! `Authorization: Bearer TOKEN`), or on a listener of its own
//! (`--metrics-listen`, on a private address), or both.

use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::openapi::refusals;
use super::{ApiError, ApiErrorCode, AppState};

/// Who may read the metrics.
#[derive(Clone, Debug, Default)]
pub struct MetricsAccess {
    /// `--metrics-token`, as its SHA-256 (compared as such: the time a
    /// comparison takes says nothing of the token).
    token_sha256: Option<String>,
    /// `--metrics-listen`: served there only, not beside the API.
    elsewhere: bool,
}

impl MetricsAccess {
    /// Readable with `token` if given; on a listener of its own if `elsewhere`.
    pub fn new(token: Option<&str>, elsewhere: bool) -> MetricsAccess {
        MetricsAccess { token_sha256: token.map(crate::store::token_sha256), elsewhere }
    }

    /// Whether the request's `Authorization` lets it read them.
    fn allows(&self, headers: &HeaderMap) -> bool {
        let Some(wanted) = &self.token_sha256 else { return true };
        let given = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
        given.and_then(|v| v.strip_prefix("Bearer ")).is_some_and(|t| crate::store::token_sha256(t.trim()) == *wanted)
    }
}

refusals!(
    /// Why the metrics are not shown.
    MetricsRefusals: Unauthenticated, NotFound
);

/// The media type of Prometheus's text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The metrics' route (outside `/api/v1`, like `/healthz`).
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(metrics))
}

/// The server's metrics, in Prometheus's text format.
///
/// Version 0.0.4 of the format: the tables by state, the open WebSockets, events and messages sent, refusals,
/// HTTP answers, the store's commits and queue, the recovery at start-up,
/// and the process's memory, CPU and files. docs/metrics.md lists them.
#[utoipa::path(
    get,
    path = "/metrics",
    operation_id = "metrics",
    tag = "server",
    security((), ("metrics_token" = [])),
    responses((status = 200, description = "Every metric, in Prometheus's text format (`text/plain; version=0.0.4`)",
        content_type = "text/plain", body = String,
        example = "# TYPE mahjong_tables gauge\nmahjong_tables{state=\"playing\"} 3\n"), MetricsRefusals)
)]
pub async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if state.metrics_access.elsewhere {
        return ApiError::refused(ApiErrorCode::NotFound, "the metrics are served on a listener of their own")
            .into_response();
    }
    render(&state, &headers)
}

/// The metrics on their own listener (`--metrics-listen`): that one route.
pub fn own_listener(state: AppState) -> axum::Router {
    let metrics = |State(state): State<AppState>, headers: HeaderMap| async move { render(&state, &headers) };
    axum::Router::new().route("/metrics", axum::routing::get(metrics)).with_state(state)
}

/// The metrics as text, to a request that may read them.
fn render(state: &AppState, headers: &HeaderMap) -> Response {
    if !state.metrics_access.allows(headers) {
        let message = "the metrics need their token: Authorization: Bearer TOKEN (--metrics-token)";
        return ApiError::refused(ApiErrorCode::Unauthenticated, message).into_response();
    }
    // What is a state rather than an event is read as the scrape comes.
    let store = state.lobby.store();
    crate::metrics::journal_queue(store.journal_queue());
    crate::metrics::store_available(*store.available().borrow());
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], state.metrics.render()).into_response()
}
