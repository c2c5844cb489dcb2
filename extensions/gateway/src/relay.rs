//! Requests relayed to an upstream: the connection of the moment, the per-call options
//! (timeout, input, progress) and the mapping of its failures to our answers.

use crate::upstream::Upstream;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use switchyard::input::InputRequest;
use switchyard::protocol::META_SERVER_INFO;
use switchyard::registry::UriTemplate;
use switchyard::{
    CallToolResult, Completion, CompletionRef, CompletionRequest, Content, ErrorCode, GetPromptResult, McpError,
    Progress, ReadResourceResult, RequestContext, ResourceContents, ToolResultText,
};
use switchyard_client::{Client, ClientError, ProgressUpdate, RequestOptions, TaskHandle, ToolCall};
use tokio::sync::mpsc;

/// One upstream as its mirrored items see it: its configuration and its connection, if any.
pub(crate) struct Link {
    pub(crate) upstream: Upstream,
    client: RwLock<Option<Client>>,
    /// Our URIs of the upstream's resources and templates we serve: links in its results to
    /// one of them are given our URI, so that our client can follow them.
    served: RwLock<Served>,
}

/// Our URIs (`{uri_prefix}{uri}`) of an upstream's mirrored resources, and its mirrored URI
/// templates, as the mirror last listed them.
#[derive(Default)]
struct Served {
    resources: HashSet<String>,
    templates: Vec<UriTemplate>,
}

impl Link {
    pub(crate) fn new(upstream: Upstream) -> Arc<Link> {
        Arc::new(Link { upstream, client: RwLock::new(None), served: RwLock::default() })
    }

    pub(crate) fn name(&self) -> &str {
        self.upstream.name()
    }

