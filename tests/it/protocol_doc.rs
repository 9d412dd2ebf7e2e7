//! docs/protocol.md against the code, so that the document cannot silently
//! drift from the protocol.
//!
//! Every fenced ```json block of the document is marked, on the line before
//! its fence, with the type it shows: `<!-- json: TYPE -->`, optionally
//! followed by a mode:
//!
//! - no mode: the block must parse as TYPE and serialise back to the same
//!   JSON value (it is exactly what the server sends);
//! - `input`: the block must parse as TYPE (the server accepts it); where the
//!   type serialises, the serialised form must hold every field of the block
//!   with the same value (it may add defaulted fields);
//! - `rejected`: the block must not parse as TYPE.
//!
//! Beyond the blocks: every variant of the client and server messages, of the
//! game and table events and of the player's actions must have an example
//! (the variant names are read from serde itself, so a new variant in the
//! code fails this test until it is documented), every `settle` and `score`
//! example answer must be what the calculator answers, and the limits quoted must be
//! the code's.
//!
//! The REST operations are described by the OpenAPI document
//! (`openapi/openapi.json`, which tests/it/openapi.rs keeps equal to the
//! code), not by docs/protocol.md: the checks of REST facts read them from
//! that document (every REST error code with its status, the score queries'
//! and the audit log's parameters), and the document's section on the REST
//! API must point at it.

use std::collections::BTreeSet;
use std::path::Path;

use mahjong::bots::Strategy;
use mahjong::game_file::{FileInput, GameFile, Imported};
use mahjong::http::games::{GamesQuery, PageQuery, StandingsQuery};
use mahjong::http::options::AuditQuery;
use mahjong::http::paging::{DEFAULT_LIMIT, MAX_LIMIT};
use mahjong::protocol::ws::{
    ClientMessage, MAX_CHAT_CHARS, MAX_CLIENT_MESSAGE, SeatInfo, ServerMessage, StreamEvent, TableEvent, TableInfo,
};
use mahjong::rules::calculator::{SettleRequest, SettleResponse};
use mahjong::rules::event::Event;
use mahjong::rules::scoring::HandScore;
use mahjong::rules::scoring_calculator::{ScoreRequest, ScoreResponse};
use mahjong::rules::settlement::Settlement;
use mahjong::rules::view::{HandView, SeatView};
use mahjong::rules::{Action, TableView, TileSet};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a block is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Exact,
    Input,
    Rejected,
}

/// One marked ```json block.
#[derive(Debug)]
struct Block {
    /// 1-based line of the opening fence.
    line: usize,
    kind: String,
    mode: Mode,
    text: String,
}

fn document() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/protocol.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Every ```json block with its marker; panics on a block without one.
fn blocks(doc: &str) -> Vec<Block> {
    let lines: Vec<&str> = doc.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if !line.starts_with("```") {
            i += 1;
            continue;
        }
        let fence_line = i;
        let lang = line.trim_start_matches('`').trim();
        let mut body = Vec::new();
        i += 1;
        while i < lines.len() && lines[i].trim() != "```" {
            body.push(lines[i]);
            i += 1;
        }
        assert!(i < lines.len(), "docs/protocol.md:{}: unclosed code fence", fence_line + 1);
        i += 1;
        if lang != "json" {
            continue;
        }
        let marker = lines[..fence_line].iter().rev().find(|l| !l.trim().is_empty()).map(|l| l.trim()).unwrap_or("");
        let Some(inner) = marker.strip_prefix("<!-- json:").and_then(|m| m.strip_suffix("-->")) else {
            panic!(
                "docs/protocol.md:{}: a ```json block needs a marker line `<!-- json: TYPE -->` before it, found {marker:?}",
                fence_line + 1
            );
        };
        let mut words = inner.split_whitespace();
        let kind = words.next().unwrap_or_default().to_string();
        let mode = match words.next() {
            None => Mode::Exact,
            Some("input") => Mode::Input,
            Some("rejected") => Mode::Rejected,
            Some(other) => panic!("docs/protocol.md:{}: unknown marker mode {other:?}", fence_line + 1),
        };
        assert!(words.next().is_none(), "docs/protocol.md:{}: marker has too many words", fence_line + 1);
        out.push(Block { line: fence_line + 1, kind, mode, text: body.join("\n") });
    }
    out
}

