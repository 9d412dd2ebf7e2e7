//! The game's moves: a command applied to the game and what follows it
//! (the claim timer, the automatic passes, the wait for `ready` when a hand
//! ends), and the robots' moves at the table's pace.

use tokio::time::Instant;

use super::Actor;
use crate::bots::Robot;
use crate::bots::strategy::Strategy;
use crate::protocol::ws::TableEvent;
use crate::rules::command::{Action, Command, GameError, PlayerId};
use crate::rules::event::Event;
use crate::rules::hand::Hand;
use crate::rules::rebuild::Input;
use crate::rules::view;
use crate::store::StoreError;

/// At most this many robot moves are made in a row before the actor lets
/// other tasks run (with no pause between actions).
const ROBOT_BURST: usize = 64;

impl Actor {
    /// Applies a command to the game and sends out what it caused; returns
    /// the engine's refusal, which changes nothing.
    pub(super) fn apply(&mut self, command: Command) -> Result<(), GameError> {
        let Some(game) = self.game.as_mut() else { return Err(GameError::NoHand) };
        let starts_hand = matches!(command, Command::StartHand { .. });
        // A pass never opens a claim window; anything else may.
        let may_open_claims = !matches!(command, Command::Act { action: Action::Pass { .. }, .. });
        let emitted = game.apply(command.clone())?;
        let finished_hand = !game.hand_in_progress();
        let over = game.is_over();
        self.record.input(self.stream.seq(), Input::Engine { command });
        self.last_action = Instant::now();
        if starts_hand {
            self.stream.new_hand();
        }
        let play_starts = emitted.iter().find_map(|e| match e.event {
            Event::PlayStarted { east } => Some(east.0),
            _ => None,
        });
        for e in emitted {
            self.broadcast(e);
        }
        if let Some(east) = play_starts.filter(|_| self.settings.classic) {
            self.await_ready_to_play(east);
        }
        self.restart_claim_timer();
        if may_open_claims {
            self.auto_pass();
        }
        if over {
            self.game_over();
        } else if finished_hand && !starts_hand && self.phase.play().is_some_and(|p| p.end_after_hand) {
            self.end_game_between_hands();
        } else if finished_hand && !starts_hand {
            self.await_ready();
        }
        Ok(())
    }

    /// Passes at once, for every person who asked to be asked only when a
    /// claim is possible (the default on the WebSocket), on the open discard
    /// or kong when `pass` is the only answer the engine accepts from them.
    /// The pass is an input like any other (stored, replayed on recovery);
    /// robots answer for themselves, at the table's pace. What the timing
    /// tells the others is in docs/protocol.md, "Claims only when there is
    /// a choice".
    pub(super) fn auto_pass(&mut self) {
        if !self.phase.takes_moves() {
            return;
        }
        let Some(game) = self.game.as_ref().filter(|g| g.hand_in_progress()) else { return };
        if !game.hand().is_some_and(Hand::claim_window_open) {
            return;
        }
        let mut passes = Vec::new();
        let mut actions = Vec::new();
        for seat in 0..4u8 {
            // Robots (and robots standing in) answer for themselves.
            let wants = self.seats.get(seat).is_some_and(|s| !s.ask_every_discard);
            if !wants || self.robot_plays(seat) {
                continue;
            }
            actions.clear();
            game.legal_actions_into(PlayerId(seat), &mut actions);
            if let [pass @ Action::Pass { .. }] = actions.as_slice() {
                passes.push((seat, pass.clone()));
            }
        }
        for (seat, action) in passes {
            // Legal a moment ago, and each pass leaves the others' answers
            // as they were: never refused.
            if let Err(e) = self.apply(Command::Act { player: PlayerId(seat), action }) {
                tracing::error!(table = %self.id, seat, "the automatic pass was refused: {e}");
            }
        }
    }

    /// A robot makes this seat's moves: a robot's seat, or a person's seat
    /// whose player has been away longer than the takeover delay.
    pub(super) fn robot_plays(&self, seat: u8) -> bool {
        self.seats.robot_plays(seat, self.settings.robot_takeover)
    }

    /// The first seat (in id order) a robot must move for.
    pub(super) fn robot_due(&self) -> Option<u8> {
        if !self.phase.takes_moves() || self.record.is_held() || self.phase.robots_waiting() {
            return None;
        }
        let game = self.game.as_ref()?;
        let hand = game.hand().filter(|_| game.hand_in_progress())?;
        (0..4u8).find(|&s| self.robot_plays(s) && view::decision(hand, hand.seat_of(PlayerId(s))).is_some())
    }

    /// Makes the robots' moves that are due now (a burst of them is stored
    /// and sent together).
    pub(super) async fn run_robots(&mut self) -> Result<(), StoreError> {
        self.robot_moves();
        self.flush().await?;
        tokio::task::yield_now().await;
        Ok(())
    }

    pub(super) fn robot_moves(&mut self) {
        let dealt = self.hands_dealt();
        for _ in 0..ROBOT_BURST {
            // A game of four robots pays for a hand before its moves.
            if self.phase.pays_for_hands() && self.hands_dealt() != dealt {
                return;
            }
            let Some(seat) = self.robot_due() else { return };
            if self.last_action + self.pause_duration() > Instant::now() {
                return; // the timer will come back for it
            }
            let Some(game) = &self.game else { return };
            let view = game.view(Some(PlayerId(seat)));
            let decide = |s: &crate::table::seats::Seat| match &s.robot {
                Some((_, robot)) => robot.decide(&view),
                // A robot standing in for an absent player.
                None => Robot::new(Strategy::default(), game.options().clone()).decide(&view),
            };
            let outcome = match self.seats.get(seat).and_then(decide) {
                Some(action) => self.apply(Command::Act { player: PlayerId(seat), action }).map_err(|e| e.to_string()),
                None => Err("the robot found no move".to_string()),
            };
            if let Err(e) = outcome {
                // A robot without a move, or with one the engine refuses, is a
                // bug: pause the table rather than spin, and say so.
                tracing::error!(table = %self.id, seat, "robot move failed: {e}");
                self.stop_play();
                self.broadcast_table(TableEvent::Paused { seat, reason: format!("robot error: {e}") });
                self.await_ready();
                return;
            }
        }
    }
}