    /// Records our URIs of the upstream's mirrored resources (`templates` false) or URI
    /// templates (a template that does not parse is left out: it is not served either).
    pub(crate) fn set_served<'a>(&self, templates: bool, ours: impl Iterator<Item = &'a String>) {
        let mut served = self.served.write().unwrap_or_else(|e| e.into_inner());
        if templates {
            served.templates = ours.filter_map(|t| UriTemplate::parse(t).ok()).collect();
        } else {
            served.resources = ours.cloned().collect();
        }
    }

    /// True when we serve `ours` from this upstream: a mirrored resource's URI, or one that
    /// matches a mirrored template.
    fn serves(served: &Served, ours: &str) -> bool {
        served.resources.contains(ours) || served.templates.iter().any(|t| t.matches(ours).is_some())
    }

    /// The upstream's URI of our `ours`, when we serve it from this upstream.
    pub(crate) fn upstream_uri(&self, ours: &str) -> Option<String> {
        let uri = ours.strip_prefix(self.upstream.uri_prefix.as_str())?;
        let served = self.served.read().unwrap_or_else(|e| e.into_inner());
        Self::serves(&served, ours).then(|| uri.to_owned())
    }

    /// Our URI of the upstream's `uri`, when we serve it.
    pub(crate) fn our_uri(&self, uri: &str) -> Option<String> {
        let ours = format!("{}{uri}", self.upstream.uri_prefix);
        let served = self.served.read().unwrap_or_else(|e| e.into_inner());
        Self::serves(&served, &ours).then_some(ours)
    }

    /// Gives our URI to each link in `blocks` (a `resource_link`, an embedded `resource`) to a
    /// resource of the upstream we serve; other links and text stay as the upstream wrote them.
    fn our_links<'a>(&self, blocks: impl Iterator<Item = &'a mut Content>) {
        let prefix = &self.upstream.uri_prefix;
        if prefix.is_empty() {
            return;
        }
        let served = self.served.read().unwrap_or_else(|e| e.into_inner());
        if served.resources.is_empty() && served.templates.is_empty() {
            return;
        }
        for uri in blocks.filter_map(Content::link_uri_mut) {
            let ours = format!("{prefix}{uri}");
            if Self::serves(&served, &ours) {
                *uri = ours;
            }
        }
    }

    /// The connection of the moment.
    pub(crate) fn client(&self) -> Option<Client> {
        self.client.read().map(|c| c.clone()).unwrap_or_else(|poisoned| poisoned.into_inner().clone())
    }

    pub(crate) fn set_client(&self, client: Option<Client>) {
        match self.client.write() {
            Ok(mut slot) => *slot = client,
            Err(poisoned) => *poisoned.into_inner() = client,
        }
    }

    /// The options of one relayed request: the call timeout, our client's input capabilities
    /// and handler, and (when our client asked for progress) a channel the upstream's reports
    /// go to, with our request's [`Progress`] they are handed on to.
    ///
    /// No cancellation token: the runtime drops a request's future when the request is
    /// cancelled (`notifications/cancelled`, a timeout filter, `tasks/cancel`), and the client
    /// sends `notifications/cancelled` upstream for a request whose future is dropped. Watching
    /// the token as well would cost every call a waiter registered in the token's list and a
    /// `select!` around the request. A request cancelled before it first runs (the
    /// cancellation right behind it) is not sent at all: [`relay`](Self::relay) looks first.
    fn options(
        &self,
        ctx: &RequestContext,
    ) -> (RequestOptions, Option<(mpsc::UnboundedReceiver<ProgressUpdate>, Progress)>) {
        let mut options = RequestOptions::new().timeout(self.upstream.call_timeout);
        // The upstream's questions during this call go to our client: on 2026-07-28 with its
        // capabilities (none declared, none asked), on a session those the upstream sends for
        // this call (without the capability, asking ours fails and the upstream gets the error).
        let ctx_for_input = ctx.clone();
        options = options.on_input(input_capabilities(ctx.client_capabilities()), move |key, method, params| {
            let ctx = ctx_for_input.clone();
            async move { relay_input(&ctx, key, &method, params).await }
        });
        let reporter = ctx.progress();
        if !reporter.is_enabled() {
            return (options, None);
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let options = options.on_progress(move |update| {
            // The receiver is gone once the call is answered: a late report has nowhere to go.
            let _ = tx.send(update);
        });
        (options, Some((rx, reporter)))
    }

    /// Sends one request upstream with `send` (given the connection and the options) and
    /// waits for the answer, passing progress reports on to our client as they come (each
    /// before our answer).
    async fn relay<T, F, Fut>(&self, ctx: &RequestContext, send: F) -> Result<T, Failure>
    where
        F: FnOnce(Client, RequestOptions) -> Fut,
        Fut: Future<Output = Result<T, ClientError>>,
    {
        let Some(client) = self.client() else { return Err(Failure::Down) };
        // The runtime runs a request once before it looks at its cancellation: one cancelled
        // already would otherwise reach the upstream (and might start a task we never learn of)
        // only to be cancelled there.
        if ctx.cancellation().is_cancelled() {
            return Err(Failure::Cancelled);
        }
        let (options, progress) = self.options(ctx);
        let call = boxed(send, client, options);
        let answer = match progress {
            None => call.await,
            // Boxed: only a call whose client asked for progress needs room for the reports.
            Some((progress, reporter)) => Box::pin(pass_progress(call, progress, reporter)).await,
        };
        answer.map_err(Failure::Client)
    }

    /// Relays `tools/call` of the upstream tool `name`.
    ///
    /// A JSON-RPC error of the upstream is ours (same code and data, the message naming the
    /// upstream); an upstream that is down, times out, closes the connection or answers
    /// something that is no `CallToolResult` is an `isError: true` result naming it, which
    /// the model can read.
    ///
    /// A tool that runs only as a task upstream (`as_task`: its session listing says
    /// `execution.taskSupport: "required"`, or a plain call was refused with `-32021` asking
    /// for the Tasks extension, which sets it) is called as a task and followed to its end;
    /// our request's cancellation cancels the upstream task.
    pub(crate) async fn call_tool(
        &self,
        ctx: RequestContext,
        name: &str,
        arguments: Value,
        as_task: &AtomicBool,
    ) -> Result<CallToolResult, McpError> {
        let answer = self.relay_tool_call(ctx, name, arguments, as_task, false).await?;
        // Typed: `keep` was false, so there is no text to decode.
        answer.into_result().map_err(|e| McpError::internal(format!("tool result could not be decoded: {e}")))
    }

    /// [`call_tool`](Self::call_tool) for the mirrored tool's text entry point: the upstream's
    /// result is kept as the text it sent when [`ToolResultText::from_peer_text`] allows, and
    /// decoded as `call_tool` decodes it otherwise. Kept text holds no link (only text, image
    /// and audio blocks are kept), so none needs our URI. A task is followed typed.
    ///
    /// Errors: as [`call_tool`](Self::call_tool).
    pub(crate) async fn call_tool_text(
        &self,
        ctx: RequestContext,
        name: &str,
        arguments: Value,
        as_task: &AtomicBool,
    ) -> Result<ToolResultText, McpError> {
        self.relay_tool_call(ctx, name, arguments, as_task, true).await
    }

    /// The relay both entry points share: the result as the client's text, kept when `keep`
    /// and [`ToolResultText::from_peer_text`] allows, decoded otherwise.
    async fn relay_tool_call(
        &self,
        ctx: RequestContext,
        name: &str,
        arguments: Value,
        as_task: &AtomicBool,
        keep: bool,
    ) -> Result<ToolResultText, McpError> {
        let arguments = if arguments.is_null() { json!({}) } else { arguments };
        let answer = if as_task.load(Ordering::Relaxed) {
            // Boxed, here and below: the rare task path would otherwise size every call's future.
            Box::pin(self.call_as_task(&ctx, name, &arguments)).await
        } else {
            let args = &arguments;
            let plain = self
                .relay(&ctx, |client, options| async move { client.call_tool_text_with(name, args, options).await })
                .await;
            match plain {
                Ok(text) => match keep.then(|| ToolResultText::from_peer_text(text.get())).flatten() {
                    Some(kept) => return Ok(kept),
                    None => decode_tool_result(&text),
                },
                Err(Failure::Client(ClientError::Rpc { error, .. })) if asks_for_tasks(&error) => {
                    tracing::debug!(target: "switchyard_gateway", upstream = self.name(), tool = name, "the tool runs only as a task upstream");
                    as_task.store(true, Ordering::Relaxed);
                    Box::pin(self.call_as_task(&ctx, name, &arguments)).await
                }
                Err(failure) => Err(failure),
            }
        };
        self.tool_outcome(answer, name).map(ToolResultText::from)
    }

    /// What our client gets for a relayed call's `answer`: the result with our links and
    /// without the upstream's `serverInfo`, or the failure as an `isError` result or an error.
    fn tool_outcome(&self, answer: Result<CallToolResult, Failure>, name: &str) -> Result<CallToolResult, McpError> {
        match answer {
            Ok(mut result) => {
                self.our_links(result.content.iter_mut());
                strip_server_info(&mut result.meta);
                Ok(result)
            }
            Err(failure) => failure.into_tool_outcome(self.name(), "tools/call", name),
        }
    }

    /// Calls tool `name` upstream as a task and follows the task to its end. The call that
    /// creates it has the relay's options (timeout, progress, input); following it ends with
    /// our request (the runtime drops a cancelled request's future), and a task left unfollowed
    /// that way is cancelled upstream.
    async fn call_as_task(
        &self,
        ctx: &RequestContext,
        name: &str,
        arguments: &Value,
    ) -> Result<CallToolResult, Failure> {
        let created = self
            .relay(ctx, |client, options| async move { client.call_tool_as_task_with(name, arguments, options).await })
            .await?;
        let task = match created {
            ToolCall::Completed(result) => return Ok(result),
            ToolCall::Task(task) => CancelOnDrop(Some(task)),
            _ => return Err(Failure::Client(ClientError::Protocol("an answer to tools/call of no known kind".into()))),
        };
        let Some(handle) = task.0.as_ref() else { return Err(Failure::Down) };
        // Followed through the relay as the call was: the task's questions go to our client,
        // its progress (on a session) too, and a cancelled request stops following (its future
        // is dropped).
        let result = self.relay(ctx, |_, options| async move { handle.result_with(options).await }).await;
        // A task that reached its end (its result, its failure, its cancellation) needs no
        // cancelling; one this side gave up following (our request cancelled, a question our
        // client did not answer here, as a 2026-07-28 client answers in a round of its own and
        // the call runs again; a failed `tasks/get`) would otherwise run on, or wait for input,
        // with nobody waiting.
        let ended = !ctx.cancellation().is_cancelled()
            && match &result {
                Ok(_) | Err(Failure::Client(ClientError::Cancelled { .. })) => true,
                Err(Failure::Client(ClientError::Rpc { method, .. })) => method == "tools/call",
                Err(_) => false,
            };
        if ended {
            task.disarm();
        }
        result
    }

    /// Sends `method` with `params` upstream and decodes the answer as `T`.
    async fn request<T: DeserializeOwned>(
        &self,
        ctx: &RequestContext,
        method: &str,
        params: Value,
    ) -> Result<T, Failure> {
        let value =
            self.relay(ctx, |client, options| async move { client.request_with(method, params, options).await });
        serde_json::from_value::<T>(strip_result_type(value.await?))
            .map_err(|e| Failure::Client(ClientError::Protocol(format!("a {method} result that does not decode: {e}"))))
    }

    /// Relays `prompts/get` of the upstream prompt `name`.
    ///
    /// Errors: the upstream's JSON-RPC error (its code and data, the message naming the
    /// upstream); `-32603` naming the upstream when it is down, times out, closes the
    /// connection or answers something that is no `GetPromptResult`.
    pub(crate) async fn get_prompt(
        &self,
        ctx: RequestContext,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<GetPromptResult, McpError> {
        let answer =
            self.request::<GetPromptResult>(&ctx, "prompts/get", json!({ "name": name, "arguments": arguments }));
        let mut result = answer.await.map_err(|failure| failure.into_error(self.name(), "prompts/get", name))?;
        self.our_links(result.messages.iter_mut().map(|m| &mut m.content));
        Ok(result)
    }

    /// Relays `resources/read` of the upstream URI `uri`; `uri_prefix` goes before the `uri`
    /// of each content read.
    ///
    /// Errors: as [`get_prompt`](Self::get_prompt), for a `ReadResourceResult`.
    pub(crate) async fn read_resource(&self, ctx: RequestContext, uri: &str) -> Result<ReadResourceResult, McpError> {
        let answer = self.request::<ReadResourceResult>(&ctx, "resources/read", json!({ "uri": uri })).await;
        let mut result = answer.map_err(|failure| failure.into_error(self.name(), "resources/read", uri))?;
        let prefix = &self.upstream.uri_prefix;
        if !prefix.is_empty() {
            for content in &mut result.contents {
                prefix_uri(content, prefix);
            }
        }
        Ok(result)
    }
}

/// A `completion/complete` result: the `completion` object is all a handler returns.
#[derive(serde::Deserialize)]
struct CompleteResult {
    completion: Completion,
}

impl Link {
    /// Relays `completion/complete` with the reference replaced by `upstream` (the upstream's
    /// own prompt name or URI template); `argument` and `context` go as our client sent them.
    ///
    /// Errors: as [`get_prompt`](Self::get_prompt), for a result with a `completion` object.
    pub(crate) async fn complete(
        &self,
        ctx: RequestContext,
        mut request: CompletionRequest,
        upstream: CompletionRef,
    ) -> Result<Completion, McpError> {
        let target = match &upstream {
            CompletionRef::Prompt { name } => name.clone(),
            CompletionRef::Resource { uri } => uri.clone(),
            // A kind of reference a later model may add: named as it prints.
            other => format!("{other:?}"),
        };
        request.reference = upstream;
        let params = serde_json::to_value(&request)
            .map_err(|e| McpError::internal(format!("completion/complete params could not be encoded: {e}")))?;
        let answer = self.request::<CompleteResult>(&ctx, "completion/complete", params).await;
        answer.map(|a| a.completion).map_err(|failure| failure.into_error(self.name(), "completion/complete", &target))
    }
}

/// What of our client's capabilities an upstream may ask through us: its `elicitation`,
/// `sampling` and `roots` (an empty object when it has none of them).
fn input_capabilities(client: &Value) -> Value {
    let mut relayed = Map::new();
    for kind in ["elicitation", "sampling", "roots"] {
        if let Some(capability) = client.get(kind) {
            relayed.insert(kind.to_owned(), capability.clone());
        }
    }
    Value::Object(relayed)
}

/// Waits for `call`'s answer, handing the upstream's progress reports to our request's
/// `reporter` as they come, each before the answer.
async fn pass_progress<T, Fut>(
    mut call: Pin<Box<Fut>>,
    mut progress: mpsc::UnboundedReceiver<ProgressUpdate>,
    reporter: Progress,
) -> Result<T, ClientError>
where
    Fut: Future<Output = Result<T, ClientError>>,
{
    let answer = loop {
        tokio::select! {
            biased;
            Some(update) = progress.recv() => {
                reporter.report(update.progress, update.total, update.message.as_deref()).await;
            }
            answer = &mut call => break answer,
        }
    };
    while let Ok(update) = progress.try_recv() {
        reporter.report(update.progress, update.total, update.message.as_deref()).await;
    }
    answer
}

/// The client's request future, made and boxed outside any `async fn`. It is kilobytes, and
/// made and boxed in place inside the relay it was kept in the relay's own state as well
/// (measured with `size_of_val`: the relay's future was 10 KB, 800 bytes since), so every
/// future around the relay (the mirrored item's, the pipeline's) grew by as much and was
/// allocated and copied whole on each call.
fn boxed<T, F, Fut>(send: F, client: Client, options: RequestOptions) -> Pin<Box<Fut>>
where
    F: FnOnce(Client, RequestOptions) -> Fut,
    Fut: Future<Output = Result<T, ClientError>>,
{
    Box::pin(send(client, options))
}

/// Asks our client the upstream's input request `key` (`method` with `params`) through our
/// request's input API (docs/input.md): a request of ours on a session, an `input_required`
/// round of ours on 2026-07-28 (whose answer reaches the upstream when our client retries and
/// the relay runs again). Returns the answer's result object.
///
/// Errors: `-32601` for a method that is no input request; `-32602` for params that are not
/// the method's; what asking returns (the distinguished `input_required` outcome included,
/// which the relay passes on unchanged).
async fn relay_input(ctx: &RequestContext, key: String, method: &str, params: Value) -> Result<Value, McpError> {
    let text = |field: &str| params.get(field).and_then(Value::as_str).unwrap_or_default().to_owned();
    let request = match method {
        "elicitation/create" if params.get("mode").and_then(Value::as_str) == Some("url") => {
            InputRequest::elicit_url(text("message"), text("url"))
        }
        "elicitation/create" => {
            let schema = params.get("requestedSchema").cloned().unwrap_or_else(|| json!({ "type": "object" }));
            InputRequest::elicit_form(text("message"), schema)
        }
        "sampling/createMessage" => InputRequest::sampling(params)?,
        "roots/list" => InputRequest::list_roots(),
        other => return Err(McpError::method_not_found(&other.chars().take(64).collect::<String>())),
    };
    let answer = ctx.input(key, request).await?;
    let encoded = match method {
        "elicitation/create" => serde_json::to_value(answer.into_elicit()?),
        "sampling/createMessage" => serde_json::to_value(answer.into_sampling()?),
        _ => serde_json::to_value(answer.into_roots()?),
    };
    encoded.map_err(|e| McpError::internal(format!("the answer could not be encoded: {e}")))
}

/// A `tools/call` result's text as a `CallToolResult`, decoded as the client decodes it:
/// straight from the text, and through a `Value` where that fails, so a repeated key keeps its
/// last value and an error reads as the client's.
///
/// Errors: a protocol failure naming what does not decode.
fn decode_tool_result(text: &serde_json::value::RawValue) -> Result<CallToolResult, Failure> {
    if let Ok(result) = serde_json::from_str::<CallToolResult>(text.get()) {
        return Ok(result);
    }
    serde_json::from_str::<Value>(text.get())
        .and_then(serde_json::from_value::<CallToolResult>)
        .map_err(|e| Failure::Client(ClientError::Protocol(format!("tools/call: the result does not decode: {e}"))))
}

/// Puts `prefix` before the `uri` of one content read.
fn prefix_uri(content: &mut ResourceContents, prefix: &str) {
    content.uri_mut().insert_str(0, prefix);
}

/// The 2026-07-28 `resultType` and `_meta["io.modelcontextprotocol/serverInfo"]` are the
/// upstream's answer's, not the result's: our server adds its own.
fn strip_result_type(mut value: Value) -> Value {
    if let Some(object) = value.as_object_mut() {
        object.remove("resultType");
        if let Some(Value::Object(meta)) = object.get_mut("_meta") {
            meta.remove(META_SERVER_INFO);
            if meta.is_empty() {
                object.remove("_meta");
            }
        }
    }
    value
}

/// A result's `_meta` without the upstream's `serverInfo` (see [`strip_result_type`]).
fn strip_server_info(meta: &mut Option<Map<String, Value>>) {
    if let Some(m) = meta {
        m.remove(META_SERVER_INFO);
        if m.is_empty() {
            *meta = None;
        }
    }
}

/// The `reason`s our HTTP transport answers with 403, or 401 and a `WWW-Authenticate`
/// challenge naming `data.scope`: our server's own authorization refusals.
const AUTHORIZATION_REASONS: [&str; 2] = ["forbidden", "insufficient_scope"];

/// An upstream error's `data` as ours: unchanged, except that an upstream's authorization
/// refusal keeps its reason only as `upstream_forbidden` / `upstream_insufficient_scope`. It
/// concerns the gateway's own access upstream, which our client cannot change by authorizing
/// with us; as it was, our HTTP transport answered it with 403, or 401 and a challenge to
/// authorize with us for whatever scopes the upstream named.
fn ours(data: &Value) -> Value {
    let mut data = data.clone();
    if let Some(object) = data.as_object_mut()
        && let Some(reason) = object.get("reason").and_then(Value::as_str)
        && AUTHORIZATION_REASONS.contains(&reason)
    {
        let renamed = format!("upstream_{reason}");
        object.insert("reason".to_owned(), Value::String(renamed));
    }
    data
}

/// Whether an upstream's error refuses a plain call of a tool that runs only as a task: `-32021`
/// whose `data.requiredCapabilities.extensions` names the Tasks extension.
fn asks_for_tasks(error: &McpError) -> bool {
    error.code() == ErrorCode::MISSING_CLIENT_CAPABILITY
        && error
            .data()
            .and_then(|d| d.pointer("/requiredCapabilities/extensions"))
            .and_then(Value::as_object)
            .is_some_and(|e| e.contains_key(TASKS_EXTENSION))
}

/// The Tasks extension's key in capabilities.
const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// An upstream task ours is waiting on: cancelled upstream (`tasks/cancel`, sent from a task
/// of its own) when dropped before [`disarm`](Self::disarm), so that a call our client
/// cancelled, or whose future the server dropped, does not leave it running.
struct CancelOnDrop(Option<TaskHandle>);

impl CancelOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(task) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                if let Err(e) = task.cancel().await {
                    tracing::debug!(target: "switchyard_gateway", task = task.id(), "cancelling the upstream task failed: {e}");
                }
            });
        }
    }
}