/// True if every field and element of `small` is in `big` with the same value.
fn contained(small: &Value, big: &Value) -> bool {
    match (small, big) {
        (Value::Object(s), Value::Object(b)) => s.iter().all(|(k, v)| b.get(k).is_some_and(|w| contained(v, w))),
        (Value::Array(s), Value::Array(b)) => s.len() == b.len() && s.iter().zip(b).all(|(v, w)| contained(v, w)),
        _ => small == big,
    }
}

/// Checks a block of a type that both parses and serialises; returns the value.
fn round_trip<T: Serialize + DeserializeOwned>(block: &Block, json: &Value) -> Option<T> {
    let where_ = format!("docs/protocol.md:{} ({})", block.line, block.kind);
    let parsed = serde_json::from_value::<T>(json.clone());
    if block.mode == Mode::Rejected {
        assert!(parsed.is_err(), "{where_}: the example marked `rejected` is accepted");
        return None;
    }
    let value = parsed.unwrap_or_else(|e| panic!("{where_}: does not parse: {e}\n{}", block.text));
    let back = serde_json::to_value(&value).unwrap_or_else(|e| panic!("{where_}: does not serialise: {e}"));
    match block.mode {
        Mode::Exact => assert_eq!(
            &back,
            json,
            "{where_}: the server would write this differently:\n{}",
            serde_json::to_string(&back).unwrap_or_default()
        ),
        _ => assert!(
            contained(json, &back),
            "{where_}: the accepted input reads as something else:\n{}",
            serde_json::to_string(&back).unwrap_or_default()
        ),
    }
    Some(value)
}

/// Checks a block of a type the server only reads (a request body).
fn parse_only<T: DeserializeOwned>(block: &Block, json: &Value) -> Option<T> {
    let where_ = format!("docs/protocol.md:{} ({})", block.line, block.kind);
    let parsed = serde_json::from_value::<T>(json.clone());
    match block.mode {
        Mode::Rejected => {
            assert!(parsed.is_err(), "{where_}: the example marked `rejected` is accepted");
            None
        }
        Mode::Input => Some(parsed.unwrap_or_else(|e| panic!("{where_}: does not parse: {e}\n{}", block.text))),
        Mode::Exact => panic!("{where_}: the server only reads {}: mark the block `input`", block.kind),
    }
}

/// The REST error body, `{"error": {"code": ..., "message": ...}}`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorDetail {
    code: String,
    message: String,
}

/// The REST error codes (crates/server/src/http/error.rs).
fn rest_error_codes() -> Vec<&'static str> {
    mahjong::http::ApiErrorCode::ALL.iter().map(|c| c.as_str()).collect()
}

/// The WebSocket error codes (`WsErrorCode`), as serde lists them when it
/// meets an unknown one.
fn ws_error_codes() -> BTreeSet<String> {
    let probe = Value::String("\u{1}no such code".into());
    let Err(e) = serde_json::from_value::<mahjong::protocol::ws::WsErrorCode>(probe) else {
        panic!("the probe code parsed")
    };
    let text = e.to_string();
    let list = text.split("expected one of").nth(1).unwrap_or_else(|| panic!("unexpected serde error: {text}"));
    list.split(',').map(|w| w.trim().trim_matches('`').to_string()).filter(|w| !w.is_empty()).collect()
}

/// What the examples show, for the coverage check.
#[derive(Default)]
struct Seen {
    client: BTreeSet<String>,
    server: BTreeSet<String>,
    game_events: BTreeSet<String>,
    table_events: BTreeSet<String>,
    actions: BTreeSet<String>,
}

fn tag(value: &impl Serialize, field: &str) -> String {
    let v = serde_json::to_value(value).unwrap_or_default();
    v.get(field).and_then(Value::as_str).unwrap_or_default().to_string()
}

impl Seen {
    fn client_message(&mut self, m: &ClientMessage) {
        self.client.insert(tag(m, "type"));
        if let ClientMessage::Act { action } = m {
            self.actions.insert(tag(action, "action"));
        }
    }

    fn server_message(&mut self, m: &ServerMessage) {
        self.server.insert(tag(m, "type"));
        if let ServerMessage::Event { event, .. } = m {
            self.stream_event(event);
        }
    }

    fn stream_event(&mut self, e: &StreamEvent) {
        match e {
            StreamEvent::Game(e) => self.game_events.insert(tag(e, "type")),
            StreamEvent::Table(e) => self.table_events.insert(tag(e, "type")),
        };
    }
}

