//! Game files: a game exported as one JSON document, and loaded back as a
//! new game.
//!
//! The document holds what the store holds of a game (its row, the table's
//! settings, the seats, every input and every event with its audience) but
//! never a seat token or its hash: a file can be handed around, and a game
//! loaded from one gets fresh tokens.
//!
//! A file is never trusted. Loading replays its inputs through the engine and
//! requires the file's game events to be exactly what the engine emits for
//! them (same events, same audiences, at the sequence numbers the inputs
//! give), and its row (scores, hands, state) to be what the replay ends
//! with; the hands are rebuilt from the events by the same projector live
//! tables use. Anything else is refused with the reason, and nothing is
//! written. See docs/protocol.md, "Game files".

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::projection::HandProjector;
use super::records::{
    Batch, EventRow, GameRow, HandRow, Input, InputRow, SeatChange, SeatRow, audience_columns, audience_from_columns,
};
use super::{Store, StoreError};
use crate::bots::strategy::Strategy;
use crate::protocol::ws::{ServerMessage, StreamEvent, TableEvent, TableState};
use crate::rules::command::PlayerId;
use crate::rules::event::{Audience, Event};
use crate::table::rebuild::Rebuild;
use crate::table::{SeatGrant, TableSettings};

/// The `format` of a game file.
pub const FORMAT: &str = "mahjong-server game";

/// The version of the format this server writes and reads.
pub const VERSION: u64 = 1;

/// A game file (see the module's documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u64,
    /// The game's row.
    pub game: FileGame,
    /// The table's settings when it opened (later option changes are inputs).
    pub settings: Value,
    /// Who sat where.
    pub seats: Vec<FileSeat>,
    /// The inputs that rebuild the game, in order.
    pub inputs: Vec<FileInput>,
    /// Every event of the table's stream, in order.
    pub events: Vec<FileEvent>,
}

/// A game file's game row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileGame {
    /// The game's id where it was exported (a loaded game gets a new one).
    pub id: String,
    /// The table's name.
    pub name: String,
    /// The preset the options started from.
    pub preset: String,
    /// Where the game came from: `live`, `loaded` or `mj-server`.
    pub source: String,
    /// `open`, `playing` or `over`.
    pub state: String,
    /// When the table opened (µs since the epoch).
    pub created_us: i64,
    /// When the game ended.
    pub finished_us: Option<i64>,
    /// Hands dealt.
    pub hands: i64,
    /// Cumulative scores by player id.
    pub scores: [i64; 4],
    /// The manager's seat.
    pub manager: Option<i64>,
    /// The stream's last sequence number.
    pub last_seq: i64,
    /// The table's random stream position, in decimal: a 128-bit number is
    /// beyond what JSON readers keep exactly.
    pub rng_pos: String,
}

/// A seat in a game file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSeat {
    /// 0-3 (the player id).
    pub seat: i64,
    /// The name shown.
    pub name: String,
    /// A robot's strategy; `null` for a person.
    pub robot: Option<Strategy>,
}

/// An input in a game file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileInput {
    /// The stream's last sequence number before the input's events.
    pub seq: i64,
    /// The input.
    #[serde(flatten)]
    pub input: Input,
}

/// An event in a game file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEvent {
    /// Its sequence number (1, 2, ... in order).
    pub seq: i64,
    /// When it was sent (µs since the epoch).
    pub at_us: i64,
    /// The hand it belongs to (0: before the first deal).
    pub hand: i64,
    /// `everyone`, `only` or `all_but`.
    pub audience: String,
    /// The player of `only` and `all_but`.
    pub audience_player: Option<i64>,
    /// The message as sent: a `ServerMessage` of type `event`.
    pub body: Value,
}

/// Why a game file (or an mj-server log) was refused. Nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// The text is not JSON (or not UTF-8).
    #[error("the game file is not JSON: {0}")]
    Json(String),
    /// JSON, but not a game file of this server.
    #[error("not a game file: {0}")]
    Format(String),
    /// A game file of a version this server does not read.
    #[error("game file version {0} is not supported: this server reads version {VERSION}")]
    Version(String),
    /// A game file whose content is malformed or does not add up.
    #[error("the game file is refused: {0}")]
    Invalid(String),
    /// An mj-server log that does not replay.
    #[error("the mj-server log is refused: {0}")]
    Log(String),
}

