//! REST: game files. A finished game is exported as a game file; a game file
//! is loaded as a new game (a table again if it is not over); a log of the
//! original mj-server is imported as a finished game. See docs/protocol.md,
//! "Game files".

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::auth::{Admin, Caller};
use super::{ApiError, AppState, ErrorCode};
use crate::game_file::{self, ArchiveError, Checked, Source};
use crate::protocol::ws::TableState;

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

/// `GET /api/v1/games/{id}/export`: a finished game's file.
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

/// `POST /api/v1/games/import`: loads a game file as a new game.
pub async fn import(State(state): State<AppState>, Admin(admin): Admin, body: Bytes) -> Result<Response, ApiError> {
    let text = String::from_utf8(body.to_vec()).map_err(|_| ApiError::bad_request("the body is not UTF-8"))?;
    let checked = checked(move || game_file::parse(&text).and_then(|file| game_file::check(&file))).await?;
    let imported = game_file::load(&state.lobby, checked, Source::GameFile).await?;
    logged(&state, &admin, "game.import", &imported).await;
    Ok((StatusCode::CREATED, Json(imported)).into_response())
}

/// `POST /api/v1/games/import-mj-server`: imports an mj-server game log
/// (the body, as text) as a finished game.
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
