//! The journal: one task that writes every table's batches, committing all
//! the batches waiting at a moment in one transaction (group commit).
//!
//! A table waits for its batch to be committed before it sends the batch's
//! events, so a client never sees an event the store could lose. Grouping
//! keeps the cost of a commit (an fsync, a round trip) shared by every table
//! that wrote meanwhile, which is what lets one SQLite file serve thousands
//! of tables.
//!
//! # The contract of [`Journal::write`]
//!
//! - `Ok(())`: the batch is committed.
//! - `Err(StoreError::Unavailable)`: the database could not be reached (or
//!   could not take the work now: see [`super::error::is_transient`]). A
//!   write that returns `Err(Unavailable)` stored nothing of that batch; the
//!   caller may retry it later. The whole group it was in failed with it, at
//!   once: the journal does not try again, and while the database is down
//!   (see [`Journal::available`]) later writes fail at once too, without
//!   waiting for the database. A probe finds out when it is back.
//! - `Err(StoreError::Rejected)`: the database refused this batch (a
//!   constraint, a value it does not take). Nothing of it was stored, and
//!   writing it again would fail again. The other batches of its group are
//!   committed without it (each then in a transaction of its own), except
//!   later batches of the same game, refused with it.
//! - `Err(StoreError::Closed)`: the journal has stopped.
//!
//! One caveat: if the connection is lost during the `COMMIT` itself, the
//! database may have committed what the journal reports as `Unavailable`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::any::AnyArguments;
use sqlx::query::Query;
use sqlx::{Any, AnyPool, Connection, Transaction};
use tokio::sync::{mpsc, oneshot, watch};

use super::error::is_transient;
use super::records::{Batch, EventRow, InputRow, SeatChange};
use super::{Backend, StoreError};

/// Batches waiting beyond this many make tables wait to hand theirs over.
const QUEUE: usize = 4096;

/// At most this many batches are committed together.
const GROUP: usize = 512;

/// The sizes of multi-row `INSERT`s, largest first. Up to 64 rows of at most
/// 14 parameters stays far under SQLite's limit of 32,766 parameters (and
/// Postgres's 65,535); larger statements measured no faster (`storebench`).
const CHUNKS: [usize; 4] = [64, 16, 4, 1];

/// The longest a writer waits for a connection before it counts the
/// database as unreachable (the pool's own wait, with its retries of a
/// refused connection, is longer).
const CONNECT_WAIT: Duration = Duration::from_secs(3);

/// While the database is unreachable, it is probed this often.
const PROBE_EVERY: Duration = Duration::from_secs(1);

type Reply = oneshot::Sender<Result<(), Unwritten>>;

/// A batch the journal did not write, and why. A batch that failed for want
/// of the database ([`StoreError::Unavailable`]) comes back whole, so that
/// its table can write it again once the database is back.
#[derive(Debug)]
pub struct Unwritten {
    /// Why.
    pub error: StoreError,
    /// The batch, when it may be written again later.
    pub batch: Option<Box<Batch>>,
}

impl Unwritten {
    fn unavailable(why: Arc<sqlx::Error>, batch: Box<Batch>) -> Unwritten {
        Unwritten { error: StoreError::Unavailable(why), batch: Some(batch) }
    }

    fn refused(error: StoreError) -> Unwritten {
        Unwritten { error, batch: None }
    }
}

enum Job {
    Write(Box<Batch>, Reply),
    Stop(oneshot::Sender<()>),
}

/// The journal's handle.
#[derive(Clone, Debug)]
pub struct Journal {
    /// One writer task per shard; a game always goes to the same one, so its
    /// batches are committed in order.
    shards: Vec<mpsc::Sender<Job>>,
    health: Arc<Health>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Job")
    }
}

/// Whether the database answers, shared by the writers and the probe.
#[derive(Debug)]
struct Health {
    /// `true` while the database answers.
    up: watch::Sender<bool>,
    /// Why it does not, while it does not.
    why: Mutex<Option<Arc<sqlx::Error>>>,
}

