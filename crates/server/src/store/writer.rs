//! The journal's connections and how a group of batches is written through
//! them: sqlx's native SQLite and Postgres drivers, not `Any` (which copies
//! every value into its own form and has no arrays).
//!
//! - **SQLite**: one connection, the only one that writes games. A group is
//!   one transaction of multi-row `INSERT`s of a few fixed sizes (each
//!   prepared once, then found in the connection's statement cache).
//! - **Postgres**: one connection per writer. A group is one transaction of
//!   one `INSERT ... SELECT FROM UNNEST($1, $2, ...)` per table, whatever the
//!   number of rows: the rows travel as arrays, so a group costs a handful of
//!   round trips.
//!
//! What a group writes (see [`Batch`]): each game's row once (as its last
//! batch left it) when one of its batches changed it, the seats that changed,
//! the inputs, the events and the rows of the hands that ended. The rarer rows
//! (seats, hands) are written one statement each, from one source for both
//! databases ([`rare_writes!`]), and so are the blocks of inputs and events
//! a game's finished hand adds to `input_blocks` and `event_blocks` (for
//! restarts, see [`super::saved`]).

use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, Sqlite};
use tokio::sync::mpsc;

use super::idempotency::Claim;
use super::records::{Batch, EventRow, GameRow, HandRow, InputRow, SeatChange};
use super::saved::{EVENT_LINE, INPUT_LINE, ROW_SEPARATOR};
use super::tail::{Filing, Tail};
use super::{Backend, now_us};

/// The longest a writer waits for its connection before it counts the
/// database as unreachable.
pub const CONNECT_WAIT: Duration = Duration::from_secs(3);

/// The sizes of SQLite's multi-row `INSERT`s, largest first. Up to 64 rows
/// of at most 14 parameters stays far under SQLite's limit of 32,766
/// parameters; larger statements measured no faster (`storebench`).
const CHUNKS: [usize; 4] = [64, 16, 4, 1];

/// The journal's connections to one database.
#[derive(Clone, Debug)]
pub enum Writer {
    /// SQLite: a pool of one connection, and the flag its checkpointer
    /// raises after each checkpoint (see [`Wal`]).
    Sqlite(SqlitePool, Arc<Wal>),
    /// Postgres: a connection per journal writer, and the packer of the
    /// games whose hand ended (see [`postgres_packer`]).
    Postgres(PgPool, mpsc::Sender<String>),
}

