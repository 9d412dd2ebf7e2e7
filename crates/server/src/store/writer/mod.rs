//! The journal's connections and how a group of batches is written through
//! them: sqlx's native SQLite and Postgres drivers, not `Any` (which copies
//! every value into its own form and has no arrays). Each database's writer
//! is in its own module and does what [`Write`] asks; [`Writer`] is the one
//! the store opened.
//!
//! - **SQLite** ([`sqlite`]): one connection per file (see [`super::parts`]),
//!   the only one that writes that file's games.
//!   A group is one transaction of multi-row `INSERT`s of a few fixed sizes
//!   (each prepared once, then found in the connection's statement cache);
//!   a group of moves alone is one query, `BEGIN` to `COMMIT`.
//! - **Postgres** ([`postgres`]): one connection per writer. A group is one
//!   transaction of one `INSERT ... SELECT FROM UNNEST($1, $2, ...)` per
//!   table, whatever the number of rows: the rows travel as arrays, so a
//!   group costs a handful of round trips.
//!
//! What a group writes (see [`Batch`]): each game's row once (as its last
//! batch left it) when one of its batches changed it, the seats that changed,
//! the inputs, the events and the rows of the hands that ended. The rarer rows
//! (seats, hands) are written one statement each, from one source for both
//! databases ([`rare_writes!`]), and so are the blocks of inputs and events
//! a game's finished hand adds to `input_blocks` and `event_blocks` (for
//! restarts, see [`super::saved`]).

use std::sync::LazyLock;
use std::time::Duration;

use super::idempotency::Claim;
use super::now_us;
use super::records::{Batch, EventRow, GameRow, HandRow, InputRow, SeatChange};
use super::saved::{EVENT_LINE, INPUT_LINE};
use super::tail::{Filing, Tail};

mod postgres;
mod sqlite;

/// The longest a writer waits for its connection before it counts the
/// database as unreachable.
pub const CONNECT_WAIT: Duration = Duration::from_secs(3);

/// What a database's writer does. Each database has its own
/// ([`sqlite::SqliteWriter`], [`postgres::PostgresWriter`]); the journal
/// holds whichever the store opened, as a [`Writer`].
trait Write {
    /// Writes `rows` in one transaction, on a connection got within
    /// [`CONNECT_WAIT`]: `claim` first, if any (`false`, nothing written,
    /// when another transaction took its key), then the rows; nothing
    /// written either when a game's fence no longer holds (see [`Committed`]).
    async fn transaction(&self, claim: Option<&Claim<'_>>, rows: &Rows<'_>) -> Result<Committed, sqlx::Error>;

    /// Whether the database would take a write now.
    async fn ping(&self) -> Result<(), sqlx::Error>;

    /// Deletes the games `ids` and everything of theirs
    /// ([`FORGOTTEN_ROWS`]) in one transaction; how many games there were.
    async fn forget(&self, ids: &[String]) -> Result<u64, sqlx::Error>;

    /// Completes when the writer's connections are closed.
    async fn closed(&self);

    /// Closes the writer's connections.
    async fn close(&self);
}

/// What a transaction did.
#[derive(Debug, PartialEq, Eq)]
pub enum Committed {
    /// Everything is written.
    Written,
    /// Nothing: another transaction took the import's idempotency key.
    ClaimTaken,
    /// Nothing: these games' fences no longer hold (cluster mode: the node
    /// no longer owns them at the epoch their batches carry, or its lease
    /// has expired). The other games' batches may be written again without
    /// them.
    Fenced(Vec<String>),
}

/// The journal's connections to one database.
#[derive(Clone, Debug)]
pub enum Writer {
    /// SQLite's one writing connection, and its checkpointer.
    Sqlite(sqlite::SqliteWriter),
    /// Postgres: a connection per journal writer, and the packer of blocks.
    Postgres(postgres::PostgresWriter),
}

/// `$call` on the writer `$w` of whichever database `$writer` is.
macro_rules! each {
    ($writer:expr, $w:ident => $call:expr) => {
        match $writer {
            Writer::Sqlite($w) => $call,
            Writer::Postgres($w) => $call,
        }
    };
}

impl Writer {
    /// Opens the writer of one SQLite file (a part of a store split in
    /// `parts`, see [`super::parts`]) at `url`, already normalised by the
    /// store.
    pub async fn open_sqlite(url: &str, parts: usize) -> Result<Writer, sqlx::Error> {
        sqlite::SqliteWriter::open(url, parts).await.map(Writer::Sqlite)
    }