impl Health {
    /// The failure that made the database unavailable, while it is.
    fn down_because(&self) -> Option<Arc<sqlx::Error>> {
        if *self.up.borrow() {
            return None;
        }
        self.why.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// A write could not reach the database: it is down until the probe
    /// finds it back.
    fn down(&self, why: Arc<sqlx::Error>) {
        *self.why.lock().unwrap_or_else(|e| e.into_inner()) = Some(why.clone());
        if self.up.send_replace(false) {
            tracing::error!("the database is unreachable ({why}): writes fail until it answers again");
        }
    }
}

impl Journal {
    /// Starts the journal's `writers` tasks on `pool` (at least one), and the
    /// probe that watches the database while it is unreachable. SQLite has a
    /// single writer anyway; Postgres commits several groups at once, each on
    /// its own connection.
    pub fn start(pool: AnyPool, backend: Backend, writers: usize) -> Journal {
        let health = Arc::new(Health { up: watch::Sender::new(true), why: Mutex::new(None) });
        let shards = (0..writers.max(1))
            .map(|_| {
                let (sender, receiver) = mpsc::channel(QUEUE);
                tokio::spawn(run(pool.clone(), health.clone(), receiver));
                sender
            })
            .collect();
        tokio::spawn(probe(pool, backend, health.clone()));
        Journal { shards, health }
    }

    /// The writer of a game's batches.
    fn shard(&self, game_id: &str) -> &mpsc::Sender<Job> {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        game_id.hash(&mut hasher);
        &self.shards[(hasher.finish() % self.shards.len() as u64) as usize]
    }

    /// Writes a batch; returns once it is committed, or why it could not be
    /// (see the module's documentation for what each error means). A write
    /// that returns `Err(StoreError::Unavailable)` stored nothing of that
    /// batch; the caller may retry it later.
    pub async fn write(&self, batch: Batch) -> Result<(), StoreError> {
        self.write_or_return(batch).await.map_err(|u| u.error)
    }

    /// As [`Journal::write`], but a batch that could not be written for want
    /// of the database comes back with the error.
    pub async fn write_or_return(&self, batch: Batch) -> Result<(), Unwritten> {
        let (reply, done) = oneshot::channel();
        let shard = self.shard(&batch.game_id);
        let closed = || Unwritten::refused(StoreError::Closed);
        shard.send(Job::Write(Box::new(batch), reply)).await.map_err(|_| closed())?;
        done.await.unwrap_or_else(|_| Err(closed()))
    }

    /// Batches handed over and not yet taken into a commit, over every
    /// writer.
    pub fn queued(&self) -> usize {
        self.shards.iter().map(|s| s.max_capacity() - s.capacity()).sum()
    }

    /// Whether the database answers: becomes `false` when a write fails to
    /// reach it, `true` again when the probe (every second meanwhile) gets an
    /// answer.
    pub fn available(&self) -> watch::Receiver<bool> {
        self.health.up.subscribe()
    }