/// The variant tags of an internally tagged enum, as serde lists them when it
/// meets an unknown one.
fn variant_tags<T: DeserializeOwned>(field: &str) -> BTreeSet<String> {
    let probe = serde_json::json!({ field: "\u{1}no such variant" });
    let Err(e) = serde_json::from_value::<T>(probe) else { panic!("the probe variant parsed") };
    let text = e.to_string();
    let list = text.split("expected one of").nth(1).unwrap_or_else(|| panic!("unexpected serde error: {text}"));
    list.split(',').map(|w| w.trim().trim_matches('`').to_string()).filter(|w| !w.is_empty()).collect()
}

/// The answers the calculators gave to the last request examples, with their
/// lines, awaiting the example answer that follows each.
#[derive(Default)]
struct Answers {
    settle: Option<(usize, SettleResponse)>,
    score: Option<(usize, ScoreResponse)>,
}

fn check_block(block: &Block, seen: &mut Seen, answers: &mut Answers) {
    let where_ = format!("docs/protocol.md:{} ({})", block.line, block.kind);
    let json: Value = serde_json::from_str(&block.text).unwrap_or_else(|e| panic!("{where_}: not JSON: {e}"));
    match block.kind.as_str() {
        "ClientMessage" => {
            if let Some(m) = round_trip::<ClientMessage>(block, &json) {
                seen.client_message(&m);
            }
        }
        "ServerMessage" => {
            if block.mode != Mode::Rejected
                && let Some(event) = json.get("event")
            {
                // A stream event is untagged: say why neither kind reads it.
                let game = serde_json::from_value::<Event>(event.clone()).err();
                let table = serde_json::from_value::<TableEvent>(event.clone()).err();
                if let (Some(game), Some(table)) = (game, table) {
                    panic!("{where_}: the event is neither a game event ({game}) nor a table event ({table})");
                }
            }
            if let Some(m) = round_trip::<ServerMessage>(block, &json) {
                if let ServerMessage::Error { code, .. } = &m {
                    assert!(ws_error_codes().contains(code.as_str()), "{where_}: unknown error code {code}");
                }
                seen.server_message(&m);
            }
        }
        "StreamEvent" => {
            if let Some(e) = round_trip::<StreamEvent>(block, &json) {
                seen.stream_event(&e);
            }
        }
        "Event" => {
            if let Some(e) = round_trip::<Event>(block, &json) {
                seen.game_events.insert(tag(&e, "type"));
            }
        }
        "TableEvent" => {
            if let Some(e) = round_trip::<TableEvent>(block, &json) {
                seen.table_events.insert(tag(&e, "type"));
            }
        }
        "Action" => {
            if let Some(a) = round_trip::<Action>(block, &json) {
                seen.actions.insert(tag(&a, "action"));
            }
        }
        "TableInfo" => drop(round_trip::<TableInfo>(block, &json)),
        "SeatInfo" => drop(round_trip::<SeatInfo>(block, &json)),
        "TableView" => drop(round_trip::<TableView>(block, &json)),
        "HandView" => drop(round_trip::<HandView>(block, &json)),
        "SeatView" => drop(round_trip::<SeatView>(block, &json)),
        "TileSet" => drop(round_trip::<TileSet>(block, &json)),
        "HandScore" => drop(round_trip::<HandScore>(block, &json)),
        "Settlement" => drop(round_trip::<Settlement>(block, &json)),
        "Strategy" => drop(round_trip::<Strategy>(block, &json)),
        // The REST operations' bodies are shown by the OpenAPI document; here
        // only the error body, and the calculators' requests and answers that
        // illustrate hand scores and settlements.
        "ApiError" => {
            if let Some(e) = round_trip::<ErrorBody>(block, &json) {
                let code = e.error.code.as_str();
                assert!(rest_error_codes().contains(&code), "{where_}: unknown error code {code}");
            }
        }
        "SettleRequest" => {
            if let Some(request) = parse_only::<SettleRequest>(block, &json) {
                let answer = mahjong::rules::calculator::calculate(&request)
                    .unwrap_or_else(|e| panic!("{where_}: the calculator refuses it: {e}"));
                answers.settle = Some((block.line, answer));
            }
        }
        "SettleResponse" => {
            if let Some(answer) = round_trip::<SettleResponse>(block, &json)
                && let Some((line, expected)) = answers.settle.take()
            {
                assert_eq!(answer, expected, "{where_}: not the answer to the request at line {line}");
            }
        }
        "ScoreRequest" => {
            if let Some(request) = parse_only::<ScoreRequest>(block, &json) {
                let answer = mahjong::rules::scoring_calculator::score(&request)
                    .unwrap_or_else(|e| panic!("{where_}: the calculator refuses it: {e}"));
                answers.score = Some((block.line, answer));
            }
        }
        "ScoreResponse" => {
            if let Some(answer) = round_trip::<ScoreResponse>(block, &json) {
                let (line, expected) =
                    answers.score.take().unwrap_or_else(|| panic!("{where_}: an answer without its request before it"));
                // As JSON: what the server writes (a score read back has no
                // dangers, which are not written).
                let json_of = |a: &ScoreResponse| serde_json::to_value(a).unwrap_or_default();
                assert_eq!(
                    json_of(&answer),
                    json_of(&expected),
                    "{where_}: not the answer to the request at line {line}"
                );
            }
        }
        "GameFile" => {
            // A game file example must also be a file the server loads.
            if let Some(file) = round_trip::<GameFile>(block, &json) {
                mahjong::game_file::check(&file).unwrap_or_else(|e| panic!("{where_}: {e}"));
            }
        }
        "FileInput" => drop(round_trip::<FileInput>(block, &json)),
        "Imported" => drop(round_trip::<Imported>(block, &json)),
        other => panic!("{where_}: unknown type {other:?} in the marker"),
    }
}

