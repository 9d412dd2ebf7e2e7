//! Game logs recorded by the original mj-server, imported as finished games.
//!
//! The log is replayed through our engine exactly as the conformance replay
//! does ([`crate::replay`]), capturing every command applied and every event
//! emitted; those become the game's inputs and its event stream, as if the
//! game had been played at one of our tables. The result is then written out
//! as a game file and goes through the same checks as any loaded file
//! ([`super::check()`]), so an imported log is stored exactly as a
//! game played here would be: browsable hand by hand, and replayable from
//! its inputs. docs/rules-notes.md, "Importing mj-server logs", lists what
//! the log does not say and what is assumed instead.

use serde_json::Value;

use super::format::{ArchiveError, FORMAT, FileEvent, FileGame, FileInput, FileSeat, GameFile, VERSION};
use crate::protocol::text;
use crate::protocol::ws::{ServerMessage, StreamEvent, TableEvent, TableState};
use crate::replay::{Capture, replay_log_captured};
use crate::rules::command::Command;
use crate::rules::event::{Audience, Emitted, Event};
use crate::rules::rebuild::Input;
use crate::store::records::audience_columns;
use crate::table::TableSettings;

/// The name of a table imported from an mj-server log.
pub const TABLE_NAME: &str = "mj-server game";

/// Replays an mj-server log and writes the game it records as a game file
/// (a finished game whose events are all stamped `at_us`: the log has no
/// times).
pub fn game_file(log: &str, at_us: i64) -> Result<GameFile, ArchiveError> {
    let (_, capture) = replay_log_captured(log).map_err(|e| ArchiveError::Log(e.to_string()))?;
    Ok(file_from_capture(capture, at_us))
}

fn file_from_capture(capture: Capture, at_us: i64) -> GameFile {
    let Capture { names, options, mut steps, mut game } = capture;
    // A log that stops between hands before the last round ends the game there.
    if !game.is_over()
        && !game.hand_in_progress()
        && let Ok(emitted) = game.apply(Command::EndGame)
    {
        steps.push((Input::Engine { command: Command::EndGame }, emitted));
    }
    let names = names.map(|n| player_name(&n));
    let mut stream = Stream { at_us, events: Vec::new(), hands: 0 };
    // The stream opens as a table's does: the players sit, the game starts.
    for (seat, name) in (0u8..).zip(&names) {
        stream.push(
            Audience::Everyone,
            StreamEvent::Table(TableEvent::SeatTaken { seat, name: name.clone(), robot: None }),
        );
    }
    let mut inputs = Vec::with_capacity(steps.len());
    for (input, emitted) in steps {
        inputs.push(FileInput { seq: stream.events.len() as i64, input: input.clone() });
        if input == Input::StartGame {
            stream.push(Audience::Everyone, StreamEvent::Table(TableEvent::GameStarted));
        }
        for Emitted { to, event } in emitted {
            stream.push(to, StreamEvent::Game(event));
        }
    }
    let settings = TableSettings::new(TABLE_NAME, options, 0);
    GameFile {
        format: FORMAT.into(),
        version: VERSION,
        game: FileGame {
            id: String::new(),
            name: TABLE_NAME.into(),
            preset: settings.preset.clone(),
            source: "mj-server".into(),
            state: if game.is_over() { TableState::Over } else { TableState::Playing }.as_str().into(),
            created_us: at_us,
            finished_us: Some(at_us),
            hands: i64::from(game.hands_started()),
            scores: game.scores(),
            manager: None,
            last_seq: stream.events.len() as i64,
            rng_pos: "0".into(),
        },
        // Our own type always serialises.
        settings: serde_json::to_value(&settings).unwrap_or_default(),
        seats: (0..4).zip(names).map(|(seat, name)| FileSeat { seat, name, robot: None }).collect(),
        inputs,
        events: stream.events,
    }
}

/// A name as our seats take it (`protocol::text`), salvaged from what
/// mj-server allowed; `Player` when nothing of it can be shown.
fn player_name(name: &str) -> String {
    // mj-server took any bytes but newlines; our policy takes less.
    text::salvage_name(name).unwrap_or_else(|| "Player".into())
}

/// The event stream being written.
struct Stream {
    at_us: i64,
    events: Vec<FileEvent>,
    /// Hands dealt so far.
    hands: i64,
}

impl Stream {
    fn push(&mut self, to: Audience, event: StreamEvent) {
        if matches!(event, StreamEvent::Game(Event::HandStarted { .. })) {
            self.hands += 1;
        }
        let seq = self.events.len() as u64 + 1;
        let message = ServerMessage::Event { seq, at_us: self.at_us.max(0) as u64, event };
        let (audience, audience_player) = audience_columns(to);
        self.events.push(FileEvent {
            seq: seq as i64,
            at_us: self.at_us.max(0),
            hand: self.hands,
            audience: audience.into(),
            audience_player,
            // Our own type always serialises.
            body: serde_json::to_value(&message).unwrap_or(Value::Null),
        });
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_fit_our_seats() {
        assert_eq!(super::player_name("  R1 "), "R1");
        assert_eq!(super::player_name(""), "Player");
        assert_eq!(super::player_name(&"x".repeat(50)).chars().count(), 32);
        assert_eq!(super::player_name("Bo\u{7}b\u{202E}"), "Bob", "what our names may not hold is dropped");
        assert_eq!(super::player_name("\u{200B}"), "Player");
    }
}