impl Writer {
    /// Connects to `url` (already normalised by the store) with `connections`
    /// connections (SQLite: always one).
    pub async fn open(url: &str, backend: Backend, connections: u32) -> Result<Writer, sqlx::Error> {
        match backend {
            Backend::Sqlite => {
                // As the store's own connections: WAL, and `synchronous =
                // NORMAL`, which keeps every committed transaction through a
                // crash of the process (see docs/architecture.md).
                let options = SqliteConnectOptions::from_str(url)?
                    .journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Normal)
                    .busy_timeout(Duration::from_secs(10))
                    .foreign_keys(true)
                    // A group's pages stay in memory until it commits (the
                    // default 2 MiB cache spilled them to the WAL mid-way),
                    // and statement journals are kept in memory, not in
                    // temporary files.
                    .pragma("cache_size", "-65536")
                    .pragma("temp_store", "MEMORY");
                // Checkpoints (copying the WAL back into the database file,
                // with an fsync) were a quarter of the writer's time when each
                // commit past 1,000 WAL pages ran one: the writer does none,
                // a connection of their own runs them beside it.
                let pool = SqlitePoolOptions::new()
                    .max_connections(1)
                    .acquire_timeout(Duration::from_secs(10))
                    .connect_with(options.clone().pragma("wal_autocheckpoint", "0"))
                    .await?;
                file_what_is_left(&pool).await?;
                let checkpoints = SqlitePoolOptions::new().max_connections(1).connect_with(options).await?;
                let wal = Arc::new(Wal::default());
                tokio::spawn(checkpoint(checkpoints, pool.clone(), wal.clone()));
                Ok(Writer::Sqlite(pool, wal))
            }
            Backend::Postgres => {
                let options = PgConnectOptions::from_str(url)?;
                let pool = PgPoolOptions::new()
                    .max_connections(connections.max(1))
                    .acquire_timeout(Duration::from_secs(10))
                    .connect_lazy_with(options.clone());
                let packer_pool = PgPoolOptions::new()
                    .max_connections(1)
                    .acquire_timeout(Duration::from_secs(10))
                    .connect_lazy_with(options);
                let (packer, games) = mpsc::channel(PACKS_WAITING);
                tokio::spawn({
                    let (pool, packer_pool) = (pool.clone(), packer_pool.clone());
                    async move {
                        tokio::select! {
                            _ = postgres_packer(packer_pool.clone(), games) => {}
                            _ = pool.close_event() => {}
                        }
                        packer_pool.close().await;
                    }
                });
                Ok(Writer::Postgres(pool, packer))
            }
        }
    }

    /// Writes `batches` in one transaction, on a connection got within
    /// [`CONNECT_WAIT`] (giving up on the wait is safe: nothing was written):
    /// their inputs and events where `filing` says (SQLite's tail, or
    /// `inputs` and `events`), with the rows of `tail` the filing files.
    pub async fn commit(&self, batches: &[&Batch], filing: &Filing, tail: Option<&Tail>) -> Result<(), sqlx::Error> {
        self.transaction(None, Rows::of(batches, filing, tail)).await.map(drop)
    }

    /// Writes `batch` in one transaction that first claims an import's
    /// idempotency key; a key already taken (by a transaction that has
    /// committed: Postgres waits for one under way on the key's index,
    /// SQLite's single writer for its turn) writes nothing and is `false`.
    pub(super) async fn commit_claimed(&self, claim: &Claim<'_>, batch: &Batch) -> Result<bool, sqlx::Error> {
        self.transaction(Some(claim), Rows::of(&[batch], &Filing::at_once(1), None)).await
    }

    /// One transaction: the claim first, if any (`false`, nothing written,
    /// when it is taken), then the batches' rows.
    async fn transaction(&self, claim: Option<&Claim<'_>>, rows: Rows<'_>) -> Result<bool, sqlx::Error> {
        // The same steps on either connection type (SQLite's first finishing
        // a checkpoint, on the connection got for the transaction).
        macro_rules! claim_then_rows {
            ($pool:expr, $rows:ident, $rare:ident $(, $before:expr)?) => {{
                let mut conn = acquire($pool.acquire()).await?;
                $($before(&mut *conn).await;)?
                let mut tx = conn.begin().await?;
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
                        return Ok(false);
                    }
                }
                $rows(&mut tx, &rows).await?;
                $rare(&mut tx, &rows).await?;
                tx.commit().await?;
                Ok(true)
            }};
        }
        match self {
            Writer::Sqlite(pool, wal) => {
                claim_then_rows!(pool, sqlite_rows, sqlite_rare_and_blocks, |conn| wal.finish_checkpoint(conn))
            }
            Writer::Postgres(pool, packer) => {
                let committed = claim_then_rows!(pool, postgres_rows, postgres_rare);
                if let Ok(true) = committed {
                    for game_id in hands_ended(&rows) {
                        // Full (the packer far behind): that game's restart reads rows instead.
                        let _ = packer.try_send(game_id.to_string());
                    }
                }
                committed
            }
        }
    }

    /// Whether moves go to the log's tail first (SQLite; see [`super::tail`]).
    pub fn has_tail(&self) -> bool {
        matches!(self, Writer::Sqlite(..))
    }

    /// Whether the database would take a write now: Postgres answers a
    /// query; SQLite gives its write lock (an SQLite file locked by another
    /// writer, or gone read-only, still answers queries).
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        match self {
            Writer::Postgres(pool, _) => {
                let mut conn = acquire(pool.acquire()).await?;
                sqlx::query("SELECT 1").execute(&mut *conn).await.map(drop)
            }
            Writer::Sqlite(pool, _) => {
                let mut conn = acquire(pool.acquire()).await?;
                sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
                if let Err(e) = sqlx::query("ROLLBACK").execute(&mut *conn).await {
                    // Never hand the pool a connection inside a transaction.
                    let _ = conn.detach().close().await;
                    return Err(e);
                }
                Ok(())
            }
        }
    }

    /// Completes when the writer's connections are closed.
    pub async fn closed(&self) {
        match self {
            Writer::Sqlite(pool, _) => pool.close_event().await,
            Writer::Postgres(pool, _) => pool.close_event().await,
        }
    }

    /// Closes the writer's connections.
    pub async fn close(&self) {
        match self {
            Writer::Sqlite(pool, _) => pool.close().await,
            Writer::Postgres(pool, _) => pool.close().await,
        }
    }
}