#[test]
fn every_json_example_is_what_the_code_reads_and_writes() {
    let doc = document();
    let blocks = blocks(&doc);
    assert!(blocks.len() > 50, "only {} marked JSON blocks found", blocks.len());
    let mut seen = Seen::default();
    let mut answers = Answers::default();
    for block in &blocks {
        check_block(block, &mut seen, &mut answers);
    }
    let missing = |what: &str, expected: BTreeSet<String>, seen: &BTreeSet<String>| {
        let missing: Vec<&String> = expected.difference(seen).collect();
        assert!(missing.is_empty(), "docs/protocol.md has no example of these {what}: {missing:?}");
    };
    missing("client messages", variant_tags::<ClientMessage>("type"), &seen.client);
    missing("server messages", variant_tags::<ServerMessage>("type"), &seen.server);
    missing("game events", variant_tags::<Event>("type"), &seen.game_events);
    missing("table events", variant_tags::<TableEvent>("type"), &seen.table_events);
    missing("actions", variant_tags::<Action>("action"), &seen.actions);
}

/// The names in backquotes of the `###` headings under the `##` heading `section`.
fn headings_under(doc: &str, section: &str) -> BTreeSet<String> {
    let mut inside = false;
    let mut out = BTreeSet::new();
    for line in doc.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            inside = title.trim() == section;
        } else if inside && let Some(title) = line.strip_prefix("### ") {
            let title = title.trim();
            if let Some(name) = title.strip_prefix('`').and_then(|t| t.strip_suffix('`')) {
                out.insert(name.to_string());
            }
        }
    }
    assert!(!out.is_empty(), "docs/protocol.md has no section `## {section}` with `### \\`name\\`` headings");
    out
}

#[test]
fn every_message_event_and_action_has_its_own_heading() {
    let doc = document();
    for (section, tags) in [
        ("Client messages", variant_tags::<ClientMessage>("type")),
        ("Server messages", variant_tags::<ServerMessage>("type")),
        ("Game events", variant_tags::<Event>("type")),
        ("Table events", variant_tags::<TableEvent>("type")),
        ("Player actions", variant_tags::<Action>("action")),
    ] {
        let headings = headings_under(&doc, section);
        assert_eq!(headings, tags, "the `### \\`name\\`` headings of `## {section}` are not the code's variants");
    }
}

#[test]
fn every_decision_is_in_the_decision_table() {
    let doc = document();
    let probe = Value::String("\u{1}no such decision".into());
    let Err(e) = serde_json::from_value::<mahjong::rules::Decision>(probe) else { panic!("the probe decision parsed") };
    let text = e.to_string();
    let list = text.split("expected one of").nth(1).unwrap_or_else(|| panic!("unexpected serde error: {text}"));
    for word in list.split(',').map(|w| w.trim().trim_matches('`')).filter(|w| !w.is_empty()) {
        assert!(doc.contains(&format!("| `{word}` |")), "docs/protocol.md: the decision `{word}` is not in the table");
    }
}

