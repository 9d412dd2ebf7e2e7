//! A cluster trusts nothing on its NATS: three nodes on a NATS server with
//! authentication, and a stranger on the same NATS (it has the broker's
//! credentials, as anyone sharing the broker would) that listens to every
//! subject and publishes forged and replayed commands. It reads no
//! concealed tile and no token, and every forgery is refused and counted.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use mahjong_tools::client::{SeatPlan, TableSocket, play_seat};
use serde_json::{Value, json};

use crate::cluster::{Node, OwnNats, concealed_tile_owner, metric, nats_is_there, wait_for};
use crate::common::db::TestDb;
use crate::common::process::free_port;

/// A connection to the cluster's database, to read what the nodes keep.
async fn pool(url: &str) -> sqlx::PgPool {
    sqlx::PgPool::connect(url).await.unwrap()
}

/// A refused-message count of one node, by why.
async fn refused(node: &Node, why: &str) -> f64 {
    metric(node.addr, &format!("mahjong_cluster_refused_messages_total{{why=\"{why}\"}}")).await
}

/// Everything published on a NATS server, as the stranger heard it.
type Heard = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stranger_on_nats_reads_nothing_and_forges_nothing() {
    nats_is_there();
    let port = free_port();
    let (user, password) = ("mahjong", "a-long-nats-password");
    let _nats = OwnNats::start_with(port, &["--user", user, "--pass", password]);
    let url = format!("nats://{user}:{password}@127.0.0.1:{port}");
    let db = TestDb::new("postgres").await;
    let nodes = Node::several_on(&url, &["east", "south", "west"], &db.url, 0, &[]).await;
    // The stranger listens to everything.
    let spy = async_nats::ConnectOptions::with_user_and_password(user.into(), password.into())
        .connect(format!("127.0.0.1:{port}"))
        .await
        .unwrap();
    let mut everything = spy.subscribe(">").await.unwrap();
    let heard: Heard = Arc::default();
    let keeper = heard.clone();
    tokio::spawn(async move {
        while let Some(message) = everything.next().await {
            keeper.lock().unwrap().push((message.subject.to_string(), message.payload.to_vec()));
        }
    });

    // A person sits through one node at a table another plays, and plays from the third.
    let table = nodes[0].api().table(&[1, 2, 3], json!({"NumRounds": 1})).await;
    let owner_name = nodes[0].api().table_info(&table).await["node"].as_str().unwrap().to_string();
    let owner = nodes.iter().position(|n| n.name == owner_name).unwrap();
    let (sits_at, plays_at) = ((owner + 1) % 3, (owner + 2) % 3);
    let token = nodes[sits_at].api().sit(&table, "Eve", 0).await;
    nodes[sits_at].api().start(&table, Some(&token)).await;
    let mut player = TableSocket::connect(nodes[plays_at].addr, &table, Some(&token), None).await.unwrap();
    let game = tokio::spawn(async move { play_seat(&mut player, SeatPlan::new(0)).await });
    // Some play crosses NATS before the stranger strikes.
    wait_for(Duration::from_secs(30), "the relayed game to be under way", || async {
        heard.lock().unwrap().iter().filter(|(s, _)| s.starts_with("mj.relay.")).count() > 20
    })
    .await;

    // 1. The forged connect of the report, in clear, to the owner's subject:
    //    no token, an account, a relay of the stranger's.
    let owner_id: String = sqlx::query_scalar("SELECT id FROM cluster_nodes WHERE name = $1")
        .bind(&owner_name)
        .fetch_one(&pool(&db.url).await)
        .await
        .unwrap();
    let forged = json!({"op": "connect", "table": table, "token": null, "account": 1, "since": null,
        "replay_hand": false, "relay": format!("mj.relay.{owner_id}.777"), "from": owner_id});
    let subject = format!("mj.node.{owner_id}");
    let mut mine: Vec<Vec<u8>> = vec![forged.to_string().into_bytes()];
    let answer =
        tokio::time::timeout(Duration::from_secs(2), spy.request(subject.clone(), forged.to_string().into())).await;
    assert!(!matches!(answer, Ok(Ok(_))), "a forged connect was answered: {answer:?}");
    // A forged move and a forged chat, published without a reply.
    let act = json!({"op": "message", "table": table, "connection": 1, "message": {"type": "chat", "text": "forged"}});
    spy.publish(subject.clone(), act.to_string().into()).await.unwrap();
    mine.push(act.to_string().into_bytes());
    // 2. A sealed command a node sent, replayed as it was, and altered.
    let captured = heard
        .lock()
        .unwrap()
        .iter()
        .find(|(s, _)| s == &subject)
        .cloned()
        .expect("the stand-ins' commands to the owner were heard");
    spy.publish(subject.clone(), captured.1.clone().into()).await.unwrap();
    let mut altered = captured.1.clone();
    *altered.last_mut().unwrap() ^= 0x55;
    spy.publish(subject.clone(), altered.clone().into()).await.unwrap();
    mine.extend([captured.1.clone(), altered]);
    // 3. A sealed message moved to another subject (the lobby's).
    let lobby = heard.lock().unwrap().iter().map(|(s, _)| s.clone()).find(|s| s.ends_with(".lobby"));
    if let Some(lobby) = lobby {
        spy.publish(lobby, captured.1.clone().into()).await.unwrap();
    }
    spy.flush().await.unwrap();
    let watcher = &nodes[owner];
    wait_for(Duration::from_secs(5), "the forgeries to be refused and counted", || async {
        refused(watcher, "unsealed").await >= 2.0
            && refused(watcher, "replayed").await >= 1.0
            && refused(watcher, "forged").await >= 1.0
    })
    .await;

    // The player was not disturbed: it played its game to the end.
    let log = game.await.unwrap().unwrap();
    assert!(log.game_over && log.moves > 10, "the game was played: {} moves", log.moves);
    assert!(log.errors.is_empty(), "{:?}", log.errors);
    assert!(!log.received.iter().any(|t| t.contains("forged")), "a forged chat was shown");
    let mut own = 0;
    for text in &log.received {
        let value: Value = serde_json::from_str(text).unwrap();
        if concealed_tile_owner(&value["event"]) == Some(0) {
            own += 1;
        }
    }
    assert!(own > 10, "the player saw its own draws through two other nodes ({own})");

    // What the stranger heard: many messages, none readable.
    let heard = heard.lock().unwrap().clone();
    let relayed = heard.iter().filter(|(s, _)| s.starts_with("mj.relay.")).count();
    assert!(relayed > 100, "the game's stream crossed NATS ({relayed} relayed messages)");
    for (subject, payload) in &heard {
        let readable = |needle: &[u8]| payload.windows(needle.len()).any(|w| w == needle);
        // The stranger's own publications aside.
        if mine.contains(payload) {
            continue;
        }
        for needle in [token.as_bytes(), b"\"tile\"", b"\"drew\"", b"\"token\"", b"\"op\"", b"\"type\""] {
            assert!(!readable(needle), "{subject}: {:?} readable on NATS", String::from_utf8_lossy(needle));
        }
    }
    drop(nodes);
    db.remove().await;
}

