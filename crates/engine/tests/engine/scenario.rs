//! Helpers for scenario tests that drive a [`Game`] through `Game::apply`:
//! walls built to deal chosen hands, moves that must be accepted or refused,
//! and whole games played by robots.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use mahjong_engine::bots::{Robot, Strategy};
use mahjong_engine::rules::tile::{TileCounts, parse_tiles};
use mahjong_engine::rules::view::decision;
use mahjong_engine::rules::*;

/// The tiles of a space-separated list of tile codes.
pub fn tiles(s: &str) -> Vec<Tile> {
    parse_tiles(s).unwrap()
}

/// The tile of one tile code.
pub fn t(s: &str) -> Tile {
    s.parse().unwrap()
}

/// A wall that deals `hands` (13 tiles each, East first) plus East's 14th
/// tile, then gives `draws` from the live wall in order and `loose` tiles
/// from the back; the rest of the options' tile set (flowers and animals as
/// the options say) fills the middle, in face order.
pub fn wall(hands: [&str; 4], east_14th: &str, draws: &str, loose: &str, options: &GameOptions) -> Vec<Tile> {
    wall_filling(hands.map(Some), east_14th, draws, loose, options)
}

/// As [`wall`], but a `None` hand is dealt the first 13 tiles left over (in
/// face order, once every named tile is set aside): for a player that only
/// ever passes.
pub fn wall_filling(
    hands: [Option<&str>; 4],
    east_14th: &str,
    draws: &str,
    loose: &str,
    options: &GameOptions,
) -> Vec<Tile> {
    let mut rest = TileCounts::of(Tile::full_set(options.flowers, options.animals));
    let mut take = |v: Vec<Tile>| {
        for &x in &v {
            assert!(rest.remove(x), "too many {x} in the scenario");
        }
        v
    };
    let given: Vec<Option<Vec<Tile>>> = hands.iter().map(|h| h.map(|h| take(tiles(h)))).collect();
    let east_14th = take(vec![t(east_14th)]);
    let draws = take(tiles(draws));
    let back = take(tiles(loose));
    let mut spare = Tile::all_faces().flat_map(|f| std::iter::repeat_n(f, rest.get(f) as usize));
    let hands: Vec<Vec<Tile>> =
        given.into_iter().map(|h| h.unwrap_or_else(|| spare.by_ref().take(13).collect())).collect();
    assert!(hands.iter().all(|h| h.len() == 13), "each hand needs 13 tiles");
    let mut wall = Vec::new();
    for r in 0..3 {
        for h in &hands {
            wall.extend_from_slice(&h[r * 4..r * 4 + 4]);
        }
    }
    for h in &hands {
        wall.push(h[12]);
    }
    wall.extend(east_14th);
    wall.extend(draws);
    wall.extend(spare);
    wall.extend(back.iter().rev());
    wall
}

/// Deals `wall` and lets everybody finish declaring; returns the game and
/// everything it emitted.
pub fn start_emitted(options: GameOptions, wall: Vec<Tile>) -> (Game, Vec<Emitted>) {
    let mut g = Game::new(options);
    let mut emitted = g.apply(Command::StartHand { dice: None, wall: WallSource::Tiles(wall) }).unwrap();
    for p in PlayerId::ALL {
        emitted.extend(g.apply(act(p.0, Action::FinishDeclaring)).unwrap());
    }
    (g, emitted)
}

/// Deals `wall` and lets everybody finish declaring.
pub fn start(options: GameOptions, wall: Vec<Tile>) -> Game {
    start_emitted(options, wall).0
}

/// Player `p` makes `action`.
pub fn act(p: u8, action: Action) -> Command {
    Command::Act { player: PlayerId(p), action }
}

/// Player `p` makes `action`, which must be accepted; returns what the game
/// emitted, with the audiences.
pub fn ok_emitted(g: &mut Game, p: u8, action: Action) -> Vec<Emitted> {
    g.apply(act(p, action.clone())).unwrap_or_else(|e| panic!("player {p} {action:?} refused: {e}"))
}

/// Player `p` makes `action`, which must be accepted; returns the events.
pub fn ok(g: &mut Game, p: u8, action: Action) -> Vec<Event> {
    ok_emitted(g, p, action).into_iter().map(|e| e.event).collect()
}

/// Player `p` makes `action`, which must be refused; `check` judges the
/// error, and the game must be unchanged.
fn refused_as(g: &mut Game, p: u8, action: Action, check: impl FnOnce(&GameError)) -> GameError {
    let before = g.clone();
    let err = g.apply(act(p, action.clone())).expect_err(&format!("{action:?} should be refused"));
    check(&err);
    assert!(*g == before, "a refused command changed the game");
    err
}

