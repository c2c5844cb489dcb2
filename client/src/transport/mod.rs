//! How messages reach the server: stdio (a child process, or any byte stream pair) and
//! Streamable HTTP. Each gives the peer a stream of incoming messages and a sink for outgoing
//! ones.

#[cfg(feature = "http")]
pub(crate) mod http;
pub(crate) mod stdio;
