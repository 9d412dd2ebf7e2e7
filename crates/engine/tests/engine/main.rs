//! The engine's tests through its public interface, one binary (`cargo test
//! -p mahjong-engine` runs them): legal actions and properties over random
//! games, scenarios the reference corpus never plays, the tile swap, animals,
//! the Shanghai expat rules and Mah-Jong's restrictions. The scenario helpers
//! (`scenario.rs`) also serve the server's integration tests.

// Shared with the server's integration tests: a few helpers serve only those.
#[allow(dead_code)]
mod scenario;

mod animals;
mod legal_actions;
mod mah_jong_restrictions;
mod properties;
mod scenarios;
mod shanghai;
mod tile_swap;
