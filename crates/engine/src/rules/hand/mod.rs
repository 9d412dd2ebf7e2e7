//! One hand (deal) in play: the deal, declaring bonus tiles, discards and
//! claims, kongs and robbing them, going Mah-Jong, the declarations after it,
//! scoring and settlement, or a wash-out.
//!
//! The state fields follow mj-server's game module closely (the player due to
//! act, where the last tile came from, who supplied it, the serial number of
//! the current discard, the claims), because scoring depends on them exactly.
//! Every handler checks first and changes nothing when it refuses.

use serde::{Deserialize, Serialize};

use super::command::{Claim, ClosedSet, DiscardUse, GameError, PlayerId};
use super::danger::{self, Danger};
use super::event::{Audience, Emitted, Event};
use super::options::GameOptions;
use super::player_hand::PlayerHand;
use super::scoring::{self, HandScore, ScoringInput, Whence, WinContext};
use super::settlement::{self, Settlement, SettlementInput};
use super::swap::SwapState;
use super::tile::{ALL_KINDS, Tile, Wind};
use super::tileset::{ChowPosition, SetKind, TileSet};
use super::wall::Wall;

mod claims;
mod going_out;
mod swapping;

/// The phase of a hand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// After the deal: players in turn declare bonus tiles and concealed kongs.
    #[default]
    Declaring,
    /// East's tile swap (`TileSwap`), before East's first discard.
    Swapping,
    /// The player to move must discard (or declare Mah-Jong, a kong, a bonus tile).
    Discarding,
    /// A tile was discarded; the others claim or pass.
    Discarded,
    /// A player went Mah-Jong; hands are being declared and scored.
    MahJonging,
    /// The hand is over: settled, or washed out.
    Finished,
}

/// A kong waiting for the other players to rob it or pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Konging {
    /// A tile added to an exposed pung.
    AddingToPung,
    /// A concealed kong (robbable only for Thirteen Unique Wonders).
    DeclaringKong,
}

/// A player's answer to the current discard or kong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// Not yet answered.
    Waiting,
    /// Passed.
    NoClaim,
    /// Claimed.
    Claim(Claim),
}

/// How a hand ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The hand was washed out.
    WashOut,
    /// A player went Mah-Jong and the hand was settled.
    Won {
        /// The winner's seat (with several winners, the first in turn after
        /// the discarder).
        winner: Wind,
        /// Every winner, `winner` first: more than one only with
        /// `MultipleWinners`, when several went out on the same discard.
        winners: Vec<Wind>,
        /// The settlement.
        settlement: Settlement,
    },
}

/// One hand in play.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hand {
    /// 1-based number of the hand in the game.
    pub number: u32,
    /// The player who is East.
    pub east: PlayerId,
    /// The prevailing wind.
    pub round: Wind,
    /// East's wins in an unbroken run before this hand.
    pub east_wins_before: u32,
    /// Which of the dealer's extra hands this is (0: the deal has just
    /// passed). Sets the dealer bonus (seed 002).
    pub extra_hands: u32,
    /// The dice thrown for this hand, if known.
    pub dice: Option<[u8; 2]>,
    pub(crate) wall: Wall,
    /// The players' tiles, indexed by seat (East, South, West, North).
    pub(crate) seats: [PlayerHand; 4],
    pub(crate) phase: Phase,
    /// The seat due to act (declaring, discarding, the discarder, the winner).
    pub(crate) player: Wind,
    pub(crate) whence: Whence,
    pub(crate) supplier: Option<Wind>,
    /// The tile last drawn, discarded, claimed or konged.
    pub(crate) tile: Option<Tile>,
    pub(crate) serial: u32,
    pub(crate) answers: [Answer; 4],
    pub(crate) chow_pending: bool,
    pub(crate) mj_pending: bool,
    /// With `MultipleWinners`: everyone who went out on the discard, in turn
    /// after the discarder. They declare one after the other; `player` is the
    /// one declaring, `winners[winner_turn]`.
    pub(crate) winners: Vec<Wind>,
    pub(crate) winner_turn: usize,
    pub(crate) konging: Option<Konging>,
    pub(crate) kong_made: bool,
    pub(crate) kong_upon_kong: bool,
    pub(crate) dangerous_discard: bool,
    pub(crate) no_choice: bool,
    /// Tiles visible on the table, per face.
    pub(crate) exposed: [u8; ALL_KINDS],
    /// Tiles discarded, per face.
    pub(crate) discarded: [u8; ALL_KINDS],
    /// The discards lying on the table, in order, with the seat that made
    /// each (a claimed discard leaves the table).
    pub(crate) discards: Vec<(Wind, Tile)>,
    /// A player's hand just before it obtained its latest tile: the winner's
    /// copy is what "filling the only place", "almost concealed" and Nine
    /// Gates look at.
    pub(crate) before_last_tile: Option<(Wind, PlayerHand)>,
    /// The last tile drawn in the hand, and by whom.
    pub(crate) last_drawn: Option<(Wind, Tile)>,
    pub(crate) scores: [Option<HandScore>; 4],
    pub(crate) outcome: Option<Outcome>,
    /// East's tile swap, while it is under way (see the swap module).
    pub(crate) swap: Option<SwapState>,
    /// The least number of doubles a winning hand needs in this hand (0: no
    /// minimum): `MinimumDoubles` when dealt, perhaps raised later.
    pub(crate) minimum_doubles: u32,
}