/// How often the WAL is copied back into an SQLite database.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);

/// Checkpoints the checkpointer runs back to back before the writer copies
/// the rest (measured at 2,000 tables, `--pause 2`: one pass left the writer
/// a p99 of 95 ms, three 77 ms).
const CHECKPOINT_PASSES: usize = 3;

/// The writer finishes a checkpoint, which lets its next transaction write
/// the WAL from its start again, after this many of the checkpointer's
/// (every 5 s). Its copy syncs the WAL and the database file and holds up
/// every table meanwhile: after every checkpoint (500 ms) it left a delivery
/// p99 of 55-85 ms at 2,000 tables (`--pause 2`), every 5 s 41 ms. The WAL
/// then grows to what 5 s write (~300 MB at 2,000 busy tables) and is
/// reused from its start.
const RESTART_AFTER: u32 = 10;

/// The WAL's checkpoints, shared by the checkpointer and the writer.
///
/// SQLite starts writing its WAL from the beginning again only when a write
/// transaction begins with every frame already copied back. A checkpoint on
/// another connection never sees that while the writer keeps committing: it
/// copies the frames there were when it started, and more have come since.
/// The WAL then grew without end (7.4 GB in a minute at 2,000 tables), and
/// writing past its end made the kernel zero each new block: half the
/// writer's time (at 2,000 tables, `--pause 2`, delivery p50 went from
/// 257 ms to 9 ms once the WAL restarted). So the checkpointer copies the
/// bulk on its own connection and raises `copied`; the writer, before its
/// next transaction, copies what came meanwhile (little), and its
/// transaction then restarts the WAL. Both keep `synchronous = NORMAL`: a
/// checkpoint syncs the WAL before it copies and the database after, so a
/// power cut never leaves a half-copied database. The writer's two fsyncs
/// are what this costs at p99 (the same copy without them measured 26 ms
/// instead of 77, but could damage the file if the machine lost power).
#[derive(Debug, Default)]
pub struct Wal {
    copied: AtomicBool,
}

impl Wal {
    /// After a checkpoint of the checkpointer, copies the rest on the
    /// writer's connection, between two of its transactions.
    async fn finish_checkpoint(&self, writer: &mut sqlx::SqliteConnection) {
        if self.copied.swap(false, Ordering::Relaxed)
            && let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").execute(writer).await
        {
            tracing::debug!("WAL checkpoint on the writer: {e}");
        }
    }
}

/// Copies an SQLite database's WAL back into its file every
/// [`CHECKPOINT_EVERY`] (`PASSIVE`: without waiting for readers or the
/// writer, as far as they allow), until the writer closes; then once more,
/// truncating the WAL.
async fn checkpoint(checkpoints: SqlitePool, writer: SqlitePool, wal: Arc<Wal>) {
    let run = |mode: &'static str| {
        let checkpoints = checkpoints.clone();
        async move {
            if let Err(e) = sqlx::query(&format!("PRAGMA wal_checkpoint({mode})")).execute(&checkpoints).await {
                tracing::debug!("WAL checkpoint: {e}");
            }
        }
    };
    let mut round = 0u32;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(CHECKPOINT_EVERY) => {
                round += 1;
                // Each pass copies only what came during the one before, so
                // the passes get shorter, and so does what is left to the
                // writer (whose copy, with its two fsyncs, holds up every
                // table meanwhile).
                for _ in 0..CHECKPOINT_PASSES {
                    run("PASSIVE").await;
                }
                if round.is_multiple_of(RESTART_AFTER) {
                    wal.copied.store(true, Ordering::Relaxed);
                }
            }
            _ = writer.close_event() => break,
        }
    }
    run("TRUNCATE").await;
    checkpoints.close().await;
}

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
        };
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
const INPUT_COLUMNS: &str = "inputs (game_id, n, seq, body)";
const EVENT_COLUMNS: &str = "events (game_id, seq, at_us, hand, audience, audience_player, body)";
/// Rows filed from the tail that are there already stay as they are.
const NOT_AGAIN: &str = " ON CONFLICT DO NOTHING";
const INPUT_TAIL_COLUMNS: &str = "inputs_tail (id, game_id, n, seq, body)";
const EVENT_TAIL_COLUMNS: &str = "events_tail (id, game_id, seq, at_us, hand, audience, audience_player, body)";

