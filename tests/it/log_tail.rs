//! SQLite's log tail (`store/tail.rs`): a playing game's moves are committed
//! to `inputs_tail` and `events_tail` first and filed into `inputs` and
//! `events` later. Every read through the store sees them all; a store
//! opened on the file (after a crash, or from another process) files what
//! the tail holds; a hand's end files its game with the hand's row, and the
//! hand's blocks hold every row; closing the store files everything; a move
//! that repeats a number still waiting in the tail is refused, as one that
//! repeats a filed row; a group of moves the database refuses half-way
//! leaves nothing of it. (Postgres has no tail: the other store tests cover
//! it.)

use crate::common;

use common::db::{TestDb, events_batch};
use mahjong::store::{Batch, HandOutcome, HandRow, Input, InputRow, Store, StoreError};
use sqlx::Connection;

/// A batch of game `id` holding the events `seqs` and the inputs `ns`.
fn batch(id: &str, seqs: std::ops::RangeInclusive<i64>, ns: std::ops::RangeInclusive<i64>) -> Batch {
    let mut b = events_batch(id, "tail", seqs.clone());
    b.inputs = ns
        .map(|n| InputRow {
            n,
            seq: *seqs.start() - 1,
            input: Input::SetOption { name: "Timeout".into(), value: n.to_string() },
        })
        .collect();
    b
}

/// The same batch, ending hand 1 (which began with event `first`).
fn ending_hand(mut b: Batch, first: i64) -> Batch {
    let last = b.events.last().map_or(first, |e| e.seq);
    b.hands.push(HandRow {
        hand: 1,
        round: "E".into(),
        east: 0,
        outcome: HandOutcome::WashedOut,
        winners: Vec::new(),
        how: None,
        discarder: None,
        dice: None,
        first_seq: first,
        last_seq: last,
        started_us: first,
        ended_us: last,
        settlement: None,
        players: Vec::new(),
        payments: Vec::new(),
    });
    b
}

/// The test's database in one file: the tail is each file's own, and these
/// tests read the file past the store (`store_parts.rs` covers several).
fn one_file(db: &TestDb) -> String {
    format!("{}?parts=1", db.url)
}

/// A number read straight from the file, past the store.
async fn count(db: &TestDb, sql: &str) -> i64 {
    let mut conn = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
    let n: i64 = sqlx::query_scalar(sql).fetch_one(&mut conn).await.unwrap();
    conn.close().await.unwrap();
    n
}

async fn filed_events(db: &TestDb, id: &str) -> i64 {
    count(db, &format!("SELECT COUNT(*) FROM events WHERE game_id = '{id}'")).await
}