fn illegal(reason: &'static str) -> GameError {
    GameError::Illegal(reason)
}

/// The rules a move is judged by: the game's options and mj-server's
/// `--no-special-scores`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rules<'a> {
    pub options: &'a GameOptions,
    pub no_special_scores: bool,
}

/// The moves need the rules and where to put events.
pub(crate) struct Ctx<'a> {
    pub rules: Rules<'a>,
    pub out: &'a mut Vec<Emitted>,
}

impl<'a> std::ops::Deref for Ctx<'a> {
    type Target = Rules<'a>;
    fn deref(&self) -> &Rules<'a> {
        &self.rules
    }
}

impl Ctx<'_> {
    fn all(&mut self, event: Event) {
        self.out.push(Emitted { to: Audience::Everyone, event });
    }
    fn only(&mut self, p: PlayerId, event: Event) {
        self.out.push(Emitted { to: Audience::Only(p), event });
    }
}

impl Hand {
    /// Deals a new hand from `wall`: three rounds of four tiles to East, South,
    /// West and North, then one each, then East's fourteenth.
    pub(crate) fn deal(
        number: u32,
        east: PlayerId,
        round: Wind,
        east_wins_before: u32,
        wall: Wall,
        ctx: &mut Ctx<'_>,
    ) -> Hand {
        let mut hand = Hand {
            number,
            east,
            round,
            east_wins_before,
            extra_hands: 0,
            dice: None,
            wall,
            seats: std::array::from_fn(|_| PlayerHand::new()),
            phase: Phase::Declaring,
            player: Wind::East,
            whence: Whence::Wall,
            supplier: None,
            tile: None,
            serial: 0,
            answers: [Answer::Waiting; 4],
            chow_pending: false,
            mj_pending: false,
            winners: Vec::new(),
            winner_turn: 0,
            konging: None,
            kong_made: false,
            kong_upon_kong: false,
            dangerous_discard: false,
            no_choice: false,
            exposed: [0; ALL_KINDS],
            discarded: [0; ALL_KINDS],
            discards: Vec::new(),
            before_last_tile: None,
            last_drawn: None,
            scores: Default::default(),
            outcome: None,
            swap: None,
            minimum_doubles: ctx.options.minimum_doubles,
        };
        for _ in 0..3 {
            for seat in Wind::ALL {
                for _ in 0..4 {
                    hand.deal_one(seat, ctx);
                }
            }
        }
        for seat in Wind::ALL {
            hand.deal_one(seat, ctx);
        }
        // In case East wins with the dealt hand.
        hand.before_last_tile = Some((Wind::East, hand.seats[0].clone()));
        hand.deal_one(Wind::East, ctx);
        hand
    }

