//! `#[mcp_tool]`, `#[mcp_prompt]` and `#[mcp_resource]` give their function's name a hidden
//! meaning as a type (so that `#[mcp_filter(rpc = a_tool)]` can say how tools are filtered).
//! It yields to every other item of that name: modules, imports, types and primitive types
//! named like a handler keep compiling and keep their meaning.
#![deny(warnings)]

use switchyard::prelude::*;

mod search {
    pub fn query() -> &'static str {
        "query"
    }
}

/// A tool named like a module beside it, which it uses.
#[mcp_tool]
async fn search() -> &'static str {
    search::query()
}

#[allow(non_camel_case_types)]
struct lookup {
    key: &'static str,
}

/// A tool named like a type beside it.
#[mcp_tool]
async fn lookup() -> &'static str {
    let found: lookup = lookup { key: "key" };
    found.key
}

mod tools {
    use std::env;
    use switchyard::prelude::*;

    /// A public tool named like a module the file imports.
    #[mcp_tool]
    pub async fn env() -> String {
        env::var("SWITCHYARD_UNSET_VARIABLE").unwrap_or_default()
    }

    /// A prompt named like a primitive type, which the module still uses.
    #[mcp_prompt]
    pub async fn str() -> String {
        let text: &str = "text";
        text.to_owned()
    }

    /// A raw identifier.
    #[mcp_resource(uri = "types://all")]
    pub async fn r#type() -> String {
        String::new()
    }
}

/// `use` brings the function along as before.
use tools::env;

// The duplicate guard, a `#[macro_export]` macro, is a non-local definition in a function body.
#[allow(non_local_definitions)]
fn nested() -> usize {
    /// A tool declared in a function body.
    #[mcp_tool]
    async fn inner() -> &'static str {
        "inner"
    }
    std::mem::size_of_val(&inner)
}

/// A filter on the calls of one tool, as the error on `rpc = search` suggests.
#[mcp_filter(rpc = switchyard::methods::ToolsCall)]
async fn only_search(
    req: TypedRequest<CallToolParams>,
    next: Next<CallToolParams, CallToolResult>,
) -> Result<CallToolResult, McpError> {
    if req.params.name == "search" && req.params.arguments.contains_key("forbidden") {
        return Err(McpError::invalid_params("forbidden"));
    }
    next.run(req).await
}

fn main() {
    let _ = (env, tools::str, tools::r#type, nested());
    let server = Server::builder("t", "0").build().expect("build");
    for tool in ["search", "lookup", "env", "inner"] {
        assert!(server.table().tool(tool).is_some(), "{tool}");
    }
}
