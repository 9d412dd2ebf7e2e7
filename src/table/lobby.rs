//! The lobby: the registry of running tables.

use std::collections::HashMap;
use std::sync::RwLock;

use super::actor::{self, OpenError};
use super::recovery::{self, Rebuilt, RecoverError};
use super::{TableCommand, TableError, TableHandle, TableSetup};
use crate::protocol::ws::TableInfo;
use crate::store::{Store, StoreError};

/// How long [`Lobby::shutdown`] waits for the tables.
pub const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Every table of the server, by id. The lock is only ever held to look up or
/// insert a handle, never across an `.await`.
#[derive(Debug)]
pub struct Lobby {
    tables: RwLock<HashMap<String, TableHandle>>,
    numbered: std::sync::atomic::AtomicU64,
    store: Store,
}

impl Lobby {
    /// An empty lobby whose tables keep their games in `store`.
    pub fn new(store: Store) -> Lobby {
        Lobby { tables: RwLock::default(), numbered: Default::default(), store }
    }

    /// The store the tables write to.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Numbers tables in the order they are opened, from 0 (seeds derive from it).
    pub fn next_number(&self) -> u64 {
        self.numbered.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// Opens a new table as `setup` says (robots seated, the game started if
    /// asked), written to the store in one batch first; returns its handle.
    /// A set-up the table refuses stores nothing.
    pub async fn open(&self, setup: TableSetup) -> Result<TableHandle, OpenError> {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let handle = actor::spawn(id, setup, self.store.clone()).await?;
        self.insert(handle.clone());
        Ok(handle)
    }

    fn insert(&self, handle: TableHandle) {
        let mut tables = self.tables.write().unwrap_or_else(|e| e.into_inner());
        // Forget tables that have closed (finished games nobody watches).
        tables.retain(|_, h| !h.is_closed());
        tables.insert(handle.id.clone(), handle);
    }

    /// Rebuilds every unfinished game in the store as a running table (at
    /// start-up). Returns how many were recovered; a game that cannot be
    /// rebuilt is reported and left in the store as it is.
    pub async fn recover(&self) -> Result<usize, StoreError> {
        let mut recovered = 0;
        for id in self.store.unfinished_games().await? {
            match self.resume(&id).await {
                Ok(true) => recovered += 1,
                Ok(false) => {}
                Err(StoreError::Corrupt { game, why }) => tracing::error!("cannot recover game {game}: {why}"),
                Err(e) => return Err(e),
            }
        }
        Ok(recovered)
    }

    /// Rebuilds a stored game as a running table and adds it to the lobby.
    /// False if there is no such game; a game that cannot be rebuilt is
    /// `StoreError::Corrupt`.
    async fn resume(&self, id: &str) -> Result<bool, StoreError> {
        let Some(mut saved) = self.store.load_game(id, i64::MAX).await? else { return Ok(false) };
        // Only the previous and current hands' events are kept for resuming.
        saved.events = self.store.events(id, (saved.game.hands - 1).max(0)).await?;
        let handle = recovery::recover(saved, self.store.clone()).await.map_err(corrupt)?;
        self.insert(handle);
        Ok(true)
    }

    /// Opens a table on a stored game already rebuilt from its inputs (a
    /// loaded game file: `game_file::load`) and adds it to the
    /// lobby. A game that cannot be played on is `StoreError::Corrupt`.
    pub async fn reopen(&self, rebuilt: Rebuilt) -> Result<TableHandle, StoreError> {
        let handle = recovery::reopen(rebuilt, self.store.clone()).await.map_err(corrupt)?;
        self.insert(handle.clone());
        Ok(handle)
    }

    /// Stops every table (when the server stops): each writes what it has
    /// pending to the store and ends. Waits for them at most
    /// [`SHUTDOWN_WAIT`].
    pub async fn shutdown(&self) {
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

    /// The table with this id (a closed table is no longer found).
    pub fn get(&self, id: &str) -> Result<TableHandle, TableError> {
        let tables = self.tables.read().unwrap_or_else(|e| e.into_inner());
        tables.get(id).filter(|h| !h.is_closed()).cloned().ok_or_else(|| TableError::NoSuchTable(id.to_string()))
    }

    /// The number of open tables.
    pub fn len(&self) -> usize {
        self.tables.read().unwrap_or_else(|e| e.into_inner()).values().filter(|h| !h.is_closed()).count()
    }

    /// True when no table is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The public state of every table, in no particular order.
    pub async fn list(&self) -> Vec<TableInfo> {
        let handles: Vec<TableHandle> =
            self.tables.read().unwrap_or_else(|e| e.into_inner()).values().cloned().collect();
        let answers =
            futures_util::future::join_all(handles.iter().map(|h| h.ask(|reply| TableCommand::Info { reply }))).await;
        answers.into_iter().filter_map(Result::ok).collect()
    }
}

/// A stored game that cannot be played on, as the store's error.
fn corrupt(e: RecoverError) -> StoreError {
    match e {
        RecoverError::Corrupt { game, why } => StoreError::Corrupt { game, why },
        RecoverError::Store(e) => e,
    }
}
