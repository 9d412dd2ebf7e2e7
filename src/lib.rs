//! An online Mah-Jong server for the Chinese Classical game.
//!
//! `rules` is the pure game engine; `protocol` holds the wire formats;
//! `store` keeps the games; `table` runs one actor task per table;
//! `game_file` exports, checks and loads whole games; `http` serves the REST
//! API and the WebSockets; `server` puts them together.

pub mod bots;
pub mod client;
pub mod game_file;
pub mod http;
pub mod loadtest;
pub mod protocol;
pub mod replay;
pub mod rules;
pub mod server;
pub mod sim;
pub mod store;
pub mod storebench;
pub mod table;
