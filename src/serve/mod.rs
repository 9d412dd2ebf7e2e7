//! `mahjong-server serve`: its flags (mirroring mj-server's where they mean
//! the same, each with an environment fallback) and what they make of them:
//! the library's typed settings ([`mahjong::server::ServerConfig`] and its
//! parts). What the settings name is read and checked by the library
//! ([`mahjong::server::settings`]); here the flags are only written down.

use std::net::SocketAddr;
use std::path::PathBuf;

use mahjong::classic::ClassicListener;
use mahjong::cluster::access::{NatsAccess, NatsFlags};
use mahjong::http::forwarded::{AddressHeader, TrustedProxies};
use mahjong::rules::presets;
use mahjong::server::{ConfigError, Serving, TableSources};
use mahjong::table::TableDefaults;
use tokio::net::TcpListener;

mod cluster;
mod limits;

pub use cluster::cluster_config;
pub use limits::LimitArgs;

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
    #[arg(long, env = "DATABASE_URL", default_value = mahjong::store::DEFAULT_DATABASE)]
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
    #[arg(long, env = "MAHJONG_TRUSTED_PROXY", value_delimiter = ',', value_parser = mahjong::limits::address::parse_network)]
    pub trusted_proxy: Vec<ipnet::IpNet>,
    /// The header the trusted proxies set (only that one is read: a proxy
    /// passes the other through as the client wrote it).
    #[arg(long, env = "MAHJONG_CLIENT_ADDRESS_HEADER", value_enum, default_value = "x-forwarded-for")]
    pub client_address_header: ClientAddressHeader,
    /// What one client may hold and how fast it may ask.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// `--client-address-header`: the library's [`AddressHeader`] as the flag
/// writes it (the words and their help are the flag's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ClientAddressHeader {
    /// `X-Forwarded-For: client, proxy1, ...` (Caddy, nginx, HAProxy, most
    /// load balancers).
    #[default]
    #[value(name = "x-forwarded-for")]
    XForwardedFor,
    /// `Forwarded: for=client, for=proxy1;proto=https, ...` (RFC 7239).
    #[value(name = "forwarded")]
    Forwarded,
}

impl From<ClientAddressHeader> for AddressHeader {
    fn from(header: ClientAddressHeader) -> AddressHeader {
        match header {
            ClientAddressHeader::XForwardedFor => AddressHeader::XForwardedFor,
            ClientAddressHeader::Forwarded => AddressHeader::Forwarded,
        }
    }
}

/// `--disconnect-penalties N1,N2,N3`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Penalties(pub [i64; 3]);

/// Reads `--disconnect-penalties`: at most three whole numbers from 0 to
/// 100000, comma-separated (those left out are 0).
fn parse_penalties(text: &str) -> Result<Penalties, String> {
    let parts: Vec<&str> = text.split(',').collect();
    let mut out = [0i64; 3];
    if parts.len() > 3 {
        return Err("give at most three penalties: N1,N2,N3".to_string());
    }
    for (slot, part) in out.iter_mut().zip(&parts) {
        *slot = part
            .trim()
            .parse::<i64>()
            .ok()
            .filter(|n| (0..=100_000).contains(n))
            .ok_or_else(|| format!("'{part}' is not a penalty (a whole number from 0 to 100000)"))?;
    }
    Ok(Penalties(out))
}

impl ServeArgs {
    /// The flags' defaults, as a bare `mahjong-server` uses them (the
    /// environment is not read).
    pub fn defaults() -> ServeArgs {
        ServeArgs {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            database: mahjong::store::DEFAULT_DATABASE.to_string(),
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
            client_address_header: ClientAddressHeader::default(),
            limits: LimitArgs::default(),
        }
    }

    /// Where the options and walls of new tables come from.
    pub fn table_sources(&self) -> TableSources {
        TableSources {
            preset: self.preset.clone(),
            option_file: self.option_file.clone(),
            timeout: self.timeout,
            wallfile: self.wallfile.clone(),
            walls: self.walls.clone(),
        }
    }

    /// The settings of new tables, the files the flags name read and
    /// checked (by [`TableSources::read_into`]).
    pub fn table_defaults(&self) -> Result<TableDefaults, ConfigError> {
        self.table_sources().read_into(TableDefaults {
            pause_deciseconds: self.pause,
            random_seats: self.random_seats,
            no_manager: self.no_manager,
            no_special_scores: self.no_special_scores,
            seed: self.seed,
            robot_takeover_secs: self.robot_takeover,
            end_on_disconnect: self.end_on_disconnect,
            disconnect_penalties: self.disconnect_penalties.0,
            ..TableDefaults::default()
        })
    }

    /// How the server serves, with its classic and metrics listeners (bound
    /// already, by `serve`).
    pub fn serving(&self, classic: Option<ClassicListener>, metrics_listener: Option<TcpListener>) -> Serving {
        Serving {
            metrics_token: self.metrics_token.clone(),
            metrics_listener,
            limits: self.limits.limits(),
            accounts: self.limits.accounts(),
            require_accounts: self.require_accounts,
            classic,
            classic_refuses_accounts: self.classic_no_accounts,
            classic_guest_passwords: self.classic_guest_passwords,
            allowed_origins: self.allowed_origin.clone(),
            trusted_proxies: TrustedProxies::new(self.trusted_proxy.clone(), self.client_address_header.into()),
            ..Serving::default()
        }
    }

    /// How to reach NATS (`--nats` and its companions), if in cluster mode.
    pub fn nats_access(&self) -> Result<Option<NatsAccess>, String> {
        let Some(urls) = &self.nats else { return Ok(None) };
        let flags = NatsFlags {
            user: self.nats_user.clone(),
            password: self.nats_password.clone(),
            token: self.nats_token.clone(),
            nkey_file: self.nats_nkey.clone(),
            creds_file: self.nats_creds.clone(),
            ca: self.nats_ca.clone(),
            cert: self.nats_cert.clone(),
            key: self.nats_key.clone(),
        };
        NatsAccess::new(urls, flags).map(Some)
    }
}
