//! REST: game files. A finished game is exported as a game file; a game file
//! is loaded as a new game (a table again if it is not over); a log of the
//! original mj-server is imported as a finished game. See docs/protocol.md,
//! "Game files".
//!
//! An import may carry an `Idempotency-Key` header, so that a client that
//! lost the answer can send the request again without storing the game
//! twice: the game is stored together with the key
//! ([`crate::store::idempotency`]), and a request with a key already used
//! for the same request (the same endpoint and body) is answered as the
//! first was, with `replayed: true` and the header `Idempotent-Replayed:
//! true`, storing nothing; for another request, it is refused.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::audit::record_change;
use super::extract::{Admin, Caller, game_id};
use super::openapi::refusals;
use super::{ApiError, ApiErrorCode, AppState};
use crate::game_file::{self, ArchiveError, Checked, GameFile, Imported, LoadedOnce, Source};
use crate::protocol::ws::TableState;
use crate::store::idempotency::{Remembered, RequestKey};

/// The game files' routes (under `/api/v1`), without their limits (see
/// `http::game_files`).
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(export))
        .routes(routes!(export_mj_server))
        .routes(routes!(import))
        .routes(routes!(import_mj_server))
}

/// The largest game file or log these routes take, in bytes: a long game's
/// log runs to megabytes, far beyond the other requests' limit.
pub const MAX_GAME_FILE: usize = 32 * 1024 * 1024;

/// The request header that names an import, so that it may be sent again.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// The answer's header that says it repeats an earlier answer.
pub const IDEMPOTENT_REPLAYED: &str = "idempotent-replayed";

/// The longest `Idempotency-Key`, in characters (visible ASCII).
pub const MAX_IDEMPOTENCY_KEY: usize = 255;

/// The import's `Idempotency-Key`, if it has one, as the key of the
/// `operation` on `body`. A key is 1 to [`MAX_IDEMPOTENCY_KEY`] visible
/// ASCII characters (`!` to `~`: no spaces), given once.
fn request_key(headers: &HeaderMap, operation: &'static str, body: &[u8]) -> Result<Option<RequestKey>, ApiError> {
    let mut values = headers.get_all(IDEMPOTENCY_KEY).iter();
    let Some(value) = values.next() else { return Ok(None) };
    let bad = |why: String| ApiError::refused(ApiErrorCode::BadIdempotencyKey, why);
    if values.next().is_some() {
        return Err(bad("give one Idempotency-Key header, not several".into()));
    }
    let bytes = value.as_bytes();
    let visible = bytes.iter().all(|b| (b'!'..=b'~').contains(b));
    if bytes.is_empty() || bytes.len() > MAX_IDEMPOTENCY_KEY || !visible {
        return Err(bad(format!(
            "an Idempotency-Key is 1 to {MAX_IDEMPOTENCY_KEY} visible ASCII characters (no spaces); this one has {} \
             bytes{}",
            bytes.len(),
            if visible { "" } else { ", not all of them visible ASCII" }
        )));
    }
    // Visible ASCII is UTF-8.
    let key = String::from_utf8_lossy(bytes).into_owned();
    Ok(Some(RequestKey::new(key, operation, body)))
}

/// The answer to a request whose key is taken: the first answer again if it
/// is the same request, a refusal if not.
fn answer_again(key: &RequestKey, remembered: &Remembered) -> Result<Response, ApiError> {
    if !remembered.same_request(key) {
        let what = if remembered.operation == key.operation { "another body" } else { "another endpoint" };
        return Err(ApiError::refused(
            ApiErrorCode::IdempotencyKeyReused,
            format!(
                "this Idempotency-Key was used for another request ({what}) within the last {} hours: use a new \
                 key for a new request",
                crate::store::idempotency::KEEP.as_secs() / 3600
            ),
        ));
    }
    let answer = game_file::replayed(remembered);
    Ok((StatusCode::CREATED, [(IDEMPOTENT_REPLAYED, "true")], Json(answer)).into_response())
}

/// Stores a checked game (a table at once if it is not over), once for its
/// key if it has one; the answer, and the game imported if this request
/// stored it (for the audit log).
async fn store_once(
    state: &AppState,
    checked: Checked,
    source: Source,
    key: Option<&RequestKey>,
) -> Result<(Response, Option<Imported>), ApiError> {
    let imported = match key {
        None => game_file::load(&state.lobby, checked, source).await?,
        Some(key) => match game_file::load_once(&state.lobby, checked, source, key).await? {
            LoadedOnce::Loaded(imported) => imported,
            // Another request with this key stored its game meanwhile.
            LoadedOnce::Taken(remembered) => return Ok((answer_again(key, &remembered)?, None)),
        },
    };
    Ok(((StatusCode::CREATED, Json(imported.clone())).into_response(), Some(imported)))
}