// ----- SQLite: multi-row VALUES ------------------------------------------------------

type SqliteQuery<'q> = sqlx::query::Query<'q, Sqlite, sqlx::sqlite::SqliteArguments<'q>>;

async fn sqlite_rows(tx: &mut sqlx::SqliteConnection, rows: &Rows<'_>) -> Result<(), sqlx::Error> {
    let now = rows.now;
    sqlite_insert(tx, GAME_COLUMNS, 14, GAME_CONFLICT, &rows.games, |q, (id, g, settings)| {
        q.bind(*id)
            .bind(&g.name)
            .bind(&g.preset)
            .bind(g.source.as_str())
            .bind(g.state.as_str())
            .bind(*settings)
            .bind(g.created_us)
            .bind(now)
            .bind(g.finished_us)
            .bind(g.hands)
            .bind(json(&g.scores))
            .bind(g.manager)
            .bind(g.last_seq)
            .bind(g.rng_pos.to_string())
    })
    .await?;
    // The rows that waited first: a batch's row that repeats one of them is
    // then refused, as it would have been had they been filed already.
    for (inputs, suffix) in [(&rows.waited_inputs, NOT_AGAIN), (&rows.inputs, "")] {
        sqlite_insert(tx, INPUT_COLUMNS, 4, suffix, inputs, |q, (id, r)| {
            q.bind(*id).bind(r.n).bind(r.seq).bind(json(&r.input))
        })
        .await?;
    }
    for (events, suffix) in [(&rows.waited_events, NOT_AGAIN), (&rows.events, "")] {
        sqlite_insert(tx, EVENT_COLUMNS, 7, suffix, events, |q, (id, r)| {
            let (kind, player) = r.audience_columns();
            q.bind(*id).bind(r.seq).bind(r.at_us).bind(r.hand).bind(kind).bind(player).bind(r.body.as_str())
        })
        .await?;
    }
    sqlite_insert(tx, INPUT_TAIL_COLUMNS, 5, "", &rows.tail_inputs, |q, (n, id, r)| {
        q.bind(*n).bind(*id).bind(r.n).bind(r.seq).bind(json(&r.input))
    })
    .await?;
    sqlite_insert(tx, EVENT_TAIL_COLUMNS, 8, "", &rows.tail_events, |q, (n, id, r)| {
        let (kind, player) = r.audience_columns();
        q.bind(*n).bind(*id).bind(r.seq).bind(r.at_us).bind(r.hand).bind(kind).bind(player).bind(r.body.as_str())
    })
    .await?;
    if let Some(below) = rows.truncate_below {
        for table in ["inputs_tail", "events_tail"] {
            sqlx::query(&format!("DELETE FROM {table} WHERE id < ?")).bind(below).execute(&mut *tx).await?;
        }
    }
    Ok(())
}

/// Files what SQLite's tail still holds (the store stopped before the
/// journal filed it) into `inputs` and `events`, and empties it: run when
/// the store opens, before anything reads the log. A row already filed (the
/// store stopped between filing it and deleting it) is left as it is; the
/// rows of a game that is gone are dropped.
async fn file_what_is_left(pool: &SqlitePool) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    for (into, from) in [(INPUT_COLUMNS, INPUT_TAIL_COLUMNS), (EVENT_COLUMNS, EVENT_TAIL_COLUMNS)] {
        let (table, columns) = into.split_once(' ').unwrap_or((into, ""));
        let columns = columns.trim_matches(|c| c == '(' || c == ')');
        let tail = from.split_once(' ').map_or(from, |(t, _)| t);
        sqlx::query(&format!(
            "INSERT INTO {table} ({columns}) SELECT {columns} FROM {tail} \
             WHERE game_id IN (SELECT id FROM games) ORDER BY id ON CONFLICT DO NOTHING"
        ))
        .execute(&mut *tx)
        .await?;
        sqlx::query(&format!("DELETE FROM {tail}")).execute(&mut *tx).await?;
    }
    tx.commit().await
}

