//! REST: the budget of games of robots alone, which admins see and change
//! (`/admin/robot-budget`), and the keeping of a game of robots alone so
//! that it is never forgotten (`/games/{id}/kept`). The policy is
//! [`crate::limits::budget`]'s; the forgetting is the server's hourly task.

use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::audit::author;
use super::extract::{Admin, Caller, StrictJson, game_id};
use super::openapi::refusals;
use super::{ApiError, ApiErrorCode, AppState};
use crate::limits::RobotBudget;
use crate::store::budget::{KeptGame, StoredBudget};
use crate::store::dates::format_time;
use crate::store::{Author, Change};

/// The routes of the budget and of keeping games (under `/api/v1`).
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(robot_budget, set_robot_budget, reset_robot_budget)).routes(routes!(keep_game))
}

/// The most hands a budget may allow per hour or per day (more is no budget).
const MOST_HANDS: u32 = 1_000_000;
/// The longest a game of robots alone may be kept for, in seconds (ten years).
const LONGEST_KEPT_S: u64 = 10 * 366 * 24 * 3600;

/// Where the budget in force comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BudgetSource {
    /// The server's flags (`--robot-hands-per-hour`, `--robot-hands-per-day`,
    /// `--robot-games-kept-for`).
    Flags,
    /// An admin set it.
    Admin,
}

/// The budget of games of robots alone as an admin sets it: every field
/// is required.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RobotBudgetWanted {
    /// Hands of robots alone one player (its account, or its address) may
    /// have dealt per hour: a bucket of this many, refilled at this many an
    /// hour; 0 allows no game of robots alone.
    #[schema(minimum = 0, maximum = 1_000_000)]
    pub hands_per_hour: u32,
    /// The same per day.
    #[schema(minimum = 0, maximum = 1_000_000)]
    pub hands_per_day: u32,
    /// Seconds a game of robots alone is stored after its last change,
    /// unless someone keeps it (`PUT /games/{id}/kept`).
    #[schema(minimum = 1, maximum = 316_224_000)]
    pub kept_for_s: u64,
}

/// The budget of games of robots alone in force.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RobotBudgetView {
    /// Hands of robots alone one player may have dealt per hour.
    pub hands_per_hour: u32,
    /// Hands of robots alone one player may have dealt per day.
    pub hands_per_day: u32,
    /// Seconds a game of robots alone is stored after its last change.
    pub kept_for_s: u64,
    /// Where it comes from.
    pub source: BudgetSource,
    /// When an admin set it (`YYYY-MM-DDTHH:MM:SSZ`); `null` for the flags'.
    pub updated_at: Option<String>,
    /// The admin who set it.
    pub updated_by: Option<Author>,
}

impl RobotBudgetView {
    fn of(budget: RobotBudget, stored: Option<&StoredBudget>) -> RobotBudgetView {
        RobotBudgetView {
            hands_per_hour: budget.hands_per_hour,
            hands_per_day: budget.hands_per_day,
            kept_for_s: budget.kept_for.as_secs(),
            source: if stored.is_some() { BudgetSource::Admin } else { BudgetSource::Flags },
            updated_at: stored.map(|s| format_time(s.updated_us)),
            updated_by: stored.map(|s| s.updated_by.clone()),
        }
    }

    /// As the audit log records it.
    fn logged(&self) -> serde_json::Value {
        serde_json::json!({
            "hands_per_hour": self.hands_per_hour,
            "hands_per_day": self.hands_per_day,
            "kept_for_s": self.kept_for_s,
        })
    }
}

/// The budget in force, read again from the store (another node's admin
/// may have changed it), and put in force here.
async fn in_force(state: &AppState) -> Result<RobotBudgetView, ApiError> {
    let stored = state.lobby.refresh_robot_budget().await?;
    Ok(RobotBudgetView::of(state.quotas.robot_budget(), stored.as_ref()))
}

refusals!(
    /// Why the budget is not told.
    BudgetRefusals: Unauthenticated, AccountDisabled, AdminOnly, StoreUnavailable
);

/// The budget of games of robots alone in force (admins only).
#[utoipa::path(
    get,
    path = "/admin/robot-budget",
    operation_id = "get_robot_budget",
    tag = "options",
    security(("account_token" = []), ("session_cookie" = [])),
    responses((status = 200, description = "The budget in force", body = RobotBudgetView), BudgetRefusals)
)]
pub async fn robot_budget(State(state): State<AppState>, _admin: Admin) -> Result<Json<RobotBudgetView>, ApiError> {
    Ok(Json(in_force(&state).await?))
}

refusals!(
    /// Why the budget is not set.
    SetBudgetRefusals: BadRequest, Unauthenticated, AccountDisabled, CsrfHeaderMissing, AdminOnly, StoreUnavailable
);

