//! What one player (or a spectator) may see of a game: a snapshot built from
//! the game state with everything hidden that the viewer must not know.
//!
//! A player sees its own concealed tiles; of the others, only how many they
//! hold, until they reveal them after Mah-Jong (or on a wash-out with
//! `ShowOnWashout`). Nobody sees the wall, only how many tiles are left.
//! Robots decide from this view alone, exactly like remote players.

use serde::{Deserialize, Serialize};

use super::command::{Action, Claim, PlayerId};
use super::game::Game;
use super::hand::{Answer, Hand, Konging, Outcome, Phase};
use super::options::GameOptions;
use super::scoring::{HandScore, Whence};
use super::settlement::Settlement;
use super::swap::SwapDirection;
use super::tile::{Tile, Wind};
use super::tileset::TileSet;

/// A snapshot of the game for one viewer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableView {
    /// The viewing player, or `None` for a spectator.
    pub viewer: Option<PlayerId>,
    /// The game's options (public: every player is told them).
    pub options: GameOptions,
    /// Cumulative scores by player id.
    pub scores: [i64; 4],
    /// The prevailing wind.
    pub round: Wind,
    /// Hands dealt so far.
    pub hands_started: u32,
    /// The game has ended.
    pub game_over: bool,
    /// The current (or last) hand.
    pub hand: Option<HandView>,
}

/// One hand as the viewer may see it.
/// (`Default`: a blank view, for [`Game::refresh_view`] to fill.)
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandView {
    /// 1-based hand number.
    pub number: u32,
    /// Which of the dealer's extra hands this is (0: the deal has just passed).
    pub extra_hands: u32,
    /// The dice thrown for the hand, if known.
    pub dice: Option<[u8; 2]>,
    /// The phase of the hand.
    pub phase: Phase,
    /// The player who is East.
    pub east: PlayerId,
    /// The player due to act (declaring, discarding, the discarder or konger
    /// being answered, or the winner).
    pub to_act: PlayerId,
    /// Where the last tile of the player to act came from.
    pub whence: Whence,
    /// The seats, East first.
    pub seats: [SeatView; 4],
    /// Tiles left in the live wall.
    pub live_tiles_left: usize,
    /// Tiles left in the dead wall.
    pub dead_tiles_left: usize,
    /// Discards lying on the table, in order.
    pub discards: Vec<(PlayerId, Tile)>,
    /// The discard or kong the others are answering, if any.
    pub claimable: Option<Claimable>,
    /// After Mah-Jong on a discard or a robbed kong: the tile the winner has
    /// yet to place in its hand (it has left the table; everybody saw it).
    pub pending_discard: Option<Tile>,
    /// The tile the viewer has just drawn, while it is the viewer's turn to
    /// discard (a calling hand may only discard this tile).
    pub drawn: Option<Tile>,
    /// After Mah-Jong: the tile the winner went out with (everybody was told
    /// it, or saw it discarded or konged).
    pub winning_tile: Option<Tile>,
    /// The least number of doubles a winning hand needs in this hand (0: no
    /// minimum; see `MinimumDoubles`).
    pub minimum_doubles: u32,
    /// The viewer's own answer to it (`None` for spectators).
    pub my_answer: Option<Answer>,
    /// What the viewer is expected to do now.
    pub my_decision: Option<Decision>,
    /// Every move the viewer may make now, exactly as `act` takes them (the
    /// engine accepts a move exactly when it is listed); empty for
    /// spectators and when nothing is awaited of the viewer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub my_actions: Vec<Action>,
    /// East's tile swap, while it is under way.
    pub swap: Option<SwapView>,
    /// How the hand ended.
    pub outcome: Option<HandOutcome>,
}

/// A discard (or kong) open to claims.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claimable {
    /// The tile.
    pub tile: Tile,
    /// Its serial number, to quote in claims and passes.
    pub discard: u32,
    /// Who discarded or konged it.
    pub from: PlayerId,
    /// Set when it is a kong that may be robbed rather than a discard.
    pub kong: Option<Konging>,
}

/// East's tile swap as the viewer may see it: who has put a tile down, and
/// only the viewer's own tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwapView {
    /// The lots East chose; `None` while East decides.
    pub lots: Option<u8>,
    /// The lot being passed, 1-based (0 while East decides).
    pub lot: u8,
    /// Where the current lot goes.
    pub direction: Option<SwapDirection>,
    /// Which seats (East first) have put their tile down for the current lot.
    pub passed: [bool; 4],
    /// The tile the viewer has put down for the current lot (`None` for
    /// spectators and before the viewer has chosen).
    pub my_tile: Option<Tile>,
}

