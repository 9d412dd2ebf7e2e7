//! The prompt: what one player may do now, sent to that player alone
//! whenever it changes (and on connecting), after the events that changed
//! it. A client plays from prompts alone: the moves listed are exactly the
//! moves the engine accepts.

use super::actor::Actor;
use crate::protocol::ws::{Deadline, Prompt, ServerMessage, TableState};
use crate::rules::command::{Action, PlayerId};
use crate::rules::tile::Tile;
use crate::rules::view::{Claimable, Decision};

/// What a prompt says that is worth sending again when it changes (not its
/// stream position, the time left or the wall's count, which change on
/// their own).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sent {
    ready: bool,
    decision: Option<Decision>,
    actions: Vec<Action>,
    claimable: Option<Claimable>,
    deadline: Option<(u32, u64)>,
    drawn: Option<Tile>,
}

impl Sent {
    fn of(p: &Prompt) -> Sent {
        Sent {
            ready: p.ready,
            decision: p.decision,
            actions: p.actions.clone(),
            claimable: p.claimable,
            deadline: p.deadline.map(|d| (d.discard, d.at_us)),
            drawn: p.drawn,
        }
    }
}

impl Actor {
    /// What the player in `seat` may do now.
    pub fn prompt(&self, seat: u8) -> Prompt {
        let ready = self.waiting_ready && self.unready().contains(&seat);
        let playing = self.state == TableState::Playing && !self.paused && !self.waiting_ready;
        let mut prompt = Prompt {
            seq: self.stream.seq(),
            ready,
            decision: None,
            actions: Vec::new(),
            claimable: None,
            deadline: None,
            drawn: None,
            live_tiles_left: None,
        };
        let Some(game) = self.game.as_ref().filter(|g| g.hand_in_progress()) else { return prompt };
        let view = game.view(Some(PlayerId(seat)));
        let Some(hand) = view.hand else { return prompt };
        prompt.live_tiles_left = Some(hand.live_tiles_left);
        if !playing || hand.my_actions.is_empty() {
            return prompt;
        }
        prompt.decision = hand.my_decision;
        prompt.actions = hand.my_actions;
        prompt.drawn = hand.drawn;
        let answering = matches!(hand.my_decision, Some(Decision::AnswerDiscard | Decision::AnswerKong));
        if answering || hand.my_decision == Some(Decision::ChooseChowPosition) {
            prompt.claimable = hand.claimable;
        }
        if let (true, Some(d), Some(c)) = (answering, self.claim_deadline, hand.claimable)
            && d.serial == c.discard
        {
            let ms_left = d.at.saturating_duration_since(tokio::time::Instant::now()).as_millis() as u64;
            prompt.deadline = Some(Deadline { discard: d.serial, at_us: d.at_us, ms_left });
        }
        prompt
    }

    /// Sends `seat`'s connection its prompt if it changed since the last one.
    pub fn send_prompt(&mut self, seat: u8) {
        let Some(connection) = self.seats.get(seat).and_then(|s| s.connection) else { return };
        let prompt = self.prompt(seat);
        let sent = Sent::of(&prompt);
        if self.prompts[seat as usize].as_ref() == Some(&sent) {
            return;
        }
        self.prompts[seat as usize] = Some(sent);
        self.reply(connection, &ServerMessage::Prompt(prompt));
    }

    /// Sends every connected player its prompt where it changed.
    pub fn send_prompts(&mut self) {
        for seat in 0..4 {
            self.send_prompt(seat);
        }
    }
}