/// Every WebSocket error code is in the table of codes of "Errors".
#[test]
fn every_websocket_error_code_is_in_the_table() {
    let errors = section(&document(), "Errors");
    for code in ws_error_codes() {
        assert!(errors.contains(&format!("| `{code}` |")), "docs/protocol.md's \"Errors\" has no row for `{code}`");
    }
}

#[test]
fn game_and_table_events_have_distinct_tags() {
    // A stream event is untagged: a tag in both sets would make a table
    // event read as a game event.
    let game = variant_tags::<Event>("type");
    let table = variant_tags::<TableEvent>("type");
    let both: Vec<&String> = game.intersection(&table).collect();
    assert!(both.is_empty(), "tags of both a game event and a table event: {both:?}");
}

#[test]
fn the_limits_quoted_are_the_code_limits() {
    let doc = document();
    let quoted = [
        format!("{MAX_CLIENT_MESSAGE} bytes"),
        format!("{MAX_CHAT_CHARS} characters"),
        format!("{} bytes", mahjong::http::MAX_BODY),
        format!("{} bytes", mahjong::http::archive::MAX_GAME_FILE),
        format!("every {} seconds", mahjong::http::ws::PING_EVERY.as_secs()),
        format!("{} seconds", mahjong::http::ws::IDLE_LIMIT.as_secs()),
        format!("`{}`", mahjong::http::ws::CLOSE_DROPPED),
        format!("`{}`", mahjong::http::ws::CLOSE_REPLACED),
        format!("`{}`", mahjong::http::ws::CLOSE_SEAT_LEFT),
        format!("{} bytes", mahjong::http::MAX_URI),
        format!("{} seconds", mahjong::http::Timeouts::default().request.as_secs()),
        format!("{} seconds", mahjong::http::Timeouts::default().game_file.as_secs()),
    ];
    for q in quoted {
        assert!(doc.contains(&q), "docs/protocol.md does not quote the limit `{q}`");
    }
}

/// Every flag of the limits is in the table of limits, with its default.
#[test]
fn every_limit_is_documented_with_its_flag_and_default() {
    use clap::Args;
    let doc = document();
    let limits = section(&doc, "Limits");
    let d = mahjong::limits::Limits::default();
    let a = mahjong::auth::AccountSettings::default();
    let defaults = [
        ("--max-connections-per-address", d.connections_per_address.to_string()),
        ("--max-websockets-per-address", d.websockets_per_address.to_string()),
        ("--max-classic-per-address", d.classic_per_address.to_string()),
        ("--max-connections", "the file descriptor limit".to_string()),
        ("--header-timeout", format!("{} seconds", d.header_timeout.as_secs())),
        ("--tables-rate", d.tables_opened.to_string()),
        ("--seats-rate", d.seats_taken.to_string()),
        ("--connections-rate", d.connections_opened.to_string()),
        ("--max-waiting-tables", d.waiting_tables.to_string()),
        ("--max-seats", d.seats.to_string()),
        ("--max-robot-games", d.robot_games.to_string()),
        ("--robot-games-need-account", "off".to_string()),
        ("--max-robot-game-rounds", d.robot_game_rounds.to_string()),
        ("--robot-hands-per-hour", d.robot_budget.hands_per_hour.to_string()),
        ("--robot-hands-per-day", d.robot_budget.hands_per_day.to_string()),
        ("--robot-games-kept-for", format!("{} seconds", d.robot_budget.kept_for.as_secs())),
        ("--chat-rate", d.chat.to_string()),
        ("--table-requests-rate", d.table_requests.to_string()),
        ("--chat-kept", d.chat_kept.to_string()),
        ("--idle-open-table", format!("{} seconds", d.idle_open_table.as_secs())),
        ("--idle-game", format!("{} seconds", d.idle_game.as_secs())),
        ("--login-rate", a.per_address.to_string()),
        ("--registrations-rate", a.registrations.to_string()),
        ("--exempt-address", "none".to_string()),
    ];
    for (flag, default) in &defaults {
        let row =
            limits.lines().find(|l| l.contains(&format!("`{flag}`"))).unwrap_or_else(|| panic!("no row for {flag}"));
        assert!(row.contains(&format!("| {default}")), "the row of {flag} does not give its default {default}: {row}");
    }
    let flags: BTreeSet<String> = mahjong_server::serve::LimitArgs::augment_args(clap::Command::new("serve"))
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    let documented: BTreeSet<String> = defaults.iter().map(|(f, _)| f.to_string()).collect();
    assert_eq!(flags, documented, "every limit's flag, and only those");
    let s = mahjong::auth::AccountSettings::default();
    assert_eq!((s.per_address_and_name.burst, s.per_name.burst), (5, 50), "the fixed login limits quoted");
}

