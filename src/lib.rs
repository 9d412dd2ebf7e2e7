//! The command line of `mahjong-server` that its tests read too: `serve`'s
//! flags and what they make of them (the library `mahjong` takes typed
//! settings and knows no command line). The binary itself, its other
//! subcommands and its start-up are `src/main.rs`; a binary's modules are
//! out of reach of the integration tests (`tests/it/deployment.rs` and
//! `tests/it/protocol_doc.rs` read the flags), hence this library beside it.

pub mod serve;
