//! How messages reach the server. stdio (a child process, or any byte stream pair) for now.

pub(crate) mod stdio;
