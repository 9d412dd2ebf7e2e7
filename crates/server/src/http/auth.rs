//! Accounts over REST: register, log in and out, change the password, who
//! am I (`/api/v1/auth/...`, `/api/v1/me`), and the admins' user management
//! (`/api/v1/admin/users...`).
//!
//! A session token comes as `Authorization: Bearer mjs_...` (programs) or as
//! the `mj_session` cookie (browsers; HttpOnly, SameSite=Strict). The CSRF
//! rule: a request that changes something and is authenticated by the
//! cookie alone must carry the `X-Requested-With` header, which a page of
//! another site cannot add to a request without the server's CORS consent
//! (and this server gives none).

use axum::Json;
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::audit::record_change;
use super::extract::{Admin, Caller, SESSION_COOKIE, StrictJson};
use super::hyper_refusals::ClientAddr;
use super::openapi::refusals;
use super::{ApiError, AppState};
use crate::auth::{NewSession, Role};
use crate::store::UserRow;
use crate::store::dates::format_time;

/// The accounts' routes (under `/api/v1`).
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(register))
        .routes(routes!(login))
        .routes(routes!(logout))
        .routes(routes!(logout_everywhere))
        .routes(routes!(change_password))
        .routes(routes!(me))
        .routes(routes!(list_users))
        .routes(routes!(get_user, update_user))
        .routes(routes!(end_user_sessions))
}

/// An account's number in a path.
const USER_ID: &str = "The account's number.";

/// In the API's schema a role is its name.
impl utoipa::PartialSchema for Role {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
        ObjectBuilder::new()
            .schema_type(SchemaType::new(Type::String))
            .description(Some("What an account may do: `player`, or `admin` (also manages users and any table)."))
            .enum_values(Some([Role::Player, Role::Admin].map(Role::as_str)))
            .into()
    }
}

impl utoipa::ToSchema for Role {}

/// An account, as the API shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct UserInfo {
    /// Its number.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// `player` or `admin`.
    pub role: Role,
    /// Disabled by an admin.
    pub disabled: bool,
    /// When it registered (RFC 3339).
    pub created_at: String,
}

impl From<&UserRow> for UserInfo {
    fn from(u: &UserRow) -> UserInfo {
        UserInfo {
            id: u.id,
            name: u.name.clone(),
            role: u.role,
            disabled: u.disabled,
            created_at: format_time(u.created_us),
        }
    }
}

/// The body of register and login.
#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Credentials {
    /// The account's name.
    pub name: String,
    /// Its password.
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials").field("name", &self.name).finish_non_exhaustive()
    }
}

/// A session just made.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SessionGrant {
    /// The session token: told once, here. Send it as `Authorization:
    /// Bearer TOKEN`; browsers get it as the `mj_session` cookie too.
    pub token: String,
    /// When the session ends by itself (RFC 3339).
    pub expires_at: String,
    /// The account.
    pub user: UserInfo,
}

/// Answers a new session: its token in the body, and as the cookie.
fn granted(status: StatusCode, session: NewSession, headers: &HeaderMap) -> Result<Response, ApiError> {
    let max_age = ((session.expires_us - crate::store::now_us()) / 1_000_000).max(0);
    let cookie = session_cookie(&session.token, max_age, headers)?;
    let body = SessionGrant {
        token: session.token,
        expires_at: format_time(session.expires_us),
        user: UserInfo::from(&session.user),
    };
    let mut response = (status, Json(body)).into_response();
    response.headers_mut().insert(header::SET_COOKIE, cookie);
    Ok(response)
}

/// The `Set-Cookie` value for the session (empty with `max_age` 0: the
/// cookie is removed). `Secure` when the request came over HTTPS through a
/// proxy that says so.
fn session_cookie(token: &str, max_age: i64, headers: &HeaderMap) -> Result<HeaderValue, ApiError> {
    let secure = headers.get("x-forwarded-proto").is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"https"));
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{SESSION_COOKIE}={token}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Strict{secure}"
    ))
    .map_err(|e| ApiError::internal(format!("the session cookie: {e}")))
}

