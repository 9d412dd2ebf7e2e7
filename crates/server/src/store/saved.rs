//! A game whole: read back (what recovery needs to rebuild a table, and what
//! an export writes out), or written at once as a new game (an import).

use std::collections::HashMap;

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

use super::records::{
    Batch, EventRow, GameRow, GameSource, HandRow, Input, InputRow, SeatChange, SeatRow, audience_from_columns,
};
use super::{Store, StoreError};
use crate::store::TableState;
use crate::store::row::from_row;

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
        self.file_tail(&[id.to_string()]).await?;
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
        self.file_tail(&[id.to_string()]).await?;
        let mut conn = self.pool().acquire().await?;
        events_on(&mut conn, id, from_hand).await.map_err(|e| blame(id, e))
    }

    /// The ids of the games played to their end at a table of this server
    /// since `since_us` (microseconds since the epoch), in the order they
    /// ended: a restart opens their tables again for a while. Loaded and
    /// imported games, which never had a table, are not among them, nor
    /// games whose table an admin closed (`table.close` in the audit log:
    /// such a table is gone at once), nor games of which no hand was played
    /// (a table closed before its game started: it expired idle, or an
    /// admin closed it). (The events are not read here: a restart asks this
    /// before it answers anything, and must not wait on the log.)
    pub async fn recently_finished_games(&self, since_us: i64) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT g.id FROM games g WHERE g.state = $1 AND g.source = $2 AND g.finished_us >= $3 AND g.hands > 0 \
             AND NOT EXISTS (SELECT 1 FROM audit_log a WHERE a.target = 'table/' || g.id AND a.action = 'table.close') \
             ORDER BY g.finished_us, g.id",
        )
        .bind(TableState::Over.as_str())
        .bind(GameSource::Live.as_str())
        .bind(since_us)
        .fetch_all(self.pool())
        .await?)
    }

    /// How many games were opened at tables of this server (every table
    /// stores its game when it opens), and the settings (JSON) of the
    /// `recent` opened last, newest first: what new tables are numbered
    /// after.
    pub async fn live_games(&self, recent: i64) -> Result<(i64, Vec<String>), StoreError> {
        let live = GameSource::Live.as_str();
        let count = sqlx::query_scalar("SELECT COUNT(*) FROM games WHERE source = $1")
            .bind(live)
            .fetch_one(self.pool())
            .await?;
        let settings = sqlx::query_scalar(
            "SELECT settings FROM games WHERE source = $1 AND settings IS NOT NULL \
             ORDER BY created_us DESC, id DESC LIMIT $2",
        )
        .bind(live)
        .bind(recent)
        .fetch_all(self.pool())
        .await?;
        Ok((count, settings))
    }

    /// Reads many games back at once, as tables opened again need them:
    /// each game's row, settings, seats and inputs (from its blocks in
    /// `input_blocks` as far as they go: one row per finished hand, where
    /// `inputs` holds one per input), and the events of its last two hands
    /// (the previous and the current, which clients resume from; from
    /// `event_blocks` as far as they go, likewise). Four queries for them
    /// all, in one snapshot, where [`Store::load_game`] and
    /// [`Store::events`] make five for each game.
    ///
    /// The inputs and events come back as one row per game, their rows
    /// joined by the database (`string_agg`, in SQLite since 3.44 as in
    /// Postgres): read row by row, the driver's cost for each row (a thread
    /// handing it over, each value copied twice) was most of a restart's
    /// time (docs/performance.md, "Restart reads"); a row's columns are
    /// written before its body, with spaces between, and rows are joined by
    /// U+001E, which JSON never holds unescaped. They are taken apart on a
    /// blocking thread, with the inputs' JSON.
    ///
    /// One answer per id, in order: `None` if there is no such game,
    /// `StoreError::Corrupt` if a stored value of that game does not read. A
    /// failure of the database fails them all.
    pub async fn load_games_resuming(
        &self,
        ids: &[String],
    ) -> Result<Vec<Result<Option<SavedGame>, StoreError>>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.file_tail(ids).await?;
        let list = (1..=ids.len()).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
        let separator = format!("${}", ids.len() + 1);
        let games = format!("SELECT id, {GAME_COLUMNS} FROM games WHERE id IN ({list})");
        let seats =
            format!("SELECT game_id, {SEAT_COLUMNS} FROM seats WHERE game_id IN ({list}) ORDER BY game_id, seat");
        // Each game's rows joined in a subquery of its own, which the
        // database answers from the game's key: Postgres, with statistics
        // not yet brought up to date after a crash, planned the join of
        // `events` over a group of ids as a scan of the whole table, and
        // restarts were slow (docs/performance.md, "Restart reads").
        // A game's inputs: its blocks (one per finished hand, each already
        // joined as below), then its inputs since the last block.
        let inputs = format!(
            "SELECT g.id AS game_id, \
             (SELECT string_agg(b.body, {separator} ORDER BY b.first_n) FROM input_blocks b \
              WHERE b.game_id = g.id) AS packed, \
             (SELECT string_agg({INPUT_LINE}, {separator} ORDER BY i.n) FROM inputs i WHERE i.game_id = g.id \
              AND i.n > (SELECT COALESCE(MAX(b.last_n), 0) FROM input_blocks b WHERE b.game_id = g.id)) AS joined \
             FROM games g WHERE g.id IN ({list})"
        );
        // Its events of the last two hands: the blocks that hold some (the
        // rows of earlier hands in them are dropped when they are taken
        // apart), then the events after its last block.
        let events = format!(
            "SELECT g.id AS game_id, \
             (SELECT string_agg(b.body, {separator} ORDER BY b.first_seq) FROM event_blocks b \
              WHERE b.game_id = g.id AND b.last_hand >= g.hands - 1) AS packed, \
             (SELECT string_agg({EVENT_LINE}, {separator} ORDER BY e.seq) FROM events e \
              WHERE e.game_id = g.id AND e.hand >= g.hands - 1 \
              AND e.seq > (SELECT COALESCE(MAX(b.last_seq), 0) FROM event_blocks b WHERE b.game_id = g.id)) AS joined \
             FROM games g WHERE g.id IN ({list})"
        );
        let mut tx = self.pool().begin().await?;
        if self.backend() == super::Backend::Postgres {
            // One snapshot for the four reads, as in `load_game`.
            sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ").execute(&mut *tx).await?;
            // Planned over many rows, the reads of inputs and events were
            // compiled to machine code first, which took most of the read's
            // time (docs/performance.md, "Restart reads").
            sqlx::query("SET LOCAL jit = off").execute(&mut *tx).await?;
        }
        let mut rows = Vec::with_capacity(4);
        for (sql, joined) in [(&games, false), (&seats, false), (&inputs, true), (&events, true)] {
            let mut query = ids.iter().fold(sqlx::query(sql), |q, id| q.bind(id));
            if joined {
                query = query.bind(ROW_SEPARATOR.to_string());
            }
            rows.push(query.fetch_all(&mut *tx).await?);
        }
        tx.commit().await?;
        let ids = ids.to_vec();
        tokio::task::spawn_blocking(move || {
            let mut rows = rows.into_iter();
            let mut next = || rows.next().unwrap_or_default();
            let (games, seats, inputs, events) = (next(), next(), next(), next());
            Resuming::decode(&ids, games, seats, inputs, events)
        })
        .await
        .map_err(|_| StoreError::Database(sqlx::Error::WorkerCrashed))
    }
}

