//! REST: the rule presets, which anyone may read, and the admins' option
//! management: the defaults of new tables, the custom presets, and the
//! audit log of every admin change. The rules themselves, and every check
//! of a change, are in [`crate::table::rulebook`]; this reads requests and
//! answers them.

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::auth::{Admin, Caller};
use super::games::{DEFAULT_LIMIT, MAX_LIMIT};
use super::tables::parse;
use super::{ApiError, AppState, ErrorCode};
use crate::rules::preset_book::{DefaultOptions, OptionMap, PresetInfo};
use crate::store::{Actor, AuditEntry, Change};
use crate::table::rulebook::{DefaultsView, PresetDraft, RulebookError};

/// `GET /api/v1/presets`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PresetList {
    /// Every preset: the built-in ones first (the default first), then the
    /// custom ones by name.
    pub presets: Vec<PresetInfo>,
}

/// `POST /api/v1/admin/presets`: a new custom preset.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreatePreset {
    /// Its name: a word of ASCII letters, digits, `-` and `_`, at most 32
    /// characters, unique ignoring case among all presets.
    pub name: String,
    /// What it is for (one line, at most 500 characters).
    #[serde(default)]
    pub description: String,
    /// The built-in preset it starts from (else `chinese-classical`).
    #[serde(default)]
    pub based_on: Option<String>,
    /// Options over `based_on`, by catalogue name.
    #[serde(default)]
    pub options: OptionMap,
}

/// The query of `GET /api/v1/admin/audit`, read as text and checked one
/// by one for messages that name the parameter.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditQuery {
    /// Entries per page (1-100, default 20).
    pub limit: Option<String>,
    /// Only entries numbered below this one (the previous page's `next_before`).
    pub before: Option<String>,
    /// Only entries about this target (`defaults`, `preset/NAME`, `user/ID`,
    /// `table/ID`, `game/ID`).
    pub target: Option<String>,
}

/// A page of the audit log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditPage {
    /// The entries, newest first.
    pub entries: Vec<AuditEntry>,
    /// The `before` of the next page; `null` on the last.
    pub next_before: Option<i64>,
}

impl From<RulebookError> for ApiError {
    fn from(e: RulebookError) -> ApiError {
        use crate::rules::preset_book::PresetError as P;
        let code = match e {
            RulebookError::Store(failure) => return ApiError::Store(failure),
            RulebookError::Preset(P::Taken { .. }) => ErrorCode::PresetExists,
            RulebookError::Preset(P::ReadOnly(_)) => ErrorCode::ReadOnlyPreset,
            RulebookError::Preset(P::Unknown { .. } | P::Options(_) | P::BaseNotBuiltIn(_))
            | RulebookError::Text(_) => ErrorCode::BadRequest,
            RulebookError::NoSuchPreset(_) => ErrorCode::NoSuchPreset,
            RulebookError::InUse(_) => ErrorCode::PresetInUse,
        };
        ApiError::refused(code, e.to_string())
    }
}

/// Every preset, built-in and custom, with every option's value.
pub async fn presets(State(state): State<AppState>) -> Result<Json<PresetList>, ApiError> {
    let rules = state.rulebook.current();
    let presets = rules.presets.listing().map_err(|e| ApiError::internal(format!("listing the presets: {e}")))?;
    Ok(Json(PresetList { presets }))
}

/// One preset, built-in or custom.
pub async fn preset(State(state): State<AppState>, Path(name): Path<String>) -> Result<Json<PresetInfo>, ApiError> {
    let rules = state.rulebook.current();
    if !rules.presets.contains(&name) {
        return Err(RulebookError::NoSuchPreset(name).into());
    }
    let info = rules.presets.info(&name).map_err(|e| ApiError::internal(format!("preset {name}: {e}")))?;
    Ok(Json(info))
}

/// The admin making a change, as the audit log names it.
pub(crate) fn actor(admin: &Caller) -> Actor {
    Actor { user_id: admin.user_id, name: admin.name.clone() }
}

/// Logs in the audit log a change an admin made elsewhere: to an account
/// (`user/ID`), a table closed (`table/ID`), a game imported (`game/ID`).
/// The change is already made (in its own transaction): a failure to log
/// it is logged as an error, and the request still succeeds, since telling
/// the admin it failed would be false.
pub(crate) async fn record_change(
    state: &AppState,
    admin: &Caller,
    action: &'static str,
    target: String,
    before: Option<serde_json::Value>,
    after: Option<serde_json::Value>,
) {
    let change = Change { at_us: crate::store::now_us(), action, target, before, after };
    if let Err(e) = state.rulebook.record(&actor(admin), &change).await {
        tracing::error!(admin = admin.user_id, target = %change.target, action, "a change was made but not logged: {e}");
    }
}

