//! The lobby: the registry of running tables.

use std::collections::HashMap;
use std::sync::RwLock;

use super::{TableError, TableHandle, TableSettings, actor};
use crate::protocol::ws::TableInfo;

/// Every table of the server, by id. The lock is only ever held to look up or
/// insert a handle, never across an `.await`.
#[derive(Debug, Default)]
pub struct Lobby {
    tables: RwLock<HashMap<String, TableHandle>>,
    numbered: std::sync::atomic::AtomicU64,
}

impl Lobby {
    /// An empty lobby.
    pub fn new() -> Lobby {
        Lobby::default()
    }

    /// Numbers tables in the order they are opened, from 0 (seeds derive from it).
    pub fn next_number(&self) -> u64 {
        self.numbered.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// Opens a new table; returns its handle.
    pub fn open(&self, settings: TableSettings) -> TableHandle {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let handle = actor::spawn(id.clone(), settings);
        let mut tables = self.tables.write().unwrap_or_else(|e| e.into_inner());
        // Forget tables that have closed (finished games nobody watches).
        tables.retain(|_, h| !h.is_closed());
        tables.insert(id, handle.clone());
        handle
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
            futures_util::future::join_all(handles.iter().map(|h| h.ask(|reply| super::TableCommand::Info { reply })))
                .await;
        answers.into_iter().filter_map(Result::ok).collect()
    }
}
