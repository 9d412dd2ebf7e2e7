//! `mahjong-server serve`: the flags (mirroring mj-server's where they mean
//! the same, each with an environment fallback) and the server's life: bind,
//! serve, shut down gracefully on SIGINT or SIGTERM.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::auth::{AccountSettings, Accounts};
use crate::cluster::{Cluster, ClusterConfig};
use crate::game_file::{self, Checked, Source};
use crate::http::{AppState, Timeouts, router};
use crate::limits::{Exempt, Limits, Quotas, Rate};
use crate::rules::option_file::OptionFile;
use crate::rules::options::OptionError;
use crate::rules::preset_book::{self, DefaultOptions, PresetBook, PresetError};
use crate::rules::presets;
use crate::rules::tile::{BadTileCode, parse_tiles};
use crate::rules::wall::{Wall, WallError};
use crate::shutdown::Shutdown;
use crate::store::Store;
use crate::table::{Lobby, Rulebook, TableCommand, TableDefaults, TableLimits};

/// A setting of `serve` that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file named by a flag cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No such preset.
    #[error(transparent)]
    Preset(PresetError),
    /// The defaults the flags give do not hold: their preset does not
    /// exist, or their options do not suit it.
    #[error("the defaults given by --preset, --option-file and --timeout: {0}")]
    Defaults(PresetError),
    /// The option file does not read, or sets a bad value.
    #[error("{}: {source}", path.display())]
    OptionFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: OptionError,
    },
    /// The wall file holds something that is not a tile.
    #[error("{}: {source}", path.display())]
    WallTiles {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: BadTileCode,
    },
    /// The wall file's tiles are not a wall.
    #[error("{}: {source}", path.display())]
    Wall {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: WallError,
    },
    /// `--disconnect-penalties` has more than three values.
    #[error("give at most three penalties: N1,N2,N3")]
    TooManyPenalties,
    /// A penalty is not a whole number from 0 to 100000.
    #[error("'{0}' is not a penalty (a whole number from 0 to 100000)")]
    Penalty(String),
}

