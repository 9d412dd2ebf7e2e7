//! Accounts through the real server, on SQLite and Postgres: registering,
//! logging in and out, sessions (expired, revoked, by cookie with the CSRF
//! rule), password changes, the admins' user management, rate limits, a
//! disabled account's WebSocket closed, and no password or token in clear in
//! the database or the log.

use crate::common;

use std::time::Duration;

use common::app::{Api, TestApp, WAIT};
use common::on_both_backends;
use mahjong::auth::AccountSettings;
use mahjong::limits::Rate;
use mahjong::server::Serving;
use mahjong::table::TableDefaults;
use mahjong_tools::client::{Answer, TableSocket};
use serde_json::{Value, json};

const PASSWORD: &str = "correct horse battery";

async fn me(api: Api, token: &str) -> Answer {
    api.ask("/api/v1/me", Some(token)).await
}

fn code(a: &Answer) -> &str {
    a.body["error"]["code"].as_str().unwrap_or("")
}

async fn post(api: Api, path: &str, body: Value, token: Option<&str>) -> Answer {
    api.request("POST", path, Some(&body), token).await
}

on_both_backends!(
    register_log_in_and_out,
    a_password_change_ends_the_other_sessions,
    the_cookie_needs_the_csrf_header_to_change_anything,
    expired_and_unknown_tokens_are_refused,
    admins_manage_users_and_players_may_not,
    a_disabled_account_loses_its_websocket,
    every_end_of_a_session_closes_its_seat_s_websocket,
    logins_are_limited_per_address_and_per_name,
    no_password_or_token_is_stored_or_logged,
);

async fn register_log_in_and_out(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let api = app.api;
    let a = post(api, "/api/v1/auth/register", json!({"name": " Ann ", "password": PASSWORD}), None).await;
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!((a.body["user"]["name"].as_str(), a.body["user"]["role"].as_str()), (Some("Ann"), Some("player")));
    let first = a.body["token"].as_str().unwrap().to_string();
    assert!(first.starts_with("mjs_") && first.len() == 68, "{first}");
    let cookie = a.header("set-cookie").unwrap_or_default();
    assert!(cookie.starts_with(&format!("mj_session={first};")), "{cookie}");
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");

    let who = me(api, &first).await;
    assert_eq!((who.status, who.body["user"]["name"].as_str()), (200, Some("Ann")), "{}", who.body);

    // Names are unique ignoring case; bad names and passwords are refused.
    for (body, status, expected) in [
        (json!({"name": "ANN", "password": PASSWORD}), 409, "name_taken"),
        (json!({"name": "a\u{7}b", "password": PASSWORD}), 400, "bad_request"),
        (json!({"name": "", "password": PASSWORD}), 400, "bad_request"),
        (json!({"name": "x".repeat(33), "password": PASSWORD}), 400, "bad_request"),
        (json!({"name": "Bob", "password": "short"}), 400, "bad_request"),
        (json!({"name": "Bob", "password": "p".repeat(257)}), 400, "bad_request"),
        (json!({"name": "Bob"}), 400, "bad_request"),
        (json!({"name": "Bob", "password": PASSWORD, "role": "admin"}), 400, "bad_request"),
        (json!(["Bob", PASSWORD]), 400, "bad_request"),
    ] {
        let a = post(api, "/api/v1/auth/register", body.clone(), None).await;
        assert_eq!((a.status, code(&a)), (status, expected), "{body}: {}", a.body);
    }
    assert!(app.store.user_by_name("bob").await.unwrap().is_none(), "a refused registration stored an account");

    // Wrong password and unknown name get the same answer.
    let wrong = post(api, "/api/v1/auth/login", json!({"name": "ann", "password": "wrong password"}), None).await;
    let unknown = post(api, "/api/v1/auth/login", json!({"name": "nobody", "password": PASSWORD}), None).await;
    assert_eq!((wrong.status, code(&wrong)), (401, "wrong_credentials"), "{}", wrong.body);
    assert_eq!(wrong.body, unknown.body);

    // A second session; logging one out leaves the other.
    let second = api.login("ANN", PASSWORD).await;
    assert_ne!(first, second);
    let out = post(api, "/api/v1/auth/logout", json!({}), Some(&first)).await;
    assert_eq!(out.status, 204, "{}", out.body);
    assert!(out.header("set-cookie").unwrap_or_default().contains("Max-Age=0"));
    let gone = me(api, &first).await;
    assert_eq!((gone.status, code(&gone)), (401, "unauthenticated"), "{}", gone.body);
    assert_eq!(me(api, &second).await.status, 200);

    // Log out everywhere: every session ends.
    let third = api.login("ann", PASSWORD).await;
    let all = post(api, "/api/v1/auth/logout-everywhere", json!({}), Some(&third)).await;
    assert_eq!((all.status, all.body["ended"].as_u64()), (200, Some(2)), "{}", all.body);
    for token in [&second, &third] {
        assert_eq!(me(api, token).await.status, 401);
    }
    // Without a session at all.
    let none = api.ask("/api/v1/me", None).await;
    assert_eq!((none.status, code(&none)), (401, "unauthenticated"), "{}", none.body);
    app.finish().await;
}