/// Sets the budget of games of robots alone (admins only), in force at
/// once for every player on every node (what each has spent is kept).
#[utoipa::path(
    put,
    path = "/admin/robot-budget",
    operation_id = "set_robot_budget",
    tag = "options",
    security(("account_token" = []), ("session_cookie" = [])),
    request_body(content = RobotBudgetWanted, content_type = "application/json"),
    responses((status = 200, description = "The budget now in force", body = RobotBudgetView), SetBudgetRefusals)
)]
pub async fn set_robot_budget(
    State(state): State<AppState>,
    Admin(admin): Admin,
    StrictJson(wanted): StrictJson<RobotBudgetWanted>,
) -> Result<Json<RobotBudgetView>, ApiError> {
    for (name, hands) in [("hands_per_hour", wanted.hands_per_hour), ("hands_per_day", wanted.hands_per_day)] {
        if hands > MOST_HANDS {
            return Err(ApiError::bad_request(format!("{name} is at most {MOST_HANDS} (it is {hands})")));
        }
    }
    if !(1..=LONGEST_KEPT_S).contains(&wanted.kept_for_s) {
        return Err(ApiError::bad_request(format!(
            "kept_for_s is 1 to {LONGEST_KEPT_S} seconds (it is {})",
            wanted.kept_for_s
        )));
    }
    let before = in_force(&state).await?;
    let budget = RobotBudget {
        hands_per_hour: wanted.hands_per_hour,
        hands_per_day: wanted.hands_per_day,
        kept_for: Duration::from_secs(wanted.kept_for_s),
    };
    let after = RobotBudgetView::of(budget, None);
    let change = Change {
        at_us: crate::store::now_us(),
        action: "robot_budget.set",
        target: "robot_budget".into(),
        before: Some(before.logged()),
        after: Some(after.logged()),
    };
    let store = state.lobby.store();
    store
        .save_robot_budget(wanted.hands_per_hour, wanted.hands_per_day, wanted.kept_for_s, &author(&admin), &change)
        .await?;
    tracing::info!(admin = admin.user_id, ?budget, "budget of games of robots alone set");
    Ok(Json(in_force(&state).await?))
}

refusals!(
    /// Why the budget is not reset.
    ResetBudgetRefusals: Unauthenticated, AccountDisabled, CsrfHeaderMissing, AdminOnly, StoreUnavailable
);

/// Puts the flags' budget back in force (admins only).
#[utoipa::path(
    delete,
    path = "/admin/robot-budget",
    operation_id = "reset_robot_budget",
    tag = "options",
    security(("account_token" = []), ("session_cookie" = [])),
    responses((status = 200, description = "The flags' budget, now in force", body = RobotBudgetView), ResetBudgetRefusals)
)]
pub async fn reset_robot_budget(
    State(state): State<AppState>,
    Admin(admin): Admin,
) -> Result<Json<RobotBudgetView>, ApiError> {
    let before = in_force(&state).await?;
    let change = Change {
        at_us: crate::store::now_us(),
        action: "robot_budget.reset",
        target: "robot_budget".into(),
        before: Some(before.logged()),
        after: None,
    };
    if state.lobby.store().forget_robot_budget(&author(&admin), &change).await? {
        tracing::info!(admin = admin.user_id, "budget of games of robots alone reset to the flags'");
    }
    Ok(Json(in_force(&state).await?))
}

/// A game kept: never forgotten.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KeptView {
    /// The game.
    pub game: String,
    /// Whether it is a game of robots alone (the only games forgotten
    /// when old; any game may be kept all the same).
    pub robots_alone: bool,
    /// When it was first kept (`YYYY-MM-DDTHH:MM:SSZ`).
    pub kept_at: String,
    /// Who first kept it.
    pub kept_by: Author,
}

impl KeptView {
    fn of(kept: KeptGame, robots_alone: bool) -> KeptView {
        KeptView { game: kept.game_id, robots_alone, kept_at: format_time(kept.kept_us), kept_by: kept.kept_by }
    }
}

refusals!(
    /// Why a game is not kept.
    KeepRefusals: BadRequest, Unauthenticated, AccountDisabled, CsrfHeaderMissing, NoSuchGame, StoreUnavailable
);

/// Keeps a game (any logged-in player): a game of robots alone is
/// otherwise forgotten once it has not changed for the budget's
/// `kept_for_s`. Kept once, kept for good; asking again changes nothing.
#[utoipa::path(
    put,
    path = "/games/{id}/kept",
    operation_id = "keep_game",
    tag = "scores",
    params(("id" = String, Path, description = super::games::GAME_ID)),
    security(("account_token" = []), ("session_cookie" = [])),
    responses((status = 200, description = "The game, kept", body = KeptView), KeepRefusals)
)]
pub async fn keep_game(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<KeptView>, ApiError> {
    let id = game_id(&id)?;
    let store = state.lobby.store();
    let no_game = || ApiError::refused(ApiErrorCode::NoSuchGame, format!("no game {id}"));
    let robots_alone = store.robots_alone(id).await?.ok_or_else(no_game)?;
    let keeper = author(&caller);
    let kept = store.keep_game(id, &keeper, crate::store::now_us()).await?.ok_or_else(no_game)?;
    tracing::info!(game = %id, account = caller.user_id, "game kept");
    Ok(Json(KeptView::of(kept, robots_alone)))
}
