//! The course of a game: hands, rounds, the prevailing wind, when the deal
//! passes, cumulative scores and the end of the game.
//!
//! East keeps the deal after winning and after a wash-out; otherwise the deal
//! passes to South. After East's 13th win in an unbroken run the deal passes
//! anyway. When the deal comes back to the first East a new round starts; the
//! game ends after `NumRounds` rounds.

use super::command::{Action, Command, GameError, PlayerId, WallSource};
use super::event::{Emitted, Event};
use super::hand::{Ctx, Hand, Outcome, Phase, Rules};
use super::options::GameOptions;
use super::tile::Wind;
use super::wall::Wall;

/// A whole game: the engine's top-level value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Game {
    options: GameOptions,
    no_special_scores: bool,
    scores: [i64; 4],
    round: Wind,
    east: PlayerId,
    /// East's wins in the current unbroken run (washouts neither count nor break it).
    east_wins: u32,
    /// Hands dealt since the deal last passed: the next hand is the dealer's
    /// `extra_hands`-th extra hand (seed 002).
    extra_hands: u32,
    completed_rounds: u32,
    /// The next hand starts a new round.
    new_round: bool,
    hands_started: u32,
    /// The number of the last hand whose result has been applied to the scores.
    accounted: u32,
    over: bool,
    hand: Option<Hand>,
}

impl Game {
    /// A new game with these options; player 0 is the first East.
    pub fn new(options: GameOptions) -> Game {
        Game {
            options,
            no_special_scores: false,
            scores: [0; 4],
            round: Wind::East,
            east: PlayerId(0),
            east_wins: 0,
            extra_hands: 0,
            completed_rounds: 0,
            new_round: false,
            hands_started: 0,
            accounted: 0,
            over: false,
            hand: None,
        }
    }

    /// Suppresses points and doubles for flowers and seasons (mj-server's
    /// `--no-special-scores`).
    pub fn with_no_special_scores(mut self, on: bool) -> Game {
        self.no_special_scores = on;
        self
    }

    /// The game's options.
    pub fn options(&self) -> &GameOptions {
        &self.options
    }

    /// Changes an option between hands (the game manager's right in
    /// mj-server). The whole set must stay valid; on error nothing changes.
    pub fn set_option(&mut self, name: &str, value: &str) -> Result<(), super::options::OptionError> {
        if self.hand_in_progress() {
            return Err(super::options::OptionError::Invalid {
                name: name.to_string(),
                reason: "options can be changed only between hands".into(),
            });
        }
        self.options.set_checked(name, value)
    }

    /// Cumulative scores by player id.
    pub fn scores(&self) -> [i64; 4] {
        self.scores
    }

    /// The prevailing wind (of the current hand, or of the next one between hands).
    pub fn round(&self) -> Wind {
        self.round
    }

    /// East of the current hand, or of the next one between hands.
    pub fn east(&self) -> PlayerId {
        self.east
    }

    /// Which of the dealer's extra hands the current (or next) hand is; 0
    /// when the deal has just passed.
    pub fn extra_hands(&self) -> u32 {
        self.extra_hands
    }

    /// True when the next hand will start a new round.
    pub fn next_hand_starts_round(&self) -> bool {
        self.new_round
    }

    /// Number of hands dealt so far.
    pub fn hands_started(&self) -> u32 {
        self.hands_started
    }

    /// True once the game has ended.
    pub fn is_over(&self) -> bool {
        self.over
    }

    /// The current hand, or the last one once it has finished.
    pub fn hand(&self) -> Option<&Hand> {
        self.hand.as_ref()
    }

    /// True when a hand is being played.
    pub fn hand_in_progress(&self) -> bool {
        self.hand.as_ref().is_some_and(|h| h.phase() != Phase::Finished)
    }

