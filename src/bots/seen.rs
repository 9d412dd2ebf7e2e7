//! What a robot knows, read from its [`TableView`] and nothing else: its own
//! tiles, the sets and bonus tiles on the table, the discards, and hence how
//! many copies of each face it has not seen.

use super::shape::Counts;
use crate::rules::player_hand::PlayerHand;
use crate::rules::tile::{NORMAL_KINDS, Suit, Tile, Wind};
use crate::rules::view::{HandView, TableView};

/// The robot's knowledge for one decision.
pub(crate) struct Seen<'v> {
    /// The hand as the robot sees it.
    pub view: &'v HandView,
    /// The robot's index in `view.seats` (its seat wind's index).
    pub me: usize,
    /// The robot's seat wind.
    pub wind: Wind,
    /// The prevailing wind.
    pub round: Wind,
    /// The robot's own tiles and sets, as the engine's hand type, so that
    /// every move can be checked exactly as the engine will check it.
    pub hand: PlayerHand,
    /// The robot's concealed normal tiles per face.
    pub counts: Counts,
}

impl<'v> Seen<'v> {
    /// Reads the view; `None` if it is not a player's view of a hand (no
    /// seat of the viewer, or its concealed tiles missing).
    pub fn read(view: &'v TableView) -> Option<Seen<'v>> {
        let viewer = view.viewer?;
        let hv = view.hand.as_ref()?;
        let me = hv.seats.iter().position(|s| s.player == viewer)?;
        let seat = &hv.seats[me];
        let concealed = seat.concealed.as_ref()?;
        let mut hand = PlayerHand::new();
        for &t in concealed {
            hand.draw(t).ok()?;
        }
        for &s in &seat.sets {
            hand.sets.try_push(s).ok()?;
        }
        for &b in &seat.bonus {
            hand.bonus.try_push(b).ok()?;
        }
        hand.calling = seat.calling;
        let mut counts = [0u8; NORMAL_KINDS];
        for &t in concealed {
            if !t.is_bonus() {
                counts[t.index()] += 1;
            }
        }
        Some(Seen { view: hv, me, wind: seat.wind, round: view.round, hand, counts })
    }

    /// Copies of each face not seen: not in the robot's hand, in no set on
    /// the table, not discarded, and not among tiles another player has shown.
    pub fn unseen(&self) -> Counts {
        let mut visible = self.counts;
        let mut see = |t: Tile| {
            if !t.is_bonus() {
                visible[t.index()] = visible[t.index()].saturating_add(1);
            }
        };
        for (i, s) in self.view.seats.iter().enumerate() {
            for set in &s.sets {
                set.tiles().for_each(&mut see);
            }
            if i != self.me
                && let Some(tiles) = &s.concealed
            {
                tiles.iter().copied().for_each(&mut see);
            }
        }
        for &(_, t) in &self.view.discards {
            see(t);
        }
        visible.map(|v| 4u8.saturating_sub(v))
    }

    /// How many sets (pungs, kongs or chows) the robot's concealed tiles must
    /// still make, besides the sets it has declared.
    pub fn need(&self) -> u8 {
        let melds = self.hand.sets.iter().filter(|s| !s.kind.is_pair()).count();
        4u8.saturating_sub(melds as u8)
    }

    /// True if the robot has no exposed set (concealed kongs keep a hand concealed).
    pub fn concealed(&self) -> bool {
        self.hand.sets.iter().all(|s| s.kind.is_concealed())
    }

    /// The robot's seat is the next to play after the seat of `player`.
    pub fn follows(&self, player: crate::rules::PlayerId) -> bool {
        self.view.seats.iter().find(|s| s.player == player).is_some_and(|s| s.wind.next() == self.wind)
    }

    /// The numbered suit to collect for a one-suit hand: the one with most of
    /// the robot's tiles among those its exposed sets still allow; `None` when
    /// its sets already mix two numbered suits.
    pub fn target_suit(&self) -> Option<Suit> {
        let mut set_suit: Option<usize> = None;
        for s in &self.hand.sets {
            if s.tile.is_numbered() {
                let k = s.tile.index() / 9;
                match set_suit {
                    None => set_suit = Some(k),
                    Some(j) if j != k => return None,
                    Some(_) => {}
                }
            }
        }
        if let Some(k) = set_suit {
            return Some(Suit::NUMBERED[k]);
        }
        let mut held = [0u32; 3];
        for (i, &c) in self.counts[..27].iter().enumerate() {
            held[i / 9] += c as u32;
        }
        // Most tiles wins; ties go to the earlier suit, deterministically.
        (0..3).max_by_key(|&k| (held[k], 3 - k)).map(|k| Suit::NUMBERED[k])
    }

    /// True for a tile whose pung (or pair) scores a double or points: a
    /// dragon, the seat wind or the prevailing wind.
    pub fn is_scoring_honour(&self, t: Tile) -> bool {
        t.is_dragon() || t == Tile::wind(self.wind) || t == Tile::wind(self.round)
    }
}
