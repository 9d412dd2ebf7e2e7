//! What the table shows: its public picture and snapshots, each player's
//! prompt (sent when it changes), replies to one connection, and the
//! numbered events recorded for the store and sent once stored.

use super::Actor;
use crate::protocol::ws::{ServerMessage, StreamEvent, TableEvent, TableInfo};
use crate::rules::command::PlayerId;
use crate::rules::event::{Audience, Emitted};
use crate::rules::game::Game;
use crate::store::EventRow;
use crate::table::prompt::{self, Moment};
use crate::table::stream::to_text;

impl Actor {
    pub(super) fn info(&self) -> TableInfo {
        TableInfo {
            id: self.id.clone(),
            name: self.settings.name.clone(),
            state: self.phase.table_state(),
            seats: self.seats.info(),
            manager: self.seats.manager,
            spectators: self.stream.spectators(),
            preset: self.settings.preset.clone(),
            scores: self.game.as_ref().map_or([0; 4], Game::scores),
            hands: self.game.as_ref().map_or(0, Game::hands_started),
            pause_deciseconds: self.pause(),
            waiting_for_ready: if self.phase.waits_for_ready() { self.unready() } else { Vec::new() },
            paused: self.phase.paused(),
            seq: self.stream.seq(),
            node: None,
        }
    }

    /// The pause in force: the table's own, or the longest a player asked
    /// for (`set_pause` refuses more than [`MAX_PAUSE_DECISECONDS`]).
    pub(super) fn pause(&self) -> u32 {
        self.settings.pause_deciseconds.max(self.seats.pause_requested())
    }

    /// Everything `seat` (or a spectator) may see now.
    pub(super) fn snapshot(&self, seat: Option<u8>) -> ServerMessage {
        let viewer = seat.map(PlayerId);
        ServerMessage::Snapshot {
            seat,
            table: self.info(),
            game: self.game.as_ref().map(|g| Box::new(g.view(viewer))),
            options: self.options().to_json_map(),
        }
    }

    /// What the player in `seat` may do now.
    pub(super) fn prompt(&self, seat: u8) -> crate::protocol::ws::Prompt {
        let moment = Moment {
            seq: self.stream.seq(),
            game: self.game.as_ref(),
            playing: self.phase.takes_moves(),
            claim_deadline: self.phase.claim_deadline(),
        };
        prompt::prompt(seat, self.phase.waits_for_ready() && self.unready().contains(&seat), moment)
    }

    /// Sends `seat`'s connection its prompt if it changed since the last one.
    pub(super) fn send_prompt(&mut self, seat: u8) {
        let Some(connection) = self.seats.get(seat).and_then(|s| s.connection) else { return };
        let prompt = self.prompt(seat);
        if self.prompts.changed(seat, &prompt) {
            self.reply(connection, &ServerMessage::Prompt(prompt));
        }
    }

    /// Sends every connected player its prompt where it changed.
    pub(super) fn send_prompts(&mut self) {
        for seat in 0..4 {
            self.send_prompt(seat);
        }
    }

    /// Sends one message to one connection (an answer, an error, a prompt);
    /// a connection that cannot take it is dropped.
    pub(super) fn reply(&mut self, connection: u64, message: &ServerMessage) {
        if let ServerMessage::Error { code, .. } = message {
            // Every refusal of a client's message is answered here.
            crate::metrics::command_refused(code.as_str());
        }
        if let Some(dropped) = self.stream.send_to(connection, to_text(message)) {
            self.forget_dropped(dropped);
        }
    }

    pub(super) fn broadcast_table(&mut self, event: TableEvent) {
        self.send_event(Audience::Everyone, StreamEvent::Table(event));
    }

    pub(super) fn broadcast(&mut self, emitted: Emitted) {
        self.send_event(emitted.to, StreamEvent::Game(emitted.event));
    }

    /// Numbers an event and records it for the store; it is sent once stored.
    pub(super) fn send_event(&mut self, to: Audience, event: StreamEvent) {
        let at_us = crate::store::now_us().unsigned_abs();
        if let StreamEvent::Game(e) = &event {
            self.record.observe(self.stream.seq() as i64 + 1, at_us as i64, e);
        }
        let (seq, text) = self.stream.push(to, event, at_us);
        let row = EventRow {
            seq: seq as i64,
            at_us: at_us as i64,
            hand: self.hand_number(),
            audience: to,
            body: text.to_string(),
        };
        self.record.event(row);
    }

    /// The hand being played or just played (0 before the first deal).
    pub(in crate::table) fn hand_number(&self) -> i64 {
        self.game.as_ref().map_or(0, |g| i64::from(g.hands_started()))
    }
}