    fn deal_one(&mut self, seat: Wind, ctx: &mut Ctx<'_>) {
        // A full wall always holds the 53 tiles of a deal.
        let Some(t) = self.wall.draw_live() else { return };
        let _ = self.seats[seat.index()].draw(t);
        if seat == Wind::East {
            self.tile = Some(t);
        }
        self.emit_draw(seat, t, false, ctx);
    }

    /// The player sitting at `seat`.
    pub fn player_at(&self, seat: Wind) -> PlayerId {
        PlayerId(((self.east.index() + seat.index()) % 4) as u8)
    }

    /// The seat of `player`.
    pub fn seat_of(&self, player: PlayerId) -> Wind {
        Wind::from_index(player.index() + 4 - self.east.index())
    }

    /// The dice threw a double (which doubles every score with `DoubleDice`).
    pub fn double_dice(&self) -> bool {
        self.dice.is_some_and(|[a, b]| a == b)
    }

    /// The phase of the hand.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// How the hand ended, once it has.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// The hand of the player at `seat`.
    pub fn seat(&self, seat: Wind) -> &PlayerHand {
        &self.seats[seat.index()]
    }

    /// The wall.
    pub fn wall(&self) -> &Wall {
        &self.wall
    }

    /// The seat due to act: declaring, discarding, the discarder or konger
    /// whose tile is being claimed, or the winner.
    pub fn to_act(&self) -> Wind {
        self.player
    }

    /// The tile last drawn, discarded, claimed or konged.
    pub fn current_tile(&self) -> Option<Tile> {
        self.tile
    }

    /// The last tile drawn in the hand, and by whom.
    pub fn last_drawn(&self) -> Option<(Wind, Tile)> {
        self.last_drawn
    }

    /// Serial number of the current discard or kong.
    pub fn serial(&self) -> u32 {
        self.serial
    }

    /// Where the last tile of the player to act came from.
    pub fn whence(&self) -> Whence {
        self.whence
    }

    /// The kong waiting to be robbed, if any.
    pub fn konging(&self) -> Option<Konging> {
        self.konging
    }

    /// A granted chow claim (or the winner's chow) waits for its position.
    pub fn chow_position_pending(&self) -> bool {
        self.chow_pending
    }

    /// The winner still has to say how it uses the discard it went out with.
    pub fn discard_use_pending(&self) -> bool {
        self.mj_pending
    }

    /// Each seat's answer to the current discard or kong.
    pub fn answers(&self) -> [Answer; 4] {
        self.answers
    }

    /// The score of the hand at `seat`, once scored.
    pub fn hand_score(&self, seat: Wind) -> Option<&HandScore> {
        self.scores[seat.index()].as_ref()
    }

    /// The least number of doubles a winning hand needs in this hand (0: no
    /// minimum).
    pub fn minimum_doubles(&self) -> u32 {
        self.minimum_doubles
    }

    /// The discards lying on the table, in order, with the seat that made each.
    pub fn discards(&self) -> &[(Wind, Tile)] {
        &self.discards
    }

    /// How many of each face are visible on the table.
    pub fn exposed_counts(&self) -> &[u8; ALL_KINDS] {
        &self.exposed
    }

    fn emit_draw(&mut self, seat: Wind, t: Tile, loose: bool, ctx: &mut Ctx<'_>) {
        self.last_drawn = Some((seat, t));
        let p = self.player_at(seat);
        let live_tiles_left = self.wall.live_remaining() as u32;
        let drew = |tile| Event::Drew { player: p, tile, loose, live_tiles_left };
        ctx.out.push(Emitted { to: Audience::Only(p), event: drew(Some(t)) });
        ctx.out.push(Emitted { to: Audience::AllBut(p), event: drew(None) });
    }

    fn snapshot(&mut self, seat: Wind) {
        self.before_last_tile = Some((seat, self.seats[seat.index()].clone()));
    }

    /// True while the other players must answer a discard or a kong.
    pub fn claim_window_open(&self) -> bool {
        self.phase == Phase::Discarded || self.konging.is_some()
    }

    // ----- declaring bonus tiles -------------------------------------------

