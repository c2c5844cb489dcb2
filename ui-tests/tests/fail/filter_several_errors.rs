use switchyard::prelude::*;

// One attribute and one signature with many problems: all are reported in one compile.
#[mcp_filter(order = 1, order = 2, group = "", rpc = 3, odrer = 5)]
unsafe fn broken<T>(#[extract] req: RawRequest) -> RawResponse {
    let _ = req;
    Ok(Default::default())
}

#[mcp_filter(order = "first")]
async fn three(req: RawRequest, next: RawNext, extra: u32) -> RawResponse {
    let _ = extra;
    next.run(req).await
}

#[mcp_filter(order = 3_000_000_000)]
async fn none() -> RawResponse {
    Ok(Default::default())
}

fn main() {}
