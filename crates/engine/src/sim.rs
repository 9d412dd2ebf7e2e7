//! An in-process simulator: four robots play complete games against each
//! other through the engine, with no network and no clock in the loop, as
//! fast as the robots decide.
//!
//! The simulator plays the table's part: it deals each hand from a seeded
//! wall, asks the players the engine is waiting for (in player order) for
//! their moves, and applies them. After every command it checks the engine's
//! invariants and every settlement, so a long simulation doubles as a test
//! of the engine; a refused robot move is a bug too, and every such problem
//! is reported as an error naming the game and hand, never a panic.
//!
//! The same base seed gives the same games: game `i` draws its hands' wall
//! seeds from a ChaCha8 stream seeded by the base seed and `i`.

use std::time::Instant;

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::bots::{Robot, Strategy, StrategyError};
use crate::rules::command::{Command, GameError, PlayerId, WallSource};
use crate::rules::event::{Emitted, Event};
use crate::rules::game::Game;
use crate::rules::hand::{Hand, Outcome, Phase};
use crate::rules::invariants;
use crate::rules::options::GameOptions;
use crate::rules::scoring::Whence;
use crate::rules::view::{self, Decision, TableView};

/// Commands one game may take before it is deemed stuck. A real game takes a
/// few thousand.
pub const DEFAULT_MAX_STEPS: u64 = 200_000;

/// What to simulate.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    /// Number of games (at least 1).
    pub games: u64,
    /// Base seed: the same seed gives the same games.
    pub seed: u64,
    /// The game options.
    pub options: GameOptions,
    /// The robots' strategies, by player id.
    pub strategies: [Strategy; 4],
    /// Commands a game may take before it is deemed stuck.
    pub max_steps: u64,
}

impl SimConfig {
    /// `games` games from `seed` with these options and default robots.
    pub fn new(games: u64, seed: u64, options: GameOptions) -> SimConfig {
        SimConfig { games, seed, options, strategies: [Strategy::default(); 4], max_steps: DEFAULT_MAX_STEPS }
    }
}

/// Wins counted by seat wind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SeatWins {
    /// Wins as East.
    #[serde(rename = "E")]
    pub east: u64,
    /// Wins as South.
    #[serde(rename = "S")]
    pub south: u64,
    /// Wins as West.
    #[serde(rename = "W")]
    pub west: u64,
    /// Wins as North.
    #[serde(rename = "N")]
    pub north: u64,
}

/// The statistics of a simulation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimSummary {
    /// Games played.
    pub games: u64,
    /// The base seed.
    pub seed: u64,
    /// Hands dealt.
    pub hands: u64,
    /// Hands washed out.
    pub washouts: u64,
    /// Hands won, by the winner's seat wind.
    pub wins_by_seat: SeatWins,
    /// Hands won, by player id.
    pub wins_by_player: [u64; 4],
    /// Hands won with a tile from the wall (live or loose) rather than a
    /// discard or a robbed kong.
    pub self_drawn_wins: u64,
    /// Mean final score of each player.
    pub mean_final_score: [f64; 4],
    /// Mean score of the winning hands (0 if none).
    pub mean_winning_hand_score: f64,
    /// Games simulated per second (timing: differs from run to run).
    pub games_per_second: f64,
    /// Total time taken, in seconds (timing).
    pub elapsed_seconds: f64,
    /// Median time per game, in milliseconds (timing).
    pub median_game_ms: f64,
}

impl SimSummary {
    /// The summary with the timing fields zeroed, for comparing runs.
    pub fn without_timing(&self) -> SimSummary {
        SimSummary { games_per_second: 0.0, elapsed_seconds: 0.0, median_game_ms: 0.0, ..self.clone() }
    }
}

/// The result of one game.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GameRecord {
    /// Final scores by player id.
    pub final_scores: [i64; 4],
    /// Hands dealt.
    pub hands: u32,
    /// Hands washed out.
    pub washouts: u32,
    /// Wins by seat wind (East, South, West, North).
    pub wins_by_seat: [u32; 4],
    /// Wins by player id.
    pub wins_by_player: [u32; 4],
    /// Wins with a tile from the wall.
    pub self_drawn_wins: u32,
    /// Sum of the winning hands' scores.
    pub winning_score_total: i64,
    /// Commands applied.
    pub steps: u64,
}

