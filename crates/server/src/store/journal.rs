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
//! - `Err(StoreError::Fenced)`: cluster mode, and the database no longer
//!   gives the batch's table to the epoch the batch carries (see
//!   [`super::cluster`]). Nothing of it was stored, and it never will be.
//!   The other batches of its group are committed without it.
//! - `Err(StoreError::Closed)`: the journal has stopped.
//!
//! One caveat: if the connection is lost during the `COMMIT` itself, the
//! database may have committed what the journal reports as `Unavailable`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};

use super::StoreError;
use super::error::is_transient;
use super::records::Batch;
use super::tail::{Ask, Filing, Tail};
use super::writer::Writer;

/// Batches waiting beyond this many make tables wait to hand theirs over.
const QUEUE: usize = 4096;

/// At most this many batches are committed together.
const GROUP: usize = 512;

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
    /// File these games' rows waiting in SQLite's tail (a reader waits).
    Settle(Vec<String>, oneshot::Sender<Result<(), StoreError>>),
    Stop(oneshot::Sender<()>),
}

/// The journal's handle.
#[derive(Clone, Debug)]
pub struct Journal {
    /// One writer task per shard (on SQLite, per file); a game always goes
    /// to the same one, so its batches are committed in order.
    shards: Vec<mpsc::Sender<Job>>,
    /// Whether the writers keep a log tail (SQLite): without one there is
    /// never anything to file.
    tailed: bool,
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
    /// Starts one task per writer of `writers` (at least one), and the
    /// probe that watches the database while it is unreachable. SQLite has
    /// a writer per file (see [`super::parts`]); Postgres commits several
    /// groups at once, each on its own connection of one writer's pool.
    ///
    /// On SQLite the writer puts moves in the log's tail first (see
    /// [`super::tail`]); on Postgres every row goes to its table at once.
    pub fn start(writers: Vec<Writer>) -> Journal {
        assert!(!writers.is_empty(), "a journal needs a writer");
        let health = Arc::new(Health { up: watch::Sender::new(true), why: Mutex::new(None) });
        let tailed = writers[0].has_tail();
        let shards = writers
            .iter()
            .map(|writer| {
                let (sender, receiver) = mpsc::channel(QUEUE);
                let tail = writer.has_tail().then(Tail::new);
                tokio::spawn(run(writer.clone(), health.clone(), receiver, tail));
                sender
            })
            .collect();
        tokio::spawn(probe(writers, health.clone()));
        Journal { shards, tailed, health }
    }

    /// The writer of a game's batches.
    fn shard(&self, game_id: &str) -> &mpsc::Sender<Job> {
        &self.shards[self.shard_of(game_id)]
    }

