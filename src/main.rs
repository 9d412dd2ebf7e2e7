//! `mahjong-server`: the Mah-Jong server and its tools.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// mimalloc, not glibc's malloc: a loaded server allocates on every worker
/// thread at once, and glibc's arenas spent a seventh of its CPU in malloc
/// and free and their locks (docs/performance.md, "The allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use mahjong::rules::preset_book::PresetBook;
use mahjong_server::serve::{ServeArgs, cluster_config};

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
    Serve(Box<ServeArgs>),
    /// Replay a game log recorded by the reference mj-server through our
    /// engine; print our scores and settlements as JSON lines.
    Replay {
        /// The reference game log (`game.log` of the conformance corpus).
        #[arg(long)]
        reference_log: PathBuf,
    },
    /// Settle one hand without playing: read a JSON request on stdin, print
    /// the payments as JSON (see docs/rules-notes.md, "The settlement calculator").
    Settle {
        /// A server's database, whose custom presets the request may name
        /// (else only the built-in presets are known).
        #[arg(long)]
        database: Option<String>,
    },
    /// List the rule presets with the option values they set.
    Presets {
        /// Print every preset with all its option values as JSON.
        #[arg(long)]
        json: bool,
        /// A server's database, whose custom presets are listed too.
        #[arg(long)]
        database: Option<String>,
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
        /// A server's database, whose custom presets `--preset` may name.
        #[arg(long)]
        database: Option<String>,
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
    Loadtest(mahjong_tools::loadtest::LoadtestArgs),
    /// Find the largest number of tables a server carries at a pace: the
    /// load test against a fresh server for each table count, judged on
    /// latency, delivery and memory.
    LoadtestSweep(mahjong_tools::sweep::SweepArgs),
    /// Follow every table being played through every node of a cluster
    /// while faults happen: how long each spectator went without an event,
    /// the 404s met reconnecting, the games followed to their end.
    Followers(mahjong_tools::followers::FollowersArgs),
    /// Measure the store: events persisted per second while many tables
    /// write at once (SQLite or Postgres).
    Storebench(mahjong_tools::storebench::StorebenchArgs),
    /// Write a stored game as a game file (JSON), or as an mj-server game
    /// log. Unlike the REST export, an unfinished game too: its file then
    /// holds every concealed tile and the walls to come (mj-server's
    /// --save-on-exit).
    Export {
        /// The store (as `serve --database`).
        #[arg(long, env = "DATABASE_URL", default_value = mahjong::store::DEFAULT_DATABASE)]
        database: String,
        /// The game's id (its table's id).
        game_id: String,
        /// Write the file here rather than to standard output.
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
        /// `game-file` (JSON), or `mj-server` (the log mj-server would have
        /// written of the game: the import reads it back as the same game).
        #[arg(long, value_enum, default_value_t = ExportFormat::GameFile)]
        format: ExportFormat,
    },
    /// Print the OpenAPI document of the REST API (the one the server serves
    /// at /api/v1/openapi.json and commits as openapi/openapi.json).
    Openapi {
        /// Write it here rather than to standard output.
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
    },
    /// Cluster mode: the key that seals every message between nodes on NATS.
    ClusterKey {
        #[command(subcommand)]
        command: ClusterKeyCommand,
    },
    /// Manage accounts from the command line (the first admin).
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
    /// Store a game file, or a game log of the original mj-server (told apart
    /// by their content), as a new game. A game not over resumes as a table
    /// when the server next starts; its people's new seat tokens are printed.
    Import {
        /// The store (as `serve --database`).
        #[arg(long, env = "DATABASE_URL", default_value = mahjong::store::DEFAULT_DATABASE)]
        database: String,
        /// The game file or mj-server log.
        file: PathBuf,
    },
}

/// What `export` writes.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ExportFormat {
    /// Our game file (JSON).
    GameFile,
    /// An mj-server game log.
    MjServer,
}

#[derive(Subcommand)]
enum ClusterKeyCommand {
    /// Make a new key: every node seals with it 30 seconds from now (each has
    /// read it by then) and accepts the old one for a minute after. Run it
    /// after a leak, or on a schedule.
    Rotate {
        /// The cluster's database (as `serve --database`).
        #[arg(long, env = "DATABASE_URL")]
        database: String,
    },
}

