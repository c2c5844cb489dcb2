use switchyard::prelude::*;

#[derive(serde::Serialize)]
struct Weather {
    celsius: f64,
}

/// Structured output needs a schema.
#[mcp_tool]
async fn weather() -> Result<Json<Weather>, ToolError> {
    Ok(Json(Weather { celsius: 20.0 }))
}

#[derive(schemars::JsonSchema)]
struct Forecast {
    days: u32,
}

/// ... and serialization.
#[mcp_tool]
async fn forecast() -> Json<Forecast> {
    Json(Forecast { days: 3 })
}

fn main() {}
