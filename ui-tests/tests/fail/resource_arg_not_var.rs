use switchyard::prelude::*;

#[mcp_resource(uri = "users://{org}/{id}")]
async fn user(org: String, user_id: u64) -> String {
    format!("{org}{user_id}")
}

#[mcp_resource(uri = "config://app")]
async fn config(section: String) -> String {
    section
}

fn main() {}