async fn a_password_change_ends_the_other_sessions(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let api = app.api;
    let mine = api.register("Cho", PASSWORD).await;
    let other = api.login("Cho", PASSWORD).await;
    let change = |current: &str, new: &str| json!({"current": current, "new": new});
    let a = post(api, "/api/v1/auth/password", change("not it at all", "a new password"), Some(&mine)).await;
    assert_eq!((a.status, code(&a)), (401, "wrong_credentials"), "{}", a.body);
    let a = post(api, "/api/v1/auth/password", change(PASSWORD, "short"), Some(&mine)).await;
    assert_eq!((a.status, code(&a)), (400, "bad_request"), "{}", a.body);
    assert_eq!(me(api, &other).await.status, 200, "a refused change ended a session");

    let a = post(api, "/api/v1/auth/password", change(PASSWORD, "a new password"), Some(&mine)).await;
    assert_eq!(a.status, 204, "{}", a.body);
    assert_eq!(me(api, &mine).await.status, 200, "the session that changed the password lives on");
    assert_eq!(me(api, &other).await.status, 401, "the other session ended");
    let old = post(api, "/api/v1/auth/login", json!({"name": "Cho", "password": PASSWORD}), None).await;
    assert_eq!(old.status, 401);
    api.login("Cho", "a new password").await;
    app.finish().await;
}

async fn the_cookie_needs_the_csrf_header_to_change_anything(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let api = app.api;
    let token = api.register("Dee", PASSWORD).await;
    let cookie = format!("theme=dark; mj_session={token}");
    let a = api.request_with("GET", "/api/v1/me", None, &[("cookie", &cookie)]).await;
    assert_eq!((a.status, a.body["user"]["name"].as_str()), (200, Some("Dee")), "{}", a.body);
    let a = api.request_with("POST", "/api/v1/auth/logout", None, &[("cookie", &cookie)]).await;
    assert_eq!((a.status, code(&a)), (403, "csrf_header_missing"), "{}", a.body);
    assert_eq!(me(api, &token).await.status, 200, "the refused logout ended the session");
    let headers = [("cookie", cookie.as_str()), ("x-requested-with", "fetch")];
    let a = api.request_with("POST", "/api/v1/auth/logout", None, &headers).await;
    assert_eq!(a.status, 204, "{}", a.body);
    assert_eq!(me(api, &token).await.status, 401);
    app.finish().await;
}