/// What joins the rows [`Store::load_games_resuming`] reads as one, and the
/// rows of a block in `input_blocks` and `event_blocks`.
pub(super) const ROW_SEPARATOR: char = '\u{1e}';

/// An `inputs` row as one line of text, "n seq body", as blocks hold it and
/// [`Store::load_games_resuming`] reads it (a column list in SQL: in a
/// subquery over `inputs` alone, its names are that table's).
pub(super) const INPUT_LINE: &str = "CAST(n AS TEXT) || ' ' || CAST(seq AS TEXT) || ' ' || body";

/// An `events` row as one line of text, "seq at_us hand audience
/// audience_player body" (-1 for no player), as [`INPUT_LINE`] for inputs.
pub(super) const EVENT_LINE: &str = "CAST(seq AS TEXT) || ' ' || CAST(at_us AS TEXT) || ' ' || CAST(hand AS TEXT) \
     || ' ' || audience || ' ' || CAST(COALESCE(audience_player, -1) AS TEXT) || ' ' || body";

/// Many games' rows as [`Store::load_games_resuming`] reads them, put
/// together game by game.
#[derive(Default)]
struct Resuming {
    game: Option<(GameRow, String)>,
    seats: Vec<SeatRow>,
    inputs: Vec<InputRow>,
    events: Vec<EventRow>,
    /// The first value of the game that did not read.
    broken: Option<StoreError>,
}

