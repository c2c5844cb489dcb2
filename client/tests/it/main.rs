//! The client against real servers (this crate's tools served in-process over a pipe) and
//! against a scripted fake server that misbehaves on purpose.

mod fake;
mod hostile;
mod input;
mod listen;
mod raw_http;
mod served;
mod session_tasks;
mod typed;