/// Inserts rows with multi-row `INSERT`s of `columns` parameters per row,
/// each statement ending with `suffix` (an `ON CONFLICT` clause, or nothing).
async fn sqlite_insert<'r, T>(
    tx: &mut sqlx::SqliteConnection,
    into: &str,
    columns: usize,
    suffix: &str,
    rows: &'r [T],
    bind: impl for<'q> Fn(SqliteQuery<'q>, &'q T) -> SqliteQuery<'q>,
) -> Result<(), sqlx::Error> {
    let mut rest = rows;
    while !rest.is_empty() {
        // Statements of a few fixed sizes only, so that each is prepared
        // once and then found in the connection's statement cache.
        let size = CHUNKS.iter().copied().find(|&c| c <= rest.len()).unwrap_or(1);
        let (chunk, tail) = rest.split_at(size);
        rest = tail;
        let mut sql = insert_sql(into, columns, chunk.len());
        sql.push_str(suffix);
        let mut query = sqlx::query(&sql);
        for row in chunk {
            query = bind(query, row);
        }
        query.execute(&mut *tx).await?;
    }
    Ok(())
}

/// `INSERT INTO {into} VALUES (?, ..), (..)` for `rows` rows. Anonymous
/// parameters, not `$N`: sqlx asks SQLite each numbered parameter's name,
/// which SQLite finds by a linear search, so binding `$N` parameters costs
/// the square of their number (a third of the writer's time, measured).
fn insert_sql(into: &str, columns: usize, rows: usize) -> String {
    let row = format!("({})", vec!["?"; columns].join(", "));
    format!("INSERT INTO {into} VALUES {}", vec![row; rows].join(", "))
}

// ----- Postgres: arrays ---------------------------------------------------------------