/// The answer of an earlier request with this key, when there is one (asked
/// before the file is checked: a retry costs no replay).
async fn earlier_answer(state: &AppState, key: Option<&RequestKey>) -> Result<Option<Response>, ApiError> {
    let Some(key) = key else { return Ok(None) };
    match state.lobby.store().remembered(&key.key).await? {
        Some(remembered) => answer_again(key, &remembered).map(Some),
        None => Ok(None),
    }
}

impl From<ArchiveError> for ApiError {
    fn from(e: ArchiveError) -> ApiError {
        let code = match &e {
            ArchiveError::Json(_) => ApiErrorCode::BadRequest,
            ArchiveError::Format(_) | ArchiveError::Version(_) => ApiErrorCode::UnsupportedFile,
            ArchiveError::Invalid(_) => ApiErrorCode::InvalidGame,
            ArchiveError::Log(_) => ApiErrorCode::InvalidLog,
            ArchiveError::Unrecordable(_) => ApiErrorCode::Unrecordable,
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
    let file = finished_game(&state, &id).await?;
    let disposition = format!("attachment; filename=\"mahjong-game-{id}.json\"");
    Ok(([(header::CONTENT_DISPOSITION, disposition)], Json(file)).into_response())
}

/// A stored game's file, if the game is over.
async fn finished_game(state: &AppState, id: &str) -> Result<GameFile, ApiError> {
    let file = game_file::export(state.lobby.store(), game_id(id)?)
        .await?
        .ok_or_else(|| ApiError::refused(ApiErrorCode::NoSuchGame, format!("no game {id}")))?;
    if file.game.state != TableState::Over.as_str() {
        // Its log holds every player's concealed tiles and its inputs the
        // walls to come: handing it out would spoil the game.
        return Err(ApiError::refused(
            ApiErrorCode::NotFinished,
            format!(
                "game {id} is not over: an unfinished game's log holds the concealed tiles and the wall \
                 (the server's operator can export it with `mahjong-server export`)"
            ),
        ));
    }
    Ok(file)
}

refusals!(
    /// Why a game is not exported as an mj-server log.
    ExportLogRefusals: NoSuchGame, NotFinished, Unrecordable, StoreUnavailable
);

/// A finished game as the log mj-server would have written of it (the
/// format of mj-server's `--logfile` and of the reference corpus): what each
/// player's connection received and sent, every tile included. Importing it
/// (`POST /games/import-mj-server`) gives the same game. A game played with
/// rules the log cannot record (tile swap, animals, double dice, no special
/// scores) is refused.
#[utoipa::path(
    get,
    path = "/games/{id}/export-mj-server",
    operation_id = "export_mj_server_log",
    tag = "game files",
    params(("id" = String, Path, description = "The game's id.")),
    responses(
        (status = 200, description = "The log, as an attachment", content_type = "text/plain", body = String,
            headers(("content-disposition" = String, description = "`attachment; filename=\"mahjong-game-ID.log\"`"))),
        ExportLogRefusals
    )
)]
pub async fn export_mj_server(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let file = finished_game(&state, &id).await?;
    // A table closed before its seats were all taken never had a game: a
    // log records play, and there was none.
    if file.seats.len() < 4 {
        return Err(ApiError::refused(
            ApiErrorCode::Unrecordable,
            format!(
                "game {id} never started (its table closed with {} of 4 seats taken): there is no play to write as an mj-server log",
                file.seats.len()
            ),
        ));
    }
    // The file is replayed (checked) to read it: off the async threads.
    let log = tokio::task::spawn_blocking(move || game_file::check(&file).and_then(|c| game_file::mj_server::log(&c)))
        .await
        .map_err(|e| ApiError::internal(format!("writing an mj-server log: {e}")))??;
    let disposition = format!("attachment; filename=\"mahjong-game-{id}.log\"");
    Ok((
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8".to_string()), (header::CONTENT_DISPOSITION, disposition)],
        log,
    )
        .into_response())
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
        BadIdempotencyKey, InvalidGame, IdempotencyKeyReused, Closed, StoreUnavailable
);