fn invalid(why: impl Into<String>) -> ArchiveError {
    ArchiveError::Invalid(why.into())
}

/// Reads a game file: the format and version are checked first, so that a
/// file of another version says so rather than failing on some field.
pub fn parse(text: &str) -> Result<GameFile, ArchiveError> {
    let value: Value = serde_json::from_str(text).map_err(|e| ArchiveError::Json(e.to_string()))?;
    let Some(object) = value.as_object() else {
        return Err(ArchiveError::Format("the document is not a JSON object".into()));
    };
    match object.get("format") {
        Some(Value::String(f)) if f == FORMAT => {}
        Some(other) => return Err(ArchiveError::Format(format!("its format is {other}, not \"{FORMAT}\""))),
        None => return Err(ArchiveError::Format(format!("it has no \"format\": \"{FORMAT}\""))),
    }
    match object.get("version") {
        Some(v) if v.as_u64() == Some(VERSION) => {}
        Some(other) => return Err(ArchiveError::Version(other.to_string())),
        None => return Err(ArchiveError::Version("(none)".into())),
    }
    serde_json::from_value(value).map_err(|e| invalid(e.to_string()))
}

/// Where a loaded game comes from: a game file, or an mj-server log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Our own game file (stored with source `loaded`).
    GameFile,
    /// A log of the original mj-server (stored with source `mj-server`).
    MjServer,
}

impl Source {
    /// The game's `source` in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::GameFile => "loaded",
            Source::MjServer => "mj-server",
        }
    }
}

/// Reads and checks either kind of file, told apart by how it begins: a
/// game file is a JSON object, an mj-server log a record `<cnxN ...` or
/// `>cnxN ...`. An mj-server game is stamped `now_us`.
pub fn read_any(text: &str, now_us: i64) -> Result<(Checked, Source), ArchiveError> {
    let start = text.trim_start_matches('\u{feff}').trim_start();
    if start.starts_with('{') {
        Ok((check(&parse(text)?)?, Source::GameFile))
    } else if start.starts_with("<cnx") || start.starts_with(">cnx") {
        Ok((check(&super::mj_server::game_file(text, now_us)?)?, Source::MjServer))
    } else {
        Err(ArchiveError::Format(
            "neither a game file (a JSON object) nor an mj-server log (<cnxN and >cnxN records)".into(),
        ))
    }
}

/// A game file that has been checked, as the rows to store.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The game row (its `source` is set when stored).
    pub game: GameRow,
    /// The settings, as stored.
    pub settings: String,
    /// The seats, without tokens.
    pub seats: Vec<SeatRow>,
    /// The inputs.
    pub inputs: Vec<InputRow>,
    /// The events, each body as the server writes it.
    pub events: Vec<EventRow>,
    /// The finished hands, rebuilt from the events.
    pub hands: Vec<HandRow>,
}

impl Checked {
    /// True when the game is over (it is stored, not played on).
    pub fn is_over(&self) -> bool {
        self.game.state == TableState::Over.as_str()
    }
}

/// The longest a loaded table may wait before a robot stands in for an absent
/// player: a day (timers beyond what a clock can add are refused).
const MAX_TAKEOVER_SECS: u64 = 24 * 3600;

/// The most messages a loaded table's subscribers may queue (as the server's own).
const MAX_SUBSCRIBER_QUEUE: usize = 1 << 16;

