//! The game store: every game's event log, the inputs that rebuild it, and
//! the projections the score queries read (games, seats, hands, each
//! player's part in a hand, payments); and the admins' custom presets, the
//! stored defaults of new tables and the audit log ([`options`]); and the
//! idempotency keys of game imports ([`idempotency`]).
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
//! file keep up with thousands of tables; a new SQLite database is split over
//! several files, each with its own writer, so that commits are made on as
//! many threads ([`parts`]).
//!
//! # The contract, by concern
//!
//! [`Store`]'s methods live beside what they keep, one module per concern;
//! this list is the whole contract. (One implementation serves both
//! databases, so a trait would have a single implementor; the one place two
//! implementations do differ, the writers, is the [`writer::Writer`] trait.)
//!
//! | concern | module | methods |
//! |---|---|---|
//! | opening, writing, health | this module | `open`, `write`, `write_or_return`, `available`, `answers`, `journal_queue`, `backend`, `files`, `pool`, `close`; the cluster's fences: `fence`, `fenced`, `fences`, `unfence`, `epoch_of` |
//! | games being played, reloaded | [`saved`] | `import_game`, `unfinished_games`, `load_game`, `load_games_resuming`, `events`, `recently_finished_games`, `live_games` |
//! | game imports once per key | [`idempotency`] | `import_game_once` |
//! | score queries | [`queries`] | `list_games`, `game_detail`, `list_hands`, `hand_detail`, `hand_history`, `standings`, `game_progress`, `seat_of_token`, `seat_of_account` |
//! | accounts and sessions | [`accounts`] | `create_user`, `user_by_name`, `user_looking_like`, `user_by_id`, `users`, `active_users_with_role`, `set_password_hash`, `set_role_and_disabled`, `create_session`, `session`, `touch_session`, `delete_session`, `delete_sessions_of`, `delete_expired_sessions` |
//! | presets, defaults, audit log | [`options`] | `custom_presets`, `stored_defaults`, `create_preset`, `update_preset`, `delete_preset`, `save_defaults`, `forget_defaults`, `record_change`, `audit_log` |
//! | games of robots alone | [`budget`] | `stored_robot_budget`, `save_robot_budget`, `forget_robot_budget`, `keep_game`, `kept_game`, `robots_alone`, `old_robot_games`, `forget_games` |
//! | the cluster: leases, owners, keys | [`cluster`] | `join_cluster`, `rejoin_cluster`, `cluster_id`, `renew_lease`, `leave_cluster`, `forget_node`, `forget_dead_nodes`, `nodes`, `own_new_table`, `own_table`, `owner`, `owned_tables`, `take_over_tables`, `orphans_and_members`, `release_table`, `close_table`, `forget_table`, `cluster_keys`, `read_cluster_keys`, `rotate_cluster_key` |
//! | limits over the cluster | [`ledger`] | `hold_shared`, `release_shared`, `pace_shared`, `spend_shared`, `strikes_shared`, `strike_shared`, `forget_spent_quotas` |

pub mod accounts;
pub mod budget;
pub mod cluster;
pub mod dates;
pub mod error;
pub mod idempotency;
pub mod journal;
pub mod ledger;
pub mod migrations;
pub mod options;
pub mod parts;
pub mod projection;
pub mod queries;
pub mod records;
mod row;
pub mod saved;
pub mod tail;
pub mod writer;

use std::str::FromStr;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Executor};

pub use accounts::{Revoked, Role, SessionRow, UserRow};
pub use error::StoreError;
pub use journal::Journal;
pub use options::{AuditEntry, Author, Change, StoredDefaults};
pub use projection::HandProjector;
pub use records::{
    Batch, EventRow, GameRow, GameSource, HandOutcome, HandPlayerRow, HandRow, Input, InputRow, PaymentRow, SeatChange,
    SeatRow, TableState,
};
pub use saved::{NewGame, SavedGame};

/// How long [`Store::answers`] waits for the database.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(2);

/// A database URL as it may be shown (logged, printed): its password, if
/// it has one, replaced by `***`.
pub fn shown_database(database: &str) -> String {
    match url::Url::parse(database) {
        Ok(mut url) if url.password().is_some() => {
            let _ = url.set_password(Some("***"));
            url.to_string()
        }
        _ => database.to_string(),
    }
}

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