/// The flags of `serve`.
#[derive(clap::Args, Clone, Debug)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "MAHJONG_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Cluster mode: join every node on the same Postgres database and this
    /// NATS server (`nats://127.0.0.1:4222`; `tls://` for TLS; several
    /// comma-separated). Needs `--database postgres://...`. Credentials may
    /// be in the URL (`nats://USER:PASSWORD@HOST:PORT`, `nats://TOKEN@HOST:PORT`),
    /// but the variables below keep them out of the process list.
    #[arg(long, env = "MAHJONG_NATS", hide_env_values = true)]
    pub nats: Option<String>,
    /// Cluster mode: the NATS user (with `--nats-password`).
    #[arg(long, env = "MAHJONG_NATS_USER", requires = "nats")]
    pub nats_user: Option<String>,
    /// Cluster mode: the NATS user's password (better given as MAHJONG_NATS_PASSWORD).
    #[arg(long, env = "MAHJONG_NATS_PASSWORD", hide_env_values = true, requires = "nats")]
    pub nats_password: Option<String>,
    /// Cluster mode: a NATS token (better given as MAHJONG_NATS_TOKEN).
    #[arg(long, env = "MAHJONG_NATS_TOKEN", hide_env_values = true, requires = "nats")]
    pub nats_token: Option<String>,
    /// Cluster mode: a file holding the node's NATS nkey seed (`SU...`).
    #[arg(long, env = "MAHJONG_NATS_NKEY", requires = "nats")]
    pub nats_nkey: Option<PathBuf>,
    /// Cluster mode: a NATS credentials file (a user JWT and its seed).
    #[arg(long, env = "MAHJONG_NATS_CREDS", requires = "nats")]
    pub nats_creds: Option<PathBuf>,
    /// Cluster mode: the CA that signed the NATS servers' certificates (TLS required).
    #[arg(long, env = "MAHJONG_NATS_CA", requires = "nats")]
    pub nats_ca: Option<PathBuf>,
    /// Cluster mode: a client certificate for NATS (with `--nats-key`).
    #[arg(long, env = "MAHJONG_NATS_CERT", requires = "nats")]
    pub nats_cert: Option<PathBuf>,
    /// Cluster mode: the client certificate's key.
    #[arg(long, env = "MAHJONG_NATS_KEY", requires = "nats")]
    pub nats_key: Option<PathBuf>,
    /// Cluster mode: this node's name (default: the host's name and the port).
    #[arg(long, env = "MAHJONG_NODE_NAME", requires = "nats")]
    pub node_name: Option<String>,
    /// Cluster mode: seconds a node's lease lasts without a heartbeat (a
    /// dead node's tables are taken over that long after its last one).
    #[arg(long, env = "MAHJONG_LEASE_SECONDS", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(2..=120), requires = "nats")]
    pub lease_seconds: u64,
    /// Cluster mode: how many of its tables the most loaded node may have on
    /// their way to a less loaded one at once, each moving at its hand's end
    /// (docs/operations.md, "Rebalancing"); 0: tables never move while their
    /// node lives, and only new tables go to a node that joins.
    #[arg(long, env = "MAHJONG_REBALANCE_AT_ONCE", default_value_t = 4,
          value_parser = clap::value_parser!(u64).range(0..=64), requires = "nats")]
    pub rebalance_at_once: u64,
    /// Seconds `serve` waits at start for a Postgres database or a NATS
    /// server that does not answer yet (one starting beside it), trying
    /// again with back-off; a refusal (a wrong password) stops it at once.
    #[arg(long, env = "MAHJONG_WAIT_FOR_SERVICES", default_value_t = 60)]
    pub wait_for_services: u64,
    /// Where games are stored: `sqlite://FILE` (created if missing) or
    /// `postgres://USER@HOST/DB`. Unfinished games in it resume at start-up.
    #[arg(long, env = "DATABASE_URL", default_value = crate::store::DEFAULT_DATABASE)]
    pub database: String,
    /// Seconds to claim a discard (0: no limit); overrides the `Timeout` option.
    #[arg(long, env = "MAHJONG_TIMEOUT")]
    pub timeout: Option<u32>,
    /// Least pause between actions, in tenths of a second (at most 50).
    #[arg(long, env = "MAHJONG_PAUSE", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=50))]
    pub pause: u32,
    /// Seat players who do not choose a seat at random.
    #[arg(long, env = "MAHJONG_RANDOM_SEATS", conflicts_with = "id_order_seats")]
    pub random_seats: bool,
    /// Seat players who do not choose a seat in the lowest free seat (the default).
    #[arg(long, env = "MAHJONG_ID_ORDER_SEATS")]
    pub id_order_seats: bool,
    /// Seed for walls, dice and random seats: the same seed repeats the same tables.
    #[arg(long, env = "MAHJONG_SEED")]
    pub seed: Option<u64>,
    /// A file of space-separated tile codes: the first hand's wall at every table.
    #[arg(long, env = "MAHJONG_WALLFILE")]
    pub wallfile: Option<PathBuf>,
    /// Game options in mj-server's option-file format, applied to every new table.
    #[arg(long, env = "MAHJONG_OPTION_FILE")]
    pub option_file: Option<PathBuf>,
    /// The rule preset of new tables (see `presets`), built-in or custom;
    /// the first value of the defaults, which admins may change.
    #[arg(long, env = "MAHJONG_PRESET", default_value = presets::DEFAULT_PRESET)]
    pub preset: String,
    /// No player may change the game options.
    #[arg(long, env = "MAHJONG_NO_MANAGER")]
    pub no_manager: bool,
    /// Flowers and seasons score no points or doubles.
    #[arg(long, env = "MAHJONG_NO_SPECIAL_SCORES")]
    pub no_special_scores: bool,
    /// After a player has been disconnected this many seconds, a robot plays
    /// the seat until the player reconnects.
    #[arg(long, env = "MAHJONG_ROBOT_TAKEOVER")]
    pub robot_takeover: Option<u64>,
    /// A player's disconnection ends the game gracefully: mid-hand the hand is
    /// washed out (after Mah-Jong a losing player's tiles are shown and the
    /// hand is scored first), then the game ends.
    #[arg(long, env = "MAHJONG_END_ON_DISCONNECT")]
    pub end_on_disconnect: bool,
    /// Penalties for a player who disconnects before the end of the game, with
    /// `--end-on-disconnect`: mid-hand, at the end of a hand in mid-round, at
    /// the end of a round. Told only to that player.
    #[arg(long, env = "MAHJONG_DISCONNECT_PENALTIES", value_parser = parse_penalties, default_value = "0,0,0")]
    pub disconnect_penalties: Penalties,
    /// Only logged-in players may sit at a table (guests may still watch).
    #[arg(long, env = "MAHJONG_REQUIRE_ACCOUNTS")]
    pub require_accounts: bool,
    /// Also serve mj-server's classic protocol (version 1110, for xmj and
    /// mj-player) on this address: `HOST:PORT` for TCP, or a Unix socket's
    /// path when it has no colon (as mj-server's `--server`).
    #[arg(long, env = "MAHJONG_CLASSIC_LISTEN")]
    pub classic_listen: Option<String>,
    /// Refuse classic logins that name a registered account (their password
    /// would travel in clear); without it they must give the password.
    #[arg(long, env = "MAHJONG_CLASSIC_NO_ACCOUNTS")]
    pub classic_no_accounts: bool,
    /// A file of walls, one per line: hand N of every table is dealt the
    /// wall on line N, later hands are shuffled (a debugging aid beside
    /// `--wallfile`, e.g. to replay a recorded game's deals).
    #[arg(long, env = "MAHJONG_WALLS", conflicts_with = "wallfile")]
    pub walls: Option<PathBuf>,
    /// A game file (or an mj-server game log) to load into a new table at
    /// start-up; its people's seat tokens are logged. A game that is over is
    /// only stored.
    #[arg(long, env = "MAHJONG_LOAD_GAME")]
    pub load_game: Option<PathBuf>,
    /// Ask classic guests for a password when they first connect (xmj and
    /// mj-player send `--password`); their seat is then given back to that
    /// password from any address. Without it a guest's seat is given back
    /// only to the address it played from.
    #[arg(long, env = "MAHJONG_CLASSIC_GUEST_PASSWORDS")]
    pub classic_guest_passwords: bool,
    /// Other origins (`https://example.org`) whose pages may open a table
    /// WebSocket authenticated by the session cookie, besides the server's
    /// own; comma-separated.
    #[arg(long, env = "MAHJONG_ALLOWED_ORIGIN", value_delimiter = ',')]
    pub allowed_origin: Vec<String>,
    /// `GET /metrics` asks for this token (`Authorization: Bearer TOKEN`);
    /// better given as MAHJONG_METRICS_TOKEN.
    #[arg(long, env = "MAHJONG_METRICS_TOKEN", hide_env_values = true)]
    pub metrics_token: Option<String>,
    /// Serve `/metrics` on this address only (a private one, say
    /// `10.0.0.5:9090`), not beside the API.
    #[arg(long, env = "MAHJONG_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    /// Reverse proxies (`10.0.0.0/8`, `172.18.0.2`) whose requests carry the
    /// client's address in a header (`--client-address-header`): the limits,
    /// the logs and the accounts go by that address; comma-separated.
    /// Anyone else's header is ignored.
    #[arg(long, env = "MAHJONG_TRUSTED_PROXY", value_delimiter = ',', value_parser = crate::limits::address::parse_network)]
    pub trusted_proxy: Vec<ipnet::IpNet>,
    /// The header the trusted proxies set (only that one is read: a proxy
    /// passes the other through as the client wrote it).
    #[arg(long, env = "MAHJONG_CLIENT_ADDRESS_HEADER", value_enum, default_value = "x-forwarded-for")]
    pub client_address_header: crate::http::forwarded::AddressHeader,
    /// What one client may hold and how fast it may ask.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// The limits' flags (docs/protocol.md, "Limits"); each left out keeps the
