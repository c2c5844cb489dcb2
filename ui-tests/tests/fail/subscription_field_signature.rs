use switchyard::prelude::*;

/// Not async, and two requested values: both reported.
#[subscription_field("taskIds")]
fn not_async(requested: Vec<String>, more: Vec<String>) -> Result<Vec<String>, McpError> {
    let _ = more;
    Ok(requested)
}

/// No requested value.
#[subscription_field("io.example/a")]
async fn no_requested(ctx: RequestContext) -> Result<Vec<String>, McpError> {
    let _ = ctx;
    Ok(Vec::new())
}

/// Not a `Result`.
#[subscription_field("io.example/b")]
async fn not_result(requested: Vec<String>) -> Vec<String> {
    requested
}

/// Returns nothing.
#[subscription_field("io.example/c")]
async fn nothing(_requested: Vec<String>) {}

fn main() {}