    /// The number of the writer of a game's batches: on SQLite, the part
    /// (file) the game lives in.
    fn shard_of(&self, game_id: &str) -> usize {
        super::parts::part_of(game_id, self.shards.len())
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

    /// Files the rows of these games still in SQLite's tail into `inputs`
    /// and `events`, so that a read of them that follows sees them all
    /// (nothing to do on Postgres, or for games with nothing waiting).
    pub async fn file_tail(&self, game_ids: &[String]) -> Result<(), StoreError> {
        // Not through the writers on Postgres: the answer would wait for
        // whatever group each is committing, for nothing.
        if !self.tailed {
            return Ok(());
        }
        let mut answers = Vec::new();
        for (i, shard) in self.shards.iter().enumerate() {
            let mine: Vec<String> = game_ids.iter().filter(|id| self.shard_of(id) == i).cloned().collect();
            if mine.is_empty() {
                continue;
            }
            let (reply, done) = oneshot::channel();
            shard.send(Job::Settle(mine, reply)).await.map_err(|_| StoreError::Closed)?;
            answers.push(done);
        }
        for done in answers {
            done.await.unwrap_or(Err(StoreError::Closed))?;
        }
        Ok(())
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

async fn run(writer: Writer, health: Arc<Health>, mut receiver: mpsc::Receiver<Job>, mut tail: Option<Tail>) {
    let mut group: Vec<(Box<Batch>, Reply)> = Vec::with_capacity(GROUP);
    let mut asked: Vec<String> = Vec::new();
    let mut settled: Vec<oneshot::Sender<Result<(), StoreError>>> = Vec::new();
    let mut stop = None;
    while let Some(job) = receiver.recv().await {
        let mut next = Some(job);
        // Take whatever else is already waiting.
        while let Some(job) = next.take().or_else(|| if group.len() < GROUP { receiver.try_recv().ok() } else { None })
        {
            match job {
                Job::Write(batch, reply) => group.push((batch, reply)),
                Job::Settle(games, reply) => {
                    asked.extend(games);
                    settled.push(reply);
                }
                Job::Stop(reply) => {
                    stop = Some(reply);
                    break;
                }
            }
        }
        let ask = if stop.is_some() { Ask::Everything } else { Ask::Games(&asked) };
        let answer = commit_group(&writer, &health, &mut group, tail.as_mut(), ask).await;
        for reply in settled.drain(..) {
            let _ = reply.send(answer.as_ref().map(|_| ()).map_err(same_again));
        }
        asked.clear();
        if let Some(reply) = stop.take() {
            let _ = reply.send(());
            return;
        }
    }
}

/// Commits a group in one transaction, filing besides what `ask` asks for
/// from the tail. A transient failure fails the whole group at once; a
/// permanent one is looked for batch by batch, so that a bad batch fails
/// only its own table. Returns whether what was asked for is filed.
async fn commit_group(
    writer: &Writer,
    health: &Health,
    group: &mut Vec<(Box<Batch>, Reply)>,
    mut tail: Option<&mut Tail>,
    ask: Ask<'_>,
) -> Result<(), StoreError> {
    let asks_anything = tail.as_ref().is_some_and(|t| t.holds_any(ask));
    if group.is_empty() && !asks_anything {
        return Ok(());
    }
    if let Some(why) = health.down_because() {
        for (batch, reply) in group.drain(..) {
            let _ = reply.send(Err(Unwritten::unavailable(why.clone(), batch)));
        }
        return Err(StoreError::Unavailable(why));
    }
    let started = std::time::Instant::now();
    // (Counted first: the tail takes the rows it keeps out of the batches.)
    let rows = group.iter().map(|(b, _)| b.rows()).sum();
    let committed = commit_planned(writer, group, tail.as_deref_mut(), ask).await;
    match committed {
        Ok(fenced) if !fenced.is_empty() => {
            // Nothing was written: the fenced games' batches are refused,
            // and the others committed without them.
            crate::metrics::fenced_writes(fenced.len());
            let mut kept = Vec::with_capacity(group.len());
            for (batch, reply) in group.drain(..) {
                if fenced.contains(&batch.game_id) {
                    tracing::warn!(table = %batch.game_id, "a write refused: this node no longer plays the table");
                    let error = StoreError::Fenced { game: batch.game_id.clone() };
                    let _ = reply.send(Err(Unwritten::refused(error)));
                } else {
                    kept.push((batch, reply));
                }
            }
            *group = kept;
            Box::pin(commit_group(writer, health, group, tail, ask)).await
        }
        Ok(_) => {
            crate::metrics::store_commit(started.elapsed(), group.len(), rows);
            for (_, reply) in group.drain(..) {
                let _ = reply.send(Ok(()));
            }
            Ok(())
        }
        Err(e) if is_transient(&e) => {
            let why = Arc::new(e);
            health.down(why.clone());
            for (batch, reply) in group.drain(..) {
                let _ = reply.send(Err(Unwritten::unavailable(why.clone(), batch)));
            }
            Err(StoreError::Unavailable(why))
        }
        Err(e) if group.is_empty() => {
            tracing::error!("the database refused the filing of the log's tail: {e}");
            Err(StoreError::Rejected(Arc::new(e)))
        }
        Err(e) => {
            if group.len() == 1 {
                let (batch, reply) = group.remove(0);
                tracing::error!(game = %batch.game_id, "the database refused a batch: {e}");
                let _ = reply.send(Err(Unwritten::refused(StoreError::Rejected(Arc::new(e)))));
            } else {
                tracing::warn!(
                    "the database refused a group of {} batches ({e}); committing them one by one",
                    group.len()
                );
                isolate(writer, health, group, tail.as_deref_mut()).await;
            }
            // What was asked for, alone.
            Box::pin(commit_group(writer, health, group, tail, ask)).await
        }
    }
}

/// The same failure again: of [`commit_group`] for each reader that waited
/// on it, of a game's batch for its later batches in [`isolate`] (they fail
/// only as unavailable, refused or fenced).
fn same_again(e: &StoreError) -> StoreError {
    match e {
        StoreError::Unavailable(why) => StoreError::Unavailable(why.clone()),
        StoreError::Rejected(why) => StoreError::Rejected(why.clone()),
        StoreError::Fenced { game } => StoreError::Fenced { game: game.clone() },
        _ => StoreError::Closed,
    }
}

/// Commits `group`'s batches in one transaction, their inputs and events
/// where the tail's plan puts them (all at once without a tail); on success
/// the tail takes in what was put there. Returns the games whose fence
/// failed (then nothing was written).
async fn commit_planned(
    writer: &Writer,
    group: &mut [(Box<Batch>, Reply)],
    tail: Option<&mut Tail>,
    ask: Ask<'_>,
) -> Result<Vec<String>, sqlx::Error> {
    let now = std::time::Instant::now();
    let batches: Vec<&Batch> = group.iter().map(|(b, _)| b.as_ref()).collect();
    let Some(tail) = tail else {
        return writer.commit(&batches, &Filing::at_once(batches.len()), None).await;
    };
    let filing = tail.plan(&batches, ask, now);
    let fenced = writer.commit(&batches, &filing, Some(tail)).await?;
    if !fenced.is_empty() {
        return Ok(fenced);
    }
    let mut batches: Vec<&mut Batch> = group.iter_mut().map(|(b, _)| b.as_mut()).collect();
    tail.committed(filing, &mut batches, now);
    Ok(fenced)
}

/// Commits each batch of a refused group alone. A game whose batch is
/// refused has its later batches of the group refused with it (they follow
/// from it); a transient failure meanwhile fails the rest as unavailable.
async fn isolate(writer: &Writer, health: &Health, group: &mut Vec<(Box<Batch>, Reply)>, mut tail: Option<&mut Tail>) {
    let mut refused: Vec<(String, StoreError)> = Vec::new();
    for (batch, reply) in group.drain(..) {
        if let Some(why) = health.down_because() {
            let _ = reply.send(Err(Unwritten::unavailable(why, batch)));
            continue;
        }
        if let Some((_, why)) = refused.iter().find(|(game, _)| *game == batch.game_id) {
            let _ = reply.send(Err(Unwritten::refused(same_again(why))));
            continue;
        }
        let mut alone = [(batch, reply)];
        let committed = commit_planned(writer, &mut alone, tail.as_deref_mut(), Ask::Games(&[])).await;
        let [(batch, reply)] = alone;
        let answer = match committed {
            Ok(fenced) if !fenced.is_empty() => {
                crate::metrics::fenced_writes(1);
                let why = StoreError::Fenced { game: batch.game_id.clone() };
                refused.push((batch.game_id.clone(), same_again(&why)));
                Err(Unwritten::refused(why))
            }
            Ok(_) => Ok(()),
            Err(e) if is_transient(&e) => {
                let why = Arc::new(e);
                health.down(why.clone());
                Err(Unwritten::unavailable(why, batch))
            }
            Err(e) => {
                tracing::error!(game = %batch.game_id, "the database refused a batch: {e}");
                let why = StoreError::Rejected(Arc::new(e));
                refused.push((batch.game_id.clone(), same_again(&why)));
                Err(Unwritten::refused(why))
            }
        };
        let _ = reply.send(answer);
    }
}

/// While the database is down, asks it every [`PROBE_EVERY`] whether it
/// answers (every writer: each SQLite file); ends when the writers close.
async fn probe(writers: Vec<Writer>, health: Arc<Health>) {
    let mut up = health.up.subscribe();
    let watch = async {
        loop {
            if up.wait_for(|up| !*up).await.is_err() {
                return;
            }
            'probe: loop {
                tokio::time::sleep(PROBE_EVERY).await;
                for writer in &writers {
                    if let Err(e) = writer.ping().await {
                        tracing::debug!("the database still does not answer: {e}");
                        continue 'probe;
                    }
                }
                break;
            }
            *health.why.lock().unwrap_or_else(|e| e.into_inner()) = None;
            health.up.send_replace(true);
            tracing::info!("the database answers again: writes resume");
        }
    };
    tokio::select! {
        _ = watch => {}
        _ = writers[0].closed() => {}
    }
}
