//! The Chinese Classical Mah-Jong engine: what mj-server's rules say, with no
//! runtime, database or network under it.
//!
//! - [`rules`]: tiles, hands, the game as a state machine of commands and
//!   events, scoring, settlement, options and presets;
//! - [`bots`]: the robots' judgement (a robot is a player that answers a
//!   [`rules::TableView`]);
//! - [`sim`]: robot games played to the end, many at once, for the
//!   `simulate` command and the benchmarks.
//!
//! The server (crate `mahjong`) re-exports these modules, so that both name
//! them `mahjong::rules`, `mahjong::bots` and `mahjong::sim`. With the
//! `openapi` feature the types the REST API carries describe themselves to
//! the server's generated OpenAPI document.

pub mod bots;
pub mod rules;
pub mod sim;
