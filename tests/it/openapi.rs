//! The OpenAPI document (`openapi/openapi.json`) against the code and the
//! running server: the committed file is the document the code generates,
//! the server serves exactly it, every route the server answers is in it
//! (so no route can be added without documenting it), every operation in it
//! is served, and the reference page's files come from the binary.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use common::app::TestApp;
use mahjong::auth::{AccountSettings, Accounts};
use mahjong::http::openapi::{DOCS_PATH, DOCUMENT_PATH, document_json};
use mahjong::http::{AppState, Timeouts, router};
use mahjong::rules::preset_book::DefaultOptions;
use mahjong::table::{Lobby, Rulebook, TableDefaults};
use serde_json::Value;

/// The command that writes the committed document.
const REGENERATE: &str = "cargo run --release -- openapi -o openapi/openapi.json";

/// The methods a route may take, as OpenAPI names them (HEAD and OPTIONS
/// are answered by the HTTP layer for every GET route, not by handlers).
const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

fn committed() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi/openapi.json");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}; write it with `{REGENERATE}`", path.display()))
}

fn parse(text: &str, what: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{what} is not JSON: {e}"))
}

/// Every operation of a document, as `(METHOD, path)`.
fn operations(document: &Value) -> BTreeSet<(String, String)> {
    let paths = document["paths"].as_object().expect("the document has paths");
    paths
        .iter()
        .flat_map(|(path, item)| {
            METHODS.iter().filter(|m| item.get(**m).is_some()).map(|m| (m.to_uppercase(), path.clone()))
        })
        .collect()
}

#[test]
fn the_committed_document_is_the_one_the_code_generates() {
    let (committed, generated) = (committed(), document_json());
    if committed != generated {
        let line = committed.lines().zip(generated.lines()).position(|(a, b)| a != b);
        let line = line.unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
        panic!(
            "openapi/openapi.json is not the document the code generates (they differ from line {}: committed {:?}, \
             generated {:?}); regenerate it with `{REGENERATE}` and commit it",
            line + 1,
            committed.lines().nth(line).unwrap_or("(the end)"),
            generated.lines().nth(line).unwrap_or("(the end)"),
        );
    }
}

/// The document is one a client can rely on: each operation has its own
/// id, a success and the error body it refuses with.
#[test]
fn every_operation_has_an_id_a_success_and_error_answers() {
    let document = parse(&document_json(), "the document");
    let mut ids = BTreeSet::new();
    for (method, path) in operations(&document) {
        let operation = &document["paths"][&path][method.to_lowercase()];
        let id = operation["operationId"].as_str().unwrap_or_else(|| panic!("{method} {path} has no operationId"));
        assert!(ids.insert(id.to_string()), "operationId {id} is given twice");
        let statuses: Vec<&String> = operation["responses"].as_object().expect("responses").keys().collect();
        assert!(
            statuses.iter().any(|s| s.starts_with('2') || *s == "101"),
            "{method} {path}: no success in {statuses:?}"
        );
        for status in statuses.iter().filter(|s| s.starts_with('4') || s.starts_with('5')) {
            let reference = operation["responses"][status.as_str()]["$ref"].as_str();
            let name = reference.and_then(|r| r.strip_prefix("#/components/responses/"));
            let name = name.unwrap_or_else(|| panic!("{method} {path} {status}: not one of the error responses"));
            let schema = &document["components"]["responses"][name]["content"]["application/json"]["schema"];
            let codes = schema["properties"]["error"]["properties"]["code"]["enum"].as_array();
            assert!(codes.is_some_and(|c| !c.is_empty()), "{method} {path} {status}: its error codes are not listed");
        }
    }
}

