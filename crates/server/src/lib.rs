//! An online Mah-Jong server for the Chinese Classical game.
//!
//! `rules`, `bots` and `sim` are the pure game engine, from the crate
//! `mahjong-engine` (re-exported here, so that the service and its users name
//! one `mahjong::rules`); `protocol` holds the wire formats;
//! `store` keeps the games; `table` runs one actor task per table;
//! `game_file` exports, checks and loads whole games; `http` serves the REST
//! API and the WebSockets; `cluster` joins several nodes on one Postgres and NATS;
//! `server` puts them together. `metrics` is what
//! they count, at the bottom: it only wraps the `metrics` crate; `limits`, beside
//! it, is the one policy of what a client may hold and how fast it may ask, and `text`
//! the one policy of the text people give (names, chat). The tools
//! around the product (the API client of the tests, the load test, the store
//! benchmark) are the crate `mahjong-tools`, which builds on this one.

pub mod auth;
pub mod classic;
pub mod cluster;
pub mod game_file;
pub mod http;
pub mod limits;
pub mod metrics;
pub mod protocol;
pub mod replay;
pub mod server;
pub mod shutdown;
pub mod store;
pub mod table;
pub mod text;

pub use mahjong_engine::{bots, rules, sim};