/// default of [`Limits::default`]. A rate is written `BURST/EVERY`: `10/2s`
/// is ten at once, then one more every two seconds.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct LimitArgs {
    /// HTTP connections open at once from one address (IPv6 by /64) [default: 64].
    #[arg(long, env = "MAHJONG_MAX_CONNECTIONS_PER_ADDRESS")]
    pub max_connections_per_address: Option<u32>,
    /// Table WebSockets open at once from one address [default: 32].
    #[arg(long, env = "MAHJONG_MAX_WEBSOCKETS_PER_ADDRESS")]
    pub max_websockets_per_address: Option<u32>,
    /// Classic-protocol connections open at once from one address [default: 8].
    #[arg(long, env = "MAHJONG_MAX_CLASSIC_PER_ADDRESS")]
    pub max_classic_per_address: Option<u32>,
    /// Connections (HTTP and classic) open at once in all [default: the file
    /// descriptor limit, raised to its hard limit, less 256].
    #[arg(long, env = "MAHJONG_MAX_CONNECTIONS")]
    pub max_connections: Option<u32>,
    /// Seconds a client may take to send a request's head, and to begin the
    /// next request on a kept-alive connection [default: 15].
    #[arg(long, env = "MAHJONG_HEADER_TIMEOUT", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout: Option<u64>,
    /// Tables one player (its account, or its address) may open [default: 10/30s].
    #[arg(long, env = "MAHJONG_TABLES_RATE")]
    pub tables_rate: Option<Rate>,
    /// Seats one player may take [default: 20/3s].
    #[arg(long, env = "MAHJONG_SEATS_RATE")]
    pub seats_rate: Option<Rate>,
    /// Table connections (WebSockets, classic logins) one address may open
    /// [default: 30/2s].
    #[arg(long, env = "MAHJONG_CONNECTIONS_RATE")]
    pub connections_rate: Option<Rate>,
    /// Tables one player has opened that wait to start [default: 4].
    #[arg(long, env = "MAHJONG_MAX_WAITING_TABLES")]
    pub max_waiting_tables: Option<u32>,
    /// Seats one player holds at games not over [default: 8].
    #[arg(long, env = "MAHJONG_MAX_SEATS")]
    pub max_seats: Option<u32>,
    /// Games of four robots one player has running [default: 2].
    #[arg(long, env = "MAHJONG_MAX_ROBOT_GAMES")]
    pub max_robot_games: Option<u32>,
    /// Only logged-in players may start games of four robots.
    #[arg(long, env = "MAHJONG_ROBOT_GAMES_NEED_ACCOUNT")]
    pub robot_games_need_account: bool,
    /// Rounds a game of four robots may play at most (its NumRounds) [default: 4].
    #[arg(long, env = "MAHJONG_MAX_ROBOT_GAME_ROUNDS", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub max_robot_game_rounds: Option<u32>,
    /// Hands of robots alone one player may have dealt per hour (0: no games
    /// of robots alone); an admin may change it [default: 48].
    #[arg(long, env = "MAHJONG_ROBOT_HANDS_PER_HOUR")]
    pub robot_hands_per_hour: Option<u32>,
    /// Hands of robots alone one player may have dealt per day; an admin may
    /// change it [default: 192].
    #[arg(long, env = "MAHJONG_ROBOT_HANDS_PER_DAY")]
    pub robot_hands_per_day: Option<u32>,
    /// Seconds a game of robots alone is stored after its last change,
    /// unless someone keeps it; an admin may change it [default: 604800, a week].
    #[arg(long, env = "MAHJONG_ROBOT_GAMES_KEPT_FOR", value_parser = clap::value_parser!(u64).range(1..))]
    pub robot_games_kept_for: Option<u64>,
    /// Chat messages one seat may send [default: 10/2s].
    #[arg(long, env = "MAHJONG_CHAT_RATE")]
    pub chat_rate: Option<Rate>,
    /// Pauses, pause changes, option and manager changes one seat may ask
    /// for [default: 20/500ms].
    #[arg(long, env = "MAHJONG_TABLE_REQUESTS_RATE")]
    pub table_requests_rate: Option<Rate>,
    /// Chat messages a table keeps in memory for clients that reconnect (the
    /// stored log keeps them all) [default: 200].
    #[arg(long, env = "MAHJONG_CHAT_KEPT")]
    pub chat_kept: Option<usize>,
    /// Seconds a table not started, with no person connected, stays open [default: 600].
    #[arg(long, env = "MAHJONG_IDLE_OPEN_TABLE", value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_open_table: Option<u64>,
    /// Seconds a game with people seated and none connected goes on waiting
    /// before it ends as it stands [default: 1800].
    #[arg(long, env = "MAHJONG_IDLE_GAME", value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_game: Option<u64>,
    /// Login and registration attempts per address [default: 20/3s].
    #[arg(long, env = "MAHJONG_LOGIN_RATE")]
    pub login_rate: Option<Rate>,
    /// Accounts registered per address [default: 5/10min].
    #[arg(long, env = "MAHJONG_REGISTRATIONS_RATE")]
    pub registrations_rate: Option<Rate>,
    /// Addresses or networks no per-address limit or per-player quota
    /// applies to (a load test's, say): `127.0.0.1`, `10.0.0.0/8`;
    /// comma-separated.
    #[arg(long, env = "MAHJONG_EXEMPT_ADDRESS", value_delimiter = ',', value_parser = crate::limits::address::parse_network)]
    pub exempt_address: Vec<ipnet::IpNet>,
}

