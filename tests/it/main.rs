//! The integration tests: one binary, a module per area, each test run in a
//! process of its own by cargo-nextest (so the tests that set process-wide
//! state, the tracing subscriber or the environment, cannot meet). The
//! browser tests are the other binary, `tests/browser/`; the engine's own
//! tests are in `crates/engine/tests/engine/`.

mod common;

mod accounts;
mod admin_options;
mod archive;
mod classic_protocol;
mod classic_server;
mod client_state;
mod cluster;
mod cluster_trust;
mod conformance;
mod deployment;
mod http_edge;
mod http_trace;
mod import_idempotency;
mod input_hygiene;
mod limits;
mod log_tail;
mod metrics;
mod openapi;
mod permissions;
mod protocol_doc;
mod recovery;
mod restart;
mod score;
mod score_queries;
mod server;
mod settle;
mod settlement_in_play;
mod simulate;
mod store_availability;
mod store_decode;
mod store_parts;
mod web_logic;