/// Checks a game file thoroughly (see the module's documentation).
pub fn check(file: &GameFile) -> Result<Checked, ArchiveError> {
    let settings = check_settings(&file.settings)?;
    let g = &file.game;
    let state = TableState::from_name(&g.state).ok_or_else(|| invalid(format!("unknown game state '{}'", g.state)))?;
    let rng_pos: u128 =
        g.rng_pos.parse().map_err(|_| invalid(format!("rng_pos '{}' is not a whole number", g.rng_pos)))?;
    let seats = check_seats(&file.seats, state)?;
    if let Some(m) = g.manager
        && !seats.iter().any(|s| s.seat == m && s.robot.is_none())
    {
        return Err(invalid(format!("the manager's seat {m} is not a person's seat")));
    }
    if state == TableState::Over && g.finished_us.is_none() {
        return Err(invalid("a game that is over has no finished_us"));
    }
    let events = check_events(&file.events, g.last_seq)?;
    let replay = replay_inputs(&settings, &file.inputs, &events)?;

    // The row must be what the replay ends with.
    let (scores, hands) = replay.game.as_ref().map_or(([0; 4], 0), |game| (game.scores(), game.hands_started()));
    let over = replay.game.as_ref().is_some_and(|game| game.is_over());
    let expected_state = match (&replay.game, over) {
        (None, _) => TableState::Open,
        (Some(_), false) => TableState::Playing,
        (Some(_), true) => TableState::Over,
    };
    if state != expected_state {
        return Err(invalid(format!(
            "the game is said to be {}; replaying the inputs leaves it {}",
            state.as_str(),
            expected_state.as_str()
        )));
    }
    if scores != g.scores || i64::from(hands) != g.hands {
        return Err(invalid(format!(
            "the game says scores {:?} after {} hands; replaying the inputs gives {scores:?} after {hands}",
            g.scores, g.hands
        )));
    }

    // The hands, as a live table would have projected them.
    let names =
        std::array::from_fn(|p| seats.iter().find(|s| s.seat == p as i64).map(|s| s.name.clone()).unwrap_or_default());
    let mut projector = HandProjector::new(names);
    let mut hand_rows = Vec::new();
    for e in &events {
        if let Some(event) = &e.game_event
            && let Some(row) = projector.observe(e.row.seq, e.row.at_us, event)
        {
            hand_rows.push(row);
        }
    }
    // A seat's penalties are those it was told of.
    let mut penalties = [0i64; 4];
    for (seat, points) in events.iter().filter_map(|e| e.penalty) {
        penalties[usize::from(seat)] = penalties[usize::from(seat)].saturating_add(points);
    }
    let seats = seats.into_iter().map(|s| SeatRow { penalty: penalties[s.seat as usize], ..s }).collect();
    Ok(Checked {
        game: GameRow {
            name: settings.name.clone(),
            preset: settings.preset.clone(),
            source: g.source.clone(),
            state: state.as_str().to_string(),
            created_us: g.created_us,
            finished_us: g.finished_us,
            hands: g.hands,
            scores: g.scores,
            manager: g.manager,
            last_seq: g.last_seq,
            rng_pos,
        },
        // Our own type always serialises.
        settings: serde_json::to_string(&settings).unwrap_or_default(),
        seats,
        inputs: replay.inputs,
        events: events.into_iter().map(|e| e.row).collect(),
        hands: hand_rows,
    })
}

/// The settings must read, and stay within what the server itself allows.
fn check_settings(value: &Value) -> Result<TableSettings, ArchiveError> {
    let settings: TableSettings =
        serde_json::from_value(value.clone()).map_err(|e| invalid(format!("settings: {e}")))?;
    // Combinations of options a table would refuse.
    settings.options.check().map_err(|e| invalid(format!("settings: {e}")))?;
    let name = settings.name.trim();
    if name.is_empty() || settings.name.chars().count() > 80 {
        return Err(invalid("settings: a table name has 1 to 80 characters"));
    }
    if settings.pause_deciseconds > 50 {
        return Err(invalid("settings: pause_deciseconds is at most 50"));
    }
    if settings.robot_takeover.is_some_and(|d| d.as_secs() > MAX_TAKEOVER_SECS) {
        return Err(invalid(format!("settings: robot_takeover is at most {MAX_TAKEOVER_SECS} seconds")));
    }
    if settings.subscriber_queue > MAX_SUBSCRIBER_QUEUE {
        return Err(invalid(format!("settings: subscriber_queue is at most {MAX_SUBSCRIBER_QUEUE}")));
    }
    if settings.disconnect_penalties.iter().any(|p| !(0..=100_000).contains(p)) {
        return Err(invalid("settings: disconnect penalties are 0 to 100000"));
    }
    Ok(settings)
}

