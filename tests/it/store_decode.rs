//! Stored values that do not read are errors, never panics: a value of the
//! wrong type (SQLite keeps whatever it is given) and a name that is not a
//! state, through the store's reads, recovery and the REST answer.

use crate::common;

use common::db::TestDb;
use mahjong::rules::event::Audience;
use mahjong::store::queries::Window;
use mahjong::store::{Batch, EventRow, Store, StoreError};

use tokio::net::TcpListener;

fn batch(id: &str) -> Batch {
    let row = common::db::playing_row("decode", 1);
    let mut b = Batch::new(id, row);
    b.settings = Some("{}".into());
    b.events = vec![EventRow { seq: 1, at_us: 1, hand: 1, audience: Audience::Everyone, body: "{}".into() }];
    b
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_that_do_not_read_are_errors() {
    let db = TestDb::new("sqlite").await;
    // One file: the test spoils rows through the store's pool, whose game
    // tables are views over the files when there are several.
    let store = Store::open(&format!("{}?parts=1", db.url)).await.unwrap();
    for id in ["typed", "named", "fine"] {
        store.write(batch(id)).await.unwrap();
    }
    sqlx::query("UPDATE games SET hands = 'several' WHERE id = 'typed'").execute(store.pool()).await.unwrap();
    sqlx::query("UPDATE games SET state = 'paused' WHERE id = 'named'").execute(store.pool()).await.unwrap();
    sqlx::query("UPDATE events SET at_us = 'soon' WHERE game_id = 'fine'").execute(store.pool()).await.unwrap();

    let e = store.game_progress("typed").await.unwrap_err();
    assert!(matches!(e, StoreError::Decode(_)), "{e}");
    let e = store.game_detail("typed").await.unwrap_err();
    assert!(matches!(e, StoreError::Decode(_)), "{e}");
    let e = store.list_games(&Default::default(), Window { limit: 10, offset: 0 }).await.unwrap_err();
    assert!(matches!(e, StoreError::Decode(_)), "{e}");
    let e = store.load_game("typed", 0).await.unwrap_err();
    assert!(matches!(&e, StoreError::Corrupt { game, .. } if game == "typed"), "{e}");
    let e = store.game_progress("named").await.unwrap_err();
    assert!(matches!(&e, StoreError::Corrupt { game, why } if game == "named" && why.contains("paused")), "{e}");
    let e = store.load_game("named", 0).await.unwrap_err();
    assert!(matches!(&e, StoreError::Corrupt { game, .. } if game == "named"), "{e}");
    let e = store.events("fine", 0).await.unwrap_err();
    assert!(matches!(&e, StoreError::Corrupt { game, .. } if game == "fine"), "{e}");

    // A server over this store starts (recovery passes over the games that
    // do not read, and counts them) and answers `500 internal` without the
    // details.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(common::app::serve(
        mahjong::server::ServerConfig::new(listener, store.clone()),
        std::future::pending(),
    ));
    let mut up = false;
    for _ in 0..100 {
        if mahjong_tools::client::http(addr, "GET", "/healthz", None, None).await.is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(up, "the server did not start");
    // Recovery, which reads the games together, fails each alone.
    let ready = loop {
        let a = mahjong_tools::client::http(addr, "GET", "/readyz", None, None).await.unwrap();
        if a.status == 200 {
            break a.body;
        }
        assert_eq!(a.body["error"]["code"], "recovering", "{}", a.body);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(
        (ready["total"].as_u64(), ready["recovered"].as_u64(), ready["failed"].as_u64()),
        (Some(3), Some(0), Some(3))
    );
    let a = mahjong_tools::client::http(addr, "GET", "/api/v1/games/typed", None, None).await.unwrap();
    assert_eq!((a.status, a.body["error"]["code"].as_str()), (500, Some("internal")), "{}", a.body);
    assert!(!a.body.to_string().contains("several"), "{}", a.body);
    let a = mahjong_tools::client::http(addr, "GET", "/api/v1/games/named/hands", None, None).await.unwrap();
    assert_eq!((a.status, a.body["error"]["code"].as_str()), (500, Some("internal")), "{}", a.body);
    db.remove().await;
}
