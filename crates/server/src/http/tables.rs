//! REST: the lobby (tables, seats, robots, start), the settlement
//! calculator and the scoring calculator.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::audit::record_change;
use super::extract::{Admin, Caller, MaybeCaller, StrictJson, client, seat_token};
use super::hyper_refusals::ClientAddr;
use super::openapi::refusals;
use super::{ApiError, ApiErrorCode, AppState};
use crate::bots::strategy::Strategy;
use crate::limits::{Held, Paced};
use crate::protocol::ws::TableInfo;
use crate::rules::calculator::{self, SettleRequest, SettleResponse};
use crate::rules::scoring_calculator::{self, ScoreRequest, ScoreResponse};
use crate::table::{Asker, NewTable, RobotSeat, SeatGrant, TableCommand};

/// The lobby's and the calculators' routes (under `/api/v1`).
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(get_one, close))
        .routes(routes!(sit, leave))
        .routes(routes!(add_robot))
        .routes(routes!(remove_robot))
        .routes(routes!(start))
        .routes(routes!(settle))
        .routes(routes!(score))
}

/// A table's id in a path.
const TABLE_ID: &str = "The table's id (as `POST /api/v1/tables` answered it).";

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
    /// Play as mj-server's game does, for tables shared with classic
    /// clients (xmj, mj-player): the game starts by itself once four players
    /// sit and are connected, and each hand's play starts once every person
    /// but East has said `ready`.
    #[serde(default)]
    pub classic: bool,
}

refusals!(
    /// Why a table does not open.
    CreateRefusals: BadRequest, Unauthenticated, AccountDisabled, CsrfHeaderMissing, AccountRequired,
        QuotaExceeded, Closed, StoreUnavailable
);

/// Opens a table (anyone; only a logged-in player with `--require-accounts`).
///
/// Every field of the body is optional (an empty body opens a table of the
/// server's defaults). Tables opened count against the caller's quotas (its
/// account, or its address for a guest): how fast it opens them, how many
/// wait to start, how many games of robots alone it has running
/// (docs/protocol.md, "Limits").
#[utoipa::path(
    post,
    path = "/tables",
    operation_id = "create_table",
    tag = "lobby",
    security((), ("account_token" = []), ("session_cookie" = [])),
    request_body(content = Option<CreateTable>, content_type = "application/json"),
    responses((status = 201, description = "The table opened", body = TableInfo), CreateRefusals)
)]
pub async fn create(
    State(state): State<AppState>,
    addr: ConnectInfo<ClientAddr>,
    MaybeCaller(caller): MaybeCaller,
    body: Bytes,
) -> Result<Response, ApiError> {
    if state.require_accounts && caller.is_none() {
        return Err(account_required("open a table"));
    }
    let request: CreateTable = StrictJson::parse(&body)?;
    let new = NewTable {
        name: request.name,
        preset: request.preset,
        options: request.options,
        robots: request.robots.iter().map(|r| RobotSeat { seat: r.seat, strategy: r.strategy }).collect(),
        pause_deciseconds: request.pause_deciseconds,
        start: request.start,
        classic: request.classic,
    };
    let rules = state.rulebook.current();
    let mut setup = state
        .defaults
        .setup(&rules, new, || state.lobby.next_number())
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    // Counted once the request is known to be good: a table waiting to
    // start, or a game of robots started at once.
    let client = client(&addr, caller.as_ref());
    if setup.start && setup.robots.len() == 4 {
        robot_game_rounds(&state, setup.settings.options.num_rounds)?;
    }
    let held = if setup.start { Held::RobotGame } else { Held::WaitingTable };
    let hold = state.quotas.hold(&client, held).await?;
    state.quotas.pace(&client, Paced::TablesOpened).await?;
    if setup.start {
        // The first hand is paid for now; the table pays for the others.
        state.quotas.pay_robot_hand(&client).await?;
        setup.payer = Some(state.quotas.hands_payer(client));
    }
    setup.hold = hold;
    // One batch: the table, its robots and its start are stored together or
    // not at all (in a cluster, on the least-loaded node).
    let handle = state.lobby.open_anywhere(setup).await?;
    let info = state.lobby.info(&handle).await?;
    Ok((StatusCode::CREATED, Json(info)).into_response())
}

/// The answer of `GET /api/v1/tables`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TableList {
    /// Every open table, by id.
    pub tables: Vec<TableInfo>,
}

/// Lists the tables.
#[utoipa::path(
    get,
    path = "/tables",
    operation_id = "list_tables",
    tag = "lobby",
    responses((status = 200, description = "Every table", body = TableList))
)]
pub async fn list(State(state): State<AppState>) -> Json<TableList> {
    let mut tables = state.lobby.list().await;
    tables.sort_by(|a, b| a.id.cmp(&b.id));
    Json(TableList { tables })
}

