//! The prompt: what one player may do now, sent to that player alone
//! whenever it changes (and on connecting), after the events that changed
//! it. A client plays from prompts alone: the moves listed are exactly the
//! moves the engine accepts.

use tokio::time::Instant;

use crate::protocol::ws::{Deadline, Prompt};
use crate::rules::command::{Action, PlayerId};
use crate::rules::game::Game;
use crate::rules::tile::Tile;
use crate::rules::view::{Claimable, Decision};

/// The claim window being timed.
#[derive(Clone, Copy, Debug)]
pub struct ClaimDeadline {
    /// The discard's (or kong's) serial number.
    pub serial: u32,
    /// When it closes, on the table's clock.
    pub at: Instant,
    /// When it closes, in µs since the Unix epoch (told to players).
    pub at_us: u64,
}

/// What a prompt is made from: the table as it stands.
#[derive(Clone, Copy, Debug)]
pub struct Moment<'a> {
    /// The last number of the table's stream.
    pub seq: u64,
    /// The game, once started.
    pub game: Option<&'a Game>,
    /// Moves may be made now: the game is being played, neither paused nor
    /// waiting for `ready`.
    pub playing: bool,
    /// The claim window being timed, if any.
    pub claim_deadline: Option<ClaimDeadline>,
}

/// What the player in `seat` may do at `moment`; `ready` if the table waits
/// for that player's `ready`.
pub fn prompt(seat: u8, ready: bool, moment: Moment<'_>) -> Prompt {
    let mut prompt = Prompt {
        seq: moment.seq,
        ready,
        decision: None,
        actions: Vec::new(),
        claimable: None,
        deadline: None,
        drawn: None,
        live_tiles_left: None,
        waits: Vec::new(),
    };
    let Some(game) = moment.game.filter(|g| g.hand_in_progress()) else { return prompt };
    let Some(hand) = game.view(Some(PlayerId(seat))).hand else { return prompt };
    prompt.live_tiles_left = Some(hand.live_tiles_left);
    // Told whatever the player may do now: a hand waits between its turns.
    if game.options().show_waits
        && let Some(h) = game.hand()
    {
        let mine = h.seat(h.seat_of(PlayerId(seat)));
        if mine.concealed.len() % 3 == 1 {
            prompt.waits = mine.waits(game.options().seven_pairs).collect();
        }
    }
    if !moment.playing || hand.my_actions.is_empty() {
        return prompt;
    }
    prompt.decision = hand.my_decision;
    prompt.actions = hand.my_actions;
    prompt.drawn = hand.drawn;
    let answering = matches!(hand.my_decision, Some(Decision::AnswerDiscard | Decision::AnswerKong));
    if answering || hand.my_decision == Some(Decision::ChooseChowPosition) {
        prompt.claimable = hand.claimable;
    }
    if let (true, Some(d), Some(c)) = (answering, moment.claim_deadline, hand.claimable)
        && d.serial == c.discard
    {
        let ms_left = d.at.saturating_duration_since(Instant::now()).as_millis() as u64;
        prompt.deadline = Some(Deadline { discard: d.serial, at_us: d.at_us, ms_left });
    }
    prompt
}

/// What each seat was last told, to tell it again only what changed: not
/// a prompt's stream position, time left or wall count, which change on
/// their own.
#[derive(Debug, Default)]
pub struct Prompts {
    sent: [Option<Sent>; 4],
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Sent {
    ready: bool,
    decision: Option<Decision>,
    actions: Vec<Action>,
    claimable: Option<Claimable>,
    deadline: Option<(u32, u64)>,
    drawn: Option<Tile>,
    waits: Vec<Tile>,
}

impl Prompts {
    /// Records `prompt` as `seat`'s; true if it says something new.
    pub fn changed(&mut self, seat: u8, prompt: &Prompt) -> bool {
        let sent = Sent {
            ready: prompt.ready,
            decision: prompt.decision,
            actions: prompt.actions.clone(),
            claimable: prompt.claimable,
            deadline: prompt.deadline.map(|d| (d.discard, d.at_us)),
            drawn: prompt.drawn,
            waits: prompt.waits.clone(),
        };
        let Some(slot) = self.sent.get_mut(seat as usize) else { return false };
        if slot.as_ref() == Some(&sent) {
            return false;
        }
        *slot = Some(sent);
        true
    }

    /// Forgets what `seat` was told (a new connection is told afresh).
    pub fn forget(&mut self, seat: u8) {
        if let Some(slot) = self.sent.get_mut(seat as usize) {
            *slot = None;
        }
    }
}
