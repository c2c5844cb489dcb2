//! Transports: stdio and Streamable HTTP, both adapters over one [`Server`](crate::Server).

#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "stdio")]
pub mod stdio;
