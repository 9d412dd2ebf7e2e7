//! Databases for tests: every test gets its own, on both backends.
//!
//! SQLite: a fresh file in the temporary directory. Postgres: a fresh
//! database on the server named by `MAHJONG_TEST_POSTGRES` (by default the
//! CI machine's `postgres://postgres@127.0.0.1:5432/postgres`), created for
//! the test and dropped by [`TestDb::remove`], or when the test ends without
//! it (a failure). An unreachable Postgres fails
//! the test: both backends must be exercised. Tests that do not look at the
//! store itself may use `memory`, an SQLite database in memory.

use sqlx::Connection;
use sqlx::Executor;

/// The Postgres server tests use, as an administrative URL.
pub fn postgres_admin_url() -> String {
    std::env::var("MAHJONG_TEST_POSTGRES").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// A database made for one test.
#[derive(Debug)]
pub struct TestDb {
    /// The URL to give the store.
    pub url: String,
    /// What to remove afterwards.
    cleanup: Cleanup,
}

#[derive(Debug)]
enum Cleanup {
    File(std::path::PathBuf),
    Database(String),
    Nothing,
}

/// The backends every store test runs on.
pub const BACKENDS: [&str; 2] = ["sqlite", "postgres"];

impl TestDb {
    /// A fresh database of the named backend (`sqlite` or `postgres`, or
    /// `memory`).
    pub async fn new(backend: &str) -> TestDb {
        let name = format!("mahjong_test_{}", uuid::Uuid::new_v4().simple());
        match backend {
            "memory" => TestDb { url: "sqlite::memory:".into(), cleanup: Cleanup::Nothing },
            "sqlite" => {
                let path = std::env::temp_dir().join(format!("{name}.db"));
                TestDb { url: format!("sqlite://{}", path.display()), cleanup: Cleanup::File(path) }
            }
            "postgres" => {
                let admin = postgres_admin_url();
                let mut conn = sqlx::PgConnection::connect(&admin)
                    .await
                    .unwrap_or_else(|e| panic!("Postgres at {admin} is needed for this test: {e}"));
                conn.execute(format!("CREATE DATABASE {name}").as_str()).await.expect("create the test database");
                let _ = conn.close().await;
                let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b).to_string();
                TestDb { url: format!("{base}/{name}"), cleanup: Cleanup::Database(name) }
            }
            other => panic!("no backend {other}"),
        }
    }

    /// Removes the database (its file, or drops it), as dropping it would,
    /// without blocking the test's runtime.
    pub async fn remove(mut self) {
        match std::mem::replace(&mut self.cleanup, Cleanup::Nothing) {
            Cleanup::File(path) => mahjong::store::parts::remove_files(&path),
            Cleanup::Database(name) => drop_database(&name).await,
            Cleanup::Nothing => {}
        }
    }
}

/// A test that fails (or never calls [`TestDb::remove`]) leaves nothing
/// behind either: its file is removed, its database dropped, as the test's
/// future is dropped.
impl Drop for TestDb {
    fn drop(&mut self) {
        match std::mem::replace(&mut self.cleanup, Cleanup::Nothing) {
            Cleanup::File(path) => mahjong::store::parts::remove_files(&path),
            // On a thread of its own: a runtime cannot be started (nor
            // blocked on) inside the test's.
            Cleanup::Database(name) => {
                let _ = std::thread::spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
                    if let Ok(runtime) = runtime {
                        runtime.block_on(drop_database(&name));
                    }
                })
                .join();
            }
            Cleanup::Nothing => {}
        }
    }
}

/// Drops a test's Postgres database, whoever is still connected to it.
async fn drop_database(name: &str) {
    if let Ok(mut conn) = sqlx::PgConnection::connect(&postgres_admin_url()).await {
        let _ = conn.execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str()).await;
        let _ = conn.close().await;
    }
}

/// The row of a game being played (hand 1), named `name`, whose stream
/// ends at `last_seq`: for tests that write batches to a store directly.
pub fn playing_row(name: &str, last_seq: i64) -> mahjong::store::GameRow {
    mahjong::store::GameRow {
        name: name.into(),
        preset: mahjong::rules::presets::DEFAULT_PRESET.into(),
        source: mahjong::store::GameSource::Live,
        state: mahjong::protocol::ws::TableState::Playing,
        created_us: mahjong::store::now_us(),
        finished_us: None,
        hands: 1,
        scores: [0; 4],
        manager: None,
        last_seq,
        rng_pos: 0,
    }
}

/// A batch of game `id` (named `name`) holding the events `seqs`, each one
/// public with the body `{"n":SEQ}`; a game's first batch (from seq 1)
/// carries its settings.
pub fn events_batch(id: &str, name: &str, seqs: std::ops::RangeInclusive<i64>) -> mahjong::store::Batch {
    let mut b = mahjong::store::Batch::new(id, playing_row(name, *seqs.end()));
    if *seqs.start() == 1 {
        b.settings = Some("{}".into());
    }
    b.events = seqs
        .map(|seq| mahjong::store::EventRow {
            seq,
            at_us: seq,
            hand: 1,
            audience: mahjong::rules::event::Audience::Everyone,
            body: format!("{{\"n\":{seq}}}"),
        })
        .collect();
    b
}
