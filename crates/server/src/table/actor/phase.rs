//! Where a table is in its life, as one value: [`Phase`].
//!
//! Each phase carries what only it needs, so that a wait, a deadline or a
//! hold cannot outlive the phase it belongs to:
//! - **Open**: seats are being taken. The table counts against its opener's
//!   quota ([`Opening::hold`]) and expires when nobody has been at it for a
//!   while.
//! - **Playing**: the game is being played ([`Play`]). Moves are taken only
//!   while its [`Flow`] is [`Flow::Moves`]; between hands it waits for every
//!   person's `ready` ([`Flow::Ready`]), and a pause stops the hand until
//!   they are all ready again ([`Flow::Paused`]). Only here is a claim timed,
//!   a game of robots paid for, the game's end set for the hand's end, a move
//!   to another node waited for, or the robots held back by a restart.
//! - **Over**: the game has ended. The table stays while it is watched, and
//!   closes [`crate::table::actor::KEEP_FINISHED`] after its last spectator
//!   has gone.
//! - **Closing**: an admin closed the table, or it was idle too long. It
//!   stops once that is stored; nothing follows the hand it washed out.
//!
//! The moves between them: Open → Playing (the game starts), Playing → Over
//! (the game ends), any → Closing (closed), and a table stops from Over
//! (nobody watching) or Closing (stored). Leaving a phase drops what it held:
//! a quota's permit is given back by being dropped.

use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

use super::super::prompt::ClaimDeadline;
use crate::limits::{HandsPayer, Permit};
use crate::protocol::ws::TableState;

/// Where a table is in its life (see the module's notes).
pub(in crate::table) enum Phase {
    /// Seats are being taken; no game yet.
    Open(Opening),
    /// The game is being played.
    Playing(Play),
    /// The game is over; the table closes at `close_at` (set while nobody
    /// watches it).
    Over {
        /// When the table closes, once nobody watches it.
        close_at: Option<Instant>,
    },
    /// Closed (by an admin, or idle): the table stops once that is stored.
    Closing,
}

/// A table waiting for its game to start.
pub(in crate::table) struct Opening {
    /// The opener's quota, held while the table waits to start (never
    /// read: dropping it, with the phase, gives the permit back).
    #[allow(dead_code)]
    pub hold: Option<Permit>,
    /// Since when no person has been connected.
    pub idle_since: Option<Instant>,
}

/// A game being played.
pub(in crate::table) struct Play {
    /// Whether moves are taken now.
    pub flow: Flow,
    /// The claim window being timed.
    pub claim_deadline: Option<ClaimDeadline>,
    /// The game ends when the hand being played is over (a player left
    /// under `--end-on-disconnect`, or a game of robots was not paid for).
    pub end_after_hand: bool,
    /// A game of four robots: its starter's quota and who pays its hands.
    pub robot_game: Option<RobotGame>,
    /// Cluster mode, rebalancing: the table moves to another node when the
    /// hand is over (answered once it has stopped).
    pub moving: Option<oneshot::Sender<()>>,
    /// A table brought back by a restart: `true` while the restart is still
    /// bringing others back. Meanwhile its robots (and its claim timer) wait,
    /// so that the CPU and the store serve the tables still on their way
    /// (at 2,000 robot tables, their play made the restart twice as long);
    /// people's moves are played at once.
    pub robots_wait: Option<watch::Receiver<bool>>,
    /// Since when no person has been connected (a game of people only).
    pub idle_since: Option<Instant>,
}

/// Whether a game being played takes moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::table) enum Flow {
    /// Moves are taken.
    Moves,
    /// No hand is being played: the next is dealt once everybody is ready.
    Ready,
    /// The hand is paused until everybody is ready (a pause asked for, the
    /// classic start of play, a robot's error, a restart).
    Paused,
}

/// A game of four robots: it counts against its starter's quota while it
/// is played, and each hand after the first is paid for.
pub(in crate::table) struct RobotGame {
    /// The starter's quota (never read: dropping it, with the phase, gives
    /// the permit back).
    #[allow(dead_code)]
    pub hold: Permit,
    /// Who pays for the hands, and how many it has paid for (the first, by
    /// the request that started it); `None` once it refused.
    pub payer: Option<(HandsPayer, u32)>,
}

impl Phase {
    /// A new table's phase: open, counted against `hold`.
    pub fn open(hold: Option<Permit>) -> Phase {
        Phase::Open(Opening { hold, idle_since: Some(Instant::now()) })
    }

