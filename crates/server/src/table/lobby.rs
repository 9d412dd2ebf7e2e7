//! The lobby: the registry of running tables, and the tables a restart
//! brings back from the store.
//!
//! At start-up the server first asks the lobby which stored games come back
//! ([`Lobby::expect_returning`]: the unfinished ones, and those that ended
//! within [`KEEP_FINISHED`]), then answers requests at once while
//! [`Lobby::recover`] brings them back several at a time. Each table plays
//! as soon as it is back; until then a request for it is told to come back
//! shortly ([`TableError::Recovering`]), not that there is no such table.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use tokio::sync::{Semaphore, watch};

use super::actor::{self, KEEP_FINISHED, OpenError};
use super::recovery::{self, Rebuilt, RecoverError};
use super::{TableCommand, TableError, TableHandle, TableLimits, TableSetup};
use crate::protocol::ws::TableInfo;
use crate::store::{SavedGame, Store, StoreError};

/// How long [`Lobby::shutdown`] waits for the tables.
pub const SHUTDOWN_WAIT: Duration = Duration::from_secs(10);

/// Games read from the store together when a restart brings them back: a
/// group costs four queries, where one game alone costs five.
const READ_TOGETHER: usize = 32;

/// Groups of games being brought back at once: while one group is read, the
/// others' games replay and open.
const GROUPS_AT_ONCE: usize = 3;

/// Times a group is read again when the database cannot be reached, a second
/// apart, before its games count as failed.
const READ_TRIES: u32 = 5;

/// New tables are numbered after the seeds of this many of the games opened
/// last (see [`Lobby::continue_numbering`]).
const RECENT_NUMBERS: i64 = 64;

/// A stored game's seed is taken for one of `--seed`'s numbers when it is at
/// most this far past the number of stored games.
const PLAUSIBLE_NUMBERS: u64 = 1 << 20;

/// The tables of the other nodes (cluster mode): how this node's lobby
/// reaches them. The cluster (`crate::cluster`) provides it; the lobby asks it
/// only for what it does not have itself.
pub trait Elsewhere: Send + Sync + std::fmt::Debug {
    /// This node's id (its lease's, see `store::cluster`).
    fn node_id(&self) -> String;
    /// This node's name (`--node-name`).
    fn node_name(&self) -> &str;
    /// A stand-in for a table another node plays, or why there is none.
    fn find<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<TableHandle, TableError>>;
    /// The public state of the other nodes' tables, as current as they
    /// answer within a moment.
    fn others(&self) -> BoxFuture<'_, Vec<TableInfo>>;
    /// Opens a new table on the least-loaded live node when that is another
    /// one: its stand-in, or the set-up back to open here.
    fn place(&self, setup: TableSetup) -> BoxFuture<'_, Result<Result<TableHandle, OpenError>, TableSetup>>;
}

/// Every table of the server, by id. The locks are only ever held to look up
/// or insert a handle (or an id), never across an `.await`.
#[derive(Debug)]
pub struct Lobby {
    tables: RwLock<HashMap<String, TableHandle>>,
    /// Stored games on their way back after a restart.
    returning: RwLock<HashSet<String>>,
    recovery: Mutex<Recovery>,
    /// True while [`Lobby::recover`] runs (the shutdown waits for it).
    recovering: watch::Sender<bool>,
    /// The server is stopping: recovery takes no more games.
    stopping: AtomicBool,
    numbered: AtomicU64,
    store: Store,
    /// The limits every table applies to its clients.
    limits: TableLimits,
    /// Cluster mode: the other nodes' tables.
    elsewhere: std::sync::OnceLock<std::sync::Arc<dyn Elsewhere>>,
    /// What clients hold and spend (a table placed here by another node
    /// pays for its robots' hands here, in the cluster's ledger).
    quotas: std::sync::Arc<crate::limits::Quotas>,
}

/// How the recovery of the stored games stands (at start-up).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RecoveryProgress {
    /// The stored games to bring back: those not over, and those that ended
    /// within [`KEEP_FINISHED`] before the start.
    pub total: usize,
    /// Those back as tables.
    pub recovered: usize,
    /// Those that could not be brought back (left in the store as they are).
    pub failed: usize,
    /// Whether it is over: every game back or failed (or the server is
    /// stopping). A lobby with nothing to recover is done.
    pub done: bool,
    /// Seconds since it began, or that it took.
    pub seconds: f64,
}