    /// Commits everything handed over so far, then stops the tasks.
    pub async fn stop(&self) {
        for shard in &self.shards {
            let (reply, done) = oneshot::channel();
            if shard.send(Job::Stop(reply)).await.is_ok() {
                let _ = done.await;
            }
        }
    }
}

async fn run(pool: AnyPool, health: Arc<Health>, mut receiver: mpsc::Receiver<Job>) {
    let mut group: Vec<(Box<Batch>, Reply)> = Vec::with_capacity(GROUP);
    let mut stop = None;
    while let Some(job) = receiver.recv().await {
        let mut next = Some(job);
        // Take whatever else is already waiting.
        while let Some(job) = next.take().or_else(|| if group.len() < GROUP { receiver.try_recv().ok() } else { None })
        {
            match job {
                Job::Write(batch, reply) => group.push((batch, reply)),
                Job::Stop(reply) => {
                    stop = Some(reply);
                    break;
                }
            }
        }
        commit_group(&pool, &health, &mut group).await;
        if let Some(reply) = stop.take() {
            let _ = reply.send(());
            return;
        }
    }
}

/// Commits a group in one transaction. A transient failure fails the whole
/// group at once; a permanent one is looked for batch by batch, so that a bad
/// batch fails only its own table.
async fn commit_group(pool: &AnyPool, health: &Health, group: &mut Vec<(Box<Batch>, Reply)>) {
    if group.is_empty() {
        return;
    }
    if let Some(why) = health.down_because() {
        for (batch, reply) in group.drain(..) {
            let _ = reply.send(Err(Unwritten::unavailable(why.clone(), batch)));
        }
        return;
    }
    let batches: Vec<&Batch> = group.iter().map(|(b, _)| b.as_ref()).collect();
    let started = std::time::Instant::now();
    match commit(pool, &batches).await {
        Ok(()) => {
            crate::metrics::store_commit(started.elapsed(), batches.len(), batches.iter().map(|b| b.rows()).sum());
            for (_, reply) in group.drain(..) {
                let _ = reply.send(Ok(()));
            }
        }
        Err(e) if is_transient(&e) => {
            let why = Arc::new(e);
            health.down(why.clone());
            for (batch, reply) in group.drain(..) {
                let _ = reply.send(Err(Unwritten::unavailable(why.clone(), batch)));
            }
        }
        Err(e) if group.len() == 1 => {
            let (batch, reply) = group.remove(0);
            tracing::error!(game = %batch.game_id, "the database refused a batch: {e}");
            let _ = reply.send(Err(Unwritten::refused(StoreError::Rejected(Arc::new(e)))));
        }
        Err(e) => {
            tracing::warn!("the database refused a group of {} batches ({e}); committing them one by one", group.len());
            isolate(pool, health, group).await;
        }
    }
}

/// Commits each batch of a refused group alone. A game whose batch is
/// refused has its later batches of the group refused with it (they follow
/// from it); a transient failure meanwhile fails the rest as unavailable.
async fn isolate(pool: &AnyPool, health: &Health, group: &mut Vec<(Box<Batch>, Reply)>) {
    let mut refused: Vec<(String, Arc<sqlx::Error>)> = Vec::new();
    for (batch, reply) in group.drain(..) {
        let answer = if let Some(why) = health.down_because() {
            Err(Unwritten::unavailable(why, batch))
        } else if let Some((_, why)) = refused.iter().find(|(game, _)| *game == batch.game_id) {
            Err(Unwritten::refused(StoreError::Rejected(why.clone())))
        } else {
            match commit(pool, &[batch.as_ref()]).await {
                Ok(()) => Ok(()),
                Err(e) if is_transient(&e) => {
                    let why = Arc::new(e);
                    health.down(why.clone());
                    Err(Unwritten::unavailable(why, batch))
                }
                Err(e) => {
                    tracing::error!(game = %batch.game_id, "the database refused a batch: {e}");
                    let why = Arc::new(e);
                    refused.push((batch.game_id.clone(), why.clone()));
                    Err(Unwritten::refused(StoreError::Rejected(why)))
                }
            }
        };
        let _ = reply.send(answer);
    }
}

/// Commits batches in one transaction, on a connection got within
/// [`CONNECT_WAIT`].
async fn commit(pool: &AnyPool, batches: &[&Batch]) -> Result<(), sqlx::Error> {
    // Giving up on the wait is safe: nothing has been written yet.
    let mut conn =
        tokio::time::timeout(CONNECT_WAIT, pool.acquire()).await.map_err(|_| sqlx::Error::PoolTimedOut)??;
    let mut tx = conn.begin().await?;
    write_batches(&mut tx, batches).await?;
    tx.commit().await
}

/// While the database is down, asks it every [`PROBE_EVERY`] whether it
/// answers; ends when the pool closes.
async fn probe(pool: AnyPool, backend: Backend, health: Arc<Health>) {
    let mut up = health.up.subscribe();
    let watch = async {
        loop {
            if up.wait_for(|up| !*up).await.is_err() {
                return;
            }
            loop {
                tokio::time::sleep(PROBE_EVERY).await;
                match ping(&pool, backend).await {
                    Ok(()) => break,
                    Err(e) => tracing::debug!("the database still does not answer: {e}"),
                }
            }
            *health.why.lock().unwrap_or_else(|e| e.into_inner()) = None;
            health.up.send_replace(true);
            tracing::info!("the database answers again: writes resume");
        }
    };
    let _ = pool.close_event().do_until(watch).await;
}

/// Whether the database would take a write now: Postgres answers a query;
/// SQLite gives its write lock (an SQLite file locked by another writer, or
/// gone read-only, still answers queries).
async fn ping(pool: &AnyPool, backend: Backend) -> Result<(), sqlx::Error> {
    let mut conn =
        tokio::time::timeout(CONNECT_WAIT, pool.acquire()).await.map_err(|_| sqlx::Error::PoolTimedOut)??;
    match backend {
        Backend::Postgres => sqlx::query("SELECT 1").execute(&mut *conn).await.map(drop),
        Backend::Sqlite => {
            sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
            if let Err(e) = sqlx::query("ROLLBACK").execute(&mut *conn).await {
                // Never hand the pool a connection inside a transaction.
                let _ = conn.close().await;
                return Err(e);
            }
            Ok(())
        }
    }
}

fn json<T: serde::Serialize>(value: &T) -> String {
    // Our own types always serialise.
    serde_json::to_string(value).unwrap_or_default()
}

/// Writes batches inside a transaction, merged: one multi-row statement for
/// all their game rows, one for their inputs, one for their events (per
/// [`CHUNKS`] rows). A statement costs a round trip (Postgres) or a
/// hop to the database thread (SQLite), so merging is what makes the group
/// commit pay off.
pub(super) async fn write_batches(tx: &mut Transaction<'_, Any>, batches: &[&Batch]) -> Result<(), sqlx::Error> {
    let now = super::now_us();
    // Each game's row once, as its last batch left it (with the settings of
    // the batch that first wrote it, if that one is here).
    let mut games: Vec<(&str, &super::GameRow, Option<&String>)> = Vec::new();
    for b in batches {
        match games.iter_mut().find(|(id, _, _)| *id == b.game_id) {
            Some(entry) => {
                entry.1 = &b.game;
                entry.2 = entry.2.or(b.settings.as_ref());
            }
            None => games.push((&b.game_id, &b.game, b.settings.as_ref())),
        }
    }
    insert_rows(
        tx,
        "games (id, name, preset, source, state, settings, created_us, updated_us, finished_us, hands, scores, \
         manager, last_seq, rng_pos)",
        14,
        " ON CONFLICT (id) DO UPDATE SET state = excluded.state, settings = COALESCE(excluded.settings, games.settings), \
         updated_us = excluded.updated_us, finished_us = excluded.finished_us, hands = excluded.hands, \
         scores = excluded.scores, manager = excluded.manager, last_seq = excluded.last_seq, rng_pos = excluded.rng_pos",
        &games,
        |q, (id, g, settings)| {
            q.bind(*id)
                .bind(&g.name)
                .bind(&g.preset)
                .bind(g.source.as_str())
                .bind(g.state.as_str())
                .bind(settings.cloned())
                .bind(g.created_us)
                .bind(now)
                .bind(g.finished_us)
                .bind(g.hands)
                .bind(json(&g.scores))
                .bind(g.manager)
                .bind(g.last_seq)
                .bind(g.rng_pos.to_string())
        },
    )
    .await?;
    for b in batches {
        for change in &b.seats {
            match change {
                SeatChange::Set(s) => {
                    sqlx::query(
                        "INSERT INTO seats (game_id, seat, name, robot, token_sha256, pause_request, penalty, user_id) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (game_id, seat) DO UPDATE SET \
                         name = excluded.name, robot = excluded.robot, token_sha256 = excluded.token_sha256, \
                         pause_request = excluded.pause_request, penalty = excluded.penalty, user_id = excluded.user_id",
                    )
                    .bind(&b.game_id)
                    .bind(s.seat)
                    .bind(&s.name)
                    .bind(&s.robot)
                    .bind(&s.token_sha256)
                    .bind(s.pause_request)
                    .bind(s.penalty)
                    .bind(s.user_id)
                    .execute(&mut **tx)
                    .await?;
                }
                SeatChange::Free(seat) => {
                    sqlx::query("DELETE FROM seats WHERE game_id = $1 AND seat = $2")
                        .bind(&b.game_id)
                        .bind(*seat)
                        .execute(&mut **tx)
                        .await?;
                }
            }
        }
    }
    let inputs: Vec<(&str, &InputRow)> =
        batches.iter().flat_map(|b| b.inputs.iter().map(|r| (b.game_id.as_str(), r))).collect();
    insert_rows(tx, "inputs (game_id, n, seq, body)", 4, "", &inputs, |q, (id, r)| {
        q.bind(*id).bind(r.n).bind(r.seq).bind(json(&r.input))
    })
    .await?;
    let events: Vec<(&str, &EventRow)> =
        batches.iter().flat_map(|b| b.events.iter().map(|r| (b.game_id.as_str(), r))).collect();
    insert_rows(
        tx,
        "events (game_id, seq, at_us, hand, audience, audience_player, body)",
        7,
        "",
        &events,
        |q, (id, r)| {
            let (kind, player) = r.audience_columns();
            q.bind(*id).bind(r.seq).bind(r.at_us).bind(r.hand).bind(kind).bind(player).bind(&r.body)
        },
    )
    .await?;
    for b in batches {
        for h in &b.hands {
            write_hand(tx, &b.game_id, h).await?;
        }
    }
    Ok(())
}

/// Writes a finished hand's rows: the hand, each player's part, the payments.
async fn write_hand(tx: &mut Transaction<'_, Any>, game_id: &str, h: &super::HandRow) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO hands (game_id, hand, round, east, outcome, winners, how, discarder, dice, first_seq, \
         last_seq, started_us, ended_us, settlement) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
    )
    .bind(game_id)
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
    .execute(&mut **tx)
    .await?;
    insert_rows(
        tx,
        "hand_players (game_id, hand, player, name, wind, won, points, score, delta, total)",
        10,
        "",
        &h.players,
        |q, p| {
            // An owned id: the binder must outlive any borrow (hands are rare).
            q.bind(game_id.to_string())
                .bind(h.hand)
                .bind(p.player)
                .bind(&p.name)
                .bind(&p.wind)
                .bind(i64::from(p.won))
                .bind(p.points)
                .bind(&p.score)
                .bind(p.delta)
                .bind(p.total)
        },
    )
    .await?;
    let numbered: Vec<(i64, &super::PaymentRow)> = (1..).zip(&h.payments).collect();
    insert_rows(
        tx,
        "payments (game_id, hand, n, from_player, to_player, amount, kind)",
        7,
        "",
        &numbered,
        |q, (n, p)| {
            q.bind(game_id.to_string())
                .bind(h.hand)
                .bind(*n)
                .bind(p.from_player)
                .bind(p.to_player)
                .bind(p.amount)
                .bind(&p.kind)
        },
    )
    .await
}

