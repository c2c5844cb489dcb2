//! `#[subscription_field]`: with and without `extension`, extractors, custom error types, and the
//! same key in another group.
#![deny(warnings)]

use switchyard::__private::{SubscriptionFieldRegistration, inventory};
use switchyard::prelude::*;

/// The Tasks extension's key: the requested task ids, granted as they are.
#[subscription_field("taskIds", extension = "io.modelcontextprotocol/tasks", group = "g")]
async fn grant_task_ids(requested: Vec<String>, ctx: RequestContext) -> Result<Vec<String>, McpError> {
    let _ = ctx.method();
    Ok(requested)
}

#[derive(serde::Deserialize)]
struct JobFilter {
    ids: Vec<u64>,
}

#[derive(serde::Serialize)]
struct JobGrant {
    ids: Vec<u64>,
}

struct JobError;

impl From<JobError> for McpError {
    fn from(_: JobError) -> Self {
        McpError::invalid_params("no such job")
    }
}

/// No extension, the default group, no extractor, an error type of its own.
#[subscription_field("io.example/jobs")]
async fn grant_jobs(filter: JobFilter) -> Result<JobGrant, JobError> {
    if filter.ids.contains(&0) {
        return Err(JobError);
    }
    Ok(JobGrant { ids: filter.ids })
}

/// The same key in another group is fine; the requested value may come after the extractors.
#[subscription_field("taskIds", group = "other")]
async fn grant_task_ids_other(cancel: CancellationToken, requested: Vec<String>) -> Result<Vec<String>, McpError> {
    let _ = cancel.is_cancelled();
    Ok(requested.into_iter().take(1).collect())
}

fn main() {
    let mut fields: Vec<(&str, Option<&str>, &str, &str)> = inventory::iter::<SubscriptionFieldRegistration>
        .into_iter()
        .map(|r| (r.key, r.extension, r.group, r.site.function))
        .collect();
    fields.sort();
    assert_eq!(
        fields,
        [
            ("io.example/jobs", None, "default", "grant_jobs"),
            ("taskIds", None, "other", "grant_task_ids_other"),
            ("taskIds", Some("io.modelcontextprotocol/tasks"), "g", "grant_task_ids"),
        ]
    );
    Server::builder("t", "0").groups(["g"]).build().expect("build");
}