async fn postgres_rows(tx: &mut sqlx::PgConnection, rows: &Rows<'_>) -> Result<(), sqlx::Error> {
    if !rows.games.is_empty() {
        let g = &rows.games;
        let column = |f: fn(&GameRow) -> String| g.iter().map(|(_, row, _)| f(row)).collect::<Vec<String>>();
        let number = |f: fn(&GameRow) -> i64| g.iter().map(|(_, row, _)| f(row)).collect::<Vec<i64>>();
        let maybe = |f: fn(&GameRow) -> Option<i64>| g.iter().map(|(_, row, _)| f(row)).collect::<Vec<Option<i64>>>();
        sqlx::query(&format!(
            "INSERT INTO {GAME_COLUMNS} SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], \
             $5::text[], $6::text[], $7::int8[], $8::int8[], $9::int8[], $10::int8[], $11::text[], $12::int8[], \
             $13::int8[], $14::text[]){GAME_CONFLICT}"
        ))
        .bind(g.iter().map(|(id, _, _)| id.to_string()).collect::<Vec<String>>())
        .bind(column(|r| r.name.clone()))
        .bind(column(|r| r.preset.clone()))
        .bind(column(|r| r.source.as_str().to_string()))
        .bind(column(|r| r.state.as_str().to_string()))
        .bind(g.iter().map(|(_, _, s)| s.cloned()).collect::<Vec<Option<String>>>())
        .bind(number(|r| r.created_us))
        .bind(vec![rows.now; g.len()])
        .bind(maybe(|r| r.finished_us))
        .bind(number(|r| r.hands))
        .bind(column(|r| json(&r.scores)))
        .bind(maybe(|r| r.manager))
        .bind(number(|r| r.last_seq))
        .bind(column(|r| r.rng_pos.to_string()))
        .execute(&mut *tx)
        .await?;
    }
    if !rows.inputs.is_empty() {
        let i = &rows.inputs;
        sqlx::query(&format!(
            "INSERT INTO {INPUT_COLUMNS} SELECT * FROM UNNEST($1::text[], $2::int8[], $3::int8[], $4::text[])"
        ))
        .bind(i.iter().map(|(id, _)| id.to_string()).collect::<Vec<String>>())
        .bind(i.iter().map(|(_, r)| r.n).collect::<Vec<i64>>())
        .bind(i.iter().map(|(_, r)| r.seq).collect::<Vec<i64>>())
        .bind(i.iter().map(|(_, r)| json(&r.input)).collect::<Vec<String>>())
        .execute(&mut *tx)
        .await?;
    }
    if !rows.events.is_empty() {
        let e = &rows.events;
        sqlx::query(&format!(
            "INSERT INTO {EVENT_COLUMNS} SELECT * FROM UNNEST($1::text[], $2::int8[], $3::int8[], $4::int8[], \
             $5::text[], $6::int8[], $7::text[])"
        ))
        .bind(e.iter().map(|(id, _)| id.to_string()).collect::<Vec<String>>())
        .bind(e.iter().map(|(_, r)| r.seq).collect::<Vec<i64>>())
        .bind(e.iter().map(|(_, r)| r.at_us).collect::<Vec<i64>>())
        .bind(e.iter().map(|(_, r)| r.hand).collect::<Vec<i64>>())
        .bind(e.iter().map(|(_, r)| r.audience_columns().0.to_string()).collect::<Vec<String>>())
        .bind(e.iter().map(|(_, r)| r.audience_columns().1).collect::<Vec<Option<i64>>>())
        .bind(e.iter().map(|(_, r)| r.body.clone()).collect::<Vec<String>>())
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

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

pack_blocks!(sqlite_pack, sqlx::SqliteConnection);
pack_blocks!(postgres_pack, sqlx::PgConnection);

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

/// SQLite: the group's seats and hands, then the blocks of the games whose
/// hand ended, in the group's transaction (the single writer would wait for
/// any other connection that wrote them; clustered by game, a block costs
/// it a few pages).
async fn sqlite_rare_and_blocks(tx: &mut sqlx::SqliteConnection, rows: &Rows<'_>) -> Result<(), sqlx::Error> {
    sqlite_rare(tx, rows).await?;
    for game_id in hands_ended(rows) {
        sqlite_pack(tx, game_id).await?;
    }
    Ok(())
}

/// The games whose blocks a Postgres packer has yet to write, at most.
const PACKS_WAITING: usize = 8192;

/// Writes the blocks of the games whose hand ended on Postgres, on a
/// connection of its own, after the group that ended the hand has
/// committed: in the group's transaction they
/// held up every table of the group (2,000 tables at `--pause 2`: delivery
/// p99 57 ms, 80-137 ms with them). The blocks only speed up restarts (a
/// restart reads the rows after a game's last block), so one written late,
/// or never (the server stopped first), loses nothing.
///
/// The games waiting are packed together, in one transaction that does not
/// wait for its commit to reach the disk (`synchronous_commit = off`: a
/// crash may lose the last blocks, never rows of the log): one transaction
/// per game, each waiting for its flush, fell behind the hands' ends at
/// 2,000 busy tables.
async fn postgres_packer(pool: PgPool, mut games: mpsc::Receiver<String>) {
    let mut waiting: Vec<String> = Vec::with_capacity(PACK_TOGETHER);
    while let Some(game_id) = games.recv().await {
        waiting.push(game_id);
        while waiting.len() < PACK_TOGETHER
            && let Ok(game_id) = games.try_recv()
        {
            if !waiting.contains(&game_id) {
                waiting.push(game_id);
            }
        }
        let packed = async {
            let mut conn = acquire(pool.acquire()).await?;
            let mut tx = conn.begin().await?;
            sqlx::query("SET LOCAL synchronous_commit = off").execute(&mut *tx).await?;
            for game_id in &waiting {
                postgres_pack(&mut tx, game_id).await?;
            }
            tx.commit().await
        };
        if let Err(e) = packed.await {
            tracing::debug!("the blocks of {} games for restarts are not written: {e}", waiting.len());
        }
        waiting.clear();
    }
}

/// At most this many games are packed in one transaction.
const PACK_TOGETHER: usize = 64;

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

rare_writes!(sqlite_rare, sqlx::SqliteConnection);
rare_writes!(postgres_rare, sqlx::PgConnection);

#[cfg(test)]
mod tests {
    #[test]
    fn multi_row_inserts_number_their_parameters() {
        assert_eq!(super::insert_sql("t (a, b)", 2, 2), "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)");
    }
}