/// The defaults of new tables, as they are in force (admins only).
pub async fn defaults(State(state): State<AppState>, _admin: Admin) -> Result<Json<DefaultsView>, ApiError> {
    let view = state.rulebook.current().defaults_view();
    Ok(Json(view.map_err(|e| ApiError::internal(format!("the defaults in force: {e}")))?))
}

/// Sets the defaults of new tables (admins only): the body is
/// `{"preset", "options"?}`, in place of the defaults in force.
pub async fn set_defaults(
    State(state): State<AppState>,
    Admin(admin): Admin,
    body: Bytes,
) -> Result<Json<DefaultsView>, ApiError> {
    let wanted: DefaultOptions = parse(&body)?;
    let view = state.rulebook.set_defaults(&actor(&admin), wanted).await?;
    tracing::info!(admin = admin.user_id, preset = %view.preset, "defaults of new tables set");
    Ok(Json(view))
}

/// Puts the flags' defaults back in force (admins only).
pub async fn reset_defaults(
    State(state): State<AppState>,
    Admin(admin): Admin,
) -> Result<Json<DefaultsView>, ApiError> {
    let view = state.rulebook.reset_defaults(&actor(&admin)).await?;
    tracing::info!(admin = admin.user_id, preset = %view.preset, "defaults of new tables reset to the flags'");
    Ok(Json(view))
}

/// Defines a custom preset (admins only): `201` with it.
pub async fn create_preset(
    State(state): State<AppState>,
    Admin(admin): Admin,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request: CreatePreset = parse(&body)?;
    let draft = PresetDraft { description: request.description, based_on: request.based_on, options: request.options };
    let info = state.rulebook.create_preset(&actor(&admin), &request.name, draft).await?;
    tracing::info!(admin = admin.user_id, preset = %info.name, "custom preset created");
    Ok((StatusCode::CREATED, Json(info)).into_response())
}

/// Replaces a custom preset's description, base and options (admins only).
pub async fn update_preset(
    State(state): State<AppState>,
    Admin(admin): Admin,
    Path(name): Path<String>,
    body: Bytes,
) -> Result<Json<PresetInfo>, ApiError> {
    let draft: PresetDraft = parse(&body)?;
    let info = state.rulebook.update_preset(&actor(&admin), &name, draft).await?;
    tracing::info!(admin = admin.user_id, preset = %info.name, "custom preset changed");
    Ok(Json(info))
}

/// Deletes a custom preset (admins only): `204`.
pub async fn delete_preset(
    State(state): State<AppState>,
    Admin(admin): Admin,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.rulebook.delete_preset(&actor(&admin), &name).await?;
    tracing::info!(admin = admin.user_id, preset = %name, "custom preset deleted");
    Ok(StatusCode::NO_CONTENT)
}

/// A page of the audit log, newest first (admins only).
pub async fn audit(
    State(state): State<AppState>,
    _admin: Admin,
    query: Result<Query<AuditQuery>, QueryRejection>,
) -> Result<Json<AuditPage>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let number = |name: &str, text: &str, lo: i64, hi: i64| {
        text.trim().parse::<i64>().ok().filter(|n| (lo..=hi).contains(n)).ok_or_else(|| {
            ApiError::bad_request(format!("{name} must be a whole number from {lo} to {hi}, not '{text}'"))
        })
    };
    let limit = query.limit.as_deref().map_or(Ok(DEFAULT_LIMIT), |t| number("limit", t, 1, MAX_LIMIT))?;
    let before = query.before.as_deref().map(|t| number("before", t, 1, i64::MAX)).transpose()?;
    if let Some(target) = &query.target {
        // No target holds a control character, and Postgres refuses NUL.
        crate::protocol::text::check_characters("target", target).map_err(|e| ApiError::bad_request(e.to_string()))?;
    }
    let entries = state.rulebook.audit(before, query.target.as_deref(), limit).await?;
    let next_before = if entries.len() as i64 == limit { entries.last().map(|e| e.id) } else { None };
    Ok(Json(AuditPage { entries, next_before }))
}
