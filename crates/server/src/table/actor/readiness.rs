//! Readiness, pauses and the game's end: the ready handshake between hands
//! and after a pause, the deal once everybody is ready, the game's end (at
//! once, or when the hand is over), closing the table, and moving it to
//! another node between hands.

use rand::{Rng, RngCore};

use super::Actor;
use super::phase::{Flow, Phase};
use crate::protocol::ws::{StreamEvent, TableEvent};
use crate::rules::command::{Action, Command, PlayerId, WallSource};
use crate::rules::event::Audience;
use crate::rules::game::Game;
use crate::rules::hand::Phase as HandPhase;
use crate::table::Farewell;

impl Actor {
    /// Between hands (and at the start): every person must say ready.
    pub(super) fn await_ready(&mut self) {
        self.await_ready_but(None);
    }

    /// Every person but `exempt` must say ready (a game being played only;
    /// a paused hand stays paused until they are).
    pub(super) fn await_ready_but(&mut self, exempt: Option<u8>) {
        let Some(play) = self.phase.play_mut() else { return };
        if play.flow == Flow::Moves {
            play.flow = Flow::Ready;
        }
        self.seats.ask_ready();
        if let Some(s) = exempt.and_then(|e| self.seats.get_mut(e)) {
            s.ready = true;
        }
        let seats = self.unready();
        self.broadcast_table(TableEvent::WaitingForReady { seats });
        self.deal_if_ready();
    }

    /// mj-server's pause "to start play": on a classic table, once the
    /// deal's declarations are over, play waits until every person but East
    /// has said ready (East is exempt: it is the one to move).
    pub(super) fn await_ready_to_play(&mut self, east: u8) {
        self.stop_play();
        self.broadcast_table(TableEvent::PlayStarting { east });
        self.await_ready_but(Some(east));
    }

    /// The hand stops until everybody is ready: no move is taken, no claim
    /// is timed (a pause asked for, the classic start of play, a robot's
    /// error). The caller says why, then waits for everybody's `ready`.
    pub(super) fn stop_play(&mut self) {
        if let Some(play) = self.phase.play_mut() {
            play.flow = Flow::Paused;
            play.claim_deadline = None;
        }
    }

    /// The seats whose `ready` the table waits for.
    pub(super) fn unready(&self) -> Vec<u8> {
        self.seats.unready(self.settings.robot_takeover)
    }

    /// Once everybody is ready: play resumes after a pause, or the next
    /// hand is dealt.
    pub(super) fn deal_if_ready(&mut self) {
        // A table about to move deals its next hand at its next node.
        if self.moves_now() {
            return;
        }
        let everyone_ready = self.unready().is_empty();
        let Some(play) = self.phase.play_mut().filter(|p| p.flow != Flow::Moves && everyone_ready) else {
            return;
        };
        if std::mem::replace(&mut play.flow, Flow::Moves) == Flow::Paused
            && self.game.as_ref().is_some_and(Game::hand_in_progress)
        {
            self.broadcast_table(TableEvent::Resumed);
            self.restart_claim_timer();
            self.auto_pass();
            return;
        }
        let Some(game) = &self.game else { return };
        if game.is_over() || game.hand_in_progress() {
            return;
        }
        let given = match game.hands_started() {
            0 => self.settings.first_wall.take(),
            n => self.settings.later_walls.get(n as usize - 1).cloned(),
        };
        let wall = match given {
            Some(tiles) => WallSource::Tiles(tiles),
            None => WallSource::Shuffled { seed: self.rng.next_u64() },
        };
        let dice = Some([self.rng.gen_range(1..=6), self.rng.gen_range(1..=6)]);
        if let Err(e) = self.apply(Command::StartHand { wall, dice }) {
            // Only a given wall can be refused (the options changed since it
            // was checked): deal a shuffled one instead.
            tracing::warn!(table = %self.id, "the wall file was refused ({e}); dealing a shuffled wall");
            let wall = WallSource::Shuffled { seed: self.rng.next_u64() };
            if let Err(e) = self.apply(Command::StartHand { wall, dice }) {
                tracing::error!(table = %self.id, "cannot deal: {e}");
            }
        }
    }

    /// A game of four robots pays for each hand dealt since the last paid
    /// for; when its starter's budget is spent, the hand dealt is its last.
    pub(super) async fn pay_for_hands(&mut self) {
        let dealt = self.hands_dealt();
        while let Some((payer, paid)) = self.phase.hands_payer()
            && *paid < dealt
        {
            *paid += 1;
            if let Err(spent) = payer.pay().await {
                tracing::info!(table = %self.id, hands = dealt, "a game of robots alone ends: {spent}");
                if let Some(game) = self.phase.play_mut().and_then(|p| p.robot_game.as_mut()) {
                    game.payer = None;
                }
                self.end_game_between_hands();
            }
        }
    }

    /// The number of the hand being played (for a game of four robots to
    /// stop its robots' run when a new hand is dealt, until it is paid for).
    pub(super) fn hands_dealt(&self) -> u32 {
        self.game.as_ref().map_or(0, Game::hands_started)
    }

