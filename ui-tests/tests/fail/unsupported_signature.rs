use switchyard::prelude::*;

/// Generic.
#[mcp_tool]
async fn generic<T: Send>(value: T) -> String {
    drop(value);
    String::new()
}

/// Patterns.
#[mcp_tool]
async fn pattern((a, b): (String, String)) -> String {
    a + &b
}

/// Borrowed extractor.
#[mcp_tool]
async fn borrowed(ctx: &RequestContext) -> String {
    ctx.method().to_owned()
}

/// Unsafe.
#[mcp_tool]
async unsafe fn dangerous() -> String {
    String::new()
}

#[mcp_tool]
struct NotAFunction;

fn main() {}
