use crate::Server;
use crate::context::RequestContext;
use crate::handler::{IntoCompletion, IntoPromptResult};
use crate::jsonrpc::McpError;
use crate::model::{Completion, CompletionRequest, Icon, PromptArgument};
use crate::registry::{CompletionFn, Decoration, PromptEntry, PromptGetFn};
use futures::FutureExt;
use serde_json::{Map, Value, json};
use std::future::Future;
use std::sync::Arc;

/// A prompt defined at run time (not by `#[mcp_prompt]`): everything the attribute can
/// declare, and a closure that renders it. Give it to
/// [`ServerBuilder::prompt`](crate::ServerBuilder::prompt) before the server is built, or to
/// [`Server::add_prompt`] while it runs.
///
/// The listed object is the MCP `Prompt`
/// (<https://modelcontextprotocol.io/specification/2025-11-25/server/prompts#prompt>):
/// `{name, title?, description?, arguments?: [{name, title?, description?, required?}], icons?, _meta?}`.
/// Each session sees the keys its revision's schema has: 2025-03-26 none of `title` (an
/// argument's too), `icons` or `_meta`; 2025-06-18 no `icons`.
///
/// `prompts/get` (<https://modelcontextprotocol.io/specification/2025-11-25/server/prompts#getting-a-prompt>)
/// checks the arguments before the handler runs, as for a macro prompt: every value is a
/// string and every `required` argument is present, else `-32602`.
///
/// The checks are the macro's, run when the prompt is given to the builder or added: the name,
/// and `title` and `description` when given, are not blank; argument names are not blank and
/// not repeated; every [icon](Icon::check) and `_meta` key
/// ([`check_meta`](crate::registry::check_meta)) follows the rules.
///
/// ```
/// # use switchyard::{PromptArgument, PromptMessage, Server, server::DynamicPrompt};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let server = Server::builder("doc", "0").groups(["none"]).build()?;
/// server.add_prompt(
///     DynamicPrompt::new("greet", |_ctx, args| async move {
///         let name = args.get("name").and_then(|v| v.as_str()).unwrap_or("you").to_owned();
///         PromptMessage::user_text(format!("Say hello to {name}"))
///     })
///     .title("Greeting")
///     .description("Greets someone")
///     .argument(PromptArgument::new("name", true).with_title("Name")),
/// )?;
/// assert!(server.table().prompt("greet").is_some());
/// # Ok(()) }
/// ```
pub struct DynamicPrompt {
    name: String,
    title: Option<String>,
    description: Option<String>,
    arguments: Vec<PromptArgument>,
    decoration: Decoration,
    roles: &'static [&'static str],
    scopes: &'static [&'static str],
    get: PromptGetFn,
    complete: Option<CompletionFn>,
}

impl std::fmt::Debug for DynamicPrompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicPrompt").field("name", &self.name).finish_non_exhaustive()
    }
}

impl DynamicPrompt {
    /// A prompt `name` whose handler receives the request context and the `arguments` map
    /// (string values, `{}` when the client sent none) and returns anything a `#[mcp_prompt]`
    /// function may return: a [`GetPromptResult`](crate::GetPromptResult), a
    /// [`PromptMessage`](crate::PromptMessage), `Vec<PromptMessage>` or a `String` (one user
    /// message), optionally inside `Result<_, McpError>`.
    pub fn new<F, Fut, R>(name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(RequestContext, Map<String, Value>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoPromptResult,
    {
        DynamicPrompt {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            decoration: Decoration::default(),
            roles: &[],
            scopes: &[],
            get: Arc::new(move |ctx, args| {
                // `map`: an async block would hold the future twice (see `DynamicTool::new`).
                Box::pin(handler(ctx, args).map(|out| out.into_prompt_result()))
            }),
            complete: None,
        }
    }

    /// The prompt name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets the display `title` (as `#[mcp_prompt(title = "..")]`).
    pub fn title(mut self, text: impl Into<String>) -> Self {
        self.title = Some(text.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// Adds an argument, listed in the order added (what a macro prompt derives from its params
    /// type's fields).
    pub fn argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.push(argument);
        self
    }

    /// Adds an icon (as `#[mcp_prompt(icons = [..])]`).
    pub fn icon(mut self, icon: Icon) -> Self {
        self.decoration.icons.push(icon);
        self
    }

    /// Sets the listed `_meta` (as `#[mcp_prompt(meta = ..)]`); its keys follow the naming
    /// rules and use no reserved prefix.
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.decoration.meta = Some(meta);
        self
    }

    /// Restricts the prompt to callers holding one of `roles` (as `#[mcp_prompt(roles = [..])]`).
    pub fn roles(mut self, roles: &'static [&'static str]) -> Self {
        self.roles = roles;
        self
    }

    /// Restricts the prompt to callers whose token grants all of `scopes` (as
    /// `#[mcp_prompt(scopes = [..])]`).
    pub fn scopes(mut self, scopes: &'static [&'static str]) -> Self {
        self.scopes = scopes;
        self
    }