impl Backend {
    /// The backend [`Store::open`] opens `url` with, if it opens it at all:
    /// Postgres for `postgres://` and `postgresql://`, else SQLite (which it
    /// opens only for an `sqlite:` URL). Read without opening anything.
    pub fn of_url(url: &str) -> Backend {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else {
            Backend::Sqlite
        }
    }
}

/// An open store: the connection pool and the journal that writes to it.
#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    journal: Journal,
    /// Each part's writer (SQLite, see [`parts`]); Postgres: the same
    /// writer for each of the journal's tasks.
    writers: Vec<writer::Writer>,
    /// The SQLite files the games are split over (see [`parts`]); 1 on
    /// Postgres.
    files: usize,
    /// An SQLite file standing for `sqlite::memory:`, removed with the last
    /// clone of the store.
    _scratch: Option<std::sync::Arc<ScratchFile>>,
    /// When the database last answered [`Store::answers`], and whether it did.
    answered: std::sync::Arc<std::sync::Mutex<Option<(std::time::Instant, bool)>>>,
    /// Cluster mode: the epoch this node owns each of its tables under
    /// (see [`cluster`]); `None` on a single node.
    fences: Option<std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, i64>>>>,
}

/// A temporary SQLite file, removed with its parts (and their WALs) when
/// dropped.
#[derive(Debug)]
struct ScratchFile(std::path::PathBuf);

impl Drop for ScratchFile {
    fn drop(&mut self) {
        parts::remove_files(&self.0);
    }
}

/// The store's pool for reads (and for the writes that are not a game's),
/// each SQLite connection set up as the store's are and then running
/// `attach` (the other parts, see [`parts::attach_sql`]).
async fn read_pool(url: &str, backend: Backend, attach: String) -> Result<AnyPool, StoreError> {
    let options = AnyConnectOptions::from_str(url)?;
    let mut pool = AnyPoolOptions::new();
    pool = match backend {
        Backend::Sqlite => pool.max_connections(4),
        Backend::Postgres => pool.max_connections(8),
    };
    let attach = std::sync::Arc::new(attach);
    let pool = pool
        .acquire_timeout(Duration::from_secs(10))
        .after_connect(move |conn, _| {
            let attach = attach.clone();
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
                    if !attach.is_empty() {
                        conn.execute(attach.as_str()).await?;
                    }
                }
                Ok(())
            })
        })
        .connect_with(options)
        .await?;
    Ok(pool)
}

