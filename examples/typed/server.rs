//! `typed_server`: the notes server, implementing the declarations of `typed_api`
//! (`examples/typed-api`). Each handler names its declaration with `declared = ...`: a name,
//! params type or output that drifts from it fails this build, not the clients at run time.
//!
//! ```text
//! cargo run --example typed_server -- --stdio
//! cargo run --example typed_client      # starts this server and calls it through typed_api
//! ```

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::sync::Mutex;
use switchyard::prelude::*;
use typed_api::{Found, NewNote, Note, Query, Stats};

/// The notes, in memory.
#[derive(Default)]
struct Notes(Mutex<Vec<Note>>);

impl Notes {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Note>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Stores a note and returns it with its number.
#[mcp_tool(name = "notes.add", declared = typed_api::add_note)]
async fn add_note(note: NewNote, notes: State<Notes>) -> Result<Json<Note>, ToolError> {
    if note.text.trim().is_empty() {
        return Err(ToolError::new("a note needs some text"));
    }
    let mut notes = notes.lock();
    let stored = Note { id: notes.len() as u64 + 1, text: note.text, tags: note.tags };
    notes.push(stored.clone());
    Ok(Json(stored))
}

/// The notes carrying a tag, in the order they were added.
#[mcp_tool(read_only, declared = typed_api::find_notes)]
async fn find_notes(query: Query, notes: State<Notes>) -> Json<Found> {
    let found = notes.lock().iter().filter(|n| n.tags.contains(&query.tag)).cloned().collect();
    Json(Found { notes: found })
}

/// Forgets every note.
#[mcp_tool(destructive, declared = typed_api::clear)]
async fn clear(notes: State<Notes>) -> String {
    let forgotten = std::mem::take(&mut *notes.lock());
    format!("forgot {} notes", forgotten.len())
}

#[mcp_rpc("acme/notes.stats", declared = typed_api::stats)]
async fn stats(notes: State<Notes>) -> Result<Stats, McpError> {
    let notes = notes.lock();
    let tags: BTreeSet<&String> = notes.iter().flat_map(|n| &n.tags).collect();
    Ok(Stats { notes: notes.len() as u64, tags: tags.len() as u64 })
}

#[tokio::main]
async fn main() -> ExitCode {
    let server = Server::builder("switchyard-typed-notes", env!("CARGO_PKG_VERSION")).state(Notes::default()).build();
    match server {
        Ok(server) => switchyard::cli::run(server).await,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
