//! The integration tests: one binary, a module per area, each test run in a
//! process of its own by cargo-nextest (so the tests that set process-wide
//! state, the tracing subscriber or the environment, cannot meet). The
//! browser tests are the other binary, `tests/browser/`.

mod common;

mod accounts;
mod admin_options;
mod animals;
mod archive;
mod classic_protocol;
mod classic_server;
mod client_state;
mod cluster;
mod cluster_trust;
mod conformance;
mod deployment;
mod engine_scenarios;
mod http_edge;
mod http_trace;
mod import_idempotency;
mod input_hygiene;
mod legal_actions;
mod limits;
mod log_tail;
mod mah_jong_restrictions;
mod metrics;
mod openapi;
mod permissions;
mod properties;
mod protocol_doc;
mod recovery;
mod restart;
mod score;
mod score_queries;
mod server;
mod settle;
mod settlement_in_play;
mod shanghai;
mod simulate;
mod store_availability;
mod store_decode;
mod store_parts;
mod tile_swap;
mod web_logic;
