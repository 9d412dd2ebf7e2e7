//! REST: the score queries over the stored games (`/api/v1/games...`,
//! `/api/v1/standings`). They read the store only, so they answer for
//! finished games long after their tables have closed, and for live games
//! as far as the table has written (it writes before it sends).
//!
//! Query parameters are checked here, each with its own message; unknown
//! ones are refused, so that a misspelt filter never silently lists
//! everything.

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{MaybeCaller, game_id, seat_token};
use super::openapi::refusals;
use super::paging::{query, window};
use super::{ApiError, ApiErrorCode, AppState};
use crate::protocol::ws::TableState;
use crate::store::GameSource;
use crate::store::dates::parse_time;
use crate::store::queries::{
    GameDetail, GameFilter, GamePage, GameProgress, HandDetail, HandHistory, HandPage, StandingsPage, Viewer,
};

/// The score queries' routes (under `/api/v1`).
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(get_one))
        .routes(routes!(hands))
        .routes(routes!(hand))
        .routes(routes!(hand_events))
        .routes(routes!(standings))
}

/// A game's id in a path.
pub(super) const GAME_ID: &str = "The game's id (its table's id).";

/// A hand's number in a path.
const HAND_NUMBER: &str = "The hand's number in the game, from 1.";

/// The query of `GET /api/v1/games`. Values are read as text and checked
/// one by one, for messages that name the parameter (the API's schema gives
/// each its type).
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct GamesQuery {
    /// Only games where a player of this name sits.
    #[param(min_length = 1)]
    pub player: Option<String>,
    /// Only games where this account (its number) sits.
    #[param(value_type = Option<i64>, minimum = 1)]
    pub account: Option<String>,
    /// `open`, `playing` or `over`.
    #[param(value_type = Option<crate::protocol::ws::TableState>)]
    pub state: Option<String>,
    /// `live`, `loaded` or `mj-server`.
    #[param(value_type = Option<crate::store::GameSource>)]
    pub source: Option<String>,
    /// Opened at or after this date: `YYYY-MM-DD` (midnight UTC),
    /// `YYYY-MM-DDTHH:MM:SSZ` or Unix seconds.
    #[param(min_length = 1)]
    pub from: Option<String>,
    /// Opened before this date (the same forms as `from`).
    #[param(min_length = 1)]
    pub to: Option<String>,
    /// Games per page (default 20).
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100)]
    pub limit: Option<String>,
    /// Games skipped.
    #[param(value_type = Option<i64>, minimum = 0, maximum = 1_000_000_000)]
    pub offset: Option<String>,
}

/// The query of `GET /api/v1/games/{id}/hands`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Items per page (default 20).
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100)]
    pub limit: Option<String>,
    /// Items skipped.
    #[param(value_type = Option<i64>, minimum = 0, maximum = 1_000_000_000)]
    pub offset: Option<String>,
}

/// The query of `GET /api/v1/standings`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct StandingsQuery {
    /// Only this player.
    #[param(min_length = 1)]
    pub player: Option<String>,
    /// Only this account (its number).
    #[param(value_type = Option<i64>, minimum = 1)]
    pub account: Option<String>,
    /// Players per page (default 20).
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100)]
    pub limit: Option<String>,
    /// Players skipped.
    #[param(value_type = Option<i64>, minimum = 0, maximum = 1_000_000_000)]
    pub offset: Option<String>,
}

/// A player's name to filter on: not blank, and no control character (no
/// name has one, and Postgres refuses NUL).
fn player(name: Option<String>) -> Result<Option<String>, ApiError> {
    match name {
        Some(n) if n.trim().is_empty() => Err(ApiError::bad_request("player must name a player: it is empty")),
        Some(n) => {
            crate::text::check_characters("player", &n).map_err(|e| ApiError::bad_request(e.to_string()))?;
            Ok(Some(n.trim().to_string()))
        }
        None => Ok(None),
    }
}

/// An account's number to filter on: a whole number from 1.
fn account(value: Option<&str>) -> Result<Option<i64>, ApiError> {
    match value {
        None => Ok(None),
        Some(v) => match v.parse::<i64>() {
            Ok(n) if n >= 1 => Ok(Some(n)),
            _ => Err(ApiError::bad_request(format!("account must be an account's number (from 1), not '{v}'"))),
        },
    }
}

