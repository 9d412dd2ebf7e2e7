//! What the table is asked: the commands of its handles (seats, robots,
//! the start, connections, an admin's close), and what a connected client
//! asks of it (moves, `ready`, pauses, the manager's option changes, chat).
//! A refusal is sent back to that client alone with a stable code, and
//! changes nothing. While a batch waits for the store, every request that
//! would change something is refused.

use super::{Actor, MAX_PAUSE_DECISECONDS};
use crate::protocol::ws::{ClientMessage, ServerMessage, TableEvent, TableState, WsErrorCode};
use crate::rules::command::{Command, PlayerId};
use crate::rules::options::raw_value;
use crate::rules::rebuild::Input;
use crate::store::StoreError;
use crate::table::{TableCommand, TableError};
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
    /// Handles a command. A request that changed something is answered only
    /// once the change is stored.
    pub(super) async fn handle(&mut self, command: TableCommand) -> Result<(), StoreError> {
        // While a batch waits for the store, or the store is known to be
        // away, nothing is changed that would have to wait for it.
        if self.record.is_held() || (!*self.available.borrow() && command.changes_seats()) {
            self.refuse_while_held(command);
            return self.flush().await;
        }
        match command {
            TableCommand::Info { reply } => {
                let _ = reply.send(self.info());
            }
            TableCommand::Options { reply } => {
                let _ = reply.send(self.options().clone());
            }
            TableCommand::Sit { name, seat, account, session, hold, reply } => {
                let answer = self.sit(&name, seat, account);
                if let Ok(grant) = &answer
                    && let Some(s) = self.seats.get_mut(grant.seat)
                {
                    s.session = session;
                    s.hold = Some(hold);
                }
                self.flush().await?;
                self.answer(reply, answer);
            }
            TableCommand::Leave { asker, reply } => {
                let answer = self.leave(&asker);
                self.flush().await?;
                self.answer(reply, answer);
            }
            TableCommand::AddRobot { seat, strategy, asker, reply } => {
                let answer = self.may_manage(&asker).and_then(|()| self.add_robot(seat, strategy));
                self.start_if_classic_and_full();
                self.flush().await?;
                self.answer(reply, answer);
            }
            TableCommand::RemoveRobot { seat, asker, reply } => {
                let answer = self.may_manage(&asker).and_then(|()| self.remove_robot(seat));
                self.flush().await?;
                self.answer(reply, answer);
            }
            TableCommand::Start { asker, robot_game, payer, reply } => {
                let answer = self.start(&asker, robot_game, payer);
                self.flush().await?;
                self.answer(reply, answer);
            }
            TableCommand::Connect { token, account, since, replay_hand, reply } => {
                let _ = reply.send(self.connect(token.as_deref(), account, since, replay_hand));
                self.start_if_classic_and_full();
            }
            TableCommand::Abort { reply } => {
                self.abort("an admin closed it");
                self.flush().await?;
                self.answer(reply, Ok(()));
            }
            TableCommand::Message { connection, message } => self.message(connection, message),
            TableCommand::BadMessage { connection, code, reason } => {
                self.reply(connection, &ServerMessage::error(code, reason));
            }
            TableCommand::Disconnect { connection } => self.disconnect(connection),
            TableCommand::Watching { connection, count } => self.stream.stands_for(connection, count),
            TableCommand::MoveBetweenHands { reply } => self.move_between_hands(reply),
            TableCommand::EndSeatTokens(revoked) => self.end_seat_tokens(&revoked),
            // `run` answers them.
            TableCommand::Shutdown { .. } | TableCommand::HandOver { .. } | TableCommand::GiveUp => {}
        }
        self.flush().await
    }

    /// Answers a request once its change is stored: now, or (its batch held
    /// for want of the store) once the store is back and it is written.
    pub(super) fn answer<T: Send + 'static>(&mut self, reply: tokio::sync::oneshot::Sender<T>, answer: T) {
        if self.record.is_held() {
            self.deferred.push(Box::new(move || {
                let _ = reply.send(answer);
            }));
        } else {
            let _ = reply.send(answer);
        }
    }

    /// While a batch waits for the store, the table shows and changes
    /// nothing: every request is refused (`store_unavailable`), except the
    /// public information, pings, bad messages and disconnections.
    pub(super) fn refuse_while_held(&mut self, command: TableCommand) {
        let waiting = "the game store is unavailable: the table waits for it; try again";
        match command {
            TableCommand::Info { reply } => {
                let _ = reply.send(self.info());
            }
            TableCommand::Options { reply } => {
                let _ = reply.send(self.options().clone());
            }
            TableCommand::Sit { reply, .. } => {
                let _ = reply.send(Err(TableError::StoreUnavailable));
            }
            TableCommand::AddRobot { reply, .. } => {
                let _ = reply.send(Err(TableError::StoreUnavailable));
            }
            TableCommand::Leave { reply, .. }
            | TableCommand::RemoveRobot { reply, .. }
            | TableCommand::Start { reply, .. }
            | TableCommand::Abort { reply } => {
                let _ = reply.send(Err(TableError::StoreUnavailable));
            }
            TableCommand::Connect { reply, .. } => {
                let _ = reply.send(Err(TableError::StoreUnavailable));
            }
            TableCommand::Message { connection, message: ClientMessage::Ping } => {
                self.reply(connection, &ServerMessage::Pong);
            }
            TableCommand::Message { connection, .. } => {
                self.reply(connection, &ServerMessage::error(WsErrorCode::StoreUnavailable, waiting));
            }
            TableCommand::BadMessage { connection, code, reason } => {
                self.reply(connection, &ServerMessage::error(code, reason));
            }
            TableCommand::Disconnect { connection } => self.disconnect(connection),
            TableCommand::Watching { connection, count } => self.stream.stands_for(connection, count),
            TableCommand::MoveBetweenHands { reply } => self.move_between_hands(reply),
            // Ending tokens changes a seat's row: done once the store is back
            // (the sessions themselves have ended already).
            TableCommand::EndSeatTokens(revoked) => self.end_seat_tokens(&revoked),
            // `run` answers them.
            TableCommand::Shutdown { .. } | TableCommand::HandOver { .. } | TableCommand::GiveUp => {}
        }
    }

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

    pub(super) fn player_message(&mut self, seat: u8, message: ClientMessage) -> Result<(), Refusal> {
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
                if self.phase.table_state() != TableState::Playing {
                    return refuse(WsErrorCode::NotNow, "the game is not being played");
                }
                if self.phase.paused() {
                    return refuse(WsErrorCode::NotNow, "the game is paused until everyone is ready");
                }
                if self.phase.waits_for_ready() {
                    return refuse(WsErrorCode::NotNow, "the next hand has not been dealt: say ready");
                }
                let command = Command::Act { player: PlayerId(seat), action };
                self.apply(command).map_err(|e| (WsErrorCode::IllegalMove, e.to_string()))
            }
            ClientMessage::Ready => {
                if !self.phase.waits_for_ready() {
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
                if self.phase.table_state() != TableState::Playing || self.phase.waits_for_ready() {
                    return refuse(WsErrorCode::NotNow, "only a game in play can be paused");
                }
                self.stop_play();
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
