//! One way for every test to start a server, in the manner of zero2prod's
//! `spawn_app`: [`TestApp::spawn`] serves the real router on a random port of
//! 127.0.0.1 over a fresh database ([`TestDb`]), in the test's own runtime
//! (the server stops when the test ends). [`Api`] holds the requests tests
//! make of a server at an address: this one, or a `mahjong-server` process.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mahjong::auth::{AccountSettings, Accounts, Role};
use mahjong::server::{Server, ServerConfig, Serving};
use mahjong::store::Store;
use mahjong::table::TableDefaults;
use mahjong_tools::client::{Answer, SeatPlan, TableSocket, http, play_seat};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use super::db::TestDb;

/// Long enough for a loaded CI machine; a real hang still fails.
pub const WAIT: Duration = Duration::from_secs(60);

/// Builds the server `config` describes and serves until `stop` completes,
/// as the binary does (a test spawns it, and may wait for it to end).
pub async fn serve(config: ServerConfig, stop: impl Future<Output = ()> + Send + 'static) -> std::io::Result<()> {
    Server::build(config).await?.run_until(stop).await
}

/// A server started for one test.
pub struct TestApp {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its API, with the requests tests make.
    pub api: Api,
    /// Its database, removed by [`TestApp::finish`].
    pub db: TestDb,
    /// The store it writes, for tests that read its rows.
    pub store: Store,
}

impl TestApp {
    /// Serves on a random port over a fresh database of `backend` (`sqlite`
    /// or `postgres`, see [`TestDb::new`]; `memory` for an SQLite database in
    /// memory), with the tables' `defaults`. The test is one client playing
    /// every seat at many tables from 127.0.0.1, which the limits would take
    /// for an abuser: that address is exempt from them ([`exempt_loopback`]).
    /// Tests of the limits serve with [`TestApp::spawn_serving`].
    pub async fn spawn(backend: &str, defaults: TableDefaults) -> TestApp {
        TestApp::spawn_serving(backend, defaults, Serving { limits: exempt_loopback(), ..Serving::default() }).await
    }

    /// As [`TestApp::spawn`], on the store at `url` (a database the test
    /// made, with options of its own), which the test removes.
    pub async fn spawn_on(url: &str, defaults: TableDefaults) -> TestApp {
        let store = Store::open(url).await.unwrap_or_else(|e| panic!("open the store {url}: {e}"));
        TestApp::serve_store(
            TestDb::new("memory").await,
            store,
            defaults,
            Serving { limits: exempt_loopback(), ..Serving::default() },
        )
        .await
    }

    /// As [`TestApp::spawn`], serving as `serving` says (accounts' limits,
    /// `--require-accounts`).
    pub async fn spawn_serving(backend: &str, defaults: TableDefaults, serving: Serving) -> TestApp {
        let db = TestDb::new(backend).await;
        let store = Store::open(&db.url).await.unwrap_or_else(|e| panic!("open the store {}: {e}", db.url));
        TestApp::serve_store(db, store, defaults, serving).await
    }

    /// Serves `store` (on `db`, removed at the end) on a random port.
    async fn serve_store(db: TestDb, store: Store, defaults: TableDefaults, serving: Serving) -> TestApp {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port on 127.0.0.1");
        let addr = listener.local_addr().expect("the listener's address");
        let config = ServerConfig { defaults, serving, ..ServerConfig::new(listener, store.clone()) };
        tokio::spawn(serve(config, std::future::pending()));
        TestApp { addr, api: Api::at(addr), db, store }
    }

    /// Creates the admin account `admin` (once; as `mahjong-server admin
    /// create-user` does) and logs it in over REST: its session token.
    pub async fn admin_token(&self) -> String {
        let accounts = Accounts::new(self.store.clone(), AccountSettings::default()).expect("the accounts");
        match accounts.create(ADMIN_NAME, ADMIN_PASSWORD, Role::Admin).await {
            Ok(_) | Err(mahjong::auth::AuthError::NameTaken(_)) => {}
            Err(e) => panic!("create the admin: {e}"),
        }
        self.api.login(ADMIN_NAME, ADMIN_PASSWORD).await
    }

    /// A table of a person and three robots, stopped mid-game: the person
    /// made a few moves and left. Returns the table and the person's token.
    pub async fn a_game_left_unfinished(&self) -> (String, String) {
        let (addr, api) = (self.addr, self.api);
        let id = api.table(&[1, 2, 3], json!({"NumRounds": 1})).await;
        let token = api.sit(&id, "Ann", 0).await;
        api.start(&id, Some(&token)).await;
        let mut socket = TableSocket::connect(addr, &id, Some(&token), None).await.unwrap();
        let plan = SeatPlan { max_moves: Some(3), ..SeatPlan::new(0) };
        let log = play_seat(&mut socket, plan).await.unwrap();
        assert_eq!(log.moves, 3);
        socket.close().await;
        (id, token)
    }

    /// Removes the database (the server stops with the test's runtime).
    pub async fn finish(self) {
        self.db.remove().await;
    }
}

/// The default limits, but 127.0.0.1 (where a test's clients all are) is
/// exempt from the per-address and per-player ones.
pub fn exempt_loopback() -> mahjong::limits::Limits {
    let loopback = mahjong::limits::address::parse_network("127.0.0.1").expect("an address");
    mahjong::limits::Limits { exempt: mahjong::limits::Exempt::new(vec![loopback]), ..Default::default() }
}

