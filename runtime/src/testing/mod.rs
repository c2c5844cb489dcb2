//! In-process test client.