/// Why a simulation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// Zero games asked for.
    #[error("nothing to simulate: the number of games must be at least 1")]
    NoGames,
    /// A strategy is out of range.
    #[error("strategy of player {player}: {source}")]
    Strategy {
        /// The player id.
        player: u8,
        /// What is wrong.
        source: StrategyError,
    },
    /// Something went wrong in a game.
    #[error("{}, hand {hand}: {problem}", game_label(.game, .seed))]
    Game {
        /// The game's index in the simulation (`None` for a single game).
        game: Option<u64>,
        /// The game's seed.
        seed: u64,
        /// The hand number (1-based).
        hand: u32,
        /// What went wrong.
        problem: Problem,
    },
}

fn game_label(game: &Option<u64>, seed: &u64) -> String {
    match game {
        Some(g) => format!("game {g} (game seed {seed})"),
        None => format!("game with seed {seed}"),
    }
}

/// What went wrong in a game.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Problem {
    /// The engine refused a robot's move: a robot bug (or an engine bug).
    #[error("the engine refused player {player}'s move {action} (asked to {decision:?}): {reason}")]
    Refused {
        /// The player id.
        player: u8,
        /// What the engine awaited.
        decision: Decision,
        /// The move, as JSON.
        action: String,
        /// The engine's reason.
        reason: GameError,
    },
    /// A robot had a decision to make but made no move.
    #[error("player {player} made no move when asked to {decision:?}")]
    NoMove {
        /// The player id.
        player: u8,
        /// What the engine awaited.
        decision: Decision,
    },
    /// The engine refused to deal.
    #[error("the engine refused to deal: {0}")]
    Deal(GameError),
    /// An engine invariant broke.
    #[error("invariant broken after {command}: {reason}")]
    Invariant {
        /// The command after which it broke, as JSON.
        command: String,
        /// The invariant's complaint.
        reason: String,
    },
    /// A settlement does not sum to zero.
    #[error("settlement after {command} does not sum to zero: {deltas:?}")]
    Settlement {
        /// The command that caused it, as JSON.
        command: String,
        /// The settlement's deltas by seat.
        deltas: [i64; 4],
    },
    /// No player has a move but the hand is not over.
    #[error("nobody is asked to move but the hand is not over (phase {0:?})")]
    Stuck(Phase),
    /// The game went on too long.
    #[error("the game is still not over after {0} commands")]
    StepCap(u64),
}

/// The seed of game `index` of a simulation with base seed `base`: the
/// first number of the ChaCha8 stream `index` of `base`.
pub fn game_seed(base: u64, index: u64) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(base);
    rng.set_stream(index);
    rng.next_u64()
}

fn check_strategies(strategies: &[Strategy; 4]) -> Result<(), SimError> {
    for (p, s) in strategies.iter().enumerate() {
        s.validate().map_err(|source| SimError::Strategy { player: p as u8, source })?;
    }
    Ok(())
}

/// Plays one complete game of four robots (player `i` with `strategies[i]`),
/// the hands' walls drawn from a ChaCha8 generator seeded with `seed`.
pub fn play_game(options: &GameOptions, strategies: &[Strategy; 4], seed: u64) -> Result<GameRecord, SimError> {
    play_game_capped(options, strategies, seed, DEFAULT_MAX_STEPS)
}

/// [`play_game`] with a limit on the number of commands.
pub fn play_game_capped(
    options: &GameOptions,
    strategies: &[Strategy; 4],
    seed: u64,
    max_steps: u64,
) -> Result<GameRecord, SimError> {
    check_strategies(strategies)?;
    let robots = strategies.map(|s| Robot::new(s, options.clone()));
    let mut walls = ChaCha8Rng::seed_from_u64(seed);
    let mut game = Game::new(options.clone());
    let mut record = GameRecord::default();
    // Each robot's view, refreshed in place for each of its decisions.
    let mut views: [TableView; 4] = PlayerId::ALL.map(|p| game.view(Some(p)));
    let fail = |hand: u32, problem: Problem| SimError::Game { game: None, seed, hand, problem };
    while !game.is_over() {
        if record.steps >= max_steps {
            return Err(fail(game.hands_started(), Problem::StepCap(record.steps)));
        }
        record.steps += 1;
        let hand_in_progress = game.hand_in_progress();
        let Some(hand) = game.hand().filter(|_| hand_in_progress) else {
            let command = deal(&mut walls);
            let events = game.apply(command.clone()).map_err(|e| fail(game.hands_started() + 1, Problem::Deal(e)))?;
            check(&game, &command, &events).map_err(|p| fail(game.hands_started(), p))?;
            continue;
        };
        let number = hand.number;
        let Some((player, decision)) = first_mover(hand) else {
            return Err(fail(number, Problem::Stuck(hand.phase())));
        };
        let view = &mut views[player.index()];
        game.refresh_view(Some(player), view);
        let action = robots[player.index()]
            .decide(view)
            .ok_or_else(|| fail(number, Problem::NoMove { player: player.0, decision }))?;
        let command = Command::Act { player, action };
        let events = game.apply(command.clone()).map_err(|reason| {
            let action = match &command {
                Command::Act { action, .. } => describe(action),
                _ => String::new(),
            };
            fail(number, Problem::Refused { player: player.0, decision, action, reason })
        })?;
        check(&game, &command, &events).map_err(|p| fail(number, p))?;
        tally(&game, &events, &mut record);
    }
    record.final_scores = game.scores();
    record.hands = game.hands_started();
    Ok(record)
}