async fn seqs(store: &Store, id: &str) -> Vec<i64> {
    store.events(id, 0).await.unwrap().iter().map(|e| e.seq).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moves_wait_in_the_tail_and_every_read_sees_them() {
    let db = TestDb::new("sqlite").await;
    let store = Store::open(&one_file(&db)).await.unwrap();
    // A game's first batch is filed at once (the database checks it).
    store.write(batch("g", 1..=2, 1..=1)).await.unwrap();
    assert_eq!(filed_events(&db, "g").await, 2);
    // The moves that follow go to the tail.
    store.write(batch("g", 3..=5, 2..=3)).await.unwrap();
    assert_eq!(count(&db, "SELECT COUNT(*) FROM events_tail").await, 3);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM inputs_tail").await, 2);
    assert_eq!(filed_events(&db, "g").await, 2, "not filed yet");
    // A read files them first.
    assert_eq!(seqs(&store, "g").await, vec![1, 2, 3, 4, 5]);
    assert_eq!(filed_events(&db, "g").await, 5);
    let saved = store.load_game("g", 0).await.unwrap().unwrap();
    assert_eq!(saved.inputs.iter().map(|i| i.n).collect::<Vec<_>>(), vec![1, 2, 3]);
    // And the game's later moves wait in the tail again.
    store.write(batch("g", 6..=6, 4..=4)).await.unwrap();
    assert_eq!(filed_events(&db, "g").await, 5);
    assert_eq!(seqs(&store, "g").await, vec![1, 2, 3, 4, 5, 6]);
    store.close().await;
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_opened_on_the_file_files_what_the_tail_holds() {
    let db = TestDb::new("sqlite").await;
    let first = Store::open(&one_file(&db)).await.unwrap();
    first.write(batch("g", 1..=2, 1..=1)).await.unwrap();
    first.write(batch("g", 3..=4, 2..=2)).await.unwrap();
    assert_eq!(count(&db, "SELECT COUNT(*) FROM events_tail").await, 2);
    // As after a crash (or from another process on the same file): the
    // tail is filed and emptied before anything reads the log.
    let second = Store::open(&one_file(&db)).await.unwrap();
    assert_eq!(count(&db, "SELECT COUNT(*) FROM events_tail").await, 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM inputs_tail").await, 0);
    assert_eq!(filed_events(&db, "g").await, 4);
    assert_eq!(seqs(&second, "g").await, vec![1, 2, 3, 4]);
    // The first store files the same rows again when it gets to them: they
    // are there already, which is no error.
    first.write(batch("g", 5..=6, 3..=3)).await.unwrap();
    assert_eq!(seqs(&first, "g").await, vec![1, 2, 3, 4, 5, 6]);
    let saved = first.load_game("g", 0).await.unwrap().unwrap();
    assert_eq!(saved.inputs.iter().map(|i| i.n).collect::<Vec<_>>(), vec![1, 2, 3]);
    first.close().await;
    second.close().await;
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_end_files_its_game_and_its_blocks_hold_every_row() {
    let db = TestDb::new("sqlite").await;
    let store = Store::open(&one_file(&db)).await.unwrap();
    store.write(batch("g", 1..=2, 1..=1)).await.unwrap();
    store.write(batch("g", 3..=5, 2..=3)).await.unwrap();
    store.write(batch("g", 6..=7, 4..=4)).await.unwrap();
    assert_eq!(filed_events(&db, "g").await, 2);
    store.write(ending_hand(batch("g", 8..=9, 5..=5), 1)).await.unwrap();
    // Filed with the hand's row, in its transaction, without a read.
    assert_eq!(filed_events(&db, "g").await, 9);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM hands WHERE game_id = 'g'").await, 1);
    assert_eq!(count(&db, "SELECT MIN(first_seq) FROM event_blocks WHERE game_id = 'g'").await, 1);
    assert_eq!(count(&db, "SELECT MAX(last_seq) FROM event_blocks WHERE game_id = 'g'").await, 9);
    assert_eq!(count(&db, "SELECT MAX(last_n) FROM input_blocks WHERE game_id = 'g'").await, 5);
    let body: String =
        sqlx::query_scalar("SELECT body FROM event_blocks WHERE game_id = 'g'").fetch_one(store.pool()).await.unwrap();
    assert_eq!(body.split('\u{1e}').count(), 9, "the block holds every event of the hand");
    store.close().await;
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_store_files_everything() {
    let db = TestDb::new("sqlite").await;
    let store = Store::open(&one_file(&db)).await.unwrap();
    for game in ["a", "b", "c"] {
        store.write(batch(game, 1..=1, 1..=1)).await.unwrap();
        store.write(batch(game, 2..=4, 2..=2)).await.unwrap();
    }
    assert_eq!(count(&db, "SELECT COUNT(*) FROM events_tail").await, 9);
    store.close().await;
    assert_eq!(count(&db, "SELECT COUNT(*) FROM events_tail").await, 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM inputs_tail").await, 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM events").await, 12);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM inputs").await, 6);
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_repeating_a_row_still_in_the_tail_is_refused() {
    let db = TestDb::new("sqlite").await;
    let store = Store::open(&one_file(&db)).await.unwrap();
    store.write(batch("g", 1..=2, 1..=1)).await.unwrap();
    store.write(batch("g", 3..=4, 2..=2)).await.unwrap();
    assert_eq!(filed_events(&db, "g").await, 2, "3 and 4 wait in the tail");
    // Event 4 again, and an input numbered 2 again.
    for bad in [batch("g", 4..=5, 3..=3), batch("g", 5..=5, 2..=2)] {
        match store.write(bad).await {
            Err(StoreError::Rejected(_)) => {}
            other => panic!("a repeated number is refused, not {other:?}"),
        }
    }
    assert_eq!(seqs(&store, "g").await, vec![1, 2, 3, 4], "nothing of the refused batches is stored");
    let saved = store.load_game("g", 0).await.unwrap().unwrap();
    assert_eq!(saved.inputs.iter().map(|i| i.n).collect::<Vec<_>>(), vec![1, 2]);
    // The game goes on from where it stood.
    store.write(batch("g", 5..=5, 3..=3)).await.unwrap();
    assert_eq!(seqs(&store, "g").await, vec![1, 2, 3, 4, 5]);
    assert!(*store.available().borrow(), "a refusal is not an outage");
    store.close().await;
    db.remove().await;
}

/// A group of moves is one query on SQLite (its transaction, its rows in the
/// tail and its commit): when a statement in it fails, nothing of the batch
/// is stored, and the writer's connection is not left inside the failed
/// transaction: the next batch goes in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_the_database_refuses_mid_way_leaves_nothing_and_the_next_goes_in() {
    let db = TestDb::new("sqlite").await;
    let store = Store::open(&one_file(&db)).await.unwrap();
    store.write(batch("g", 1..=2, 1..=1)).await.unwrap();
    store.write(batch("g", 3..=4, 2..=2)).await.unwrap();
    // The events' statement fails after the inputs' one went in.
    let mut side = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
    sqlx::query(
        "CREATE TRIGGER refuse_event_6 BEFORE INSERT ON events_tail WHEN NEW.seq = 6 \
         BEGIN SELECT RAISE(ABORT, 'refused for the test'); END",
    )
    .execute(&mut side)
    .await
    .unwrap();
    match store.write(batch("g", 5..=6, 3..=3)).await {
        Err(StoreError::Rejected(_)) => {}
        other => panic!("the database refused the batch, not {other:?}"),
    }
    assert_eq!(count(&db, "SELECT COUNT(*) FROM inputs_tail WHERE n = 3").await, 0, "its input was rolled back");
    assert_eq!(seqs(&store, "g").await, vec![1, 2, 3, 4]);
    sqlx::query("DROP TRIGGER refuse_event_6").execute(&mut side).await.unwrap();
    side.close().await.unwrap();
    store.write(batch("g", 5..=6, 3..=3)).await.unwrap();
    assert_eq!(seqs(&store, "g").await, vec![1, 2, 3, 4, 5, 6]);
    assert!(*store.available().borrow(), "a refusal is not an outage");
    store.close().await;
    db.remove().await;
}

/// A move with events and no input (a table's own timer, say) waits in the
/// tail as the others do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_without_an_input_waits_in_the_tail_too() {
    let db = TestDb::new("sqlite").await;
    let store = Store::open(&one_file(&db)).await.unwrap();
    store.write(batch("g", 1..=2, 1..=1)).await.unwrap();
    // Its game's row unchanged: a group of moves alone.
    let mut timer = events_batch("g", "tail", 3..=4);
    timer.game_changed = false;
    store.write(timer).await.unwrap();
    store.write(batch("g", 5..=5, 2..=2)).await.unwrap();
    assert_eq!(count(&db, "SELECT COUNT(*) FROM events_tail").await, 3, "3, 4 and 5 wait in the tail");
    assert_eq!(seqs(&store, "g").await, vec![1, 2, 3, 4, 5]);
    let saved = store.load_game("g", 0).await.unwrap().unwrap();
    assert_eq!(saved.inputs.iter().map(|i| (i.n, i.seq)).collect::<Vec<_>>(), vec![(1, 0), (2, 4)]);
    store.close().await;
    db.remove().await;
}
