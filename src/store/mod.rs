//! The game store: every game's event log, the inputs that rebuild it, and
//! the projections the score queries read (games, seats, hands, each
//! player's part in a hand, payments).
//!
//! One interface over two databases: SQLite (the default, a file, nothing to
//! set up) and Postgres (`postgres://...`). Both are reached through sqlx's
//! `Any` driver and spoken to in one portable dialect (`$N` parameters,
//! `BIGINT` and `TEXT` columns, `ON CONFLICT` upserts), so the reads and
//! writes exist once; each backend has its own migrations under
//! `migrations/`, applied when the store opens.
//!
//! Writes go through the [`journal`]: tables hand it a [`Batch`] and wait
//! until it is committed before they send its events to anyone, so an event
//! a client has seen is never lost. The journal commits whatever batches are
//! waiting in one transaction (group commit), which is what lets one SQLite
//! file keep up with thousands of tables.

pub mod dates;
pub mod journal;
pub mod projection;
pub mod queries;
pub mod records;
pub mod saved;

use std::str::FromStr;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Executor};

pub use journal::Journal;
pub use projection::HandProjector;
pub use records::{Batch, EventRow, GameRow, HandPlayerRow, HandRow, Input, InputRow, PaymentRow, SeatChange, SeatRow};
pub use saved::{NewGame, SavedGame};

/// The database used when none is named: a file in the working directory.
pub const DEFAULT_DATABASE: &str = "sqlite://mahjong.db";

/// Which database a store speaks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// An SQLite file (or memory).
    Sqlite,
    /// A Postgres server.
    Postgres,
}

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database URL names neither SQLite nor Postgres.
    #[error("unsupported database URL '{0}': use sqlite://FILE or postgres://...")]
    Url(String),
    /// The database refused or failed.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// The migrations could not be applied.
    #[error("database migration failed: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    /// Stored JSON no longer reads (written by another version?).
    #[error("stored data for game {game} does not read: {why}")]
    Corrupt {
        /// The game.
        game: String,
        /// What was wrong.
        why: String,
    },
    /// The journal's task has stopped.
    #[error("the store has shut down")]
    Closed,
}

/// An open store: the connection pool and the journal that writes to it.
#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    journal: Journal,
}

impl Store {
    /// Opens (creating an SQLite file if needed) the database at `url`,
    /// applies its migrations and starts the journal.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let (backend, url) = normalise_url(url)?;
        let memory = url.contains(":memory:") || url.contains("mode=memory");
        let options = AnyConnectOptions::from_str(&url)?;
        let mut pool = AnyPoolOptions::new();
        pool = match backend {
            // An in-memory database lives as long as its one connection.
            Backend::Sqlite if memory => pool.max_connections(1).idle_timeout(None).max_lifetime(None),
            Backend::Sqlite => pool.max_connections(4),
            Backend::Postgres => pool.max_connections(8),
        };
        let pool = pool
            .acquire_timeout(Duration::from_secs(10))
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        // WAL: readers do not block the journal. `synchronous =
                        // NORMAL` keeps every committed transaction through a
                        // crash of the server process (a power cut may lose
                        // the last ones); see docs/architecture.md.
                        conn.execute(
                            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
                             PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON;",
                        )
                        .await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await?;
        match backend {
            Backend::Sqlite => sqlx::migrate!("migrations/sqlite").run(&pool).await?,
            Backend::Postgres => sqlx::migrate!("migrations/postgres").run(&pool).await?,
        }
        let writers = match backend {
            Backend::Sqlite => 1,
            // Measured with `storebench` and `loadtest`: four writers keep up
            // with 2,000 tables at ten times the usual pace.
            Backend::Postgres => 4,
        };
        let journal = Journal::start(pool.clone(), writers);
        Ok(Store { pool, backend, journal })
    }

    /// The database's connection pool (for reads).
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Writes a batch; returns once it is committed.
    pub async fn write(&self, batch: Batch) -> Result<(), StoreError> {
        self.journal.write(batch).await
    }

    /// Waits for the journal to commit what it has been given, then closes
    /// the pool.
    pub async fn close(&self) {
        self.journal.stop().await;
        self.pool.close().await;
    }
}

/// Recognises the backend of a database URL; an SQLite file is created if it
/// does not exist.
fn normalise_url(url: &str) -> Result<(Backend, String), StoreError> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok((Backend::Postgres, url.to_string()));
    }
    if let Some(rest) = url.strip_prefix("sqlite:") {
        let url = if rest.contains("mode=") || rest.contains(":memory:") {
            url.to_string()
        } else if rest.contains('?') {
            format!("{url}&mode=rwc")
        } else {
            format!("{url}?mode=rwc")
        };
        return Ok((Backend::Sqlite, url));
    }
    Err(StoreError::Url(url.to_string()))
}

/// A new seat token: 128 bits from the operating system's randomness (never
/// the table's seeded stream, which a seed would make predictable), in hex.
pub fn new_seat_token() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A seat token's SHA-256, in hex: all the tables and the store keep of it,
/// so that a copy of the database (or of an export) cannot act for a player.
pub fn token_sha256(token: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(token.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Now, in microseconds since the Unix epoch (the store's time unit).
pub fn now_us() -> i64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_their_backend() {
        assert_eq!(normalise_url("sqlite://x.db").unwrap(), (Backend::Sqlite, "sqlite://x.db?mode=rwc".into()));
        assert_eq!(normalise_url("sqlite::memory:").unwrap().1, "sqlite::memory:");
        assert_eq!(normalise_url("postgres://u@h/db").unwrap().0, Backend::Postgres);
        assert!(matches!(normalise_url("mysql://h/db"), Err(StoreError::Url(_))));
    }
}
