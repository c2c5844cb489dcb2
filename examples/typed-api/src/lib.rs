//! The API of a notes server, declared once for the server and its clients.
//!
//! Each body-less `#[mcp_tool]` or `#[mcp_rpc]` below is a declaration: it gives the typed call
//! (`typed_api::add_note::call(&client, NewNote { .. })`) and names nothing the server runs. The
//! server implements each with `#[mcp_tool(declared = typed_api::add_note)]`, which fails to
//! compile when its name, params or output drift from the declaration; the client depends on
//! this crate and `switchyard-mcp-client` only.
//!
//! See `examples/typed/server.rs` and `examples/typed/client.rs`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use switchyard::McpError;
use switchyard::prelude::*;

/// The params of `add_note`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NewNote {
    /// The note's text.
    pub text: String,
    /// Tags to file it under.
    #[serde(default)]
    pub tags: Vec<String>,
}

/// A stored note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Note {
    /// Its number, from 1.
    pub id: u64,
    /// The text.
    pub text: String,
    /// The tags.
    pub tags: Vec<String>,
}

/// The params of `find_notes`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Query {
    /// A tag the notes must carry.
    pub tag: String,
}

/// The notes found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Found {
    /// In the order they were added.
    pub notes: Vec<Note>,
}

/// What `acme/notes.stats` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Stats {
    /// How many notes there are.
    pub notes: u64,
    /// How many distinct tags they carry.
    pub tags: u64,
}

/// Stores a note and returns it with its number (tool `notes.add`).
#[mcp_tool(name = "notes.add")]
pub async fn add_note(note: NewNote) -> Json<Note>;

/// The notes carrying a tag (tool `find_notes`).
#[mcp_tool]
pub async fn find_notes(query: Query) -> Json<Found>;

/// Forgets every note and says how many there were, as text (tool `clear`).
#[mcp_tool]
pub async fn clear() -> String;

/// Counts notes and tags (method `acme/notes.stats`).
#[mcp_rpc("acme/notes.stats")]
pub async fn stats() -> Result<Stats, McpError>;