/// The client's address (behind a trusted proxy, the one it forwards; behind
/// another, the proxy's).
fn client_ip(addr: &ConnectInfo<ClientAddr>) -> std::net::IpAddr {
    addr.0.0.ip()
}

refusals!(
    /// Why an account is not registered.
    RegisterRefusals: BadRequest, NameTaken, NameConfusable, TooManyRequests, StoreUnavailable
);

/// Registers a player account and logs it in: 201 with the session.
#[utoipa::path(
    post,
    path = "/auth/register",
    operation_id = "register",
    tag = "accounts",
    request_body(content = Credentials, content_type = "application/json"),
    responses(
        (status = 201, description = "Registered and logged in", body = SessionGrant,
            headers(("set-cookie" = String, description = "The session cookie: `mj_session=TOKEN; Path=/; Max-Age=SECONDS; HttpOnly; SameSite=Strict` (removed with `Max-Age=0`)"))),
        RegisterRefusals
    )
)]
pub async fn register(
    State(state): State<AppState>,
    addr: ConnectInfo<ClientAddr>,
    headers: HeaderMap,
    StrictJson(c): StrictJson<Credentials>,
) -> Result<Response, ApiError> {
    let session = state.accounts.register(client_ip(&addr), &c.name, &c.password).await?;
    granted(StatusCode::CREATED, session, &headers)
}

refusals!(
    /// Why a login fails.
    LoginRefusals: BadRequest, WrongCredentials, TooManyRequests, StoreUnavailable
);

/// Logs in: 200 with a new session.
#[utoipa::path(
    post,
    path = "/auth/login",
    operation_id = "login",
    tag = "accounts",
    request_body(content = Credentials, content_type = "application/json"),
    responses(
        (status = 200, description = "Logged in", body = SessionGrant,
            headers(("set-cookie" = String, description = "The session cookie: `mj_session=TOKEN; Path=/; Max-Age=SECONDS; HttpOnly; SameSite=Strict` (removed with `Max-Age=0`)"))),
        LoginRefusals
    )
)]
pub async fn login(
    State(state): State<AppState>,
    addr: ConnectInfo<ClientAddr>,
    headers: HeaderMap,
    StrictJson(c): StrictJson<Credentials>,
) -> Result<Response, ApiError> {
    let session = state.accounts.login(client_ip(&addr), &c.name, &c.password).await?;
    granted(StatusCode::OK, session, &headers)
}

refusals!(
    /// Why a request that needs a session is refused.
    SessionRefusals: Unauthenticated, AccountDisabled, CsrfHeaderMissing, StoreUnavailable
);

/// Ends the caller's session (and removes the cookie).
#[utoipa::path(
    post,
    path = "/auth/logout",
    operation_id = "logout",
    tag = "accounts",
    security(("account_token" = []), ("session_cookie" = [])),
    responses(
        (status = 204, description = "Logged out", headers(("set-cookie" = String, description = "The session cookie: `mj_session=TOKEN; Path=/; Max-Age=SECONDS; HttpOnly; SameSite=Strict` (removed with `Max-Age=0`)"))),
        SessionRefusals
    )
)]
pub async fn logout(State(state): State<AppState>, caller: Caller, headers: HeaderMap) -> Result<Response, ApiError> {
    state.accounts.logout(&caller.session).await?;
    let mut response = StatusCode::NO_CONTENT.into_response();
    response.headers_mut().insert(header::SET_COOKIE, session_cookie("", 0, &headers)?);
    Ok(response)
}

/// How many sessions ended.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Ended {
    /// Sessions ended.
    pub ended: u64,
}

