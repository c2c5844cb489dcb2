use switchyard::prelude::*;

/// An unknown key, a key given twice, a malformed extension: all reported.
#[subscription_field("taskIds", extenson = "io.modelcontextprotocol/tasks", group = "a", group = "b")]
async fn grant(requested: Vec<String>) -> Result<Vec<String>, McpError> {
    Ok(requested)
}

#[subscription_field("io.example/jobs", extension = "tasks", roles = ["admin"])]
async fn grant_jobs(requested: Vec<String>) -> Result<Vec<String>, McpError> {
    Ok(requested)
}

/// No key at all.
#[subscription_field(group = "g")]
async fn no_key(requested: Vec<String>) -> Result<Vec<String>, McpError> {
    Ok(requested)
}

fn main() {}
