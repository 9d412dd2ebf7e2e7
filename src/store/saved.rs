//! A game whole: read back (what recovery needs to rebuild a table, and what
//! an export writes out), or written at once as a new game (an import).

use sqlx::{AnyConnection, FromRow};

use super::records::{
    Batch, EventRow, GameRow, GameSource, HandRow, Input, InputRow, SeatChange, SeatRow, audience_from_columns,
};
use super::{Store, StoreError};
use crate::protocol::ws::TableState;

/// A stored game, read back.
#[derive(Clone, Debug)]
pub struct SavedGame {
    /// The game's id.
    pub id: String,
    /// Its row.
    pub game: GameRow,
    /// The table's settings when it opened, as JSON.
    pub settings: String,
    /// Its seats, in seat order.
    pub seats: Vec<SeatRow>,
    /// Every input, in order, with its place in the event stream.
    pub inputs: Vec<InputRow>,
    /// The events asked for, in order.
    pub events: Vec<EventRow>,
}

/// A whole game's rows, to be written at once as a new game (a game file
/// that has been checked, or an imported log).
#[derive(Clone, Debug)]
pub struct NewGame {
    /// Its row.
    pub game: GameRow,
    /// The table's settings when it opened, as JSON.
    pub settings: String,
    /// Its seats (a person's with the hash of its new token, if any).
    pub seats: Vec<SeatRow>,
    /// Every input, in order.
    pub inputs: Vec<InputRow>,
    /// Every event, in order.
    pub events: Vec<EventRow>,
    /// The finished hands.
    pub hands: Vec<HandRow>,
}

impl Store {
    /// Writes a whole game as a new game, in one transaction; returns its
    /// new id.
    pub async fn import_game(&self, game: NewGame) -> Result<String, StoreError> {
        let id = uuid::Uuid::new_v4().simple().to_string();
        self.write(new_game_batch(id.clone(), game)).await?;
        Ok(id)
    }

    /// The ids of the games not over (open or being played), oldest first.
    pub async fn unfinished_games(&self) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar("SELECT id FROM games WHERE state <> $1 ORDER BY created_us, id")
            .bind(TableState::Over.as_str())
            .fetch_all(self.pool())
            .await?)
    }

    /// Reads a game back, with its events from hand `events_from_hand` on
    /// (0: all of them). `None` if there is no such game. A stored value
    /// that does not read is `StoreError::Corrupt` naming the game (so that
    /// recovery passes over that game alone).
    ///
    /// The reads share one snapshot of the database: a running table may
    /// write the game meanwhile (an export from the command line, chat after
    /// a game is over), and the row, the inputs and the events must agree.
    pub async fn load_game(&self, id: &str, events_from_hand: i64) -> Result<Option<SavedGame>, StoreError> {
        let mut tx = self.pool().begin().await?;
        if self.backend() == super::Backend::Postgres {
            // Postgres gives each statement its own snapshot unless asked;
            // an SQLite read transaction keeps one snapshot already (WAL).
            sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ").execute(&mut *tx).await?;
        }
        let game = load_game_on(&mut tx, id, events_from_hand).await.map_err(|e| blame(id, e))?;
        tx.commit().await?;
        Ok(game)
    }

    /// A game's events from hand `from_hand` on, in order.
    pub async fn events(&self, id: &str, from_hand: i64) -> Result<Vec<EventRow>, StoreError> {
        let mut conn = self.pool().acquire().await?;
        events_on(&mut conn, id, from_hand).await.map_err(|e| blame(id, e))
    }
}

/// A whole new game as one batch, under the id `id`.
pub(super) fn new_game_batch(id: String, game: NewGame) -> Batch {
    let NewGame { game, settings, seats, inputs, events, hands } = game;
    let mut batch = Batch::new(id, game);
    batch.settings = Some(settings);
    batch.seats = seats.into_iter().map(SeatChange::Set).collect();
    batch.inputs = inputs;
    batch.events = events;
    batch.hands = hands;
    batch
}

/// A value of game `id` that does not read is that game's corruption.
fn blame(id: &str, e: StoreError) -> StoreError {
    match e {
        StoreError::Decode(e) => StoreError::Corrupt { game: id.to_string(), why: e.to_string() },
        e => e,
    }
}