/// Ends every session of the caller's account, this one too.
#[utoipa::path(
    post,
    path = "/auth/logout-everywhere",
    operation_id = "logout_everywhere",
    tag = "accounts",
    security(("account_token" = []), ("session_cookie" = [])),
    responses(
        (status = 200, description = "Logged out everywhere", body = Ended,
            headers(("set-cookie" = String, description = "The session cookie: `mj_session=TOKEN; Path=/; Max-Age=SECONDS; HttpOnly; SameSite=Strict` (removed with `Max-Age=0`)"))),
        SessionRefusals
    )
)]
pub async fn logout_everywhere(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let ended = state.accounts.logout_everywhere(&caller.session).await?;
    let mut response = Json(Ended { ended }).into_response();
    response.headers_mut().insert(header::SET_COOKIE, session_cookie("", 0, &headers)?);
    Ok(response)
}

/// The body of a password change.
#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordChange {
    /// The password now.
    pub current: String,
    /// The new one (8 to 256 characters).
    pub new: String,
}

refusals!(
    /// Why a password is not changed.
    PasswordRefusals: BadRequest, Unauthenticated, WrongCredentials, AccountDisabled, CsrfHeaderMissing, NoSuchUser,
        TooManyRequests, StoreUnavailable
);

/// Changes the caller's password; every other session of the account ends.
#[utoipa::path(
    post,
    path = "/auth/password",
    operation_id = "change_password",
    tag = "accounts",
    security(("account_token" = []), ("session_cookie" = [])),
    request_body(content = PasswordChange, content_type = "application/json"),
    responses((status = 204, description = "The password is changed"), PasswordRefusals)
)]
pub async fn change_password(
    State(state): State<AppState>,
    caller: Caller,
    StrictJson(change): StrictJson<PasswordChange>,
) -> Result<StatusCode, ApiError> {
    state.accounts.change_password(&caller.session, &change.current, &change.new).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Who the caller is.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Me {
    /// The account.
    pub user: UserInfo,
    /// When this session ends by itself (RFC 3339).
    pub session_expires_at: String,
}

refusals!(
    /// Why the caller is not told.
    MeRefusals: Unauthenticated, AccountDisabled, StoreUnavailable
);

/// The caller's account.
#[utoipa::path(
    get,
    path = "/me",
    operation_id = "me",
    tag = "accounts",
    security(("account_token" = []), ("session_cookie" = [])),
    responses((status = 200, description = "The caller's account and session", body = Me), MeRefusals)
)]
pub async fn me(caller: Caller) -> Json<Me> {
    Json(Me { user: UserInfo::from(&caller.session.user), session_expires_at: format_time(caller.session.expires_us) })
}

/// The query of the user listing.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct UserQuery {
    /// Accounts numbered after this one (paging).
    #[serde(default)]
    pub after: Option<i64>,
    /// At most this many (1-500, default 100).
    #[serde(default)]
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
}

/// A page of accounts.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct UserList {
    /// The accounts, in order of number.
    pub users: Vec<UserInfo>,
    /// The `after` of the next page, if there may be one.
    pub next_after: Option<i64>,
}

refusals!(
    /// Why the accounts are not listed.
    ListUsersRefusals: BadRequest, Unauthenticated, AccountDisabled, AdminOnly, StoreUnavailable
);

refusals!(
    /// Why an account is not told.
    GetUserRefusals: BadRequest, Unauthenticated, AccountDisabled, AdminOnly, NoSuchUser, StoreUnavailable
);

refusals!(
    /// Why an account is not changed.
    UpdateUserRefusals: BadRequest, Unauthenticated, AccountDisabled, CsrfHeaderMissing, AdminOnly, NoSuchUser,
        LastAdmin, StoreUnavailable
);

refusals!(
    /// Why an account's sessions are not ended.
    EndSessionsRefusals: BadRequest, Unauthenticated, AccountDisabled, CsrfHeaderMissing, AdminOnly, NoSuchUser,
        StoreUnavailable
);

