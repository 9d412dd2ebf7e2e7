//! Between the players' messages and the engine's moves: what a message
//! means in the hand's state ([`PlayerMessage::to_action`]), and the message
//! a client sends for a move ([`PlayerMessage::from_action`]).

use super::player::PlayerMessage;
use crate::rules::command::{Action, Claim, ClosedSet, DiscardUse};

/// What a move's meaning depends on, in the hand's state: mj-server reads
/// `Chow`, `Pung` and `MahJong` differently at different moments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MoveContext {
    /// The player has gone out on a discard and is saying how it uses it.
    pub mah_jonging: bool,
    /// A chow of the player's was granted without a position.
    pub chow_position_pending: bool,
    /// A discard (or a kong) is open to claims.
    pub claim_window_open: bool,
}

impl PlayerMessage {
    /// The engine's move this message makes in `context`; `None` for a
    /// message that is not a move (`Ready`, option queries...).
    pub fn to_action(&self, context: MoveContext) -> Option<Action> {
        use PlayerMessage as P;
        let serial = |d: &i32| u32::try_from(*d).unwrap_or(0);
        Some(match self {
            P::DeclareSpecial { tile: Some(t) } => Action::DeclareBonus { tile: *t },
            P::DeclareSpecial { tile: None } => Action::FinishDeclaring,
            P::Discard { tile, calling } => Action::Discard { tile: *tile, calling: *calling },
            P::NoClaim { discard } => Action::Pass { discard: serial(discard) },
            P::Chow { cpos, .. } if context.mah_jonging => Action::UseDiscard { use_as: DiscardUse::Chow(*cpos) },
            P::Chow { cpos: Some(position), .. } if context.chow_position_pending => {
                Action::ChooseChowPosition { position: *position }
            }
            P::Chow { discard, cpos } => Action::Claim { discard: serial(discard), claim: Claim::Chow(*cpos) },
            P::Pung { .. } if context.mah_jonging => Action::UseDiscard { use_as: DiscardUse::Pung },
            P::Pung { discard } => Action::Claim { discard: serial(discard), claim: Claim::Pung },
            P::Kong { discard } => Action::Claim { discard: serial(discard), claim: Claim::Kong },
            P::MahJong { discard } if context.claim_window_open => {
                Action::Claim { discard: serial(discard), claim: Claim::MahJong }
            }
            P::MahJong { .. } => Action::MahJong,
            P::DeclareClosedKong { tile } => Action::DeclareClosedKong { tile: *tile },
            P::AddToPung { tile } => Action::AddToPung { tile: *tile },
            P::Pair => Action::UseDiscard { use_as: DiscardUse::Pair },
            P::SpecialSet => Action::UseDiscard { use_as: DiscardUse::SpecialSet },
            P::FormClosedPung { tile } => Action::FormClosedSet { set: ClosedSet::Pung(*tile) },
            P::FormClosedChow { tile } => Action::FormClosedSet { set: ClosedSet::Chow(*tile) },
            P::FormClosedPair { tile } => Action::FormClosedSet { set: ClosedSet::Pair(*tile) },
            P::FormClosedSpecialSet => Action::FormClosedSet { set: ClosedSet::SpecialSet },
            P::ShowTiles => Action::ShowTiles,
            _ => return None,
        })
    }

    /// The message an mj-server client sends for the engine's move: the
    /// inverse of [`PlayerMessage::to_action`] in the move's own context
    /// (`discard` is the serial of the discard open to claims, which a chow's
    /// position refers to). `None` for East's tile swap, which the protocol
    /// cannot say.
    pub fn from_action(action: &Action, discard: u32) -> Option<PlayerMessage> {
        use PlayerMessage as P;
        let serial = |d: u32| i32::try_from(d).unwrap_or(i32::MAX);
        Some(match action {
            Action::DeclareBonus { tile } => P::DeclareSpecial { tile: Some(*tile) },
            Action::FinishDeclaring => P::DeclareSpecial { tile: None },
            Action::Discard { tile, calling } => P::Discard { tile: *tile, calling: *calling },
            Action::Pass { discard } => P::NoClaim { discard: serial(*discard) },
            Action::Claim { discard, claim } => {
                let discard = serial(*discard);
                match claim {
                    Claim::Chow(cpos) => P::Chow { discard, cpos: *cpos },
                    Claim::Pung => P::Pung { discard },
                    Claim::Kong => P::Kong { discard },
                    Claim::MahJong => P::MahJong { discard },
                }
            }
            Action::ChooseChowPosition { position } => P::Chow { discard: serial(discard), cpos: Some(*position) },
            // Going out on one's own draw, and using the Mah-Jong discard:
            // serial 0, as mj-server's clients send them.
            Action::MahJong => P::MahJong { discard: 0 },
            Action::UseDiscard { use_as } => match use_as {
                DiscardUse::Chow(cpos) => P::Chow { discard: 0, cpos: *cpos },
                DiscardUse::Pung => P::Pung { discard: 0 },
                DiscardUse::Pair => P::Pair,
                DiscardUse::SpecialSet => P::SpecialSet,
            },
            Action::DeclareClosedKong { tile } => P::DeclareClosedKong { tile: *tile },
            Action::AddToPung { tile } => P::AddToPung { tile: *tile },
            Action::FormClosedSet { set } => match set {
                ClosedSet::Pung(tile) => P::FormClosedPung { tile: *tile },
                ClosedSet::Chow(tile) => P::FormClosedChow { tile: *tile },
                ClosedSet::Pair(tile) => P::FormClosedPair { tile: *tile },
                ClosedSet::SpecialSet => P::FormClosedSpecialSet,
            },
            Action::ShowTiles => P::ShowTiles,
            Action::ChooseSwap { .. } | Action::PassTile { .. } => return None,
        })
    }
}