/// The lobby's record of the recovery.
#[derive(Debug, Default)]
struct Recovery {
    total: usize,
    /// Unfinished games back.
    resumed: usize,
    /// Finished games back (for a while).
    finished: usize,
    failed: usize,
    /// Expected, not yet over.
    pending: bool,
    began: Option<Instant>,
    took: Option<Duration>,
}

/// How a game of the recovery ended.
#[derive(Clone, Copy, Debug)]
enum Back {
    /// An unfinished game, back in play.
    Resumed,
    /// A finished game, back for a while.
    Finished,
    /// Not back: it does not read, does not replay, or is gone.
    Failed,
}

/// The stored games a restart brings back ([`Lobby::expect_returning`]),
/// for [`Lobby::recover`].
#[derive(Debug, Default)]
pub struct Returning {
    /// Not over, oldest first.
    unfinished: Vec<String>,
    /// Over within [`KEEP_FINISHED`], in the order they ended.
    finished: Vec<String>,
}

impl Returning {
    /// How many games come back.
    pub fn len(&self) -> usize {
        self.unfinished.len() + self.finished.len()
    }

    /// True when none does.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Lobby {
    /// An empty lobby whose tables keep their games in `store` and apply
    /// `limits` to their clients.
    pub fn new(store: Store, limits: TableLimits) -> Lobby {
        Lobby {
            tables: RwLock::default(),
            returning: RwLock::default(),
            recovery: Mutex::default(),
            recovering: watch::Sender::new(false),
            stopping: AtomicBool::new(false),
            numbered: Default::default(),
            store,
            limits,
            elsewhere: std::sync::OnceLock::new(),
            quotas: crate::limits::Quotas::unlimited(),
        }
    }

    /// The lobby of a server whose clients' quotas are `quotas`.
    pub fn with_quotas(mut self, quotas: std::sync::Arc<crate::limits::Quotas>) -> Lobby {
        self.quotas = quotas;
        self
    }

    /// What clients hold and spend.
    pub fn quotas(&self) -> &std::sync::Arc<crate::limits::Quotas> {
        &self.quotas
    }

    /// Reads the budget of games of robots alone an admin stored (if any)
    /// and puts it in force here (the flags' if none is stored).
    pub async fn refresh_robot_budget(&self) -> Result<Option<crate::store::budget::StoredBudget>, StoreError> {
        let stored = self.store.stored_robot_budget().await?;
        self.quotas.set_robot_budget(stored.as_ref().map(|s| crate::limits::RobotBudget {
            hands_per_hour: s.hands_per_hour,
            hands_per_day: s.hands_per_day,
            kept_for: std::time::Duration::from_secs(s.kept_for_s),
        }));
        Ok(stored)
    }

    /// Forgets the stored games of robots alone that have not changed for
    /// the budget's time and that nobody keeps (none this node plays);
    /// how many.
    pub async fn forget_old_robot_games(&self) -> Result<u64, StoreError> {
        let kept_for = self.quotas.robot_budget().kept_for;
        let before_us = crate::store::now_us().saturating_sub(i64::try_from(kept_for.as_micros()).unwrap_or(i64::MAX));
        let mut forgotten = 0;
        loop {
            let old = self.store.old_robot_games(before_us).await?;
            let full = old.len() as i64 >= crate::store::budget::FORGET_AT_ONCE;
            let old: Vec<String> = old.into_iter().filter(|id| !self.holds(id)).collect();
            forgotten += self.store.forget_games(&old).await?;
            if !full || old.is_empty() {
                return Ok(forgotten);
            }
        }
    }

    /// Joins the lobby to a cluster: tables it does not have are looked for
    /// on the other nodes, and its own are owned (fenced) in the store.
    pub fn join(&self, elsewhere: std::sync::Arc<dyn Elsewhere>) {
        let _ = self.elsewhere.set(elsewhere);
    }