impl LimitArgs {
    /// The limits these flags set.
    pub fn limits(&self) -> Limits {
        let d = Limits::default();
        let secs = Duration::from_secs;
        Limits {
            connections_per_address: self.max_connections_per_address.unwrap_or(d.connections_per_address),
            websockets_per_address: self.max_websockets_per_address.unwrap_or(d.websockets_per_address),
            classic_per_address: self.max_classic_per_address.unwrap_or(d.classic_per_address),
            connections: self.max_connections.or(d.connections),
            header_timeout: self.header_timeout.map_or(d.header_timeout, secs),
            tables_opened: self.tables_rate.unwrap_or(d.tables_opened),
            seats_taken: self.seats_rate.unwrap_or(d.seats_taken),
            connections_opened: self.connections_rate.unwrap_or(d.connections_opened),
            waiting_tables: self.max_waiting_tables.unwrap_or(d.waiting_tables),
            seats: self.max_seats.unwrap_or(d.seats),
            robot_games: self.max_robot_games.unwrap_or(d.robot_games),
            robot_games_need_account: self.robot_games_need_account || d.robot_games_need_account,
            robot_game_rounds: self.max_robot_game_rounds.unwrap_or(d.robot_game_rounds),
            robot_budget: crate::limits::RobotBudget {
                hands_per_hour: self.robot_hands_per_hour.unwrap_or(d.robot_budget.hands_per_hour),
                hands_per_day: self.robot_hands_per_day.unwrap_or(d.robot_budget.hands_per_day),
                kept_for: self.robot_games_kept_for.map_or(d.robot_budget.kept_for, secs),
            },
            chat: self.chat_rate.unwrap_or(d.chat),
            table_requests: self.table_requests_rate.unwrap_or(d.table_requests),
            chat_kept: self.chat_kept.unwrap_or(d.chat_kept),
            idle_open_table: self.idle_open_table.map_or(d.idle_open_table, secs),
            idle_game: self.idle_game.map_or(d.idle_game, secs),
            exempt: Exempt::new(self.exempt_address.clone()),
        }
    }

    /// The accounts' settings these flags set.
    pub fn accounts(&self) -> AccountSettings {
        let d = AccountSettings::default();
        AccountSettings {
            per_address: self.login_rate.unwrap_or(d.per_address),
            registrations: self.registrations_rate.unwrap_or(d.registrations),
            ..d
        }
    }
}

/// `--disconnect-penalties N1,N2,N3`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Penalties(pub [i64; 3]);

fn parse_penalties(text: &str) -> Result<Penalties, ConfigError> {
    let parts: Vec<&str> = text.split(',').collect();
    let mut out = [0i64; 3];
    if parts.len() > 3 {
        return Err(ConfigError::TooManyPenalties);
    }
    for (slot, part) in out.iter_mut().zip(&parts) {
        *slot = part
            .trim()
            .parse::<i64>()
            .ok()
            .filter(|n| (0..=100_000).contains(n))
            .ok_or_else(|| ConfigError::Penalty(part.to_string()))?;
    }
    Ok(Penalties(out))
}

