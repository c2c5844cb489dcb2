//! What the attribute macros and the runtime must agree on, in one place: the macros include
//! these files by path (`macros/src/vocab` links here), as `serde_derive_internals` shares
//! `serde_derive`'s files. Nothing here may depend on another crate or on `crate::` paths.

pub mod definitions;
pub mod limits;
pub mod metadata;
pub mod methods;
pub mod uri_template;
