use switchyard::prelude::*;

#[subscription_field("toolsListChanged")]
async fn tools(requested: bool) -> Result<bool, McpError> {
    Ok(requested)
}

#[subscription_field("resourceSubscriptions", extension = "io.example/ext")]
async fn resources(requested: Vec<String>) -> Result<Vec<String>, McpError> {
    Ok(requested)
}

#[subscription_field("")]
async fn empty(requested: bool) -> Result<bool, McpError> {
    Ok(requested)
}

fn main() {}