/// The text of the `###` section with this heading, up to the next heading.
fn section(doc: &str, heading: &str) -> String {
    let start =
        doc.find(&format!("\n### {heading}\n")).unwrap_or_else(|| panic!("docs/protocol.md has no `### {heading}`"));
    let body = &doc[start + heading.len() + 6..];
    let end = body.find("\n## ").into_iter().chain(body.find("\n### ")).min().unwrap_or(body.len());
    body[..end].to_string()
}

/// The fields a query struct accepts, as serde lists them when it meets an
/// unknown one (the structs deny unknown fields).
fn query_fields<T: DeserializeOwned>() -> BTreeSet<String> {
    let Err(e) = serde_json::from_value::<T>(serde_json::json!({"\u{1}": ""})) else {
        panic!("the probe field parsed")
    };
    // "expected one of `a`, `b`, `c`", or "expected `a` or `b`" for two.
    let text = e.to_string();
    let list = text.split("expected").nth(1).unwrap_or_else(|| panic!("unexpected serde error: {text}"));
    list.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

/// The OpenAPI document, as committed (tests/it/openapi.rs keeps it equal to
/// the document the code generates, and to the routes the server serves).
fn openapi() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi/openapi.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// One operation of the OpenAPI document; panics when it is not there.
fn operation<'a>(api: &'a Value, method: &str, path: &str) -> &'a Value {
    let op = &api["paths"][path][method];
    assert!(op.is_object(), "openapi/openapi.json has no operation `{} {path}`", method.to_uppercase());
    op
}

/// The query parameters of an operation, by name.
fn query_parameters<'a>(api: &'a Value, method: &str, path: &str) -> Vec<(String, &'a Value)> {
    let params = operation(api, method, path)["parameters"].as_array().map(Vec::as_slice).unwrap_or_default();
    params
        .iter()
        .filter(|p| p["in"] == "query")
        .map(|p| (p["name"].as_str().unwrap_or_default().to_string(), p))
        .collect()
}

/// The REST error codes the OpenAPI document lists, each with the statuses
/// under which some operation answers it.
fn openapi_error_codes(api: &Value) -> std::collections::BTreeMap<String, BTreeSet<String>> {
    let mut codes: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    for item in api["paths"].as_object().expect("the document has paths").values() {
        for op in item.as_object().expect("a path item").values().filter(|op| op.get("responses").is_some()) {
            for (status, answer) in op["responses"].as_object().expect("responses") {
                let Some(name) = answer["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/responses/")) else {
                    continue;
                };
                let schema = &api["components"]["responses"][name]["content"]["application/json"]["schema"];
                let enumerated = schema["properties"]["error"]["properties"]["code"]["enum"].as_array();
                for code in enumerated.into_iter().flatten() {
                    let code = code.as_str().unwrap_or_else(|| panic!("{name}: a code that is not a string"));
                    codes.entry(code.to_string()).or_default().insert(status.clone());
                }
            }
        }
    }
    codes
}

/// Every REST error code is documented with its status: in the OpenAPI
/// document, under that status (and only that one) in the operations that
/// answer it; a code that no operation answers (the HTTP layer's, for a path
/// or a method no route takes) in this document's "Error answers", as
/// `` `STATUS` `code` ``. (The per-operation table of codes this document
/// kept by hand is now the OpenAPI document's.)
#[test]
fn every_rest_error_code_is_documented() {
    let api = openapi();
    let listed = openapi_error_codes(&api);
    let errors = section(&document(), "Error answers");
    for code in mahjong::http::ApiErrorCode::ALL {
        let (name, status) = (code.as_str(), code.status().as_u16().to_string());
        match listed.get(name) {
            Some(statuses) => assert_eq!(
                statuses,
                &BTreeSet::from([status.clone()]),
                "openapi/openapi.json answers `{name}` under other statuses than its {status}"
            ),
            None => assert!(
                errors.contains(&format!("`{status}` `{name}`")),
                "`{name}` is in no operation of openapi/openapi.json, and docs/protocol.md's \"Error answers\" does \
                 not name it as `{status}` `{name}`"
            ),
        }
    }
    let known = rest_error_codes();
    let unknown: Vec<&String> = listed.keys().filter(|c| !known.contains(&c.as_str())).collect();
    assert!(unknown.is_empty(), "openapi/openapi.json lists codes the server does not have: {unknown:?}");
}