/// The output of `serve` started once, in the foreground, until it exits
/// (or for at most `within`).
fn serve_once(args: &[&str], env: &[(&str, &str)], within: Duration) -> (Option<i32>, String) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mahjong-server"))
        .arg("serve")
        .args(args)
        .envs(env.iter().copied())
        .env("RUST_LOG", "info")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + within;
    let code = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status.code();
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = child.wait_with_output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (code, said)
}

/// A node started before its NATS server waits for it, trying again with
/// back-off, and joins once it answers; a database that does not answer
/// stops it after `--wait-for-services`, its password never shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_waits_for_a_nats_starting_beside_it() {
    nats_is_there();
    let db = TestDb::new("postgres").await;
    let port = free_port();
    let url = format!("nats://127.0.0.1:{port}");
    let database = db.url.clone();
    let early = tokio::spawn(async move { Node::start_on(&url, "early", &database, 0, &[]).await });
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(!early.is_finished(), "the node waits for NATS");
    let _nats = OwnNats::start(port);
    let node = early.await.unwrap();
    assert!(node.is_ready().await, "joined once NATS answered");
    drop(node);
    let (code, said) = serve_once(
        &["--database", "postgres://someone:pg-secret-pw@127.0.0.1:1/none", "--wait-for-services", "1"],
        &[],
        Duration::from_secs(60),
    );
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("cannot open the database") && !said.contains("pg-secret-pw"), "{said}");
    db.remove().await;
}