impl ServeArgs {
    /// How to reach NATS (`--nats` and its companions), if in cluster mode.
    pub fn nats_access(&self) -> Result<Option<crate::cluster::access::NatsAccess>, String> {
        let Some(urls) = &self.nats else { return Ok(None) };
        let flags = crate::cluster::access::NatsFlags {
            user: self.nats_user.clone(),
            password: self.nats_password.clone(),
            token: self.nats_token.clone(),
            nkey_file: self.nats_nkey.clone(),
            creds_file: self.nats_creds.clone(),
            ca: self.nats_ca.clone(),
            cert: self.nats_cert.clone(),
            key: self.nats_key.clone(),
        };
        crate::cluster::access::NatsAccess::new(urls, flags).map(Some)
    }

    /// The flags' defaults, as a bare `mahjong-server` uses them.
    pub fn defaults() -> ServeArgs {
        ServeArgs {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            database: crate::store::DEFAULT_DATABASE.to_string(),
            nats: None,
            nats_user: None,
            nats_password: None,
            nats_token: None,
            nats_nkey: None,
            nats_creds: None,
            nats_ca: None,
            nats_cert: None,
            nats_key: None,
            node_name: None,
            lease_seconds: 5,
            rebalance_at_once: 4,
            wait_for_services: 60,
            timeout: None,
            pause: 0,
            random_seats: false,
            id_order_seats: false,
            seed: None,
            wallfile: None,
            option_file: None,
            preset: presets::DEFAULT_PRESET.to_string(),
            no_manager: false,
            no_special_scores: false,
            robot_takeover: None,
            end_on_disconnect: false,
            disconnect_penalties: Penalties::default(),
            require_accounts: false,
            classic_listen: None,
            classic_no_accounts: false,
            walls: None,
            load_game: None,
            classic_guest_passwords: false,
            allowed_origin: Vec::new(),
            metrics_token: None,
            metrics_listen: None,
            trusted_proxy: Vec::new(),
            client_address_header: Default::default(),
            limits: LimitArgs::default(),
        }
    }

    /// Checks the flags and reads the files they name. Defaults naming a
    /// built-in preset are checked whole here; a custom preset is known only
    /// once the store is open (see [`Server::build`]).
    pub fn table_defaults(&self) -> Result<TableDefaults, ConfigError> {
        let defaults = self.default_options()?;
        let options = match preset_book::built_in(&defaults.preset) {
            Some(_) => Some(defaults.check(&PresetBook::built_in_only()).map_err(ConfigError::Defaults)?.1),
            None => None,
        };
        let first_wall = match &self.wallfile {
            Some(path) => {
                let text = read(path)?;
                let tiles =
                    parse_tiles(text.trim()).map_err(|source| ConfigError::WallTiles { path: path.clone(), source })?;
                if let Some(options) = &options {
                    Wall::from_tiles(tiles.clone(), options)
                        .map_err(|source| ConfigError::Wall { path: path.clone(), source })?;
                }
                Some(tiles)
            }
            None => None,
        };
        let mut later_walls = Vec::new();
        let first_wall = match &self.walls {
            Some(path) => {
                let text = read(path)?;
                let mut walls = Vec::new();
                for line in text.lines().filter(|l| !l.trim().is_empty()) {
                    let tiles = parse_tiles(line.trim())
                        .map_err(|source| ConfigError::WallTiles { path: path.clone(), source })?;
                    if let Some(options) = &options {
                        Wall::from_tiles(tiles.clone(), options)
                            .map_err(|source| ConfigError::Wall { path: path.clone(), source })?;
                    }
                    walls.push(tiles);
                }
                let mut walls = walls.into_iter();
                let first = walls.next();
                later_walls = walls.collect();
                first
            }
            None => first_wall,
        };
        Ok(TableDefaults {
            options: defaults,
            pause_deciseconds: self.pause,
            random_seats: self.random_seats,
            no_manager: self.no_manager,
            no_special_scores: self.no_special_scores,
            seed: self.seed,
            first_wall,
            later_walls,
            robot_takeover_secs: self.robot_takeover,
            end_on_disconnect: self.end_on_disconnect,
            disconnect_penalties: self.disconnect_penalties.0,
            subscriber_queue: 1024,
        })
    }

    /// The defaults of new tables the flags give: `--preset` (or the option
    /// file's `Preset` line), the option file's options over it, and
    /// `--timeout` as the `Timeout` option. Each option is checked on its
    /// own; the whole, with its preset, in [`DefaultOptions::check`].
    pub fn default_options(&self) -> Result<DefaultOptions, ConfigError> {
        let mut defaults = DefaultOptions { preset: self.preset.clone(), ..DefaultOptions::default() };
        if let Some(path) = &self.option_file {
            let text = read(path)?;
            let bad = |source| ConfigError::OptionFile { path: path.clone(), source };
            let file = OptionFile::parse(&text).map_err(bad)?;
            if let Some((_, preset)) = file.preset.clone() {
                defaults.preset = preset;
            }
            defaults.options = file.json_options().map_err(bad)?;
        }
        if let Some(timeout) = self.timeout {
            defaults.options.insert("Timeout".into(), timeout.into());
        }
        Ok(defaults)
    }
}

/// A preset's options with an option file applied over them (the
/// simulator's: a preset of `book`, then the file, whose own `Preset` line
/// may name a built-in preset).
pub fn preset_with_option_file(
    book: &PresetBook,
    preset: &str,
    option_file: Option<&std::path::Path>,
) -> Result<crate::rules::GameOptions, ConfigError> {
    let mut options = book.options(preset).map_err(ConfigError::Preset)?;
    if let Some(path) = option_file {
        let text = read(path)?;
        options
            .apply_option_file(&text)
            .map_err(|source| ConfigError::OptionFile { path: path.to_path_buf(), source })?;
    }
    Ok(options)
}