#[derive(Subcommand)]
enum AdminCommand {
    /// Create an account. The password is read from the environment variable
    /// MAHJONG_PASSWORD if set, else from the first line of standard input
    /// (never from the command line, where other users could see it).
    CreateUser {
        /// The store (as `serve --database`).
        #[arg(long, env = "DATABASE_URL", default_value = mahjong::store::DEFAULT_DATABASE)]
        database: String,
        /// The account's name.
        name: String,
        /// `player` or `admin`.
        #[arg(long, default_value = "player", value_parser = ["player", "admin"])]
        role: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = cli.command.unwrap_or(Commands::Serve(Box::new(ServeArgs::defaults())));
    match command {
        Commands::Serve(args) => serve(*args),
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
        Commands::Settle { database } => settle(database.as_deref()),
        Commands::Export { database, game_id, output, format } => {
            export(&database, &game_id, output.as_deref(), format)
        }
        Commands::Import { database, file } => import(&database, &file),
        Commands::ClusterKey { command: ClusterKeyCommand::Rotate { database } } => rotate_cluster_key(&database),
        Commands::Admin { command: AdminCommand::CreateUser { database, name, role } } => {
            create_user(&database, &name, &role)
        }
        Commands::Loadtest(args) => mahjong_tools::loadtest::run_command(args),
        Commands::LoadtestSweep(args) => mahjong_tools::sweep::run_command(args),
        Commands::Followers(args) => mahjong_tools::followers::run_command(args),
        Commands::Storebench(args) => mahjong_tools::storebench::run_command(args),
        Commands::Presets { json, database } => presets(json, database.as_deref()),
        Commands::Openapi { output } => openapi(output.as_deref()),
        Commands::Simulate {
            games,
            seed,
            preset,
            database,
            option_file,
            json,
            chowness,
            hiddenness,
            majorness,
            suitness,
        } => {
            let book = match preset_book(database.as_deref()) {
                Ok(book) => book,
                Err(code) => return code,
            };
            let options = match simulation_options(&book, preset.as_deref(), option_file.as_deref()) {
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
    book: &PresetBook,
    preset: Option<&str>,
    option_file: Option<&std::path::Path>,
) -> Result<mahjong::rules::GameOptions, mahjong::server::ConfigError> {
    let preset = preset.unwrap_or(mahjong::rules::presets::DEFAULT_PRESET);
    mahjong::server::preset_with_option_file(book, preset, option_file)
}

/// The presets a command knows: the built-in ones, and with `--database`
/// the custom presets stored there by a server's admins.
fn preset_book(database: Option<&str>) -> Result<PresetBook, ExitCode> {
    let Some(database) = database else { return Ok(PresetBook::built_in_only()) };
    let runtime = tokio::runtime::Runtime::new().map_err(|e| {
        eprintln!("cannot start the runtime: {e}");
        ExitCode::FAILURE
    })?;
    runtime.block_on(async {
        let store = open_store(database).await?;
        let book = mahjong::table::Rulebook::load_presets(&store).await;
        store.close().await;
        book.map_err(|e| {
            eprintln!("cannot read the presets of {}: {e}", mahjong::store::shown_database(database));
            ExitCode::FAILURE
        })
    })
}

/// `settle`: one JSON request on stdin, one JSON answer on stdout; bad input
/// is reported on stderr with exit status 2.
fn settle(database: Option<&str>) -> ExitCode {
    let book = match preset_book(database) {
        Ok(book) => book,
        Err(code) => return code,
    };
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
    // The same strict reading as the REST calculator's.
    let request = mahjong::protocol::json::from_str::<mahjong::rules::calculator::SettleRequest>(&text)
        .map_err(|e| format!("bad request: {e}"));
    let answer = request.and_then(|r| mahjong::rules::calculator::calculate_with(&book, &r).map_err(|e| e.to_string()));
    match answer {
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

/// `openapi`: the API's OpenAPI document, to a file or standard output.
fn openapi(output: Option<&std::path::Path>) -> ExitCode {
    let text = mahjong::http::openapi::document_json();
    let written = match output {
        Some(path) => std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display())),
        None => {
            use std::io::Write;
            std::io::stdout().write_all(text.as_bytes()).map_err(|e| format!("cannot print the document: {e}"))
        }
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// `presets`: each preset's name, description and the option lines it sets
/// (with `--database`, the custom presets stored there too).
fn presets(json: bool, database: Option<&str>) -> ExitCode {
    let book = match preset_book(database) {
        Ok(book) => book,
        Err(code) => return code,
    };
    let listing = match book.listing() {
        Ok(listing) => listing,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    if json {
        // As `GET /api/v1/presets` lists them.
        return match serde_json::to_string_pretty(&listing) {
            Ok(text) => {
                println!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("cannot print the presets: {e}");
                ExitCode::FAILURE
            }
        };
    }
    for p in listing {
        let options = match book.options(&p.name) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("preset {}: {e}", p.name);
                return ExitCode::FAILURE;
            }
        };
        println!("Preset {}", p.name);
        if !p.description.is_empty() {
            println!("# {}", p.description);
        }
        if let Some(base) = &p.based_on {
            println!("# a custom preset, based on {base}");
        }
        println!("# every option not listed keeps mj-server's default (`presets --json` lists them all)");
        print!("{}", options.to_option_file(true));
        println!();
    }
    ExitCode::SUCCESS
}

/// Runs `work` on a new runtime (the store needs one).
fn block_on(work: impl std::future::Future<Output = ExitCode>) -> ExitCode {
    match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime.block_on(work),
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Opens the store, or says why not.
async fn open_store(database: &str) -> Result<mahjong::store::Store, ExitCode> {
    mahjong::store::Store::open(database).await.map_err(|e| {
        eprintln!("cannot open the database {}: {e}", mahjong::store::shown_database(database));
        ExitCode::from(2)
    })
}

/// Opens the store for `serve`: a database that cannot be reached yet (a
/// Postgres starting beside the server) is tried again with back-off for
/// `wait_secs` seconds; any other failure stops at once.
async fn open_store_waiting(database: &str, wait_secs: u64) -> Result<mahjong::store::Store, ExitCode> {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(wait_secs);
    let mut wait = std::time::Duration::from_millis(250);
    loop {
        match mahjong::store::Store::open(database).await {
            Ok(store) => return Ok(store),
            Err(e @ mahjong::store::StoreError::Unavailable(_)) if std::time::Instant::now() + wait < until => {
                tracing::warn!("the database does not answer yet ({e}): trying again in {wait:?}");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(std::time::Duration::from_secs(8));
            }
            Err(e) => {
                eprintln!("cannot open the database {}: {e}", mahjong::store::shown_database(database));
                return Err(ExitCode::from(2));
            }
        }
    }
}

/// `admin create-user`: an account, with its password from MAHJONG_PASSWORD
/// or standard input.
fn create_user(database: &str, name: &str, role: &str) -> ExitCode {
    let Some(role) = mahjong::auth::Role::parse(role) else {
        eprintln!("'{role}' is not a role: player or admin");
        return ExitCode::from(2);
    };
    let password = match std::env::var("MAHJONG_PASSWORD") {
        Ok(p) => p,
        Err(_) => {
            let mut line = String::new();
            if let Err(e) = std::io::stdin().read_line(&mut line) {
                eprintln!("cannot read the password from standard input: {e}");
                return ExitCode::from(2);
            }
            line.trim_end_matches(['\n', '\r']).to_string()
        }
    };
    block_on(async {
        let store = match open_store(database).await {
            Ok(s) => s,
            Err(code) => return code,
        };
        let created = match mahjong::auth::Accounts::new(store.clone(), Default::default()) {
            Ok(accounts) => accounts.create(name, &password, role).await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        store.close().await;
        match created {
            Ok(user) => {
                println!("created {} '{}' (account {})", user.role.as_str(), user.name, user.id);
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("cannot create the account: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

/// `cluster-key rotate`: the cluster's next key.
fn rotate_cluster_key(database: &str) -> ExitCode {
    block_on(async {
        let store = match open_store(database).await {
            Ok(s) => s,
            Err(code) => return code,
        };
        let rotated = mahjong::cluster::rotate_key(&store).await;
        store.close().await;
        match rotated {
            Ok(id) => {
                println!(
                    "cluster key {id} made: the nodes seal with it in {} s",
                    mahjong::cluster::KEY_ANNOUNCED.as_secs()
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("cannot make a new cluster key: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

/// `export`: a stored game as a game file or an mj-server log.
fn export(database: &str, game_id: &str, output: Option<&std::path::Path>, format: ExportFormat) -> ExitCode {
    block_on(async {
        let store = match open_store(database).await {
            Ok(s) => s,
            Err(code) => return code,
        };
        let exported = mahjong::game_file::export(&store, game_id).await;
        store.close().await;
        let file = match exported {
            Ok(Some(file)) => file,
            Ok(None) => {
                eprintln!("no game {game_id} in {}", mahjong::store::shown_database(database));
                return ExitCode::from(2);
            }
            Err(e) => {
                eprintln!("cannot export game {game_id}: {e}");
                return ExitCode::FAILURE;
            }
        };
        if file.game.state != "over" {
            eprintln!(
                "game {game_id} is not over: the file holds every player's concealed tiles and the walls to come"
            );
        }
        let text = match format {
            ExportFormat::GameFile => serde_json::to_string(&file).map(|t| t + "\n").map_err(anyhow::Error::from),
            ExportFormat::MjServer => mahjong::game_file::check(&file)
                .and_then(|checked| mahjong::game_file::mj_server::log(&checked))
                .map_err(anyhow::Error::from),
        };
        let text = match text {
            Ok(t) => t,
            Err(e) => {
                eprintln!("cannot write game {game_id}: {e}");
                return ExitCode::FAILURE;
            }
        };
        use anyhow::Context;
        let written = match output {
            Some(path) => std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display())),
            None => {
                use std::io::Write;
                std::io::stdout().write_all(text.as_bytes()).context("cannot write")
            }
        };
        match written {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e:#}");
                ExitCode::FAILURE
            }
        }
    })
}

/// Reads and checks a game file or an mj-server log.
fn read_game(path: &std::path::Path) -> anyhow::Result<(mahjong::game_file::Checked, mahjong::game_file::Source)> {
    use anyhow::Context;
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    // mj-server wrote bytes; only its names are free text.
    let text = String::from_utf8_lossy(&bytes);
    mahjong::game_file::read_any(&text, mahjong::store::now_us()).with_context(|| path.display().to_string())
}

/// `import`: a game file or an mj-server log stored as a new game; prints
/// the new game's id, state and seat tokens as JSON.
fn import(database: &str, path: &std::path::Path) -> ExitCode {
    let (checked, source) = match read_game(path) {
        Ok(read) => read,
        Err(e) => {
            eprintln!("{e:#}");
            return ExitCode::from(2);
        }
    };
    block_on(async {
        let store = match open_store(database).await {
            Ok(s) => s,
            Err(code) => return code,
        };
        let imported = mahjong::game_file::import(&store, checked, source).await;
        store.close().await;
        match imported {
            Ok(imported) => {
                if imported.state != mahjong::protocol::ws::TableState::Over {
                    eprintln!(
                        "game {} is stored; it resumes as a table when the server starts on this database. \
                         Give each player the token of its seat.",
                        imported.id
                    );
                }
                println!("{}", serde_json::to_string_pretty(&imported).unwrap_or_default());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("cannot store the game: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

/// `serve`: runs the server until SIGINT or SIGTERM.
fn serve(args: ServeArgs) -> ExitCode {
    use std::io::IsTerminal;
    // Logs go to stderr, in colour only on a terminal (a file or a
    // container's log gets plain lines).
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let defaults = match args.table_defaults() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    // The game to load is checked before anything is served: a bad file is
    // the operator's to fix, not a table that fails later.
    let load = match &args.load_game {
        Some(path) => match read_game(path) {
            Ok((checked, source)) => Some(mahjong::server::LoadGame { path: path.clone(), checked, source }),
            Err(e) => {
                eprintln!("--load-game {e:#}");
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    block_on(async move {
        let listener = match listener(args.listen).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("cannot listen on {}: {e}", args.listen);
                return ExitCode::from(2);
            }
        };
        // `serve` logs "serving on http://ADDR" (the address really bound)
        // once its store is open and the stored games are on their way back.
        let cluster = match cluster_config(&args, &listener) {
            Ok(cluster) => cluster,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        };
        // Until the server answers, a copy of its socket does: alive, not ready.
        let starting = mahjong::http::starting::Starting::answer(&listener);
        let store = match open_store_waiting(&args.database, args.wait_for_services).await {
            Ok(s) => s,
            Err(code) => return code,
        };
        if cluster.is_some() {
            starting.awaiting(mahjong::http::starting::Awaiting::Cluster);
        }
        // A loaded game not over opens as a table once the unfinished games
        // in the store have resumed.
        let classic = match &args.classic_listen {
            Some(address) => match mahjong::classic::ClassicListener::bind(address).await {
                Ok(l) => Some(l),
                Err(e) => {
                    eprintln!("cannot listen for classic clients on {address}: {e}");
                    return ExitCode::from(2);
                }
            },
            None => None,
        };
        let metrics_listener = match args.metrics_listen {
            Some(address) => match tokio::net::TcpListener::bind(address).await {
                Ok(l) => Some(l),
                Err(e) => {
                    eprintln!("cannot listen for /metrics on {address}: {e}");
                    return ExitCode::from(2);
                }
            },
            None => None,
        };
        let serving = args.serving(classic, metrics_listener);
        let config = mahjong::server::ServerConfig { listener, store, defaults, serving, load, cluster };
        let server = match mahjong::server::Server::build(config).await {
            Ok(server) => server,
            Err(e) => {
                eprintln!("server error: {e}");
                return ExitCode::FAILURE;
            }
        };
        starting.stop().await;
        match server.run_until(mahjong::server::shutdown_signal()).await {
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

/// The socket to answer on: the one handed over by whoever started the
/// server (systemd's socket activation, `LISTEN_FDS=1`, the socket as file
/// descriptor 3), which keeps its address and the connections waiting on it
/// across restarts; otherwise `--listen`, bound now.
async fn listener(listen: std::net::SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    match listenfd::ListenFd::from_env().take_tcp_listener(0)? {
        Some(handed) => {
            handed.set_nonblocking(true)?;
            tracing::info!("answering on the socket handed over (LISTEN_FDS), not --listen");
            tokio::net::TcpListener::from_std(handed)
        }
        None => tokio::net::TcpListener::bind(listen).await,
    }
}
