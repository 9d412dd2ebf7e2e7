//! REST: the lobby (tables, seats, robots, start) and the settlement
//! calculator.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::openapi::refusals;
use super::{ApiError, AppState, ErrorCode};
use crate::bots::strategy::Strategy;
use crate::protocol::json;
use crate::protocol::ws::TableInfo;
use crate::rules::calculator::{self, SettleRequest, SettleResponse};
use crate::rules::presets::PresetListing;
use crate::table::{NewTable, RobotSeat, SeatGrant, TableCommand};

/// The lobby's and the calculator's routes (under `/api/v1`).
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(get_one))
        .routes(routes!(sit, leave))
        .routes(routes!(add_robot))
        .routes(routes!(remove_robot))
        .routes(routes!(start))
        .routes(routes!(settle))
        .routes(routes!(presets))
}

/// A table's id in a path.
const TABLE_ID: &str = "The table's id (as `POST /api/v1/tables` answered it).";

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
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RobotRequest {
    /// The seat, or any free one.
    #[serde(default)]
    #[schema(maximum = 3)]
    pub seat: Option<u8>,
    /// Its strategy parameters (mj-player's).
    #[serde(default)]
    pub strategy: Strategy,
}

/// `POST /api/v1/tables`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTable {
    /// The table's name: 1 to 64 characters, by the text policy (default
    /// `Mah-Jong table`).
    #[serde(default)]
    #[schema(min_length = 1)]
    pub name: Option<String>,
    /// A rule preset.
    #[serde(default)]
    pub preset: Option<String>,
    /// Options over the preset, by catalogue name.
    #[serde(default)]
    #[schema(value_type = HashMap<String, crate::rules::options::OptionValue>)]
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

refusals!(
    /// Why a table does not open.
    CreateRefusals: BadRequest, Closed, StoreUnavailable
);

/// Opens a table.
///
/// Every field of the body is optional (an empty body opens a table of the
/// server's defaults).
#[utoipa::path(
    post,
    path = "/tables",
    operation_id = "create_table",
    tag = "lobby",
    request_body(content = Option<CreateTable>, content_type = "application/json"),
    responses((status = 201, description = "The table opened", body = TableInfo), CreateRefusals)
)]
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
    let setup =
        state.defaults.setup(new, || state.lobby.next_number()).map_err(|e| ApiError::bad_request(e.to_string()))?;
    // One batch: the table, its robots and its start are stored together or not at all.
    let handle = state.lobby.open(setup).await?;
    let info = handle.ask(|reply| TableCommand::Info { reply }).await?;
    Ok((StatusCode::CREATED, Json(info)).into_response())
}

/// The answer of `GET /api/v1/tables`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TableList {
    /// Every open table, by id.
    pub tables: Vec<TableInfo>,
}

/// Lists the tables.
#[utoipa::path(get, path = "/tables", operation_id = "list_tables", tag = "lobby", responses((status = 200, description = "Every table", body = TableList)))]
pub async fn list(State(state): State<AppState>) -> Json<TableList> {
    let mut tables = state.lobby.list().await;
    tables.sort_by(|a, b| a.id.cmp(&b.id));
    Json(TableList { tables })
}

refusals!(
    /// Why a table's state is not told.
    GetRefusals: NoSuchTable, Closed
);

/// One table's public state.
#[utoipa::path(
    get,
    path = "/tables/{id}",
    operation_id = "get_table",
    tag = "lobby",
    params(("id" = String, Path, description = TABLE_ID)),
    responses((status = 200, description = "The table", body = TableInfo), GetRefusals)
)]
pub async fn get_one(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let handle = state.lobby.get(&id)?;
    let info = handle.ask(|reply| TableCommand::Info { reply }).await?;
    Ok(Json(info).into_response())
}

/// `POST /api/v1/tables/{id}/seats`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SitRequest {
    /// The name to show: 1 to 32 characters, by the text policy.
    #[schema(min_length = 1)]
    pub name: String,
    /// The seat wanted, or any free one.
    #[serde(default)]
    #[schema(maximum = 3)]
    pub seat: Option<u8>,
}

refusals!(
    /// Why a seat is not taken.
    SitRefusals: BadRequest, NoSuchTable, SeatTaken, NotNow, Closed, StoreUnavailable
);

/// Takes a seat; answers the seat and its token.
#[utoipa::path(
    post,
    path = "/tables/{id}/seats",
    operation_id = "take_seat",
    tag = "lobby",
    params(("id" = String, Path, description = TABLE_ID)),
    request_body(content = SitRequest, content_type = "application/json"),
    responses(
        (status = 201, description = "Seated: the seat and its token, the player's only credential", body = SeatGrant),
        SitRefusals
    )
)]
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

