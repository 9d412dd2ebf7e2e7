//! `mahjong-server`: the Mah-Jong server and its tools.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The Mah-Jong server and its tools.
#[derive(Parser)]
#[command(name = "mahjong-server", version, about)]
struct Cli {
    /// What to do; without a subcommand, `serve` with its defaults.
    #[command(subcommand)]
    command: Option<Commands>,
}

#[derive(Subcommand)]
enum Commands {
    /// Serve the game: REST under /api/v1, table WebSockets, /healthz.
    Serve(mahjong::server::ServeArgs),
    /// Replay a game log recorded by the reference mj-server through our
    /// engine; print our scores and settlements as JSON lines.
    Replay {
        /// The reference game log (`game.log` of the conformance corpus).
        #[arg(long)]
        reference_log: PathBuf,
    },
    /// Settle one hand without playing: read a JSON request on stdin, print
    /// the payments as JSON (see docs/rules-notes.md, "The settlement calculator").
    Settle,
    /// List the rule presets with the option values they set.
    Presets {
        /// Print every preset with all its option values as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Play complete games of four robots in-process and print statistics.
    Simulate {
        /// Number of games to play.
        #[arg(long, default_value_t = 100)]
        games: u64,
        /// Base seed: the same seed plays the same games.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// A rule preset (see `presets`); an option file is applied over it.
        #[arg(long)]
        preset: Option<String>,
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
    /// Load a running server: keep T tables of robots playing, watch them
    /// through W spectator WebSockets, report events/s and delivery latency.
    Loadtest(mahjong::loadtest::LoadtestArgs),
    /// Measure the store: events persisted per second while many tables
    /// write at once (SQLite or Postgres).
    Storebench(mahjong::storebench::StorebenchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = cli.command.unwrap_or(Commands::Serve(mahjong::server::ServeArgs::defaults()));
    match command {
        Commands::Serve(args) => serve(args),
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
        Commands::Settle => settle(),
        Commands::Loadtest(args) => mahjong::loadtest::run_command(args),
        Commands::Storebench(args) => mahjong::storebench::run_command(args),
        Commands::Presets { json } => presets(json),
        Commands::Simulate { games, seed, preset, option_file, json, chowness, hiddenness, majorness, suitness } => {
            let options = match simulation_options(preset.as_deref(), option_file.as_deref()) {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::from(2);
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

/// The options of a simulation: a preset, then an option file over it.
fn simulation_options(
    preset: Option<&str>,
    option_file: Option<&std::path::Path>,
) -> Result<mahjong::rules::GameOptions, String> {
    let preset = preset.unwrap_or(mahjong::rules::presets::DEFAULT_PRESET);
    mahjong::server::preset_with_option_file(preset, option_file).map(|(options, _)| options)
}

/// `settle`: one JSON request on stdin, one JSON answer on stdout; bad input
/// is reported on stderr with exit status 2.
fn settle() -> ExitCode {
    use std::io::Read;
    let mut text = String::new();
    // A request is a few hundred bytes; refuse anything absurdly large.
    let limit = 1 << 20;
    match std::io::stdin().take(limit + 1).read_to_string(&mut text) {
        Ok(n) if n as u64 > limit => {
            eprintln!("bad request: more than {limit} bytes");
            return ExitCode::from(2);
        }
        Ok(_) => {}
        Err(e) => {
            eprintln!("bad request: cannot read stdin: {e}");
            return ExitCode::from(2);
        }
    }
    match mahjong::rules::calculator::settle_json(&text) {
        Ok(answer) => match serde_json::to_string(&answer) {
            Ok(json) => {
                println!("{json}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("cannot print the answer: {e}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

/// `presets`: each preset's name, description and the option lines it sets.
fn presets(json: bool) -> ExitCode {
    use mahjong::rules::presets::{PRESETS, listing, preset};
    if json {
        return match listing()
            .map_err(|e| e.to_string())
            .and_then(|l| serde_json::to_string_pretty(&l).map_err(|e| format!("cannot print the presets: {e}")))
        {
            Ok(text) => {
                println!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        };
    }
    for p in PRESETS {
        let options = match preset(p.name) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("preset {}: {e}", p.name);
                return ExitCode::FAILURE;
            }
        };
        println!("Preset {}", p.name);
        println!("# {}", p.description);
        println!("# every option not listed keeps mj-server's default (`presets --json` lists them all)");
        print!("{}", options.to_option_file(true));
        println!();
    }
    ExitCode::SUCCESS
}

/// `serve`: runs the server until SIGINT or SIGTERM.
fn serve(args: mahjong::server::ServeArgs) -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    let defaults = match args.table_defaults() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(args.listen).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("cannot listen on {}: {e}", args.listen);
                return ExitCode::from(2);
            }
        };
        match listener.local_addr() {
            Ok(addr) => tracing::info!("serving on http://{addr}"),
            Err(e) => tracing::warn!("listening, address unknown: {e}"),
        }
        let store = match mahjong::store::Store::open(&args.database).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("cannot open the database {}: {e}", args.database);
                return ExitCode::from(2);
            }
        };
        match mahjong::server::serve(listener, defaults, store, mahjong::server::shutdown_signal()).await {
            Ok(()) => {
                tracing::info!("shut down");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("server error: {e}");
                ExitCode::FAILURE
            }
        }
    })
}
