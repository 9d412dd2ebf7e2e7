//! REST: the rule presets, which anyone may read, and the admins' option
//! management: the defaults of new tables, the custom presets, and the
//! audit log of every admin change. The rules themselves, and every check
//! of a change, are in [`crate::table::rulebook`]; this reads requests and
//! answers them.

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::audit::author;
use super::extract::{Admin, StrictJson};
use super::openapi::refusals;
use super::paging::{DEFAULT_LIMIT, MAX_LIMIT, number};
use super::{ApiError, ApiErrorCode, AppState};
use crate::rules::preset_book::{DefaultOptions, OptionMap, PresetInfo};
use crate::store::AuditEntry;
use crate::table::rulebook::{DefaultsView, PresetDraft, RulebookError};

/// The presets' and the option management's routes (under `/api/v1`).
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(catalogue))
        .routes(routes!(presets))
        .routes(routes!(preset))
        .routes(routes!(defaults, set_defaults, reset_defaults))
        .routes(routes!(create_preset))
        .routes(routes!(update_preset, delete_preset))
        .routes(routes!(audit))
}

/// `GET /api/v1/options`: every game option, for people and programs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionCatalogue {
    /// Every option, in the catalogue's order (mj-server's first).
    pub options: Vec<OptionEntry>,
}

/// One game option: what it is called, what it means, what it takes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionEntry {
    /// The catalogue's name (`set_option`, presets, option files).
    pub name: String,
    /// A short label in words.
    pub label: String,
    /// mj-server's one-line description (this server's for its own options).
    pub description: String,
    /// The value's type: `bool`, `int`, `nat`, `score` (points, doubles and
    /// limits packed as `limits*1000000 + doubles*10000 + points`) or
    /// `string` (one of `words`).
    #[serde(rename = "type")]
    pub kind: String,
    /// The default value, in its natural JSON type.
    pub default: serde_json::Value,
    /// The least value, for numbers.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub min: Option<i64>,
    /// The greatest value, for numbers.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub max: Option<i64>,
    /// The only values allowed, when only some are (`NumRounds`, `RoundUnit`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub allowed: Option<Vec<i64>>,
    /// The words a `string` option takes.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub words: Option<Vec<String>>,
    /// The least protocol version of a classic client that knows it.
    pub min_protocol: u32,
}

/// Every game option with its label, description, type, default and
/// bounds (the engine's own catalogue). A table's current values are in
/// its snapshot (`options`).
#[utoipa::path(
    get,
    path = "/options",
    operation_id = "get_option_catalogue",
    tag = "options",
    responses((status = 200, description = "The option catalogue", body = OptionCatalogue))
)]
pub async fn catalogue() -> Json<OptionCatalogue> {
    use crate::rules::option_guide::guide;
    let defaults = crate::rules::GameOptions::default();
    let options = guide()
        .map(|(spec, label, bounds)| OptionEntry {
            name: spec.name.to_string(),
            label: label.to_string(),
            description: spec.description.to_string(),
            kind: spec.kind.word().to_string(),
            default: defaults.json_value(spec.name).unwrap_or(serde_json::Value::Null),
            min: bounds.min,
            max: bounds.max,
            allowed: bounds.allowed,
            words: bounds.words.map(|w| w.iter().map(|s| s.to_string()).collect()),
            min_protocol: spec.min_protocol,
        })
        .collect();
    Json(OptionCatalogue { options })
}

/// A preset's name in a path.
const PRESET_NAME: &str = "The preset's name, exactly as written.";

/// `GET /api/v1/presets`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PresetList {
    /// Every preset: the built-in ones first (the default first), then the
    /// custom ones by name.
    pub presets: Vec<PresetInfo>,
}

/// `POST /api/v1/admin/presets`: a new custom preset.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
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
    #[schema(value_type = HashMap<String, crate::rules::options::OptionValue>)]
    pub options: OptionMap,
}

/// The query of `GET /api/v1/admin/audit`, read as text and checked one
/// by one for messages that name the parameter.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Entries per page (1-100, default 20).
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100)]
    pub limit: Option<String>,
    /// Only entries numbered below this one (the previous page's `next_before`).
    #[param(value_type = Option<i64>, minimum = 1)]
    pub before: Option<String>,
    /// Only entries about this target (`defaults`, `preset/NAME`, `user/ID`,
    /// `table/ID`, `game/ID`).
    pub target: Option<String>,
}