/// Lists the accounts (admins only).
#[utoipa::path(
    get,
    path = "/admin/users",
    operation_id = "list_users",
    tag = "accounts",
    params(UserQuery),
    security(("account_token" = []), ("session_cookie" = [])),
    responses((status = 200, description = "A page of accounts", body = UserList), ListUsersRefusals)
)]
pub async fn list_users(
    State(state): State<AppState>,
    _admin: Admin,
    query: Result<Query<UserQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<UserList>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let limit = query.limit.unwrap_or(100);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::bad_request(format!("limit is from 1 to 500, not {limit}")));
    }
    let users = state.accounts.users(query.after.unwrap_or(0), limit).await?;
    let next_after = (users.len() as i64 == limit).then(|| users.last().map(|u| u.id)).flatten();
    Ok(Json(UserList { users: users.iter().map(UserInfo::from).collect(), next_after }))
}

/// One account (admins only).
#[utoipa::path(
    get,
    path = "/admin/users/{id}",
    operation_id = "get_user",
    tag = "accounts",
    params(("id" = i64, Path, description = USER_ID)),
    security(("account_token" = []), ("session_cookie" = [])),
    responses((status = 200, description = "The account", body = UserInfo), GetUserRefusals)
)]
pub async fn get_user(
    State(state): State<AppState>,
    _admin: Admin,
    Path(id): Path<i64>,
) -> Result<Json<UserInfo>, ApiError> {
    Ok(Json(UserInfo::from(&state.accounts.user(id).await?)))
}

/// An admin's change to an account.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UserChange {
    /// The new role.
    #[serde(default)]
    pub role: Option<Role>,
    /// Disable (`true`) or enable (`false`) the account.
    #[serde(default)]
    pub disabled: Option<bool>,
}

/// Changes an account's role or disables it (admins only); disabling ends
/// its sessions and closes its WebSockets.
#[utoipa::path(
    patch,
    path = "/admin/users/{id}",
    operation_id = "update_user",
    tag = "accounts",
    params(("id" = i64, Path, description = USER_ID)),
    security(("account_token" = []), ("session_cookie" = [])),
    request_body(content = UserChange, content_type = "application/json"),
    responses((status = 200, description = "The account as changed", body = UserInfo), UpdateUserRefusals)
)]
pub async fn update_user(
    State(state): State<AppState>,
    Admin(admin): Admin,
    Path(id): Path<i64>,
    StrictJson(change): StrictJson<UserChange>,
) -> Result<Json<UserInfo>, ApiError> {
    if change.role.is_none() && change.disabled.is_none() {
        return Err(ApiError::bad_request("give a role, or disabled, or both"));
    }
    let before = UserInfo::from(&state.accounts.user(id).await?);
    let after = state.accounts.update(id, change.role, change.disabled).await?;
    let logged = (Some(json!(before)), Some(json!(UserInfo::from(&after))));
    record_change(&state, &admin, "user.update", format!("user/{id}"), logged.0, logged.1).await;
    tracing::info!(
        admin = admin.user_id,
        user = id,
        role = after.role.as_str(),
        disabled = after.disabled,
        "account changed"
    );
    Ok(Json(UserInfo::from(&after)))
}

/// Ends every session of an account (admins only).
#[utoipa::path(
    delete,
    path = "/admin/users/{id}/sessions",
    operation_id = "end_user_sessions",
    tag = "accounts",
    params(("id" = i64, Path, description = USER_ID)),
    security(("account_token" = []), ("session_cookie" = [])),
    responses((status = 200, description = "Its sessions ended", body = Ended), EndSessionsRefusals)
)]
pub async fn end_user_sessions(
    State(state): State<AppState>,
    Admin(admin): Admin,
    Path(id): Path<i64>,
) -> Result<Json<Ended>, ApiError> {
    let user = state.accounts.user(id).await?;
    let ended = state.accounts.end_sessions_of(id, None).await?;
    let (before, after) = (json!({"name": user.name, "sessions": ended}), json!({"name": user.name, "sessions": 0}));
    let target = format!("user/{id}");
    record_change(&state, &admin, "user.end_sessions", target, Some(before), Some(after)).await;
    tracing::info!(admin = admin.user_id, user = id, ended, "sessions ended by an admin");
    Ok(Json(Ended { ended }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_print_the_password() {
        let c = Credentials { name: "ann".into(), password: "hunter2hunter2".into() };
        assert!(!format!("{c:?}").contains("hunter2"));
    }
}
