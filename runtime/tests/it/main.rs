//! The runtime's integration tests, in one binary so the crate and its dependencies are linked
//! once. Run one module with a filter: `cargo test -p switchyard-mcp --test it pipeline::`.
//!
//! All modules register into one `inventory`: each module's handlers and filters are in groups of
//! its own, and every server here selects its groups, so no module sees another's registrations.

mod alternate;
mod composition;
mod dpop;
mod dynamic;
mod early_refusals;
mod encoded_results;
mod http_body;
mod http_connection_identity;
mod http_connections;
mod http_reply;
mod input;
mod introspection;
mod jwks;
mod listen_replacement;
mod metadata;
mod observability;
mod outside_transport;
mod pipeline;
mod ready_filters;
mod scopes;
mod server;
mod sessions;
mod sse_wakeups;
mod stdio_backlog;
mod stdio_inline;
mod stdio_task;
mod subscriptions;
mod text_results;
mod tool_arguments;
mod tool_limits;
mod typed_calls;
mod unfiltered_calls;
mod uri_templates;