/// Every path the server routes, from the router itself: axum can list its
/// routes only in its `Debug` text, where each path is quoted. (Should that
/// text change, the known paths checked below are missing and the test
/// fails rather than pass on nothing.)
async fn served_paths() -> BTreeSet<String> {
    let store = mahjong::store::Store::open("sqlite::memory:").await.expect("a store in memory");
    let lobby = Arc::new(Lobby::new(store.clone(), Default::default()));
    let rulebook = Rulebook::load(store.clone(), DefaultOptions::default()).await.expect("the rules");
    let accounts = Arc::new(Accounts::new(store, AccountSettings::default()).expect("the accounts"));
    let shutdown = mahjong::shutdown::Shutdown::new();
    let state = AppState {
        lobby,
        defaults: Arc::new(TableDefaults::default()),
        rulebook: Arc::new(rulebook),
        shutdown,
        timeouts: Timeouts::default(),
        accounts,
        require_accounts: false,
        metrics: mahjong::metrics::install(),
        quotas: mahjong::limits::Quotas::unlimited(),
        allowed_origins: Arc::new(Vec::new()),
        cluster: None,
        metrics_access: Default::default(),
    };
    let text = format!("{:?}", router(state));
    let paths: BTreeSet<String> = text
        .split('"')
        .skip(1)
        .step_by(2)
        .filter(|p| p.starts_with('/') && !p.contains("__private__axum"))
        .map(str::to_string)
        .collect();
    for known in ["/api/v1/tables", "/api/v1/tables/{id}/ws", "/api/v1/openapi.json", "/healthz", "/metrics"] {
        assert!(paths.contains(known), "{known} not found among the router's paths {paths:?}");
    }
    paths
}

/// A concrete path for a path template, its parameters filled in.
fn concrete(template: &str) -> String {
    template.replace("{id}", "probe").replace("{seat}", "0").replace("{n}", "1").replace("{name}", "probe")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_the_server_answers_is_documented_and_every_operation_is_served() {
    let document = parse(&committed(), "openapi/openapi.json");
    let documented = operations(&document);
    let app = TestApp::spawn("memory", TableDefaults::default()).await;
    let mut served = BTreeSet::new();
    // The reference page's own files and the browser client's are not API routes.
    let client = mahjong::http::web::client_paths();
    assert!(client.contains(&"/js/main.js".to_string()), "the client's files are listed: {client:?}");
    for path in served_paths().await.into_iter().filter(|p| !p.starts_with(DOCS_PATH) && !client.contains(p)) {
        assert!(!path.contains("{*"), "{path}: a wildcard route cannot be documented path by path");
        for method in METHODS {
            let method = method.to_uppercase();
            let answer = app.api.request(&method, &concrete(&path), None, None).await;
            // axum answers 405 for a method the path does not route, and
            // the fallback `not_found` for a path it does not (the router's
            // text names its fallback's path too).
            if answer.status != 405 && answer.body["error"]["code"] != "not_found" {
                served.insert((method, path.clone()));
            }
        }
    }
    let undocumented: Vec<_> = served.difference(&documented).collect();
    assert!(
        undocumented.is_empty(),
        "served but not in the OpenAPI document: {undocumented:?}; give each handler its #[utoipa::path] and \
         register it with routes!(...) in its module's routes(), then `{REGENERATE}`"
    );
    let unserved: Vec<_> = documented.difference(&served).collect();
    assert!(unserved.is_empty(), "in the OpenAPI document but not served: {unserved:?}");
    app.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_serves_the_committed_document_and_its_reference_page() {
    let app = TestApp::spawn("memory", TableDefaults::default()).await;
    let served = app.api.ask(DOCUMENT_PATH, None).await;
    assert_eq!(served.status, 200, "{}", served.body);
    assert!(served.body == parse(&committed(), "openapi/openapi.json"), "the served document is not the committed one");

    let page = app.api.ask(&format!("{DOCS_PATH}/"), None).await;
    let html = page.body.as_str().unwrap_or_default();
    assert!(page.status == 200 && html.contains("swagger-ui"), "{DOCS_PATH}/: {} {}", page.status, page.body);
    // The page's script and its settings come from the binary, and point at
    // the served document.
    let settings = app.api.ask(&format!("{DOCS_PATH}/swagger-initializer.js"), None).await;
    let script = settings.body.as_str().unwrap_or_default();
    assert!(settings.status == 200 && script.contains(DOCUMENT_PATH), "{}: {script}", settings.status);
    let bundle = app.api.ask(&format!("{DOCS_PATH}/swagger-ui-bundle.js"), None).await;
    assert!(bundle.status == 200 && bundle.body.as_str().is_some_and(|s| s.len() > 100_000), "{}", bundle.status);
    assert!(!html.contains("://"), "the page loads nothing from elsewhere: {html}");
    app.finish().await;
}