async fn expired_and_unknown_tokens_are_refused(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let api = app.api;
    api.register("Eve", PASSWORD).await;
    let user = app.store.user_by_name("eve").await.unwrap().unwrap();
    // A session that ended yesterday, as the store would hold it.
    let expired = format!("mjs_{}", "ab".repeat(32));
    let now = mahjong::store::now_us();
    let sha = mahjong::store::token_sha256(&expired);
    app.store.create_session(&sha, user.id, now - 2 * 86_400_000_000, now - 86_400_000_000).await.unwrap();
    let a = me(api, &expired).await;
    assert_eq!((a.status, code(&a)), (401, "unauthenticated"), "{}", a.body);
    assert!(a.body["error"]["message"].as_str().unwrap().contains("expired"), "{}", a.body);
    assert!(app.store.session(&sha).await.unwrap().is_none(), "the expired session was not forgotten");
    for token in [format!("mjs_{}", "cd".repeat(32)), "mjs_short".to_string(), format!("mjs_{}", "zz".repeat(32))] {
        let a = me(api, &token).await;
        assert_eq!((a.status, code(&a)), (401, "unauthenticated"), "{token}: {}", a.body);
    }
    // A cookie holding something else than a session token.
    let a = api.request_with("GET", "/api/v1/me", None, &[("cookie", "mj_session=0123")]).await;
    assert_eq!((a.status, code(&a)), (401, "unauthenticated"), "{}", a.body);
    app.finish().await;
}

async fn admins_manage_users_and_players_may_not(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let api = app.api;
    let admin = app.admin_token().await;
    let player = api.register("Fay", PASSWORD).await;
    let fay = me(api, &player).await.body["user"]["id"].as_i64().unwrap();

    for (method, path) in [
        ("GET", "/api/v1/admin/users".to_string()),
        ("GET", format!("/api/v1/admin/users/{fay}")),
        ("PATCH", format!("/api/v1/admin/users/{fay}")),
        ("DELETE", format!("/api/v1/admin/users/{fay}/sessions")),
    ] {
        let body = json!({"role": "admin"});
        let a = api.request(method, &path, Some(&body), Some(&player)).await;
        assert_eq!((a.status, code(&a)), (403, "admin_only"), "{method} {path}: {}", a.body);
        let a = api.request(method, &path, Some(&body), None).await;
        assert_eq!((a.status, code(&a)), (401, "unauthenticated"), "{method} {path}: {}", a.body);
    }
    assert_eq!(me(api, &player).await.body["user"]["role"], "player", "a player made itself admin");

    let list = api.ask("/api/v1/admin/users?limit=10", Some(&admin)).await;
    let names: Vec<&str> = list.body["users"].as_array().unwrap().iter().filter_map(|u| u["name"].as_str()).collect();
    assert_eq!((list.status, names), (200, vec!["admin", "Fay"]), "{}", list.body);
    let page = api.ask("/api/v1/admin/users?limit=1", Some(&admin)).await;
    assert_eq!(page.body["users"].as_array().unwrap().len(), 1);
    let after = page.body["next_after"].as_i64().unwrap();
    let rest = api.ask(&format!("/api/v1/admin/users?limit=1&after={after}"), Some(&admin)).await;
    assert_eq!(rest.body["users"][0]["name"], "Fay", "{}", rest.body);

    let patch = |body: Value, id: i64| {
        let admin = admin.clone();
        async move { api.request("PATCH", &format!("/api/v1/admin/users/{id}"), Some(&body), Some(&admin)).await }
    };
    for (body, status, expected) in [
        (json!({}), 400, "bad_request"),
        (json!({"role": "emperor"}), 400, "bad_request"),
        (json!({"disabled": "yes"}), 400, "bad_request"),
        (json!({"role": "admin", "extra": 1}), 400, "bad_request"),
    ] {
        let a = patch(body.clone(), fay).await;
        assert_eq!((a.status, code(&a)), (status, expected), "{body}: {}", a.body);
    }
    let a = patch(json!({"role": "admin"}), 999_999).await;
    assert_eq!((a.status, code(&a)), (404, "no_such_user"), "{}", a.body);

    // The only admin can neither step down nor be disabled.
    let admin_id = me(api, &admin).await.body["user"]["id"].as_i64().unwrap();
    for body in [json!({"role": "player"}), json!({"disabled": true})] {
        let a = patch(body.clone(), admin_id).await;
        assert_eq!((a.status, code(&a)), (409, "last_admin"), "{body}: {}", a.body);
    }

    // Disabling ends the sessions and refuses logins (answered as a wrong
    // password is: a guesser learns nothing); enabling lets it back.
    let a = patch(json!({"disabled": true}), fay).await;
    assert_eq!((a.status, a.body["disabled"].as_bool()), (200, Some(true)), "{}", a.body);
    assert_eq!(me(api, &player).await.status, 401);
    let a = post(api, "/api/v1/auth/login", json!({"name": "Fay", "password": PASSWORD}), None).await;
    assert_eq!((a.status, code(&a)), (401, "wrong_credentials"), "{}", a.body);
    assert_eq!(patch(json!({"disabled": false}), fay).await.status, 200);
    let player = api.login("Fay", PASSWORD).await;

    // Promoted, Fay is an admin at once; then the first admin may step down.
    assert_eq!(patch(json!({"role": "admin"}), fay).await.body["role"], "admin");
    assert_eq!(api.ask("/api/v1/admin/users", Some(&player)).await.status, 200);
    assert_eq!(patch(json!({"role": "player"}), admin_id).await.status, 200);

    // An admin ends a user's sessions.
    let a = api.request("DELETE", &format!("/api/v1/admin/users/{admin_id}/sessions"), None, Some(&player)).await;
    assert_eq!((a.status, a.body["ended"].as_u64()), (200, Some(1)), "{}", a.body);
    assert_eq!(me(api, &admin).await.status, 401);
    app.finish().await;
}

