//! `mahjong-server`: the Mah-Jong server and its tools.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The Mah-Jong server and its tools.
#[derive(Parser)]
#[command(name = "mahjong-server", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Commands,
}

#[derive(Subcommand)]
enum Commands {
    /// Replay a game log recorded by the reference mj-server through our
    /// engine; print our scores and settlements as JSON lines.
    Replay {
        /// The reference game log (`game.log` of the conformance corpus).
        #[arg(long)]
        reference_log: PathBuf,
    },
    /// Play complete games of four robots in-process and print statistics.
    Simulate {
        /// Number of games to play.
        #[arg(long, default_value_t = 100)]
        games: u64,
        /// Base seed: the same seed plays the same games.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Game options in mj-server's option-file format.
        #[arg(long)]
        option_file: Option<PathBuf>,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
        /// Robot chowness, -1..1: one value for all, or four for players 0-3 (e.g. 0,0.5,-1,0).
        #[arg(long, allow_hyphen_values = true)]
        chowness: Option<String>,
        /// Robot hiddenness, 0..1: one value or four.
        #[arg(long)]
        hiddenness: Option<String>,
        /// Robot majorness, 0..1: one value or four.
        #[arg(long)]
        majorness: Option<String>,
        /// Robot suitness, 0..1: one value or four.
        #[arg(long)]
        suitness: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Commands::Replay { reference_log } => {
            let text = match std::fs::read_to_string(&reference_log) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("cannot read {}: {e}", reference_log.display());
                    return ExitCode::from(2);
                }
            };
            match mahjong::replay::replay_log(&text) {
                Ok(replay) => {
                    print!("{}", replay.to_json_lines());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("{}: {e}", reference_log.display());
                    ExitCode::FAILURE
                }
            }
        }
        Commands::Simulate { games, seed, option_file, json, chowness, hiddenness, majorness, suitness } => {
            let options = match &option_file {
                None => mahjong::rules::GameOptions::default(),
                Some(path) => {
                    let parsed = std::fs::read_to_string(path)
                        .map_err(|e| format!("cannot read {}: {e}", path.display()))
                        .and_then(|text| {
                            mahjong::rules::GameOptions::from_option_file(&text)
                                .map_err(|e| format!("{}: {e}", path.display()))
                        });
                    match parsed {
                        Ok(o) => o,
                        Err(e) => {
                            eprintln!("{e}");
                            return ExitCode::from(2);
                        }
                    }
                }
            };
            let lists = mahjong::bots::strategy::StrategyLists { chowness, hiddenness, majorness, suitness };
            let strategies = match lists.to_strategies() {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::from(2);
                }
            };
            let config = mahjong::sim::SimConfig { strategies, ..mahjong::sim::SimConfig::new(games, seed, options) };
            match mahjong::sim::simulate(&config) {
                Ok(summary) if json => match serde_json::to_string_pretty(&summary) {
                    Ok(text) => {
                        println!("{text}");
                        ExitCode::SUCCESS
                    }
                    Err(e) => {
                        eprintln!("cannot print the summary: {e}");
                        ExitCode::FAILURE
                    }
                },
                Ok(summary) => {
                    println!("{}", mahjong::sim::render_text(&summary).trim_end());
                    ExitCode::SUCCESS
                }
                Err(e @ mahjong::sim::SimError::NoGames) => {
                    eprintln!("{e}");
                    ExitCode::from(2)
                }
                Err(e) => {
                    eprintln!("simulation failed: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