impl Resuming {
    /// Each game of `ids` from its rows (each row's first column is the
    /// game's id).
    fn decode(
        ids: &[String],
        games: Vec<AnyRow>,
        seats: Vec<AnyRow>,
        inputs: Vec<AnyRow>,
        events: Vec<AnyRow>,
    ) -> Vec<Result<Option<SavedGame>, StoreError>> {
        let mut by_id: HashMap<&str, Resuming> = ids.iter().map(|id| (id.as_str(), Resuming::default())).collect();
        let mut each =
            |rows: Vec<AnyRow>, column: &str, add: &dyn Fn(&mut Resuming, &str, &AnyRow) -> Result<(), StoreError>| {
                for row in &rows {
                    let Ok(id) = row.try_get::<String, _>(column) else { continue };
                    let Some(game) = by_id.get_mut(id.as_str()) else { continue };
                    if game.broken.is_none()
                        && let Err(e) = add(game, &id, row)
                    {
                        game.broken = Some(blame(&id, e));
                    }
                }
            };
        each(games, "id", &|g, id, row| {
            g.game = Some(GameColumns::from_row(row)?.into_row(id)?);
            Ok(())
        });
        each(seats, "game_id", &|g, _, row| {
            g.seats.push(SeatRow::from_row(row)?);
            Ok(())
        });
        each(inputs, "game_id", &|g, id, row| {
            for column in ["packed", "joined"] {
                let Some(joined) = row.try_get::<Option<String>, _>(column)? else { continue };
                for line in joined.split(ROW_SEPARATOR) {
                    let mut columns = line.splitn(3, ' ');
                    let (n, seq) = (number(id, &mut columns)?, number(id, &mut columns)?);
                    // The blocks and the rows after them must follow on.
                    if g.inputs.last().is_some_and(|last| last.n >= n) {
                        return Err(StoreError::Corrupt {
                            game: id.to_string(),
                            why: format!("input {n} out of order"),
                        });
                    }
                    g.inputs.push(InputColumns { n, seq, body: rest(columns) }.into_row(id)?);
                }
            }
            Ok(())
        });
        each(events, "game_id", &|g, id, row| {
            // The game's row is read: the events from the hand before its last on.
            let from_hand = g.game.as_ref().map_or(0, |(game, _)| game.hands - 1);
            for column in ["packed", "joined"] {
                let Some(joined) = row.try_get::<Option<String>, _>(column)? else { continue };
                for line in joined.split(ROW_SEPARATOR) {
                    let mut columns = line.splitn(6, ' ');
                    let (seq, at_us, hand) =
                        (number(id, &mut columns)?, number(id, &mut columns)?, number(id, &mut columns)?);
                    if hand < from_hand {
                        continue;
                    }
                    if g.events.last().is_some_and(|last| last.seq >= seq) {
                        return Err(StoreError::Corrupt {
                            game: id.to_string(),
                            why: format!("event {seq} out of order"),
                        });
                    }
                    let audience = columns.next().unwrap_or_default().to_string();
                    let audience_player = Some(number(id, &mut columns)?).filter(|&p| p >= 0);
                    let r = EventColumns { seq, at_us, hand, audience, audience_player, body: rest(columns) };
                    g.events.push(r.into_row(id)?);
                }
            }
            Ok(())
        });
        ids.iter()
            .map(|id| {
                let r = by_id.remove(id.as_str()).unwrap_or_default();
                if let Some(e) = r.broken {
                    return Err(e);
                }
                Ok(r.game.map(|(game, settings)| SavedGame {
                    id: id.clone(),
                    game,
                    settings,
                    seats: r.seats,
                    inputs: r.inputs,
                    events: r.events,
                }))
            })
            .collect()
    }
}

/// The next column of a joined row, a number.
fn number<'a>(id: &str, columns: &mut impl Iterator<Item = &'a str>) -> Result<i64, StoreError> {
    let column = columns.next().unwrap_or_default();
    column.parse().map_err(|_| StoreError::Corrupt { game: id.to_string(), why: format!("'{column}' is not a number") })
}