    /// Connects to Postgres at `url` with `connections` connections.
    pub fn open_postgres(url: &str, connections: u32) -> Result<Writer, sqlx::Error> {
        postgres::PostgresWriter::open(url, connections).map(Writer::Postgres)
    }

    /// Writes `batches` in one transaction, on a connection got within
    /// [`CONNECT_WAIT`] (giving up on the wait is safe: nothing was written):
    /// their inputs and events where `filing` says (SQLite's tail, or
    /// `inputs` and `events`), with the rows of `tail` the filing files.
    /// Returns the games whose fence no longer holds: when there are any,
    /// nothing was written.
    pub async fn commit(
        &self,
        batches: &[&Batch],
        filing: &Filing,
        tail: Option<&Tail>,
    ) -> Result<Vec<String>, sqlx::Error> {
        let rows = Rows::of(batches, filing, tail);
        match each!(self, w => w.transaction(None, &rows).await)? {
            Committed::Fenced(games) => Ok(games),
            Committed::Written | Committed::ClaimTaken => Ok(Vec::new()),
        }
    }

    /// Writes `batch` in one transaction that first claims an import's
    /// idempotency key; a key already taken (by a transaction that has
    /// committed: Postgres waits for one under way on the key's index,
    /// SQLite's single writer for its turn) writes nothing and is `false`.
    pub(super) async fn commit_claimed(&self, claim: &Claim<'_>, batch: &Batch) -> Result<bool, sqlx::Error> {
        let filing = Filing::at_once(1);
        let rows = Rows::of(&[batch], &filing, None);
        Ok(each!(self, w => w.transaction(Some(claim), &rows).await)? == Committed::Written)
    }

    /// Deletes the games `ids` (all of this writer's: on SQLite, of its
    /// part) and everything of theirs; how many there were.
    pub async fn forget(&self, ids: &[String]) -> Result<u64, sqlx::Error> {
        each!(self, w => w.forget(ids).await)
    }

    /// Whether moves go to the log's tail first (SQLite; see [`super::tail`]).
    pub fn has_tail(&self) -> bool {
        matches!(self, Writer::Sqlite(..))
    }

    /// Whether the database would take a write now: Postgres answers a
    /// query; SQLite gives its write lock (an SQLite file locked by another
    /// writer, or gone read-only, still answers queries).
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        each!(self, w => w.ping().await)
    }

    /// Completes when the writer's connections are closed.
    pub async fn closed(&self) {
        each!(self, w => w.closed().await)
    }

    /// Closes the writer's connections.
    pub async fn close(&self) {
        each!(self, w => w.close().await)
    }
}

/// The steps of one transaction on either database: a connection got within
/// [`CONNECT_WAIT`], `$before` on it (SQLite: finishing a checkpoint), the
/// fences checked with `$fenced` (nothing written when one fails), the
/// claim if any (nothing written when it is taken), then the group's rows
/// with `$write_rows` and the rarer rows with `$write_rare`.
macro_rules! claim_then_rows {
    ($pool:expr, $claim:expr, $rows:expr, $fenced:path, $write_rows:path, $write_rare:path $(, $before:expr)?) => {{
        let (claim, rows): (Option<&Claim<'_>>, &Rows<'_>) = ($claim, $rows);
        let mut conn = super::acquire($pool.acquire()).await?;
        $($before(&mut *conn).await;)?
        let mut tx = conn.begin().await?;
        if !rows.fences.is_empty() {
            let fenced = $fenced(&mut tx, rows).await?;
            if !fenced.is_empty() {
                tx.rollback().await?;
                return Ok(super::Committed::Fenced(fenced));
            }
        }
        if let Some(claim) = claim {
            let claimed = sqlx::query(
                "INSERT INTO idempotency_keys (idempotency_key, operation, body_sha256, game_id, state, \
                 hands, created_us) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT (idempotency_key) DO NOTHING",
            )
            .bind(&claim.key.key)
            .bind(claim.key.operation)
            .bind(&claim.key.body_sha256)
            .bind(claim.game_id)
            .bind(claim.state)
            .bind(claim.hands)
            .bind(claim.now)
            .execute(&mut *tx)
            .await?
            .rows_affected()
                == 1;
            if !claimed {
                tx.rollback().await?;
                return Ok(super::Committed::ClaimTaken);
            }
        }
        $write_rows(&mut tx, rows).await?;
        $write_rare(&mut tx, rows).await?;
        tx.commit().await?;
        Ok(super::Committed::Written)
    }};
}
use claim_then_rows;

