//! Errors at the HTTP edge: every failure of a request becomes a status and
//! the body `{"error": {"code": ..., "message": ...}}`.
//!
//! A refusal ([`ApiError::Refused`]) is the client's to mend, or to ask
//! again after `Retry-After` (`503 recovering`, while a restarted server
//! brings its tables back): its message says why and is sent. An internal failure (the store, corrupt stored
//! data, a panic) is logged with its details, and the client gets only its
//! code and a generic message: database text never leaves the server.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::auth::AuthError;
use crate::store::StoreError;
use crate::table::TableError;
use crate::table::actor::OpenError;

/// Writes [`ApiErrorCode`] from its table: each code's variant, its name as
/// clients see it, its status and when it is answered, in one row.
macro_rules! api_error_codes {
    ($($variant:ident = $name:literal, $status:ident, $meaning:literal;)*) => {
        /// The error codes of the REST API: stable, listed with their meanings
        /// in the OpenAPI document. Each has one status.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ApiErrorCode {
            $(#[doc = $meaning] $variant,)*
        }

        impl ApiErrorCode {
            /// Every code.
            pub const ALL: [ApiErrorCode; [$($name),*].len()] = [$(ApiErrorCode::$variant),*];

            /// The code as clients see it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ApiErrorCode::$variant => $name,)*
                }
            }

            /// The status it is answered with.
            pub fn status(self) -> StatusCode {
                match self {
                    $(ApiErrorCode::$variant => StatusCode::$status,)*
                }
            }

            /// When a refusal has this code (the API reference says so, in
            /// each endpoint's answers).
            pub fn meaning(self) -> &'static str {
                match self {
                    $(ApiErrorCode::$variant => $meaning,)*
                }
            }
        }
    };
}

api_error_codes! {
    BadRequest = "bad_request", BAD_REQUEST,
        "a malformed request: its body, a parameter or a header";
    UnsupportedFile = "unsupported_file", BAD_REQUEST,
        "a game file of another format or version";
    BadToken = "bad_token", UNAUTHORIZED,
        "the seat token is missing where it is needed, malformed, or not this table's";
    NotManager = "not_manager", FORBIDDEN,
        "only the game manager may do that";
    NotMember = "not_member", SERVICE_UNAVAILABLE,
        "cluster mode: this node holds no live lease, so it plays no table now";
    NatsUnavailable = "nats_unavailable", SERVICE_UNAVAILABLE,
        "cluster mode: this node cannot reach NATS, so the other nodes' tables cannot be reached from it";
    NoSuchTable = "no_such_table", NOT_FOUND,
        "no table has this id";
    NoSuchGame = "no_such_game", NOT_FOUND,
        "no stored game has this id";
    NoSuchHand = "no_such_hand", NOT_FOUND,
        "the game has no such hand";
    NotFound = "not_found", NOT_FOUND,
        "no such endpoint";
    MethodNotAllowed = "method_not_allowed", METHOD_NOT_ALLOWED,
        "the endpoint does not take this method";
    Timeout = "timeout", REQUEST_TIMEOUT,
        "the request was not answered within its time limit";
    SeatTaken = "seat_taken", CONFLICT,
        "the seat is taken, or the table is full";
    NotNow = "not_now", CONFLICT,
        "not at this moment";
    NotFinished = "not_finished", CONFLICT,
        "a game that is not over cannot be exported";
    Closed = "closed", GONE,
        "the table closed while the request was handled";
    TooLarge = "too_large", PAYLOAD_TOO_LARGE,
        "the body is over its limit";
    UriTooLong = "uri_too_long", URI_TOO_LONG,
        "the URI is over its limit";
    InvalidGame = "invalid_game", UNPROCESSABLE_ENTITY,
        "a game file that is malformed or does not add up";
    InvalidLog = "invalid_log", UNPROCESSABLE_ENTITY,
        "an mj-server log that does not replay";
    Unrecordable = "unrecordable", UNPROCESSABLE_ENTITY,
        "the game played rules an mj-server log cannot record (tile swap, animals, double dice, no special \
                 scores)";
    HeadersTooLarge = "headers_too_large", REQUEST_HEADER_FIELDS_TOO_LARGE,
        "the request's head is too large";
    Unauthenticated = "unauthenticated", UNAUTHORIZED,
        "no account session, or one that has expired or ended: log in";
    WrongCredentials = "wrong_credentials", UNAUTHORIZED,
        "wrong name or password";
    AccountDisabled = "account_disabled", FORBIDDEN,
        "the account is disabled";
    AdminOnly = "admin_only", FORBIDDEN,
        "only an admin may do that";
    CsrfHeaderMissing = "csrf_header_missing", FORBIDDEN,
        "a change authenticated by the session cookie needs the X-Requested-With header";
    AccountRequired = "account_required", FORBIDDEN,
        "the server admits only logged-in players";
    NameRegistered = "name_registered", FORBIDDEN,
        "that name belongs to an account: log in to use it";
    NoSuchUser = "no_such_user", NOT_FOUND,
        "no account has this number";
    NameTaken = "name_taken", CONFLICT,
        "the account name is taken";
    LastAdmin = "last_admin", CONFLICT,
        "the change would leave no enabled admin";
    TooManyRequests = "too_many_requests", TOO_MANY_REQUESTS,
        "too many attempts: `Retry-After` says when to try again";
    QuotaExceeded = "quota_exceeded", TOO_MANY_REQUESTS,
        "the client holds as many as it may of something (connections, WebSockets, tables, seats, games of \
                 robots), or opened tables too fast: `Retry-After` says when to try again (docs/protocol.md, \"Limits\")";
    NameConfusable = "name_confusable", CONFLICT,
        "the name looks like an account's or a robot's: choose another";
    BadOrigin = "bad_origin", FORBIDDEN,
        "a WebSocket authenticated by the session cookie must be opened from this server's own pages";
    NoSuchPreset = "no_such_preset", NOT_FOUND,
        "no preset has this name";
    PresetExists = "preset_exists", CONFLICT,
        "a preset already has that name, ignoring case";
    ReadOnlyPreset = "read_only_preset", FORBIDDEN,
        "built-in presets cannot be changed or deleted";
    PresetInUse = "preset_in_use", CONFLICT,
        "the defaults of new tables (in force, or the flags') use that preset";
    BadIdempotencyKey = "bad_idempotency_key", BAD_REQUEST,
        "the Idempotency-Key header is not 1 to 255 visible ASCII characters, or is given more than once";
    IdempotencyKeyReused = "idempotency_key_reused", UNPROCESSABLE_ENTITY,
        "the Idempotency-Key was used within a day for another request (another body or endpoint)";
    Internal = "internal", INTERNAL_SERVER_ERROR,
        "the server failed; the failure is logged";
    StoreUnavailable = "store_unavailable", SERVICE_UNAVAILABLE,
        "the game store cannot be reached; try again";
    Recovering = "recovering", SERVICE_UNAVAILABLE,
        "the server has restarted and is bringing its stored games back (this table's, or not all yet): \
                 `Retry-After` says when to try again";
}