    /// The name of this node, in cluster mode.
    pub fn node_name(&self) -> Option<String> {
        self.elsewhere.get().map(|e| e.node_name().to_string())
    }

    /// The store the tables write to.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Numbers tables in the order they are opened, from 0 or from where
    /// [`Lobby::continue_numbering`] says (seeds derive from it).
    pub fn next_number(&self) -> u64 {
        self.numbered.fetch_add(1, Ordering::Relaxed)
    }

    /// Numbers new tables after the games already stored (at start-up), so
    /// that under `--seed` (table n seeded `seed + n`) a restart never deals
    /// a stored table's walls again: after the count of games opened at
    /// tables of this server, and after the numbers the seeds of the last
    /// ones opened carry under `seed` (a table whose opening failed for want
    /// of the store took a number that no stored game has, so the count
    /// alone could fall behind). Returns the next number.
    pub async fn continue_numbering(&self, seed: Option<u64>) -> Result<u64, StoreError> {
        #[derive(serde::Deserialize)]
        struct Seeded {
            seed: u64,
        }
        let (count, recent) = self.store.live_games(RECENT_NUMBERS).await?;
        let count = u64::try_from(count).unwrap_or(0);
        let after_recent = seed.map_or(0, |base| {
            recent
                .iter()
                .filter_map(|settings| serde_json::from_str::<Seeded>(settings).ok())
                .map(|s| s.seed.wrapping_sub(base))
                // A seed drawn at random (no `--seed`, or another) is no number.
                .filter(|&n| n <= count.saturating_add(PLAUSIBLE_NUMBERS))
                .map(|n| n + 1)
                .max()
                .unwrap_or(0)
        });
        let next = count.max(after_recent);
        self.numbered.fetch_max(next, Ordering::Relaxed);
        Ok(next)
    }

    /// Opens a new table as `setup` says (robots seated, the game started if
    /// asked), written to the store in one batch first; returns its handle.
    /// A set-up the table refuses stores nothing.
    pub async fn open(&self, setup: TableSetup) -> Result<TableHandle, OpenError> {
        let id = uuid::Uuid::new_v4().simple().to_string();
        // Cluster mode: the table is this node's (epoch 1) before anything of it is written.
        // (Counted as on its way meanwhile, so that the cluster's check of
        // what this node plays does not take it for a table that closed.)
        let owner = self.elsewhere.get().map(|e| e.node_id());
        if let Some(node) = &owner {
            self.expect_taking(std::slice::from_ref(&id));
            let owned = self.store.own_new_table(&id, node).await;
            match owned {
                Ok(epoch) => self.store.fence(&id, epoch),
                Err(e) => {
                    self.came_back_quietly(&id);
                    return Err(e.into());
                }
            }
        }
        let spawned = actor::spawn(id.clone(), setup, self.store.clone(), self.limits).await;
        if let Ok(handle) = &spawned {
            self.insert(handle.clone());
        }
        if owner.is_some() {
            self.came_back_quietly(&id);
            if spawned.is_err() {
                self.store.unfence(&id);
                let _ = self.store.forget_table(&id, 1).await;
            }
        }
        spawned
    }

    /// Opens a new table as [`Lobby::open`] does, on this node or (cluster
    /// mode) on the least-loaded live node.
    pub async fn open_anywhere(&self, setup: TableSetup) -> Result<TableHandle, OpenError> {
        let setup = match self.elsewhere.get() {
            Some(elsewhere) => match elsewhere.place(setup).await {
                Ok(placed) => return placed,
                Err(setup) => setup,
            },
            None => setup,
        };
        self.open(setup).await
    }

    fn insert(&self, handle: TableHandle) {
        let mut tables = self.tables.write().unwrap_or_else(|e| e.into_inner());
        // Forget tables that have closed (finished games nobody watches).
        tables.retain(|_, h| !h.is_closed());
        tables.insert(handle.id.clone(), handle);
    }