impl Store {
    /// Opens (creating an SQLite file if needed) the database at `url`,
    /// applies its migrations and starts the journal. An SQLite URL may say
    /// in how many files a new database is split (`?parts=N`, see
    /// [`parts`]).
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let (backend, mut url) = normalise_url(url)?;
        let mut asked_parts = None;
        if backend == Backend::Sqlite {
            (url, asked_parts) = parts::take_parts(&url)?;
        }
        // The journal writes through a connection of its own, which an
        // SQLite database in memory (one per connection) cannot share: such
        // a database (tests, throwaway servers) is a temporary file instead.
        let mut scratch = None;
        if url.contains(":memory:") || url.contains("mode=memory") {
            let file = std::env::temp_dir().join(format!("mahjong-{}.db", uuid::Uuid::new_v4().simple()));
            url = format!("sqlite://{}?mode=rwc", file.display());
            scratch = Some(std::sync::Arc::new(ScratchFile(file)));
        }
        let mut pool = read_pool(&url, backend, String::new()).await?;
        let mut files = 1;
        match backend {
            Backend::Sqlite => {
                let migrator = migrations::migrator(migrations::SQLITE).await?;
                migrator.run(&pool).await?;
                files = parts::settle(&pool, &url, asked_parts).await?;
                // Each other part migrated on its own, then attached to
                // every reading connection.
                for k in 1..files {
                    let part = read_pool(&parts::part_url(&url, k), backend, String::new()).await?;
                    migrator.run(&part).await?;
                    part.close().await;
                }
                if files > 1 {
                    pool.close().await;
                    pool = read_pool(&url, backend, parts::attach_sql(&parts::file_of(&url), files)).await?;
                }
            }
            Backend::Postgres => migrations::migrator(migrations::POSTGRES).await?.run(&pool).await?,
        }
        let writers = match backend {
            Backend::Sqlite => {
                let mut writers = Vec::with_capacity(files);
                for k in 0..files {
                    writers.push(writer::Writer::open_sqlite(&parts::part_url(&url, k), files).await?);
                }
                writers
            }
            // Four writers keep up with a heavy load (docs/performance.md,
            // "Four writers on Postgres"), each on a connection of one pool.
            Backend::Postgres => vec![writer::Writer::open_postgres(&url, 4)?; 4],
        };
        let journal = Journal::start(writers.clone());
        let store = Store {
            pool,
            backend,
            journal,
            writers,
            files,
            _scratch: scratch,
            answered: Default::default(),
            fences: None,
        };
        store.fill_look_alike_keys().await?;
        Ok(store)
    }

    /// The same store, its tables' writes fenced (cluster mode): a table
    /// writes only under the epoch [`Store::fence`] gave it. Postgres only.
    pub fn fenced(mut self) -> Store {
        self.fences = Some(Default::default());
        self
    }

    /// This node owns table `game_id` under `epoch` from now on: a table
    /// opened on it from now writes under that epoch.
    pub fn fence(&self, game_id: &str, epoch: i64) {
        if let Some(fences) = &self.fences {
            fences.lock().unwrap_or_else(|e| e.into_inner()).insert(game_id.to_string(), epoch);
        }
    }

    /// Every table this node owns, with its epoch (cluster mode).
    pub fn fences(&self) -> Vec<(String, i64)> {
        self.fences.as_ref().map_or_else(Vec::new, |f| {
            f.lock().unwrap_or_else(|e| e.into_inner()).iter().map(|(id, e)| (id.clone(), *e)).collect()
        })
    }

    /// Forgets a table's epoch (it closed, or this node lost it).
    pub fn unfence(&self, game_id: &str) {
        if let Some(fences) = &self.fences {
            fences.lock().unwrap_or_else(|e| e.into_inner()).remove(game_id);
        }
    }

    /// The epoch a table opened now writes under: `None` on a single node;
    /// in cluster mode the one its node was given, or 0 (which the database
    /// never gives: every write refused) for a table it was not.
    pub fn epoch_of(&self, game_id: &str) -> Option<i64> {
        let fences = self.fences.as_ref()?;
        Some(fences.lock().unwrap_or_else(|e| e.into_inner()).get(game_id).copied().unwrap_or(0))
    }

    /// The database's connection pool (for reads).
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// The writer of the first part (SQLite), which holds what is not a
    /// game's; Postgres: the journal's connections.
    pub(crate) fn writer(&self) -> &writer::Writer {
        &self.writers[0]
    }

    /// The SQLite files the store's games are split over (see [`parts`]);
    /// 1 on Postgres.
    pub fn files(&self) -> usize {
        self.files
    }

    /// A new game's id that lives in the first part, beside what is not a
    /// game's (SQLite commits each file on its own, so a transaction that
    /// writes a game with another row, such as an import's idempotency key,
    /// must find both in one file).
    pub(crate) fn new_id_in_first_part(&self) -> String {
        loop {
            let id = uuid::Uuid::new_v4().simple().to_string();
            if parts::part_of(&id, self.files) == 0 {
                return id;
            }
        }
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Writes a batch; returns once it is committed. See [`Journal::write`]:
    /// `Err(StoreError::Unavailable)` stored nothing of the batch, and the
    /// caller may write it again later.
    pub async fn write(&self, batch: Batch) -> Result<(), StoreError> {
        self.journal.write(batch).await
    }

    /// As [`Store::write`], but a batch that could not be written for want
    /// of the database comes back with the error, to be written again later
    /// (a table holds it until the database is back).
    pub async fn write_or_return(&self, batch: Batch) -> Result<(), journal::Unwritten> {
        self.journal.write_or_return(batch).await
    }

    /// Whether the database answers: `false` from a write that could not
    /// reach it until a probe (every second meanwhile) finds it back. While
    /// it is `false`, writes fail at once with [`StoreError::Unavailable`].
    pub fn available(&self) -> tokio::sync::watch::Receiver<bool> {
        self.journal.available()
    }

    /// Whether the database answers now (for the readiness probe): the
    /// journal has not found it away, and it answers a query within
    /// [`ANSWER_WITHIN`]. Asked at most once a second whatever the callers;
    /// the answer is kept meanwhile.
    pub async fn answers(&self) -> bool {
        if !*self.available().borrow() {
            return false;
        }
        if let Some((at, answered)) = *self.answered.lock().unwrap_or_else(|e| e.into_inner())
            && at.elapsed() < Duration::from_secs(1)
        {
            return answered;
        }
        let asked = tokio::time::timeout(ANSWER_WITHIN, sqlx::query("SELECT 1").execute(self.pool())).await;
        let answered = matches!(asked, Ok(Ok(_)));
        *self.answered.lock().unwrap_or_else(|e| e.into_inner()) = Some((std::time::Instant::now(), answered));
        answered
    }

    /// Files the rows of these games still waiting in SQLite's log tail
    /// (see [`tail`]), so that a read of their inputs and events that
    /// follows sees them all. Private to the store: every read of `inputs`
    /// and `events` of a game that may be playing is one of the store's own
    /// (`saved`, `queries`), and files the tail first; no caller outside the
    /// store can forget it.
    pub(in crate::store) async fn file_tail(&self, game_ids: &[String]) -> Result<(), StoreError> {
        self.journal.file_tail(game_ids).await
    }

    /// Batches waiting for the journal (to be taken into a commit).
    pub fn journal_queue(&self) -> usize {
        self.journal.queued()
    }

    /// Waits for the journal to commit what it has been given, then closes
    /// the pool.
    pub async fn close(&self) {
        self.journal.stop().await;
        for writer in &self.writers {
            writer.close().await;
        }
        self.pool.close().await;
    }
}