/// The name of the admin [`TestApp::admin_token`] creates.
pub const ADMIN_NAME: &str = "admin";
/// Its password.
pub const ADMIN_PASSWORD: &str = "admin password 1";

/// The REST API of a server at an address.
#[derive(Clone, Copy, Debug)]
pub struct Api {
    /// The server's address.
    pub addr: SocketAddr,
}

impl Api {
    /// The server at `addr`.
    pub fn at(addr: SocketAddr) -> Api {
        Api { addr }
    }

    /// Any request; only a failed connection panics.
    pub async fn request(self, method: &str, path: &str, body: Option<&Value>, token: Option<&str>) -> Answer {
        http(self.addr, method, path, body, token).await.unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    /// Registers a player account (answered 201); its session token.
    pub async fn register(self, name: &str, password: &str) -> String {
        let body = json!({"name": name, "password": password});
        let a = self.request("POST", "/api/v1/auth/register", Some(&body), None).await;
        assert_eq!(a.status, 201, "register {name}: {}", a.body);
        a.body["token"].as_str().unwrap_or_else(|| panic!("no token in {}", a.body)).to_string()
    }

    /// Logs in (answered 200); the session token.
    pub async fn login(self, name: &str, password: &str) -> String {
        let body = json!({"name": name, "password": password});
        let a = self.request("POST", "/api/v1/auth/login", Some(&body), None).await;
        assert_eq!(a.status, 200, "login {name}: {}", a.body);
        a.body["token"].as_str().unwrap_or_else(|| panic!("no token in {}", a.body)).to_string()
    }

    /// Any request with these headers; only a failed connection panics.
    pub async fn request_with(
        self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Answer {
        mahjong_tools::client::request(self.addr, method, path, body, headers)
            .await
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    /// A `GET`, whatever its answer.
    pub async fn ask(self, path: &str, token: Option<&str>) -> Answer {
        self.request("GET", path, None, token).await
    }

    /// A `GET` that must answer 200; its body.
    pub async fn get(self, path: &str) -> Value {
        let a = self.ask(path, None).await;
        assert_eq!(a.status, 200, "GET {path}: {}", a.body);
        a.body
    }

    /// A `POST` of JSON that must succeed; its body.
    pub async fn post(self, path: &str, body: Value, token: Option<&str>) -> Value {
        let a = self.request("POST", path, Some(&body), token).await;
        assert!(a.status < 300, "POST {path} {body}: {} {}", a.status, a.body);
        a.body
    }

    /// Opens a table (`POST /api/v1/tables` with `body`, answered 201); its id.
    pub async fn create_table(self, body: Value) -> String {
        let a = self.request("POST", "/api/v1/tables", Some(&body), None).await;
        assert_eq!(a.status, 201, "POST /api/v1/tables {body}: {}", a.body);
        a.body["id"].as_str().unwrap_or_else(|| panic!("no table id in {}", a.body)).to_string()
    }

    /// A table with robots in the `robots` seats and these options, not started.
    pub async fn table(self, robots: &[u8], options: Value) -> String {
        let robots: Vec<Value> = robots.iter().map(|s| json!({"seat": s})).collect();
        self.create_table(json!({"robots": robots, "options": options})).await
    }

    /// A table of four robots playing one round, `name`d, started at once.
    pub async fn robot_game(self, name: &str) -> String {
        self.create_table(json!({"name": name, "robots": [{}, {}, {}, {}], "start": true, "options": {"NumRounds": 1}}))
            .await
    }

    /// `name` sits in `seat`; the seat's token.
    pub async fn sit(self, table: &str, name: &str, seat: u8) -> String {
        let path = format!("/api/v1/tables/{table}/seats");
        let grant = self.post(&path, json!({"name": name, "seat": seat}), None).await;
        assert_eq!(grant["seat"], seat, "{grant}");
        grant["token"].as_str().unwrap_or_else(|| panic!("no token in {grant}")).to_string()
    }

    /// Starts the game (answered 204).
    pub async fn start(self, table: &str, token: Option<&str>) {
        let a = self.request("POST", &format!("/api/v1/tables/{table}/start"), None, token).await;
        assert_eq!(a.status, 204, "start {table}: {}", a.body);
    }

    /// The table's public state (`GET /api/v1/tables/{id}`). A table on its
    /// way to another node is `503 recovering` for a moment, as the protocol
    /// says: asked again, for at most ten seconds.
    pub async fn table_info(self, table: &str) -> Value {
        let path = format!("/api/v1/tables/{table}");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let a = self.ask(&path, None).await;
            if a.status == 503 && a.body["error"]["code"] == "recovering" && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            assert_eq!(a.status, 200, "GET {path}: {}", a.body);
            return a.body;
        }
    }

    /// Waits until the table says its game is over.
    pub async fn wait_over(self, table: &str) {
        let started = Instant::now();
        loop {
            let info = self.table_info(table).await;
            if info["state"] == "over" {
                return;
            }
            assert!(started.elapsed() < WAIT, "the game at table {table} did not end in {WAIT:?}: {info}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