    /// Reads which stored games a restart brings back, before the server
    /// answers anything: every game not over, and every game that ended at
    /// a table of this server within [`KEEP_FINISHED`] (its table stays that
    /// long, as when nobody watches a finished game). From now until it is
    /// back, a request for one of them is answered
    /// [`TableError::Recovering`], and [`Lobby::recovery`] says recovery is
    /// not done. [`Lobby::recover`] brings them back.
    pub async fn expect_returning(&self) -> Result<Returning, StoreError> {
        let unfinished = self.store.unfinished_games().await?;
        let since = crate::store::now_us() - i64::try_from(KEEP_FINISHED.as_micros()).unwrap_or(i64::MAX);
        let finished = self.store.recently_finished_games(since).await?;
        let returning = Returning { unfinished, finished };
        self.returning
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .extend(returning.unfinished.iter().chain(&returning.finished).cloned());
        let mut recovery = self.recovery.lock().unwrap_or_else(|e| e.into_inner());
        recovery.total += returning.len();
        // With nothing to bring back the server is ready at once, not once
        // the recovery task first runs (a `/readyz` could come between).
        if !returning.is_empty() {
            recovery.pending = true;
        }
        Ok(returning)
    }

    /// Brings back the games [`Lobby::expect_returning`] read, several at
    /// once: they are read from the store in groups, each game replayed on a
    /// blocking thread (as many at a time as the machine has cores), and
    /// each table joins the lobby, and plays, as soon as it is back. A game
    /// that cannot be rebuilt is reported and left in the store as it is.
    /// Logs how many came back and how long it took; returns the same.
    pub async fn recover(&self, returning: Returning) -> RecoveryProgress {
        self.recovering.send_replace(true);
        let began = Instant::now();
        self.recovery.lock().unwrap_or_else(|e| e.into_inner()).began = Some(began);
        let cpus = Semaphore::new(std::thread::available_parallelism().map_or(2, |n| n.get()));
        let Returning { unfinished, finished } = returning;
        // The unfinished games first: people wait for them.
        let games: Vec<(String, bool)> =
            unfinished.into_iter().map(|id| (id, false)).chain(finished.into_iter().map(|id| (id, true))).collect();
        let groups: Vec<Vec<(String, bool)>> = games.chunks(READ_TOGETHER).map(<[_]>::to_vec).collect();
        futures_util::stream::iter(groups)
            .for_each_concurrent(GROUPS_AT_ONCE, |group| self.recover_group(group, &cpus))
            .await;
        let took = began.elapsed();
        let (resumed, finished, failed) = {
            let mut recovery = self.recovery.lock().unwrap_or_else(|e| e.into_inner());
            recovery.took = Some(took);
            recovery.pending = false;
            (recovery.resumed, recovery.finished, recovery.failed)
        };
        // Whatever recovery did not reach (the server is stopping) is no
        // longer on its way.
        self.returning.write().unwrap_or_else(|e| e.into_inner()).clear();
        self.recovering.send_replace(false);
        crate::metrics::recovery_done(resumed, took);
        let seconds = took.as_secs_f64();
        if resumed + finished + failed > 0 {
            tracing::info!(
                finished,
                failed,
                "{resumed} unfinished games resumed in {seconds:.2} s ({finished} finished tables back for a while, \
                 {failed} games could not be recovered)"
            );
        }
        self.recovery()
    }

    /// Reads a group of games and brings each back.
    async fn recover_group(&self, group: Vec<(String, bool)>, cpus: &Semaphore) {
        if self.stopping.load(Ordering::SeqCst) {
            return;
        }
        let ids: Vec<String> = group.iter().map(|(id, _)| id.clone()).collect();
        let loaded = match self.read_group(&ids).await {
            Ok(loaded) => loaded,
            Err(e) => {
                tracing::error!("cannot read {} stored games to recover them: {e}", ids.len());
                for (id, _) in &group {
                    self.came_back(id, Back::Failed);
                }
                return;
            }
        };
        let games = group.iter().zip(loaded).map(|((id, finished), game)| self.bring_back(id, *finished, game, cpus));
        futures_util::future::join_all(games).await;
    }

