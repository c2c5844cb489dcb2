use switchyard::prelude::*;

/// Not async.
#[mcp_filter]
fn audit(req: RawRequest, next: RawNext) -> RawResponse {
    let _ = (req, next);
    Ok(Default::default())
}

fn main() {}
