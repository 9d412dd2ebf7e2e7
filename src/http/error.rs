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

/// The error codes of the REST API: stable, documented in docs/protocol.md
/// ("Errors"). Each has one status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// 400: a malformed request.
    BadRequest,
    /// 400: a game file of another format or version.
    UnsupportedFile,
    /// 401: the seat token is missing, malformed, or not this table's.
    BadToken,
    /// 403: only the game manager may do that.
    NotManager,
    /// 404: no such table.
    NoSuchTable,
    /// 404: no such stored game.
    NoSuchGame,
    /// 404: no such (finished) hand.
    NoSuchHand,
    /// 404: no such endpoint.
    NotFound,
    /// 405: the endpoint does not take this method.
    MethodNotAllowed,
    /// 408: the request was not answered in time.
    Timeout,
    /// 409: the seat is taken, or the table is full.
    SeatTaken,
    /// 409: not at this moment.
    NotNow,
    /// 409: an unfinished game cannot be exported over REST.
    NotFinished,
    /// 410: the table closed while the request was handled.
    Closed,
    /// 413: the body is over its limit.
    TooLarge,
    /// 414: the URI is over its limit.
    UriTooLong,
    /// 422: a game file that does not add up.
    InvalidGame,
    /// 422: an mj-server log that does not replay.
    InvalidLog,
    /// 422: the game played rules an mj-server log cannot record.
    Unrecordable,
    /// 431: the request's headers are too large.
    HeadersTooLarge,
    /// 401: no account session, or one that has expired or ended.
    Unauthenticated,
    /// 401: wrong name or password.
    WrongCredentials,
    /// 403: the account is disabled.
    AccountDisabled,
    /// 403: only an admin may do that.
    AdminOnly,
    /// 403: a write authenticated by the session cookie lacks the
    /// `X-Requested-With` header (the CSRF rule).
    CsrfHeaderMissing,
    /// 403: the server admits only logged-in players (`--require-accounts`).
    AccountRequired,
    /// 403: that name belongs to an account: log in to use it.
    NameRegistered,
    /// 404: no such account.
    NoSuchUser,
    /// 409: the account name is taken.
    NameTaken,
    /// 409: the change would leave no enabled admin.
    LastAdmin,
    /// 429: too many attempts; `Retry-After` says when to try again.
    TooManyRequests,
    /// 429: the client holds as many as it may of something (connections,
    /// WebSockets, tables, seats, games of robots), or opened tables too
    /// fast; `Retry-After` says when to try again.
    QuotaExceeded,
    /// 409: the name looks like an account's or a robot's (Unicode's
    /// confusables).
    NameConfusable,
    /// 403: a WebSocket authenticated by the session cookie was opened from
    /// a page of another origin.
    BadOrigin,
    /// 404: no such preset.
    NoSuchPreset,
    /// 409: a preset already has that name (ignoring case).
    PresetExists,
    /// 403: built-in presets cannot be changed or deleted.
    ReadOnlyPreset,
    /// 409: the defaults (in force, or the flags') use that preset.
    PresetInUse,
    /// 400: the `Idempotency-Key` header is not 1-255 visible ASCII
    /// characters, or is given twice.
    BadIdempotencyKey,
    /// 422: the `Idempotency-Key` was used for another request (another
    /// body, or another endpoint).
    IdempotencyKeyReused,
    /// 500: the server failed (the failure is logged, not told).
    Internal,
    /// 503: the game store cannot be reached; try again.
    StoreUnavailable,
    /// 503: the server has restarted and is still bringing its stored games
    /// back (this table's among them); `Retry-After` says when to try again.
    Recovering,
}

impl ErrorCode {
    /// Every code.
    pub const ALL: [ErrorCode; 43] = [
        ErrorCode::BadRequest,
        ErrorCode::UnsupportedFile,
        ErrorCode::BadToken,
        ErrorCode::NotManager,
        ErrorCode::NoSuchTable,
        ErrorCode::NoSuchGame,
        ErrorCode::NoSuchHand,
        ErrorCode::NotFound,
        ErrorCode::MethodNotAllowed,
        ErrorCode::Timeout,
        ErrorCode::SeatTaken,
        ErrorCode::NotNow,
        ErrorCode::NotFinished,
        ErrorCode::Closed,
        ErrorCode::TooLarge,
        ErrorCode::UriTooLong,
        ErrorCode::InvalidGame,
        ErrorCode::InvalidLog,
        ErrorCode::Unrecordable,
        ErrorCode::HeadersTooLarge,
        ErrorCode::Unauthenticated,
        ErrorCode::WrongCredentials,
        ErrorCode::AccountDisabled,
        ErrorCode::AdminOnly,
        ErrorCode::CsrfHeaderMissing,
        ErrorCode::AccountRequired,
        ErrorCode::NameRegistered,
        ErrorCode::NoSuchUser,
        ErrorCode::NameTaken,
        ErrorCode::LastAdmin,
        ErrorCode::TooManyRequests,
        ErrorCode::QuotaExceeded,
        ErrorCode::NameConfusable,
        ErrorCode::BadOrigin,
        ErrorCode::NoSuchPreset,
        ErrorCode::PresetExists,
        ErrorCode::ReadOnlyPreset,
        ErrorCode::PresetInUse,
        ErrorCode::BadIdempotencyKey,
        ErrorCode::IdempotencyKeyReused,
        ErrorCode::Internal,
        ErrorCode::StoreUnavailable,
        ErrorCode::Recovering,
    ];