async fn a_disabled_account_loses_its_websocket(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let api = app.api;
    let admin = app.admin_token().await;
    let player = api.register("Gus", PASSWORD).await;
    let gus = me(api, &player).await.body["user"]["id"].as_i64().unwrap();
    let table = api.table(&[1, 2, 3], json!({})).await;
    let bearer = format!("Bearer {player}");
    let mut socket = TableSocket::connect_with(app.addr, &table, None, None, &[("authorization", &bearer)])
        .await
        .expect("the WebSocket with the account's session");
    socket.next(WAIT).await.expect("the snapshot");
    // A second socket by cookie, and a guest spectator that must stay.
    let cookie = format!("mj_session={player}");
    let mut by_cookie = TableSocket::connect_with(app.addr, &table, None, None, &[("cookie", &cookie)]).await.unwrap();
    by_cookie.next(WAIT).await.expect("the snapshot");
    let mut guest = TableSocket::connect(app.addr, &table, None, None).await.unwrap();
    guest.next(WAIT).await.expect("the snapshot");

    let a = api
        .request("PATCH", &format!("/api/v1/admin/users/{gus}"), Some(&json!({"disabled": true})), Some(&admin))
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(socket.close_code(WAIT).await.unwrap(), Some(4001));
    assert_eq!(by_cookie.close_code(WAIT).await.unwrap(), Some(4001));
    assert!(guest.close_code(Duration::from_millis(500)).await.is_err(), "the guest's socket was closed too");
    // A revoked session cannot open a new one.
    let again = TableSocket::connect_with(app.addr, &table, None, None, &[("authorization", &bearer)]).await;
    assert!(again.is_err(), "a disabled account opened a WebSocket");
    app.finish().await;
}