/// Seats 0-3, each once, named as a player may be named; all four once the
/// game has started.
fn check_seats(seats: &[FileSeat], state: TableState) -> Result<Vec<SeatRow>, ArchiveError> {
    let mut taken = [false; 4];
    let mut rows = Vec::new();
    for s in seats {
        let seat =
            usize::try_from(s.seat).ok().filter(|&i| i < 4).ok_or_else(|| invalid(format!("seat {}", s.seat)))?;
        if std::mem::replace(&mut taken[seat], true) {
            return Err(invalid(format!("seat {seat} is listed twice")));
        }
        let name = s.name.trim();
        if name.is_empty() || name.chars().count() > 40 || name != s.name {
            return Err(invalid(format!("seat {seat}: a name has 1 to 40 characters, without spaces around")));
        }
        rows.push(SeatRow {
            seat: s.seat,
            name: s.name.clone(),
            // Our own type always serialises.
            robot: s.robot.map(|r| serde_json::to_string(&r).unwrap_or_default()),
            token_sha256: None,
            pause_request: 0,
            penalty: 0,
        });
    }
    if state != TableState::Open && taken.contains(&false) {
        return Err(invalid("a game that has started has four seats"));
    }
    rows.sort_by_key(|s| s.seat);
    Ok(rows)
}

/// An event of the file, read.
struct ReadEvent {
    row: EventRow,
    /// The game event it carries, if it is one.
    game_event: Option<Event>,
    /// A penalty told to a player: its seat and points.
    penalty: Option<(u8, i64)>,
}

/// Every event must be a numbered `event` message agreeing with its row,
/// numbered 1, 2, ... up to the game's last number, and belonging to the hand
/// dealt last before it.
fn check_events(events: &[FileEvent], last_seq: i64) -> Result<Vec<ReadEvent>, ArchiveError> {
    if usize::try_from(last_seq).ok() != Some(events.len()) {
        return Err(invalid(format!("last_seq is {last_seq} but the file has {} events", events.len())));
    }
    let mut hands = 0;
    let mut out = Vec::with_capacity(events.len());
    for (i, e) in events.iter().enumerate() {
        let at = |why: String| invalid(format!("event {}: {why}", i + 1));
        if e.seq != i as i64 + 1 {
            return Err(at(format!("numbered {}: events are numbered 1, 2, ... in order", e.seq)));
        }
        let audience = audience_from_columns(&e.audience, e.audience_player)
            .ok_or_else(|| at(format!("audience '{}' {:?}", e.audience, e.audience_player)))?;
        let message: ServerMessage =
            serde_json::from_value(e.body.clone()).map_err(|err| at(format!("body: {err}")))?;
        let ServerMessage::Event { seq, at_us, event } = &message else {
            return Err(at("the body is not an event message".into()));
        };
        if *seq as i64 != e.seq || *at_us as i64 != e.at_us {
            return Err(at(format!("the body says seq {seq} at {at_us}; the row says seq {} at {}", e.seq, e.at_us)));
        }
        let (game_event, penalty) = match event {
            StreamEvent::Game(ev) => (Some(ev.clone()), None),
            StreamEvent::Table(TableEvent::Penalty { seat, points })
                if *seat < 4 && audience == Audience::Only(PlayerId(*seat)) =>
            {
                (None, Some((*seat, *points)))
            }
            StreamEvent::Table(TableEvent::Penalty { .. }) => {
                return Err(at("a penalty is told only to its player, one of seats 0-3".into()));
            }
            StreamEvent::Table(_) => (None, None),
        };
        if matches!(game_event, Some(Event::HandStarted { .. })) {
            hands += 1;
        }
        if e.hand != hands {
            return Err(at(format!("it is in hand {}, but {hands} hands have been dealt", e.hand)));
        }
        // Stored as the server writes it, whatever the file's spacing.
        let body = serde_json::to_string(&message).unwrap_or_default();
        let row = EventRow { seq: e.seq, at_us: e.at_us, hand: e.hand, audience, body };
        out.push(ReadEvent { row, game_event, penalty });
    }
    Ok(out)
}

/// The inputs replayed.
struct Replayed {
    game: Option<crate::rules::game::Game>,
    inputs: Vec<InputRow>,
}

