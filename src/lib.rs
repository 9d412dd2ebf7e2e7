//! An online Mah-Jong server for the Chinese Classical game.
//!
//! `rules` is the pure game engine; `protocol` holds the wire formats;
//! `table` runs one actor task per table; `http` serves the REST API and the
//! WebSockets; `server` puts them together.

pub mod bots;
pub mod client;
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
