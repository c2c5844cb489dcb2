//! `routing_name`, `capability`, `extension` and `eras`, alone and together.
#![deny(warnings)]

use switchyard::prelude::*;

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct JobRef {
    job_id: String,
}

#[derive(serde::Serialize)]
struct JobStatus {
    done: bool,
}

/// Mirrored by the HTTP `Mcp-Name` header; served in both eras (the default).
#[mcp_rpc("acme/jobs/status", routing_name = "jobId", group = "keys")]
async fn job_status(job: JobRef) -> Result<JobStatus, McpError> {
    Ok(JobStatus { done: job.job_id.is_empty() })
}

/// An extension method: modern requests only (the default with `extension`), and only from
/// clients declaring the extension and sampling.
#[mcp_rpc("io.example/ext/run", extension = "io.example/ext", capability = "sampling", group = "keys")]
async fn run_ext() -> Result<JobStatus, McpError> {
    Ok(JobStatus { done: true })
}

/// Only for legacy sessions.
#[mcp_rpc("acme/legacy-only", eras = "legacy", group = "keys")]
async fn legacy_only() -> Result<(), McpError> {
    Ok(())
}

/// An extension method also served to legacy sessions (which are not capability-checked).
#[mcp_rpc("acme/both", extension = "io.example/ext", eras = "both", group = "keys")]
async fn both() -> Result<(), McpError> {
    Ok(())
}

/// The Tasks extension declares `tasks/*` methods through the same seam.
#[mcp_rpc("tasks/get", extension = "io.modelcontextprotocol/tasks", routing_name = "taskId", group = "tasks")]
async fn get_task(job: JobRef) -> Result<JobStatus, McpError> {
    Ok(JobStatus { done: !job.job_id.is_empty() })
}

/// Any official extension may add methods to MCP's namespaces, not only the Tasks extension.
#[mcp_rpc("resources/directory/read", extension = "io.modelcontextprotocol/skills", group = "tasks")]
async fn read_directory() -> Result<(), McpError> {
    Ok(())
}

fn main() {
    let undeclared = Server::builder("t", "0").groups(["keys"]).build().expect("build");
    assert!(undeclared.serves_modern_method("acme/jobs/status"));
    assert!(!undeclared.serves_modern_method("io.example/ext/run"), "the server does not declare its extension");
    assert!(!undeclared.serves_modern_method("acme/both"), "the server does not declare its extension");

    let server = Server::builder("t", "0")
        .groups(["keys"])
        .extension_capability("io.example/ext", serde_json::json!({}))
        .build()
        .expect("build");
    assert_eq!(server.routing_field("acme/jobs/status"), Some("jobId"));
    assert!(server.serves_modern_method("acme/jobs/status"));
    assert!(server.serves_modern_method("io.example/ext/run"));
    assert!(!server.serves_modern_method("acme/legacy-only"));
    assert!(server.serves_modern_method("acme/both"));
    assert!(!server.serves_modern_method("tasks/get"), "another group");

    let tasks = Server::builder("t", "0").groups(["tasks"]).build().expect("build");
    assert_eq!(tasks.routing_field("tasks/get"), Some("taskId"));
    assert!(!tasks.serves_modern_method("tasks/get"), "the Tasks extension is not declared");
    assert!(!tasks.serves_modern_method("resources/directory/read"), "the Skills extension is not declared");
    let skills = Server::builder("t", "0")
        .groups(["tasks"])
        .extension_capability("io.modelcontextprotocol/skills", serde_json::json!({}))
        .build()
        .expect("build");
    assert!(skills.serves_modern_method("resources/directory/read"));
    assert!(!skills.serves_modern_method("tasks/get"), "only the declared extension's methods");
}
