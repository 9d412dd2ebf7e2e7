//! Admin option management through the real server, on SQLite and on
//! Postgres: the defaults of new tables and the custom presets changed over
//! REST while the server runs, each change in the audit log, everything
//! surviving a restart on the same database.
//!
//! "Changes nothing" is checked, not assumed: after every refusal the
//! presets, the defaults and the audit log read exactly as before. A change
//! is checked where it matters: in the options of the tables opened after it
//! (read back from the store, `GET /api/v1/games/{id}`), and in those of a
//! table opened before it, which keep theirs.

use crate::common;

use std::net::SocketAddr;

use common::app::{ADMIN_NAME, ADMIN_PASSWORD, Api};
use common::db::TestDb;
use common::on_both_backends;
use mahjong::auth::{AccountSettings, Accounts, Role};
use mahjong::rules::preset_book::DefaultOptions;
use mahjong::store::Store;
use mahjong::table::TableDefaults;
use serde_json::{Value, json};
use tokio::net::TcpListener;

on_both_backends!(
    only_admins_reach_the_admin_endpoints,
    new_tables_use_changed_defaults_and_open_tables_keep_theirs,
    custom_presets_are_created_read_used_changed_and_deleted,
    built_in_presets_are_read_only,
    bad_changes_are_refused_and_change_nothing,
    the_preset_the_defaults_use_cannot_be_deleted_or_broken,
    the_audit_log_tells_who_when_what_before_and_after,
    other_admin_actions_are_in_the_audit_log,
    everything_survives_a_restart,
    the_flags_may_name_a_custom_preset_and_must_name_a_preset,
    a_damaged_stored_preset_is_left_out_at_start_up,
    the_commands_know_the_stored_presets,
);

// ----- a server that can be stopped and started again -----------------------

