use switchyard::prelude::*;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct A {
    a: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct B {
    b: String,
}

/// Two params types.
#[mcp_tool]
async fn both(a: A, b: B) -> String {
    a.a + &b.b
}

fn main() {}
