//! Idempotency keys: a request that stores a game (an import over REST) may
//! carry a key, so that a client that lost the answer can send it again
//! without storing the game twice. The game and its key are written in one
//! transaction, so neither is ever stored without the other; a request whose
//! key is already taken stores nothing and gets what the key remembers (the
//! first request's answer, and what identifies that request: its operation
//! and its body's SHA-256). The key is the table's primary key: of two
//! requests with the same key at once, the database lets one store its game,
//! and the other then reads its answer.
//!
//! Keys are kept a day ([`KEEP`]); an older key is forgotten and may be used
//! again. The store keeps what it is given: the key's form, and what a retry
//! must send to be answered again, are the HTTP layer's (`http::archive`).

use std::time::Duration;

use super::error::is_transient;
use super::{NewGame, Store, StoreError};
use crate::store::TableState;
use crate::store::row::from_row;

/// How long a key is remembered.
pub const KEEP: Duration = Duration::from_secs(24 * 60 * 60);

/// A request's idempotency key, and what identifies the request it came with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestKey {
    /// The key, as the client gave it.
    pub key: String,
    /// The operation asked for (`import_game`, `import_mj_server_log`).
    pub operation: &'static str,
    /// The SHA-256 of the request's body, in hex.
    pub body_sha256: String,
}

/// What a key remembers: the request that first came with it, and the
/// answer it got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remembered {
    /// The operation of the first request.
    pub operation: String,
    /// The SHA-256 of its body, in hex.
    pub body_sha256: String,
    /// The game it stored.
    pub game_id: String,
    /// The game's state when it was stored.
    pub state: TableState,
    /// Hands dealt when it was stored.
    pub hands: i64,
    /// When (µs since the epoch).
    pub created_us: i64,
}

impl RequestKey {
    /// The key `key` for the operation `operation` on the body `body`.
    pub fn new(key: String, operation: &'static str, body: &[u8]) -> RequestKey {
        use sha2::{Digest, Sha256};
        let body_sha256 = Sha256::digest(body).iter().map(|b| format!("{b:02x}")).collect();
        RequestKey { key, operation, body_sha256 }
    }
}

impl Remembered {
    /// True if `key` comes with the request the key was first used for:
    /// the same operation, the same body.
    pub fn same_request(&self, key: &RequestKey) -> bool {
        self.operation == key.operation && self.body_sha256 == key.body_sha256
    }
}

/// What became of a game written with a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Once {
    /// The game is stored, with this new id, and the key with it.
    Stored(String),
    /// The key was taken: nothing was stored.
    Taken(Remembered),
}

from_row! {
    /// A key's row, as stored.
    struct KeyRow {
        operation: String,
        body_sha256: String,
        game_id: String,
        state: String,
        hands: i64,
        created_us: i64,
    }
}

impl KeyRow {
    fn read(self) -> Result<Remembered, StoreError> {
        let state = TableState::from_name(&self.state).ok_or_else(|| StoreError::CorruptRow {
            what: format!("the idempotency key of game {}", self.game_id),
            why: format!("'{}' is not a table's state", self.state),
        })?;
        let KeyRow { operation, body_sha256, game_id, hands, created_us, .. } = self;
        Ok(Remembered { operation, body_sha256, game_id, state, hands, created_us })
    }
}

const SELECT: &str = "SELECT operation, body_sha256, game_id, state, hands, created_us FROM idempotency_keys \
                      WHERE idempotency_key = $1 AND created_us >= $2";

/// The oldest time of a key still remembered, `now_us` being now.
fn oldest_kept(now_us: i64) -> i64 {
    now_us - KEEP.as_micros() as i64
}

impl Store {
    /// What `key` remembers, if it was used within [`KEEP`].
    pub async fn remembered(&self, key: &str) -> Result<Option<Remembered>, StoreError> {
        let row: Option<KeyRow> =
            sqlx::query_as(SELECT).bind(key).bind(oldest_kept(super::now_us())).fetch_optional(self.pool()).await?;
        row.map(KeyRow::read).transpose()
    }

    /// Writes a whole game as a new game together with `key`, in one
    /// transaction, unless the key is taken: then nothing is written and
    /// the answer is what the key remembers. Keys older than [`KEEP`] are
    /// forgotten first.
    ///
    /// The transaction is on the journal's connection but beside its groups
    /// (the game is new: no table writes it yet); it writes the rows as the
    /// journal does. Errors are the journal's: `Unavailable` for a database that
    /// cannot be reached or take the work now (nothing stored), `Rejected`
    /// for a write it refuses.
    pub async fn import_game_once(&self, game: NewGame, key: &RequestKey) -> Result<Once, StoreError> {
        let now = super::now_us();
        sqlx::query("DELETE FROM idempotency_keys WHERE created_us < $1")
            .bind(oldest_kept(now))
            .execute(self.pool())
            .await?;
        // In the first part, where the key is (see `new_id_in_first_part`).
        let id = self.new_id_in_first_part();
        let batch = super::saved::new_game_batch(id.clone(), game);
        let claim = Claim { key, game_id: &id, state: batch.game.state.as_str(), hands: batch.game.hands, now };
        if !self.writer().commit_claimed(&claim, &batch).await.map_err(written)? {
            // Taken by a request that has committed (its row is newer than a
            // day: older ones were just forgotten).
            let row: KeyRow = sqlx::query_as(SELECT).bind(&key.key).bind(i64::MIN).fetch_one(self.pool()).await?;
            return Ok(Once::Taken(row.read()?));
        }
        Ok(Once::Stored(id))
    }
}

/// A key claimed for a new game, written first in the game's transaction
/// (see [`super::writer::Writer::commit_claimed`]).
pub(super) struct Claim<'a> {
    /// The request's key.
    pub key: &'a RequestKey,
    /// The new game.
    pub game_id: &'a str,
    /// Its state and hands, remembered for the answer.
    pub state: &'a str,
    /// See `state`.
    pub hands: i64,
    /// When.
    pub now: i64,
}

/// A failed write, as the journal reports one: transient, or refused.
fn written(e: sqlx::Error) -> StoreError {
    if is_transient(&e) {
        StoreError::Unavailable(std::sync::Arc::new(e))
    } else {
        StoreError::Rejected(std::sync::Arc::new(e))
    }
}
