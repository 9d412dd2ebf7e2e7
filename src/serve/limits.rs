//! The limits' flags of `serve` (docs/protocol.md, "Limits") and the
//! library's [`Limits`] and [`AccountSettings`] they make.

use std::time::Duration;

use mahjong::auth::AccountSettings;
use mahjong::limits::{Exempt, Limits, Rate, RobotBudget};

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
    #[arg(long, env = "MAHJONG_EXEMPT_ADDRESS", value_delimiter = ',', value_parser = mahjong::limits::address::parse_network)]
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
            robot_budget: RobotBudget {
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
