//! The score queries: what the REST score endpoints read from the store.
//!
//! Every answer is a plain serde struct, shaped as the endpoint sends it.
//! They read the projections (`games`, `seats`, `hands`, `hand_players`,
//! `payments`) and, for a hand's replay, the event log; they never ask a
//! table, so a query costs a running game nothing. The SQL is the store's
//! one portable dialect: `$N` parameters, and every number read back as an
//! `i64` (sums and flags are cast to `BIGINT`, which Postgres would otherwise
//! answer as `NUMERIC` or `INTEGER`).

pub mod games;
pub mod hands;
pub mod replay;
pub mod standings;

use serde::{Deserialize, Serialize};
use sqlx::Any;
use sqlx::any::AnyArguments;
use sqlx::query::Query;

use super::{Store, StoreError};
use crate::store::TableState;

pub use games::{GameDetail, GameFilter, GamePage, GamePlayer, GameSummary, PlayerSummary};
pub use hands::{HandDetail, HandPage, HandPlayer};
pub use replay::{HandHistory, ReplayEvent, SeenAs, Viewer};
pub use standings::{Standing, StandingsPage};

/// Which slice of a list is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// At most this many items.
    pub limit: i64,
    /// After skipping this many.
    pub offset: i64,
}

/// Where a slice sits in its whole list (flattened into each page).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Paging {
    /// How many items the whole list has.
    pub total: i64,
    /// The `limit` asked for.
    pub limit: i64,
    /// The `offset` asked for.
    pub offset: i64,
    /// The `offset` of the next page, `null` on the last one.
    pub next_offset: Option<i64>,
}

impl Paging {
    /// The paging of `window` over `total` items.
    pub fn new(window: Window, total: i64) -> Paging {
        let next = window.offset + window.limit;
        Paging { total, limit: window.limit, offset: window.offset, next_offset: (next < total).then_some(next) }
    }
}

/// Where a game stands, as the endpoints need it before answering: whether
/// it exists, whether it is over (which decides who may see what), and how
/// many hands have been dealt (which says whether a hand number can exist).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameProgress {
    /// Open, being played, or over.
    pub state: TableState,
    /// Hands dealt so far.
    pub hands: i64,
}

/// A value to bind to a query built piece by piece.
#[derive(Clone, Debug)]
enum Param {
    Text(String),
    Int(i64),
}

/// `WHERE` conditions built from optional filters, each numbering its own
/// parameter, so that the SQL names only the filters given (an untyped
/// `$1 IS NULL` would not do: Postgres cannot infer its type).
#[derive(Clone, Debug, Default)]
struct Conditions {
    clauses: Vec<String>,
    params: Vec<Param>,
}

impl Conditions {
    /// Adds a condition; `?` in `clause` stands for its parameter.
    fn push(&mut self, clause: &str, param: Param) {
        let placeholder = format!("${}", self.params.len() + 1);
        self.clauses.push(clause.replace('?', &placeholder));
        self.params.push(param);
    }

    /// ` AND c1 AND c2...`, or nothing.
    fn and(&self) -> String {
        self.clauses.iter().map(|c| format!(" AND {c}")).collect()
    }

    /// The next free parameter number.
    fn next(&self) -> usize {
        self.params.len() + 1
    }

    /// Binds the parameters, in order.
    fn bind<'q>(&'q self, mut query: Query<'q, Any, AnyArguments<'q>>) -> Query<'q, Any, AnyArguments<'q>> {
        for p in &self.params {
            query = match p {
                Param::Text(t) => query.bind(t.as_str()),
                Param::Int(n) => query.bind(*n),
            };
        }
        query
    }
}

/// Reads stored JSON text, blaming `game` if it does not read.
fn json<T: serde::de::DeserializeOwned>(game: &str, what: &str, text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt { game: game.to_string(), why: format!("{what}: {e}") })
}

/// A stored state name, blaming `game` if it is not one.
fn state_of(game: &str, name: &str) -> Result<TableState, StoreError> {
    TableState::from_name(name)
        .ok_or_else(|| StoreError::Corrupt { game: game.to_string(), why: format!("state '{name}'") })
}

/// A stored source name, blaming `game` if it is not one.
fn source_of(game: &str, name: &str) -> Result<super::GameSource, StoreError> {
    super::GameSource::from_name(name)
        .ok_or_else(|| StoreError::Corrupt { game: game.to_string(), why: format!("source '{name}'") })
}

impl Store {
    /// A game's state and hands dealt; `None` if there is no such game.
    pub async fn game_progress(&self, id: &str) -> Result<Option<GameProgress>, StoreError> {
        let row: Option<(String, i64)> =
            sqlx::query_as("SELECT state, hands FROM games WHERE id = $1").bind(id).fetch_optional(self.pool()).await?;
        let Some((state, hands)) = row else { return Ok(None) };
        let state = state_of(id, &state)?;
        Ok(Some(GameProgress { state, hands }))
    }

    /// The seat whose token this is at this game, if any.
    pub async fn seat_of_token(&self, id: &str, token: &str) -> Result<Option<u8>, StoreError> {
        let seat: Option<i64> = sqlx::query_scalar("SELECT seat FROM seats WHERE game_id = $1 AND token_sha256 = $2")
            .bind(id)
            .bind(super::token_sha256(token))
            .fetch_optional(self.pool())
            .await?;
        Ok(seat.and_then(|s| u8::try_from(s).ok()))
    }

    /// The seat an account held at a stored game.
    pub async fn seat_of_account(&self, id: &str, account: i64) -> Result<Option<u8>, StoreError> {
        let seat: Option<i64> = sqlx::query_scalar("SELECT seat FROM seats WHERE game_id = $1 AND user_id = $2")
            .bind(id)
            .bind(account)
            .fetch_optional(self.pool())
            .await?;
        Ok(seat.and_then(|s| u8::try_from(s).ok()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_page_has_no_next_offset() {
        let w = |limit, offset| Window { limit, offset };
        assert_eq!(Paging::new(w(20, 0), 45).next_offset, Some(20));
        assert_eq!(Paging::new(w(20, 40), 45).next_offset, None);
        assert_eq!(Paging::new(w(20, 20), 40).next_offset, None);
        assert_eq!(Paging::new(w(20, 100), 3).next_offset, None);
    }

    #[test]
    fn conditions_number_their_parameters_in_order() {
        let mut c = Conditions::default();
        c.push("g.state = ?", Param::Text("over".into()));
        c.push("g.created_us >= ?", Param::Int(5));
        assert_eq!(c.and(), " AND g.state = $1 AND g.created_us >= $2");
        assert_eq!(c.next(), 3);
    }
}