    /// A group of games as [`Store::load_games_resuming`] reads them, read
    /// again while the database cannot be reached ([`READ_TRIES`] times).
    async fn read_group(&self, ids: &[String]) -> Result<Vec<Result<Option<SavedGame>, StoreError>>, StoreError> {
        let mut tries = 1;
        loop {
            match self.store.load_games_resuming(ids).await {
                Err(StoreError::Unavailable(e)) if tries < READ_TRIES && !self.stopping.load(Ordering::SeqCst) => {
                    tracing::warn!("the store is unavailable ({e}): reading games to recover again in a second");
                    tries += 1;
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                read => return read,
            }
        }
    }

    /// Rebuilds one stored game as a running table and adds it to the lobby.
    async fn bring_back(
        &self,
        id: &str,
        finished: bool,
        game: Result<Option<SavedGame>, StoreError>,
        cpus: &Semaphore,
    ) {
        let handle = match game {
            // Gone since it was listed: nothing to bring back.
            Ok(None) => return self.came_back(id, Back::Failed),
            Ok(Some(_)) if self.stopping.load(Ordering::SeqCst) => return,
            Ok(Some(saved)) => {
                let recovering = self.recovering.subscribe();
                recovery::recover(saved, self.store.clone(), self.limits, cpus, recovering).await.map_err(corrupt)
            }
            Err(e) => Err(e),
        };
        match handle {
            Ok(handle) => {
                self.insert(handle);
                self.came_back(id, if finished { Back::Finished } else { Back::Resumed });
            }
            Err(e) => {
                match e {
                    StoreError::Corrupt { game, why } => tracing::error!("cannot recover game {game}: {why}"),
                    e => tracing::error!("cannot recover game {id}: {e}"),
                }
                self.came_back(id, Back::Failed);
            }
        }
    }

    /// Counts a game of the recovery as back (its table is in the lobby
    /// already) or failed: either way it is no longer on its way.
    fn came_back(&self, id: &str, back: Back) {
        self.returning.write().unwrap_or_else(|e| e.into_inner()).remove(id);
        let mut recovery = self.recovery.lock().unwrap_or_else(|e| e.into_inner());
        match back {
            Back::Resumed => recovery.resumed += 1,
            Back::Finished => recovery.finished += 1,
            Back::Failed => recovery.failed += 1,
        }
    }

    /// How the recovery of the stored games stands.
    pub fn recovery(&self) -> RecoveryProgress {
        let recovery = self.recovery.lock().unwrap_or_else(|e| e.into_inner());
        let seconds = match (recovery.took, recovery.began) {
            (Some(took), _) => took.as_secs_f64(),
            (None, Some(began)) => began.elapsed().as_secs_f64(),
            (None, None) => 0.0,
        };
        RecoveryProgress {
            total: recovery.total,
            recovered: recovery.resumed + recovery.finished,
            failed: recovery.failed,
            done: !recovery.pending,
            seconds,
        }
    }

    /// Opens a table on a stored game already rebuilt from its inputs (a
    /// loaded game file: `game_file::load`) and adds it to the
    /// lobby. A game that cannot be played on is `StoreError::Corrupt`.
    pub async fn reopen(&self, rebuilt: Rebuilt) -> Result<TableHandle, StoreError> {
        let Some(elsewhere) = self.elsewhere.get() else {
            let handle = recovery::reopen(rebuilt, self.store.clone(), self.limits).await.map_err(corrupt)?;
            self.insert(handle.clone());
            return Ok(handle);
        };
        // Cluster mode: this node's (on its way meanwhile, as in `open`).
        let id = rebuilt.id.clone();
        self.expect_taking(std::slice::from_ref(&id));
        let reopened = async {
            let epoch = self.store.own_table(&id, &elsewhere.node_id()).await?;
            self.store.fence(&id, epoch);
            let handle = recovery::reopen(rebuilt, self.store.clone(), self.limits).await.map_err(corrupt)?;
            self.insert(handle.clone());
            Ok(handle)
        }
        .await;
        self.came_back_quietly(&id);
        reopened
    }

    /// Stops every table (when the server stops): recovery takes no more
    /// games and the games it is bringing back are waited for, then each
    /// table writes what it has pending to the store and ends. Waits for
    /// them at most [`SHUTDOWN_WAIT`].
    pub async fn shutdown(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        let mut recovering = self.recovering.subscribe();
        if tokio::time::timeout(SHUTDOWN_WAIT, recovering.wait_for(|running| !*running)).await.is_err() {
            tracing::warn!(
                "recovery still running after {} s: stopping the tables back so far",
                SHUTDOWN_WAIT.as_secs()
            );
        }
        let handles: Vec<TableHandle> =
            self.tables.read().unwrap_or_else(|e| e.into_inner()).values().cloned().collect();
        let stops = handles.iter().map(|h| h.ask(|reply| TableCommand::Shutdown { reply }));
        match tokio::time::timeout(SHUTDOWN_WAIT, futures_util::future::join_all(stops)).await {
            Ok(stopped) => {
                let stopped = stopped.iter().filter(|s| s.is_ok()).count();
                tracing::info!("{stopped} tables stopped");
            }
            Err(_) => tracing::warn!("tables still running after {} s: stopping without them", SHUTDOWN_WAIT.as_secs()),
        }
    }

    /// The table with this id (a closed table is no longer found; one still
    /// on its way back after a restart is [`TableError::Recovering`]).
    pub fn get(&self, id: &str) -> Result<TableHandle, TableError> {
        let found = || {
            let tables = self.tables.read().unwrap_or_else(|e| e.into_inner());
            tables.get(id).filter(|h| !h.is_closed()).cloned()
        };
        if let Some(handle) = found() {
            return Ok(handle);
        }
        if self.returning.read().unwrap_or_else(|e| e.into_inner()).contains(id) {
            return Err(TableError::Recovering);
        }
        // A table joins the lobby before it leaves the games on their way:
        // one that came back between the two looks is found now.
        found().ok_or_else(|| TableError::NoSuchTable(id.to_string()))
    }

    /// The table with this id, here or (cluster mode) on another node: a
    /// stand-in that relays to it.
    pub async fn find(&self, id: &str) -> Result<TableHandle, TableError> {
        match (self.get(id), self.elsewhere.get()) {
            (Err(TableError::NoSuchTable(_)), Some(elsewhere)) => elsewhere.find(id).await,
            (found, _) => found,
        }
    }

    /// Cluster mode: brings back the tables this node has just taken over
    /// (their epochs already given to the store), as a restart does. Until
    /// each is back, a request for it is told to come back shortly.
    pub async fn take_over(&self, ids: Vec<String>) -> RecoveryProgress {
        self.expect_taking(&ids);
        {
            let mut recovery = self.recovery.lock().unwrap_or_else(|e| e.into_inner());
            recovery.total += ids.len();
            recovery.pending = true;
            recovery.took = None;
        }
        self.recover(Returning { unfinished: ids, finished: Vec::new() }).await
    }

    /// Cluster mode: these tables are on their way here (taken over, or
    /// being opened): requests for them are told to come back shortly, and
    /// [`Lobby::holds`] counts them.
    pub fn expect_taking(&self, ids: &[String]) {
        self.returning.write().unwrap_or_else(|e| e.into_inner()).extend(ids.iter().cloned());
    }

    /// A table counted as on its way by [`Lobby::expect_taking`] is here, or
    /// will not come (not counted in the recovery's progress).
    fn came_back_quietly(&self, id: &str) {
        self.returning.write().unwrap_or_else(|e| e.into_inner()).remove(id);
    }

    /// Whether a table is here and open, or on its way back.
    pub fn holds(&self, id: &str) -> bool {
        self.returning.read().unwrap_or_else(|e| e.into_inner()).contains(id)
            || self.tables.read().unwrap_or_else(|e| e.into_inner()).get(id).is_some_and(|h| !h.is_closed())
    }

    /// Every open table's handle.
    pub fn handles(&self) -> Vec<TableHandle> {
        self.tables.read().unwrap_or_else(|e| e.into_inner()).values().filter(|h| !h.is_closed()).cloned().collect()
    }

    /// The number of open tables.
    pub fn len(&self) -> usize {
        self.tables.read().unwrap_or_else(|e| e.into_inner()).values().filter(|h| !h.is_closed()).count()
    }

    /// True when no table is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The public state of every table, in no particular order: this
    /// node's, and (cluster mode) every other node's.
    pub async fn list(&self) -> Vec<TableInfo> {
        let mut tables = self.list_here().await;
        if let Some(elsewhere) = self.elsewhere.get() {
            let mine: HashSet<String> = tables.iter().map(|t| t.id.clone()).collect();
            tables.extend(elsewhere.others().await.into_iter().filter(|t| !mine.contains(&t.id)));
        }
        tables
    }

    /// The public state of this node's tables, each with the node's name
    /// in cluster mode.
    pub async fn list_here(&self) -> Vec<TableInfo> {
        let handles: Vec<TableHandle> =
            self.tables.read().unwrap_or_else(|e| e.into_inner()).values().cloned().collect();
        let answers = futures_util::future::join_all(handles.iter().map(|h| self.info(h))).await;
        answers.into_iter().filter_map(Result::ok).collect()
    }

    /// A table's public state, naming (cluster mode) the node that plays
    /// it: a stand-in's comes named by the table's own node; any other is
    /// this node's.
    pub async fn info(&self, handle: &TableHandle) -> Result<TableInfo, TableError> {
        let info = handle.ask(|reply| TableCommand::Info { reply }).await?;
        Ok(TableInfo { node: info.node.or_else(|| self.node_name()), ..info })
    }
}

/// A stored game that cannot be played on, as the store's error.
fn corrupt(e: RecoverError) -> StoreError {
    match e {
        RecoverError::Corrupt { game, why } => StoreError::Corrupt { game, why },
        RecoverError::Store(e) => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ws::TableState;
    use crate::store::{Batch, GameRow, GameSource};

    /// A stored game opened at a table (or loaded) with this seed, `created_us` apart.
    async fn store_game(store: &Store, id: &str, source: GameSource, seed: u64, created_us: i64) {
        let row = GameRow {
            name: id.into(),
            preset: crate::rules::presets::DEFAULT_PRESET.into(),
            source,
            state: TableState::Open,
            created_us,
            finished_us: None,
            hands: 0,
            scores: [0; 4],
            manager: None,
            last_seq: 0,
            rng_pos: 0,
        };
        let mut batch = Batch::new(id, row);
        let settings = super::super::TableSettings::new(id, Default::default(), seed);
        batch.settings = Some(serde_json::to_string(&settings).unwrap());
        store.write(batch).await.unwrap();
    }

    /// New tables are numbered after the stored ones: after their count, and
    /// after the numbers of the last ones opened when some opening took a
    /// number and stored nothing; games loaded from files and seeds drawn at
    /// random take no number.
    #[tokio::test]
    async fn numbering_goes_on_after_the_stored_tables() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let lobby = Lobby::new(store.clone(), TableLimits::default());
        assert_eq!(lobby.continue_numbering(Some(100)).await.unwrap(), 0, "an empty store");
        // Tables 0 and 1, then 3 (table 2's opening failed), under --seed 100.
        store_game(&store, "t0", GameSource::Live, 100, 1).await;
        store_game(&store, "t1", GameSource::Live, 101, 2).await;
        store_game(&store, "t3", GameSource::Live, 103, 3).await;
        let lobby = Lobby::new(store.clone(), TableLimits::default());
        assert_eq!(lobby.continue_numbering(Some(100)).await.unwrap(), 4, "three stored, the last numbered 3");
        assert_eq!((lobby.next_number(), lobby.next_number()), (4, 5));
        // A loaded game takes no number; a table seeded at random (no
        // --seed then) is counted, its seed is no number.
        store_game(&store, "file", GameSource::Loaded, 150, 4).await;
        store_game(&store, "random", GameSource::Live, 0x9e37_79b9_7f4a_7c15, 5).await;
        assert_eq!(Lobby::new(store.clone(), TableLimits::default()).continue_numbering(Some(100)).await.unwrap(), 4);
        // Under another seed the seeds stored are no numbers of its: the count.
        assert_eq!(Lobby::new(store.clone(), TableLimits::default()).continue_numbering(Some(5_000)).await.unwrap(), 4);
        assert_eq!(Lobby::new(store.clone(), TableLimits::default()).continue_numbering(None).await.unwrap(), 4);
        // A seed just below the stored ones: numbered after them all.
        assert_eq!(Lobby::new(store.clone(), TableLimits::default()).continue_numbering(Some(90)).await.unwrap(), 14);
        store.close().await;
    }
}
