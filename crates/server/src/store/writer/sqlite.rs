//! The SQLite writer of one file: one connection, the only one that writes
//! the file's games (see [`crate::store::parts`]), and a
//! checkpointer beside it (see [`Wal`]). A group is one transaction of
//! multi-row `INSERT`s of a few fixed sizes; a group of moves alone (nearly
//! every group) is one query, its transaction and commit included
//! ([`SqliteWriter::moves`]).

use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, Sqlite};

use super::{
    Claim, Committed, EVENT_COLUMNS, EVENT_TAIL_COLUMNS, EventRow, FORGOTTEN_ROWS, GAME_COLUMNS, GAME_CONFLICT,
    INPUT_COLUMNS, INPUT_TAIL_COLUMNS, InputRow, NOT_AGAIN, PACK_EVENTS, PACK_INPUTS, Rows, SeatChange, Write, acquire,
    claim_then_rows, forget_games, hands_ended, json, pack_blocks, rare_writes,
};
use crate::store::saved::ROW_SEPARATOR;

/// The writer's page cache of clean pages, in KiB (SQLite's default); dirty
/// pages may take more before they spill (see [`SqliteWriter::open`]).
const CLEAN_CACHE_KIB: usize = 2048;

/// SQLite's writing connection (a pool of one) and the flag its checkpointer
/// raises after each checkpoint (see [`Wal`]).
#[derive(Clone, Debug)]
pub struct SqliteWriter {
    pool: SqlitePool,
    wal: Arc<Wal>,
}

impl SqliteWriter {
    /// Opens the writing connection to `url` (one of `parts` files), files
    /// what the log's tail still holds, and starts the checkpointer.
    pub(super) async fn open(url: &str, parts: usize) -> Result<SqliteWriter, sqlx::Error> {
        // As the store's own connections: WAL, and `synchronous =
        // NORMAL`, which keeps every committed transaction through a
        // crash of the process (see docs/architecture.md).
        let options = SqliteConnectOptions::from_str(url)?
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true)
            // A group's pages stay in memory until it commits (a 2 MiB
            // cache spilled them to the WAL mid-way): dirty pages spill
            // only past the part's share of 64 MiB, at least 16 MiB. The
            // cache of clean pages stays SQLite's 2 MiB: every commit
            // walks the whole cache's hash table (a B-tree split parks a
            // page at the lock page's number, far past the file's end, and
            // the commit then drops every page past the end), which took
            // 3 % of the server's time with a 16 MiB cache
            // (docs/performance.md, "SQLite's page cache"). Statement
            // journals are kept in memory, not in temporary files.
            .pragma("cache_size", format!("-{CLEAN_CACHE_KIB}"))
            .pragma("cache_spill", format!("-{}", (65536 / parts.max(1)).max(16384)))
            .pragma("temp_store", "MEMORY");
        // Checkpoints (copying the WAL back into the database file,
        // with an fsync) took much of the writer's time when each
        // commit past 1,000 WAL pages ran one: the writer does none,
        // a connection of their own runs them beside it
        // (docs/performance.md, "SQLite's writer").
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options.clone().pragma("wal_autocheckpoint", "0"))
            .await?;
        file_what_is_left(&pool).await?;
        let checkpoints = SqlitePoolOptions::new().max_connections(1).connect_with(options).await?;
        let wal = Arc::new(Wal::default());
        tokio::spawn(checkpoint(checkpoints, pool.clone(), wal.clone()));
        Ok(SqliteWriter { pool, wal })
    }

    /// Writes a group that only puts moves in the tail ([`only_moves`]):
    /// its transaction, `moves` ([`moves_sql`]) and the commit in one query,
    /// one round trip to SQLite's thread where sqlx's own transaction takes
    /// three (docs/performance.md, "SQLite's writer"). A statement that
    /// fails leaves the transaction open: it is rolled back here.
    async fn moves(&self, moves: &str, rows: &Rows<'_>) -> Result<Committed, sqlx::Error> {
        let mut conn = acquire(self.pool.acquire()).await?;
        self.wal.finish_checkpoint(&mut conn).await;
        let sql = format!("BEGIN IMMEDIATE;\n{moves}COMMIT");
        if let Err(e) = bind_moves(sqlx::query(&sql), rows).execute(&mut *conn).await {
            if sqlx::query("ROLLBACK").execute(&mut *conn).await.is_err() {
                // No transaction was open (`BEGIN` failed), or one is and
                // cannot end: never hand the pool a connection that might
                // be inside one.
                let _ = conn.detach().close().await;
            }
            return Err(e);
        }
        Ok(Committed::Written)
    }
}