/// Why a relayed request got no usable answer.
enum Failure {
    /// No connection to the upstream now.
    Down,
    /// Our request was cancelled before it was sent.
    Cancelled,
    /// The client's error.
    Client(ClientError),
}

impl Failure {
    /// A sentence naming the upstream and what went wrong, for an `isError` result or a
    /// `-32603` error; `None` for the upstream's own JSON-RPC error and for our request's
    /// cancellation.
    fn sentence(&self, upstream: &str, method: &str, target: &str) -> Option<String> {
        let what = format!("upstream `{upstream}` ({method} {target})");
        Some(match self {
            Failure::Down => format!("{what}: the upstream is not connected; it is being reconnected, try again later"),
            Failure::Client(ClientError::Timeout { timeout, .. }) => {
                format!("{what}: no answer within {timeout:?}; the request was cancelled upstream")
            }
            Failure::Client(ClientError::Closed) => {
                format!("{what}: the upstream closed the connection before answering; it is being reconnected")
            }
            // A task that ended `cancelled` upstream (no token of ours is watched).
            Failure::Client(ClientError::Cancelled { .. }) => {
                format!("{what}: the upstream task was cancelled before it finished")
            }
            Failure::Client(ClientError::Rpc { .. }) | Failure::Cancelled => return None,
            Failure::Client(other) => format!("{what}: {other}"),
        })
    }

