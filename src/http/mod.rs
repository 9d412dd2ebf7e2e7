//! The HTTP interface: REST under `/api/v1` (the lobby, the settlement
//! calculator, the score queries, game files), the table WebSockets, and `/healthz`.
//!
//! Every refusal is a JSON body `{"error": {"code": ..., "message": ...}}`
//! with a 4xx status; nothing about a refused request changes any state.

pub mod archive;
pub mod games;
pub mod tables;
pub mod ws;

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use serde_json::json;

use crate::table::{Lobby, TableError};

/// The largest REST request body, in bytes.
pub const MAX_BODY: usize = 64 * 1024;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    /// The tables.
    pub lobby: Arc<Lobby>,
    /// The server's settings for new tables.
    pub defaults: Arc<tables::TableDefaults>,
    /// Becomes `true` when the server shuts down: WebSockets close.
    pub shutdown: tokio::sync::watch::Receiver<bool>,
}

/// The whole HTTP interface.
pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .route("/tables", post(tables::create).get(tables::list))
        .route("/tables/{id}", get(tables::get_one))
        .route("/tables/{id}/seats", post(tables::sit).delete(tables::leave))
        .route("/tables/{id}/robots", post(tables::add_robot))
        .route("/tables/{id}/robots/{seat}", delete(tables::remove_robot))
        .route("/tables/{id}/start", post(tables::start))
        .route("/tables/{id}/ws", get(ws::upgrade))
        .route("/settle", post(tables::settle))
        .route("/presets", get(tables::presets))
        .route("/games", get(games::list))
        .route("/games/{id}", get(games::get_one))
        .route("/games/{id}/hands", get(games::hands))
        .route("/games/{id}/hands/{n}", get(games::hand))
        .route("/games/{id}/hands/{n}/events", get(games::hand_events))
        .route("/standings", get(games::standings))
        .merge(game_files());
    Router::new()
        .nest("/api/v1", api)
        .route("/healthz", get(|| async { "ok" }))
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such endpoint") })
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::map_response(json_errors))
        .with_state(state)
}

/// The game file routes, with their own body limit (set inside the
/// server-wide one, so it is the one in force for them).
fn game_files() -> Router<AppState> {
    Router::new()
        .route("/games/{id}/export", get(archive::export))
        .route("/games/import", post(archive::import))
        .route("/games/import-mj-server", post(archive::import_mj_server))
        .layer(DefaultBodyLimit::max(archive::MAX_GAME_FILE))
}

/// Refusals made by axum itself (a body over the limit, a wrong method, a
/// path that does not parse, a WebSocket request without its upgrade
/// headers) come as plain text: give them the API's JSON error shape too.
async fn json_errors(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !status.is_client_error() || is_json {
        return response;
    }
    let code = match status {
        StatusCode::PAYLOAD_TOO_LARGE => "too_large",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::NOT_FOUND => "not_found",
        _ => "bad_request",
    };
    let text = axum::body::to_bytes(response.into_body(), 4096).await.unwrap_or_default();
    let mut message = String::from_utf8_lossy(&text).trim().to_string();
    if message.is_empty() {
        message = status.canonical_reason().unwrap_or("refused").to_lowercase();
    }
    ApiError { status, code, message }.into_response()
}

/// A refused request.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl ApiError {
    /// An error with this status, code and message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { status, code, message: message.into() }
    }

    /// A 400 for a malformed request.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({"error": {"code": self.code, "message": self.message}}))).into_response()
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(e: crate::store::StoreError) -> ApiError {
        tracing::error!("store: {e}");
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "store_unavailable", e.to_string())
    }
}

impl From<crate::table::actor::OpenError> for ApiError {
    fn from(e: crate::table::actor::OpenError) -> ApiError {
        match e {
            crate::table::actor::OpenError::Table(e) => e.into(),
            crate::table::actor::OpenError::Store(e) => e.into(),
        }
    }
}

impl From<TableError> for ApiError {
    fn from(e: TableError) -> ApiError {
        let (status, code) = match &e {
            TableError::NoSuchTable(_) => (StatusCode::NOT_FOUND, "no_such_table"),
            TableError::NoSuchSeat(_) | TableError::Invalid(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            TableError::SeatTaken(_) | TableError::Full => (StatusCode::CONFLICT, "seat_taken"),
            TableError::BadToken => (StatusCode::UNAUTHORIZED, "bad_token"),
            TableError::NotManager => (StatusCode::FORBIDDEN, "not_manager"),
            TableError::NotNow(_) => (StatusCode::CONFLICT, "not_now"),
            TableError::Closed => (StatusCode::GONE, "closed"),
        };
        ApiError::new(status, code, e.to_string())
    }
}
