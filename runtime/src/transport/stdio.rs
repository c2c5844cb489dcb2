//! stdio transport (placeholder, replaced below).
