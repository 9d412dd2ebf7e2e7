//! What handlers take from a request, checked once for all of them: who
//! calls ([`Caller`], [`MaybeCaller`], [`Admin`]), the seat token, the body
//! ([`StrictJson`]), a game's id.
//!
//! A session token comes as `Authorization: Bearer mjs_...` (programs) or as
//! the `mj_session` cookie (browsers; HttpOnly, SameSite=Strict). The CSRF
//! rule: a request that changes something and is authenticated by the
//! cookie alone must carry the `X-Requested-With` header, which a page of
//! another site cannot add to a request without the server's CORS consent
//! (and this server gives none).

use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::hyper_refusals::ClientAddr;
use super::{ApiError, ApiErrorCode, AppState};
use crate::auth::{Authenticated, Role, is_session_token};
use crate::limits::Client;
use crate::protocol::json;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "mj_session";
/// The header a cookie-authenticated write must carry (the CSRF rule).
pub const CSRF_HEADER: &str = "x-requested-with";

/// The account a request comes from.
#[derive(Clone, Debug)]
pub struct Caller {
    /// The account's number.
    pub user_id: i64,
    /// Its name.
    pub name: String,
    /// Its role.
    pub role: Role,
    /// The session, for logging it out.
    pub session: Authenticated,
}

impl Caller {
    /// Whether the caller is an admin.
    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }
}

/// The caller, who must be an admin: 401 `unauthenticated` without a
/// session, 403 `admin_only` for a player.
#[derive(Clone, Debug)]
pub struct Admin(pub Caller);

/// The caller if the request carries a session, `None` for a guest. A
/// session that does not live is refused (401), never taken as a guest.
#[derive(Clone, Debug)]
pub struct MaybeCaller(pub Option<Caller>);

/// Where a request's session token came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Carried {
    Header,
    Cookie,
}

/// The session token of a request, if it carries one: an `Authorization:
/// Bearer mjs_...` header (a bearer of another shape is a seat token, not
/// ours), else the session cookie.
fn session_token(headers: &HeaderMap) -> Option<(String, Carried)> {
    // A malformed header is no session (the seat token's reading refuses it).
    let bearer = bearer(headers).ok().flatten().filter(|t| t.starts_with(crate::auth::TOKEN_PREFIX));
    if let Some(token) = bearer {
        return Some((token, Carried::Header));
    }
    cookie(headers, SESSION_COOKIE).map(|t| (t, Carried::Cookie))
}

/// A cookie's value.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// Whether a request's session comes from the cookie (no `Authorization:
/// Bearer mjs_...` header): what a page of another site could make a
/// browser send.
pub fn by_cookie(headers: &HeaderMap) -> bool {
    matches!(session_token(headers), Some((_, Carried::Cookie)))
}

/// Whether the method changes nothing (the CSRF rule spares it).
fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The caller of a request with these headers and method, if any.
pub async fn caller(state: &AppState, method: &Method, headers: &HeaderMap) -> Result<Option<Caller>, ApiError> {
    let Some((token, carried)) = session_token(headers) else { return Ok(None) };
    if carried == Carried::Cookie && !is_safe(method) && !headers.contains_key(CSRF_HEADER) {
        return Err(ApiError::refused(
            ApiErrorCode::CsrfHeaderMissing,
            "a change authenticated by the session cookie needs the X-Requested-With header",
        ));
    }
    if !is_session_token(&token) {
        return Err(ApiError::refused(ApiErrorCode::Unauthenticated, "that is not a session token"));
    }
    let session = state.accounts.authenticate(&token).await?;
    Ok(Some(Caller { user_id: session.user.id, name: session.user.name.clone(), role: session.user.role, session }))
}

impl FromRequestParts<AppState> for MaybeCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<MaybeCaller, ApiError> {
        Ok(MaybeCaller(caller(state, &parts.method, &parts.headers).await?))
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Caller, ApiError> {
        caller(state, &parts.method, &parts.headers).await?.ok_or_else(|| {
            ApiError::refused(
                ApiErrorCode::Unauthenticated,
                "log in first: send Authorization: Bearer SESSION_TOKEN or the session cookie",
            )
        })
    }
}