impl Write for SqliteWriter {
    async fn transaction(&self, claim: Option<&Claim<'_>>, rows: &Rows<'_>) -> Result<Committed, sqlx::Error> {
        if claim.is_none()
            && only_moves(rows)
            && let Some(moves) = moves_sql(rows)
        {
            if moves.is_empty() {
                // Nothing to write: no transaction either.
                return Ok(Committed::Written);
            }
            return self.moves(&moves, rows).await;
        }
        let wal = &self.wal;
        claim_then_rows!(self.pool, claim, rows, unfenced, sqlite_rows, sqlite_rare_and_blocks, |conn| wal
            .finish_checkpoint(conn))
    }

    /// SQLite gives its write lock (a file locked by another writer, or gone
    /// read-only, still answers queries).
    async fn ping(&self) -> Result<(), sqlx::Error> {
        let mut conn = acquire(self.pool.acquire()).await?;
        sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
        if let Err(e) = sqlx::query("ROLLBACK").execute(&mut *conn).await {
            // Never hand the pool a connection inside a transaction.
            let _ = conn.detach().close().await;
            return Err(e);
        }
        Ok(())
    }

    async fn forget(&self, ids: &[String]) -> Result<u64, sqlx::Error> {
        let mut conn = acquire(self.pool.acquire()).await?;
        self.wal.finish_checkpoint(&mut conn).await;
        let mut tx = conn.begin().await?;
        let games = forget_games!(
            tx,
            ids,
            ["DELETE FROM events_tail WHERE game_id = $1", "DELETE FROM inputs_tail WHERE game_id = $1"]
        );
        tx.commit().await?;
        Ok(games)
    }

    async fn closed(&self) {
        self.pool.close_event().await
    }

    async fn close(&self) {
        self.pool.close().await
    }
}

/// How often the WAL is copied back into an SQLite database.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);

/// Checkpoints the checkpointer runs back to back before the writer copies
/// the rest: the more they copy, the less the writer copies while every
/// table waits (docs/performance.md, "SQLite's WAL restarts").
const CHECKPOINT_PASSES: usize = 3;

/// The writer finishes a checkpoint, which lets its next transaction write
/// the WAL from its start again, after this many of the checkpointer's
/// (every 5 s). Its copy syncs the WAL and the database file and holds up
/// every table meanwhile, so it is not run after every checkpoint
/// (docs/performance.md, "SQLite's WAL restarts"). The WAL then grows to
/// what 5 s write and is reused from its start.
const RESTART_AFTER: u32 = 10;

/// The WAL's checkpoints, shared by the checkpointer and the writer.
///
/// SQLite starts writing its WAL from the beginning again only when a write
/// transaction begins with every frame already copied back. A checkpoint on
/// another connection never sees that while the writer keeps committing: it
/// copies the frames there were when it started, and more have come since.
/// The WAL then grew without end, and writing past its end made the kernel
/// zero each new block, which took much of the writer's time
/// (docs/performance.md, "SQLite's WAL restarts"). So the checkpointer
/// copies the bulk on its own connection and raises `copied`; the writer,
/// before its next transaction, copies what came meanwhile (little), and its
/// transaction then restarts the WAL. Both keep `synchronous = NORMAL`: a
/// checkpoint syncs the WAL before it copies and the database after, so a
/// power cut never leaves a half-copied database. The writer's two fsyncs
/// are what this costs in latency (the same copy without them is faster,
/// but could damage the file if the machine lost power).
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

// ----- a group's rows in one query ----------------------------------------------------

type SqliteQuery<'q> = sqlx::query::Query<'q, Sqlite, sqlx::sqlite::SqliteArguments<'q>>;