/// A value that must be the name (`as_str`) of one of `allowed`.
fn one_of<T: Copy>(
    name: &str,
    value: Option<String>,
    allowed: &[T],
    as_str: fn(T) -> &'static str,
) -> Result<Option<T>, ApiError> {
    let Some(v) = value else { return Ok(None) };
    match allowed.iter().find(|a| as_str(**a) == v) {
        Some(a) => Ok(Some(*a)),
        None => {
            let names: Vec<&str> = allowed.iter().map(|a| as_str(*a)).collect();
            Err(ApiError::bad_request(format!("{name} must be one of {}, not '{v}'", names.join(", "))))
        }
    }
}

/// A date parameter, in µs since the epoch.
fn date(name: &str, value: Option<&str>) -> Result<Option<i64>, ApiError> {
    value.map(|v| parse_time(v).map_err(|e| ApiError::bad_request(format!("{name}: {e}")))).transpose()
}

/// A hand number from the path.
fn hand_number(text: &str) -> Result<i64, ApiError> {
    text.parse::<i64>()
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| ApiError::bad_request(format!("a hand number is a whole number from 1, not '{text}'")))
}

/// The game's progress, or 404.
async fn progress(state: &AppState, id: &str) -> Result<GameProgress, ApiError> {
    state
        .lobby
        .store()
        .game_progress(id)
        .await?
        .ok_or_else(|| ApiError::refused(ApiErrorCode::NoSuchGame, format!("no game {id}")))
}

/// The 404 for a hand the game does not have (finished, for `finished`).
fn no_such_hand(id: &str, n: i64, game: &GameProgress, finished: bool) -> ApiError {
    let why = if n <= game.hands && finished {
        format!("hand {n} of game {id} has not finished")
    } else {
        format!("game {id} has no hand {n}: {} dealt", game.hands)
    };
    ApiError::refused(ApiErrorCode::NoSuchHand, why)
}

refusals!(
    /// Why the games are not listed.
    ListRefusals: BadRequest, StoreUnavailable
);

/// The stored games, newest first.
#[utoipa::path(
    get,
    path = "/games",
    operation_id = "list_games",
    tag = "scores",
    params(GamesQuery),
    responses((status = 200, description = "A page of games", body = GamePage), ListRefusals)
)]
pub async fn list(
    State(state): State<AppState>,
    q: Result<Query<GamesQuery>, QueryRejection>,
) -> Result<Json<GamePage>, ApiError> {
    let q = query(q)?;
    let window = window(q.limit.as_deref(), q.offset.as_deref())?;
    let filter = GameFilter {
        from_us: date("from", q.from.as_deref())?,
        to_us: date("to", q.to.as_deref())?,
        player: player(q.player)?,
        account: account(q.account.as_deref())?,
        state: one_of(
            "state",
            q.state,
            &[TableState::Open, TableState::Playing, TableState::Over],
            TableState::as_str,
        )?,
        source: one_of("source", q.source, &GameSource::ALL, GameSource::as_str)?,
    };
    if let (Some(from), Some(to)) = (filter.from_us, filter.to_us)
        && from >= to
    {
        return Err(ApiError::bad_request("from must be before to (from is inclusive, to exclusive)"));
    }
    Ok(Json(state.lobby.store().list_games(&filter, window).await?))
}

refusals!(
    /// Why a game is not told.
    GameRefusals: NoSuchGame, StoreUnavailable
);

/// One game: its players, the options in force,
/// its scores.
#[utoipa::path(
    get,
    path = "/games/{id}",
    operation_id = "get_game",
    tag = "scores",
    params(("id" = String, Path, description = GAME_ID)),
    responses((status = 200, description = "The game", body = GameDetail), GameRefusals)
)]
pub async fn get_one(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<GameDetail>, ApiError> {
    let game = state.lobby.store().game_detail(game_id(&id)?).await?;
    game.map(Json).ok_or_else(|| ApiError::refused(ApiErrorCode::NoSuchGame, format!("no game {id}")))
}

refusals!(
    /// Why a game's hands are not listed.
    HandsRefusals: BadRequest, NoSuchGame, StoreUnavailable
);

/// Its finished hands, in order, with their
/// scores and settlements.
#[utoipa::path(
    get,
    path = "/games/{id}/hands",
    operation_id = "list_hands",
    tag = "scores",
    params(("id" = String, Path, description = GAME_ID), PageQuery),
    responses((status = 200, description = "A page of hands", body = HandPage), HandsRefusals)
)]
pub async fn hands(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<PageQuery>, QueryRejection>,
) -> Result<Json<HandPage>, ApiError> {
    let q = query(q)?;
    let window = window(q.limit.as_deref(), q.offset.as_deref())?;
    progress(&state, game_id(&id)?).await?;
    Ok(Json(state.lobby.store().list_hands(&id, window).await?))
}

