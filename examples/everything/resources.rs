//! Resource fixtures (conformance README §2.2).

use super::tools::PNG_1X1;
use switchyard::prelude::*;

/// A static text resource.
#[mcp_resource(uri = "test://static-text", name = "Static Text Resource", mime_type = "text/plain")]
async fn static_text() -> Result<String, McpError> {
    Ok("This is the content of the static text resource.".to_owned())
}

/// A static binary resource (a PNG image).
#[mcp_resource(uri = "test://static-binary", name = "Static Binary Resource", mime_type = "image/png")]
async fn static_binary() -> Result<Vec<u8>, McpError> {
    Ok(PNG_1X1.to_vec())
}

/// A resource that clients may subscribe to.
#[mcp_resource(uri = "test://watched-resource", name = "Watched Resource", mime_type = "text/plain")]
async fn watched() -> Result<String, McpError> {
    Ok("This resource is watched for changes.".to_owned())
}

/// A templated resource: the id is part of the URI.
#[mcp_resource(uri = "test://template/{id}/data", name = "Template Resource", mime_type = "application/json")]
async fn template_data(id: String) -> Result<String, McpError> {
    let body = serde_json::json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") });
    Ok(body.to_string())
}