/// The next hand's deal, its wall drawn from `walls`.
fn deal(walls: &mut ChaCha8Rng) -> Command {
    Command::StartHand { dice: None, wall: WallSource::Shuffled { seed: walls.next_u64() } }
}

/// The first player, in id order, that the engine is waiting for in `hand`,
/// with what it awaits.
fn first_mover(hand: &Hand) -> Option<(PlayerId, Decision)> {
    PlayerId::ALL.into_iter().find_map(|p| view::decision(hand, hand.seat_of(p)).map(|d| (p, d)))
}

fn describe<T: Serialize>(x: &T) -> String {
    serde_json::to_string(x).unwrap_or_else(|e| format!("<unprintable: {e}>"))
}

/// The engine's invariants and the settlements of `events`.
fn check(game: &Game, command: &Command, events: &[Emitted]) -> Result<(), Problem> {
    invariants::check(game).map_err(|reason| Problem::Invariant { command: describe(command), reason })?;
    for e in events {
        if let Event::Settled { settlement, deltas, .. } = &e.event {
            for d in [settlement.deltas, *deltas] {
                if d.iter().sum::<i64>() != 0 {
                    return Err(Problem::Settlement { command: describe(command), deltas: d });
                }
            }
        }
    }
    Ok(())
}

/// Counts a hand's result when `events` finished it.
fn tally(game: &Game, events: &[Emitted], record: &mut GameRecord) {
    for e in events {
        match &e.event {
            Event::WashedOut { .. } => record.washouts += 1,
            Event::Settled { .. } => {
                let Some(hand) = game.hand() else { continue };
                let Some(Outcome::Won { winner, .. }) = hand.outcome() else { continue };
                record.wins_by_seat[winner.index()] += 1;
                record.wins_by_player[hand.player_at(*winner).index()] += 1;
                record.winning_score_total += hand.hand_score(*winner).map_or(0, |s| s.score);
                if matches!(hand.whence(), Whence::Wall | Whence::Loose) {
                    record.self_drawn_wins += 1;
                }
            }
            _ => {}
        }
    }
}

/// Plays `config.games` games and summarises them.
pub fn simulate(config: &SimConfig) -> Result<SimSummary, SimError> {
    if config.games == 0 {
        return Err(SimError::NoGames);
    }
    check_strategies(&config.strategies)?;
    let start = Instant::now();
    let mut times = Vec::with_capacity(config.games.min(1 << 20) as usize);
    let mut total = GameRecord::default();
    let mut wins = [0u64; 4];
    let mut by_player = [0u64; 4];
    let mut scores = [0i64; 4];
    let (mut hands, mut washouts, mut self_drawn) = (0u64, 0u64, 0u64);
    for index in 0..config.games {
        let seed = game_seed(config.seed, index);
        let t0 = Instant::now();
        let r = play_game_capped(&config.options, &config.strategies, seed, config.max_steps).map_err(|e| match e {
            SimError::Game { seed, hand, problem, .. } => SimError::Game { game: Some(index), seed, hand, problem },
            other => other,
        })?;
        times.push(t0.elapsed().as_secs_f64());
        hands += r.hands as u64;
        washouts += r.washouts as u64;
        self_drawn += r.self_drawn_wins as u64;
        for p in 0..4 {
            wins[p] += r.wins_by_seat[p] as u64;
            by_player[p] += r.wins_by_player[p] as u64;
            scores[p] += r.final_scores[p];
        }
        total.winning_score_total += r.winning_score_total;
    }
    let elapsed = start.elapsed().as_secs_f64();
    times.sort_by(f64::total_cmp);
    let median = match times.len() {
        0 => 0.0,
        n if n % 2 == 1 => times[n / 2],
        n => (times[n / 2 - 1] + times[n / 2]) / 2.0,
    };
    let games = config.games as f64;
    let won: u64 = wins.iter().sum();
    Ok(SimSummary {
        games: config.games,
        seed: config.seed,
        hands,
        washouts,
        wins_by_seat: SeatWins { east: wins[0], south: wins[1], west: wins[2], north: wins[3] },
        wins_by_player: by_player,
        self_drawn_wins: self_drawn,
        mean_final_score: scores.map(|s| s as f64 / games),
        mean_winning_hand_score: if won == 0 { 0.0 } else { total.winning_score_total as f64 / won as f64 },
        games_per_second: if elapsed > 0.0 { games / elapsed } else { 0.0 },
        elapsed_seconds: elapsed,
        median_game_ms: median * 1000.0,
    })
}

