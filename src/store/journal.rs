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
use super::records::{Batch, SeatChange};

/// Batches waiting beyond this many make tables wait to hand theirs over.
const QUEUE: usize = 4096;

/// At most this many batches are committed together.
const GROUP: usize = 512;

/// Rows per multi-row `INSERT` (under both databases' parameter limits).
const ROWS_PER_INSERT: usize = 200;

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
    sender: mpsc::Sender<Job>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Job")
    }
}

impl Journal {
    /// Starts the journal's task on `pool`.
    pub fn start(pool: AnyPool) -> Journal {
        let (sender, receiver) = mpsc::channel(QUEUE);
        tokio::spawn(run(pool, receiver));
        Journal { sender }
    }

    /// Writes a batch; returns once it is committed, or why it could not be.
    pub async fn write(&self, batch: Batch) -> Result<(), StoreError> {
        let (reply, done) = oneshot::channel();
        self.sender.send(Job::Write(Box::new(batch), reply)).await.map_err(|_| StoreError::Closed)?;
        match done.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(why)) => Err(StoreError::Database(sqlx::Error::Protocol(why))),
            Err(_) => Err(StoreError::Closed),
        }
    }

    /// Commits everything handed over so far, then stops the task.
    pub async fn stop(&self) {
        let (reply, done) = oneshot::channel();
        if self.sender.send(Job::Stop(reply)).await.is_ok() {
            let _ = done.await;
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
        for (batch, _) in group.iter() {
            write_batch(&mut tx, batch).await?;
        }
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
            write_batch(&mut tx, batch).await?;
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

/// Writes one batch inside a transaction.
async fn write_batch(tx: &mut Transaction<'_, Any>, b: &Batch) -> Result<(), sqlx::Error> {
    let g = &b.game;
    let now = super::now_us();
    match &b.settings {
        Some(settings) => {
            sqlx::query(
                "INSERT INTO games (id, name, preset, source, state, settings, created_us, updated_us, \
                 finished_us, hands, scores, manager, last_seq, rng_pos) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) \
                 ON CONFLICT (id) DO UPDATE SET name = excluded.name, preset = excluded.preset, \
                 source = excluded.source, state = excluded.state, settings = excluded.settings, \
                 updated_us = excluded.updated_us, finished_us = excluded.finished_us, hands = excluded.hands, \
                 scores = excluded.scores, manager = excluded.manager, last_seq = excluded.last_seq, \
                 rng_pos = excluded.rng_pos",
            )
            .bind(&b.game_id)
            .bind(&g.name)
            .bind(&g.preset)
            .bind(&g.source)
            .bind(&g.state)
            .bind(settings)
            .bind(g.created_us)
            .bind(now)
            .bind(g.finished_us)
            .bind(g.hands)
            .bind(json(&g.scores))
            .bind(g.manager)
            .bind(g.last_seq)
            .bind(g.rng_pos.to_string())
            .execute(&mut **tx)
            .await?;
        }
        None => {
            sqlx::query(
                "UPDATE games SET state = $2, updated_us = $3, finished_us = $4, hands = $5, scores = $6, \
                 manager = $7, last_seq = $8, rng_pos = $9 WHERE id = $1",
            )
            .bind(&b.game_id)
            .bind(&g.state)
            .bind(now)
            .bind(g.finished_us)
            .bind(g.hands)
            .bind(json(&g.scores))
            .bind(g.manager)
            .bind(g.last_seq)
            .bind(g.rng_pos.to_string())
            .execute(&mut **tx)
            .await?;
        }
    }
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
    insert_rows(tx, &b.game_id, "inputs (game_id, n, seq, body)", 4, &b.inputs, |q, r| {
        q.bind(r.n).bind(r.seq).bind(json(&r.input))
    })
    .await?;
    insert_rows(
        tx,
        &b.game_id,
        "events (game_id, seq, at_us, hand, audience, audience_player, body)",
        7,
        &b.events,
        |q, r| {
            let (kind, player) = r.audience_columns();
            q.bind(r.seq).bind(r.at_us).bind(r.hand).bind(kind).bind(player).bind(&r.body)
        },
    )
    .await?;
    for h in &b.hands {
        sqlx::query(
            "INSERT INTO hands (game_id, hand, round, east, outcome, winners, how, discarder, dice, first_seq, \
             last_seq, started_us, ended_us, settlement) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        )
        .bind(&b.game_id)
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
            &b.game_id,
            "hand_players (game_id, hand, player, name, wind, won, points, score, delta, total)",
            10,
            &h.players,
            |q, p| {
                q.bind(h.hand)
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
            &b.game_id,
            "payments (game_id, hand, n, from_player, to_player, amount, kind)",
            7,
            &numbered,
            |q, (n, p)| q.bind(h.hand).bind(*n).bind(p.from_player).bind(p.to_player).bind(p.amount).bind(&p.kind),
        )
        .await?;
    }
    Ok(())
}

/// Inserts a game's rows with multi-row `INSERT`s of `columns` parameters
/// per row, the first of which is the game's id.
async fn insert_rows<T>(
    tx: &mut Transaction<'_, Any>,
    game_id: &str,
    into: &str,
    columns: usize,
    rows: &[T],
    bind: impl for<'a> Fn(Query<'a, Any, AnyArguments<'a>>, &'a T) -> Query<'a, Any, AnyArguments<'a>>,
) -> Result<(), sqlx::Error> {
    for chunk in rows.chunks(ROWS_PER_INSERT) {
        let sql = insert_sql(into, columns, chunk.len());
        let mut query = sqlx::query(&sql);
        for row in chunk {
            query = bind(query.bind(game_id), row);
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