/// The `games` columns of a game, as stored.
#[derive(FromRow)]
struct GameColumns {
    name: String,
    preset: String,
    source: String,
    state: String,
    settings: String,
    created_us: i64,
    finished_us: Option<i64>,
    hands: i64,
    scores: String,
    manager: Option<i64>,
    last_seq: i64,
    rng_pos: String,
}

/// An `events` row, as stored.
#[derive(FromRow)]
struct EventColumns {
    seq: i64,
    at_us: i64,
    hand: i64,
    audience: String,
    audience_player: Option<i64>,
    body: String,
}

/// An `inputs` row, as stored.
#[derive(FromRow)]
struct InputColumns {
    n: i64,
    seq: i64,
    body: String,
}

async fn load_game_on(
    conn: &mut AnyConnection,
    id: &str,
    events_from_hand: i64,
) -> Result<Option<SavedGame>, StoreError> {
    let corrupt = |why: String| StoreError::Corrupt { game: id.to_string(), why };
    let Some(g) = sqlx::query_as::<_, GameColumns>(
        "SELECT name, preset, source, state, settings, created_us, finished_us, hands, scores, manager, \
         last_seq, rng_pos FROM games WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    else {
        return Ok(None);
    };
    // The row is not rewritten for each move (see `Batch::game_changed`):
    // the stream's position is the last stored event's.
    let last_event: Option<i64> =
        sqlx::query_scalar("SELECT MAX(seq) FROM events WHERE game_id = $1").bind(id).fetch_one(&mut *conn).await?;
    let game = GameRow {
        name: g.name,
        preset: g.preset,
        source: GameSource::from_name(&g.source).ok_or_else(|| corrupt(format!("source '{}'", g.source)))?,
        state: TableState::from_name(&g.state).ok_or_else(|| corrupt(format!("state '{}'", g.state)))?,
        created_us: g.created_us,
        finished_us: g.finished_us,
        hands: g.hands,
        scores: serde_json::from_str(&g.scores).map_err(|e| corrupt(format!("scores: {e}")))?,
        manager: g.manager,
        last_seq: g.last_seq.max(last_event.unwrap_or(0)),
        rng_pos: g.rng_pos.parse().map_err(|e| corrupt(format!("rng_pos: {e}")))?,
    };
    let seats = sqlx::query_as::<_, SeatRow>(
        "SELECT seat, name, robot, token_sha256, pause_request, penalty, user_id FROM seats WHERE game_id = $1 ORDER BY seat",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    let mut inputs = Vec::new();
    for r in sqlx::query_as::<_, InputColumns>("SELECT n, seq, body FROM inputs WHERE game_id = $1 ORDER BY n")
        .bind(id)
        .fetch_all(&mut *conn)
        .await?
    {
        let input = serde_json::from_str::<Input>(&r.body).map_err(|e| corrupt(format!("input {}: {e}", r.n)))?;
        inputs.push(InputRow { n: r.n, seq: r.seq, input });
    }
    let events = events_on(conn, id, events_from_hand).await?;
    Ok(Some(SavedGame { id: id.to_string(), game, settings: g.settings, seats, inputs, events }))
}

async fn events_on(conn: &mut AnyConnection, id: &str, from_hand: i64) -> Result<Vec<EventRow>, StoreError> {
    let rows = sqlx::query_as::<_, EventColumns>(
        "SELECT seq, at_us, hand, audience, audience_player, body FROM events \
         WHERE game_id = $1 AND hand >= $2 ORDER BY seq",
    )
    .bind(id)
    .bind(from_hand)
    .fetch_all(&mut *conn)
    .await?;
    rows.into_iter()
        .map(|r| {
            let audience = audience_from_columns(&r.audience, r.audience_player).ok_or_else(|| {
                StoreError::Corrupt { game: id.to_string(), why: format!("audience '{}'", r.audience) }
            })?;
            Ok(EventRow { seq: r.seq, at_us: r.at_us, hand: r.hand, audience, body: r.body })
        })
        .collect()
}