    /// Sets a bonus tile aside and draws its replacement.
    pub(crate) fn declare_bonus(&mut self, seat: Wind, t: Tile, ctx: &mut Ctx<'_>) {
        let _ = self.seats[seat.index()].declare_bonus(t);
        self.exposed[t.index()] += 1;
        ctx.all(Event::DeclaredBonus { player: self.player_at(seat), tile: t });
        let loose = ctx.options.flowers_loose;
        let next = if loose { self.wall.peek_loose() } else { self.wall.peek_live() };
        if next.is_none() {
            self.wash_out(ctx);
            return;
        }
        if self.phase == Phase::Discarding {
            self.snapshot(seat);
        }
        if loose { self.draw_loose(seat, ctx) } else { self.draw_live(seat, ctx) }
    }

    /// The player to declare is done; after North, play (or the tile swap) starts.
    pub(crate) fn finish_declaring(&mut self, seat: Wind, ctx: &mut Ctx<'_>) {
        ctx.all(Event::FinishedDeclaring { player: self.player_at(seat) });
        if seat == Wind::North {
            self.phase = Phase::Discarding;
            self.whence = Whence::Wall;
            self.player = Wind::East;
            if ctx.options.tile_swap {
                // East's tile swap (seed 003) comes before East's first discard.
                self.start_swap(ctx);
            } else {
                ctx.all(Event::PlayStarted { east: self.east });
            }
        } else {
            self.player = seat.next();
        }
    }

    fn draw_live(&mut self, seat: Wind, ctx: &mut Ctx<'_>) {
        let Some(t) = self.wall.draw_live() else { return };
        let _ = self.seats[seat.index()].draw(t);
        if self.phase == Phase::Discarded {
            self.phase = Phase::Discarding;
        }
        self.tile = Some(t);
        self.player = seat;
        self.whence = Whence::Wall;
        self.konging = None;
        self.emit_draw(seat, t, false, ctx);
    }

    fn draw_loose(&mut self, seat: Wind, ctx: &mut Ctx<'_>) {
        let Some(t) = self.wall.draw_loose() else { return };
        let _ = self.seats[seat.index()].draw(t);
        self.tile = Some(t);
        self.whence = Whence::Loose;
        self.konging = None;
        self.emit_draw(seat, t, true, ctx);
    }

    // ----- kongs from the hand ----------------------------------------------

    /// Declares a concealed kong; the others may rob it (Thirteen Unique Wonders only).
    pub(crate) fn declare_closed_kong(&mut self, seat: Wind, t: Tile, ctx: &mut Ctx<'_>) {
        let _ = self.seats[seat.index()].declare_closed_kong(t);
        self.start_kong(seat, t, Konging::DeclaringKong);
        self.exposed[t.index()] += 4;
        ctx.all(Event::DeclaredClosedKong { player: self.player_at(seat), tile: t, discard: self.serial });
    }

    /// Adds the fourth tile to an exposed pung; the others may rob the kong.
    pub(crate) fn add_to_pung(&mut self, seat: Wind, t: Tile, ctx: &mut Ctx<'_>) {
        let _ = self.seats[seat.index()].add_to_pung(t);
        self.start_kong(seat, t, Konging::AddingToPung);
        self.exposed[t.index()] += 1;
        // A kong can be robbed, so it is like a discard.
        self.dangerous_discard = false;
        self.no_choice = false;
        ctx.all(Event::AddedToPung { player: self.player_at(seat), tile: t, discard: self.serial });
    }

    fn start_kong(&mut self, seat: Wind, t: Tile, how: Konging) {
        self.konging = Some(how);
        self.tile = Some(t);
        self.serial += 1;
        self.answers = [Answer::Waiting; 4];
        self.note_kong();
        let d = danger::hand_danger(&self.seats[seat.index()].sets);
        self.seats[seat.index()].danger[seat.index()] = d;
    }

    fn note_kong(&mut self) {
        if self.kong_made {
            self.kong_upon_kong = true;
        }
        self.kong_made = true;
    }

    // ----- discards and claims ----------------------------------------------

