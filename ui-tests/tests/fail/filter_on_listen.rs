use switchyard::prelude::*;

/// `subscriptions/listen` takes raw filters only (a replacement listen handler, installed with
/// `ServerBuilder::replace_listen`, therefore never skips a typed one).
#[mcp_filter(method = "subscriptions/listen")]
async fn listens(req: RawRequest, next: RawNext) -> RawResponse {
    next.run(req).await
}

fn main() {}
