//! The wire-level tests, in one binary so the runtime, reqwest and tokio are linked once rather
//! than once per file. Run one module with a filter: `cargo test -p switchyard-tests --test it http_modern::`.

mod common;

mod adversarial;
mod apps;
mod auth_flags;
mod batches;
mod catalogue;
mod client;
mod client_tasks;
mod cluster;
mod drain;
mod fairness;
mod fixture;
mod gateway;
mod hardening;
mod hosts;
mod http_legacy;
mod http_modern;
mod input;
mod listen_custom;
mod listen_http;
mod listen_limits;
mod load;
mod media_types;
mod nats_hub;
mod oauth_e2e;
mod otel;
mod probes;
mod proxies;
mod readme;
mod real_client;
mod reference_server;
mod resource_interest;
mod skills;
mod soak;
mod state_rotation;
mod stdio;
mod store_startup;
mod subscriptions;
mod tasks;
mod tool_results;