/// Recognises the backend of a database URL; an SQLite file is created if it
/// does not exist, but not its folder.
fn normalise_url(url: &str) -> Result<(Backend, String), StoreError> {
    if Backend::of_url(url) == Backend::Postgres {
        return Ok((Backend::Postgres, url.to_string()));
    }
    if let Some(rest) = url.strip_prefix("sqlite:") {
        if let Some(folder) = missing_folder(url) {
            return Err(StoreError::NoFolder { url: url.to_string(), folder });
        }
        let url = if rest.contains("mode=") || rest.contains(":memory:") {
            url.to_string()
        } else if rest.contains('?') {
            format!("{url}&mode=rwc")
        } else {
            format!("{url}?mode=rwc")
        };
        return Ok((Backend::Sqlite, url));
    }
    let hint = if url.contains("://") {
        "use sqlite://FILE or postgres://USER:PASSWORD@HOST:PORT/DB".to_string()
    } else {
        // A bare file name or path.
        format!("for an SQLite file write sqlite://{url}")
    };
    Err(StoreError::Url { url: url.to_string(), hint })
}

/// The folder of an SQLite URL's file, if it names one that does not exist.
fn missing_folder(url: &str) -> Option<std::path::PathBuf> {
    let file = parts::file_of(url);
    if file.as_os_str().is_empty() || file.as_os_str() == ":memory:" || url.contains("mode=memory") {
        return None;
    }
    let folder = file.parent()?;
    (!folder.as_os_str().is_empty() && !folder.is_dir()).then(|| folder.to_path_buf())
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
        assert!(matches!(normalise_url("mysql://h/db"), Err(StoreError::Url { .. })));
    }

    #[test]
    fn a_bare_path_is_told_how_to_write_it() {
        let e = normalise_url("games.db").unwrap_err();
        assert!(e.to_string().contains("sqlite://games.db"), "{e}");
        let e = normalise_url("/var/lib/games.db").unwrap_err();
        assert!(e.to_string().contains("sqlite:///var/lib/games.db"), "{e}");
    }

    #[test]
    fn a_missing_folder_is_named() {
        let e = normalise_url("sqlite:///no/such/folder/games.db").unwrap_err();
        assert!(matches!(&e, StoreError::NoFolder { folder, .. } if folder.as_os_str() == "/no/such/folder"), "{e}");
        assert!(e.to_string().contains("'/no/such/folder' does not exist"), "{e}");
        assert!(normalise_url("sqlite://relative-no-such-folder/games.db").is_err());
        // A file in the working directory, or in a folder that exists.
        assert!(normalise_url("sqlite://games.db").is_ok());
        assert!(normalise_url(&format!("sqlite://{}/games.db", std::env::temp_dir().display())).is_ok());
        assert!(normalise_url("sqlite::memory:").is_ok());
    }
}
