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
    }
}