/// The last column of a joined row (the body, which may hold spaces).
fn rest<'a>(mut columns: impl Iterator<Item = &'a str>) -> String {
    columns.next().unwrap_or_default().to_string()
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

from_row! {
    /// The `games` columns of a game, as stored.
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
        /// The last stored event's `seq` (0: none).
        last_event: i64,
    }
}

from_row! {
    /// An `events` row, as stored.
    struct EventColumns {
        seq: i64,
        at_us: i64,
        hand: i64,
        audience: String,
        audience_player: Option<i64>,
        body: String,
    }
}

from_row! {
    /// An `inputs` row, as stored.
    struct InputColumns {
        n: i64,
        seq: i64,
        body: String,
    }
}

/// The columns of `games` a whole game is read with.
const GAME_COLUMNS: &str = "name, preset, source, state, settings, created_us, finished_us, hands, scores, manager, last_seq, rng_pos, \
     (SELECT COALESCE(MAX(seq), 0) FROM events WHERE events.game_id = games.id) AS last_event";

/// The columns of `seats` a whole game is read with.
const SEAT_COLUMNS: &str = "seat, name, robot, token_sha256, pause_request, penalty, user_id";

async fn load_game_on(
    conn: &mut AnyConnection,
    id: &str,
    events_from_hand: i64,
) -> Result<Option<SavedGame>, StoreError> {
    let Some(g) = sqlx::query_as::<_, GameColumns>(&format!("SELECT {GAME_COLUMNS} FROM games WHERE id = $1"))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
    else {
        return Ok(None);
    };
    let (game, settings) = g.into_row(id)?;
    let seats =
        sqlx::query_as::<_, SeatRow>(&format!("SELECT {SEAT_COLUMNS} FROM seats WHERE game_id = $1 ORDER BY seat"))
            .bind(id)
            .fetch_all(&mut *conn)
            .await?;
    let inputs = sqlx::query_as::<_, InputColumns>("SELECT n, seq, body FROM inputs WHERE game_id = $1 ORDER BY n")
        .bind(id)
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .map(|r| r.into_row(id))
        .collect::<Result<_, _>>()?;
    let events = events_on(conn, id, events_from_hand).await?;
    Ok(Some(SavedGame { id: id.to_string(), game, settings, seats, inputs, events }))
}

impl GameColumns {
    /// The game row of game `id`, and its settings.
    fn into_row(self, id: &str) -> Result<(GameRow, String), StoreError> {
        let corrupt = |why: String| StoreError::Corrupt { game: id.to_string(), why };
        let g = self;
        let row = GameRow {
            name: g.name,
            preset: g.preset,
            source: GameSource::from_name(&g.source).ok_or_else(|| corrupt(format!("source '{}'", g.source)))?,
            state: TableState::from_name(&g.state).ok_or_else(|| corrupt(format!("state '{}'", g.state)))?,
            created_us: g.created_us,
            finished_us: g.finished_us,
            hands: g.hands,
            scores: serde_json::from_str(&g.scores).map_err(|e| corrupt(format!("scores: {e}")))?,
            manager: g.manager,
            // The row is not rewritten for each move (see
            // `Batch::game_changed`): the stream's position is the last
            // stored event's.
            last_seq: g.last_seq.max(g.last_event),
            rng_pos: g.rng_pos.parse().map_err(|e| corrupt(format!("rng_pos: {e}")))?,
        };
        Ok((row, g.settings))
    }
}

impl InputColumns {
    /// The input of game `id` this row holds.
    fn into_row(self, id: &str) -> Result<InputRow, StoreError> {
        let input = serde_json::from_str::<Input>(&self.body)
            .map_err(|e| StoreError::Corrupt { game: id.to_string(), why: format!("input {}: {e}", self.n) })?;
        Ok(InputRow { n: self.n, seq: self.seq, input })
    }
}

impl EventColumns {
    /// The event of game `id` this row holds.
    fn into_row(self, id: &str) -> Result<EventRow, StoreError> {
        let audience = audience_from_columns(&self.audience, self.audience_player).ok_or_else(|| {
            StoreError::Corrupt { game: id.to_string(), why: format!("audience '{}'", self.audience) }
        })?;
        Ok(EventRow { seq: self.seq, at_us: self.at_us, hand: self.hand, audience, body: self.body })
    }
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
    rows.into_iter().map(|r| r.into_row(id)).collect()
}
