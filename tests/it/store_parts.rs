//! An SQLite store split over several files (`store/parts.rs`): each game
//! lives whole in the file its id hashes to, each file has its own writer,
//! and every read (a game, the list of games, a hand, standings) sees all
//! the files as one store. How many files is fixed when the database is
//! created: opening it with another number is refused, a database from
//! before parts stays one file, and an import with an idempotency key
//! lives in the first file, beside the key.

use crate::common;

use common::app::TestApp;
use common::db::{TestDb, events_batch};
use mahjong::store::parts::{MAX_PARTS, part_file, part_of};
use mahjong::store::queries::{GameFilter, Window};
use mahjong::store::{Store, StoreError};
use mahjong::table::TableDefaults;
use sqlx::Connection;

/// The ids of the games in one file, read past the store.
async fn games_in(file: &std::path::Path) -> Vec<String> {
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", file.display())).await.unwrap();
    let ids = sqlx::query_scalar("SELECT id FROM games ORDER BY id").fetch_all(&mut conn).await.unwrap();
    conn.close().await.unwrap();
    ids
}

fn main_file(db: &TestDb) -> std::path::PathBuf {
    mahjong::store::parts::file_of(&db.url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_game_lives_in_its_part_and_reads_see_every_part() {
    let db = TestDb::new("sqlite").await;
    let store = Store::open(&format!("{}?parts=3", db.url)).await.unwrap();
    assert_eq!(store.files(), 3);
    let ids: Vec<String> = (0..24).map(|i| format!("{i:032x}")).collect();
    for id in &ids {
        store.write(events_batch(id, id, 1..=2)).await.unwrap();
        store.write(events_batch(id, id, 3..=5)).await.unwrap();
    }
    // Every game is read back whole, wherever it lives.
    for id in &ids {
        let seqs: Vec<i64> = store.events(id, 0).await.unwrap().iter().map(|e| e.seq).collect();
        assert_eq!(seqs, vec![1, 2, 3, 4, 5], "{id}");
    }
    let page = store.list_games(&GameFilter::default(), Window { limit: 100, offset: 0 }).await.unwrap();
    assert_eq!(page.games.len(), ids.len());
    store.close().await;
    // Each file holds exactly the games that hash to it, and none is empty.
    for k in 0..3 {
        let expected: Vec<String> = ids.iter().filter(|id| part_of(id, 3) == k).cloned().collect();
        assert!(!expected.is_empty());
        assert_eq!(games_in(&part_file(&main_file(&db), k)).await, expected, "part {k}");
    }
    // Opened again without saying: three parts, as created.
    let again = Store::open(&db.url).await.unwrap();
    assert_eq!(again.files(), 3);
    assert_eq!(again.unfinished_games().await.unwrap().len(), ids.len());
    again.close().await;
    // A file gone: refused, naming it (opening would make an empty one).
    let gone = part_file(&main_file(&db), 2);
    let kept = gone.with_extension("kept");
    std::fs::rename(&gone, &kept).unwrap();
    let e = Store::open(&db.url).await.unwrap_err();
    assert!(matches!(e, StoreError::MissingPart { parts: 3, .. }), "{e}");
    assert!(e.to_string().contains(&format!("'{}' is missing", gone.display())), "{e}");
    assert!(!gone.exists());
    std::fs::rename(&kept, &gone).unwrap();
    // With another number: refused, saying what to write.
    let e = Store::open(&format!("{}?parts=2", db.url)).await.unwrap_err();
    assert!(matches!(e, StoreError::Url { .. }), "{e}");
    assert!(e.to_string().contains("created in 3 part(s), not 2"), "{e}");
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_with_games_from_before_parts_stays_one_file() {
    let db = TestDb::new("sqlite").await;
    let store = Store::open(&format!("{}?parts=1", db.url)).await.unwrap();
    store.write(events_batch("old", "old", 1..=1)).await.unwrap();
    store.close().await;
    // As a database made before parts: games, and no record of parts.
    let mut conn = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
    sqlx::query("DELETE FROM store_parts").execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();
    let e = Store::open(&format!("{}?parts=4", db.url)).await.unwrap_err();
    assert!(e.to_string().contains("stays one file (parts=1)"), "{e}");
    let store = Store::open(&db.url).await.unwrap();
    assert_eq!(store.files(), 1);
    assert_eq!(store.events("old", 0).await.unwrap().len(), 1);
    store.close().await;
    assert!(!part_file(&main_file(&db), 1).exists());
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_played_over_parts_are_scored_and_queried_as_one_store() {
    // A real server on a store in as many files as there may be: robot
    // games to the end, then the score queries that join games, hands,
    // players and payments (each join of views searched file by file).
    let db = TestDb::new("sqlite").await;
    let app = TestApp::spawn_on(&format!("{}?parts={MAX_PARTS}", db.url), TableDefaults::default()).await;
    assert_eq!(app.store.files(), MAX_PARTS);
    let mut tables = Vec::new();
    for i in 0..6 {
        tables.push(app.api.robot_game(&format!("parts {i}")).await);
    }
    for table in &tables {
        app.api.wait_over(table).await;
    }
    let parts: std::collections::BTreeSet<usize> = tables.iter().map(|t| part_of(t, MAX_PARTS)).collect();
    assert!(parts.len() > 1, "the games landed in more than one file: {parts:?}");
    let list = app.api.get("/api/v1/games?state=over&limit=50").await;
    assert_eq!(list["games"].as_array().unwrap().len(), tables.len(), "{list}");
    for table in &tables {
        let game = app.api.get(&format!("/api/v1/games/{table}")).await;
        let hands = app.api.get(&format!("/api/v1/games/{table}/hands")).await;
        let n = hands["hands"].as_array().unwrap().len();
        assert!(n >= 4, "{hands}");
        assert_eq!(game["hands_finished"].as_i64(), Some(n as i64), "{game}");
        let last = app.api.get(&format!("/api/v1/games/{table}/hands/{n}")).await;
        assert_eq!(last["players"].as_array().unwrap().len(), 4, "{last}");
        let history = app.api.get(&format!("/api/v1/games/{table}/hands/{n}/events")).await;
        assert!(!history["events"].as_array().unwrap().is_empty(), "{history}");
    }
    let standings = app.api.get("/api/v1/standings").await;
    assert!(!standings["standings"].as_array().unwrap().is_empty(), "{standings}");
    app.finish().await;
    db.remove().await;
}
