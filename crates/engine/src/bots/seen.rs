//! What a robot knows, read from its [`TableView`] and nothing else: its own
//! tiles, the sets and bonus tiles on the table, the discards, and hence how
//! many copies of each face it has not seen.

use super::shape::Counts;
use crate::rules::arrangement::GoingOut;
use crate::rules::options::GameOptions;
use crate::rules::player_hand::PlayerHand;
use crate::rules::scoring::{Whence, WinContext};
use crate::rules::tile::{ALL_KINDS, NORMAL_KINDS, Suit, Tile, Wind};
use crate::rules::view::{HandView, TableView};

/// What the robot takes the table to show when judging its own going out:
/// nothing (it only matters for "filling the only place", which needs the
/// hand before the winning tile, which the robot does not assume either).
static NOTHING_EXPOSED: [u8; ALL_KINDS] = [0; ALL_KINDS];

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
        // Only the first discard can make a calling declaration.
        hand.original_call = seat.calling;
        // The view does not say whether the robot has discarded yet; assume
        // it has, so that its judgement of going out never counts a blessing
        // the engine might not grant.
        hand.no_discard = false;
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

    /// The engine's judge of the robot going out with `tile` (if known) from
    /// `whence`, or `None` when no restriction on going out is in force.
    ///
    /// What the view tells is taken from it: the restrictions in this hand,
    /// the tile and where it came from, whether the live wall is exhausted.
    /// For the rest the robot assumes what gives fewest doubles (no blessing,
    /// no kong upon kong, no 13th win, nothing for flowers and seasons, the
    /// hand before the winning tile unknown), so a hand it judges fit to go
    /// out the engine judges so too. Without the tile, nothing the robot
    /// counts depends on it: it matters only for a loose tile or a robbed
    /// kong, whose tile the robot always knows, and for what the assumptions
    /// above leave out.
    pub fn going_out<'a>(
        &'a self,
        options: &'a GameOptions,
        whence: Whence,
        tile: Option<Tile>,
    ) -> Option<GoingOut<'a>> {
        if !GoingOut::restricted(options, self.view.minimum_doubles) {
            return None;
        }
        let tile = tile.or_else(|| self.hand.concealed.first().copied()).unwrap_or(Tile::RED);
        let win = WinContext {
            whence,
            tile,
            exposed: &NOTHING_EXPOSED,
            live_exhausted: self.view.live_tiles_left == 0,
            live_exactly_exhausted: false,
            before_winning_tile: None,
            only_east_discarded: false,
            east_wins_before: 0,
            kong_upon_kong: false,
        };
        Some(GoingOut {
            options,
            minimum_doubles: self.view.minimum_doubles,
            seat: self.wind,
            prevailing: self.round,
            no_special_scores: true,
            win,
        })
    }

    /// True for a tile whose pung (or pair) scores a double or points: a
    /// dragon, the seat wind or the prevailing wind.
    pub fn is_scoring_honour(&self, t: Tile) -> bool {
        t.is_dragon() || t == Tile::wind(self.wind) || t == Tile::wind(self.round)
    }
}
