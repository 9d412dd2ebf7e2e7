//! Pages of a list: `limit` and `offset` (or `before`) in a query, checked
//! with messages that name the parameter.

use axum::extract::Query;
use axum::extract::rejection::QueryRejection;

use super::ApiError;
use crate::store::queries::Window;

/// Items per page unless `limit` says otherwise.
pub const DEFAULT_LIMIT: i64 = 20;

/// The most items a page may hold.
pub const MAX_LIMIT: i64 = 100;

/// The largest `offset` taken (far beyond any list; it keeps sums in range).
const MAX_OFFSET: i64 = 1_000_000_000;

/// The query, or a 400 naming what is wrong with it (an unknown or
/// repeated parameter).
pub(crate) fn query<T>(query: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    query.map(|Query(q)| q).map_err(|e| ApiError::bad_request(e.body_text()))
}

/// `limit` and `offset`, checked.
pub(crate) fn window(limit: Option<&str>, offset: Option<&str>) -> Result<Window, ApiError> {
    Ok(Window {
        limit: limit.map_or(Ok(DEFAULT_LIMIT), |t| number("limit", t, 1, MAX_LIMIT))?,
        offset: offset.map_or(Ok(0), |t| number("offset", t, 0, MAX_OFFSET))?,
    })
}

/// A whole number parameter from `lo` to `hi`.
pub(crate) fn number(name: &str, text: &str, lo: i64, hi: i64) -> Result<i64, ApiError> {
    text.trim()
        .parse::<i64>()
        .ok()
        .filter(|n| (lo..=hi).contains(n))
        .ok_or_else(|| ApiError::bad_request(format!("{name} must be a whole number from {lo} to {hi}, not '{text}'")))
}
