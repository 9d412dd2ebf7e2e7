//! `GET /metrics`: what the server counts ([`crate::metrics`]), in
//! Prometheus's text format, for a Prometheus server to scrape. Every metric
//! is described in docs/metrics.md.
//!
//! It is served beside `/healthz`, outside `/api/v1`, and asks for no
//! credentials: nothing in it is secret (counts by state, kind, code and
//! status class; no table, player or account is named). An operator who
//! would rather not publish it keeps it behind the reverse proxy.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;

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
    responses((status = 200, description = "Every metric, in Prometheus's text format (`text/plain; version=0.0.4`)",
        content_type = "text/plain", body = String,
        example = "# TYPE mahjong_tables gauge\nmahjong_tables{state=\"playing\"} 3\n"))
)]
pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    // What is a state rather than an event is read as the scrape comes.
    let store = state.lobby.store();
    crate::metrics::journal_queue(store.journal_queue());
    crate::metrics::store_available(*store.available().borrow());
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], state.metrics.render())
}
