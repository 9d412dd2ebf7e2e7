//! Checking a game file: a file is never trusted.
//!
//! Its inputs are replayed through the engine ([`crate::rules::rebuild`], as
//! a restarted table replays its stored inputs), and the file's game events
//! must be exactly what the engine emits for them (same events, same
//! audiences, at the sequence numbers the inputs give), and its row (scores,
//! hands, state) what the replay ends with; the hands are rebuilt from the
//! events by the same projector live tables use. Anything else is refused
//! with the reason. What passes is the game's rows as the store takes them,
//! with the replayed game a table goes on from.

use serde_json::Value;

use super::format::{ArchiveError, FileEvent, FileInput, FileSeat, GameFile, invalid};
use crate::protocol::ws::{ServerMessage, StreamEvent, TableEvent, TableState};
use crate::rules::command::PlayerId;
use crate::rules::event::{Audience, Event};
use crate::rules::rebuild::Rebuild;
use crate::store::records::audience_from_columns;
use crate::store::{EventRow, GameRow, GameSource, HandProjector, HandRow, InputRow, SeatRow};
use crate::table::TableSettings;
use crate::text;

/// A game file that has been checked: the rows to store, and the game its
/// inputs rebuild.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The game row (its `source` is set when stored).
    pub game: GameRow,
    /// The table's settings when it opened.
    pub settings: TableSettings,
    /// The seats, without tokens.
    pub seats: Vec<SeatRow>,
    /// The inputs.
    pub inputs: Vec<InputRow>,
    /// The events, each body as the server writes it.
    pub events: Vec<EventRow>,
    /// The finished hands, rebuilt from the events.
    pub hands: Vec<HandRow>,
    /// The inputs replayed: the game as the file leaves it (and the options
    /// in force), which a loaded table goes on from.
    pub rebuild: Rebuild,
}

impl Checked {
    /// True when the game is over (it is stored, not played on).
    pub fn is_over(&self) -> bool {
        self.game.state == TableState::Over
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
    let source =
        GameSource::from_name(&g.source).ok_or_else(|| invalid(format!("unknown game source '{}'", g.source)))?;
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
    let mut events = check_events(&file.events, g.last_seq)?;
    let replay = replay_inputs(&settings, &file.inputs, &mut events)?;

    // The row must be what the replay ends with.
    let game = replay.rebuild.game.as_ref();
    let (scores, hands) = game.map_or(([0; 4], 0), |game| (game.scores(), game.hands_started()));
    let over = game.is_some_and(|game| game.is_over());
    let expected_state = match (game, over) {
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
            source,
            state,
            created_us: g.created_us,
            finished_us: g.finished_us,
            hands: g.hands,
            scores: g.scores,
            manager: g.manager,
            last_seq: g.last_seq,
            rng_pos,
        },
        settings,
        seats,
        inputs: replay.inputs,
        events: events.into_iter().map(|e| e.row).collect(),
        hands: hand_rows,
        rebuild: replay.rebuild,
    })
}

/// The settings must read, and stay within what the server itself allows.
fn check_settings(value: &Value) -> Result<TableSettings, ArchiveError> {
    let settings: TableSettings =
        serde_json::from_value(value.clone()).map_err(|e| invalid(format!("settings: {e}")))?;
    // Combinations of options a table would refuse.
    settings.options.check().map_err(|e| invalid(format!("settings: {e}")))?;
    // A table's name as a table may be named, as it would be shown.
    match text::table_name(&settings.name) {
        Ok(name) if name == settings.name => {}
        Ok(_) => return Err(invalid("settings: a table's name has no blank or invisible characters around it")),
        Err(e) => return Err(invalid(format!("settings: {e}"))),
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
        match text::player_name(&s.name) {
            Ok(name) if name == s.name => {}
            Ok(_) => {
                return Err(invalid(format!("seat {seat}: a name has no blank or invisible characters around it")));
            }
            Err(e) => return Err(invalid(format!("seat {seat}: {e}"))),
        }
        rows.push(SeatRow {
            seat: s.seat,
            name: s.name.clone(),
            // Our own type always serialises.
            robot: s.robot.map(|r| serde_json::to_string(&r).unwrap_or_default()),
            token_sha256: None,
            user_id: None,
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
    /// The body as the file has it.
    sent: Value,
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
        out.push(ReadEvent { row, sent: e.body.clone(), game_event, penalty });
    }
    Ok(out)
}

/// The inputs replayed.
struct Replayed {
    rebuild: Rebuild,
    inputs: Vec<InputRow>,
}

/// Replays the inputs; every game event of the file must be emitted by the
/// engine, in order, at the sequence numbers following its input's, and
/// agree with it on every field the file gives (a file written before a
/// field was added lacks it). The game events are then stored as the
/// engine sends them.
fn replay_inputs(
    settings: &TableSettings,
    inputs: &[FileInput],
    events: &mut [ReadEvent],
) -> Result<Replayed, ArchiveError> {
    let last_seq = events.len() as i64;
    let mut game_events = events.iter_mut().filter(|e| e.game_event.is_some()).peekable();
    let mut rebuild = Rebuild::new(settings.options.clone(), settings.no_special_scores);
    let mut rows = Vec::with_capacity(inputs.len());
    // The stream position the next input may not come before.
    let mut position = 0;
    for (i, input) in inputs.iter().enumerate() {
        let n = i as i64 + 1;
        let at = |why: String| invalid(format!("input {n}: {why}"));
        if input.seq < position || input.seq > last_seq {
            return Err(at(format!("its stream position {} is out of order", input.seq)));
        }
        let emitted = rebuild.apply(&input.input).map_err(|e| at(e.to_string()))?;
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
            // Compared as values (the file's spacing and order are its own),
            // kept as the text the server sends.
            let sent_value = serde_json::to_value(&sent).unwrap_or_default();
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
            if !agrees(&read.sent, &sent_value) {
                let theirs = read.sent.to_string();
                return Err(at(format!(
                    "event {position}: the file's event is not the engine's {ours}: the file has {}, the engine {}",
                    around_difference(&theirs, &sent),
                    around_difference(&sent, &theirs)
                )));
            }
            read.row.body = sent;
        }
        rows.push(InputRow { n, seq: input.seq, input: input.input.clone() });
    }
    if let Some(extra) = game_events.next() {
        return Err(invalid(format!("event {}: no input makes the engine emit it", extra.row.seq)));
    }
    Ok(Replayed { rebuild, inputs: rows })
}

/// True if every field the file gives (`file`) is the engine's (`ours`),
/// recursively; lists must be as long. Fields the engine adds are fine:
/// they were added to the protocol after the file was written.
fn agrees(file: &Value, ours: &Value) -> bool {
    match (file, ours) {
        (Value::Object(f), Value::Object(o)) => f.iter().all(|(k, v)| o.get(k).is_some_and(|w| agrees(v, w))),
        (Value::Array(f), Value::Array(o)) => f.len() == o.len() && f.iter().zip(o).all(|(v, w)| agrees(v, w)),
        _ => file == ours,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