/// One seat as the viewer may see it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatView {
    /// Who sits here.
    pub player: PlayerId,
    /// The seat wind.
    pub wind: Wind,
    /// The concealed tiles: the viewer's own, or anyone's once revealed.
    pub concealed: Option<Vec<Tile>>,
    /// How many concealed tiles the player holds.
    pub concealed_count: usize,
    /// Declared sets (concealed kongs included: they are laid on the table).
    pub sets: Vec<TileSet>,
    /// Bonus tiles set aside: flowers, seasons and animals.
    pub bonus: Vec<Tile>,
    /// Declared a calling hand.
    pub calling: bool,
    /// The hand's score, once scored.
    pub score: Option<Box<HandScore>>,
}

/// How a hand ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandOutcome {
    /// Washed out.
    WashOut,
    /// Won and settled.
    Won {
        /// The winner (the first, when several went out on one discard).
        winner: PlayerId,
        /// Every winner, `winner` first.
        winners: Vec<PlayerId>,
        /// The settlement, by seat.
        settlement: Settlement,
    },
}

/// What a player must (or may) do now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Declare bonus tiles and concealed kongs, then finish declaring.
    Declare,
    /// Discard (or go Mah-Jong, declare a kong or a bonus tile).
    Discard,
    /// Claim or pass on the current discard.
    AnswerDiscard,
    /// Rob the kong being declared, or pass.
    AnswerKong,
    /// Say where the granted chow's tile goes.
    ChooseChowPosition,
    /// Say how the discard that gave Mah-Jong is used.
    UseDiscard,
    /// East: say how many lots of tiles to swap (`TileSwap`).
    ChooseSwap,
    /// Put a tile face down for the current lot of East's tile swap.
    PassTile,
    /// Form the rest of the winning hand.
    DeclareWinningHand,
    /// Form sets if wished, then show the remaining tiles.
    ShowHand,
}

impl Game {
    /// The game as `viewer` may see it (`None`: a spectator).
    pub fn view(&self, viewer: Option<PlayerId>) -> TableView {
        let mut view = TableView {
            viewer,
            options: self.options().clone(),
            scores: self.scores(),
            round: self.round(),
            hands_started: self.hands_started(),
            game_over: self.is_over(),
            hand: None,
        };
        self.refresh_view(viewer, &mut view);
        view
    }

    /// Makes `view` (any earlier view: any viewer's, of any game) the game
    /// as `viewer` may see it, in place: its lists are refilled rather than
    /// allocated again, and nothing large is moved, for a caller that asks
    /// for a view at every move (the simulator's robots).
    pub fn refresh_view(&self, viewer: Option<PlayerId>, view: &mut TableView) {
        let TableView { viewer: to_viewer, options, scores, round, hands_started, game_over, hand } = view;
        *to_viewer = viewer;
        options.clone_from(self.options());
        *scores = self.scores();
        *round = self.round();
        *hands_started = self.hands_started();
        *game_over = self.is_over();
        match self.hand() {
            None => *hand = None,
            Some(h) => {
                let hand = hand.get_or_insert_with(HandView::default);
                fill_hand_view(h, viewer, self.options().show_on_washout, hand);
                hand.my_actions.clear();
                if let Some(p) = viewer {
                    self.legal_actions_into(p, &mut hand.my_actions);
                }
            }
        }
    }
}

/// `to` emptied and filled with `from`, keeping its memory.
fn refill<T: Copy>(to: &mut Vec<T>, from: &[T]) {
    to.clear();
    to.extend_from_slice(from);
}