/// A page of the audit log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
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
            RulebookError::Preset(P::Taken { .. }) => ApiErrorCode::PresetExists,
            RulebookError::Preset(P::ReadOnly(_)) => ApiErrorCode::ReadOnlyPreset,
            RulebookError::Preset(P::Unknown { .. } | P::Options(_) | P::BaseNotBuiltIn(_))
            | RulebookError::Text(_) => ApiErrorCode::BadRequest,
            RulebookError::NoSuchPreset(_) => ApiErrorCode::NoSuchPreset,
            RulebookError::InUse(_) => ApiErrorCode::PresetInUse,
        };
        ApiError::refused(code, e.to_string())
    }
}

/// Every preset, built-in and custom, with every option's value.
#[utoipa::path(
    get,
    path = "/presets",
    operation_id = "list_presets",
    tag = "options",
    responses((status = 200, description = "Every preset", body = PresetList))
)]
pub async fn presets(State(state): State<AppState>) -> Result<Json<PresetList>, ApiError> {
    let rules = state.rulebook.current();
    let presets = rules.presets.listing().map_err(|e| ApiError::internal(format!("listing the presets: {e}")))?;
    Ok(Json(PresetList { presets }))
}

refusals!(
    /// Why a preset is not told.
    PresetRefusals: NoSuchPreset
);

/// One preset, built-in or custom.
#[utoipa::path(
    get,
    path = "/presets/{name}",
    operation_id = "get_preset",
    tag = "options",
    params(("name" = String, Path, description = PRESET_NAME)),
    responses((status = 200, description = "The preset", body = PresetInfo), PresetRefusals)
)]
pub async fn preset(State(state): State<AppState>, Path(name): Path<String>) -> Result<Json<PresetInfo>, ApiError> {
    let rules = state.rulebook.current();
    if !rules.presets.contains(&name) {
        return Err(RulebookError::NoSuchPreset(name).into());
    }
    let info = rules.presets.info(&name).map_err(|e| ApiError::internal(format!("preset {name}: {e}")))?;
    Ok(Json(info))
}

refusals!(
    /// Why the defaults are not told.
    DefaultsRefusals: Unauthenticated, AccountDisabled, AdminOnly, StoreUnavailable
);

/// The defaults of new tables, as they are in force (admins only).
#[utoipa::path(
    get,
    path = "/admin/defaults",
    operation_id = "get_defaults",
    tag = "options",
    security(("account_token" = []), ("session_cookie" = [])),
    responses((status = 200, description = "The defaults in force", body = DefaultsView), DefaultsRefusals)
)]
pub async fn defaults(State(state): State<AppState>, _admin: Admin) -> Result<Json<DefaultsView>, ApiError> {
    let view = state.rulebook.current().defaults_view();
    Ok(Json(view.map_err(|e| ApiError::internal(format!("the defaults in force: {e}")))?))
}

refusals!(
    /// Why the defaults are not set.
    SetDefaultsRefusals: BadRequest, Unauthenticated, AccountDisabled, CsrfHeaderMissing, AdminOnly, StoreUnavailable
);

/// Sets the defaults of new tables (admins only): the body is
/// `{"preset", "options"?}`, in place of the defaults in force.
#[utoipa::path(
    put,
    path = "/admin/defaults",
    operation_id = "set_defaults",
    tag = "options",
    security(("account_token" = []), ("session_cookie" = [])),
    request_body(content = DefaultOptions, content_type = "application/json"),
    responses((status = 200, description = "The defaults now in force", body = DefaultsView), SetDefaultsRefusals)
)]
pub async fn set_defaults(
    State(state): State<AppState>,
    Admin(admin): Admin,
    StrictJson(wanted): StrictJson<DefaultOptions>,
) -> Result<Json<DefaultsView>, ApiError> {
    let view = state.rulebook.set_defaults(&author(&admin), wanted).await?;
    tracing::info!(admin = admin.user_id, preset = %view.preset, "defaults of new tables set");
    Ok(Json(view))
}

refusals!(
    /// Why the defaults are not reset.
    ResetDefaultsRefusals: Unauthenticated, AccountDisabled, CsrfHeaderMissing, AdminOnly, StoreUnavailable
);

/// Puts the flags' defaults back in force (admins only).
#[utoipa::path(
    delete,
    path = "/admin/defaults",
    operation_id = "reset_defaults",
    tag = "options",
    security(("account_token" = []), ("session_cookie" = [])),
    responses((status = 200, description = "The flags' defaults, now in force", body = DefaultsView), ResetDefaultsRefusals)
)]
pub async fn reset_defaults(
    State(state): State<AppState>,
    Admin(admin): Admin,
) -> Result<Json<DefaultsView>, ApiError> {
    let view = state.rulebook.reset_defaults(&author(&admin)).await?;
    tracing::info!(admin = admin.user_id, preset = %view.preset, "defaults of new tables reset to the flags'");
    Ok(Json(view))
}