    /// Sets the handler of `completion/complete`
    /// (<https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/completion>)
    /// for this prompt's arguments, `{"ref": {"type": "ref/prompt", "name": ..}}`; one handler
    /// for all of them, which reads `req.argument.name`. Setting it again replaces it.
    ///
    /// The handler receives the request context and the `completion/complete` params as the
    /// client sent them ([`CompletionRequest`](crate::CompletionRequest): `{ref, argument:
    /// {name, value}, context?: {arguments: {name: value}}}`, `ref` naming this prompt as
    /// the client wrote it), and returns anything a `#[mcp_completion]` function may return: a
    /// [`Completion`](crate::Completion) (`{values, total?, hasMore?}`) or `Vec<String>`,
    /// optionally inside `Result<_, McpError>`. The answer is `{"completion": ..}`; at most
    /// 100 values are sent: beyond that the list is cut to 100, `hasMore` is `true` and
    /// `total` at least the number returned. The handler is used in place of any
    /// `#[mcp_completion]` for the same prompt; a prompt with neither answers
    /// `{"completion": {"values": [], "total": 0, "hasMore": false}}`.
    ///
    /// Errors, checked before the handler runs as for a `#[mcp_completion]`: `-32602` for
    /// params that are not a `CompletionRequest` or a `ref` to no prompt; `-32600` with
    /// `data.reason` `forbidden` (a caller without one of the prompt's `roles`) or
    /// `insufficient_scope` (a token without its `scopes`), as a `prompts/get` gets. An `McpError`
    /// of the handler is the answer as it is (its code, message and `data`).
    ///
    /// A server with such a handler declares the `completions` capability, also when the prompt
    /// is added while the server runs: capabilities are computed from the current table for
    /// each `initialize` and `server/discover`. A session initialized before the first
    /// completion handler existed was not told of it, but its `completion/complete` requests
    /// are served.
    ///
    /// ```
    /// # use switchyard::{PromptArgument, PromptMessage, Server, server::DynamicPrompt};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let server = Server::builder("doc", "0").groups(["none"]).build()?;
    /// server.add_prompt(
    ///     DynamicPrompt::new("greet", |_ctx, _args| async move { PromptMessage::user_text("Hello") })
    ///         .argument(PromptArgument::new("name", true))
    ///         .complete(|_ctx, req| async move {
    ///             let names = ["alice", "bob", "carol"];
    ///             let prefix = req.argument.value;
    ///             names.iter().filter(|n| n.starts_with(&prefix)).map(|n| n.to_string()).collect::<Vec<_>>()
    ///         }),
    /// )?;
    /// assert!(server.table().has_completions());
    /// # Ok(()) }
    /// ```
    pub fn complete<F, Fut, R>(mut self, handler: F) -> Self
    where
        F: Fn(RequestContext, CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoCompletion + 'static,
    {
        self.complete = Some(completion_fn(handler));
        self
    }

    /// The dispatch-table entry.
    ///
    /// Errors: the first rule of the [type docs](DynamicPrompt) it breaks, as a sentence.
    pub(crate) fn into_entry(self) -> Result<PromptEntry, String> {
        super::non_blank("name", Some(&self.name))?;
        super::non_blank("title", self.title.as_deref())?;
        super::non_blank("description", self.description.as_deref())?;
        for (i, arg) in self.arguments.iter().enumerate() {
            super::non_blank("argument name", Some(&arg.name))?;
            super::non_blank("argument title", arg.title.as_deref())?;
            if self.arguments[..i].iter().any(|a| a.name == arg.name) {
                return Err(format!("the argument `{}` is declared twice", arg.name));
            }
        }
        let mut def = Map::new();
        def.insert("name".into(), json!(self.name));
        for (key, value) in [("title", self.title), ("description", self.description)] {
            if let Some(v) = value {
                def.insert(key.into(), json!(v));
            }
        }
        if !self.arguments.is_empty() {
            def.insert("arguments".into(), json!(self.arguments));
        }
        self.decoration.apply(&mut def)?;
        Ok(PromptEntry {
            definition: Value::Object(def),
            arguments: self.arguments,
            handler: self.get,
            completion: self.complete,
            roles: self.roles,
            scopes: self.scopes,
        })
    }
}

impl Server {
    /// Adds a prompt while the server runs, replacing the prompt of the same name (a
    /// `#[mcp_prompt]` one too), and publishes `notifications/prompts/list_changed`
    /// (<https://modelcontextprotocol.io/specification/2025-11-25/server/prompts#list-changed-notification>).
    /// The table is swapped atomically; a `prompts/get` resolves its prompt when it is matched
    /// and again right before rendering.
    ///
    /// Errors: `-32602` naming the prompt when it breaks one of the checks in the
    /// [`DynamicPrompt`] docs; then nothing changes.
    pub fn add_prompt(&self, prompt: DynamicPrompt) -> Result<(), McpError> {
        let name = prompt.name.clone();
        let entry = prompt.into_entry().map_err(|e| McpError::invalid_params(format!("prompt {name:?}: {e}")))?;
        self.engine().table.rcu(|t| Arc::new(t.with_prompt(&name, entry.clone())));
        self.publisher().prompts_list_changed();
        Ok(())
    }

    /// Removes the prompt `name` (a `#[mcp_prompt]` one too) and publishes
    /// `notifications/prompts/list_changed`; returns false, and publishes nothing, when there
    /// was none. A later `prompts/get` of it is `-32602` (`unknown prompt`).
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.swap_table(|t| t.without_prompt(name), |p| p.prompts_list_changed())
    }
}

/// The boxed form of a run-time completion handler (shared by prompts and templates).
pub(super) fn completion_fn<F, Fut, R>(handler: F) -> CompletionFn
where
    F: Fn(RequestContext, CompletionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoCompletion + 'static,
{
    Arc::new(move |ctx, req| -> crate::registry::BoxFuture<Result<Completion, McpError>> {
        // `map`: an async block would hold the future twice (see `DynamicTool::new`).
        Box::pin(handler(ctx, req).map(IntoCompletion::into_completion))
    })
}
