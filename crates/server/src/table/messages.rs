//! What a connected client asks of its table: moves, `ready`, pauses, the
//! manager's option changes, chat. A refusal is sent back to that client
//! alone with a stable code, and changes nothing.

use super::actor::{Actor, MAX_PAUSE_DECISECONDS};
use crate::protocol::ws::{ClientMessage, ServerMessage, TableEvent, TableState, WsErrorCode};
use crate::rules::command::{Command, PlayerId};
use crate::rules::options::raw_value;
use crate::rules::rebuild::Input;
use crate::text;

/// A refusal: its code and what was wrong.
type Refusal = (WsErrorCode, String);

fn refuse(code: WsErrorCode, why: impl Into<String>) -> Result<(), Refusal> {
    Err((code, why.into()))
}

/// The refusal of a seat's request over its rate.
fn rate_limited(what: &str, wait: std::time::Duration) -> Refusal {
    let seconds = (wait.as_secs_f64() * 10.0).ceil() / 10.0;
    (WsErrorCode::RateLimited, format!("too many {what} from your seat: try again in {seconds:.1} s"))
}

/// What a spectator's message is answered, for every message but
/// `snapshot` (`None`: that needs the table). The same whether the table
/// answers it or another node's feed does (cluster mode, `cluster::feed`).
pub fn spectator_answer(message: &ClientMessage) -> Option<ServerMessage> {
    match message {
        ClientMessage::Ping => Some(ServerMessage::Pong),
        ClientMessage::Snapshot => None,
        _ => Some(ServerMessage::error(WsErrorCode::NotAllowed, "spectators can only watch")),
    }
}

impl Actor {
    /// A message from connection `connection`.
    pub fn message(&mut self, connection: u64, message: ClientMessage) {
        let Some(seat) = self.stream.seat_of(connection) else { return };
        match message {
            ClientMessage::Ping => return self.reply(connection, &ServerMessage::Pong),
            ClientMessage::Snapshot => {
                // As cheap as a move refused, and never stored: not limited
                // (a program may ask for one every few events).
                let snapshot = self.snapshot(seat);
                return self.reply(connection, &snapshot);
            }
            _ => {}
        }
        let Some(seat) = seat else {
            if let Some(answer) = spectator_answer(&message) {
                self.reply(connection, &answer);
            }
            return;
        };
        if let Err((code, why)) = self.player_message(seat, message) {
            self.reply(connection, &ServerMessage::error(code, why));
        }
    }

