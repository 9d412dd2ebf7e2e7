//! Game logs of the original mj-server: imported as finished games, and
//! written for any game of ours ([`log`]).
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
//!
//! The other way, a checked game is written as the log mj-server would have
//! written of it: each seat a connection, every controller message as the
//! classic front-end prints the table's stream to that seat
//! ([`crate::protocol::printer`]), and every move as the message an
//! mj-server client sends for it. Importing that log gives the same game.

use serde_json::Value;

use super::check::Checked;
use super::format::{ArchiveError, FORMAT, FileEvent, FileGame, FileInput, FileSeat, GameFile, VERSION};
use crate::protocol::classic::{ControllerMessage, PlayerMessage};
use crate::protocol::printer::{PROTOCOL_VERSION, Printer, end_entry, option_entry};
use crate::protocol::ws::{ServerMessage, StreamEvent, TableEvent, TableState};
use crate::replay::{Capture, replay_log_captured};
use crate::rules::command::{Command, PlayerId};
use crate::rules::event::{Audience, Emitted, Event};
use crate::rules::options::{CATALOGUE, GameOptions, mj_server_catalogue};
use crate::rules::rebuild::Input;
use crate::rules::tile::Wind;
use crate::store::records::audience_columns;
use crate::table::TableSettings;
use crate::text;

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

/// A name as our seats take it (`text`), salvaged from what
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

/// Writes a checked game as an mj-server game log (the format of the
/// reference corpus: `>cnxN` for what the server sent on connection N,
/// `<cnxN` for what it received, CR LF after each record). Seat `s` is
/// connection and player `s + 1`. Refused, with the reason, for a game the
/// log cannot record: one that plays East's tile swap or the animals (the
/// protocol has no words for them), throws double dice (the log does not say
/// how the dice fell) or scores no special hands (mj-server's
/// `--no-special-scores`, which its log does not say either).
pub fn log(checked: &Checked) -> Result<String, ArchiveError> {
    let no_special_scores = checked.settings.no_special_scores;
    // The options in force: the table's, then each change of the manager's
    // (the check has replayed the game; no need to run the engine again).
    let mut options = checked.settings.options.clone();
    recordable(&options, no_special_scores)?;
    let mut writer = LogWriter::default();
    let mut inputs = checked.inputs.iter().peekable();
    for row in &checked.events {
        while let Some(input) = inputs.next_if(|i| i.seq < row.seq) {
            writer.input(&input.input)?;
            changed(&input.input, &mut options, no_special_scores)?;
        }
        let message: ServerMessage =
            serde_json::from_str(&row.body).map_err(|e| ArchiveError::Invalid(format!("event {}: {e}", row.seq)))?;
        if let ServerMessage::Event { event, .. } = message {
            writer.event(row.audience, &event, &options);
        }
    }
    for input in inputs {
        writer.input(&input.input)?;
    }
    Ok(writer.text)
}

/// Refuses options the log cannot record (see [`log`]).
fn recordable(options: &GameOptions, no_special_scores: bool) -> Result<(), ArchiveError> {
    let unrecordable = [
        (options.tile_swap, "East's tile swap (TileSwap)"),
        (options.animals, "the animal tiles (Animals)"),
        (options.double_dice, "double dice (DoubleDice)"),
        (no_special_scores, "no special scores (--no-special-scores)"),
    ];
    match unrecordable.iter().find(|(on, _)| *on) {
        Some((_, what)) => {
            Err(ArchiveError::Unrecordable(format!("an mj-server log cannot record a game played with {what}")))
        }
        None => Ok(()),
    }
}

/// The options after an input: a manager's change applied (and checked
/// recordable); any other input changes none.
fn changed(input: &Input, options: &mut GameOptions, no_special_scores: bool) -> Result<(), ArchiveError> {
    let Input::SetOption { name, value } = input else { return Ok(()) };
    // The file was checked: its changes apply.
    options.set_checked(name, value).map_err(|e| ArchiveError::Invalid(e.to_string()))?;
    recordable(options, no_special_scores)
}

/// Which copies of a message mj-server logs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Logged {
    /// The copy sent on this seat's connection.
    On(u8),
    /// Each copy.
    EachSeat,
    /// None.
    Not,
}

/// The log being written, and what it remembers of the table.
#[derive(Default)]
struct LogWriter {
    text: String,
    /// Each seat's printer, from when its player connected.
    printers: [Option<Printer>; 4],
    /// Each seated player's name.
    names: [Option<String>; 4],
    /// The manager's seat.
    manager: Option<u8>,
    /// This hand's East (before the first hand, seat 0, the first East).
    east: u8,
    /// The discard open to claims (a chow's position refers to it).
    discard: u32,
}

impl LogWriter {
    /// A record: `>cnxN` (sent) or `<cnxN` (received) on seat `seat`'s
    /// connection. Inner line feeds stay bare, as mj-server logs them.
    fn record(&mut self, sent: bool, seat: u8, message: &dyn std::fmt::Display) {
        use std::fmt::Write;
        let arrow = if sent { '>' } else { '<' };
        // Writing to a String cannot fail.
        let _ = write!(self.text, "{arrow}cnx{} {message}\r\n", u32::from(seat) + 1);
    }