    /// mj-server's `--end-on-disconnect`: mid-hand the hand is washed out,
    /// except that after Mah-Jong a losing player's tiles are shown and the
    /// hand is scored; then the game ends. The player who left gets the
    /// penalty for when it left.
    pub(super) fn end_on_disconnect(&mut self, seat: u8) {
        if self.game.is_none() {
            return;
        }
        // Whatever happens to the hand, the game ends when it is over.
        self.end_after_hand();
        let Some(game) = &self.game else { return };
        let [mid_hand, mid_round, end_of_round] = self.settings.disconnect_penalties;
        let player = PlayerId(seat);
        let penalty = match game.hand().filter(|_| game.hand_in_progress()) {
            Some(hand) => {
                let s = hand.seat_of(player);
                let declared = hand.seat(s).hand_declared || hand.hand_score(s).is_some();
                let loser_after_mah_jong =
                    hand.phase() == HandPhase::MahJonging && !hand.winners().contains(&s) && hand.to_act() != s;
                if loser_after_mah_jong {
                    if !declared {
                        let _ = self.apply(Command::Act { player, action: Action::ShowTiles });
                    }
                } else {
                    let _ = self.apply(Command::AbandonHand);
                }
                mid_hand
            }
            None if game.next_hand_starts_round() => end_of_round,
            None => mid_round,
        };
        if let Some(s) = self.seats.get_mut(seat) {
            s.penalty += penalty;
        }
        self.seat_changed(seat);
        self.send_event(Audience::Only(player), StreamEvent::Table(TableEvent::Penalty { seat, points: penalty }));
        self.end_game_between_hands();
        let penalties: Vec<i64> = self.seats.occupied().map(|(_, s)| s.penalty).collect();
        tracing::info!(table = %self.id, ?penalties, "the game ends on a disconnection");
    }

    /// Ends the game now if no hand is being played (otherwise when it ends).
    pub(super) fn end_game_between_hands(&mut self) {
        let Some(game) = &self.game else { return };
        if game.hand_in_progress() {
            self.end_after_hand();
            return;
        }
        if !game.is_over() {
            let _ = self.apply(Command::EndGame);
        }
        self.game_over();
    }

    /// The game ends when the hand being played is over.
    pub(super) fn end_after_hand(&mut self) {
        if let Some(play) = self.phase.play_mut() {
            play.end_after_hand = true;
        }
    }

    /// The game has ended: the table's phase is over (a table waiting to
    /// start, or a game of robots, no longer counts against its holder: the
    /// phase's holds go with it), and so are the seats' holds.
    pub(super) fn game_over(&mut self) {
        self.seats.release_holds();
        if matches!(self.phase, Phase::Open(_) | Phase::Playing(_)) {
            let scores = self.game.as_ref().map(Game::scores);
            tracing::info!(table = %self.id, name = %self.settings.name, ?scores, "game over");
            self.phase = Phase::Over { close_at: None };
        }
        self.record.finished_us.get_or_insert_with(crate::store::now_us);
    }

    /// The table closes (an admin closed it, or it was idle too long): a hand
    /// in progress is washed out, the game ends as it stands (`game_over`),
    /// everybody is told why (`closed`), and the table stops once that is
    /// stored (its connections close; it is gone from the lobby).
    pub(super) fn abort(&mut self, reason: &str) {
        // First, so that the hand washed out below ends the game (no other
        // is dealt).
        self.end_after_hand();
        if self.game.as_ref().is_some_and(Game::hand_in_progress) {
            let _ = self.apply(Command::AbandonHand);
        }
        if self.game.as_ref().is_some_and(|g| !g.hand_in_progress() && !g.is_over()) {
            let _ = self.apply(Command::EndGame);
        }
        self.game_over();
        self.phase = Phase::Closing;
        self.broadcast_table(TableEvent::Closed { reason: reason.to_string() });
        tracing::info!(table = %self.id, "closed: {reason}");
    }

    /// Cluster mode: the table stops here, to be played at another node;
    /// its clients are sent there (4004), and what it was asked and did not
    /// answer is told to come back shortly.
    pub(super) fn send_everyone_elsewhere(&mut self) {
        self.elsewhere.store(true, std::sync::atomic::Ordering::SeqCst);
        self.stream.let_everyone_go(Farewell::Moved);
    }

    /// Cluster mode, rebalancing: the table is to move to another node when
    /// the hand being played is over. Only a game being played moves (one
    /// not started, or over, is no load worth moving): otherwise the answer
    /// is dropped, which the asker reads as "not moved".
    pub(super) fn move_between_hands(&mut self, reply: tokio::sync::oneshot::Sender<()>) {
        let fenced = self.fence.is_some();
        if let Some(play) = self.phase.play_mut().filter(|_| fenced) {
            play.moving = Some(reply);
        }
    }

    /// Cluster mode, rebalancing: the table was asked to move, and the hand
    /// is over: it moves now.
    pub(super) fn moves_now(&self) -> bool {
        self.phase.play().is_some_and(|p| p.moving.is_some()) && self.between_hands()
    }

    /// No hand is being played, and the game goes on: the moment a table
    /// may move to another node.
    pub(super) fn between_hands(&self) -> bool {
        self.game.as_ref().is_some_and(|g| !g.hand_in_progress() && !g.is_over())
    }
}