impl ApiErrorCode {
    /// The code of a refusal made by the HTTP layer with this status (a
    /// status no code has is answered as `bad_request` or `internal`).
    pub fn for_status(status: StatusCode) -> ApiErrorCode {
        const LAYER: [ApiErrorCode; 8] = [
            ApiErrorCode::BadRequest,
            ApiErrorCode::NotFound,
            ApiErrorCode::MethodNotAllowed,
            ApiErrorCode::Timeout,
            ApiErrorCode::TooLarge,
            ApiErrorCode::UriTooLong,
            ApiErrorCode::HeadersTooLarge,
            ApiErrorCode::StoreUnavailable,
        ];
        match LAYER.into_iter().find(|c| c.status() == status) {
            Some(code) => code,
            None if status.is_client_error() => ApiErrorCode::BadRequest,
            None => ApiErrorCode::Internal,
        }
    }

    /// Seconds a client is told to wait (`Retry-After`) before asking
    /// again, for the codes that say when to.
    pub fn retry_after(self) -> Option<u64> {
        match self {
            // A game comes back in milliseconds; a whole restart in seconds.
            ApiErrorCode::Recovering => Some(1),
            _ => None,
        }
    }

    /// What the client is told of an internal failure.
    fn generic_message(self) -> &'static str {
        match self {
            ApiErrorCode::StoreUnavailable => "the game store is unavailable; try again",
            _ => "the server failed to answer; the failure is logged",
        }
    }
}

impl serde::Serialize for ApiErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The body of every error answer: `{"error": {"code": ..., "message": ...}}`.
#[derive(Debug, serde::Serialize)]
pub struct ErrorBody<'a> {
    /// What went wrong.
    pub error: ErrorDetail<'a>,
}

