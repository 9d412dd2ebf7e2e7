//! REST: the lobby (tables, seats, robots, start) and the settlement
//! calculator.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{ApiError, AppState, ErrorCode};
use crate::bots::strategy::Strategy;
use crate::protocol::json;
use crate::rules::calculator;
use crate::table::{NewTable, RobotSeat, SeatGrant, TableCommand};

/// A request body, read strictly ([`crate::protocol::json`]): an empty body
/// is an empty object.
pub(crate) fn parse<T: DeserializeOwned + Serialize>(body: &Bytes) -> Result<T, ApiError> {
    let text = if body.is_empty() {
        "{}"
    } else {
        std::str::from_utf8(body).map_err(|_| ApiError::bad_request("the body is not UTF-8"))?
    };
    json::from_str(text).map_err(|e| ApiError::bad_request(e.to_string()))
}

/// A robot to seat.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotRequest {
    /// The seat, or any free one.
    #[serde(default)]
    pub seat: Option<u8>,
    /// Its strategy parameters (mj-player's).
    #[serde(default)]
    pub strategy: Strategy,
}

/// `POST /api/v1/tables`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateTable {
    /// The table's name.
    #[serde(default)]
    pub name: Option<String>,
    /// A rule preset.
    #[serde(default)]
    pub preset: Option<String>,
    /// Options over the preset, by catalogue name.
    #[serde(default)]
    pub options: serde_json::Map<String, Value>,
    /// Robots to seat at once.
    #[serde(default)]
    pub robots: Vec<RobotRequest>,
    /// The least pause between actions, in deciseconds (at least the server's `--pause`).
    #[serde(default)]
    pub pause_deciseconds: Option<u32>,
    /// Start the game at once (all four seats must be robots).
    #[serde(default)]
    pub start: bool,
}

/// Opens a table.
pub async fn create(State(state): State<AppState>, body: Bytes) -> Result<Response, ApiError> {
    let request: CreateTable = parse(&body)?;
    let new = NewTable {
        name: request.name,
        preset: request.preset,
        options: request.options,
        robots: request.robots.iter().map(|r| RobotSeat { seat: r.seat, strategy: r.strategy }).collect(),
        pause_deciseconds: request.pause_deciseconds,
        start: request.start,
    };
    let rules = state.rulebook.current();
    let setup = state
        .defaults
        .setup(&rules, new, || state.lobby.next_number())
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    // One batch: the table, its robots and its start are stored together or not at all.
    let handle = state.lobby.open(setup).await?;
    let info = handle.ask(|reply| TableCommand::Info { reply }).await?;
    Ok((StatusCode::CREATED, Json(info)).into_response())
}

/// Lists the tables.
pub async fn list(State(state): State<AppState>) -> Json<Value> {
    let mut tables = state.lobby.list().await;
    tables.sort_by(|a, b| a.id.cmp(&b.id));
    Json(json!({ "tables": tables }))
}

/// One table's public state.
pub async fn get_one(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let handle = state.lobby.get(&id)?;
    let info = handle.ask(|reply| TableCommand::Info { reply }).await?;
    Ok(Json(info).into_response())
}

/// `POST /api/v1/tables/{id}/seats`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SitRequest {
    /// The name to show.
    pub name: String,
    /// The seat wanted, or any free one.
    #[serde(default)]
    pub seat: Option<u8>,
}

/// Takes a seat; answers the seat and its token.
pub async fn sit(State(state): State<AppState>, Path(id): Path<String>, body: Bytes) -> Result<Response, ApiError> {
    let request: SitRequest = parse(&body)?;
    let handle = state.lobby.get(&id)?;
    let (name, seat) = (request.name, request.seat);
    let grant: SeatGrant = handle.ask(|reply| TableCommand::Sit { name, seat, reply }).await??;
    Ok((StatusCode::CREATED, Json(grant)).into_response())
}

/// The seat token from `Authorization: Bearer TOKEN`.
pub(crate) fn bearer(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get(axum::http::header::AUTHORIZATION) else { return Ok(None) };
    let text = value.to_str().map_err(|_| ApiError::bad_request("the Authorization header is not text"))?;
    match text.strip_prefix("Bearer ") {
        Some(token) if !token.trim().is_empty() => Ok(Some(token.trim().to_string())),
        _ => Err(ApiError::refused(ErrorCode::BadToken, "expected Authorization: Bearer SEAT_TOKEN")),
    }
}

/// Leaves a seat (before the game starts): `Authorization: Bearer TOKEN`.
pub async fn leave(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<StatusCode, ApiError> {
    let token =
        bearer(&headers)?.ok_or_else(|| ApiError::refused(ErrorCode::BadToken, "leaving needs the seat token"))?;
    let handle = state.lobby.get(&id)?;
    handle.ask(|reply| TableCommand::Leave { token, reply }).await??;
    Ok(StatusCode::NO_CONTENT)
}

/// Seats a robot.
pub async fn add_robot(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request: RobotRequest = parse(&body)?;
    let handle = state.lobby.get(&id)?;
    let (seat, strategy) = (request.seat, request.strategy);
    let seat = handle.ask(|reply| TableCommand::AddRobot { seat, strategy, reply }).await??;
    Ok((StatusCode::CREATED, Json(json!({ "seat": seat }))).into_response())
}

/// Removes a robot.
pub async fn remove_robot(
    State(state): State<AppState>,
    Path((id, seat)): Path<(String, u8)>,
) -> Result<StatusCode, ApiError> {
    let handle = state.lobby.get(&id)?;
    handle.ask(|reply| TableCommand::RemoveRobot { seat, reply }).await??;
    Ok(StatusCode::NO_CONTENT)
}

/// Starts the game: the manager's seat token, or none at a table of robots.
pub async fn start(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<StatusCode, ApiError> {
    let token = bearer(&headers)?;
    let handle = state.lobby.get(&id)?;
    handle.ask(|reply| TableCommand::Start { token, reply }).await??;
    Ok(StatusCode::NO_CONTENT)
}

/// The settlement calculator over REST: the same request and answer as
/// `mahjong-server settle`, and the server's custom presets besides.
pub async fn settle(State(state): State<AppState>, body: Bytes) -> Result<Response, ApiError> {
    let text = std::str::from_utf8(&body).map_err(|_| ApiError::bad_request("the body is not UTF-8"))?;
    let request: calculator::SettleRequest = json::from_str(text).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let rules = state.rulebook.current();
    let answer =
        calculator::calculate_with(&rules.presets, &request).map_err(|e| ApiError::bad_request(e.to_string()))?;
    Ok(Json(answer).into_response())
}
