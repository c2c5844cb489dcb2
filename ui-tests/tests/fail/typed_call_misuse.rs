use switchyard::prelude::*;
use switchyard::testing::TestClient;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Word {
    word: String,
}

#[derive(serde::Serialize)]
struct Other {
    word: String,
}

/// Deserialize only: serving needs no more.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Bare {
    word: String,
}

/// Serialize only: serving needs no more.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Out {
    word: String,
}

/// Shouts.
#[mcp_tool]
async fn shout(w: Word) -> String {
    w.word
}

/// Echoes.
#[mcp_tool]
async fn bare(w: Bare) -> Json<Out> {
    Json(Out { word: w.word })
}

/// A prompt has no typed call.
#[mcp_prompt]
async fn review() -> String {
    String::new()
}

async fn calls(client: &TestClient) {
    let _ = shout::call(client, Other { word: "a".into() }).await;
    let _: Result<u32, _> = shout::call(client, Word { word: "a".into() }).await;
    let _ = bare::call(client, Bare { word: "a".into() });
    let _ = review::call(client, ());
}

fn main() {
    let _ = calls;
}