/// The `error` of an [`ErrorBody`].
#[derive(Debug, serde::Serialize)]
pub struct ErrorDetail<'a> {
    /// The stable code.
    pub code: ApiErrorCode,
    /// Why, in words.
    pub message: &'a str,
}

/// The body of every error answer.
pub fn error_body(status: StatusCode, code: ApiErrorCode, message: &str) -> Response {
    crate::metrics::http_error(code.as_str());
    (status, Json(ErrorBody { error: ErrorDetail { code, message } })).into_response()
}

/// A request that failed.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// Refused: the client's to mend (a 4xx), or to ask again later (`503
    /// recovering`, with `Retry-After`). The message is sent.
    #[error("{}: {message}", code.as_str())]
    Refused {
        /// The code (it decides the status).
        code: ApiErrorCode,
        /// Why, for the client.
        message: String,
    },
    /// The store failed: logged; the client gets `store_unavailable` (or
    /// `internal` for stored data that does not read) and a generic message.
    #[error("the store failed: {0}")]
    Store(#[from] StoreError),
    /// Too many attempts (`too_many_requests`), or a quota used up
    /// (`quota_exceeded`): answered 429 with `Retry-After` (whole seconds,
    /// at least 1).
    #[error("{}: {message}", code.as_str())]
    Limited {
        /// `too_many_requests` or `quota_exceeded`.
        code: ApiErrorCode,
        /// Why, for the client.
        message: String,
        /// Seconds to wait.
        retry_after_secs: u64,
    },
    /// Something else failed inside the server (a task that panicked, a
    /// value that would not serialise): logged; the client gets `internal`.
    #[error("internal failure: {0}")]
    Internal(String),
}

impl ApiError {
    /// A refusal with this code and message.
    pub fn refused(code: ApiErrorCode, message: impl Into<String>) -> ApiError {
        ApiError::Refused { code, message: message.into() }
    }

    /// A 400 for a malformed request.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::refused(ApiErrorCode::BadRequest, message)
    }

    /// An internal failure; `detail` is logged, never sent.
    pub fn internal(detail: impl std::fmt::Display) -> ApiError {
        ApiError::Internal(detail.to_string())
    }

    /// The code answered.
    pub fn code(&self) -> ApiErrorCode {
        match self {
            ApiError::Refused { code, .. } => *code,
            ApiError::Limited { code, .. } => *code,
            ApiError::Store(e) if e.is_internal() => ApiErrorCode::Internal,
            ApiError::Store(_) => ApiErrorCode::StoreUnavailable,
            ApiError::Internal(_) => ApiErrorCode::Internal,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = self.code();
        match self {
            ApiError::Refused { message, .. } => {
                let mut response = error_body(code.status(), code, &message);
                if let Some(seconds) = code.retry_after() {
                    response.headers_mut().insert(axum::http::header::RETRY_AFTER, seconds.into());
                }
                response
            }
            ApiError::Limited { message, retry_after_secs, .. } => {
                let mut response = error_body(code.status(), code, &message);
                response.headers_mut().insert(axum::http::header::RETRY_AFTER, retry_after_secs.into());
                response
            }
            internal => {
                if code == ApiErrorCode::StoreUnavailable {
                    tracing::warn!("answering {}: {internal}", code.as_str());
                } else {
                    tracing::error!("answering {}: {internal}", code.as_str());
                }
                error_body(code.status(), code, code.generic_message())
            }
        }
    }
}

impl From<TableError> for ApiError {
    fn from(e: TableError) -> ApiError {
        let code = match &e {
            TableError::NoSuchTable(_) => ApiErrorCode::NoSuchTable,
            TableError::NoSuchSeat(_) | TableError::Invalid(_) => ApiErrorCode::BadRequest,
            TableError::SeatTaken(_) | TableError::Full => ApiErrorCode::SeatTaken,
            TableError::BadToken => ApiErrorCode::BadToken,
            TableError::NotManager => ApiErrorCode::NotManager,
            TableError::NotNow(_) => ApiErrorCode::NotNow,
            TableError::Closed => ApiErrorCode::Closed,
            TableError::StoreUnavailable => ApiErrorCode::StoreUnavailable,
            TableError::Recovering => ApiErrorCode::Recovering,
        };
        ApiError::refused(code, e.to_string())
    }
}

impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> ApiError {
        let code = match &e {
            AuthError::BadName(_) | AuthError::BadPassword(_) => ApiErrorCode::BadRequest,
            AuthError::NameTaken(_) => ApiErrorCode::NameTaken,
            AuthError::NameRegistered(_) => ApiErrorCode::NameRegistered,
            AuthError::LooksLike { .. } => ApiErrorCode::NameConfusable,
            AuthError::WrongCredentials => ApiErrorCode::WrongCredentials,
            AuthError::Disabled => ApiErrorCode::AccountDisabled,
            AuthError::Unauthenticated(_) => ApiErrorCode::Unauthenticated,
            AuthError::NoSuchUser(_) => ApiErrorCode::NoSuchUser,
            AuthError::LastAdmin => ApiErrorCode::LastAdmin,
            AuthError::Limited(wait) => {
                // Rounded up: a client that waits this long is let in.
                let retry_after_secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                let code = ApiErrorCode::TooManyRequests;
                return ApiError::Limited { code, message: e.to_string(), retry_after_secs: retry_after_secs.max(1) };
            }
            AuthError::Busy(_) => {
                let code = ApiErrorCode::TooManyRequests;
                return ApiError::Limited { code, message: e.to_string(), retry_after_secs: 1 };
            }
            AuthError::Store(_) | AuthError::Hash(_) => {
                return match e {
                    AuthError::Store(e) => ApiError::Store(e),
                    e => ApiError::internal(e),
                };
            }
        };
        ApiError::refused(code, e.to_string())
    }
}

impl From<crate::limits::Refusal> for ApiError {
    fn from(refusal: crate::limits::Refusal) -> ApiError {
        let retry_after_secs = refusal.retry_after_secs();
        ApiError::Limited { code: ApiErrorCode::QuotaExceeded, message: refusal.message, retry_after_secs }
    }
}

impl From<OpenError> for ApiError {
    fn from(e: OpenError) -> ApiError {
        match e {
            OpenError::Table(e) => e.into(),
            OpenError::Store(e) => e.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    async fn body(response: Response) -> (StatusCode, serde_json::Value) {
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16).await.unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    #[test]
    fn codes_are_unique_and_keep_their_names() {
        let names: std::collections::BTreeSet<&str> = ApiErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names.len(), ApiErrorCode::ALL.len());
        assert_eq!(ApiErrorCode::StoreUnavailable.as_str(), "store_unavailable");
        assert_eq!(ApiErrorCode::StoreUnavailable.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(ApiErrorCode::for_status(StatusCode::URI_TOO_LONG), ApiErrorCode::UriTooLong);
        assert_eq!(ApiErrorCode::for_status(StatusCode::UPGRADE_REQUIRED), ApiErrorCode::BadRequest);
        assert_eq!(ApiErrorCode::for_status(StatusCode::BAD_GATEWAY), ApiErrorCode::Internal);
    }

    #[tokio::test]
    async fn database_text_never_reaches_the_client() {
        let secret = "password authentication failed for user \"mahjong\" at 10.0.0.5";
        let e = StoreError::Unavailable(Arc::new(sqlx::Error::Protocol(secret.into())));
        let (status, json) = body(ApiError::from(e).into_response()).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(json["error"]["code"], "store_unavailable");
        assert_eq!(json["error"]["message"], "the game store is unavailable; try again");
        assert!(!json.to_string().contains("mahjong"), "{json}");

        let e = StoreError::Database(sqlx::Error::Protocol(secret.into()));
        let (status, json) = body(ApiError::from(e).into_response()).await;
        assert_eq!(
            (status, json["error"]["code"].as_str()),
            (StatusCode::SERVICE_UNAVAILABLE, Some("store_unavailable"))
        );
        assert!(!json.to_string().contains("mahjong"), "{json}");

        let e = StoreError::Corrupt { game: "g1".into(), why: secret.into() };
        let (status, json) = body(ApiError::from(e).into_response()).await;
        assert_eq!((status, json["error"]["code"].as_str()), (StatusCode::INTERNAL_SERVER_ERROR, Some("internal")));
        assert!(!json.to_string().contains("mahjong"), "{json}");

        let (status, json) = body(ApiError::internal(secret).into_response()).await;
        assert_eq!((status, json["error"]["code"].as_str()), (StatusCode::INTERNAL_SERVER_ERROR, Some("internal")));
        assert!(!json.to_string().contains("mahjong"), "{json}");
    }

    #[tokio::test]
    async fn a_refusal_tells_its_message() {
        let (status, json) = body(ApiError::from(TableError::SeatTaken(2)).into_response()).await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert_eq!(json, json!({"error": {"code": "seat_taken", "message": "seat 2 is taken"}}));
    }
}
