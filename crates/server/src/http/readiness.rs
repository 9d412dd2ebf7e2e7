//! `GET /readyz`: whether the server can serve players: it has brought back
//! the tables of its stored games after a (re)start, and its database answers.
//!
//! The server answers from the moment it listens: `/healthz` (liveness) at
//! once, the tables already back, the score queries. Meanwhile the
//! unfinished games (and those just finished) come back in the background
//! (`table::Lobby::recover`); `/readyz` says how far that has gone, `503
//! recovering` until it is over, then `200`. A load balancer sends players
//! to a server once it is ready.

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::ErrorDetail;
use super::openapi::refusals;
use super::{ApiErrorCode, AppState};
use crate::table::lobby::RecoveryProgress;

/// The readiness probe's route (outside `/api/v1`, documented all the same).
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(readyz))
}

/// How the recovery of the stored games stands: the answer of `GET /readyz`
/// once it is over, and the progress in its `503` before.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Readiness {
    /// Whether every stored game to bring back is back (or has failed).
    pub ready: bool,
    /// The stored games to bring back: every game not over, and those that
    /// ended within five minutes before the start.
    pub total: u64,
    /// Those back as tables.
    pub recovered: u64,
    /// Those that could not be brought back (they stay in the store as
    /// they are; the log says why).
    pub failed: u64,
    /// Seconds recovery has taken so far, or took.
    pub seconds: f64,
}

impl From<RecoveryProgress> for Readiness {
    fn from(p: RecoveryProgress) -> Readiness {
        Readiness {
            ready: p.done,
            total: p.total as u64,
            recovered: p.recovered as u64,
            failed: p.failed as u64,
            // Milliseconds are plenty.
            seconds: (p.seconds * 1000.0).round() / 1000.0,
        }
    }
}

refusals!(
    /// Why the server is not ready.
    ReadyRefusals: StoreUnavailable, NotMember, NatsUnavailable, Recovering
);

/// The answer of `GET /readyz` while games are still coming back: the
/// API's error body (`recovering`), with the progress beside `error`.
#[derive(Debug, Serialize)]
struct NotReady<'a> {
    error: ErrorDetail<'a>,
    #[serde(flatten)]
    progress: Readiness,
}

/// Readiness: `200` once the tables of the stored games are back after a
/// (re)start and while the database answers (in a cluster, also while the
/// node holds a live lease and is connected to NATS: `503 not_member` or
/// `503 nats_unavailable` otherwise); `503 recovering`, with
/// `Retry-After`, while they come back; `503 store_unavailable` while the
/// database does not answer (asked at most once a second, within 2 s).
///
/// The `503` body is the API's error body with the progress beside
/// `error`, in the fields of the `200` answer (`ready` is `false`):
/// `{"error": {"code": "recovering", "message": "... 1200 of 2000 back, 0
/// failed"}, "ready": false, "total": 2000, "recovered": 1200, "failed": 0,
/// "seconds": 1.914}`.
#[utoipa::path(
    get,
    path = "/readyz",
    operation_id = "readyz",
    tag = "server",
    responses(
        (status = 200, description = "Ready: every stored game to bring back is back (or has failed)", body = Readiness,
         example = json!({"ready": true, "total": 2000, "recovered": 2000, "failed": 0, "seconds": 3.207})),
        ReadyRefusals
    )
)]
pub async fn readyz(State(state): State<AppState>) -> Response {
    if let Some(cluster) = &state.cluster {
        if !cluster.is_member() {
            let message = "this node holds no live lease in its cluster (it is joining, rejoining or leaving)";
            return unready(ApiErrorCode::NotMember, message);
        }
        if !cluster.nats_connected() {
            let message = "this node cannot reach NATS: the other nodes' tables cannot be reached from it";
            return unready(ApiErrorCode::NatsUnavailable, message);
        }
    }
    let progress = Readiness::from(state.lobby.recovery());
    if progress.ready {
        if !state.lobby.store().answers().await {
            return unready(ApiErrorCode::StoreUnavailable, "the game store does not answer: games wait for it");
        }
        return Json(progress).into_response();
    }
    let message = format!(
        "the server has restarted and is bringing its stored games back: {} of {} back, {} failed",
        progress.recovered, progress.total, progress.failed
    );
    let code = ApiErrorCode::Recovering;
    let body = NotReady { error: ErrorDetail { code, message: &message }, progress };
    let mut response = (code.status(), Json(body)).into_response();
    if let Some(seconds) = code.retry_after() {
        response.headers_mut().insert(axum::http::header::RETRY_AFTER, seconds.into());
    }
    response
}

/// A `503` that asks to be tried again in a second.
fn unready(code: ApiErrorCode, message: &str) -> Response {
    let mut response = super::error::error_body(code.status(), code, message);
    response.headers_mut().insert(axum::http::header::RETRY_AFTER, 1.into());
    response
}