async fn logins_are_limited_per_address_and_per_name(backend: &str) {
    let accounts = AccountSettings {
        per_address: Rate { burst: 5, every: Duration::from_secs(3600) },
        per_address_and_name: Rate { burst: 2, every: Duration::from_secs(3600) },
        ..AccountSettings::default()
    };
    let app =
        TestApp::spawn_serving(backend, TableDefaults::default(), Serving { accounts, ..Serving::default() }).await;
    let api = app.api;
    api.register("Hal", PASSWORD).await; // one of the address's five
    let login = |name: &'static str, password: &'static str| async move {
        post(api, "/api/v1/auth/login", json!({"name": name, "password": password}), None).await
    };
    assert_eq!(login("hal", "wrong password").await.status, 401);
    assert_eq!(login("HAL", "wrong password").await.status, 401);
    // The address's two failures for the name are spent (whatever its case):
    // refused, even with the right password, and nothing is checked.
    let a = login("Hal", PASSWORD).await;
    assert_eq!((a.status, code(&a)), (429, "too_many_requests"), "{}", a.body);
    let retry: u64 = a.header("retry-after").and_then(|v| v.parse().ok()).expect("a Retry-After header");
    assert!((1..=3600).contains(&retry), "Retry-After: {retry}");
    // The address has one attempt left (the refused one counted too), then none for any name.
    assert_eq!(login("ivy", PASSWORD).await.status, 401);
    let a = login("ivy", PASSWORD).await;
    assert_eq!((a.status, code(&a)), (429, "too_many_requests"), "{}", a.body);
    let a = post(api, "/api/v1/auth/register", json!({"name": "Jo", "password": PASSWORD}), None).await;
    assert_eq!((a.status, code(&a)), (429, "too_many_requests"), "{}", a.body);
    // (How the name's owner elsewhere is let in: tests/limits.rs.)
    app.finish().await;
}

/// Every text the database holds for accounts and sessions, as one string.
async fn account_rows(app: &TestApp) -> String {
    use sqlx::Row;
    let mut all = String::new();
    for sql in [
        "SELECT name, name_key, password_hash, role FROM users",
        "SELECT token_sha256, CAST(user_id AS TEXT) AS u FROM sessions",
    ] {
        for row in sqlx::query(sql).fetch_all(app.store.pool()).await.unwrap() {
            for i in 0..row.len() {
                all.push_str(&row.try_get::<String, _>(i).unwrap_or_default());
                all.push('\n');
            }
        }
    }
    all
}

