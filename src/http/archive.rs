//! REST: game files. A finished game is exported as a game file; a game file
//! is loaded as a new game (a table again if it is not over); a log of the
//! original mj-server is imported as a finished game. See docs/protocol.md,
//! "Game files".

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::auth::{Admin, Caller};
use super::openapi::refusals;
use super::{ApiError, AppState, ErrorCode};
use crate::game_file::{self, ArchiveError, Checked, GameFile, Imported, Source};
use crate::protocol::ws::TableState;

/// The game files' routes (under `/api/v1`), without their limits (see
/// `http::game_files`).
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(export)).routes(routes!(import)).routes(routes!(import_mj_server))
}

/// The largest game file or log these routes take, in bytes: a long game's
/// log runs to megabytes, far beyond the other requests' limit.
pub const MAX_GAME_FILE: usize = 32 * 1024 * 1024;

impl From<ArchiveError> for ApiError {
    fn from(e: ArchiveError) -> ApiError {
        let code = match &e {
            ArchiveError::Json(_) => ErrorCode::BadRequest,
            ArchiveError::Format(_) | ArchiveError::Version(_) => ErrorCode::UnsupportedFile,
            ArchiveError::Invalid(_) => ErrorCode::InvalidGame,
            ArchiveError::Log(_) => ErrorCode::InvalidLog,
        };
        ApiError::refused(code, e.to_string())
    }
}

refusals!(
    /// Why a game is not exported.
    ExportRefusals: NoSuchGame, NotFinished, StoreUnavailable
);

/// A finished game's file.
#[utoipa::path(
    get,
    path = "/games/{id}/export",
    operation_id = "export_game",
    tag = "game files",
    params(("id" = String, Path, description = "The game's id.")),
    responses(
        (status = 200, description = "The game file, as an attachment", body = GameFile,
            headers(("content-disposition" = String, description = "`attachment; filename=\"mahjong-game-ID.json\"`"))),
        ExportRefusals
    )
)]
pub async fn export(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let file = game_file::export(state.lobby.store(), super::games::game_id(&id)?)
        .await?
        .ok_or_else(|| ApiError::refused(ErrorCode::NoSuchGame, format!("no game {id}")))?;
    if file.game.state != TableState::Over.as_str() {
        // Its log holds every player's concealed tiles and its inputs the
        // walls to come: handing it out would spoil the game.
        return Err(ApiError::refused(
            ErrorCode::NotFinished,
            format!(
                "game {id} is not over: an unfinished game's log holds the concealed tiles and the wall \
                 (the server's operator can export it with `mahjong-server export`)"
            ),
        ));
    }
    let disposition = format!("attachment; filename=\"mahjong-game-{id}.json\"");
    Ok(([(header::CONTENT_DISPOSITION, disposition)], Json(file)).into_response())
}

/// Reads and checks off the async threads: a long game replays for a while.
async fn checked(read: impl FnOnce() -> Result<Checked, ArchiveError> + Send + 'static) -> Result<Checked, ApiError> {
    tokio::task::spawn_blocking(read)
        .await
        .map_err(|e| ApiError::internal(format!("checking a game file: {e}")))?
        .map_err(ApiError::from)
}

refusals!(
    /// Why a game file is not loaded.
    ImportRefusals: BadRequest, Unauthenticated, AccountDisabled, CsrfHeaderMissing, AdminOnly, UnsupportedFile,
        InvalidGame, Closed, StoreUnavailable
);

/// Loads a game file as a new game (admins only): a game not
/// over is played on at a new table, its people's seats waiting for them with
/// new tokens.
#[utoipa::path(
    post,
    path = "/games/import",
    operation_id = "import_game",
    tag = "game files",
    security(("account_token" = []), ("session_cookie" = [])),
    request_body(content = GameFile, content_type = "application/json"),
    responses((status = 201, description = "The new game", body = Imported), ImportRefusals)
)]
pub async fn import(State(state): State<AppState>, Admin(admin): Admin, body: Bytes) -> Result<Response, ApiError> {
    let text = String::from_utf8(body.to_vec()).map_err(|_| ApiError::bad_request("the body is not UTF-8"))?;
    let checked = checked(move || game_file::parse(&text).and_then(|file| game_file::check(&file))).await?;
    let imported = game_file::load(&state.lobby, checked, Source::GameFile).await?;
    logged(&state, &admin, "game.import", &imported).await;
    Ok((StatusCode::CREATED, Json(imported)).into_response())
}

refusals!(
    /// Why an mj-server log is not imported.
    ImportLogRefusals: BadRequest, Unauthenticated, AccountDisabled, CsrfHeaderMissing, AdminOnly, UnsupportedFile,
        InvalidGame, InvalidLog, Closed, StoreUnavailable
);

/// Imports an mj-server game log (the body, as text) as a finished game
/// (admins only).
#[utoipa::path(
    post,
    path = "/games/import-mj-server",
    operation_id = "import_mj_server_log",
    tag = "game files",
    security(("account_token" = []), ("session_cookie" = [])),
    request_body(content = String, content_type = "text/plain", description = "A game log written by mj-server"),
    responses((status = 201, description = "The new game", body = Imported), ImportLogRefusals)
)]
pub async fn import_mj_server(
    State(state): State<AppState>,
    Admin(admin): Admin,
    body: Bytes,
) -> Result<Response, ApiError> {
    // mj-server wrote bytes; names are the only free text, so a stray byte
    // costs at most a character of a name.
    let text = String::from_utf8_lossy(&body).into_owned();
    let now = crate::store::now_us();
    let checked = checked(move || game_file::check(&game_file::mj_server::game_file(&text, now)?)).await?;
    let imported = game_file::load(&state.lobby, checked, Source::MjServer).await?;
    logged(&state, &admin, "game.import_mj_server", &imported).await;
    Ok((StatusCode::CREATED, Json(imported)).into_response())
}

/// Logs an import in the audit log: the new game, never its seat tokens.
async fn logged(state: &AppState, admin: &Caller, action: &'static str, imported: &game_file::Imported) {
    let after = serde_json::json!({"id": imported.id, "state": imported.state, "hands": imported.hands});
    super::options::record_change(state, admin, action, format!("game/{}", imported.id), None, Some(after)).await;
}