refusals!(
    /// Why a table's state is not told.
    GetRefusals: NoSuchTable, Closed, Recovering
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
    let handle = state.lobby.find(&id).await?;
    Ok(Json(state.lobby.info(&handle).await?).into_response())
}

/// `POST /api/v1/tables/{id}/seats`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SitRequest {
    /// The name to show; a logged-in player sits under its account's name
    /// and may leave it out. 1 to 32 characters, by the text policy.
    #[serde(default)]
    #[schema(min_length = 1)]
    pub name: Option<String>,
    /// The seat wanted, or any free one.
    #[serde(default)]
    #[schema(maximum = 3)]
    pub seat: Option<u8>,
}

refusals!(
    /// Why a seat is not taken.
    SitRefusals: BadRequest, Unauthenticated, AccountDisabled, CsrfHeaderMissing, AccountRequired, NameRegistered,
        NoSuchTable, SeatTaken, NotNow, NameConfusable, QuotaExceeded, Closed, StoreUnavailable, Recovering
);

/// Takes a seat; answers the seat and its token. A logged-in player's seat
/// belongs to its account (its token ends with the session that took it, or
/// when the account's sessions end); a guest may not take a name that
/// belongs to an account or looks like an account's or a robot's, and may
/// not sit at all under `--require-accounts`. Seats at games not over count
/// against the caller's quota.
#[utoipa::path(
    post,
    path = "/tables/{id}/seats",
    operation_id = "take_seat",
    tag = "lobby",
    params(("id" = String, Path, description = TABLE_ID)),
    security((), ("account_token" = []), ("session_cookie" = [])),
    request_body(content = Option<SitRequest>, content_type = "application/json"),
    responses(
        (status = 201, description = "Seated: the seat and its token, the player's only credential", body = SeatGrant),
        SitRefusals
    )
)]
pub async fn sit(
    State(state): State<AppState>,
    addr: ConnectInfo<ClientAddr>,
    MaybeCaller(caller): MaybeCaller,
    Path(id): Path<String>,
    StrictJson(request): StrictJson<SitRequest>,
) -> Result<Response, ApiError> {
    let handle = state.lobby.find(&id).await?;
    let (name, account) = match (&caller, request.name) {
        (Some(c), Some(name))
            if crate::store::accounts::name_key(name.trim()) != crate::store::accounts::name_key(&c.name) =>
        {
            return Err(ApiError::bad_request(format!(
                "a logged-in player sits under its account's name ('{}'): leave out the name",
                c.name
            )));
        }
        (Some(c), _) => (c.name.clone(), Some(c.user_id)),
        (None, _) if state.require_accounts => return Err(account_required("sit")),
        (None, None) => return Err(ApiError::bad_request("a guest gives the name to show: {\"name\": ...}")),
        (None, Some(name)) => {
            // Checked here so that the lookup below sees the name as it will be shown.
            let shown = crate::text::player_name(&name).map_err(|e| ApiError::bad_request(e.to_string()))?;
            state.accounts.guest_name(&shown).await?;
            (shown, None)
        }
    };
    let seat = request.seat;
    let client = client(&addr, caller.as_ref());
    let hold = state.quotas.hold(&client, Held::Seat).await?;
    state.quotas.pace(&client, Paced::SeatsTaken).await?;
    let session = caller.map(|c| c.session.token_sha256);
    let grant: SeatGrant =
        handle.ask(|reply| TableCommand::Sit { name, seat, account, session, hold, reply }).await??;
    Ok((StatusCode::CREATED, Json(grant)).into_response())
}

/// The refusal of a guest under `--require-accounts`.
fn account_required(to: &str) -> ApiError {
    ApiError::refused(ApiErrorCode::AccountRequired, format!("this server lets only logged-in players {to}: log in"))
}

/// Who asks: its seat token and its account's session.
fn asker(headers: &HeaderMap, caller: Option<&Caller>) -> Result<Asker, ApiError> {
    Ok(Asker {
        token: seat_token(headers)?,
        account: caller.map(|c| c.user_id),
        admin: caller.is_some_and(Caller::is_admin),
    })
}

refusals!(
    /// Why a seat is not left.
    LeaveRefusals: BadRequest, BadToken, Unauthenticated, AccountDisabled, CsrfHeaderMissing, NoSuchTable, NotNow,
        Closed, StoreUnavailable, Recovering
);

