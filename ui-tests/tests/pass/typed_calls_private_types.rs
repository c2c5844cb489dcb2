//! A public handler whose params and output types are private to its module still compiles
//! (rustc warns about the function, as it always did), and its typed call works in its module
//! and the modules inside it.

mod tools {
    use serde::{Deserialize, Serialize};
    use switchyard::prelude::*;

    #[derive(Serialize, Deserialize, schemars::JsonSchema)]
    struct Args {
        x: i32,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
    struct Doubled {
        x: i32,
    }

    /// Doubles.
    #[mcp_tool]
    pub async fn double(a: Args) -> Json<Doubled> {
        Json(Doubled { x: a.x * 2 })
    }

    /// Halves.
    #[mcp_tool]
    pub(crate) async fn half(a: Args) -> String {
        (a.x / 2).to_string()
    }

    pub mod check {
        use switchyard::testing::TestClient;

        pub async fn run(client: &TestClient) {
            let doubled = super::double::call(client, super::Args { x: 4 }).await.expect("doubles");
            assert_eq!(doubled, super::Doubled { x: 8 });
            assert_eq!(super::half::call(client, super::Args { x: 4 }).await.expect("halves"), "2");
        }
    }
}

#[tokio::main]
async fn main() {
    let server = switchyard::Server::builder("t", "0").build().expect("build");
    let client = switchyard::testing::TestClient::modern(server);
    tools::check::run(&client).await;
}
