//! Why the store failed, and which database failures pass.
//!
//! A database error is either *transient*: the database cannot be reached or
//! cannot take the work now (the connection was refused or lost, the pool
//! timed out, the server is shutting down or has too many connections, a
//! Postgres serialization failure, SQLite busy or locked), and the same work
//! may succeed later; or *permanent*: the database refused the work itself (a
//! constraint, a value it does not take), and trying again fails again.
//! [`is_transient`] tells them apart; a transient failure becomes
//! [`StoreError::Unavailable`].

use std::path::PathBuf;
use std::sync::Arc;

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database URL is not one the store can open.
    #[error("'{url}' is not a database URL: {hint}")]
    Url {
        /// The URL given.
        url: String,
        /// What to write instead.
        hint: String,
    },
    /// The folder an SQLite file is to be created in does not exist.
    #[error("the SQLite file's folder '{}' does not exist: create it first", folder.display())]
    NoFolder {
        /// The URL given.
        url: String,
        /// The missing folder.
        folder: PathBuf,
    },
    /// One of the files an SQLite database was split over (see
    /// [`super::parts`]) is gone: its games would be missing.
    #[error("the database is split over {parts} files and '{}' is missing: restore it beside the others", file.display())]
    MissingPart {
        /// The missing file.
        file: PathBuf,
        /// The database's number of files.
        parts: usize,
    },
    /// The database cannot be reached now, or cannot take the work now (see
    /// [`is_transient`]). Nothing of the failed write was stored; the same
    /// request may succeed later ([`super::Store::available`] says when the
    /// database answers again).
    #[error("the database is unavailable: {0}")]
    Unavailable(#[source] Arc<sqlx::Error>),
    /// The database refused a batch (a constraint, a value it does not
    /// take). Nothing of that batch was stored, and writing it again would
    /// fail again.
    #[error("the database refused the write: {0}")]
    Rejected(#[source] Arc<sqlx::Error>),
    /// Cluster mode: the database refused a table's batch because this node
    /// no longer owns the table (another node took it over, or this node's
    /// lease expired). Nothing of it was stored; the table must stop at
    /// once, showing nothing more.
    #[error("this node no longer plays table {game}: its write was refused")]
    Fenced {
        /// The table's game.
        game: String,
    },
    /// The database refused a read (a permanent failure).
    #[error("database error: {0}")]
    Database(#[source] sqlx::Error),
    /// A stored value does not read as its column's type (NULL where none
    /// may be, another type, a missing column).
    #[error("a stored value does not read: {0}")]
    Decode(#[source] sqlx::Error),
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
    /// A stored row other than a game's (a custom preset, the stored
    /// defaults, an audit entry) no longer reads.
    #[error("stored {what} does not read: {why}")]
    CorruptRow {
        /// Which row.
        what: String,
        /// What was wrong.
        why: String,
    },
    /// A stored account no longer reads (written by another version?).
    #[error("stored account {user} does not read: {why}")]
    CorruptAccount {
        /// The account's number.
        user: i64,
        /// What was wrong.
        why: String,
    },
    /// The store has been closed (the server is stopping).
    #[error("the store has shut down")]
    Closed,
}

impl StoreError {
    /// True for a failure of the database or its data, as opposed to a
    /// failure to reach it: a bug or damage, which trying again will not
    /// mend.
    pub fn is_internal(&self) -> bool {
        matches!(
            self,
            StoreError::Rejected(_)
                | StoreError::Decode(_)
                | StoreError::Corrupt { .. }
                | StoreError::CorruptRow { .. }
                | StoreError::CorruptAccount { .. }
        )
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> StoreError {
        use sqlx::Error as E;
        match e {
            E::PoolClosed => StoreError::Closed,
            E::ColumnDecode { .. }
            | E::Decode(_)
            | E::ColumnNotFound(_)
            | E::ColumnIndexOutOfBounds { .. }
            | E::TypeNotFound { .. } => StoreError::Decode(e),
            e if is_transient(&e) => StoreError::Unavailable(Arc::new(e)),
            e => StoreError::Database(e),
        }
    }
}

/// True if `e` says the database cannot be reached, or cannot take the work
/// now, rather than refusing the work itself: the same work may succeed
/// later. Unknown failures count as permanent.
pub fn is_transient(e: &sqlx::Error) -> bool {
    use sqlx::Error as E;
    match e {
        // The connection: refused, reset, closed under us, TLS; or no
        // connection free in time; or SQLite's worker thread gone. (A
        // `Protocol` error is a query SQLite cannot take, or a Postgres
        // stream out of step: not known to pass.)
        E::Io(_) | E::Tls(_) | E::PoolTimedOut | E::WorkerCrashed => true,
        E::Database(db) => {
            if let Some(pg) = db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>() {
                postgres_transient(pg.code())
            } else if db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
                db.code().and_then(|c| c.parse().ok()).is_some_and(sqlite_transient)
            } else {
                false
            }
        }
        _ => false,
    }
}

/// Postgres SQLSTATEs that pass: a lost or refused connection (class 08),
/// too many connections and other resource shortages (53), the server
/// shutting down or starting up (57P01-57P05), a cancelled statement (57014),
/// errors outside Postgres (58), a serialization failure or deadlock (40001,
/// 40P01), a lock not available (55P03), and a read-only server (25006,
/// a standby during a failover).
fn postgres_transient(code: &str) -> bool {
    ["08", "53", "57P", "58"].iter().any(|class| code.starts_with(class))
        || ["40001", "40P01", "55P03", "57014", "25006"].contains(&code)
}

/// SQLite result codes (primary code: the low byte of the extended one) that
/// pass: busy (5), locked (6), out of memory (7), read-only (8: the file or
/// its folder lost its permissions), I/O error (10), disk full (13), cannot
/// open (14), lock protocol (15).
fn sqlite_transient(code: i32) -> bool {
    matches!(code & 0xff, 5 | 6 | 7 | 8 | 10 | 13 | 14 | 15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_failures_pass() {
        let io = |kind| sqlx::Error::Io(std::io::Error::from(kind));
        for kind in [
            std::io::ErrorKind::ConnectionRefused,
            std::io::ErrorKind::ConnectionReset,
            std::io::ErrorKind::BrokenPipe,
            std::io::ErrorKind::UnexpectedEof,
            std::io::ErrorKind::TimedOut,
        ] {
            assert!(is_transient(&io(kind)), "{kind:?}");
            assert!(matches!(StoreError::from(io(kind)), StoreError::Unavailable(_)), "{kind:?}");
        }
        assert!(is_transient(&sqlx::Error::PoolTimedOut));
        assert!(is_transient(&sqlx::Error::WorkerCrashed));
    }

    #[test]
    fn refusals_and_bad_data_do_not_pass() {
        for e in [
            sqlx::Error::RowNotFound,
            sqlx::Error::ColumnNotFound("x".into()),
            sqlx::Error::Configuration("bad".into()),
            sqlx::Error::Decode("bad".into()),
            sqlx::Error::Protocol("query contains nul bytes".into()),
        ] {
            assert!(!is_transient(&e), "{e}");
        }
        assert!(matches!(StoreError::from(sqlx::Error::ColumnNotFound("x".into())), StoreError::Decode(_)));
        assert!(matches!(StoreError::from(sqlx::Error::RowNotFound), StoreError::Database(_)));
        assert!(matches!(StoreError::from(sqlx::Error::PoolClosed), StoreError::Closed));
    }

    #[test]
    fn postgres_codes() {
        for code in ["08006", "08001", "08P01", "53300", "53100", "57P01", "57P02", "57P03", "40001", "40P01", "58030"]
        {
            assert!(postgres_transient(code), "{code}");
        }
        // unique, foreign key, not null, check violations; bad SQL; bad text.
        for code in ["23505", "23503", "23502", "23514", "42601", "42P01", "22P02", "22001"] {
            assert!(!postgres_transient(code), "{code}");
        }
    }

    #[test]
    fn sqlite_codes() {
        // busy, busy (snapshot), busy (timeout), locked, locked (shared cache),
        // I/O error (write), disk full, cannot open, read-only (moved).
        for code in [5, 517, 773, 6, 262, 778, 13, 14, 1032] {
            assert!(sqlite_transient(code), "{code}");
        }
        // error, constraint (unique, primary key, foreign key, not null),
        // mismatch, corrupt, not a database.
        for code in [1, 19, 2067, 1555, 787, 1299, 20, 11, 26] {
            assert!(!sqlite_transient(code), "{code}");
        }
    }

    /// Real refusals by both databases: a constraint is permanent.
    #[tokio::test]
    async fn a_real_constraint_violation_is_permanent() {
        sqlx::any::install_default_drivers();
        // One connection: each would have a memory database of its own.
        let pool = sqlx::any::AnyPoolOptions::new().max_connections(1).connect("sqlite::memory:").await.unwrap();
        sqlx::query("CREATE TABLE t (id BIGINT PRIMARY KEY)").execute(&pool).await.unwrap();
        sqlx::query("INSERT INTO t VALUES (1)").execute(&pool).await.unwrap();
        let e = sqlx::query("INSERT INTO t VALUES (1)").execute(&pool).await.unwrap_err();
        assert!(!is_transient(&e), "{e}");
        assert!(matches!(StoreError::from(e), StoreError::Database(_)));
        let e = sqlx::query("SELECT nothing FROM nowhere").execute(&pool).await.unwrap_err();
        assert!(!is_transient(&e), "{e}");
    }
}
