//! Returning `Json<T>` (directly or inside `Result`) declares `T`'s schema as the output schema.
#![deny(warnings)]

use switchyard::prelude::*;

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Weather {
    /// Degrees Celsius.
    celsius: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct City {
    name: String,
}

/// Current weather.
#[mcp_tool]
async fn weather(city: City) -> Result<Json<Weather>, ToolError> {
    let _ = city.name;
    Ok(Json(Weather { celsius: 21.5 }))
}

/// Always sunny.
#[mcp_tool]
async fn forecast() -> switchyard::Json<Weather> {
    Json(Weather { celsius: 30.0 })
}

/// Plain text: no output schema.
#[mcp_tool]
async fn plain() -> Result<String, McpError> {
    Ok(String::new())
}

fn main() {
    let server = Server::builder("t", "0").build().expect("build");
    let table = server.table();
    for name in ["weather", "forecast"] {
        let def = &table.tool(name).expect("registered").definition;
        assert_eq!(def["outputSchema"]["type"], "object", "{name}");
        assert_eq!(def["outputSchema"]["properties"]["celsius"]["description"], "Degrees Celsius.");
    }
    assert!(table.tool("plain").expect("registered").definition.get("outputSchema").is_none());
}