    /// The rules moves are judged by.
    fn rules(&self) -> Rules<'_> {
        Rules { options: &self.options, no_special_scores: self.no_special_scores }
    }

    /// Every move `player` may make now (empty when nothing is awaited of
    /// it, between hands, or once the game is over). `apply` accepts an
    /// `Act` of `player` exactly when its action is in this list.
    pub fn legal_actions(&self, player: PlayerId) -> Vec<Action> {
        let mut actions = Vec::new();
        self.legal_actions_into(player, &mut actions);
        actions
    }

    /// [`Game::legal_actions`], appended to `out`.
    pub fn legal_actions_into(&self, player: PlayerId, out: &mut Vec<Action>) {
        match self.hand.as_ref() {
            Some(h) if !self.over && player.index() < 4 && h.phase() != Phase::Finished => {
                h.legal_actions(h.seat_of(player), self.rules(), out)
            }
            _ => {}
        }
    }

    /// Why `apply` would refuse `player`'s `action` now, without applying it.
    pub fn check_action(&self, player: PlayerId, action: &Action) -> Result<(), GameError> {
        if player.index() >= 4 {
            return Err(GameError::NoSuchPlayer(player.0));
        }
        if self.over {
            return Err(GameError::GameOver);
        }
        match self.hand.as_ref() {
            Some(h) if h.phase() != Phase::Finished => h.check(h.seat_of(player), action, self.rules()),
            _ => Err(GameError::NoHand),
        }
    }

    /// Applies a command. Returns the events it caused, each tagged with who
    /// may see it, or an error that leaves the game unchanged.
    pub fn apply(&mut self, command: Command) -> Result<Vec<Emitted>, GameError> {
        let mut out = Vec::new();
        match command {
            Command::StartHand { wall, dice } => self.start_hand(wall, dice, &mut out)?,
            Command::AbandonHand => {
                let (hand, mut ctx) = self.playing(&mut out)?;
                hand.wash_out_because("abandoned", &mut ctx);
            }
            Command::EndGame => {
                if self.over {
                    return Err(GameError::GameOver);
                }
                if self.hand_in_progress() {
                    return Err(GameError::HandInProgress);
                }
                self.over = true;
                out.push(Emitted {
                    to: super::event::Audience::Everyone,
                    event: Event::GameOver { scores: self.scores },
                });
                return Ok(out);
            }
            Command::ClaimTimeout => {
                let (hand, mut ctx) = self.playing(&mut out)?;
                hand.claim_timeout(&mut ctx)?;
            }
            Command::Act { player, action } => {
                if player.index() >= 4 {
                    return Err(GameError::NoSuchPlayer(player.0));
                }
                let (hand, mut ctx) = self.playing(&mut out)?;
                let seat = hand.seat_of(player);
                act(hand, seat, action, &mut ctx)?;
            }
        }
        self.after_hand_events(&mut out);
        Ok(out)
    }

    fn playing<'a>(&'a mut self, out: &'a mut Vec<Emitted>) -> Result<(&'a mut Hand, Ctx<'a>), GameError> {
        if self.over {
            return Err(GameError::GameOver);
        }
        match self.hand.as_mut() {
            Some(h) if h.phase() != Phase::Finished => {
                Ok((h, Ctx { rules: Rules { options: &self.options, no_special_scores: self.no_special_scores }, out }))
            }
            _ => Err(GameError::NoHand),
        }
    }

    fn start_hand(
        &mut self,
        source: WallSource,
        dice: Option<[u8; 2]>,
        out: &mut Vec<Emitted>,
    ) -> Result<(), GameError> {
        if self.over {
            return Err(GameError::GameOver);
        }
        if self.hand_in_progress() {
            return Err(GameError::HandInProgress);
        }
        if let Some([a, b]) = dice
            && !((1..=6).contains(&a) && (1..=6).contains(&b))
        {
            return Err(GameError::Dice(a, b));
        }
        let (wall, dice) = match source {
            WallSource::Shuffled { seed } => {
                (Wall::shuffled(&self.options, seed), dice.or_else(|| Some(dice_from_seed(seed))))
            }
            WallSource::Tiles(tiles) => {
                (Wall::from_tiles(tiles, &self.options).map_err(|e| GameError::Wall(e.to_string()))?, dice)
            }
        };
        self.hands_started += 1;
        out.push(Emitted {
            to: super::event::Audience::Everyone,
            event: Event::HandStarted {
                hand: self.hands_started,
                east: self.east,
                round: self.round,
                new_round: self.new_round,
                extra_hands: self.extra_hands,
                dice,
            },
        });
        self.new_round = false;
        let mut ctx = Ctx { rules: self.rules(), out };
        let mut hand = Hand::deal(self.hands_started, self.east, self.round, self.east_wins, wall, &mut ctx);
        hand.extra_hands = self.extra_hands;
        hand.dice = dice;
        hand.minimum_doubles = self.options.minimum_doubles_in(self.extra_hands);
        self.hand = Some(hand);
        Ok(())
    }

    /// When the command finished the hand: settle scores, decide who deals
    /// next, and end the game after the last round.
    fn after_hand_events(&mut self, out: &mut Vec<Emitted>) {
        let Some(hand) = &self.hand else { return };
        if hand.phase() != Phase::Finished || self.accounted == hand.number {
            return;
        }
        let deal_passes = match hand.outcome().cloned() {
            Some(Outcome::Won { winners, settlement, .. }) => {
                let mut deltas = [0i64; 4];
                for seat in Wind::ALL {
                    let p = hand.player_at(seat);
                    deltas[p.index()] = settlement.deltas[seat.index()];
                    self.scores[p.index()] += deltas[p.index()];
                }
                out.push(Emitted {
                    to: super::event::Audience::Everyone,
                    event: Event::Settled { settlement, deltas, scores: self.scores },
                });
                // East keeps the deal if it went out, alone or with others.
                let east_won = winners.contains(&Wind::East);
                if east_won {
                    self.east_wins += 1;
                }
                !east_won || self.options.deal_passes_on_east_win || self.east_wins == 13
            }
            // A wash-out changes no score; by default East deals again.
            _ => self.options.deal_passes_on_washout,
        };
        if deal_passes {
            self.pass_deal(out);
        } else {
            self.extra_hands += 1;
        }
        self.accounted = self.hands_started;
    }
}