/// The command is refused with an error containing `why`, and nothing
/// changes. Returns the error, for further checks.
pub fn refused(g: &mut Game, p: u8, action: Action, why: &str) -> GameError {
    let shown = format!("{action:?}");
    refused_as(g, p, action, |err| {
        assert!(err.to_string().contains(why), "{shown}: expected '{why}', got '{err}'");
    })
}

/// The command is refused with exactly `error`, and nothing changes.
pub fn refused_with(g: &mut Game, p: u8, action: Action, error: GameError) {
    let shown = format!("{action:?}");
    refused_as(g, p, action, |err| assert_eq!(*err, error, "{shown}"));
}

/// Every player with a decision due, but those in `except`, passes on the
/// current discard; returns their events.
pub fn pass_all(g: &mut Game, except: &[u8]) -> Vec<Event> {
    let serial = g.hand().unwrap().serial();
    let mut events = Vec::new();
    for p in 0..4u8 {
        if !except.contains(&p) && g.view(Some(PlayerId(p))).hand.unwrap().my_decision.is_some() {
            events.extend(ok(g, p, Action::Pass { discard: serial }));
        }
    }
    events
}

/// One robot move of a game played by [`RobotTable::play`], as its observer
/// sees it: the move has been accepted and the invariants hold.
pub struct RobotMove<'a> {
    /// The seed of the game's stream of walls.
    pub seed: u64,
    /// The game after the move.
    pub game: &'a Game,
    /// The decision that was due from that player.
    pub decision: Decision,
    /// The robot's move.
    pub action: &'a Action,
    /// What the game emitted for the move.
    pub emitted: &'a [Emitted],
}

/// Four robots playing whole games through `Game::apply`.
pub struct RobotTable {
    options: GameOptions,
    robots: [Robot; 4],
    max_steps: Option<usize>,
}

impl RobotTable {
    /// Four robots of the default strategy; games may last any number of
    /// commands.
    pub fn new(options: &GameOptions) -> RobotTable {
        RobotTable::with_strategies(options, [Strategy::default(); 4])
    }

    /// One robot a seat, player 0 first, with these strategies.
    pub fn with_strategies(options: &GameOptions, strategies: [Strategy; 4]) -> RobotTable {
        let robots = strategies.map(|s| Robot::new(s, options.clone()));
        RobotTable { options: options.clone(), robots, max_steps: None }
    }

    /// A game still not over after `max_steps` commands (hands started and
    /// moves) fails the test.
    pub fn max_steps(mut self, max_steps: usize) -> RobotTable {
        self.max_steps = Some(max_steps);
        self
    }

    /// Plays one whole game, each hand dealt from a shuffled wall whose seed
    /// is the next number of a ChaCha8 stream seeded with `seed`. The robot
    /// of the player whose decision is due moves from that player's view;
    /// every move must be accepted and every invariant must hold after it,
    /// or the test fails with a message naming the seed and the move. Each
    /// move is then shown to `observe`. Returns the number of hands dealt.
    pub fn play(&self, seed: u64, mut observe: impl FnMut(&RobotMove)) -> usize {
        let mut walls = ChaCha8Rng::seed_from_u64(seed);
        let mut game = Game::new(self.options.clone());
        let (mut steps, mut hands) = (0, 0);
        while !game.is_over() {
            steps += 1;
            if let Some(max) = self.max_steps {
                assert!(steps < max, "seed {seed}: the game does not end within {max} steps");
            }
            if !game.hand_in_progress() {
                game.apply(Command::StartHand { dice: None, wall: WallSource::Shuffled { seed: walls.next_u64() } })
                    .unwrap();
                hands += 1;
                continue;
            }
            let hand = game.hand().unwrap();
            let (player, due) =
                PlayerId::ALL.into_iter().find_map(|p| decision(hand, hand.seat_of(p)).map(|d| (p, d))).unwrap();
            let action = self.robots[player.index()].decide(&game.view(Some(player))).expect("a decision is due");
            let emitted = game
                .apply(Command::Act { player, action: action.clone() })
                .unwrap_or_else(|e| panic!("seed {seed}: {player:?} {action:?} refused ({due:?}): {e}"));
            invariants::check(&game).unwrap_or_else(|e| panic!("seed {seed}: after {player:?} {action:?}: {e}"));
            observe(&RobotMove { seed, game: &game, decision: due, action: &action, emitted: &emitted });
        }
        hands
    }
}

/// Plays one whole game with four default robots: [`RobotTable::play`].
pub fn play_robot_game(options: &GameOptions, seed: u64, observe: impl FnMut(&RobotMove)) -> usize {
    RobotTable::new(options).play(seed, observe)
}