/// Replays the inputs; every game event of the file must be emitted by the
/// engine, in order, at the sequence numbers following its input's.
fn replay_inputs(
    settings: &TableSettings,
    inputs: &[FileInput],
    events: &[ReadEvent],
) -> Result<Replayed, ArchiveError> {
    let last_seq = events.len() as i64;
    let mut game_events = events.iter().filter(|e| e.game_event.is_some()).peekable();
    let mut rebuild = Rebuild::new(settings);
    let mut rows = Vec::with_capacity(inputs.len());
    // The stream position the next input may not come before.
    let mut position = 0;
    for (i, input) in inputs.iter().enumerate() {
        let n = i as i64 + 1;
        let at = |why: String| invalid(format!("input {n}: {why}"));
        if input.seq < position || input.seq > last_seq {
            return Err(at(format!("its stream position {} is out of order", input.seq)));
        }
        let emitted = rebuild.apply(&input.input).map_err(at)?;
        position = input.seq;
        for emitted in emitted {
            position += 1;
            let Some(read) = game_events.next() else {
                return Err(at(format!("the engine emits {:?}, which the file lacks", event_type(&emitted.event))));
            };
            // Compared as sent: some of an event's working detail is never
            // written (a score's realised dangers), so the text is the event.
            let sent = ServerMessage::Event {
                seq: position as u64,
                at_us: read.row.at_us as u64,
                event: StreamEvent::Game(emitted.event.clone()),
            };
            let sent = serde_json::to_string(&sent).unwrap_or_default();
            let ours = event_type(&emitted.event);
            if read.row.seq != position {
                return Err(at(format!(
                    "the engine emits {ours} as event {position}; the file's next game event is event {}",
                    read.row.seq
                )));
            }
            if read.row.audience != emitted.to {
                return Err(at(format!(
                    "event {position}: the engine emits {ours} for {}; the file has it for {}",
                    audience_text(emitted.to),
                    audience_text(read.row.audience)
                )));
            }
            if sent != read.row.body {
                return Err(at(format!(
                    "event {position}: the file's event is not the engine's {ours}: the file has {}, the engine {}",
                    around_difference(&read.row.body, &sent),
                    around_difference(&sent, &read.row.body)
                )));
            }
        }
        rows.push(InputRow { n, seq: input.seq, input: input.input.clone() });
    }
    if let Some(extra) = game_events.next() {
        return Err(invalid(format!("event {}: no input makes the engine emit it", extra.row.seq)));
    }
    Ok(Replayed { game: rebuild.game, inputs: rows })
}

/// An event's name as the protocol writes it (its serde tag).
fn event_type(event: &Event) -> String {
    serde_json::to_value(event)
        .ok()
        .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| "an event".into())
}

/// Where `text` stops agreeing with `other`, with a little context: two
/// events' texts are long and mostly alike.
fn around_difference(text: &str, other: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let same = chars.iter().zip(other.chars()).take_while(|(a, b)| **a == *b).count();
    let start = same.saturating_sub(40);
    let end = (same + 60).min(chars.len());
    let mut out: String = chars[start..end].iter().collect();
    if start > 0 {
        out.insert_str(0, "...");
    }
    if end < chars.len() {
        out.push_str("...");
    }
    out
}

fn audience_text(audience: Audience) -> String {
    match audience {
        Audience::Everyone => "everyone".into(),
        Audience::Only(p) => format!("player {} only", p.0),
        Audience::AllBut(p) => format!("all but player {}", p.0),
    }
}

/// What became of a loaded game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Imported {
    /// The new game's id (its table's id too, when it is played on).
    pub id: String,
    /// `open`, `playing` or `over`.
    pub state: String,
    /// Hands dealt.
    pub hands: i64,
    /// A game not over: each person's seat with its new token (hand them
    /// to the players). Empty for a game that is over.
    pub seats: Vec<SeatGrant>,
}