    /// The code as clients see it.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::UnsupportedFile => "unsupported_file",
            ErrorCode::BadToken => "bad_token",
            ErrorCode::NotManager => "not_manager",
            ErrorCode::NoSuchTable => "no_such_table",
            ErrorCode::NoSuchGame => "no_such_game",
            ErrorCode::NoSuchHand => "no_such_hand",
            ErrorCode::NotFound => "not_found",
            ErrorCode::MethodNotAllowed => "method_not_allowed",
            ErrorCode::Timeout => "timeout",
            ErrorCode::SeatTaken => "seat_taken",
            ErrorCode::NotNow => "not_now",
            ErrorCode::NotFinished => "not_finished",
            ErrorCode::Closed => "closed",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::UriTooLong => "uri_too_long",
            ErrorCode::InvalidGame => "invalid_game",
            ErrorCode::InvalidLog => "invalid_log",
            ErrorCode::Unrecordable => "unrecordable",
            ErrorCode::HeadersTooLarge => "headers_too_large",
            ErrorCode::Unauthenticated => "unauthenticated",
            ErrorCode::WrongCredentials => "wrong_credentials",
            ErrorCode::AccountDisabled => "account_disabled",
            ErrorCode::AdminOnly => "admin_only",
            ErrorCode::CsrfHeaderMissing => "csrf_header_missing",
            ErrorCode::AccountRequired => "account_required",
            ErrorCode::NameRegistered => "name_registered",
            ErrorCode::NoSuchUser => "no_such_user",
            ErrorCode::NameTaken => "name_taken",
            ErrorCode::LastAdmin => "last_admin",
            ErrorCode::TooManyRequests => "too_many_requests",
            ErrorCode::QuotaExceeded => "quota_exceeded",
            ErrorCode::NameConfusable => "name_confusable",
            ErrorCode::BadOrigin => "bad_origin",
            ErrorCode::NoSuchPreset => "no_such_preset",
            ErrorCode::PresetExists => "preset_exists",
            ErrorCode::ReadOnlyPreset => "read_only_preset",
            ErrorCode::PresetInUse => "preset_in_use",
            ErrorCode::BadIdempotencyKey => "bad_idempotency_key",
            ErrorCode::IdempotencyKeyReused => "idempotency_key_reused",
            ErrorCode::Internal => "internal",
            ErrorCode::StoreUnavailable => "store_unavailable",
            ErrorCode::Recovering => "recovering",
        }
    }

    /// The status it is answered with.
    pub fn status(self) -> StatusCode {
        match self {
            ErrorCode::BadRequest | ErrorCode::UnsupportedFile | ErrorCode::BadIdempotencyKey => {
                StatusCode::BAD_REQUEST
            }
            ErrorCode::BadToken | ErrorCode::Unauthenticated | ErrorCode::WrongCredentials => StatusCode::UNAUTHORIZED,
            ErrorCode::NotManager
            | ErrorCode::AccountDisabled
            | ErrorCode::AdminOnly
            | ErrorCode::CsrfHeaderMissing
            | ErrorCode::AccountRequired
            | ErrorCode::NameRegistered
            | ErrorCode::BadOrigin
            | ErrorCode::ReadOnlyPreset => StatusCode::FORBIDDEN,
            ErrorCode::NoSuchTable
            | ErrorCode::NoSuchGame
            | ErrorCode::NoSuchHand
            | ErrorCode::NotFound
            | ErrorCode::NoSuchUser
            | ErrorCode::NoSuchPreset => StatusCode::NOT_FOUND,
            ErrorCode::TooManyRequests | ErrorCode::QuotaExceeded => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ErrorCode::Timeout => StatusCode::REQUEST_TIMEOUT,
            ErrorCode::SeatTaken
            | ErrorCode::NotNow
            | ErrorCode::NotFinished
            | ErrorCode::NameTaken
            | ErrorCode::NameConfusable
            | ErrorCode::LastAdmin
            | ErrorCode::PresetExists
            | ErrorCode::PresetInUse => StatusCode::CONFLICT,
            ErrorCode::Closed => StatusCode::GONE,
            ErrorCode::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::UriTooLong => StatusCode::URI_TOO_LONG,
            ErrorCode::InvalidGame
            | ErrorCode::InvalidLog
            | ErrorCode::Unrecordable
            | ErrorCode::IdempotencyKeyReused => StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::HeadersTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::StoreUnavailable | ErrorCode::Recovering => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The code of a refusal made by the HTTP layer with this status (a
    /// status no code has is answered as `bad_request` or `internal`).
    pub fn for_status(status: StatusCode) -> ErrorCode {
        const LAYER: [ErrorCode; 8] = [
            ErrorCode::BadRequest,
            ErrorCode::NotFound,
            ErrorCode::MethodNotAllowed,
            ErrorCode::Timeout,
            ErrorCode::TooLarge,
            ErrorCode::UriTooLong,
            ErrorCode::HeadersTooLarge,
            ErrorCode::StoreUnavailable,
        ];
        match LAYER.into_iter().find(|c| c.status() == status) {
            Some(code) => code,
            None if status.is_client_error() => ErrorCode::BadRequest,
            None => ErrorCode::Internal,
        }
    }

    /// When a refusal has this code (the API reference says so, in each
    /// endpoint's answers).
    pub fn meaning(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "a malformed request: its body, a parameter or a header",
            ErrorCode::UnsupportedFile => "a game file of another format or version",
            ErrorCode::BadToken => "the seat token is missing where it is needed, malformed, or not this table's",
            ErrorCode::NotManager => "only the game manager may do that",
            ErrorCode::NoSuchTable => "no table has this id",
            ErrorCode::NoSuchGame => "no stored game has this id",
            ErrorCode::NoSuchHand => "the game has no such hand",
            ErrorCode::NotFound => "no such endpoint",
            ErrorCode::MethodNotAllowed => "the endpoint does not take this method",
            ErrorCode::Timeout => "the request was not answered within its time limit",
            ErrorCode::SeatTaken => "the seat is taken, or the table is full",
            ErrorCode::NotNow => "not at this moment",
            ErrorCode::NotFinished => "a game that is not over cannot be exported",
            ErrorCode::Closed => "the table closed while the request was handled",
            ErrorCode::TooLarge => "the body is over its limit",
            ErrorCode::UriTooLong => "the URI is over its limit",
            ErrorCode::InvalidGame => "a game file that is malformed or does not add up",
            ErrorCode::InvalidLog => "an mj-server log that does not replay",
            ErrorCode::Unrecordable => {
                "the game played rules an mj-server log cannot record (tile swap, animals, double dice, no special \
                 scores)"
            }
            ErrorCode::HeadersTooLarge => "the request's head is too large",
            ErrorCode::Unauthenticated => "no account session, or one that has expired or ended: log in",
            ErrorCode::WrongCredentials => "wrong name or password",
            ErrorCode::AccountDisabled => "the account is disabled",
            ErrorCode::AdminOnly => "only an admin may do that",
            ErrorCode::CsrfHeaderMissing => {
                "a change authenticated by the session cookie needs the X-Requested-With header"
            }
            ErrorCode::AccountRequired => "the server admits only logged-in players",
            ErrorCode::NameRegistered => "that name belongs to an account: log in to use it",
            ErrorCode::NoSuchUser => "no account has this number",
            ErrorCode::NameTaken => "the account name is taken",
            ErrorCode::LastAdmin => "the change would leave no enabled admin",
            ErrorCode::TooManyRequests => "too many attempts: `Retry-After` says when to try again",
            ErrorCode::QuotaExceeded => {
                "the client holds as many as it may of something (connections, WebSockets, tables, seats, games of \
                 robots), or opened tables too fast: `Retry-After` says when to try again (docs/protocol.md, \"Limits\")"
            }
            ErrorCode::NameConfusable => "the name looks like an account's or a robot's: choose another",
            ErrorCode::BadOrigin => {
                "a WebSocket authenticated by the session cookie must be opened from this server's own pages"
            }
            ErrorCode::NoSuchPreset => "no preset has this name",
            ErrorCode::PresetExists => "a preset already has that name, ignoring case",
            ErrorCode::ReadOnlyPreset => "built-in presets cannot be changed or deleted",
            ErrorCode::PresetInUse => "the defaults of new tables (in force, or the flags') use that preset",
            ErrorCode::BadIdempotencyKey => {
                "the Idempotency-Key header is not 1 to 255 visible ASCII characters, or is given more than once"
            }
            ErrorCode::IdempotencyKeyReused => {
                "the Idempotency-Key was used within a day for another request (another body or endpoint)"
            }
            ErrorCode::Internal => "the server failed; the failure is logged",
            ErrorCode::StoreUnavailable => "the game store cannot be reached; try again",
            ErrorCode::Recovering => {
                "the server has restarted and is bringing its stored games back (this table's, or not all yet): \
                 `Retry-After` says when to try again"
            }
        }
    }

    /// Seconds a client is told to wait (`Retry-After`) before asking
    /// again, for the codes that say when to.
    pub fn retry_after(self) -> Option<u64> {
        match self {
            // A game comes back in milliseconds; a whole restart in seconds.
            ErrorCode::Recovering => Some(1),
            _ => None,
        }
    }

    /// What the client is told of an internal failure.
    fn generic_message(self) -> &'static str {
        match self {
            ErrorCode::StoreUnavailable => "the game store is unavailable; try again",
            _ => "the server failed to answer; the failure is logged",
        }
    }
}

