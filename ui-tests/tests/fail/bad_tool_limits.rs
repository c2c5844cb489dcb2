use switchyard::prelude::*;

/// No unit.
#[mcp_tool(timeout = "30")]
async fn no_unit() -> String {
    String::new()
}

/// Zero, and longer than a day.
#[mcp_tool(timeout = "0ms", rate_limit = "10/48h")]
async fn out_of_bounds() -> String {
    String::new()
}

/// Not a period, and no call at once.
#[mcp_tool(rate_limit = "10/fortnight", max_concurrency = 0)]
async fn bad_rate() -> String {
    String::new()
}

/// A string where a number belongs, and zero calls.
#[mcp_tool(max_concurrency = "4", rate_limit = "0/s", timeout = 30)]
async fn wrong_kinds() -> String {
    String::new()
}

fn main() {}