/// Leaves a seat (before the game starts): `Authorization: Bearer TOKEN`,
/// or the seat's account.
#[utoipa::path(
    delete,
    path = "/tables/{id}/seats",
    operation_id = "leave_seat",
    tag = "lobby",
    params(("id" = String, Path, description = TABLE_ID)),
    security(("seat_token" = []), ("account_token" = []), ("session_cookie" = [])),
    responses((status = 204, description = "The seat is free"), LeaveRefusals)
)]
pub async fn leave(
    State(state): State<AppState>,
    Path(id): Path<String>,
    MaybeCaller(caller): MaybeCaller,
    headers: HeaderMap,
) -> Result<StatusCode, ApiError> {
    let asker = asker(&headers, caller.as_ref())?;
    if asker.token.is_none() && asker.account.is_none() {
        return Err(ApiError::refused(ApiErrorCode::BadToken, "leaving needs the seat token (or the seat's account)"));
    }
    let handle = state.lobby.find(&id).await?;
    handle.ask(|reply| TableCommand::Leave { asker, reply }).await??;
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
    /// Why a robot is not seated, or removed.
    RobotRefusals: BadRequest, BadToken, Unauthenticated, AccountDisabled, CsrfHeaderMissing, NotManager,
        NoSuchTable, SeatTaken, NotNow, Closed, StoreUnavailable, Recovering
);

/// Seats a robot: the manager (its seat token or account), an admin, or
/// anyone while no person sits.
///
/// Every field of the body is optional (an empty body seats a robot of the
/// default strategy in any free seat).
#[utoipa::path(
    post,
    path = "/tables/{id}/robots",
    operation_id = "add_robot",
    tag = "lobby",
    params(("id" = String, Path, description = TABLE_ID)),
    security((), ("seat_token" = []), ("account_token" = []), ("session_cookie" = [])),
    request_body(content = Option<RobotRequest>, content_type = "application/json"),
    responses((status = 201, description = "The robot sits", body = RobotSeated), RobotRefusals)
)]
pub async fn add_robot(
    State(state): State<AppState>,
    Path(id): Path<String>,
    MaybeCaller(caller): MaybeCaller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let asker = asker(&headers, caller.as_ref())?;
    let request: RobotRequest = StrictJson::parse(&body)?;
    let handle = state.lobby.find(&id).await?;
    let (seat, strategy) = (request.seat, request.strategy);
    let seat = handle.ask(|reply| TableCommand::AddRobot { seat, strategy, asker, reply }).await??;
    Ok((StatusCode::CREATED, Json(RobotSeated { seat })).into_response())
}

/// Removes a robot before the game starts (who may: as for seating one).
#[utoipa::path(
    delete,
    path = "/tables/{id}/robots/{seat}",
    operation_id = "remove_robot",
    tag = "lobby",
    params(
        ("id" = String, Path, description = TABLE_ID),
        ("seat" = u8, Path, description = "The robot's seat, 0 to 3.", maximum = 3),
    ),
    security((), ("seat_token" = []), ("account_token" = []), ("session_cookie" = [])),
    responses((status = 204, description = "The seat is free"), RobotRefusals)
)]
pub async fn remove_robot(
    State(state): State<AppState>,
    Path((id, seat)): Path<(String, u8)>,
    MaybeCaller(caller): MaybeCaller,
    headers: HeaderMap,
) -> Result<StatusCode, ApiError> {
    let asker = asker(&headers, caller.as_ref())?;
    let handle = state.lobby.find(&id).await?;
    handle.ask(|reply| TableCommand::RemoveRobot { seat, asker, reply }).await??;
    Ok(StatusCode::NO_CONTENT)
}

refusals!(
    /// Why the game does not start.
    StartRefusals: BadRequest, BadToken, Unauthenticated, AccountDisabled, CsrfHeaderMissing, NotManager,
        NoSuchTable, NotNow, QuotaExceeded, Closed, StoreUnavailable, Recovering
);