impl serde::Serialize for ErrorCode {
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
    pub code: ErrorCode,
    /// Why, in words.
    pub message: &'a str,
}

/// The body of every error answer.
pub fn error_body(status: StatusCode, code: ErrorCode, message: &str) -> Response {
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
        code: ErrorCode,
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
        code: ErrorCode,
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
    pub fn refused(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError::Refused { code, message: message.into() }
    }

    /// A 400 for a malformed request.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::refused(ErrorCode::BadRequest, message)
    }

    /// An internal failure; `detail` is logged, never sent.
    pub fn internal(detail: impl std::fmt::Display) -> ApiError {
        ApiError::Internal(detail.to_string())
    }

    /// The code answered.
    pub fn code(&self) -> ErrorCode {
        match self {
            ApiError::Refused { code, .. } => *code,
            ApiError::Limited { code, .. } => *code,
            ApiError::Store(e) if e.is_internal() => ErrorCode::Internal,
            ApiError::Store(_) => ErrorCode::StoreUnavailable,
            ApiError::Internal(_) => ErrorCode::Internal,
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
                if code == ErrorCode::StoreUnavailable {
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
            TableError::NoSuchTable(_) => ErrorCode::NoSuchTable,
            TableError::NoSuchSeat(_) | TableError::Invalid(_) => ErrorCode::BadRequest,
            TableError::SeatTaken(_) | TableError::Full => ErrorCode::SeatTaken,
            TableError::BadToken => ErrorCode::BadToken,
            TableError::NotManager => ErrorCode::NotManager,
            TableError::NotNow(_) => ErrorCode::NotNow,
            TableError::Closed => ErrorCode::Closed,
            TableError::StoreUnavailable => ErrorCode::StoreUnavailable,
            TableError::Recovering => ErrorCode::Recovering,
        };
        ApiError::refused(code, e.to_string())
    }
}

impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> ApiError {
        let code = match &e {
            AuthError::BadName(_) | AuthError::BadPassword(_) => ErrorCode::BadRequest,
            AuthError::NameTaken(_) => ErrorCode::NameTaken,
            AuthError::NameRegistered(_) => ErrorCode::NameRegistered,
            AuthError::LooksLike { .. } => ErrorCode::NameConfusable,
            AuthError::WrongCredentials => ErrorCode::WrongCredentials,
            AuthError::Disabled => ErrorCode::AccountDisabled,
            AuthError::Unauthenticated(_) => ErrorCode::Unauthenticated,
            AuthError::NoSuchUser(_) => ErrorCode::NoSuchUser,
            AuthError::LastAdmin => ErrorCode::LastAdmin,
            AuthError::Limited(wait) => {
                // Rounded up: a client that waits this long is let in.
                let retry_after_secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                let code = ErrorCode::TooManyRequests;
                return ApiError::Limited { code, message: e.to_string(), retry_after_secs: retry_after_secs.max(1) };
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
        ApiError::Limited { code: ErrorCode::QuotaExceeded, message: refusal.message, retry_after_secs }
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
        let names: std::collections::BTreeSet<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names.len(), ErrorCode::ALL.len());
        assert_eq!(ErrorCode::StoreUnavailable.as_str(), "store_unavailable");
        assert_eq!(ErrorCode::StoreUnavailable.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(ErrorCode::for_status(StatusCode::URI_TOO_LONG), ErrorCode::UriTooLong);
        assert_eq!(ErrorCode::for_status(StatusCode::UPGRADE_REQUIRED), ErrorCode::BadRequest);
        assert_eq!(ErrorCode::for_status(StatusCode::BAD_GATEWAY), ErrorCode::Internal);
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