fn read(path: &std::path::Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.to_path_buf(), source })
}

/// A game file (or mj-server log) to load when the server starts
/// (`--load-game`), read and checked.
pub struct LoadGame {
    /// The file it was read from (for the log).
    pub path: PathBuf,
    /// The game, checked.
    pub checked: Checked,
    /// What kind of file it was.
    pub source: Source,
}

/// How the server serves: its time limits, its accounts, its policy, and
/// the classic protocol's listener if any.
#[derive(Debug, Default)]
pub struct Serving {
    /// What one client may hold and how fast it may ask.
    pub limits: Limits,
    /// `--classic-guest-passwords`: classic guests give a password.
    pub classic_guest_passwords: bool,
    /// `--allowed-origin`: other origins whose pages may open a WebSocket
    /// authenticated by the session cookie.
    pub allowed_origins: Vec<String>,
    /// The REST requests' time limits.
    pub timeouts: Timeouts,
    /// The accounts' hashing cost and rate limits.
    pub accounts: AccountSettings,
    /// `--require-accounts`: guests may not sit.
    pub require_accounts: bool,
    /// `--classic-listen`: where xmj and mj-player connect (bound already).
    pub classic: Option<crate::classic::ClassicListener>,
    /// `--classic-no-accounts`: classic logins naming an account are refused.
    pub classic_refuses_accounts: bool,
    /// `--metrics-token`: `/metrics` asks for it.
    pub metrics_token: Option<String>,
    /// `--metrics-listen`: `/metrics` is served there (bound already), and
    /// not beside the API.
    pub metrics_listener: Option<TcpListener>,
    /// `--trusted-proxy`, `--client-address-header`: whose forwarding header
    /// says the client's address.
    pub trusted_proxies: crate::http::forwarded::TrustedProxies,
}

/// What a server is made of: the listener it answers on (bound already:
/// `--listen 127.0.0.1:0` takes any free port, and [`Server::local_addr`]
/// says which), its store, the settings of its tables, how it serves, and a
/// game to load at start.
pub struct ServerConfig {
    /// Where it answers HTTP and WebSockets.
    pub listener: TcpListener,
    /// Its games.
    pub store: Store,
    /// The settings of new tables (from the flags).
    pub defaults: TableDefaults,
    /// Its limits, accounts, policy and classic listener.
    pub serving: Serving,
    /// `--load-game`.
    pub load: Option<LoadGame>,
    /// `--nats`: the cluster to join (Postgres only).
    pub cluster: Option<ClusterConfig>,
}

impl ServerConfig {
    /// A server on `listener` and `store` with every default.
    pub fn new(listener: TcpListener, store: Store) -> ServerConfig {
        ServerConfig {
            listener,
            store,
            defaults: TableDefaults::default(),
            serving: Serving::default(),
            load: None,
            cluster: None,
        }
    }
}

/// Why `--nats` is refused with SQLite.
pub const CLUSTER_NEEDS_POSTGRES: &str = "--nats (cluster mode) needs a Postgres database shared by every node \
     (--database postgres://...): an SQLite file serves one node, and stays the single-node default";

/// A server built and ready to answer: the binary's and every test's.
///
/// ```ignore
/// let server = Server::build(ServerConfig::new(listener, store)).await?;
/// let addr = server.local_addr();
/// let stop = server.shutdown(); // stop.stop() from anywhere ends it
/// server.run_until_stopped().await?;
/// ```
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
    router: axum::Router,
    lobby: Arc<Lobby>,
    store: Store,
    quotas: Arc<Quotas>,
    shutdown: Shutdown,
    cluster: Option<Arc<Cluster>>,
    /// Whose forwarding header says the client's address.
    proxies: Arc<crate::http::forwarded::TrustedProxies>,
}