    fn send(&mut self, seat: u8, messages: &[ControllerMessage]) {
        for m in messages {
            self.record(true, seat, m);
        }
    }

    /// What a player sent for an input, if anything.
    fn input(&mut self, input: &Input) -> Result<(), ArchiveError> {
        if let Input::Engine { command: Command::Act { player, action } } = input {
            let message = PlayerMessage::from_action(action, self.discard)
                .ok_or_else(|| ArchiveError::Unrecordable("an mj-server log cannot record East's tile swap".into()))?;
            self.record(false, player.0, &message);
        }
        Ok(())
    }

    /// What the server sent for an event, to each connection that sees it.
    fn event(&mut self, audience: Audience, event: &StreamEvent, options: &GameOptions) {
        // mj-server logs a message sent to everyone once, on East's
        // connection; one sent to a player on the player's; and not the
        // copies the others get with less in them (a draw's hidden tile).
        // Players coming and going are told one by one, each logged.
        let mut logged = match audience {
            Audience::Everyone => Logged::On(self.east),
            Audience::Only(player) => Logged::On(player.0),
            Audience::AllBut(_) => Logged::Not,
        };
        match event {
            StreamEvent::Table(TableEvent::SeatTaken { seat, name, .. }) if *seat < 4 => {
                self.connect(*seat, name);
                logged = Logged::EachSeat;
            }
            StreamEvent::Table(TableEvent::SeatLeft { .. }) => logged = Logged::EachSeat,
            StreamEvent::Table(TableEvent::Manager { seat }) => self.manager = *seat,
            StreamEvent::Table(TableEvent::GameStarted) => {
                // mj-server's greeting of a game, to each player: the
                // seating and every option.
                let list = option_list_of(options);
                for seat in 0..4u8 {
                    let Some(printer) = self.printers[usize::from(seat)].as_mut() else { continue };
                    printer.game_announced();
                    let game = printer.game_message(Wind::East, [0; 4], self.manager);
                    self.send(seat, &[game]);
                    self.send(seat, &list);
                }
                return;
            }
            StreamEvent::Game(Event::HandStarted { east, .. }) => {
                self.east = east.0;
                logged = Logged::On(east.0);
            }
            StreamEvent::Game(
                Event::Discarded { discard, .. }
                | Event::DeclaredClosedKong { discard, .. }
                | Event::AddedToPung { discard, .. },
            ) => self.discard = *discard,
            _ => {}
        }
        for seat in 0..4u8 {
            if !audience.includes(Some(PlayerId(seat))) {
                continue;
            }
            // Every printer follows the stream, to know what its seat knows.
            let Some(printer) = self.printers[usize::from(seat)].as_mut() else { continue };
            let messages = printer.event(event);
            if logged == Logged::EachSeat || logged == Logged::On(seat) {
                self.send(seat, &messages);
            }
        }
        if let StreamEvent::Table(TableEvent::SeatLeft { seat }) = event
            && usize::from(*seat) < self.names.len()
        {
            // The others were told; the connection is gone.
            self.names[usize::from(*seat)] = None;
            self.printers[usize::from(*seat)] = None;
        }
    }

    /// A player connects, as mj-server logs it: the `Connect`, its reply,
    /// and each player already there told of the other.
    fn connect(&mut self, seat: u8, name: &str) {
        let id = i32::from(seat) + 1;
        self.record(false, seat, &PlayerMessage::Connect { pvers: PROTOCOL_VERSION, last_id: 0, name: name.into() });
        self.send(seat, &[ControllerMessage::ConnectReply { pvers: PROTOCOL_VERSION, id, reason: String::new() }]);
        self.printers[usize::from(seat)] = Some(Printer::new(0, seat));
        // The others are told by the printers (the table's `seat_taken`);
        // the newcomer is told of those already seated.
        for other in (0..4u8).filter(|&o| o != seat) {
            if let Some(other_name) = self.names[usize::from(other)].clone() {
                self.send(seat, &[ControllerMessage::Player { id: i32::from(other) + 1, name: other_name }]);
            }
        }
        self.names[usize::from(seat)] = Some(name.into());
    }
}

/// The option list of an exported game: all of mj-server's options, then
/// this server's own where they differ from their defaults (an import
/// applies them; mj-server's clients show them as options they do not know).
fn option_list_of(options: &GameOptions) -> Vec<ControllerMessage> {
    let known = mj_server_catalogue().len();
    CATALOGUE
        .iter()
        .enumerate()
        .filter_map(|(i, spec)| {
            let value = options.get(spec.name).ok()?.raw();
            (i < known || value != spec.default).then(|| option_entry(spec, &value))
        })
        .chain(std::iter::once(end_entry()))
        .map(|optentry| ControllerMessage::GameOption { id: 0, optentry })
        .collect()
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
