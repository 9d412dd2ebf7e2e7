//! The table's clock: the claim timer, the next deadline the loop sleeps
//! until (a claim's, a robot's move, a robot standing in, closing a finished
//! table, an idle table's expiry), and what each does when it comes.

use std::time::Duration;

use tokio::time::Instant;

use super::Actor;
use super::phase::{Flow, Phase};
use crate::rules::command::Command;
use crate::rules::game::Game;
use crate::table::prompt::ClaimDeadline;

impl Actor {
    /// Starts the claim timer when a new discard or kong opens for claims
    /// (a game being played, not paused, with a claim timeout).
    pub(super) fn restart_claim_timer(&mut self) {
        let open = self.game.as_ref().and_then(|game| {
            let hand = game.hand().filter(|_| game.hand_in_progress())?;
            let options = game.options();
            // Both options are bounded; adding them as u64 cannot overflow.
            let wait = Duration::from_secs(u64::from(options.timeout) + u64::from(options.timeout_grace));
            (hand.claim_window_open() && options.timeout != 0).then_some((hand.serial(), wait))
        });
        let Some(play) = self.phase.play_mut() else { return };
        match open {
            Some((serial, wait)) if play.flow != Flow::Paused => {
                if play.claim_deadline.is_none_or(|d| d.serial != serial) {
                    let at_us = crate::store::now_us().unsigned_abs() + wait.as_micros() as u64;
                    play.claim_deadline = Some(ClaimDeadline { serial, at: Instant::now() + wait, at_us });
                }
            }
            _ => play.claim_deadline = None,
        }
    }

    pub(super) fn next_deadline(&self) -> Option<Instant> {
        if self.record.is_held() {
            // Nothing moves until the store is back: no claim timeout, no robot.
            return None;
        }
        // While a restart brings other tables back, no claim times out (and
        // no robot is due).
        let claim = self.phase.claim_deadline().filter(|_| !self.phase.robots_waiting()).map(|d| d.at);
        let robot = self.robot_due().map(|_| self.last_action + self.pause_duration());
        let takeover = self.seats.next_takeover(self.settings.robot_takeover);
        let close = match self.phase {
            Phase::Over { close_at } => close_at,
            _ => None,
        };
        [claim, robot, takeover, close, self.idle_deadline()].into_iter().flatten().min()
    }

    pub(super) fn pause_duration(&self) -> Duration {
        Duration::from_millis(u64::from(self.pause()) * 100)
    }

    pub(super) fn on_timer(&mut self) {
        if let Some(d) = self.phase.claim_deadline()
            && d.at <= Instant::now()
        {
            if let Some(play) = self.phase.play_mut() {
                play.claim_deadline = None;
            }
            let open = self
                .game
                .as_ref()
                .and_then(Game::hand)
                .is_some_and(|h| h.claim_window_open() && h.serial() == d.serial);
            if open {
                let _ = self.apply(Command::ClaimTimeout);
            }
        }
        // A robot may now stand in for a player who has been away long enough.
        if self.phase.waits_for_ready() {
            self.deal_if_ready();
        }
        self.expire_if_idle();
    }

    /// Notes when the table became idle (no person connected at a table not
    /// started, or at a game of people), or that it no longer is.
    pub(super) fn watch_idle(&mut self) {
        let someone_here = self.seats.occupied().any(|(_, s)| !s.is_robot() && s.connection.is_some());
        // A game of robots plays by itself; one of people waits for them.
        let may_idle = match self.phase {
            Phase::Open(_) => true,
            Phase::Playing(_) => self.seats.any_person(),
            Phase::Over { .. } | Phase::Closing => false,
        };
        let Some(idle_since) = self.phase.idle_since() else { return };
        if may_idle && !someone_here {
            idle_since.get_or_insert_with(Instant::now);
        } else {
            *idle_since = None;
        }
    }

    /// When an idle table expires.
    pub(super) fn idle_deadline(&self) -> Option<Instant> {
        let (since, after) = match &self.phase {
            Phase::Open(opening) => (opening.idle_since?, self.limits.idle_open),
            Phase::Playing(play) => (play.idle_since?, self.limits.idle_game),
            Phase::Over { .. } | Phase::Closing => return None,
        };
        since.checked_add(after)
    }

    /// Closes the table if it has been idle too long.
    pub(super) fn expire_if_idle(&mut self) {
        if self.idle_deadline().is_none_or(|at| at > Instant::now()) {
            return;
        }
        let (what, after) = match self.phase {
            Phase::Open(_) => ("nobody has been at this table", self.limits.idle_open),
            _ => ("nobody has been at this game", self.limits.idle_game),
        };
        let seconds = after.as_secs();
        let span = match seconds {
            60 => "a minute".to_string(),
            s if s.is_multiple_of(60) => format!("{} minutes", s / 60),
            1 => "a second".to_string(),
            s => format!("{s} seconds"),
        };
        self.abort(&format!("{what} for {span}"));
    }
}