/// Writes a group's games, inputs and events. Each statement is a round
/// trip between the journal's task and SQLite's thread, waking both, so the
/// statements are few: multi-row `INSERT`s of up to [`CHUNK`] rows, and a
/// group's moves (its rows in the tail, the most frequent) in one query of
/// two statements when they fit (docs/performance.md, "SQLite's writer").
async fn sqlite_rows(tx: &mut sqlx::SqliteConnection, rows: &Rows<'_>) -> Result<(), sqlx::Error> {
    let now = rows.now;
    sqlite_insert(tx, GAME_COLUMNS, GAME_CONFLICT, &rows.games, |q, (id, g, settings)| {
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
        sqlite_insert(tx, INPUT_COLUMNS, suffix, inputs, |q, (id, r)| bind_input(q.bind(*id), r)).await?;
    }
    for (events, suffix) in [(&rows.waited_events, NOT_AGAIN), (&rows.events, "")] {
        sqlite_insert(tx, EVENT_COLUMNS, suffix, events, |q, (id, r)| bind_event(q.bind(*id), r)).await?;
    }
    // The group's moves: their inputs and events in one query, when each
    // fits in one statement.
    let (inputs, events) = (&rows.tail_inputs, &rows.tail_events);
    match moves_sql(rows) {
        Some(sql) if sql.is_empty() => {}
        Some(sql) => bind_moves(sqlx::query(&sql), rows).execute(&mut *tx).await.map(drop)?,
        None => {
            sqlite_insert(tx, INPUT_TAIL_COLUMNS, "", inputs, bind_tail_input).await?;
            sqlite_insert(tx, EVENT_TAIL_COLUMNS, "", events, bind_tail_event).await?;
        }
    }
    if let Some(below) = rows.truncate_below {
        for table in ["inputs_tail", "events_tail"] {
            sqlx::query(&format!("DELETE FROM {table} WHERE id < ?")).bind(below).execute(&mut *tx).await?;
        }
    }
    Ok(())
}

/// An input's columns after its game's id.
fn bind_input<'q>(q: SqliteQuery<'q>, r: &'q InputRow) -> SqliteQuery<'q> {
    q.bind(r.n).bind(r.seq).bind(json(&r.input))
}

/// An event's columns after its game's id.
fn bind_event<'q>(q: SqliteQuery<'q>, r: &'q EventRow) -> SqliteQuery<'q> {
    let (kind, player) = r.audience_columns();
    q.bind(r.seq).bind(r.at_us).bind(r.hand).bind(kind).bind(player).bind(r.body.as_str())
}

/// The statements that put a group's moves in the tail (its inputs, then
/// its events), when each table's rows fit in one (empty when there are
/// none).
fn moves_sql(rows: &Rows<'_>) -> Option<String> {
    let (inputs, events) = (rows.tail_inputs.len(), rows.tail_events.len());
    if inputs > CHUNK || events > CHUNK {
        return None;
    }
    let mut sql = String::new();
    for (into, n) in [(INPUT_TAIL_COLUMNS, inputs), (EVENT_TAIL_COLUMNS, events)] {
        if n > 0 {
            sql.push_str(&insert_sql(into, padded(n)));
            sql.push_str(";\n");
        }
    }
    Some(sql)
}

/// Binds the parameters of [`moves_sql`]'s statements.
fn bind_moves<'q>(query: SqliteQuery<'q>, rows: &'q Rows<'_>) -> SqliteQuery<'q> {
    let query = bind_padded(query, &rows.tail_inputs, INPUT_TAIL_COLUMNS, bind_tail_input);
    bind_padded(query, &rows.tail_events, EVENT_TAIL_COLUMNS, bind_tail_event)
}

/// Whether a group only puts moves in the tail (its games' rows unchanged,
/// nothing filed, no seat, hand or fence): the group of nearly every move.
fn only_moves(rows: &Rows<'_>) -> bool {
    rows.games.is_empty()
        && rows.seats.is_empty()
        && rows.inputs.is_empty()
        && rows.events.is_empty()
        && rows.waited_inputs.is_empty()
        && rows.waited_events.is_empty()
        && rows.hands.is_empty()
        && rows.fences.is_empty()
        && rows.truncate_below.is_none()
}

/// A tail row's columns: its number there, its game's id, then the rest.
fn bind_tail_input<'q>(q: SqliteQuery<'q>, (n, id, r): &'q (i64, &str, &InputRow)) -> SqliteQuery<'q> {
    bind_input(q.bind(*n).bind(*id), r)
}

/// A tail row's columns: its number there, its game's id, then the rest.
fn bind_tail_event<'q>(q: SqliteQuery<'q>, (n, id, r): &'q (i64, &str, &EventRow)) -> SqliteQuery<'q> {
    bind_event(q.bind(*n).bind(*id), r)
}

/// The largest multi-row `INSERT`: up to 64 rows of at most 14 parameters
/// stays far under SQLite's limit of 32,766 parameters; larger statements
/// were no faster (docs/performance.md, "SQLite's writer").
const CHUNK: usize = 64;

/// The rows of the statement that writes `n` rows (at most [`CHUNK`]): the
/// next power of two, the rest padding rows of NULLs that it leaves out. A
/// statement is then one of a few texts, each prepared once (sqlx keeps it
/// in the connection's cache).
fn padded(n: usize) -> usize {
    // (`0.next_power_of_two()` is 1.)
    if n == 0 { 0 } else { n.next_power_of_two() }
}