/// Inserts rows with multi-row `INSERT`s of `columns` parameters per row,
/// each statement ending with `suffix` (an `ON CONFLICT` clause, or nothing).
async fn insert_rows<T>(
    tx: &mut Transaction<'_, Any>,
    into: &str,
    columns: usize,
    suffix: &str,
    rows: &[T],
    bind: impl for<'a> Fn(Query<'a, Any, AnyArguments<'a>>, &'a T) -> Query<'a, Any, AnyArguments<'a>>,
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
        query.execute(&mut **tx).await?;
    }
    Ok(())
}

/// `INSERT INTO {into} VALUES ($1, ..), (..)` for `rows` rows.
fn insert_sql(into: &str, columns: usize, rows: usize) -> String {
    let mut sql = format!("INSERT INTO {into} VALUES ");
    for r in 0..rows {
        sql.push_str(if r == 0 { "(" } else { ", (" });
        for c in 0..columns {
            if c > 0 {
                sql.push_str(", ");
            }
            sql.push_str(&format!("${}", r * columns + c + 1));
        }
        sql.push(')');
    }
    sql
}

#[cfg(test)]
mod tests {
    #[test]
    fn multi_row_inserts_number_their_parameters() {
        assert_eq!(super::insert_sql("t (a, b)", 2, 2), "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)");
    }
}