/// Where the REST API is described: the document says so, with the paths
/// the server serves it at.
#[test]
fn the_rest_api_section_points_at_the_openapi_document() {
    let doc = document();
    let start = doc.find("\n## The REST API\n").expect("docs/protocol.md has no `## The REST API`");
    let body = &doc[start + 1..];
    let rest = &body[..body[3..].find("\n## ").map_or(body.len(), |e| e + 3)];
    for needle in [
        mahjong::http::openapi::DOCS_PATH,
        mahjong::http::openapi::DOCUMENT_PATH,
        "openapi/openapi.json",
        "mahjong-server openapi",
    ] {
        assert!(rest.contains(needle), "docs/protocol.md's `## The REST API` does not name {needle}");
    }
}

/// A paged operation's `limit`: at most the code's maximum, and its
/// description gives the code's default.
fn assert_paged_limit(api: &Value, path: &str) {
    let params = query_parameters(api, "get", path);
    let (_, limit) = params.iter().find(|(n, _)| n == "limit").unwrap_or_else(|| panic!("GET {path} has no `limit`"));
    assert_eq!(limit["schema"]["maximum"].as_i64(), Some(MAX_LIMIT), "GET {path}: `limit`'s maximum");
    let description = limit["description"].as_str().unwrap_or_default();
    assert!(
        description.contains(&format!("default {DEFAULT_LIMIT}")),
        "GET {path}: `limit` does not say `default {DEFAULT_LIMIT}`: {description}"
    );
}

/// The score queries are in the OpenAPI document, each taking exactly the
/// query parameters the code reads (the document's own tables of
/// parameters, kept by hand, are gone), and this document's "Score queries"
/// gives the paging that holds across them.
#[test]
fn every_score_query_is_described_with_its_parameters() {
    let api = openapi();
    let paths = [
        "/api/v1/games",
        "/api/v1/games/{id}",
        "/api/v1/games/{id}/hands",
        "/api/v1/games/{id}/hands/{n}",
        "/api/v1/games/{id}/hands/{n}/events",
        "/api/v1/standings",
    ];
    for path in paths {
        operation(&api, "get", path);
    }
    for (path, fields) in [
        ("/api/v1/games", query_fields::<GamesQuery>()),
        ("/api/v1/games/{id}/hands", query_fields::<PageQuery>()),
        ("/api/v1/standings", query_fields::<StandingsQuery>()),
    ] {
        let described: BTreeSet<String> = query_parameters(&api, "get", path).into_iter().map(|(n, _)| n).collect();
        assert_eq!(described, fields, "GET {path}: the query parameters of openapi/openapi.json are not the code's");
        assert_paged_limit(&api, path);
    }
    let paging = section(&document(), "Score queries");
    let limits = format!("default {DEFAULT_LIMIT}, at most {MAX_LIMIT}");
    assert!(paging.contains(&limits), "docs/protocol.md: the score queries' paging does not say `{limits}`");
}

/// The option management operations are in the OpenAPI document, the audit
/// log with exactly the query parameters the code reads.
#[test]
fn every_option_management_operation_is_described_with_its_parameters() {
    let api = openapi();
    let routes = [
        ("get", "/api/v1/presets"),
        ("get", "/api/v1/presets/{name}"),
        ("get", "/api/v1/admin/defaults"),
        ("put", "/api/v1/admin/defaults"),
        ("delete", "/api/v1/admin/defaults"),
        ("post", "/api/v1/admin/presets"),
        ("put", "/api/v1/admin/presets/{name}"),
        ("delete", "/api/v1/admin/presets/{name}"),
        ("get", "/api/v1/admin/audit"),
    ];
    for (method, path) in routes {
        operation(&api, method, path);
    }
    let audit = "/api/v1/admin/audit";
    let described: BTreeSet<String> = query_parameters(&api, "get", audit).into_iter().map(|(n, _)| n).collect();
    assert_eq!(described, query_fields::<AuditQuery>(), "GET {audit}: the query parameters are not the code's");
    assert_paged_limit(&api, audit);
}