/// Inserts rows into `into` (a table and its columns) with multi-row
/// `INSERT`s (see [`insert_sql`]), each statement ending with `suffix` (an
/// `ON CONFLICT` clause, or nothing).
async fn sqlite_insert<'r, T>(
    tx: &mut sqlx::SqliteConnection,
    into: &str,
    suffix: &str,
    rows: &'r [T],
    bind: impl for<'q> Fn(SqliteQuery<'q>, &'q T) -> SqliteQuery<'q>,
) -> Result<(), sqlx::Error> {
    for chunk in rows.chunks(CHUNK) {
        let mut sql = insert_sql(into, padded(chunk.len()));
        sql.push_str(suffix);
        bind_padded(sqlx::query(&sql), chunk, into, &bind).execute(&mut *tx).await?;
    }
    Ok(())
}

/// Binds `rows` (at most [`CHUNK`]) for a statement into `into`, and NULLs
/// for the padding [`padded`] adds, a parameter for each of `into`'s
/// columns.
fn bind_padded<'q, T>(
    mut query: SqliteQuery<'q>,
    rows: &'q [T],
    into: &str,
    bind: impl Fn(SqliteQuery<'q>, &'q T) -> SqliteQuery<'q>,
) -> SqliteQuery<'q> {
    for row in rows {
        query = bind(query, row);
    }
    for _ in 0..(padded(rows.len()) - rows.len()) * columns_of(into) {
        query = query.bind(None::<i64>);
    }
    query
}

/// The number of columns `into` lists (`table (a, b, ..)`): a statement's
/// parameters a row, read from the list itself so that they cannot differ.
fn columns_of(into: &str) -> usize {
    into.split(',').count()
}

/// `INSERT INTO {into} SELECT * FROM (VALUES (?, ..), (..)) WHERE column1
/// IS NOT NULL` for `rows` rows, a parameter for each of `into`'s columns: a padding row (all NULL) is not written
/// (the first column is never NULL in a real row). Anonymous parameters,
/// not `$N`: sqlx asks SQLite each numbered parameter's name, which SQLite
/// finds by a linear search, so binding `$N` parameters costs the square of
/// their number (docs/performance.md, "SQLite's writer"). (The `WHERE` also
/// lets SQLite read an upsert after the `SELECT`.)
fn insert_sql(into: &str, rows: usize) -> String {
    let row = format!("({})", vec!["?"; columns_of(into)].join(", "));
    format!("INSERT INTO {into} SELECT * FROM (VALUES {}) WHERE column1 IS NOT NULL", vec![row; rows].join(", "))
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

rare_writes!(sqlite_rare, sqlx::SqliteConnection);
pack_blocks!(sqlite_pack, sqlx::SqliteConnection);

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

/// SQLite never plays in a cluster (`--nats` is refused with it): a fence
/// there is a mistake, and every game carrying one is refused.
async fn unfenced(_: &mut sqlx::SqliteConnection, rows: &Rows<'_>) -> Result<Vec<String>, sqlx::Error> {
    Ok(rows.fences.iter().map(|(id, _)| id.to_string()).collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn multi_row_inserts_leave_out_their_padding() {
        assert_eq!(
            super::insert_sql("t (a, b)", 2),
            "INSERT INTO t (a, b) SELECT * FROM (VALUES (?, ?), (?, ?)) WHERE column1 IS NOT NULL"
        );
    }

    #[test]
    fn each_table_has_as_many_parameters_a_row_as_columns() {
        use super::{EVENT_COLUMNS, EVENT_TAIL_COLUMNS, GAME_COLUMNS, INPUT_COLUMNS, INPUT_TAIL_COLUMNS, columns_of};
        let counts =
            [GAME_COLUMNS, INPUT_COLUMNS, EVENT_COLUMNS, INPUT_TAIL_COLUMNS, EVENT_TAIL_COLUMNS].map(columns_of);
        assert_eq!(counts, [14, 4, 7, 5, 8]);
    }

    #[test]
    fn statements_have_a_few_sizes() {
        let sizes: Vec<usize> = (1..=super::CHUNK).map(super::padded).collect();
        assert_eq!(sizes[..5], [1, 2, 4, 4, 8]);
        assert_eq!(super::padded(0), 0, "no rows, no statement and no padding");
        let mut distinct = sizes.clone();
        distinct.dedup();
        assert_eq!(distinct, [1, 2, 4, 8, 16, 32, 64]);
    }
}
