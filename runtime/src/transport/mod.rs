//! Transports: stdio and Streamable HTTP, both adapters over one [`Server`](crate::Server).

pub mod http;
pub mod stdio;