/// Makes `v` hand `h` as `viewer` may see it, all but `my_actions`. Every
/// field is named (no `..`), so that a field added to [`HandView`] cannot
/// be forgotten here.
fn fill_hand_view(h: &Hand, viewer: Option<PlayerId>, show_on_washout: bool, v: &mut HandView) {
    let HandView {
        number,
        extra_hands,
        dice,
        phase,
        east,
        to_act,
        whence,
        seats,
        live_tiles_left,
        dead_tiles_left,
        discards,
        claimable,
        pending_discard,
        drawn,
        winning_tile,
        minimum_doubles,
        my_answer,
        my_decision,
        my_actions: _,
        swap,
        outcome,
    } = v;
    let washout_shown = show_on_washout && h.outcome() == Some(&Outcome::WashOut);
    for (wind, seat) in Wind::ALL.into_iter().zip(seats.iter_mut()) {
        let p = h.player_at(wind);
        let s = h.seat(wind);
        let SeatView { player, wind: seat_wind, concealed, concealed_count, sets, bonus, calling, score } = seat;
        *player = p;
        *seat_wind = wind;
        if viewer == Some(p) || s.hand_declared || washout_shown {
            refill(concealed.get_or_insert_with(Vec::new), &s.concealed);
        } else {
            *concealed = None;
        }
        *concealed_count = s.concealed.len();
        refill(sets, &s.sets);
        refill(bonus, &s.bonus);
        *calling = s.calling;
        *score = h.hand_score(wind).cloned().map(Box::new);
    }
    *claimable = h.claim_window_open().then(|| h.current_tile()).flatten().map(|tile| Claimable {
        tile,
        discard: h.serial(),
        from: h.player_at(h.to_act()),
        kong: h.konging(),
    });
    let my_seat = viewer.map(|p| h.seat_of(p));
    *my_answer = my_seat.filter(|_| claimable.is_some()).map(|s| h.answers()[s.index()]);
    *pending_discard = (h.phase() == Phase::MahJonging && h.discard_use_pending()).then(|| h.current_tile()).flatten();
    // Only the viewer's own last draw, and only while it is the viewer's turn
    // after drawing (at the start of play the hand's last draw may be
    // someone else's replacement tile).
    let drew = matches!(h.whence(), Whence::Wall | Whence::Loose);
    let my_turn = my_seat == Some(h.to_act()) && h.phase() == Phase::Discarding && h.konging().is_none() && drew;
    *drawn = h.last_drawn().filter(|&(seat, _)| my_turn && Some(seat) == my_seat).map(|(_, t)| t);
    let won = h.phase() == Phase::MahJonging || matches!(h.outcome(), Some(Outcome::Won { .. }));
    *winning_tile = won.then(|| h.current_tile()).flatten();
    *number = h.number;
    *extra_hands = h.extra_hands;
    *dice = h.dice;
    *phase = h.phase();
    *east = h.east;
    *to_act = h.player_at(h.to_act());
    *whence = h.whence();
    *live_tiles_left = h.wall().live_remaining();
    *dead_tiles_left = h.wall().dead_remaining();
    discards.clear();
    discards.extend(h.discards().iter().map(|&(w, t)| (h.player_at(w), t)));
    *minimum_doubles = h.minimum_doubles();
    *my_decision = my_seat.and_then(|s| decision(h, s));
    *swap = h.swap().map(|s| SwapView {
        lots: s.lots(),
        lot: s.lot(),
        direction: s.direction(),
        passed: Wind::ALL.map(|w| s.has_passed(w)),
        my_tile: my_seat.and_then(|w| s.passed_tile(w)),
    });
    *outcome = h.outcome().map(|o| match o {
        Outcome::WashOut => HandOutcome::WashOut,
        Outcome::Won { winner, winners, settlement } => HandOutcome::Won {
            winner: h.player_at(*winner),
            winners: winners.iter().map(|&w| h.player_at(w)).collect(),
            settlement: settlement.clone(),
        },
    });
}

/// What the player at `seat` is expected to do, if anything.
pub fn decision(h: &Hand, seat: Wind) -> Option<Decision> {
    let acting = h.to_act() == seat;
    match h.phase() {
        Phase::Declaring if h.konging().is_some() => kong_answer(h, seat),
        Phase::Declaring => acting.then_some(Decision::Declare),
        Phase::Swapping => h.swap().and_then(|s| match s.lots() {
            None => (seat == Wind::East).then_some(Decision::ChooseSwap),
            Some(_) => (!s.has_passed(seat)).then_some(Decision::PassTile),
        }),
        Phase::Discarding if h.konging().is_some() => kong_answer(h, seat),
        Phase::Discarding => acting.then_some(Decision::Discard),
        Phase::Discarded if h.chow_position_pending() => {
            let chow = matches!(h.answers()[seat.index()], Answer::Claim(Claim::Chow(_)));
            (chow && seat == h.to_act().next()).then_some(Decision::ChooseChowPosition)
        }
        Phase::Discarded => {
            (!acting && h.answers()[seat.index()] == Answer::Waiting).then_some(Decision::AnswerDiscard)
        }
        Phase::MahJonging => {
            let me = h.seat(seat);
            // A winner on the same discard as another waits for its turn.
            let waiting_winner = !acting && h.winners().contains(&seat);
            if me.hand_declared || h.hand_score(seat).is_some() || waiting_winner {
                None
            } else if acting && h.chow_position_pending() {
                Some(Decision::ChooseChowPosition)
            } else if acting && h.discard_use_pending() {
                Some(Decision::UseDiscard)
            } else if acting {
                Some(Decision::DeclareWinningHand)
            } else {
                Some(Decision::ShowHand)
            }
        }
        Phase::Finished => None,
    }
}

fn kong_answer(h: &Hand, seat: Wind) -> Option<Decision> {
    (h.to_act() != seat && h.answers()[seat.index()] == Answer::Waiting).then_some(Decision::AnswerKong)
}