impl Server {
    /// Builds the server. First it reads which stored games come back as
    /// tables (every unfinished game, and those finished within the time a
    /// finished table stays) and where the numbering of new tables goes on,
    /// and the game to load is stored as a new game (a table at once if it
    /// is not over; the game's id and its people's new seat tokens are
    /// printed on standard output as one JSON line, never logged); then the
    /// stored games start coming back in the background (`/readyz` says how
    /// far; a table still on its way is answered `503 recovering`), and the
    /// classic listener and the housekeeping start. A failure closes the
    /// store.
    pub async fn build(config: ServerConfig) -> std::io::Result<Server> {
        let ServerConfig { listener, store, defaults, serving, load, cluster } = config;
        let addr = listener.local_addr()?;
        // Cluster mode: every write of a table is fenced by its epoch.
        let store = match &cluster {
            Some(_) if store.backend() != crate::store::Backend::Postgres => {
                store.close().await;
                return Err(std::io::Error::other(CLUSTER_NEEDS_POSTGRES));
            }
            Some(_) => store.fenced(),
            None => store,
        };
        // First, so that the tables resumed below are counted.
        let metrics = crate::metrics::install();
        let shutdown = Shutdown::new();
        // The rules are read before any table resumes: flags that name no
        // preset stop the server before it does anything.
        let rulebook = match Rulebook::load(store.clone(), defaults.options.clone()).await {
            Ok(rulebook) => Arc::new(rulebook),
            Err(e) => {
                store.close().await;
                return Err(std::io::Error::other(e.to_string()));
            }
        };
        if let Some(tiles) = &defaults.first_wall {
            // A table deals a shuffled wall when the wall file does not suit its
            // options; say so now if it does not suit the defaults in force.
            let rules = rulebook.current();
            if let Ok((_, options)) = rules.defaults.check(&rules.presets)
                && let Err(e) = Wall::from_tiles(tiles.clone(), &options)
            {
                tracing::warn!("the wall file does not suit the defaults in force ({e}): tables will shuffle");
            }
        }
        let quotas = Quotas::new(serving.limits.clone());
        let proxies = Arc::new(serving.trusted_proxies.clone());
        let lobby = Arc::new(Lobby::new(store.clone(), TableLimits::from(&serving.limits)).with_quotas(quotas.clone()));
        // Read before anything is answered, so that a request for a table on
        // its way back is told so, and a new table (the loaded game's too)
        // neither takes a stored game's number nor is taken for one to recover.
        // In a cluster the stored games come back by being taken over
        // (`cluster`): the node joins, and takes its share.
        let returning = match lobby.continue_numbering(defaults.seed).await {
            Ok(_) if cluster.is_some() => Ok(Default::default()),
            Ok(_) => lobby.expect_returning().await,
            Err(e) => Err(e),
        };
        let returning = match returning {
            Ok(returning) => returning,
            Err(e) => {
                store.close().await;
                return Err(std::io::Error::other(e));
            }
        };
        let cluster = match cluster {
            Some(config) => match Cluster::join(config, store.clone(), lobby.clone()).await {
                Ok(cluster) => Some(cluster),
                Err(e) => {
                    store.close().await;
                    return Err(std::io::Error::other(e.to_string()));
                }
            },
            None => None,
        };
        if let Some(LoadGame { path, checked, source }) = load {
            match game_file::load(&lobby, checked, source).await {
                Ok(imported) => {
                    let tokens = imported.seats.len();
                    tracing::info!(table = %imported.id, state = imported.state.as_str(), tokens, "loaded {}", path.display());
                    // The new seat tokens are for the operator to hand to the
                    // players: printed once on standard output, as `import`
                    // prints them, never written to the log.
                    println!("{}", serde_json::to_string(&imported).unwrap_or_default());
                }
                Err(e) => {
                    lobby.shutdown().await;
                    store.close().await;
                    return Err(std::io::Error::other(format!("cannot load the game of {}: {e}", path.display())));
                }
            }
        }
        let accounts = match Accounts::new(store.clone(), serving.accounts) {
            Ok(accounts) => Arc::new(accounts),
            Err(e) => {
                lobby.shutdown().await;
                store.close().await;
                return Err(std::io::Error::other(e));
            }
        };
        // In a cluster every limit counts over the nodes.
        if let Some(cluster) = &cluster {
            quotas.share(cluster.clone());
            accounts.share(cluster.clone());
        }
        // The stored games come back while the server answers (each table plays
        // as soon as it is back); `Lobby::shutdown` waits for what is under way.
        let recovering = lobby.clone();
        tokio::spawn(async move {
            recovering.recover(returning).await;
        });
        forget_expired_sessions(accounts.clone(), &shutdown);
        forget_old_robot_games(lobby.clone(), &shutdown);
        end_seat_tokens_with_sessions(&accounts, lobby.clone(), cluster.clone(), &shutdown);
        if let Some(cluster) = &cluster {
            hear_sessions_ended_elsewhere(cluster, accounts.clone(), &shutdown);
        }
        if let Some(listener) = serving.classic {
            let front =
                crate::classic::ClassicFront::new(lobby.clone(), rulebook.clone(), defaults.clone(), quotas.clone())
                    .with_accounts(accounts.clone(), serving.classic_refuses_accounts, serving.require_accounts)
                    .with_guest_passwords(serving.classic_guest_passwords);
            shutdown.spawn(listener.run(Arc::new(front), shutdown.clone()));
        }
        let state = AppState {
            lobby: lobby.clone(),
            defaults: Arc::new(defaults),
            rulebook,
            shutdown: shutdown.clone(),
            timeouts: serving.timeouts,
            accounts,
            require_accounts: serving.require_accounts,
            metrics,
            quotas: quotas.clone(),
            allowed_origins: Arc::new(serving.allowed_origins),
            cluster: cluster.clone(),
            metrics_access: Arc::new(crate::http::metrics::MetricsAccess::new(
                serving.metrics_token.as_deref(),
                serving.metrics_listener.is_some(),
            )),
        };
        if let Some(listener) = serving.metrics_listener {
            let metrics = crate::http::metrics::own_listener(state.clone());
            let stopping = shutdown.clone();
            shutdown.spawn(async move {
                let served =
                    axum::serve(listener, metrics).with_graceful_shutdown(async move { stopping.stopped().await });
                if let Err(e) = served.await {
                    tracing::error!("the metrics' listener failed: {e}");
                }
            });
        }
        let router = router(state);
        Ok(Server { listener, addr, router, lobby, store, quotas, shutdown, cluster, proxies })
    }