async fn acquire<C>(wait: impl Future<Output = Result<C, sqlx::Error>>) -> Result<C, sqlx::Error> {
    tokio::time::timeout(CONNECT_WAIT, wait).await.map_err(|_| sqlx::Error::PoolTimedOut)?
}

fn json<T: serde::Serialize>(value: &T) -> String {
    // Our own types always serialise.
    serde_json::to_string(value).unwrap_or_default()
}

/// A group's rows, gathered from its batches.
struct Rows<'a> {
    /// When the group is written.
    now: i64,
    /// Each game's row once, as its last batch left it, with the settings
    /// of the batch that first wrote it if that one is here; only games
    /// whose row one of the batches changed.
    games: Vec<(&'a str, &'a GameRow, Option<&'a String>)>,
    seats: Vec<(&'a str, &'a SeatChange)>,
    /// The inputs and events filed into `inputs` and `events`: the batches'
    /// own, then those that waited in SQLite's tail. A row of the tail may
    /// be there already (another process that opened the store filed the
    /// tail): those are inserted without a conflict being an error. (They
    /// followed on from the game's rows when they were put in the tail, see
    /// [`super::tail`], so the database checked nothing else of them.)
    inputs: Vec<(&'a str, &'a InputRow)>,
    events: Vec<(&'a str, &'a EventRow)>,
    waited_inputs: Vec<(&'a str, &'a InputRow)>,
    waited_events: Vec<(&'a str, &'a EventRow)>,
    /// The inputs and events put in SQLite's tail, with their numbers there.
    tail_inputs: Vec<(i64, &'a str, &'a InputRow)>,
    tail_events: Vec<(i64, &'a str, &'a EventRow)>,
    /// The tail's rows numbered below this are deleted.
    truncate_below: Option<i64>,
    hands: Vec<(&'a str, &'a HandRow)>,
    /// The fences of the games whose batches carry one (cluster mode):
    /// each game once, with its epoch.
    fences: Vec<(&'a str, i64)>,
}

impl<'a> Rows<'a> {
    fn of(batches: &[&'a Batch], filing: &'a Filing, tail: Option<&'a Tail>) -> Rows<'a> {
        // The games whose row a batch changed, with the first settings given.
        let mut changed: Vec<(&str, Option<&String>)> = Vec::new();
        for b in batches.iter().filter(|b| b.game_changed || b.settings.is_some()) {
            match changed.iter_mut().find(|(id, _)| *id == b.game_id) {
                Some(entry) => entry.1 = entry.1.or(b.settings.as_ref()),
                None => changed.push((&b.game_id, b.settings.as_ref())),
            }
        }
        // Each written as its game's last batch left it (a later batch,
        // even one that changed nothing else, carries the row as it stands).
        let games = changed
            .into_iter()
            .filter_map(|(id, settings)| {
                let last = batches.iter().rev().find(|b| b.game_id == id)?;
                Some((id, &last.game, settings))
            })
            .collect();
        let mut rows = Rows {
            now: now_us(),
            games,
            seats: batches.iter().flat_map(|b| b.seats.iter().map(|r| (b.game_id.as_str(), r))).collect(),
            inputs: Vec::new(),
            events: Vec::new(),
            waited_inputs: Vec::new(),
            waited_events: Vec::new(),
            tail_inputs: Vec::new(),
            tail_events: Vec::new(),
            truncate_below: filing.truncate_below(),
            hands: batches.iter().flat_map(|b| b.hands.iter().map(|r| (b.game_id.as_str(), r))).collect(),
            fences: Vec::new(),
        };
        // (A group holds up to 512 batches: each game found once by a set.)
        let mut fenced = std::collections::HashSet::new();
        for b in batches {
            if let Some(epoch) = b.fence
                && fenced.insert(b.game_id.as_str())
            {
                rows.fences.push((&b.game_id, epoch));
            }
        }
        // The rows waiting in the tail of the games filed now, then the
        // batches' own, each where the filing puts it.
        if let Some(tail) = tail {
            for game_id in filing.filed() {
                let (inputs, events) = tail.waiting(game_id);
                rows.waited_inputs.extend(inputs.iter().map(|r| (game_id, r)));
                rows.waited_events.extend(events.iter().map(|r| (game_id, r)));
            }
        }
        for (i, b) in batches.iter().enumerate() {
            let id = b.game_id.as_str();
            match filing.tail_id(i) {
                None => {
                    rows.inputs.extend(b.inputs.iter().map(|r| (id, r)));
                    rows.events.extend(b.events.iter().map(|r| (id, r)));
                }
                Some(first) => {
                    let inputs = b.inputs.len() as i64;
                    rows.tail_inputs.extend((first..).zip(&b.inputs).map(|(n, r)| (n, id, r)));
                    rows.tail_events.extend((first + inputs..).zip(&b.events).map(|(n, r)| (n, id, r)));
                }
            }
        }
        rows
    }
}

const GAME_COLUMNS: &str = "games (id, name, preset, source, state, settings, created_us, updated_us, finished_us, \
                            hands, scores, manager, last_seq, rng_pos)";
const GAME_CONFLICT: &str = " ON CONFLICT (id) DO UPDATE SET state = excluded.state, \
     settings = COALESCE(excluded.settings, games.settings), updated_us = excluded.updated_us, \
     finished_us = excluded.finished_us, hands = excluded.hands, scores = excluded.scores, \
     manager = excluded.manager, last_seq = excluded.last_seq, rng_pos = excluded.rng_pos";
/// Where a game's rows are, as `DELETE` statements of one game (`$1`),
/// the game's own row last; the log's tail (SQLite) and the owners of the
/// cluster's tables (Postgres) are each one database's.
const FORGOTTEN_ROWS: [&str; 9] = [
    "DELETE FROM payments WHERE game_id = $1",
    "DELETE FROM hand_players WHERE game_id = $1",
    "DELETE FROM hands WHERE game_id = $1",
    "DELETE FROM event_blocks WHERE game_id = $1",
    "DELETE FROM input_blocks WHERE game_id = $1",
    "DELETE FROM events WHERE game_id = $1",
    "DELETE FROM inputs WHERE game_id = $1",
    "DELETE FROM seats WHERE game_id = $1",
    "DELETE FROM games WHERE id = $1",
];

/// Deletes the games `$ids` in the transaction `$tx`: for each, the
/// statements `$also` (the database's own rows of a game, `$1` its id), then
/// [`FORGOTTEN_ROWS`]; evaluates to how many games there were. (A macro: the
/// two databases' transactions are of different types.)
macro_rules! forget_games {
    ($tx:expr, $ids:expr, $also:expr) => {{
        let mut games = 0;
        for id in $ids {
            let mut deleted = 0;
            for delete in $also.iter().chain(FORGOTTEN_ROWS.iter()) {
                deleted = sqlx::query(delete).bind(id).execute(&mut *$tx).await?.rows_affected();
            }
            // (The last statement deletes the game's own row.)
            games += deleted;
        }
        games
    }};
}
use forget_games;

const INPUT_COLUMNS: &str = "inputs (game_id, n, seq, body)";
const EVENT_COLUMNS: &str = "events (game_id, seq, at_us, hand, audience, audience_player, body)";
/// Rows filed from the tail that are there already stay as they are.
const NOT_AGAIN: &str = " ON CONFLICT DO NOTHING";
const INPUT_TAIL_COLUMNS: &str = "inputs_tail (id, game_id, n, seq, body)";
const EVENT_TAIL_COLUMNS: &str = "events_tail (id, game_id, seq, at_us, hand, audience, audience_player, body)";

// ----- the rarer rows, one source for both databases -----------------------------------

/// Defines `$name(tx, rows)`, which writes a group's seat changes and
/// finished hands on a `$db` connection, one statement per row: they are few
/// (a seat taken, a hand ended), so one text serves both databases.
macro_rules! rare_writes {
    ($name:ident, $conn:ty) => {
        async fn $name(tx: &mut $conn, rows: &Rows<'_>) -> Result<(), sqlx::Error> {
            for (game_id, change) in &rows.seats {
                match change {
                    SeatChange::Set(s) => {
                        sqlx::query(
                            "INSERT INTO seats (game_id, seat, name, robot, token_sha256, pause_request, penalty, \
                             user_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (game_id, seat) DO UPDATE \
                             SET name = excluded.name, robot = excluded.robot, token_sha256 = excluded.token_sha256, \
                             pause_request = excluded.pause_request, penalty = excluded.penalty, \
                             user_id = excluded.user_id",
                        )
                        .bind(*game_id)
                        .bind(s.seat)
                        .bind(&s.name)
                        .bind(&s.robot)
                        .bind(&s.token_sha256)
                        .bind(s.pause_request)
                        .bind(s.penalty)
                        .bind(s.user_id)
                        .execute(&mut *tx)
                        .await?;
                    }
                    SeatChange::Free(seat) => {
                        sqlx::query("DELETE FROM seats WHERE game_id = $1 AND seat = $2")
                            .bind(*game_id)
                            .bind(*seat)
                            .execute(&mut *tx)
                            .await?;
                    }
                }
            }
            for (game_id, h) in &rows.hands {
                sqlx::query(
                    "INSERT INTO hands (game_id, hand, round, east, outcome, winners, how, discarder, dice, \
                     first_seq, last_seq, started_us, ended_us, settlement) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
                )
                .bind(*game_id)
                .bind(h.hand)
                .bind(&h.round)
                .bind(h.east)
                .bind(h.outcome.as_str())
                .bind(json(&h.winners))
                .bind(&h.how)
                .bind(h.discarder)
                .bind(h.dice.map(|d| json(&d)))
                .bind(h.first_seq)
                .bind(h.last_seq)
                .bind(h.started_us)
                .bind(h.ended_us)
                .bind(&h.settlement)
                .execute(&mut *tx)
                .await?;
                for p in &h.players {
                    sqlx::query(
                        "INSERT INTO hand_players (game_id, hand, player, name, wind, won, points, score, delta, \
                         total) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                    )
                    .bind(*game_id)
                    .bind(h.hand)
                    .bind(p.player)
                    .bind(&p.name)
                    .bind(&p.wind)
                    .bind(i64::from(p.won))
                    .bind(p.points)
                    .bind(&p.score)
                    .bind(p.delta)
                    .bind(p.total)
                    .execute(&mut *tx)
                    .await?;
                }
                for (n, p) in (1i64..).zip(&h.payments) {
                    sqlx::query(
                        "INSERT INTO payments (game_id, hand, n, from_player, to_player, amount, kind) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    )
                    .bind(*game_id)
                    .bind(h.hand)
                    .bind(n)
                    .bind(p.from_player)
                    .bind(p.to_player)
                    .bind(p.amount)
                    .bind(&p.kind)
                    .execute(&mut *tx)
                    .await?;
                }
            }
            Ok(())
        }
    };
}

/// Defines `$name(conn, game_id)`, which copies a game's inputs and events
/// since their last blocks into one block each (nothing where there are
/// none), on a `$conn`.
macro_rules! pack_blocks {
    ($name:ident, $conn:ty) => {
        async fn $name(conn: &mut $conn, game_id: &str) -> Result<(), sqlx::Error> {
            for pack in [&*PACK_INPUTS, &*PACK_EVENTS] {
                sqlx::query(pack).bind(game_id).bind(ROW_SEPARATOR.to_string()).execute(&mut *conn).await?;
            }
            Ok(())
        }
    };
}
use {pack_blocks, rare_writes};

/// Each game of `rows` whose hand ended, once.
fn hands_ended<'a>(rows: &Rows<'a>) -> Vec<&'a str> {
    let mut games: Vec<&str> = Vec::new();
    for (game_id, _) in &rows.hands {
        if !games.contains(game_id) {
            games.push(game_id);
        }
    }
    games
}

/// Copies a game's (`$1`) inputs not yet in a block into a new block, joined
/// by `$2` ([`ROW_SEPARATOR`]); nothing when there are none.
static PACK_INPUTS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO input_blocks (game_id, first_n, last_n, body) \
         SELECT game_id, MIN(n), MAX(n), string_agg({INPUT_LINE}, $2 ORDER BY n) FROM inputs WHERE game_id = $1 \
         AND n > (SELECT COALESCE(MAX(last_n), 0) FROM input_blocks WHERE game_id = $1) GROUP BY game_id"
    )
});

/// Copies a game's (`$1`) events not yet in a block into a new block, joined
/// by `$2` ([`ROW_SEPARATOR`]); nothing when there are none.
static PACK_EVENTS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO event_blocks (game_id, first_seq, last_seq, last_hand, body) \
         SELECT game_id, MIN(seq), MAX(seq), MAX(hand), string_agg({EVENT_LINE}, $2 ORDER BY seq) FROM events \
         WHERE game_id = $1 AND seq > (SELECT COALESCE(MAX(last_seq), 0) FROM event_blocks WHERE game_id = $1) \
         GROUP BY game_id"
    )
});