async fn no_password_or_token_is_stored_or_logged(backend: &str) {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let db = common::db::TestDb::new(backend).await;
    let binary = env!("CARGO_BIN_EXE_mahjong-server");
    let admin_password = "the admin's own secret 42";
    let player_password = "the player's own secret 17";
    // The first admin, its password on standard input.
    let mut create = Command::new(binary)
        .args(["admin", "create-user", "Root", "--role", "admin", "--database", &db.url])
        .env("RUST_LOG", "trace")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(create.stdin.take().unwrap(), "{admin_password}").unwrap();
    let created = create.wait_with_output().unwrap();
    assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    let mut logs = String::from_utf8_lossy(&created.stdout).into_owned() + &String::from_utf8_lossy(&created.stderr);

    let port = common::process::free_port();
    // The log goes to a file: a pipe nobody reads would fill and stop the server.
    let log_path = std::env::temp_dir().join(format!("mahjong-accounts-{backend}-{port}.log"));
    let log_file = std::fs::File::create(&log_path).unwrap();
    let mut server = Command::new(binary)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--database", &db.url])
        .env("RUST_LOG", "trace")
        .stdout(Stdio::from(log_file.try_clone().unwrap()))
        .stderr(Stdio::from(log_file))
        .spawn()
        .unwrap();
    let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let api = Api::at(addr);
    let started = std::time::Instant::now();
    while !mahjong_tools::client::http(addr, "GET", "/healthz", None, None).await.is_ok_and(|a| a.status == 200) {
        assert!(started.elapsed() < WAIT, "the server did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let admin = api.login("root", admin_password).await;
    let player = api.register("Kit", player_password).await;
    let second = api.login("kit", player_password).await;
    assert_eq!(me(api, &player).await.status, 200);
    let bad = post(api, "/api/v1/auth/login", json!({"name": "Kit", "password": "wrong but secret 99"}), None).await;
    assert_eq!(bad.status, 401);
    let change = json!({"current": player_password, "new": "the player's next secret 23"});
    assert_eq!(post(api, "/api/v1/auth/password", change, Some(&player)).await.status, 204);
    assert_eq!(api.ask("/api/v1/admin/users", Some(&admin)).await.status, 200);

    // The database: hashes and digests only.
    let store = mahjong::store::Store::open(&db.url).await.unwrap();
    let probe = TestApp { addr, api, db, store };
    let rows = account_rows(&probe).await;
    assert!(rows.contains("$argon2id$"), "no argon2id hash stored: {rows}");
    let secrets = [
        admin_password,
        player_password,
        "wrong but secret 99",
        "the player's next secret 23",
        &admin,
        &player,
        &second,
        &admin[4..],
        &player[4..],
    ];
    for secret in secrets {
        assert!(!rows.contains(secret), "the database holds a secret in clear: {secret}");
    }
    if backend == "sqlite" {
        // Every byte of every file of the store and their write-ahead logs,
        // not just the columns read.
        let main = mahjong::store::parts::file_of(&probe.db.url);
        let files = (0..probe.store.files()).map(|k| mahjong::store::parts::part_file(&main, k).display().to_string());
        for path in files.flat_map(|f| [f.clone(), format!("{f}-wal")]) {
            let bytes = std::fs::read(&path).unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes);
            for secret in secrets {
                assert!(!text.contains(secret), "{path} holds a secret in clear: {secret}");
            }
        }
    }
    probe.store.close().await;

    // The log, at its most verbose.
    unsafe { libc::kill(server.id() as i32, libc::SIGTERM) };
    let _ = server.wait();
    logs.push_str(&std::fs::read_to_string(&log_path).unwrap());
    let _ = std::fs::remove_file(&log_path);
    assert!(logs.contains("logged in"), "the log was not captured: {logs}");
    for secret in secrets {
        assert!(!logs.contains(secret), "the log holds a secret in clear: {secret}");
    }
    probe.db.remove().await;
}

/// Each of the five ways a session ends closes, within a second, the
/// WebSocket opened with the seat token it was given (the token alone, no
/// session on the socket), and ends the token.
async fn every_end_of_a_session_closes_its_seat_s_websocket(backend: &str) {
    let app = TestApp::spawn(backend, TableDefaults::default()).await;
    let api = app.api;
    let admin = app.admin_token().await;
    for (n, way) in ["logout", "logout-everywhere", "password", "disabled", "admin-ended"].into_iter().enumerate() {
        let name = format!("Ivy{n}");
        let session = api.register(&name, PASSWORD).await;
        let user = me(api, &session).await.body["user"]["id"].as_i64().unwrap();
        let table = api.table(&[1, 2, 3], json!({})).await;
        let grant =
            post(api, &format!("/api/v1/tables/{table}/seats"), json!({"name": name, "seat": 0}), Some(&session)).await;
        assert_eq!(grant.status, 201, "{}", grant.body);
        let token = grant.body["token"].as_str().unwrap().to_string();
        let mut socket = TableSocket::connect(app.addr, &table, Some(&token), None).await.unwrap();
        socket.next(WAIT).await.expect("the snapshot");
        let ended = match way {
            "logout" => post(api, "/api/v1/auth/logout", json!({}), Some(&session)).await,
            "logout-everywhere" => post(api, "/api/v1/auth/logout-everywhere", json!({}), Some(&session)).await,
            // From another session: the one that changes it lives on, the others end.
            "password" => {
                let other = api.login(&name, PASSWORD).await;
                let change = json!({"current": PASSWORD, "new": "another horse battery"});
                post(api, "/api/v1/auth/password", change, Some(&other)).await
            }
            "disabled" => {
                let path = format!("/api/v1/admin/users/{user}");
                api.request("PATCH", &path, Some(&json!({"disabled": true})), Some(&admin)).await
            }
            _ => api.request("DELETE", &format!("/api/v1/admin/users/{user}/sessions"), None, Some(&admin)).await,
        };
        assert!(ended.status < 300, "{way}: {} {}", ended.status, ended.body);
        assert_eq!(socket.close_code(Duration::from_secs(1)).await.unwrap(), Some(4001), "{way}");
        let again = TableSocket::connect(app.addr, &table, Some(&token), None).await;
        assert!(again.is_err(), "{way}: the ended seat token opened a WebSocket again");
    }
    app.finish().await;
}