    /// The state the protocol and the store know (a closing table's game is over).
    pub fn table_state(&self) -> TableState {
        match self {
            Phase::Open(_) => TableState::Open,
            Phase::Playing(_) => TableState::Playing,
            Phase::Over { .. } | Phase::Closing => TableState::Over,
        }
    }

    /// The game being played, if it is.
    pub fn play(&self) -> Option<&Play> {
        match self {
            Phase::Playing(play) => Some(play),
            _ => None,
        }
    }

    /// The game being played, to change.
    pub fn play_mut(&mut self) -> Option<&mut Play> {
        match self {
            Phase::Playing(play) => Some(play),
            _ => None,
        }
    }

    /// The game is being played and takes moves.
    pub fn takes_moves(&self) -> bool {
        self.play().is_some_and(|p| p.flow == Flow::Moves)
    }

    /// The table waits for everybody's `ready`.
    pub fn waits_for_ready(&self) -> bool {
        self.play().is_some_and(|p| p.flow != Flow::Moves)
    }

    /// The hand is paused until everybody is ready.
    pub fn paused(&self) -> bool {
        self.play().is_some_and(|p| p.flow == Flow::Paused)
    }

    /// A game of four robots whose hands are paid for: its payer, and how
    /// many hands it has paid for.
    pub fn hands_payer(&mut self) -> Option<&mut (HandsPayer, u32)> {
        self.play_mut()?.robot_game.as_mut()?.payer.as_mut()
    }

    /// A game of four robots whose hands are paid for.
    pub fn pays_for_hands(&self) -> bool {
        self.play().and_then(|p| p.robot_game.as_ref()).is_some_and(|g| g.payer.is_some())
    }

    /// The claim window being timed.
    pub fn claim_deadline(&self) -> Option<ClaimDeadline> {
        self.play().and_then(|p| p.claim_deadline)
    }

    /// A restart still brings other tables back: this one's robots wait.
    pub fn robots_waiting(&self) -> bool {
        self.play().and_then(|p| p.robots_wait.as_ref()).is_some_and(|w| *w.borrow())
    }

    /// Since when no person has been connected, where that matters.
    pub fn idle_since(&mut self) -> Option<&mut Option<Instant>> {
        match self {
            Phase::Open(opening) => Some(&mut opening.idle_since),
            Phase::Playing(play) => Some(&mut play.idle_since),
            Phase::Over { .. } | Phase::Closing => None,
        }
    }
}

impl Play {
    /// A game as it starts (or comes back): waiting for everybody's `ready`.
    pub fn new(robot_game: Option<RobotGame>, robots_wait: Option<watch::Receiver<bool>>) -> Play {
        Play {
            flow: Flow::Ready,
            claim_deadline: None,
            end_after_hand: false,
            robot_game,
            moving: None,
            robots_wait,
            idle_since: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closing_table_is_over_to_the_protocol() {
        assert_eq!(Phase::Closing.table_state(), TableState::Over);
        assert_eq!(Phase::Over { close_at: None }.table_state(), TableState::Over);
        assert_eq!(Phase::open(None).table_state(), TableState::Open);
    }

    #[test]
    fn moves_are_taken_only_while_playing_and_flowing() {
        let mut phase = Phase::Playing(Play::new(None, None));
        assert!(!phase.takes_moves() && phase.waits_for_ready() && !phase.paused());
        phase.play_mut().unwrap().flow = Flow::Paused;
        assert!(!phase.takes_moves() && phase.waits_for_ready() && phase.paused());
        phase.play_mut().unwrap().flow = Flow::Moves;
        assert!(phase.takes_moves() && !phase.waits_for_ready());
        assert!(!Phase::open(None).takes_moves() && !Phase::Closing.waits_for_ready());
    }

    #[test]
    fn robots_wait_only_while_the_restart_goes_on() {
        let (restarting, wait) = watch::channel(true);
        let phase = Phase::Playing(Play::new(None, Some(wait)));
        assert!(phase.robots_waiting());
        restarting.send(false).unwrap();
        assert!(!phase.robots_waiting());
    }

    #[test]
    fn only_an_open_table_or_a_game_in_play_may_idle() {
        assert!(Phase::open(None).idle_since().is_some_and(|since| since.is_some()));
        assert!(Phase::Playing(Play::new(None, None)).idle_since().is_some());
        assert!(Phase::Over { close_at: None }.idle_since().is_none());
        assert!(Phase::Closing.idle_since().is_none());
    }
}