/// Kills a child process when dropped.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_starting_node_answers_not_ready_until_its_services_answer() {
    nats_is_there();
    let db = TestDb::new("postgres").await;
    let nats_port = free_port();
    let addr: std::net::SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let nats = format!("nats://127.0.0.1:{nats_port}");
    let start = |database: &str| {
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_mahjong-server"))
            .args(["serve", "--listen", &addr.to_string(), "--database", database, "--nats", &nats])
            .args(["--wait-for-services", "60"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        Killed(child)
    };
    // Every path answers 503 at once, with the code of what is awaited.
    let refused_with = |code: &'static str| async move {
        let mut answers = Vec::new();
        for path in ["/healthz", "/readyz", "/api/v1/tables"] {
            let Ok(a) = mahjong_tools::client::http(addr, "GET", path, None, None).await else { return false };
            answers.push(a.status == 503 && a.body["error"]["code"] == code && a.header("retry-after") == Some("1"));
        }
        answers.iter().all(|&ok| ok)
    };
    // A database that does not answer yet (nothing listens on port 1).
    let waiting = start("postgres://mahjong@127.0.0.1:1/mahjong");
    wait_for(Duration::from_secs(20), "503 store_unavailable while the database is awaited", || {
        refused_with("store_unavailable")
    })
    .await;
    drop(waiting);
    // The database answers; NATS not yet.
    let node = start(&db.url);
    wait_for(Duration::from_secs(20), "503 not_member while NATS is awaited", || refused_with("not_member")).await;
    let nats_server = OwnNats::start(nats_port);
    wait_for(Duration::from_secs(30), "the node to serve once NATS answers", || async {
        let healthz = mahjong_tools::client::http(addr, "GET", "/healthz", None, None).await;
        let readyz = mahjong_tools::client::http(addr, "GET", "/readyz", None, None).await;
        healthz.is_ok_and(|a| a.status == 200) && readyz.is_ok_and(|a| a.status == 200)
    })
    .await;
    drop((node, nats_server));
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn nats_credentials_are_used_and_never_shown() {
    nats_is_there();
    let db = TestDb::new("postgres").await;
    // A user and its password.
    let port = free_port();
    let _nats = OwnNats::start_with(port, &["--user", "mahjong", "--pass", "right-horse-battery"]);
    let wrong = format!("nats://mahjong:wrong-horse-battery@127.0.0.1:{port}");
    let (code, said) =
        serve_once(&["--database", &db.url, "--nats", &wrong, "--listen", "127.0.0.1:0"], &[], Duration::from_secs(30));
    assert_ne!(code, Some(0), "{said}");
    assert!(code.is_some(), "a node that cannot get into NATS stops: {said}");
    assert!(said.contains("cannot connect to NATS") && said.contains("127.0.0.1"), "{said}");
    assert!(!said.contains("wrong-horse-battery"), "the password was shown: {said}");
    // The right one, from the environment.
    let plain = format!("nats://127.0.0.1:{port}");
    let mut node = Node::start_on(
        &plain,
        "with a password",
        &db.url,
        0,
        &["--nats-user", "mahjong", "--nats-password", "right-horse-battery"],
    )
    .await;
    assert!(node.is_ready().await);
    node.process.take();

    // A token, in the URL.
    let port = free_port();
    let _nats = OwnNats::start_with(port, &["--auth", "s3cret-t0ken-for-nats"]);
    let with_token = format!("nats://s3cret-t0ken-for-nats@127.0.0.1:{port}");
    let node = Node::start_on(&with_token, "with a token", &db.url, 0, &[]).await;
    assert!(node.is_ready().await);
    // Given twice over, refused before anything starts, showing neither.
    let (code, said) = serve_once(
        &["--database", &db.url, "--nats", &with_token, "--listen", "127.0.0.1:0"],
        &[("MAHJONG_NATS_PASSWORD", "pw-from-env"), ("MAHJONG_NATS_USER", "someone")],
        Duration::from_secs(30),
    );
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("one kind of credentials"), "{said}");
    assert!(!said.contains("s3cret-t0ken") && !said.contains("pw-from-env"), "{said}");
    drop(node);
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rotated_key_takes_over_without_losing_a_message() {
    nats_is_there();
    let db = TestDb::new("postgres").await;
    let nats = crate::cluster::NATS;
    let nodes = [
        Node::start_on(nats, "keeper", &db.url, 2, &["--lease-seconds", "2"]).await,
        Node::start_on(nats, "follower", &db.url, 2, &["--lease-seconds", "2"]).await,
    ];
    let table = nodes[0].api().table(&[0, 1, 2, 3], json!({"NumRounds": 2})).await;
    nodes[0].api().start(&table, None).await;
    let owner = nodes[0].api().table_info(&table).await["node"].as_str().unwrap().to_string();
    let other = nodes.iter().find(|n| n.name != owner).unwrap();
    // Which key seals what the nodes say, as a listener on NATS sees it (the
    // key's number is in clear in every message's header).
    let cluster: String =
        sqlx::query_scalar("SELECT id FROM cluster_identity").fetch_one(&pool(&db.url).await).await.unwrap();
    let spy = async_nats::connect(nats).await.unwrap();
    // This cluster's lobby only: other tests' clusters share the NATS.
    let mut said = spy.subscribe(format!("mj.{cluster}.lobby")).await.unwrap();
    let rotated = std::process::Command::new(env!("CARGO_BIN_EXE_mahjong-server"))
        .args(["cluster-key", "rotate", "--database", &db.url])
        .output()
        .unwrap();
    assert!(rotated.status.success(), "{}", String::from_utf8_lossy(&rotated.stderr));
    assert!(String::from_utf8_lossy(&rotated.stdout).contains("cluster key 2"));
    // The key the nodes seal with now: the other node is asked for the lobby,
    // which it asks the owner for over NATS.
    let mut key_now = async || loop {
        let _ = other.api().get("/api/v1/tables").await;
        let heard = tokio::time::timeout(Duration::from_millis(500), async {
            while let Some(message) = said.next().await {
                if message.payload.len() > 5 {
                    return u32::from_be_bytes(message.payload[1..5].try_into().unwrap());
                }
            }
            0
        });
        if let Ok(key) = heard.await {
            return key;
        }
    };
    assert_eq!(key_now().await, 1, "the new key is not used before its time");
    // Announced 30 s ahead: then it seals what the nodes say.
    let switched = tokio::time::timeout(Duration::from_secs(60), async {
        while key_now().await != 2 {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    })
    .await;
    assert!(switched.is_ok(), "the nodes sealed with key 2 within a minute");
    // A spectator through the node that does not play the table follows it on.
    let seq = other.api().table_info(&table).await["seq"].as_u64().unwrap();
    let seen = crate::cluster::follow(vec![other.addr], table.clone(), seq + 20).await;
    crate::cluster::followed_to(&seen, seq + 20);
    let keys: Vec<(i64, bool)> =
        sqlx::query_as("SELECT id, active_at <= clock_timestamp() FROM cluster_keys ORDER BY id")
            .fetch_all(&pool(&db.url).await)
            .await
            .unwrap();
    assert_eq!(keys, [(1, true), (2, true)]);
    for node in &nodes {
        for why in ["unknown_key", "forged", "stale", "replayed"] {
            assert_eq!(refused(node, why).await, 0.0, "{}: {why}", node.name);
        }
    }
    drop(nodes);
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_ended_session_closes_its_sockets_on_every_node() {
    nats_is_there();
    let db = TestDb::new("postgres").await;
    let nodes = Node::several_on(crate::cluster::NATS, &["one", "two", "three"], &db.url, 0, &[]).await;
    let session = nodes[0].api().register("Uma", "correct horse battery").await;
    let table = nodes[0].api().table(&[1, 2, 3], json!({})).await;
    let owner_name = nodes[0].api().table_info(&table).await["node"].as_str().unwrap().to_string();
    // The sockets on a node that neither plays the table nor ends the session, if there is one.
    let socket_node = nodes.iter().skip(1).find(|n| n.name != owner_name).unwrap();
    let grant = socket_node
        .api()
        .request(
            "POST",
            &format!("/api/v1/tables/{table}/seats"),
            Some(&json!({"name": "Uma", "seat": 0})),
            Some(&session),
        )
        .await;
    assert_eq!(grant.status, 201, "{}", grant.body);
    let token = grant.body["token"].as_str().unwrap().to_string();
    let mut by_token = TableSocket::connect(socket_node.addr, &table, Some(&token), None).await.unwrap();
    by_token.next(Duration::from_secs(5)).await.expect("the snapshot");
    // A socket of the session itself, watching another table (at this one it
    // would play the seat, in the token's socket's place).
    let other_table = nodes[0].api().table(&[0, 1, 2, 3], json!({})).await;
    let cookie = format!("mj_session={session}");
    let mut by_cookie =
        TableSocket::connect_with(socket_node.addr, &other_table, None, None, &[("cookie", &cookie)]).await.unwrap();
    by_cookie.next(Duration::from_secs(5)).await.expect("the snapshot");
    let mut guest = TableSocket::connect(socket_node.addr, &table, None, None).await.unwrap();
    guest.next(Duration::from_secs(5)).await.expect("the snapshot");
    // Logged out through the first node: both sockets close within a second.
    let out = nodes[0].api().request("POST", "/api/v1/auth/logout", Some(&json!({})), Some(&session)).await;
    assert_eq!(out.status, 204, "{}", out.body);
    let within = Duration::from_secs(1);
    assert_eq!(by_token.close_code(within).await.unwrap(), Some(4001), "the seat token's socket");
    assert_eq!(by_cookie.close_code(within).await.unwrap(), Some(4001), "the session's socket");
    assert!(guest.close_code(Duration::from_millis(500)).await.is_err(), "a guest's socket stays");
    assert!(TableSocket::connect(socket_node.addr, &table, Some(&token), None).await.is_err());
    drop(nodes);
    db.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn limits_count_over_the_whole_cluster() {
    use mahjong_tools::client::request_from;
    nats_is_there();
    let db = TestDb::new("postgres").await;
    // Robots slow enough that a game of theirs lasts the test.
    let names = ["left", "middle", "right"];
    let nodes = Node::several_on(crate::cluster::NATS, &names, &db.url, 5, &["--max-seats", "3"]).await;
    // One client (not the tests' exempt 127.0.0.1) asks each node in turn.
    let from: std::net::IpAddr = "127.0.0.2".parse().unwrap();
    let mut turn = 0usize;
    let mut ask = async |method: &str, path: &str, body: Value, token: Option<&str>| {
        let node = &nodes[turn % 3];
        turn += 1;
        let bearer = token.map(|t| format!("Bearer {t}"));
        let headers: Vec<(&str, &str)> = bearer.iter().map(|b| ("authorization", b.as_str())).collect();
        request_from(Some(from), node.addr, method, path, Some(&body), &headers).await.unwrap()
    };
    let count_until_refused = |answers: &[mahjong_tools::client::Answer]| {
        let granted = answers.iter().take_while(|a| a.status < 300).count();
        let refused = &answers[granted];
        assert_eq!(refused.status, 429, "{}", refused.body);
        granted
    };

    // Tables waiting to start: 4 over the three nodes, not 4 on each.
    let mut answers = Vec::new();
    for n in 0..6 {
        answers.push(ask("POST", "/api/v1/tables", json!({"name": format!("waiting {n}")}), None).await);
    }
    assert_eq!(count_until_refused(&answers), 4, "waiting tables");
    let waiting: Vec<String> = answers[..4].iter().map(|a| a.body["id"].as_str().unwrap().to_string()).collect();
    // Seats (--max-seats 3): three over the cluster.
    let mut answers = Vec::new();
    for table in &waiting {
        answers.push(ask("POST", &format!("/api/v1/tables/{table}/seats"), json!({"name": "Pat"}), None).await);
    }
    assert_eq!(count_until_refused(&answers), 3, "seats");
    // Games of robots alone: 2.
    let robots = json!({"robots": [{}, {}, {}, {}], "start": true, "options": {"NumRounds": 4}});
    let mut answers = Vec::new();
    for _ in 0..3 {
        answers.push(ask("POST", "/api/v1/tables", robots.clone(), None).await);
    }
    assert_eq!(count_until_refused(&answers), 2, "games of robots");
    // Registrations: 5 from one address.
    let mut answers = Vec::new();
    for n in 0..6 {
        let body = json!({"name": format!("newcomer{n}"), "password": "correct horse battery"});
        answers.push(ask("POST", "/api/v1/auth/register", body, None).await);
    }
    assert_eq!(count_until_refused(&answers), 5, "registrations");
    // Wrong logins for one name: 5, then the address waits, on every node.
    let mut answers = Vec::new();
    for _ in 0..6 {
        let body = json!({"name": "newcomer0", "password": "not the password"});
        answers.push(ask("POST", "/api/v1/auth/login", body, None).await);
    }
    let wrong = answers.iter().take_while(|a| a.status == 401).count();
    assert_eq!(wrong, 5, "{:?}", answers.iter().map(|a| a.status).collect::<Vec<_>>());
    assert_eq!(answers[5].status, 429, "{}", answers[5].body);
    drop(nodes);
    db.remove().await;
}

/// The hands of robots alone dealt for one player count over the whole
/// cluster: a game at one node spends the budget, and the others refuse
/// the next game; an admin's change at one node is in force at the others
/// by their next heartbeat.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_budget_of_robots_hands_holds_over_the_whole_cluster() {
    use mahjong_tools::client::request_from;
    nats_is_there();
    let db = TestDb::new("postgres").await;
    let flags = ["--robot-hands-per-hour", "5", "--max-robot-games", "10"];
    let nodes = Node::several_on(crate::cluster::NATS, &["first", "second", "third"], &db.url, 0, &flags).await;
    let from: std::net::IpAddr = "127.0.0.3".parse().unwrap();
    let robots = json!({"robots": [{}, {}, {}, {}], "start": true, "options": {"NumRounds": 2}});
    let open = async |node: &Node| {
        request_from(Some(from), node.addr, "POST", "/api/v1/tables", Some(&robots), &[]).await.unwrap()
    };
    let first = open(&nodes[0]).await;
    assert_eq!(first.status, 201, "{}", first.body);
    let game = first.body["id"].as_str().unwrap().to_string();
    nodes[0].api().wait_over(&game).await;
    let played = nodes[1].api().get(&format!("/api/v1/games/{game}")).await;
    assert_eq!(played["hands"], 6, "five hands paid for, the sixth found over the budget: {played}");
    for node in &nodes[1..] {
        let refused = open(node).await;
        assert_eq!(refused.status, 429, "at {}: {}", node.name, refused.body);
        assert!(refused.body["error"]["message"].as_str().unwrap().contains("budget of hands"), "{}", refused.body);
    }
    // An admin at the third node gives everyone more.
    let admin = crate::cluster::admin(&db.url, nodes[2].api()).await;
    let wanted = json!({"hands_per_hour": 50, "hands_per_day": 200, "kept_for_s": 86400});
    let set = nodes[2].api().request("PUT", "/api/v1/admin/robot-budget", Some(&wanted), Some(&admin)).await;
    assert_eq!(set.status, 200, "{}", set.body);
    let mut answer = None;
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let a = open(&nodes[1]).await;
        if a.status == 201 {
            answer = Some(a);
            break;
        }
    }
    assert!(answer.is_some(), "the second node took the admin's budget within its heartbeats");
    drop(nodes);
    db.remove().await;
}

/// Runs a command that must succeed (the tests' own certificates).
fn run(program: &str, args: &[&str], dir: &std::path::Path) {
    let out = std::process::Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{program} is needed for the NATS TLS test (apt-get install openssl): {e}"));
    assert!(out.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn nats_nkeys_and_tls_with_a_ca_are_used() {
    nats_is_there();
    let db = TestDb::new("postgres").await;
    let dir = tempfile::tempdir().unwrap();
    // An nkey user: the server knows its public key, the node holds its seed in a file.
    let user = nkeys::KeyPair::new_user();
    let seed = dir.path().join("node.nk");
    std::fs::write(&seed, format!("{}\n", user.seed().unwrap())).unwrap();
    let conf = dir.path().join("nats.conf");
    std::fs::write(&conf, format!("authorization {{ users = [ {{ nkey: {} }} ] }}\n", user.public_key())).unwrap();
    let port = free_port();
    let _nats = OwnNats::start_with(port, &["-c", conf.to_str().unwrap()]);
    let url = format!("nats://127.0.0.1:{port}");
    let node = Node::start_on(&url, "by nkey", &db.url, 0, &["--nats-nkey", seed.to_str().unwrap()]).await;
    assert!(node.is_ready().await);
    drop(node);
    let (code, said) =
        serve_once(&["--database", &db.url, "--nats", &url, "--listen", "127.0.0.1:0"], &[], Duration::from_secs(30));
    assert!(code.is_some_and(|c| c != 0), "without the nkey the node does not get in: {said}");

    // TLS, the server's certificate signed by a CA of the test's own.
    let d = dir.path();
    run(
        "openssl",
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "1",
            "-subj",
            "/CN=mahjong test CA",
        ],
        d,
    );
    run(
        "openssl",
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
        d,
    );
    std::fs::write(d.join("san.cnf"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    run(
        "openssl",
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "1",
            "-extfile",
            "san.cnf",
        ],
        d,
    );
    let port = free_port();
    let (cert, key) = (d.join("server.pem"), d.join("server.key"));
    let _tls = OwnNats::start_with(
        port,
        &[
            "--tls",
            "--tlscert",
            cert.to_str().unwrap(),
            "--tlskey",
            key.to_str().unwrap(),
            "--user",
            "mahjong",
            "--pass",
            "over-tls-only",
        ],
    );
    let url = format!("nats://mahjong:over-tls-only@127.0.0.1:{port}");
    let ca = d.join("ca.pem");
    let node = Node::start_on(&url, "over TLS", &db.url, 0, &["--nats-ca", ca.to_str().unwrap()]).await;
    assert!(node.is_ready().await);
    drop(node);
    // A server whose certificate no trusted CA signed is not spoken to.
    let (code, said) = serve_once(
        &["--database", &db.url, "--nats", &url.replace("nats://", "tls://"), "--listen", "127.0.0.1:0"],
        &[],
        Duration::from_secs(30),
    );
    assert!(code.is_some_and(|c| c != 0), "an unknown CA was trusted: {said}");
    assert!(!said.contains("over-tls-only"), "{said}");
    db.remove().await;
}