/// A server on a database that outlives it.
struct Server {
    api: Api,
    admin: String,
    stop: tokio::sync::oneshot::Sender<()>,
    done: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// Serves `db` with these flags' defaults (logging in the admin, created
/// the first time); `Err` with the server's message if it refuses to start.
async fn try_start(db: &TestDb, defaults: TableDefaults) -> Result<Server, String> {
    let store = Store::open(&db.url).await.unwrap_or_else(|e| panic!("open the store {}: {e}", db.url));
    let accounts = Accounts::new(store.clone(), AccountSettings::default()).expect("the accounts");
    match accounts.create(ADMIN_NAME, ADMIN_PASSWORD, Role::Admin).await {
        Ok(_) | Err(mahjong::auth::AuthError::NameTaken(_)) => {}
        Err(e) => panic!("create the admin: {e}"),
    }
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port on 127.0.0.1");
    let addr: SocketAddr = listener.local_addr().expect("the listener's address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let config = mahjong::server::ServerConfig { defaults, ..mahjong::server::ServerConfig::new(listener, store) };
    let done = tokio::spawn(common::app::serve(config, async move {
        let _ = stopped.await;
    }));
    // A server that refuses to start ends before it answers anything; one
    // that starts is used once its stored tables are back.
    let api = Api::at(addr);
    loop {
        if done.is_finished() {
            let ended = done.await.expect("the server task");
            return Err(ended.err().map_or_else(|| "ended without an error".into(), |e| e.to_string()));
        }
        if mahjong_tools::client::http(addr, "GET", "/readyz", None, None).await.is_ok_and(|a| a.status == 200) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let admin = api.login(ADMIN_NAME, ADMIN_PASSWORD).await;
    Ok(Server { api, admin, stop, done })
}

async fn start(db: &TestDb, defaults: TableDefaults) -> Server {
    try_start(db, defaults).await.unwrap_or_else(|e| panic!("the server starts: {e}"))
}

impl Server {
    /// Stops the server gracefully (its store closes).
    async fn stop(self) {
        let _ = self.stop.send(());
        self.done.await.expect("the server task").expect("the server stops cleanly");
    }

    /// An admin's request; its status and body.
    async fn admin(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let a = self.api.request(method, path, body.as_ref(), Some(&self.admin)).await;
        (a.status, a.body)
    }

    /// An admin's request that must answer `status`; its body.
    async fn admin_ok(&self, method: &str, path: &str, body: Option<Value>, status: u16) -> Value {
        let (got, answer) = self.admin(method, path, body.clone()).await;
        assert_eq!(got, status, "{method} {path} {body:?}: {answer}");
        answer
    }

    /// Opens a table of robots with this request; the options it opened with,
    /// read back from the store, and its preset.
    async fn table(&self, request: Value) -> (String, Value, String) {
        let id = self.api.create_table(request).await;
        let game = self.api.get(&format!("/api/v1/games/{id}")).await;
        let preset = game["preset"].as_str().unwrap_or_else(|| panic!("no preset in {game}")).to_string();
        (id, game["options"].clone(), preset)
    }

    /// What an admin sees of the rules: every preset, the defaults, the audit log.
    async fn state(&self) -> Value {
        json!({
            "presets": self.api.get("/api/v1/presets").await,
            "defaults": self.admin_ok("GET", "/api/v1/admin/defaults", None, 200).await,
            "audit": self.admin_ok("GET", "/api/v1/admin/audit?limit=100", None, 200).await,
        })
    }

    /// A request refused with this status and code, with a message holding
    /// every one of `says`, that changes nothing an admin can see.
    async fn refused(
        &self,
        token: Option<&str>,
        method: &str,
        path: &str,
        body: Option<Value>,
        expect: (u16, &str),
        says: &[&str],
    ) {
        let before = self.state().await;
        let a = self.api.request(method, path, body.as_ref(), token).await;
        let shown = format!("{method} {path} {}", body.map_or(String::new(), |b| b.to_string()));
        assert_eq!((a.status, a.body["error"]["code"].as_str()), (expect.0, Some(expect.1)), "{shown}: {}", a.body);
        let message = a.body["error"]["message"].as_str().unwrap_or_default();
        for needle in says {
            assert!(message.contains(needle), "{shown}: the message {message:?} does not say {needle:?}");
        }
        assert_eq!(self.state().await, before, "{shown}: a refusal changed something");
    }
}

/// The server's settings with flags giving these defaults (`--preset`, the
/// option file's options).
fn flags(preset: &str, options: Value) -> TableDefaults {
    let options = options.as_object().cloned().unwrap_or_default();
    TableDefaults { options: DefaultOptions { preset: preset.into(), options }, ..TableDefaults::default() }
}

/// The options of a built-in preset, as `GET /api/v1/presets/{name}` gives them.
async fn preset_options(api: Api, name: &str) -> Value {
    api.get(&format!("/api/v1/presets/{name}")).await["options"].clone()
}

/// `options` with these values changed.
fn with(options: &Value, changes: Value) -> Value {
    let mut out = options.clone();
    for (k, v) in changes.as_object().expect("an object of changes") {
        assert!(out.get(k).is_some(), "{k} is an option");
        out[k] = v.clone();
    }
    out
}

/// Robots in seats 1-3: a table with players, not started.
fn robots() -> Value {
    json!([{"seat": 1}, {"seat": 2}, {"seat": 3}])
}

/// The custom preset most scenarios define.
fn house() -> Value {
    json!({
        "name": "house",
        "description": "Shanghai Expat rules, one round, losers' differences under 30 wash",
        "based_on": "shanghai-expat",
        "options": {"NumRounds": 1, "WashBelow": 30}
    })
}

// ----- scenarios ------------------------------------------------------------

/// A player, or a request without a session, gets 403 or 401 from every
/// admin endpoint, and nothing changes.
async fn only_admins_reach_the_admin_endpoints(backend: &str) {
    let db = TestDb::new(backend).await;
    let s = start(&db, TableDefaults::default()).await;
    s.admin_ok("POST", "/api/v1/admin/presets", Some(house()), 201).await;
    let player = s.api.register("Pat", "player password 1").await;
    let calls: [(&str, &str, Option<Value>); 7] = [
        ("GET", "/api/v1/admin/defaults", None),
        ("PUT", "/api/v1/admin/defaults", Some(json!({"preset": "house"}))),
        ("DELETE", "/api/v1/admin/defaults", None),
        ("POST", "/api/v1/admin/presets", Some(json!({"name": "mine"}))),
        ("PUT", "/api/v1/admin/presets/house", Some(json!({"options": {"NumRounds": 2}}))),
        ("DELETE", "/api/v1/admin/presets/house", None),
        ("GET", "/api/v1/admin/audit", None),
    ];
    for (method, path, body) in calls {
        let says = ["admin"];
        s.refused(Some(&player), method, path, body.clone(), (403, "admin_only"), &says).await;
        s.refused(None, method, path, body, (401, "unauthenticated"), &[]).await;
    }
    // Everyone may read the presets.
    let listed = s.api.ask("/api/v1/presets/house", Some(&player)).await;
    assert_eq!((listed.status, listed.body["name"].as_str()), (200, Some("house")), "{}", listed.body);
    s.stop().await;
    db.remove().await;
}

/// Tables opened after a change of the defaults use them; a table opened
/// before keeps its options; a reset puts the flags' back.
async fn new_tables_use_changed_defaults_and_open_tables_keep_theirs(backend: &str) {
    let db = TestDb::new(backend).await;
    let s = start(&db, flags("chinese-classical", json!({"NumRounds": 2}))).await;
    let classical = preset_options(s.api, "chinese-classical").await;
    let shanghai = preset_options(s.api, "shanghai-expat").await;
    let american = preset_options(s.api, "american-modern").await;
    let defaults = s.admin_ok("GET", "/api/v1/admin/defaults", None, 200).await;
    assert_eq!((defaults["source"].as_str(), defaults["preset"].as_str()), (Some("flags"), Some("chinese-classical")));
    assert_eq!(defaults["options"], json!({"NumRounds": 2}), "the flags' options: {defaults}");
    assert_eq!(defaults["effective"], with(&classical, json!({"NumRounds": 2})));

    let (before, options, preset) = s.table(json!({"robots": robots()})).await;
    assert_eq!((preset.as_str(), &options), ("chinese-classical", &with(&classical, json!({"NumRounds": 2}))));

    // Booleans and numbers given as option-file text are kept in their JSON types.
    let set = json!({"preset": "shanghai-expat", "options": {"Timeout": "30", "ShowOnWashout": 1}});
    let view = s.admin_ok("PUT", "/api/v1/admin/defaults", Some(set), 200).await;
    assert_eq!((view["source"].as_str(), view["preset"].as_str()), (Some("admin"), Some("shanghai-expat")), "{view}");
    assert_eq!(view["options"], json!({"ShowOnWashout": true, "Timeout": 30}));
    assert_eq!(view["updated_by"], json!({"user_id": view["updated_by"]["user_id"], "name": ADMIN_NAME}));
    let changed = with(&shanghai, json!({"Timeout": 30, "ShowOnWashout": true}));
    assert_eq!(view["effective"], changed);
    assert_eq!(s.admin_ok("GET", "/api/v1/admin/defaults", None, 200).await, view, "GET reads what PUT answered");

    let (_, options, preset) = s.table(json!({"robots": robots()})).await;
    assert_eq!((preset.as_str(), &options), ("shanghai-expat", &changed), "a new table uses the new defaults");
    // The defaults' options are set over a preset a request names, and the
    // request's own options over them.
    let (_, options, preset) = s.table(json!({"preset": "american-modern", "options": {"Timeout": 5}})).await;
    assert_eq!(preset, "american-modern");
    assert_eq!(options, with(&american, json!({"Timeout": 5, "ShowOnWashout": true})));
    // The table opened before keeps its options.
    let game = s.api.get(&format!("/api/v1/games/{before}")).await;
    assert_eq!(game["options"], with(&classical, json!({"NumRounds": 2})), "an open table keeps its options");
    assert_eq!(s.api.table_info(&before).await["preset"], "chinese-classical");

    let reset = s.admin_ok("DELETE", "/api/v1/admin/defaults", None, 200).await;
    assert_eq!((reset["source"].as_str(), reset["preset"].as_str()), (Some("flags"), Some("chinese-classical")));
    assert_eq!((reset["updated_by"].clone(), reset["options"].clone()), (Value::Null, json!({"NumRounds": 2})));
    let (_, options, _) = s.table(json!({})).await;
    assert_eq!(options, with(&classical, json!({"NumRounds": 2})), "after a reset, the flags' defaults");
    // A second reset changes nothing and logs nothing.
    let log = s.admin_ok("GET", "/api/v1/admin/audit", None, 200).await;
    assert_eq!(s.admin_ok("DELETE", "/api/v1/admin/defaults", None, 200).await, reset);
    assert_eq!(s.admin_ok("GET", "/api/v1/admin/audit", None, 200).await, log);
    s.stop().await;
    db.remove().await;
}

/// A custom preset through its whole life: created, listed, read, used by a
/// table and by the calculator, changed, deleted.
async fn custom_presets_are_created_read_used_changed_and_deleted(backend: &str) {
    let db = TestDb::new(backend).await;
    let s = start(&db, TableDefaults::default()).await;
    let shanghai = preset_options(s.api, "shanghai-expat").await;
    let created = s.admin_ok("POST", "/api/v1/admin/presets", Some(house()), 201).await;
    let expected = with(&shanghai, json!({"NumRounds": 1, "WashBelow": 30}));
    assert_eq!((created["name"].as_str(), created["built_in"].as_bool()), (Some("house"), Some(false)));
    assert_eq!(
        (created["based_on"].clone(), created["overrides"].clone()),
        (json!("shanghai-expat"), json!({"NumRounds": 1, "WashBelow": 30}))
    );
    assert_eq!(created["options"], expected);
    assert!(created["created_us"].as_i64().is_some() && created["created_us"] == created["updated_us"], "{created}");
    assert_eq!(s.api.get("/api/v1/presets/house").await, created);
    let listing = s.api.get("/api/v1/presets").await;
    let names: Vec<&str> = listing["presets"].as_array().unwrap().iter().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(names.last(), Some(&"house"), "custom presets come after the built-in ones: {names:?}");
    assert!(listing["presets"][0]["built_in"].as_bool().unwrap_or(false));
    // Names are exact.
    let a = s.api.ask("/api/v1/presets/House", None).await;
    assert_eq!((a.status, a.body["error"]["code"].as_str()), (404, Some("no_such_preset")), "{}", a.body);

    let (with_house, options, preset) = s.table(json!({"preset": "house", "robots": robots()})).await;
    assert_eq!((preset.as_str(), &options), ("house", &expected));
    // The calculator knows it: it settles as its base with its options, not
    // as the default preset (under which the losers settle their difference).
    let hand = json!({"east": 0, "winner": 0, "scores": [100, 20, 0, 0]});
    let asked = |preset: Value, options: Value| {
        let mut request = hand.clone();
        request["preset"] = preset;
        request["options"] = options;
        request
    };
    let settle = asked(json!("house"), json!({}));
    let paid = s.api.post("/api/v1/settle", settle.clone(), None).await;
    let spelt_out = asked(json!("shanghai-expat"), json!({"NumRounds": 1, "WashBelow": 30}));
    assert_eq!(paid, s.api.post("/api/v1/settle", spelt_out, None).await);
    let classical = s.api.post("/api/v1/settle", asked(json!("chinese-classical"), json!({})), None).await;
    assert_ne!(paid, classical, "the custom preset is not the default one");

    let update = json!({"description": "two rounds", "based_on": "american-modern", "options": {"NumRounds": 2}});
    let updated = s.admin_ok("PUT", "/api/v1/admin/presets/house", Some(update), 200).await;
    let american = preset_options(s.api, "american-modern").await;
    assert_eq!(updated["options"], with(&american, json!({"NumRounds": 2})));
    assert_eq!(
        (updated["description"].as_str(), updated["created_us"].clone()),
        (Some("two rounds"), created["created_us"].clone())
    );
    assert!(updated["updated_us"].as_i64() > created["updated_us"].as_i64(), "{updated}");
    let (_, options, _) = s.table(json!({"preset": "house"})).await;
    assert_eq!(options, with(&american, json!({"NumRounds": 2})), "a new table uses the changed preset");
    let game = s.api.get(&format!("/api/v1/games/{with_house}")).await;
    assert_eq!(game["options"], expected, "a table opened before keeps the options it opened with");

    let a = s.api.request("DELETE", "/api/v1/admin/presets/house", None, Some(&s.admin)).await;
    assert_eq!(a.status, 204, "{}", a.body);
    let a = s.api.ask("/api/v1/presets/house", None).await;
    assert_eq!((a.status, a.body["error"]["code"].as_str()), (404, Some("no_such_preset")), "{}", a.body);
    let a = s.api.request("POST", "/api/v1/tables", Some(&json!({"preset": "house"})), None).await;
    assert_eq!((a.status, a.body["error"]["code"].as_str()), (400, Some("bad_request")), "{}", a.body);
    assert!(a.body["error"]["message"].as_str().unwrap_or_default().contains("unknown preset 'house'"), "{}", a.body);
    let a = s.api.request("POST", "/api/v1/settle", Some(&settle), None).await;
    assert_eq!(a.status, 400, "{}", a.body);
    // Its name is free again.
    s.admin_ok("POST", "/api/v1/admin/presets", Some(json!({"name": "House"})), 201).await;
    s.stop().await;
    db.remove().await;
}

/// Built-in presets cannot be changed, deleted, or shadowed by a name that
/// differs only in case.
async fn built_in_presets_are_read_only(backend: &str) {
    let db = TestDb::new(backend).await;
    let s = start(&db, TableDefaults::default()).await;
    let admin = Some(s.admin.as_str());
    let body = Some(json!({"options": {"NumRounds": 1}}));
    s.refused(admin, "PUT", "/api/v1/admin/presets/shanghai-expat", body, (403, "read_only_preset"), &["built-in"])
        .await;
    s.refused(
        admin,
        "DELETE",
        "/api/v1/admin/presets/chinese-classical",
        None,
        (403, "read_only_preset"),
        &["read-only"],
    )
    .await;
    let shadow = Some(json!({"name": "Shanghai-Expat"}));
    let says = ["'Shanghai-Expat'", "built-in preset 'shanghai-expat'"];
    s.refused(admin, "POST", "/api/v1/admin/presets", shadow, (409, "preset_exists"), &says).await;
    s.stop().await;
    db.remove().await;
}

/// A request to refuse: method, path, body, the status and code expected,
/// and what its message must say.
type Refusal = (&'static str, &'static str, Option<Value>, (u16, &'static str), Vec<&'static str>);

/// Bad changes, each refused with its own message, changing nothing.
async fn bad_changes_are_refused_and_change_nothing(backend: &str) {
    let db = TestDb::new(backend).await;
    let s = start(&db, TableDefaults::default()).await;
    s.admin_ok("POST", "/api/v1/admin/presets", Some(house()), 201).await;
    let admin = Some(s.admin.as_str());
    let bad = (400, "bad_request");
    let preset = |body: Value| Some(body);
    let cases: Vec<Refusal> = vec![
        // Options.
        (
            "POST",
            "/api/v1/admin/presets",
            preset(json!({"name": "a", "options": {"Bogus": 1}})),
            bad,
            vec!["unknown game option 'Bogus'"],
        ),
        (
            "POST",
            "/api/v1/admin/presets",
            preset(json!({"name": "a", "options": {"NumRounds": 3}})),
            bad,
            vec!["NumRounds", "multiple of 4"],
        ),
        (
            "POST",
            "/api/v1/admin/presets",
            preset(json!({"name": "a", "options": {"NumRounds": 1.5}})),
            bad,
            vec!["NumRounds", "not a whole number"],
        ),
        (
            "POST",
            "/api/v1/admin/presets",
            preset(json!({"name": "a", "options": {"NoLimit": [1]}})),
            bad,
            vec!["NoLimit"],
        ),
        (
            "POST",
            "/api/v1/admin/presets",
            preset(json!({"name": "a", "options": {"RoundMode": "sideways"}})),
            bad,
            vec!["'sideways' is not one of none, off, up"],
        ),
        (
            "POST",
            "/api/v1/admin/presets",
            preset(json!({"name": "a", "options": {"RaiseMinimumOn5thExtra": true}})),
            bad,
            vec!["MinimumDoubles"],
        ),
        // Names and descriptions.
        (
            "POST",
            "/api/v1/admin/presets",
            preset(json!({"name": "my house"})),
            bad,
            vec!["a preset's name is a word", "' '"],
        ),
        (
            "POST",
            "/api/v1/admin/presets",
            preset(json!({"name": "-house"})),
            bad,
            vec!["starting with a letter or digit"],
        ),
        ("POST", "/api/v1/admin/presets", preset(json!({"name": "h\u{0}use"})), bad, vec!["NUL"]),
        ("POST", "/api/v1/admin/presets", preset(json!({"name": "h\u{202E}use"})), bad, vec!["bidirectional"]),
        ("POST", "/api/v1/admin/presets", preset(json!({"name": "p".repeat(33)})), bad, vec!["at most 32 characters"]),
        ("POST", "/api/v1/admin/presets", preset(json!({"name": "  "})), bad, vec!["a preset's name is empty"]),
        (
            "POST",
            "/api/v1/admin/presets",
            preset(json!({"name": "a", "description": "two\nlines"})),
            bad,
            vec!["a preset's description", "control"],
        ),
        (
            "POST",
            "/api/v1/admin/presets",
            preset(json!({"name": "HOUSE"})),
            (409, "preset_exists"),
            vec!["custom preset 'house'"],
        ),
        (
            "POST",
            "/api/v1/admin/presets",
            preset(json!({"name": "a", "based_on": "house"})),
            bad,
            vec!["based on a built-in preset", "not 'house'"],
        ),
        ("POST", "/api/v1/admin/presets", preset(json!({"name": "a", "based_on": "nope"})), bad, vec!["not 'nope'"]),
        (
            "POST",
            "/api/v1/admin/presets",
            preset(json!({"name": "a", "colour": "red"})),
            bad,
            vec!["unknown field `colour`"],
        ),
        ("POST", "/api/v1/admin/presets", preset(json!(["a"])), bad, vec!["expected an object"]),
        ("POST", "/api/v1/admin/presets", None, bad, vec!["missing field `name`"]),
        ("PUT", "/api/v1/admin/presets/house", preset(json!({"options": {"NumRounds": 0}})), bad, vec!["NumRounds"]),
        ("PUT", "/api/v1/admin/presets/house", preset(json!({"name": "other"})), bad, vec!["unknown field `name`"]),
        ("PUT", "/api/v1/admin/presets/nope", preset(json!({})), (404, "no_such_preset"), vec!["'nope'"]),
        ("PUT", "/api/v1/admin/presets/HOUSE", preset(json!({})), (404, "no_such_preset"), vec!["'HOUSE'"]),
        ("DELETE", "/api/v1/admin/presets/nope", None, (404, "no_such_preset"), vec!["'nope'"]),
        ("DELETE", "/api/v1/admin/presets/h%00use", None, (404, "no_such_preset"), vec!["no preset"]),
        ("PUT", "/api/v1/admin/presets/h%00use", preset(json!({})), (404, "no_such_preset"), vec!["no preset"]),
        ("GET", "/api/v1/presets/h%00use", None, (404, "no_such_preset"), vec!["no preset"]),
        // Defaults.
        (
            "PUT",
            "/api/v1/admin/defaults",
            preset(json!({"preset": "nope"})),
            bad,
            vec!["unknown preset 'nope'", "house"],
        ),
        ("PUT", "/api/v1/admin/defaults", preset(json!({"preset": "House"})), bad, vec!["unknown preset 'House'"]),
        (
            "PUT",
            "/api/v1/admin/defaults",
            preset(json!({"preset": "house", "options": {"Timeout": 3601}})),
            bad,
            vec!["at most 3600"],
        ),
        (
            "PUT",
            "/api/v1/admin/defaults",
            preset(json!({"preset": "house", "options": {"Bogus": true}})),
            bad,
            vec!["'Bogus'"],
        ),
        ("PUT", "/api/v1/admin/defaults", preset(json!({"options": {}})), bad, vec!["missing field `preset`"]),
        // The audit log's query.
        ("GET", "/api/v1/admin/audit?limit=0", None, bad, vec!["limit must be a whole number from 1 to 100"]),
        ("GET", "/api/v1/admin/audit?before=x", None, bad, vec!["before"]),
        ("GET", "/api/v1/admin/audit?target=%00", None, bad, vec!["target"]),
        ("GET", "/api/v1/admin/audit?colour=red", None, bad, vec!["colour"]),
    ];
    for (method, path, body, expect, says) in cases {
        s.refused(admin, method, path, body, expect, &says).await;
    }
    s.stop().await;
    db.remove().await;
}

/// The preset the defaults use, or the flags name, cannot be deleted, nor
/// changed so that the defaults would not be valid.
async fn the_preset_the_defaults_use_cannot_be_deleted_or_broken(backend: &str) {
    let db = TestDb::new(backend).await;
    let s = start(&db, TableDefaults::default()).await;
    let admin = Some(s.admin.as_str());
    s.admin_ok("POST", "/api/v1/admin/presets", Some(house()), 201).await;
    // RoundUnit 1 suits shanghai-expat, which rounds at pay time.
    let set = json!({"preset": "house", "options": {"RoundUnit": 1}});
    s.admin_ok("PUT", "/api/v1/admin/defaults", Some(set), 200).await;
    let in_use = (409, "preset_in_use");
    s.refused(admin, "DELETE", "/api/v1/admin/presets/house", None, in_use, &["default preset of new tables"]).await;
    // Based on american-modern, which does not round at pay time, the
    // defaults' RoundUnit 1 would be refused.
    let breaking = json!({"based_on": "american-modern"});
    let says = ["the defaults of new tables use preset 'house'", "RoundAtPayTime"];
    s.refused(admin, "PUT", "/api/v1/admin/presets/house", Some(breaking), in_use, &says).await;
    // A request naming american-modern is refused for the same reason, and says so.
    let a = s.api.request("POST", "/api/v1/tables", Some(&json!({"preset": "american-modern"})), None).await;
    assert_eq!(a.status, 400, "{}", a.body);
    let message = a.body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("the server's default options do not suit preset 'american-modern'"), "{message}");
    // Once the defaults use another preset, house may go.
    s.admin_ok("PUT", "/api/v1/admin/defaults", Some(json!({"preset": "chinese-classical"})), 200).await;
    let a = s.api.request("DELETE", "/api/v1/admin/presets/house", None, admin).await;
    assert_eq!(a.status, 204, "{}", a.body);
    s.stop().await;
    db.remove().await;
}

/// Every change is in the log: who, when, what, before and after; newest
/// first, in pages, and by target.
async fn the_audit_log_tells_who_when_what_before_and_after(backend: &str) {
    let db = TestDb::new(backend).await;
    let s = start(&db, TableDefaults::default()).await;
    let log = s.admin_ok("GET", "/api/v1/admin/audit", None, 200).await;
    assert_eq!(log, json!({"entries": [], "next_before": null}));
    let me = s.api.request("GET", "/api/v1/me", None, Some(&s.admin)).await.body;
    let admin_id = me["user"]["id"].as_i64().unwrap_or_else(|| panic!("no id in {me}"));

    let t0 = mahjong::store::now_us();
    s.admin_ok("POST", "/api/v1/admin/presets", Some(house()), 201).await;
    s.admin_ok(
        "PUT",
        "/api/v1/admin/presets/house",
        Some(json!({"based_on": "shanghai-expat", "options": {"NumRounds": 2}})),
        200,
    )
    .await;
    s.admin_ok("PUT", "/api/v1/admin/defaults", Some(json!({"preset": "house", "options": {"Timeout": 20}})), 200)
        .await;
    s.admin_ok("DELETE", "/api/v1/admin/defaults", None, 200).await;
    let a = s.api.request("DELETE", "/api/v1/admin/presets/house", None, Some(&s.admin)).await;
    assert_eq!(a.status, 204, "{}", a.body);
    let t1 = mahjong::store::now_us();

    let log = s.admin_ok("GET", "/api/v1/admin/audit", None, 200).await;
    let entries = log["entries"].as_array().expect("entries");
    let actions: Vec<&str> = entries.iter().filter_map(|e| e["action"].as_str()).collect();
    assert_eq!(
        actions,
        ["preset.delete", "defaults.reset", "defaults.set", "preset.update", "preset.create"],
        "newest first"
    );
    for e in entries {
        assert_eq!(e["actor"], json!({"user_id": admin_id, "name": ADMIN_NAME}), "{e}");
        let at = e["at_us"].as_i64().unwrap_or_default();
        assert!(t0 <= at && at <= t1, "{e}: made between {t0} and {t1}");
        assert_eq!(e["at"].as_str(), Some(mahjong::store::dates::format_time(at).as_str()), "{e}");
    }
    let ids: Vec<i64> = entries.iter().filter_map(|e| e["id"].as_i64()).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "numbered in order: {ids:?}");
    let house_then = json!({"name": "house", "description": house()["description"], "based_on": "shanghai-expat", "options": {"NumRounds": 1, "WashBelow": 30}});
    let house_now =
        json!({"name": "house", "description": "", "based_on": "shanghai-expat", "options": {"NumRounds": 2}});
    let flags = json!({"preset": "chinese-classical", "options": {}, "source": "flags"});
    let set = json!({"preset": "house", "options": {"Timeout": 20}, "source": "admin"});
    let expected = [
        ("preset/house", Value::Null, house_then.clone()),
        ("preset/house", house_then, house_now.clone()),
        ("defaults", flags.clone(), set.clone()),
        ("defaults", set, flags),
        ("preset/house", house_now, Value::Null),
    ];
    for (e, (target, before, after)) in entries.iter().rev().zip(expected) {
        assert_eq!((e["target"].as_str(), &e["before"], &e["after"]), (Some(target), &before, &after), "{e}");
    }

    // Pages of two, newest first, then by target.
    let page = s.admin_ok("GET", "/api/v1/admin/audit?limit=2", None, 200).await;
    assert_eq!(page["entries"].as_array().map(Vec::len), Some(2));
    assert_eq!(page["next_before"], json!(ids[1]));
    let page = s.admin_ok("GET", &format!("/api/v1/admin/audit?limit=2&before={}", ids[1]), None, 200).await;
    let got: Vec<i64> = page["entries"].as_array().unwrap().iter().filter_map(|e| e["id"].as_i64()).collect();
    assert_eq!(got, ids[2..4]);
    let page = s.admin_ok("GET", &format!("/api/v1/admin/audit?limit=2&before={}", ids[3]), None, 200).await;
    assert_eq!((page["entries"].as_array().map(Vec::len), page["next_before"].clone()), (Some(1), Value::Null));
    let about = s.admin_ok("GET", "/api/v1/admin/audit?target=defaults", None, 200).await;
    let actions: Vec<&str> = about["entries"].as_array().unwrap().iter().filter_map(|e| e["action"].as_str()).collect();
    assert_eq!(actions, ["defaults.reset", "defaults.set"]);
    s.stop().await;
    db.remove().await;
}

/// The admins' other actions are in the same log: accounts changed, a
/// table closed, a game imported (never its seat tokens).
async fn other_admin_actions_are_in_the_audit_log(backend: &str) {
    let db = TestDb::new(backend).await;
    let s = start(&db, TableDefaults::default()).await;
    let player = s.api.register("Pat", "player password 1").await;
    let me = s.api.request("GET", "/api/v1/me", None, Some(&player)).await.body;
    let id = me["user"]["id"].as_i64().unwrap_or_else(|| panic!("no id in {me}"));
    s.admin_ok("PATCH", &format!("/api/v1/admin/users/{id}"), Some(json!({"role": "admin"})), 200).await;
    let ended = s.admin_ok("DELETE", &format!("/api/v1/admin/users/{id}/sessions"), None, 200).await;
    assert_eq!(ended["ended"], 1, "{ended}");
    let log = s.admin_ok("GET", &format!("/api/v1/admin/audit?target=user/{id}"), None, 200).await;
    let entries = log["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 2, "{log}");
    assert_eq!(entries[1]["action"], "user.update");
    assert_eq!(
        (entries[1]["before"]["role"].as_str(), entries[1]["after"]["role"].as_str()),
        (Some("player"), Some("admin"))
    );
    assert_eq!(entries[1]["actor"]["name"], ADMIN_NAME);
    assert_eq!(entries[0]["action"], "user.end_sessions");
    assert_eq!(entries[0]["before"], json!({"name": "Pat", "sessions": 1}), "{}", entries[0]);
    assert_eq!(entries[0]["after"], json!({"name": "Pat", "sessions": 0}), "{}", entries[0]);
    // The player's session is gone.
    let a = s.api.request("GET", "/api/v1/me", None, Some(&player)).await;
    assert_eq!(a.status, 401, "{}", a.body);

    let (table, _, _) = s.table(json!({"name": "Closing", "robots": robots()})).await;
    let a = s.api.request("DELETE", &format!("/api/v1/tables/{table}"), None, Some(&s.admin)).await;
    assert_eq!(a.status, 204, "{}", a.body);
    let log = s.admin_ok("GET", &format!("/api/v1/admin/audit?target=table/{table}"), None, 200).await;
    let entry = &log["entries"][0];
    assert_eq!((entry["action"].as_str(), entry["after"].clone()), (Some("table.close"), Value::Null), "{log}");
    assert_eq!(
        (entry["before"]["id"].as_str(), entry["before"]["name"].as_str()),
        (Some(table.as_str()), Some("Closing"))
    );

    let finished = s.api.robot_game("Exported").await;
    s.api.wait_over(&finished).await;
    let file = s.api.get(&format!("/api/v1/games/{finished}/export")).await;
    let imported = s.admin_ok("POST", "/api/v1/games/import", Some(file), 201).await;
    let id = imported["id"].as_str().unwrap_or_else(|| panic!("no id in {imported}"));
    let log = s.admin_ok("GET", &format!("/api/v1/admin/audit?target=game/{id}"), None, 200).await;
    let entry = &log["entries"][0];
    assert_eq!((entry["action"].as_str(), entry["before"].clone()), (Some("game.import"), Value::Null), "{log}");
    assert_eq!(entry["after"], json!({"id": id, "state": "over", "hands": imported["hands"]}));
    s.stop().await;
    db.remove().await;
}

/// The presets, the defaults an admin set and the log survive a restart on
/// the same database, the stored defaults winning over other flags; a table
/// opened before the restart resumes with its own options.
async fn everything_survives_a_restart(backend: &str) {
    let db = TestDb::new(backend).await;
    let s = start(&db, TableDefaults::default()).await;
    s.admin_ok("POST", "/api/v1/admin/presets", Some(house()), 201).await;
    s.admin_ok("PUT", "/api/v1/admin/defaults", Some(json!({"preset": "house", "options": {"Timeout": 25}})), 200)
        .await;
    let (table, opened_with, _) = s.table(json!({"robots": robots()})).await;
    let state = s.state().await;
    s.stop().await;

    // Other flags: the admin's defaults still win.
    let s = start(&db, flags("american-modern", json!({"Timeout": 9}))).await;
    assert_eq!(s.state().await, state, "the presets, the defaults and the log read as before the restart");
    let (_, options, preset) = s.table(json!({})).await;
    assert_eq!(
        (preset.as_str(), options["Timeout"].clone(), options["WashBelow"].clone()),
        ("house", json!(25), json!(30))
    );
    let game = s.api.get(&format!("/api/v1/games/{table}")).await;
    assert_eq!(game["options"], opened_with, "the resumed table keeps its options");
    assert_eq!(s.api.table_info(&table).await["preset"], "house");
    // A reset puts this start's flags in force.
    let reset = s.admin_ok("DELETE", "/api/v1/admin/defaults", None, 200).await;
    assert_eq!((reset["preset"].as_str(), reset["options"].clone()), (Some("american-modern"), json!({"Timeout": 9})));
    s.stop().await;

    // ... and the reset survives too.
    let s = start(&db, flags("japanese-rounding", json!({}))).await;
    let defaults = s.admin_ok("GET", "/api/v1/admin/defaults", None, 200).await;
    assert_eq!((defaults["source"].as_str(), defaults["preset"].as_str()), (Some("flags"), Some("japanese-rounding")));
    let log = s.admin_ok("GET", "/api/v1/admin/audit", None, 200).await;
    let actions: Vec<&str> = log["entries"].as_array().unwrap().iter().filter_map(|e| e["action"].as_str()).collect();
    assert_eq!(actions, ["defaults.reset", "defaults.set", "preset.create"]);
    s.stop().await;
    db.remove().await;
}

/// `--preset` may name a custom preset stored in the database, which then
/// cannot be deleted; a preset that does not exist stops the start.
async fn the_flags_may_name_a_custom_preset_and_must_name_a_preset(backend: &str) {
    let db = TestDb::new(backend).await;
    let e = try_start(&db, flags("house", json!({}))).await.err().expect("no preset 'house' yet: the start fails");
    assert!(e.contains("--preset") && e.contains("unknown preset 'house'"), "{e}");
    let s = start(&db, TableDefaults::default()).await;
    s.admin_ok("POST", "/api/v1/admin/presets", Some(house()), 201).await;
    s.stop().await;

    // RoundUnit 1 suits house, which rounds at pay time as shanghai-expat does.
    let s = start(&db, flags("house", json!({"RoundUnit": 1}))).await;
    let defaults = s.admin_ok("GET", "/api/v1/admin/defaults", None, 200).await;
    assert_eq!((defaults["source"].as_str(), defaults["preset"].as_str()), (Some("flags"), Some("house")));
    let (_, options, preset) = s.table(json!({})).await;
    assert_eq!(
        (preset.as_str(), options["RoundUnit"].clone(), options["WashBelow"].clone()),
        ("house", json!(1), json!(30))
    );
    // With other defaults in force, the flags still name house: they are in
    // force again after a reset, so house can be neither deleted nor based
    // on a preset their RoundUnit 1 does not suit.
    s.admin_ok("PUT", "/api/v1/admin/defaults", Some(json!({"preset": "chinese-classical"})), 200).await;
    let admin = Some(s.admin.as_str());
    let in_use = (409, "preset_in_use");
    s.refused(admin, "DELETE", "/api/v1/admin/presets/house", None, in_use, &["server's flags"]).await;
    let breaking = Some(json!({"based_on": "american-modern", "options": {"WashBelow": 30}}));
    s.refused(admin, "PUT", "/api/v1/admin/presets/house", breaking, in_use, &["server's flags", "RoundAtPayTime"])
        .await;
    let (_, _, preset) = s.table(json!({})).await;
    assert_eq!(preset, "chinese-classical", "the admin's defaults are in force");
    s.stop().await;
    db.remove().await;
}

/// A stored preset that no longer reads is left out at start-up (logged);
/// the others are served, and an admin may delete it.
async fn a_damaged_stored_preset_is_left_out_at_start_up(backend: &str) {
    let db = TestDb::new(backend).await;
    let s = start(&db, TableDefaults::default()).await;
    s.admin_ok("POST", "/api/v1/admin/presets", Some(house()), 201).await;
    s.admin_ok("POST", "/api/v1/admin/presets", Some(json!({"name": "broken"})), 201).await;
    s.stop().await;
    let store = Store::open(&db.url).await.expect("the store");
    sqlx::query("UPDATE presets SET options = 'not json' WHERE name = 'broken'")
        .execute(store.pool())
        .await
        .expect("damage a row");
    store.close().await;

    let s = start(&db, TableDefaults::default()).await;
    let listing = s.api.get("/api/v1/presets").await;
    let names: Vec<&str> = listing["presets"].as_array().unwrap().iter().filter_map(|p| p["name"].as_str()).collect();
    assert!(names.contains(&"house") && !names.contains(&"broken"), "{names:?}");
    // Its name stays taken until it is deleted.
    s.refused(
        Some(&s.admin),
        "POST",
        "/api/v1/admin/presets",
        Some(json!({"name": "broken"})),
        (409, "preset_exists"),
        &["broken"],
    )
    .await;
    let a = s.api.request("DELETE", "/api/v1/admin/presets/broken", None, Some(&s.admin)).await;
    assert_eq!(a.status, 204, "{}", a.body);
    let log = s.admin_ok("GET", "/api/v1/admin/audit?target=preset/broken", None, 200).await;
    assert_eq!(log["entries"][0]["before"], json!({"name": "broken", "unreadable": true}));
    s.admin_ok("POST", "/api/v1/admin/presets", Some(json!({"name": "broken"})), 201).await;
    s.stop().await;
    db.remove().await;
}

/// `presets`, `settle` and `simulate` given the server's database know its
/// custom presets; without it, they know only the built-in ones.
async fn the_commands_know_the_stored_presets(backend: &str) {
    let db = TestDb::new(backend).await;
    let s = start(&db, TableDefaults::default()).await;
    let house_info = s.admin_ok("POST", "/api/v1/admin/presets", Some(house()), 201).await;
    let hand = json!({"preset": "house", "east": 0, "winner": 0, "scores": [100, 20, 0, 0]});
    let over_rest = s.api.post("/api/v1/settle", hand.clone(), None).await;
    s.stop().await;

    let run = |args: &[&str], stdin: Option<String>| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_mahjong-server"));
        command.args(args).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
        command.stderr(std::process::Stdio::piped());
        let mut child = command.spawn().expect("run mahjong-server");
        if let Some(text) = stdin {
            use std::io::Write;
            child.stdin.take().expect("stdin").write_all(text.as_bytes()).expect("write stdin");
        }
        let out = child.wait_with_output().expect("mahjong-server ends");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let url = db.url.as_str();
    let (code, out, err) = run(&["presets", "--json", "--database", url], None);
    assert_eq!(code, Some(0), "{err}");
    let listed: Vec<Value> = serde_json::from_str(&out).expect("a JSON list");
    assert_eq!(listed.last(), Some(&house_info), "listed as the server lists it");
    let (code, out, err) = run(&["settle", "--database", url], Some(hand.to_string()));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(serde_json::from_str::<Value>(&out).expect("JSON"), over_rest, "settled as the server settles it");
    let (code, _, err) = run(&["settle"], Some(hand.to_string()));
    assert_eq!(code, Some(2), "without the database, house is unknown");
    assert!(err.contains("unknown preset 'house'"), "{err}");
    let (code, out, err) = run(&["simulate", "--games", "1", "--json", "--preset", "house", "--database", url], None);
    assert_eq!(code, Some(0), "{err}");
    let summary: Value = serde_json::from_str(&out).expect("a JSON summary");
    assert!(summary["hands"].as_u64().unwrap_or(0) > 0, "{summary}");
    db.remove().await;
}