/// Starts the game: the manager (its seat token or account), an admin, or
/// anyone at a table of robots. A game of robots alone counts against the
/// quota of whoever starts it while it is played.
#[utoipa::path(
    post,
    path = "/tables/{id}/start",
    operation_id = "start_game",
    tag = "lobby",
    params(("id" = String, Path, description = TABLE_ID)),
    security((), ("seat_token" = []), ("account_token" = []), ("session_cookie" = [])),
    responses((status = 204, description = "The game has started"), StartRefusals)
)]
pub async fn start(
    State(state): State<AppState>,
    addr: ConnectInfo<ClientAddr>,
    Path(id): Path<String>,
    MaybeCaller(caller): MaybeCaller,
    headers: HeaderMap,
) -> Result<StatusCode, ApiError> {
    let asker = asker(&headers, caller.as_ref())?;
    let handle = state.lobby.find(&id).await?;
    // A table of robots alone starts a game that counts as the caller's.
    let info = handle.ask(|reply| TableCommand::Info { reply }).await?;
    let robots_alone =
        info.state == crate::protocol::ws::TableState::Open && info.seats.iter().all(|s| s.robot.is_some());
    if robots_alone {
        let options = handle.ask(|reply| TableCommand::Options { reply }).await?;
        robot_game_rounds(&state, options.num_rounds)?;
    }
    let client = client(&addr, caller.as_ref());
    let (robot_game, payer) = match robots_alone {
        true => {
            let hold = state.quotas.hold(&client, Held::RobotGame).await?;
            // The first hand is paid for now; the table pays for the others.
            state.quotas.pay_robot_hand(&client).await?;
            (Some(hold), Some(state.quotas.hands_payer(client)))
        }
        false => (None, None),
    };
    handle.ask(|reply| TableCommand::Start { asker, robot_game, payer, reply }).await??;
    Ok(StatusCode::NO_CONTENT)
}

/// Refuses a game of four robots longer than the server allows
/// (`--max-robot-game-rounds`).
fn robot_game_rounds(state: &AppState, rounds: u32) -> Result<(), ApiError> {
    let most = state.quotas.limits().robot_game_rounds;
    if rounds > most {
        return Err(ApiError::bad_request(format!(
            "a game of robots alone plays at most {most} rounds here (NumRounds {rounds}): choose fewer, or sit at \
             the table"
        )));
    }
    Ok(())
}

refusals!(
    /// Why a table is not closed.
    CloseRefusals: Unauthenticated, AccountDisabled, CsrfHeaderMissing, AdminOnly, NoSuchTable, Closed,
        StoreUnavailable, Recovering
);

/// Closes a table (admins only): a game being played ends as it stands.
#[utoipa::path(
    delete,
    path = "/tables/{id}",
    operation_id = "close_table",
    tag = "lobby",
    params(("id" = String, Path, description = TABLE_ID)),
    security(("account_token" = []), ("session_cookie" = [])),
    responses((status = 204, description = "The table is closed"), CloseRefusals)
)]
pub async fn close(
    State(state): State<AppState>,
    Admin(admin): Admin,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let handle = state.lobby.find(&id).await?;
    let before = handle.ask(|reply| TableCommand::Info { reply }).await?;
    handle.ask(|reply| TableCommand::Abort { reply }).await??;
    let before = serde_json::to_value(before).ok();
    record_change(&state, &admin, "table.close", format!("table/{id}"), before, None).await;
    tracing::info!(admin = admin.user_id, table = %id, "table closed by an admin");
    Ok(StatusCode::NO_CONTENT)
}

refusals!(
    /// Why a hand is not settled.
    SettleRefusals: BadRequest
);

/// The settlement calculator: settles one hand without playing, with the
/// same request and answer as `mahjong-server settle`; the request may name
/// the server's custom presets.
#[utoipa::path(
    post,
    path = "/settle",
    operation_id = "settle",
    tag = "calculator",
    request_body(content = SettleRequest, content_type = "application/json"),
    responses((status = 200, description = "The payments", body = SettleResponse), SettleRefusals)
)]
pub async fn settle(
    State(state): State<AppState>,
    StrictJson(request): StrictJson<SettleRequest>,
) -> Result<Json<SettleResponse>, ApiError> {
    let rules = state.rulebook.current();
    let answer =
        calculator::calculate_with(&rules.presets, &request).map_err(|e| ApiError::bad_request(e.to_string()))?;
    Ok(Json(answer))
}

refusals!(
    /// Why a hand is not scored.
    ScoreRefusals: BadRequest
);

/// The scoring calculator: scores one player's hand, described set by set,
/// with the engine's own scoring, without playing. A winner's concealed
/// tiles are arranged the best way the rules allow, unless the request
/// gives the arrangement; the request may name the server's custom presets.
#[utoipa::path(
    post,
    path = "/score",
    operation_id = "score",
    tag = "calculator",
    request_body(content = ScoreRequest, content_type = "application/json"),
    responses((status = 200, description = "The hand's score and the sets it was scored with", body = ScoreResponse), ScoreRefusals)
)]
pub async fn score(
    State(state): State<AppState>,
    StrictJson(request): StrictJson<ScoreRequest>,
) -> Result<Json<ScoreResponse>, ApiError> {
    let rules = state.rulebook.current();
    let answer =
        scoring_calculator::score_with(&rules.presets, &request).map_err(|e| ApiError::bad_request(e.to_string()))?;
    Ok(Json(answer))
}