impl Store {
    /// A stored game as a game file; `None` if there is no such game.
    pub async fn export_game(&self, id: &str) -> Result<Option<GameFile>, StoreError> {
        let Some(saved) = self.load_game(id, 0).await? else { return Ok(None) };
        let corrupt = |why: String| StoreError::Corrupt { game: id.to_string(), why };
        let g = saved.game;
        let seats = saved
            .seats
            .iter()
            .map(|s| {
                let robot = s.robot.as_deref().map(serde_json::from_str).transpose();
                let robot = robot.map_err(|e| corrupt(format!("seat {}: {e}", s.seat)))?;
                Ok(FileSeat { seat: s.seat, name: s.name.clone(), robot })
            })
            .collect::<Result<_, StoreError>>()?;
        let events = saved
            .events
            .iter()
            .map(|e| {
                let body = serde_json::from_str(&e.body).map_err(|err| corrupt(format!("event {}: {err}", e.seq)))?;
                let (audience, audience_player) = audience_columns(e.audience);
                Ok(FileEvent {
                    seq: e.seq,
                    at_us: e.at_us,
                    hand: e.hand,
                    audience: audience.into(),
                    audience_player,
                    body,
                })
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(Some(GameFile {
            format: FORMAT.into(),
            version: VERSION,
            game: FileGame {
                id: saved.id,
                name: g.name,
                preset: g.preset,
                source: g.source,
                state: g.state,
                created_us: g.created_us,
                finished_us: g.finished_us,
                hands: g.hands,
                scores: g.scores,
                manager: g.manager,
                last_seq: g.last_seq,
                rng_pos: g.rng_pos.to_string(),
            },
            settings: serde_json::from_str(&saved.settings).map_err(|e| corrupt(format!("settings: {e}")))?,
            seats,
            inputs: saved.inputs.into_iter().map(|r| FileInput { seq: r.seq, input: r.input }).collect(),
            events,
        }))
    }

    /// Stores a checked game as a new game from `source` (`loaded`,
    /// `mj-server`), in one transaction. A game not over gets a fresh seat
    /// token for every person (only its hash is stored), returned here; the
    /// caller starts its table ([`crate::table::Lobby::load`]) or leaves it
    /// to be resumed when the server starts.
    pub async fn import_game(&self, checked: Checked, source: Source) -> Result<Imported, StoreError> {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let over = checked.is_over();
        let mut grants = Vec::new();
        let mut seats = Vec::new();
        for mut seat in checked.seats {
            if !over && seat.robot.is_none() {
                let token = super::new_seat_token();
                seat.token_sha256 = Some(super::token_sha256(&token));
                grants.push(SeatGrant { seat: seat.seat as u8, token });
            }
            seats.push(SeatChange::Set(seat));
        }
        let game = GameRow { source: source.as_str().to_string(), ..checked.game };
        let imported = Imported { id: id.clone(), state: game.state.clone(), hands: game.hands, seats: grants };
        let mut batch = Batch::new(id, game);
        batch.settings = Some(checked.settings);
        batch.seats = seats;
        batch.inputs = checked.inputs;
        batch.events = checked.events;
        batch.hands = checked.hands;
        self.write(batch).await?;
        Ok(imported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_and_version_are_read_before_anything_else() {
        assert!(matches!(parse("{\"format\":"), Err(ArchiveError::Json(_))));
        assert!(matches!(parse("[1, 2]"), Err(ArchiveError::Format(_))));
        assert!(matches!(parse(r#"{"format": "zip", "version": 1}"#), Err(ArchiveError::Format(_))));
        let later = parse(r#"{"format": "mahjong-server game", "version": 2, "game": 7}"#).unwrap_err();
        assert_eq!(later.to_string(), "game file version 2 is not supported: this server reads version 1");
        let broken = parse(r#"{"format": "mahjong-server game", "version": 1, "game": 7}"#).unwrap_err();
        assert!(matches!(broken, ArchiveError::Invalid(_)), "{broken}");
    }

    #[test]
    fn a_difference_is_shown_where_it_starts() {
        let a = format!("{}X{}", "a".repeat(100), "b".repeat(100));
        let b = format!("{}Y{}", "a".repeat(100), "b".repeat(100));
        let shown = around_difference(&a, &b);
        assert_eq!(shown, format!("...{}X{}...", "a".repeat(40), "b".repeat(59)));
        assert_eq!(around_difference("short", "shirt"), "short");
    }

    #[test]
    fn settings_beyond_the_servers_own_limits_are_refused() {
        let mut settings = serde_json::to_value(TableSettings::new("t", Default::default(), 1)).unwrap();
        assert!(check_settings(&settings).is_ok());
        settings["subscriber_queue"] = serde_json::json!(u64::MAX);
        assert!(check_settings(&settings).unwrap_err().to_string().contains("subscriber_queue"));
    }
}