/// Loads a game file as a new game (admins only): a game not
/// over is played on at a new table, its people's seats waiting for them with
/// new tokens.
///
/// With an `Idempotency-Key`, the request may be sent again (its answer was
/// lost): the same key with the same body is answered as the first time
/// (`replayed: true`, the header `Idempotent-Replayed: true`, no seat
/// tokens), and stores nothing.
#[utoipa::path(
    post,
    path = "/games/import",
    operation_id = "import_game",
    tag = "game files",
    security(("account_token" = []), ("session_cookie" = [])),
    params(IdempotencyKey),
    request_body(content = GameFile, content_type = "application/json"),
    responses(
        (status = 201, description = "The new game; or, for a request sent again with its `Idempotency-Key`, the \
            first answer again (`replayed: true`, no seat tokens)", body = Imported,
            headers(("idempotent-replayed" = String, description = "`true` when the answer repeats an earlier one"))),
        ImportRefusals
    )
)]
pub async fn import(
    State(state): State<AppState>,
    Admin(admin): Admin,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let key = request_key(&headers, "import_game", &body)?;
    if let Some(answer) = earlier_answer(&state, key.as_ref()).await? {
        return Ok(answer);
    }
    let text = String::from_utf8(body.to_vec()).map_err(|_| ApiError::bad_request("the body is not UTF-8"))?;
    let checked = checked(move || game_file::parse(&text).and_then(|file| game_file::check(&file))).await?;
    let (answer, imported) = store_once(&state, checked, Source::GameFile, key.as_ref()).await?;
    if let Some(imported) = imported {
        logged(&state, &admin, "game.import", &imported).await;
    }
    Ok(answer)
}

refusals!(
    /// Why an mj-server log is not imported.
    ImportLogRefusals: BadRequest, Unauthenticated, AccountDisabled, CsrfHeaderMissing, AdminOnly, UnsupportedFile,
        BadIdempotencyKey, InvalidGame, InvalidLog, IdempotencyKeyReused, Closed, StoreUnavailable
);

/// Imports an mj-server game log (the body, as text) as a finished game
/// (admins only).
///
/// With an `Idempotency-Key`, the request may be sent again (its answer was
/// lost): the same key with the same log is answered as the first time
/// (`replayed: true`, the header `Idempotent-Replayed: true`), and stores
/// nothing.
#[utoipa::path(
    post,
    path = "/games/import-mj-server",
    operation_id = "import_mj_server_log",
    tag = "game files",
    security(("account_token" = []), ("session_cookie" = [])),
    params(IdempotencyKey),
    request_body(content = String, content_type = "text/plain", description = "A game log written by mj-server"),
    responses(
        (status = 201, description = "The new game; or, for a request sent again with its `Idempotency-Key`, the \
            first answer again (`replayed: true`)", body = Imported,
            headers(("idempotent-replayed" = String, description = "`true` when the answer repeats an earlier one"))),
        ImportLogRefusals
    )
)]
pub async fn import_mj_server(
    State(state): State<AppState>,
    Admin(admin): Admin,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let key = request_key(&headers, "import_mj_server_log", &body)?;
    if let Some(answer) = earlier_answer(&state, key.as_ref()).await? {
        return Ok(answer);
    }
    // mj-server wrote bytes; names are the only free text, so a stray byte
    // costs at most a character of a name.
    let text = String::from_utf8_lossy(&body).into_owned();
    let now = crate::store::now_us();
    let checked = checked(move || game_file::check(&game_file::mj_server::game_file(&text, now)?)).await?;
    let (answer, imported) = store_once(&state, checked, Source::MjServer, key.as_ref()).await?;
    if let Some(imported) = imported {
        logged(&state, &admin, "game.import_mj_server", &imported).await;
    }
    Ok(answer)
}

/// The `Idempotency-Key` header of the imports.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)] // read from the headers by `request_key`; here for the document
pub struct IdempotencyKey {
    /// Names this request, so that it may be sent again safely (its answer
    /// was lost): 1 to 255 visible ASCII characters, e.g. a UUID. A request
    /// with a key used within the last 24 hours for the same request (the
    /// same endpoint and body) stores nothing and gets the first answer
    /// again; with a key used for another request, it is refused
    /// `422 idempotency_key_reused`. Keys are forgotten after 24 hours.
    #[param(rename = "Idempotency-Key", required = false, min_length = 1, max_length = 255, pattern = "^[!-~]+$")]
    idempotency_key: String,
}

/// Logs an import in the audit log: the new game, never its seat tokens.
async fn logged(state: &AppState, admin: &Caller, action: &'static str, imported: &game_file::Imported) {
    let after = serde_json::json!({"id": imported.id, "state": imported.state, "hands": imported.hands});
    record_change(state, admin, action, format!("game/{}", imported.id), None, Some(after)).await;
}