    fn player_message(&mut self, seat: u8, message: ClientMessage) -> Result<(), Refusal> {
        // Chat, and the requests that make the table write without playing,
        // are limited per seat: a flood would grow the store and slow the
        // table for everyone at it.
        let limited = match &message {
            ClientMessage::Chat { .. } => self.may_chat(seat).map_err(|wait| ("chat messages", wait)),
            ClientMessage::RequestPause { .. }
            | ClientMessage::SetPause { .. }
            | ClientMessage::SetOption { .. }
            | ClientMessage::SetManager { .. } => self.may_request(seat).map_err(|wait| ("requests", wait)),
            _ => Ok(()),
        };
        if let Err((what, wait)) = limited {
            return Err(rate_limited(what, wait));
        }
        match message {
            ClientMessage::Ping | ClientMessage::Snapshot => Ok(()),
            ClientMessage::Act { action } => {
                if self.state != TableState::Playing {
                    return refuse(WsErrorCode::NotNow, "the game is not being played");
                }
                if self.paused {
                    return refuse(WsErrorCode::NotNow, "the game is paused until everyone is ready");
                }
                if self.waiting_ready {
                    return refuse(WsErrorCode::NotNow, "the next hand has not been dealt: say ready");
                }
                let command = Command::Act { player: PlayerId(seat), action };
                self.apply(command).map_err(|e| (WsErrorCode::IllegalMove, e.to_string()))
            }
            ClientMessage::Ready => {
                if !self.waiting_ready {
                    return refuse(WsErrorCode::NotNow, "nothing is waiting for you to be ready");
                }
                if self.seats.get(seat).is_some_and(|s| s.ready) {
                    return Ok(()); // said twice: no harm
                }
                if let Some(s) = self.seats.get_mut(seat) {
                    s.ready = true;
                }
                let left = self.unready();
                if !left.is_empty() {
                    self.broadcast_table(TableEvent::WaitingForReady { seats: left });
                }
                self.deal_if_ready();
                Ok(())
            }
            ClientMessage::RequestPause { reason } => {
                let reason = text::chat("a pause's reason", &reason, true)
                    .map_err(|e| (WsErrorCode::BadMessage, e.to_string()))?;
                if self.state != TableState::Playing || self.waiting_ready {
                    return refuse(WsErrorCode::NotNow, "only a game in play can be paused");
                }
                self.paused = true;
                self.claim_deadline = None;
                self.broadcast_table(TableEvent::Paused { seat, reason });
                self.await_ready();
                Ok(())
            }
            ClientMessage::SetPause { deciseconds } => {
                if deciseconds > MAX_PAUSE_DECISECONDS {
                    return refuse(
                        WsErrorCode::BadMessage,
                        format!("the pause is at most {MAX_PAUSE_DECISECONDS} deciseconds"),
                    );
                }
                let before = self.pause();
                if let Some(s) = self.seats.get_mut(seat) {
                    s.pause_request = deciseconds;
                }
                self.seat_changed(seat);
                if self.pause() != before {
                    self.broadcast_table(TableEvent::PauseChanged { deciseconds: self.pause() });
                }
                Ok(())
            }
            ClientMessage::SetOption { name, value } => {
                if self.settings.no_manager || self.seats.manager != Some(seat) {
                    return refuse(WsErrorCode::NotAllowed, "only the game manager may change options");
                }
                let value = raw_value(&value).map_err(|e| (WsErrorCode::BadOption, format!("option {name}: {e}")))?;
                let changed = match &mut self.game {
                    None => self.settings.options.set_checked(&name, &value),
                    Some(game) => game.set_option(&name, &value),
                };
                changed.map_err(|e| (WsErrorCode::BadOption, e.to_string()))?;
                self.record.input(self.stream.seq(), Input::SetOption { name: name.clone(), value: value.clone() });
                self.brief_robots();
                self.broadcast_table(TableEvent::OptionChanged { name, value });
                Ok(())
            }
            ClientMessage::SetManager { seat: to } => {
                if self.settings.no_manager {
                    return refuse(WsErrorCode::NotAllowed, "this table has no game manager (--no-manager)");
                }
                if self.seats.manager.is_some_and(|m| m != seat) {
                    return refuse(WsErrorCode::NotAllowed, "only the game manager may hand the role on");
                }
                if let Some(to) = to
                    && self.seats.get(to).is_none_or(|s| s.is_robot())
                {
                    return refuse(
                        WsErrorCode::BadMessage,
                        format!("seat {to} is not a person's: only a person manages"),
                    );
                }
                if self.seats.manager != to {
                    self.seats.manager = to;
                    self.broadcast_table(TableEvent::Manager { seat: to });
                }
                Ok(())
            }
            ClientMessage::SetClaimPrompts { every_discard } => {
                if let Some(s) = self.seats.get_mut(seat) {
                    s.ask_every_discard = every_discard;
                }
                // Turned off with a discard open that the seat can only pass on.
                self.auto_pass();
                Ok(())
            }
            ClientMessage::Chat { text } => {
                let text =
                    text::chat("a chat message", &text, false).map_err(|e| (WsErrorCode::BadMessage, e.to_string()))?;
                let name = self.seats.get(seat).map(|s| s.name.clone()).unwrap_or_default();
                self.broadcast_table(TableEvent::Chat { seat, name, text });
                Ok(())
            }
        }
    }
}
