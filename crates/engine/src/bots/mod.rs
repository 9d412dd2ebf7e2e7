//! Robot players: mj-player's strategy parameters and a greedy robot that
//! decides from its own [`TableView`](crate::rules::view::TableView) alone,
//! exactly like a remote player.

mod declare;
mod eval;
pub mod robot;
mod seen;
mod shape;
pub mod strategy;

pub use robot::Robot;
pub use strategy::{Strategy, StrategyError};