    /// Its part in a cluster (`--nats`), if any.
    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.cluster.as_ref()
    }

    /// The address it answers on (the port really bound, when asked for `:0`).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its stop signal: [`Shutdown::stop`] ends [`Server::run_until_stopped`].
    pub fn shutdown(&self) -> Shutdown {
        self.shutdown.clone()
    }

    /// As [`Server::run_until_stopped`], and `stop` completing gives the
    /// signal too (the binary's SIGINT and SIGTERM, a test's end).
    pub async fn run_until(self, stop: impl Future<Output = ()> + Send + 'static) -> std::io::Result<()> {
        let shutdown = self.shutdown();
        let signal = shutdown.clone();
        // Not a task of the signal: it ends at the signal, whoever gives it.
        tokio::spawn(async move {
            tokio::select! {
                _ = stop => signal.stop(),
                _ = signal.stopped() => {}
            }
        });
        self.run_until_stopped().await
    }

    /// Logs `serving on http://ADDR` and answers until the stop signal; then
    /// it stops in order: the HTTP server stops (WebSockets close with
    /// 1001, open requests finish, classic sessions end), every task the
    /// signal tracks is waited for, recovery takes no more games, every
    /// table writes what it has pending and ends, then the store commits
    /// what it was given and closes.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let Server { listener, addr, router, lobby, store, quotas, shutdown, cluster, proxies } = self;
        tracing::info!("serving on http://{addr}");
        let served = crate::http::serve::serve(listener, router, quotas, proxies, shutdown.clone()).await;
        shutdown.stop();
        shutdown.wait().await;
        // In a cluster the tables go on elsewhere: handed over, not just stopped.
        if let Some(cluster) = cluster {
            cluster.leave().await;
        }
        lobby.shutdown().await;
        store.close().await;
        served
    }
}

/// Forgets expired sessions once an hour until the server stops (a session
/// is refused once expired whether or not it has been forgotten).
/// Forgets the old games of robots alone nobody keeps, every hour (or
/// twice in the time they are kept for, when that is shorter); puts in
/// force the budget an admin stored first.
fn forget_old_robot_games(lobby: Arc<Lobby>, shutdown: &Shutdown) {
    let stopping = shutdown.clone();
    shutdown.spawn(async move {
        if let Err(e) = lobby.refresh_robot_budget().await {
            tracing::warn!("cannot read the budget of games of robots alone: {e}");
        }
        loop {
            let kept_for = lobby.quotas().robot_budget().kept_for;
            let every = (kept_for / 2).clamp(Duration::from_secs(1), Duration::from_secs(3600));
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = stopping.stopped() => return,
            }
            match lobby.forget_old_robot_games().await {
                Ok(0) => {}
                Ok(n) => tracing::info!("{n} old games of robots alone forgotten"),
                Err(e) => tracing::warn!("forgetting old games of robots alone: {e}"),
            }
        }
    });
}

fn forget_expired_sessions(accounts: Arc<Accounts>, shutdown: &Shutdown) {
    let stopping = shutdown.clone();
    shutdown.spawn(async move {
        let mut hourly = tokio::time::interval(std::time::Duration::from_secs(3600));
        loop {
            tokio::select! {
                _ = hourly.tick() => {}
                _ = stopping.stopped() => return,
            }
            match accounts.forget_expired().await {
                Ok(0) => {}
                Ok(n) => tracing::info!("{n} expired sessions forgotten"),
                Err(e) => tracing::warn!("forgetting expired sessions: {e}"),
            }
        }
    });
}

/// Ends the seat tokens of an account's seats when its sessions end (logged
/// out, out everywhere, password changed, disabled), at every table: a seat
/// token given to a session lives no longer than it (in a cluster, at
/// every node's tables).
fn end_seat_tokens_with_sessions(
    accounts: &Accounts,
    lobby: Arc<Lobby>,
    cluster: Option<Arc<Cluster>>,
    shutdown: &Shutdown,
) {
    let mut news = accounts.revocations_here();
    let stopping = shutdown.clone();
    shutdown.spawn(async move {
        loop {
            let revoked = tokio::select! {
                revoked = news.recv() => revoked,
                _ = stopping.stopped() => return,
            };
            let revoked = match revoked {
                Ok(revoked) => revoked,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!("{missed} ends of sessions missed: their seat tokens outlive them");
                    continue;
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            };
            for table in lobby.handles() {
                let _ = table.send(TableCommand::EndSeatTokens(revoked.clone())).await;
            }
            // The other nodes' tables too.
            if let Some(cluster) = &cluster {
                cluster.revoked(&revoked).await;
            }
        }
    });
}

/// Sessions another node ended close the connections made here with them
/// (the cluster tells this node's tables itself).
fn hear_sessions_ended_elsewhere(cluster: &Cluster, accounts: Arc<Accounts>, shutdown: &Shutdown) {
    let mut news = cluster.revocations_heard();
    let stopping = shutdown.clone();
    shutdown.spawn(async move {
        loop {
            let revoked = tokio::select! {
                revoked = news.recv() => revoked,
                _ = stopping.stopped() => return,
            };
            match revoked {
                Ok(revoked) => accounts.revoked_elsewhere(revoked),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!("{missed} ends of sessions at other nodes missed");
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    });
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
}