    /// Discards a tile (with an Original Call if `calling`); the others answer.
    pub(crate) fn discard(&mut self, seat: Wind, t: Tile, calling: bool, ctx: &mut Ctx<'_>) {
        let hand = &mut self.seats[seat.index()];
        let first = hand.no_discard;
        let _ = hand.discard(t);
        if calling {
            hand.calling = true;
            hand.original_call = first;
        }
        self.phase = Phase::Discarded;
        self.player = seat;
        self.tile = Some(t);
        self.serial += 1;
        self.answers = [Answer::Waiting; 4];
        self.chow_pending = false;
        self.kong_made = false;
        self.kong_upon_kong = false;
        self.dangerous_discard = false;
        self.no_choice = false;
        self.exposed[t.index()] += 1;
        self.discarded[t.index()] += 1;
        self.discards.push((seat, t));
        ctx.all(Event::Discarded { player: self.player_at(seat), tile: t, discard: self.serial, calling });
    }

    /// Sets the claimant's own danger signals from its declared sets.
    fn refresh_danger(&mut self, s: Wind) {
        let d = danger::hand_danger(&self.seats[s.index()].sets);
        self.seats[s.index()].danger[s.index()] = d;
    }

    /// Decides whether the discard just claimed was dangerous and whether the
    /// discarder had a safe alternative; an unexcused dangerous discard makes
    /// the discarder liable to the claimant and clears earlier liabilities.
    fn mark_dangerous_discard(&mut self) {
        let s = self.player;
        let (Some(sup), Some(t)) = (self.supplier, self.tile) else { return };
        let live = self.wall.live_remaining();
        let mut danger = danger::tile_feeds(self.seats[s.index()].danger[s.index()], t);
        if danger::end_danger(live, self.discarded[t.index()]) {
            danger.insert(Danger::END);
        }
        if danger.is_empty() {
            return;
        }
        let no_choice = self.seats[sup.index()].concealed.iter().all(|&c| {
            Wind::ALL
                .iter()
                .any(|&i| i != sup && !danger::tile_feeds(self.seats[i.index()].danger[i.index()], c).is_empty())
                || danger::end_danger(live, self.discarded[c.index()])
        });
        if !no_choice {
            let claimant = &mut self.seats[s.index()];
            claimant.danger[sup.index()].insert(danger);
            for i in Wind::ALL {
                if i != s && i != sup {
                    claimant.danger[i.index()] = Danger::NONE;
                }
            }
        }
        self.dangerous_discard = true;
        self.no_choice = no_choice;
    }

    fn announce_danger(&self, ctx: &mut Ctx<'_>) {
        if self.dangerous_discard
            && let Some(sup) = self.supplier
        {
            ctx.all(Event::DangerousDiscard {
                player: self.player_at(sup),
                discard: self.serial,
                no_choice: self.no_choice,
            });
        }
    }

    // ----- going out and declaring ------------------------------------------

    /// How many winners after the first have taken the shared winning
    /// discard (with `MultipleWinners`): that many copies of it are in play
    /// beyond the one tile (for the tile-conservation invariant).
    pub fn shared_discard_copies(&self) -> usize {
        self.winner_turn
    }

    /// Everyone who went out this hand, in the order they declare.
    pub fn winners(&self) -> &[Wind] {
        &self.winners
    }

    fn wash_out(&mut self, ctx: &mut Ctx<'_>) {
        self.wash_out_because("wall exhausted", ctx);
    }

    /// Washes the hand out: the wall is exhausted, or the table abandons it.
    pub(crate) fn wash_out_because(&mut self, reason: &str, ctx: &mut Ctx<'_>) {
        self.phase = Phase::Finished;
        self.konging = None;
        self.outcome = Some(Outcome::WashOut);
        ctx.all(Event::WashedOut { reason: reason.into() });
        if ctx.options.show_on_washout {
            for seat in Wind::ALL {
                let h = &self.seats[seat.index()];
                if !h.concealed.is_empty() {
                    ctx.all(Event::ShowedTiles { player: self.player_at(seat), tiles: h.concealed.to_vec() });
                }
            }
        }
    }
}
