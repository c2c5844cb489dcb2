//! `typed_client`: calls the notes server through the typed calls of `typed_api`, which it
//! shares with the server (`examples/typed/server.rs`) without linking the server's handlers.
//! A call compiles only while `typed_api` declares the tool with those types.
//!
//! ```text
//! cargo build --example typed_server && cargo run --example typed_client
//! cargo run --example typed_client -- path/to/typed_server   # another build of the server
//! ```

use std::process::ExitCode;
use switchyard_client::{ClientBuilder, ClientError};
use typed_api::{NewNote, Query};

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    // The server binary: the first argument, else `typed_server` beside this example.
    let path = match std::env::args_os().nth(1) {
        Some(path) => std::path::PathBuf::from(path),
        None => std::env::current_exe()?.with_file_name(format!("typed_server{}", std::env::consts::EXE_SUFFIX)),
    };
    let mut server = tokio::process::Command::new(path);
    server.arg("--stdio");
    let client = ClientBuilder::new("typed-client", env!("CARGO_PKG_VERSION")).connect_stdio(server).await?;

    let note = NewNote { text: "buy milk".into(), tags: vec!["errands".into()] };
    let stored = typed_api::add_note::call(&client, note).await?;
    println!("stored note {}: {}", stored.id, stored.text);
    typed_api::add_note::call(
        &client,
        NewNote { text: "call Ada".into(), tags: vec!["errands".into(), "people".into()] },
    )
    .await?;

    let found = typed_api::find_notes::call(&client, Query { tag: "errands".into() }).await?;
    println!("errands: {:?}", found.notes.iter().map(|n| n.text.as_str()).collect::<Vec<_>>());

    let stats = typed_api::stats::call(&client, ()).await?;
    println!("{} notes, {} tags", stats.notes, stats.tags);

    // A tool that fails is an error of its own kind, and the connection stays usable.
    match typed_api::add_note::call(&client, NewNote { text: " ".into(), tags: Vec::new() }).await {
        Err(ClientError::ToolFailed { name, .. }) => println!("{name} refused an empty note"),
        other => println!("unexpected: {other:?}"),
    }
    println!("{}", typed_api::clear::call(&client, ()).await?);
    client.close().await;
    Ok(())
}