refusals!(
    /// Why a hand is not told.
    HandRefusals: BadRequest, NoSuchGame, NoSuchHand, StoreUnavailable
);

/// One finished hand.
#[utoipa::path(
    get,
    path = "/games/{id}/hands/{n}",
    operation_id = "get_hand",
    tag = "scores",
    params(("id" = String, Path, description = GAME_ID), ("n" = i64, Path, description = HAND_NUMBER, minimum = 1)),
    responses((status = 200, description = "The hand", body = HandDetail), HandRefusals)
)]
pub async fn hand(
    State(state): State<AppState>,
    Path((id, n)): Path<(String, String)>,
) -> Result<Json<HandDetail>, ApiError> {
    let n = hand_number(&n)?;
    let game = progress(&state, game_id(&id)?).await?;
    let hand = state.lobby.store().hand_detail(&id, n).await?;
    hand.map(Json).ok_or_else(|| no_such_hand(&id, n, &game, true))
}

refusals!(
    /// Why a hand's history is not told.
    HandEventsRefusals: BadRequest, BadToken, Unauthenticated, AccountDisabled, NoSuchGame, NoSuchHand, StoreUnavailable
);

/// A hand's history for replay.
/// Everything once the game is over; while it is live, what a spectator
/// sees, or with `Authorization: Bearer SEAT_TOKEN` what that seat sees.
#[utoipa::path(
    get,
    path = "/games/{id}/hands/{n}/events",
    operation_id = "get_hand_events",
    tag = "scores",
    params(("id" = String, Path, description = GAME_ID), ("n" = i64, Path, description = HAND_NUMBER, minimum = 1)),
    security((), ("seat_token" = []), ("account_token" = []), ("session_cookie" = [])),
    responses((status = 200, description = "The hand's events", body = HandHistory), HandEventsRefusals)
)]
pub async fn hand_events(
    State(state): State<AppState>,
    Path((id, n)): Path<(String, String)>,
    MaybeCaller(caller): MaybeCaller,
    headers: HeaderMap,
) -> Result<Json<HandHistory>, ApiError> {
    let n = hand_number(&n)?;
    let game = progress(&state, game_id(&id)?).await?;
    let store = state.lobby.store();
    // A token is checked even when the game is over: a wrong one is a
    // mistake worth telling, not something to ignore. An account's session
    // sees what the seat its account held sees (a spectator's view if it
    // held none).
    let seat = match (seat_token(&headers)?, &caller) {
        (Some(token), _) => Some(
            store
                .seat_of_token(&id, &token)
                .await?
                .ok_or_else(|| ApiError::refused(ApiErrorCode::BadToken, format!("not a seat token of game {id}")))?,
        ),
        (None, Some(c)) => store.seat_of_account(&id, c.user_id).await?,
        (None, None) => None,
    };
    let viewer = match seat {
        _ if game.state == TableState::Over => Viewer::Everything,
        Some(s) => Viewer::Player(s),
        None => Viewer::Spectator,
    };
    let history = store.hand_history(&id, n, viewer).await?;
    history.map(Json).ok_or_else(|| no_such_hand(&id, n, &game, false))
}

refusals!(
    /// Why the standings are not told.
    StandingsRefusals: BadRequest, StoreUnavailable
);

/// Every player's record, best first.
#[utoipa::path(
    get,
    path = "/standings",
    operation_id = "get_standings",
    tag = "scores",
    params(StandingsQuery),
    responses((status = 200, description = "A page of standings", body = StandingsPage), StandingsRefusals)
)]
pub async fn standings(
    State(state): State<AppState>,
    q: Result<Query<StandingsQuery>, QueryRejection>,
) -> Result<Json<StandingsPage>, ApiError> {
    let q = query(q)?;
    let window = window(q.limit.as_deref(), q.offset.as_deref())?;
    let player = player(q.player)?;
    let account = account(q.account.as_deref())?;
    Ok(Json(state.lobby.store().standings(player.as_deref(), account, window).await?))
}
