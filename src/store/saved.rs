//! A game whole: read back (what recovery needs to rebuild a table, and what
//! an export writes out), or written at once as a new game (an import).

use sqlx::{AnyConnection, Row};

use super::records::{Batch, EventRow, GameRow, HandRow, Input, InputRow, SeatChange, SeatRow, audience_from_columns};
use super::{Store, StoreError};

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
        let NewGame { game, settings, seats, inputs, events, hands } = game;
        let mut batch = Batch::new(id.clone(), game);
        batch.settings = Some(settings);
        batch.seats = seats.into_iter().map(SeatChange::Set).collect();
        batch.inputs = inputs;
        batch.events = events;
        batch.hands = hands;
        self.write(batch).await?;
        Ok(id)
    }

    /// The ids of the games not over (open or being played), oldest first.
    pub async fn unfinished_games(&self) -> Result<Vec<String>, StoreError> {
        let rows = sqlx::query("SELECT id FROM games WHERE state <> 'over' ORDER BY created_us, id")
            .fetch_all(self.pool())
            .await?;
        Ok(rows.iter().map(|r| r.get::<String, _>(0)).collect())
    }

    /// Reads a game back, with its events from hand `events_from_hand` on
    /// (0: all of them). `None` if there is no such game.
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
        let game = load_game_on(&mut tx, id, events_from_hand).await?;
        tx.commit().await?;
        Ok(game)
    }

    /// A game's events from hand `from_hand` on, in order.
    pub async fn events(&self, id: &str, from_hand: i64) -> Result<Vec<EventRow>, StoreError> {
        let mut conn = self.pool().acquire().await?;
        events_on(&mut conn, id, from_hand).await
    }
}

async fn load_game_on(
    conn: &mut AnyConnection,
    id: &str,
    events_from_hand: i64,
) -> Result<Option<SavedGame>, StoreError> {
    let corrupt = |why: String| StoreError::Corrupt { game: id.to_string(), why };
    let Some(row) = sqlx::query(
        "SELECT name, preset, source, state, settings, created_us, finished_us, hands, scores, manager, \
         last_seq, rng_pos FROM games WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    else {
        return Ok(None);
    };
    let scores: String = row.get(8);
    let rng_pos: String = row.get(11);
    let game = GameRow {
        name: row.get(0),
        preset: row.get(1),
        source: row.get(2),
        state: row.get(3),
        created_us: row.get(5),
        finished_us: row.get(6),
        hands: row.get(7),
        scores: serde_json::from_str(&scores).map_err(|e| corrupt(format!("scores: {e}")))?,
        manager: row.get(9),
        last_seq: row.get(10),
        rng_pos: rng_pos.parse().map_err(|e| corrupt(format!("rng_pos: {e}")))?,
    };
    let settings: String = row.get(4);
    let seats = sqlx::query(
        "SELECT seat, name, robot, token_sha256, pause_request, penalty FROM seats WHERE game_id = $1 ORDER BY seat",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?
    .iter()
    .map(|r| SeatRow {
        seat: r.get(0),
        name: r.get(1),
        robot: r.get(2),
        token_sha256: r.get(3),
        pause_request: r.get(4),
        penalty: r.get(5),
    })
    .collect();
    let mut inputs = Vec::new();
    for r in sqlx::query("SELECT n, seq, body FROM inputs WHERE game_id = $1 ORDER BY n")
        .bind(id)
        .fetch_all(&mut *conn)
        .await?
    {
        let body: String = r.get(2);
        let input = serde_json::from_str::<Input>(&body).map_err(|e| corrupt(format!("input: {e}")))?;
        inputs.push(InputRow { n: r.get(0), seq: r.get(1), input });
    }
    let events = events_on(conn, id, events_from_hand).await?;
    Ok(Some(SavedGame { id: id.to_string(), game, settings, seats, inputs, events }))
}

async fn events_on(conn: &mut AnyConnection, id: &str, from_hand: i64) -> Result<Vec<EventRow>, StoreError> {
    let rows = sqlx::query(
        "SELECT seq, at_us, hand, audience, audience_player, body FROM events \
         WHERE game_id = $1 AND hand >= $2 ORDER BY seq",
    )
    .bind(id)
    .bind(from_hand)
    .fetch_all(&mut *conn)
    .await?;
    rows.iter()
        .map(|r| {
            let kind: String = r.get(3);
            let audience = audience_from_columns(&kind, r.get(4))
                .ok_or_else(|| StoreError::Corrupt { game: id.to_string(), why: format!("audience '{kind}'") })?;
            Ok(EventRow { seq: r.get(0), at_us: r.get(1), hand: r.get(2), audience, body: r.get(5) })
        })
        .collect()
}