impl Game {
    /// The deal passes to the next player; after the last player of the
    /// last round the game ends.
    fn pass_deal(&mut self, out: &mut Vec<Emitted>) {
        self.extra_hands = 0;
        let next_east = PlayerId(((self.east.index() + 1) % 4) as u8);
        if next_east == PlayerId(0) {
            if self.completed_rounds + 1 >= self.options.num_rounds {
                self.over = true;
                out.push(Emitted {
                    to: super::event::Audience::Everyone,
                    event: Event::GameOver { scores: self.scores },
                });
                return;
            }
            self.completed_rounds += 1;
            self.round = self.round.next();
            self.new_round = true;
        }
        self.east = next_east;
        self.east_wins = 0;
    }
}

/// The dice of a shuffled wall, thrown from its seed so that the same seed
/// always gives the same hand.
fn dice_from_seed(seed: u64) -> [u8; 2] {
    use rand::{Rng, SeedableRng};
    // A different stream from the shuffle's, so the dice do not echo the wall.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x0D1C_E0D1_CE0D_1CE0);
    [rng.gen_range(1..=6), rng.gen_range(1..=6)]
}

/// Checks a player's move, then makes it: the check is the only refusal.
fn act(hand: &mut Hand, seat: Wind, action: Action, ctx: &mut Ctx<'_>) -> Result<(), GameError> {
    hand.check(seat, &action, ctx.rules)?;
    match action {
        Action::DeclareBonus { tile } => hand.declare_bonus(seat, tile, ctx),
        Action::FinishDeclaring => hand.finish_declaring(seat, ctx),
        Action::Discard { tile, calling } => hand.discard(seat, tile, calling, ctx),
        Action::Pass { discard } => hand.pass(seat, discard, ctx),
        Action::Claim { discard, claim } => hand.claim(seat, discard, claim, ctx),
        Action::ChooseChowPosition { position } => hand.choose_chow_position(seat, position, ctx),
        Action::MahJong => hand.mah_jong(seat, ctx),
        Action::DeclareClosedKong { tile } => hand.declare_closed_kong(seat, tile, ctx),
        Action::AddToPung { tile } => hand.add_to_pung(seat, tile, ctx),
        Action::UseDiscard { use_as } => hand.use_discard(seat, use_as, ctx),
        Action::FormClosedSet { set } => hand.form_closed_set(seat, set, ctx),
        Action::ShowTiles => hand.show_tiles(seat, ctx),
        Action::ChooseSwap { lots } => hand.choose_swap(lots, ctx),
        Action::PassTile { tile } => hand.pass_tile(seat, tile, ctx),
    }
    Ok(())
}
