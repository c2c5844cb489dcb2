use switchyard::prelude::*;

mod a {
    use switchyard::prelude::*;

    #[subscription_field("taskIds", extension = "io.modelcontextprotocol/tasks")]
    pub async fn grant(requested: Vec<String>) -> Result<Vec<String>, McpError> {
        Ok(requested)
    }
}

#[subscription_field("taskIds")]
async fn grant_again(requested: Vec<String>, _ctx: RequestContext) -> Result<Vec<String>, McpError> {
    Ok(requested)
}

/// The same key in another group is fine.
#[subscription_field("taskIds", group = "other")]
async fn grant_other(requested: Vec<String>) -> Result<Vec<String>, McpError> {
    Ok(requested)
}

fn main() {}
