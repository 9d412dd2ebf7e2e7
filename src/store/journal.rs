//! The journal: one task that writes every table's batches, committing all
//! the batches waiting at a moment in one transaction (group commit).
//!
//! A table waits for its batch to be committed before it sends the batch's
//! events, so a client never sees an event the store could lose. Grouping
//! keeps the cost of a commit (an fsync, a round trip) shared by every table
//! that wrote meanwhile, which is what lets one SQLite file serve thousands
//! of tables.

use std::time::Duration;

use sqlx::any::AnyArguments;
use sqlx::query::Query;
use sqlx::{Any, AnyPool, Transaction};
use tokio::sync::{mpsc, oneshot};

use super::StoreError;
use super::records::{Batch, EventRow, InputRow, SeatChange};

/// Batches waiting beyond this many make tables wait to hand theirs over.
const QUEUE: usize = 4096;

/// At most this many batches are committed together.
const GROUP: usize = 512;

/// The sizes of multi-row `INSERT`s, largest first. Up to 64 rows of at most
/// 14 parameters stays far under SQLite's limit of 32,766 parameters (and
/// Postgres's 65,535); larger statements measured no faster (`storebench`).
const CHUNKS: [usize; 4] = [64, 16, 4, 1];

/// A batch that failed in a group is tried again alone, this many times.
const ATTEMPTS: usize = 3;

type Reply = oneshot::Sender<Result<(), String>>;

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
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Job")
    }
}

impl Journal {
    /// Starts the journal's `writers` tasks on `pool` (at least one). SQLite
    /// has a single writer anyway; Postgres commits several groups at once,
    /// each on its own connection.
    pub fn start(pool: AnyPool, writers: usize) -> Journal {
        let shards = (0..writers.max(1))
            .map(|_| {
                let (sender, receiver) = mpsc::channel(QUEUE);
                tokio::spawn(run(pool.clone(), receiver));
                sender
            })
            .collect();
        Journal { shards }
    }

    /// The writer of a game's batches.
    fn shard(&self, game_id: &str) -> &mpsc::Sender<Job> {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        game_id.hash(&mut hasher);
        &self.shards[(hasher.finish() % self.shards.len() as u64) as usize]
    }

    /// Writes a batch; returns once it is committed, or why it could not be.
    pub async fn write(&self, batch: Batch) -> Result<(), StoreError> {
        let (reply, done) = oneshot::channel();
        let shard = self.shard(&batch.game_id);
        shard.send(Job::Write(Box::new(batch), reply)).await.map_err(|_| StoreError::Closed)?;
        match done.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(why)) => Err(StoreError::Database(sqlx::Error::Protocol(why))),
            Err(_) => Err(StoreError::Closed),
        }
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

async fn run(pool: AnyPool, mut receiver: mpsc::Receiver<Job>) {
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
        commit_group(&pool, &mut group).await;
        if let Some(reply) = stop.take() {
            let _ = reply.send(());
            return;
        }
    }
}

/// Commits a group in one transaction; if that fails, each batch alone, so
/// that one bad batch fails only its own table.
async fn commit_group(pool: &AnyPool, group: &mut Vec<(Box<Batch>, Reply)>) {
    if group.is_empty() {
        return;
    }
    let together = async {
        let mut tx = pool.begin().await?;
        let batches: Vec<&Batch> = group.iter().map(|(b, _)| b.as_ref()).collect();
        write_batches(&mut tx, &batches).await?;
        tx.commit().await
    };
    match together.await {
        Ok(()) => {
            for (_, reply) in group.drain(..) {
                let _ = reply.send(Ok(()));
            }
        }
        Err(e) => {
            tracing::warn!(
                "the journal's group commit of {} batches failed ({e}); writing them one by one",
                group.len()
            );
            for (batch, reply) in group.drain(..) {
                let _ = reply.send(commit_alone(pool, &batch).await);
            }
        }
    }
}

async fn commit_alone(pool: &AnyPool, batch: &Batch) -> Result<(), String> {
    let mut delay = Duration::from_millis(50);
    let mut last = String::new();
    for _ in 0..ATTEMPTS {
        let attempt = async {
            let mut tx = pool.begin().await?;
            write_batches(&mut tx, &[batch]).await?;
            tx.commit().await
        };
        match attempt.await {
            Ok(()) => return Ok(()),
            Err(e) => {
                last = e.to_string();
                tracing::error!(game = %batch.game_id, "the journal could not write a batch: {last}");
                tokio::time::sleep(delay).await;
                delay *= 4;
            }
        }
    }
    Err(last)
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
async fn write_batches(tx: &mut Transaction<'_, Any>, batches: &[&Batch]) -> Result<(), sqlx::Error> {
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
                .bind(&g.source)
                .bind(&g.state)
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
                        "INSERT INTO seats (game_id, seat, name, robot, token_sha256, pause_request, penalty) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (game_id, seat) DO UPDATE SET \
                         name = excluded.name, robot = excluded.robot, token_sha256 = excluded.token_sha256, \
                         pause_request = excluded.pause_request, penalty = excluded.penalty",
                    )
                    .bind(&b.game_id)
                    .bind(s.seat)
                    .bind(&s.name)
                    .bind(&s.robot)
                    .bind(&s.token_sha256)
                    .bind(s.pause_request)
                    .bind(s.penalty)
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
    .bind(&h.outcome)
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