refusals!(
    /// Why a custom preset is not created.
    CreatePresetRefusals: BadRequest, Unauthenticated, AccountDisabled, CsrfHeaderMissing, AdminOnly, PresetExists,
        StoreUnavailable
);

/// Defines a custom preset (admins only): `201` with it.
#[utoipa::path(
    post,
    path = "/admin/presets",
    operation_id = "create_preset",
    tag = "options",
    security(("account_token" = []), ("session_cookie" = [])),
    request_body(content = CreatePreset, content_type = "application/json"),
    responses((status = 201, description = "The preset created", body = PresetInfo), CreatePresetRefusals)
)]
pub async fn create_preset(
    State(state): State<AppState>,
    Admin(admin): Admin,
    StrictJson(request): StrictJson<CreatePreset>,
) -> Result<Response, ApiError> {
    let draft = PresetDraft { description: request.description, based_on: request.based_on, options: request.options };
    let info = state.rulebook.create_preset(&author(&admin), &request.name, draft).await?;
    tracing::info!(admin = admin.user_id, preset = %info.name, "custom preset created");
    Ok((StatusCode::CREATED, Json(info)).into_response())
}

refusals!(
    /// Why a custom preset is not changed.
    UpdatePresetRefusals: BadRequest, Unauthenticated, AccountDisabled, CsrfHeaderMissing, AdminOnly, ReadOnlyPreset,
        NoSuchPreset, PresetInUse, StoreUnavailable
);

/// Replaces a custom preset's description, base and options (admins only).
#[utoipa::path(
    put,
    path = "/admin/presets/{name}",
    operation_id = "update_preset",
    tag = "options",
    params(("name" = String, Path, description = PRESET_NAME)),
    security(("account_token" = []), ("session_cookie" = [])),
    request_body(content = Option<PresetDraft>, content_type = "application/json"),
    responses((status = 200, description = "The preset as changed", body = PresetInfo), UpdatePresetRefusals)
)]
pub async fn update_preset(
    State(state): State<AppState>,
    Admin(admin): Admin,
    Path(name): Path<String>,
    StrictJson(draft): StrictJson<PresetDraft>,
) -> Result<Json<PresetInfo>, ApiError> {
    let info = state.rulebook.update_preset(&author(&admin), &name, draft).await?;
    tracing::info!(admin = admin.user_id, preset = %info.name, "custom preset changed");
    Ok(Json(info))
}

refusals!(
    /// Why a custom preset is not deleted.
    DeletePresetRefusals: Unauthenticated, AccountDisabled, CsrfHeaderMissing, AdminOnly, ReadOnlyPreset,
        NoSuchPreset, PresetInUse, StoreUnavailable
);

/// Deletes a custom preset (admins only): `204`.
#[utoipa::path(
    delete,
    path = "/admin/presets/{name}",
    operation_id = "delete_preset",
    tag = "options",
    params(("name" = String, Path, description = PRESET_NAME)),
    security(("account_token" = []), ("session_cookie" = [])),
    responses((status = 204, description = "The preset is deleted"), DeletePresetRefusals)
)]
pub async fn delete_preset(
    State(state): State<AppState>,
    Admin(admin): Admin,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.rulebook.delete_preset(&author(&admin), &name).await?;
    tracing::info!(admin = admin.user_id, preset = %name, "custom preset deleted");
    Ok(StatusCode::NO_CONTENT)
}

refusals!(
    /// Why the audit log is not told.
    AuditRefusals: BadRequest, Unauthenticated, AccountDisabled, AdminOnly, StoreUnavailable
);

/// A page of the audit log, newest first (admins only).
#[utoipa::path(
    get,
    path = "/admin/audit",
    operation_id = "get_audit_log",
    tag = "options",
    params(AuditQuery),
    security(("account_token" = []), ("session_cookie" = [])),
    responses((status = 200, description = "A page of the audit log", body = AuditPage), AuditRefusals)
)]
pub async fn audit(
    State(state): State<AppState>,
    _admin: Admin,
    query: Result<Query<AuditQuery>, QueryRejection>,
) -> Result<Json<AuditPage>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let limit = query.limit.as_deref().map_or(Ok(DEFAULT_LIMIT), |t| number("limit", t, 1, MAX_LIMIT))?;
    let before = query.before.as_deref().map(|t| number("before", t, 1, i64::MAX)).transpose()?;
    if let Some(target) = &query.target {
        // No target holds a control character, and Postgres refuses NUL.
        crate::text::check_characters("target", target).map_err(|e| ApiError::bad_request(e.to_string()))?;
    }
    let entries = state.rulebook.audit(before, query.target.as_deref(), limit).await?;
    let next_before = if entries.len() as i64 == limit { entries.last().map(|e| e.id) } else { None };
    Ok(Json(AuditPage { entries, next_before }))
}