    /// The upstream's JSON-RPC error as ours: same code and data, the message naming it.
    fn upstream_error(self, upstream: &str) -> McpError {
        match self {
            // Our own client's input is wanted (2026-07-28): the outcome goes out as it is.
            Failure::Client(ClientError::Rpc { error, .. }) if error.as_input_required().is_some() => *error,
            Failure::Client(ClientError::Rpc { error, .. }) => {
                let message = format!("upstream `{upstream}`: {}", error.message());
                match error.data() {
                    Some(data) => McpError::new(error.code(), message).with_data(ours(data)),
                    None => McpError::new(error.code(), message),
                }
            }
            // Our request was cancelled: the runtime sends no answer for it.
            _ => McpError::new(ErrorCode::INTERNAL_ERROR, format!("upstream `{upstream}`: the request was cancelled")),
        }
    }

    fn into_tool_outcome(self, upstream: &str, method: &str, target: &str) -> Result<CallToolResult, McpError> {
        match self.sentence(upstream, method, target) {
            Some(sentence) => {
                tracing::warn!(target: "switchyard_gateway", upstream, method, target, "{sentence}");
                Ok(CallToolResult::error(sentence))
            }
            None => Err(self.upstream_error(upstream)),
        }
    }

    fn into_error(self, upstream: &str, method: &str, target: &str) -> McpError {
        match self.sentence(upstream, method, target) {
            Some(sentence) => {
                tracing::warn!(target: "switchyard_gateway", upstream, method, target, "{sentence}");
                McpError::internal(sentence).with_data(json!({ "upstream": upstream }))
            }
            None => self.upstream_error(upstream),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// As the client's own decode of a result: a repeated key keeps its last value, and an
    /// error names the method.
    #[test]
    fn a_refused_result_decodes_as_the_client_decodes_it() {
        let raw = |text: &str| serde_json::value::RawValue::from_string(text.to_owned()).expect("JSON");
        let twice = raw(r#"{"content":[],"content":[{"type":"text","text":"b"}],"isError":true}"#);
        let decoded = decode_tool_result(&twice).unwrap_or_else(|_| panic!("decodes"));
        assert_eq!(decoded, CallToolResult::error("b"));
        let linked = raw(r#"{"content":[{"type":"resource_link","uri":"file:///a","name":"a"}]}"#);
        assert_eq!(decode_tool_result(&linked).map(|r| r.content.len()).ok(), Some(1));
        match decode_tool_result(&raw(r#"{"content":"no"}"#)) {
            Err(Failure::Client(ClientError::Protocol(message))) => {
                assert!(message.starts_with("tools/call: the result does not decode: "), "{message}");
            }
            _ => panic!("a protocol failure"),
        }
    }

    #[test]
    fn upstream_errors_keep_their_code_and_data_and_name_the_upstream() {
        let error = McpError::invalid_params("unknown tool: nope").with_data(json!({ "tool": "nope" }));
        let failure = Failure::Client(ClientError::Rpc { method: "tools/call".into(), error: Box::new(error) });
        let ours = failure.into_tool_outcome("py", "tools/call", "nope").expect_err("a JSON-RPC error");
        assert_eq!(ours.code(), ErrorCode::INVALID_PARAMS);
        assert_eq!(ours.message(), "upstream `py`: unknown tool: nope");
        assert_eq!(ours.data(), Some(&json!({ "tool": "nope" })));
    }

    #[test]
    fn an_upstream_authorization_refusal_is_not_ours() {
        let refusal = McpError::invalid_request("insufficient scope")
            .with_data(json!({ "reason": "insufficient_scope", "scope": "admin:all" }));
        let failure = Failure::Client(ClientError::Rpc { method: "tools/call".into(), error: Box::new(refusal) });
        let ours = failure.into_tool_outcome("up", "tools/call", "t").expect_err("a JSON-RPC error");
        assert_eq!(ours.code(), ErrorCode::INVALID_REQUEST);
        assert_eq!(ours.data(), Some(&json!({ "reason": "upstream_insufficient_scope", "scope": "admin:all" })));
        let forbidden = McpError::invalid_request("no").with_data(json!({ "reason": "forbidden" }));
        let failure = Failure::Client(ClientError::Rpc { method: "prompts/get".into(), error: Box::new(forbidden) });
        let ours = failure.into_error("up", "prompts/get", "p");
        assert_eq!(ours.data(), Some(&json!({ "reason": "upstream_forbidden" })));
        let throttled = McpError::invalid_request("slow down").with_data(json!({ "reason": "rate_limited" }));
        let failure = Failure::Client(ClientError::Rpc { method: "tools/call".into(), error: Box::new(throttled) });
        let ours = failure.into_error("up", "tools/call", "t");
        assert_eq!(ours.data(), Some(&json!({ "reason": "rate_limited" })), "a throttle is passed on");
    }

    #[test]
    fn a_failing_upstream_is_an_is_error_result_for_tools_and_internal_elsewhere() {
        let timeout =
            || Failure::Client(ClientError::Timeout { method: "tools/call".into(), timeout: Duration::from_secs(2) });
        let result = timeout().into_tool_outcome("bad", "tools/call", "hang").expect("a result");
        assert_eq!(result.is_error, Some(true));
        let text = result.content.first().and_then(|c| c.as_text()).expect("a text block");
        assert_eq!(text, "upstream `bad` (tools/call hang): no answer within 2s; the request was cancelled upstream");

        let error = Failure::Client(ClientError::Closed).into_error("bad", "resources/read", "file:///a");
        assert_eq!(error.code(), ErrorCode::INTERNAL_ERROR);
        assert!(
            error.message().starts_with("upstream `bad` (resources/read file:///a): the upstream closed"),
            "{error:?}"
        );
        assert_eq!(error.data(), Some(&json!({ "upstream": "bad" })));

        let down = Failure::Down.into_error("bad", "prompts/get", "p");
        assert!(down.message().contains("not connected"), "{down:?}");
        let garbage = Failure::Client(ClientError::Protocol("a result of the wrong shape".into()));
        let result = garbage.into_tool_outcome("bad", "tools/call", "garbage").expect("a result");
        assert_eq!(result.is_error, Some(true));
    }

    #[test]
    fn read_contents_get_the_uri_prefix_and_results_lose_the_wire_result_type() {
        let mut content = ResourceContents::text("notes://py", Some("text/plain"), "hi");
        prefix_uri(&mut content, "py+");
        assert_eq!(serde_json::to_value(&content).expect("serializes")["uri"], "py+notes://py");
        let value = strip_result_type(json!({ "resultType": "complete", "messages": [] }));
        assert_eq!(value, json!({ "messages": [] }));
        // The upstream's identity goes; the rest of its `_meta` stays.
        let upstream = json!({ "name": "up", "version": "1" });
        let value = strip_result_type(json!({ "messages": [], "_meta": { META_SERVER_INFO: upstream, "k": 1 } }));
        assert_eq!(value, json!({ "messages": [], "_meta": { "k": 1 } }));
        let value = strip_result_type(json!({ "messages": [], "_meta": { META_SERVER_INFO: upstream } }));
        assert_eq!(value, json!({ "messages": [] }));
    }
}