impl FromRequestParts<AppState> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Admin, ApiError> {
        let caller = Caller::from_request_parts(parts, state).await?;
        if !caller.is_admin() {
            return Err(ApiError::refused(ApiErrorCode::AdminOnly, "only an admin may do this"));
        }
        Ok(Admin(caller))
    }
}

/// A JSON request body, read strictly ([`crate::protocol::json`]: no
/// duplicate or unknown field, no control character in a string); an empty
/// body is an empty object. A body that is not such JSON is refused `400
/// bad_request` with what is wrong; one over the body limit `413`.
#[derive(Debug)]
pub struct StrictJson<T>(pub T);

impl<T: DeserializeOwned + Serialize> StrictJson<T> {
    /// Reads a body already taken (for a handler that must refuse some
    /// requests before it reads the body).
    pub fn parse(body: &Bytes) -> Result<T, ApiError> {
        let text = if body.is_empty() {
            "{}"
        } else {
            std::str::from_utf8(body).map_err(|_| ApiError::bad_request("the body is not UTF-8"))?
        };
        json::from_str(text).map_err(|e| ApiError::bad_request(e.to_string()))
    }
}

impl<T: DeserializeOwned + Serialize, S: Send + Sync> FromRequest<S> for StrictJson<T> {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<StrictJson<T>, Response> {
        let body = Bytes::from_request(request, state).await.map_err(IntoResponse::into_response)?;
        StrictJson::parse(&body).map(StrictJson).map_err(IntoResponse::into_response)
    }
}

/// Who asks, for the quotas: its address, and its account if logged in.
pub(crate) fn client(addr: &ConnectInfo<ClientAddr>, caller: Option<&Caller>) -> Client {
    Client { address: addr.0.0.ip(), account: caller.map(|c| c.user_id), admin: caller.is_some_and(Caller::is_admin) }
}

/// The seat token of a request: its `Authorization: Bearer` token, unless
/// that is an account's session token.
pub(crate) fn seat_token(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    Ok(bearer(headers)?.filter(|t| !t.starts_with(crate::auth::TOKEN_PREFIX)))
}

/// The token of `Authorization: Bearer TOKEN` (a seat's or a session's).
fn bearer(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get(axum::http::header::AUTHORIZATION) else { return Ok(None) };
    let text = value.to_str().map_err(|_| ApiError::bad_request("the Authorization header is not text"))?;
    match text.strip_prefix("Bearer ") {
        Some(token) if !token.trim().is_empty() => Ok(Some(token.trim().to_string())),
        _ => Err(ApiError::refused(ApiErrorCode::BadToken, "expected Authorization: Bearer SEAT_TOKEN")),
    }
}

/// A game's id from the path. The server makes ids of ASCII letters and
/// digits (from UUIDs); anything else names no game, and is not sent to the
/// database.
pub(crate) fn game_id(id: &str) -> Result<&str, ApiError> {
    let plausible =
        !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if plausible { Ok(id) } else { Err(ApiError::refused(ApiErrorCode::NoSuchGame, "no stored game has this id")) }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn the_session_token_comes_from_the_header_or_the_cookie() {
        let token = format!("mjs_{}", "0".repeat(64));
        let mut h = HeaderMap::new();
        assert_eq!(session_token(&h), None);
        h.insert(header::COOKIE, HeaderValue::from_str(&format!("a=b; mj_session={token}; c=d")).unwrap());
        assert_eq!(session_token(&h), Some((token.clone(), Carried::Cookie)));
        // A seat token in the header is not a session: the cookie still counts.
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer 0123456789abcdef0123456789abcdef"));
        assert_eq!(session_token(&h), Some((token.clone(), Carried::Cookie)));
        h.insert(header::AUTHORIZATION, HeaderValue::from_str(&format!("Bearer {token}")).unwrap());
        assert_eq!(session_token(&h), Some((token, Carried::Header)));
    }
}