refusals!(
    /// Why a seat is not left.
    LeaveRefusals: BadRequest, BadToken, NoSuchTable, NotNow, Closed, StoreUnavailable
);

/// Leaves a seat (before the game starts): `Authorization: Bearer TOKEN`.
#[utoipa::path(
    delete,
    path = "/tables/{id}/seats",
    operation_id = "leave_seat",
    tag = "lobby",
    params(("id" = String, Path, description = TABLE_ID)),
    security(("seat_token" = [])),
    responses((status = 204, description = "The seat is free"), LeaveRefusals)
)]
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

/// The answer of `POST /api/v1/tables/{id}/robots`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RobotSeated {
    /// The robot's seat.
    #[schema(maximum = 3)]
    pub seat: u8,
}

refusals!(
    /// Why a robot is not seated.
    AddRobotRefusals: BadRequest, NoSuchTable, SeatTaken, NotNow, Closed, StoreUnavailable
);

/// Seats a robot.
///
/// Every field of the body is optional (an empty body seats a robot of the
/// default strategy in any free seat).
#[utoipa::path(
    post,
    path = "/tables/{id}/robots",
    operation_id = "add_robot",
    tag = "lobby",
    params(("id" = String, Path, description = TABLE_ID)),
    request_body(content = Option<RobotRequest>, content_type = "application/json"),
    responses((status = 201, description = "The robot sits", body = RobotSeated), AddRobotRefusals)
)]
pub async fn add_robot(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request: RobotRequest = parse(&body)?;
    let handle = state.lobby.get(&id)?;
    let (seat, strategy) = (request.seat, request.strategy);
    let seat = handle.ask(|reply| TableCommand::AddRobot { seat, strategy, reply }).await??;
    Ok((StatusCode::CREATED, Json(RobotSeated { seat })).into_response())
}

refusals!(
    /// Why a robot is not removed.
    RemoveRobotRefusals: BadRequest, NoSuchTable, NotNow, Closed, StoreUnavailable
);

/// Removes a robot (before the game starts).
#[utoipa::path(
    delete,
    path = "/tables/{id}/robots/{seat}",
    operation_id = "remove_robot",
    tag = "lobby",
    params(
        ("id" = String, Path, description = TABLE_ID),
        ("seat" = u8, Path, description = "The robot's seat, 0 to 3.", maximum = 3),
    ),
    responses((status = 204, description = "The seat is free"), RemoveRobotRefusals)
)]
pub async fn remove_robot(
    State(state): State<AppState>,
    Path((id, seat)): Path<(String, u8)>,
) -> Result<StatusCode, ApiError> {
    let handle = state.lobby.get(&id)?;
    handle.ask(|reply| TableCommand::RemoveRobot { seat, reply }).await??;
    Ok(StatusCode::NO_CONTENT)
}

refusals!(
    /// Why the game does not start.
    StartRefusals: BadRequest, BadToken, NotManager, NoSuchTable, NotNow, Closed, StoreUnavailable
);

/// Starts the game: the manager's seat token, or none at a table of robots.
#[utoipa::path(
    post,
    path = "/tables/{id}/start",
    operation_id = "start_game",
    tag = "lobby",
    params(("id" = String, Path, description = TABLE_ID)),
    security((), ("seat_token" = [])),
    responses((status = 204, description = "The game has started"), StartRefusals)
)]
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

refusals!(
    /// Why a hand is not settled.
    SettleRefusals: BadRequest
);

/// The settlement calculator: settles one hand without playing, with the
/// same request and answer as `mahjong-server settle`.
#[utoipa::path(
    post,
    path = "/settle",
    operation_id = "settle",
    tag = "calculator",
    request_body(content = SettleRequest, content_type = "application/json"),
    responses((status = 200, description = "The payments", body = SettleResponse), SettleRefusals)
)]
pub async fn settle(body: Bytes) -> Result<Json<SettleResponse>, ApiError> {
    let text = std::str::from_utf8(&body).map_err(|_| ApiError::bad_request("the body is not UTF-8"))?;
    let request: SettleRequest = json::from_str(text).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let answer = calculator::calculate(&request).map_err(|e| ApiError::bad_request(e.to_string()))?;
    Ok(Json(answer))
}

/// The answer of `GET /api/v1/presets`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PresetList {
    /// Every preset, the default first.
    pub presets: Vec<PresetListing>,
}

/// The rule presets with every option value.
#[utoipa::path(
    get,
    path = "/presets",
    operation_id = "list_presets",
    tag = "calculator",
    responses((status = 200, description = "Every preset", body = PresetList))
)]
pub async fn presets() -> Result<Json<PresetList>, ApiError> {
    let presets =
        crate::rules::presets::listing().map_err(|e| ApiError::internal(format!("listing the presets: {e}")))?;
    Ok(Json(PresetList { presets }))
}