/// The summary as text for people.
pub fn render_text(s: &SimSummary) -> String {
    let pct = |n: u64| if s.hands == 0 { 0.0 } else { 100.0 * n as f64 / s.hands as f64 };
    let won: u64 = s.wins_by_player.iter().sum();
    let w = &s.wins_by_seat;
    let mut out = String::new();
    out += &format!("Simulated {} games (seed {}): {} hands, {:.1} hands per game\n", s.games, s.seed, s.hands, {
        s.hands as f64 / s.games.max(1) as f64
    });
    out += &format!("Wash-outs:        {} ({:.1}%)\n", s.washouts, pct(s.washouts));
    out += &format!(
        "Wins:             {} ({:.1}%), {} from the wall ({:.1}% of wins)\n",
        won,
        pct(won),
        s.self_drawn_wins,
        if won == 0 { 0.0 } else { 100.0 * s.self_drawn_wins as f64 / won as f64 }
    );
    out += &format!("Wins by seat:     E {}  S {}  W {}  N {}\n", w.east, w.south, w.west, w.north);
    let [a, b, c, d] = s.wins_by_player;
    out += &format!("Wins by player:   0: {a}  1: {b}  2: {c}  3: {d}\n");
    let [a, b, c, d] = s.mean_final_score;
    out += &format!("Mean final score: 0: {a:+.1}  1: {b:+.1}  2: {c:+.1}  3: {d:+.1}\n");
    out += &format!("Mean winning hand score: {:.1}\n", s.mean_winning_hand_score);
    out += &format!(
        "Time: {:.3} s, {:.1} games/s, median {:.3} ms per game\n",
        s.elapsed_seconds, s.games_per_second, s.median_game_ms
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_seeds_depend_on_base_and_index() {
        assert_eq!(game_seed(1, 0), game_seed(1, 0));
        assert_ne!(game_seed(1, 0), game_seed(1, 1));
        assert_ne!(game_seed(1, 0), game_seed(2, 0));
    }

    #[test]
    fn zero_games_and_bad_strategies_are_refused() {
        let mut config = SimConfig::new(0, 1, GameOptions::default());
        assert_eq!(simulate(&config), Err(SimError::NoGames));
        config.games = 1;
        config.strategies[2].chowness = 5.0;
        let e = simulate(&config).unwrap_err();
        assert!(e.to_string().starts_with("strategy of player 2: chowness must be"), "{e}");
    }

    /// A view built in the memory of another (the last one built, whoever
    /// it was for) is the view built afresh, at every step of a whole game.
    #[test]
    fn a_view_built_in_reused_memory_is_the_same_view() {
        let options = GameOptions { show_on_washout: true, ..GameOptions::default() };
        let robots = [Strategy::default(); 4].map(|s| Robot::new(s, options.clone()));
        let mut game = Game::new(options);
        let mut walls = ChaCha8Rng::seed_from_u64(3);
        let mut reused = game.view(None);
        let mut steps = 0;
        while !game.is_over() {
            steps += 1;
            for viewer in [None, Some(PlayerId(0)), Some(PlayerId(1)), Some(PlayerId(2)), Some(PlayerId(3))] {
                game.refresh_view(viewer, &mut reused);
                assert_eq!(reused, game.view(viewer), "step {steps}, viewer {viewer:?}");
            }
            let command = match game.hand().filter(|_| game.hand_in_progress()) {
                None => deal(&mut walls),
                Some(hand) => {
                    let (player, _) = first_mover(hand).expect("someone to move");
                    let action = robots[player.index()].decide(&game.view(Some(player))).expect("a move");
                    Command::Act { player, action }
                }
            };
            game.apply(command).unwrap();
        }
        assert!(steps > 500, "a whole game: {steps} steps");
    }

    #[test]
    fn a_step_cap_is_an_error_not_a_hang() {
        let e = play_game_capped(&GameOptions::default(), &[Strategy::default(); 4], 7, 50).unwrap_err();
        assert!(matches!(e, SimError::Game { problem: Problem::StepCap(50), .. }), "{e}");
        assert!(e.to_string().contains("still not over after 50 commands"), "{e}");
    }
}
