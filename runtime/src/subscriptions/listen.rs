//! `subscriptions/listen`
//! ([spec](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions)):
//! validate the filter, grant what this server can publish, acknowledge first, then deliver
//! matching events until the client ends the subscription, the subscriber lags, or the server shuts
//! down.

use super::Event;
use super::Lagged;
use super::Refused;
use super::encoded::{self, subscription_meta};
use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::vocab::methods::{
    LISTEN_KEYS, PROMPTS_LIST_CHANGED, RESOURCE_SUBSCRIPTIONS, RESOURCES_LIST_CHANGED, TOOLS_LIST_CHANGED,
};
use futures::StreamExt;
use futures::task::AtomicWaker;
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

/// What the listen methods need of the running server; the pipeline's engine provides it, so
/// that this layer names nothing above it.
pub(crate) trait ListenHost: Send + Sync {
    /// The dispatch table now (what can be granted).
    fn table(&self) -> Arc<crate::registry::DispatchTable>;
    /// The processors of the extension keys of a listen filter (`#[subscription_field]`).
    fn field(&self, key: &str) -> Option<&'static super::SubscriptionFieldRegistration>;
    /// Where published events come from.
    fn hub(&self) -> &Arc<dyn super::DeliveryHub>;
    /// The count of open built-in subscriptions.
    fn open_subscriptions(&self) -> &Arc<super::OpenSubscriptions>;
    /// The slots of open subscriptions per connection and caller ([`super::ListenLimits`]).
    fn listen_slots(&self) -> &Arc<super::ListenSlots>;
    /// The latest event, encoded once for every subscription.
    fn encoded_events(&self) -> &super::EncodedEvents;
    /// The resource URIs subscribed to on this instance.
    fn resource_interest(&self) -> &Arc<super::ResourceInterest>;
    /// Fires when the server stops serving streams (closing after a drain, or shutdown):
    /// subscriptions then end with their result.
    fn closing(&self) -> &tokio_util::sync::CancellationToken;
}

/// What a subscription was granted: the requested types this server can publish.
#[derive(Debug, Default, Clone, PartialEq)]
struct Grant {
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: Option<Vec<String>>,
    /// Grants of extension-owned keys, by key.
    fields: Map<String, Value>,
}

impl Grant {
    fn to_json(&self) -> Value {
        let mut n = Map::new();
        for (key, on) in [
            (TOOLS_LIST_CHANGED, self.tools),
            (PROMPTS_LIST_CHANGED, self.prompts),
            (RESOURCES_LIST_CHANGED, self.resources),
        ] {
            if on {
                n.insert(key.into(), json!(true));
            }
        }
        if let Some(uris) = &self.uris {
            n.insert(RESOURCE_SUBSCRIPTIONS.into(), json!(uris));
        }
        for (k, v) in &self.fields {
            n.insert(k.clone(), v.clone());
        }
        Value::Object(n)
    }

    /// The notification for `event` if this grant covers it: `(method, params)`, borrowed from
    /// the event where it can be (every subscriber of an event calls this; the encoded text is
    /// shared, so a copy per subscriber would be the only per-subscriber work left).
    fn deliver<'a>(&self, event: &'a Event) -> Option<(&'a str, Cow<'a, Value>)> {
        let empty = || Cow::Owned(Value::Object(Map::new()));
        match event {
            Event::ToolsListChanged if self.tools => Some(("notifications/tools/list_changed", empty())),
            Event::PromptsListChanged if self.prompts => Some(("notifications/prompts/list_changed", empty())),
            Event::ResourcesListChanged if self.resources => Some(("notifications/resources/list_changed", empty())),
            Event::ResourceUpdated(uri) if self.uris.as_ref().is_some_and(|u| u.contains(uri)) => {
                Some(("notifications/resources/updated", Cow::Owned(json!({ "uri": uri }))))
            }
            Event::Extension { key, item, method, params } => {
                let granted = self.fields.get(key)?;
                let matches = granted == item || granted.as_array().is_some_and(|a| a.contains(item));
                matches.then_some((method.as_str(), Cow::Borrowed(params)))
            }
            _ => None,
        }
    }
}

/// Reads and checks the filter; `-32602` for a missing filter or a field of the wrong type.
pub(super) fn requested(params: &Map<String, Value>) -> Result<Map<String, Value>, McpError> {
    let filter = params.get("notifications").and_then(Value::as_object).ok_or_else(|| {
        McpError::invalid_params("subscriptions/listen: params.notifications (an object) is required")
    })?;
    for &key in LISTEN_KEYS {
        let Some(v) = filter.get(key) else { continue };
        let (valid, what) = if key == RESOURCE_SUBSCRIPTIONS {
            (v.as_array().is_some_and(|a| a.iter().all(Value::is_string)), "an array of URI strings")
        } else {
            (v.is_boolean(), "a boolean")
        };
        if !valid {
            return Err(McpError::invalid_params(format!("subscriptions/listen: notifications.{key} must be {what}")));
        }
    }
    Ok(filter.clone())
}

/// Runs the processors of the extension keys the filter names: `-32021` for a key whose extension
/// the request did not declare; keys nobody claims are dropped.
async fn grant_fields(
    server: &impl ListenHost,
    ctx: &RequestContext,
    filter: &Map<String, Value>,
) -> Result<Map<String, Value>, McpError> {
    let mut granted = Map::new();
    for (key, requested) in filter {
        let Some(reg) = server.field(key.as_str()) else { continue };
        if let Some(ext) = reg.extension {
            let declared =
                ctx.client_capabilities().get("extensions").and_then(|e| e.get(ext)).is_some_and(Value::is_object);
            if !declared {
                return Err(McpError::missing_capability(
                    format!("notifications.{key} needs the extension `{ext}` in the request's capabilities"),
                    json!({ "extensions": { ext: {} } }),
                ));
            }
        }
        if let Some(v) = (reg.handler)(ctx.clone(), requested.clone()).await? {
            granted.insert(key.clone(), v);
        }
    }
    Ok(granted)
}

fn grant(server: &impl ListenHost, filter: &Map<String, Value>) -> Grant {
    let table = server.table();
    let on = |k: &str| filter.get(k).and_then(Value::as_bool).unwrap_or(false);
    let has_resources = table.has_resources();
    Grant {
        tools: on(TOOLS_LIST_CHANGED) && table.has_tools(),
        prompts: on(PROMPTS_LIST_CHANGED) && table.has_prompts(),
        resources: on(RESOURCES_LIST_CHANGED) && has_resources,
        uris: filter
            .get(RESOURCE_SUBSCRIPTIONS)
            .and_then(Value::as_array)
            .filter(|_| has_resources)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect()),
        fields: Map::new(),
    }
}

/// The listen result `{"_meta": {"io.modelcontextprotocol/subscriptionId": sid}}`
/// (`SubscriptionsListenResult`; `resultType` is added when it is sent).
pub(super) fn listen_result(sid: &Value) -> Value {
    json!({ "_meta": subscription_meta(sid) })
}

/// What woke a subscription's loop.
enum Step {
    Stopped,
    Gone,
    Event(Option<Result<Event, Lagged>>),
}

/// The waker a subscription's cancellation futures are polled with: notes that one of them
/// fired (so the loop polls them only then), and wakes the subscription.
struct Fired {
    set: AtomicBool,
    task: AtomicWaker,
}

impl futures::task::ArcWake for Fired {
    fn wake_by_ref(arc: &Arc<Self>) {
        arc.set.store(true, Ordering::Release);
        arc.task.wake();
    }
}

/// Checks the filter and makes the grant.
async fn setup(server: &impl ListenHost, ctx: &RequestContext, params: Map<String, Value>) -> Result<Grant, McpError> {
    if !ctx.notifier().can_deliver() {
        // A transport that answers with one JSON body cannot hold a subscription.
        return Err(McpError::method_not_found("subscriptions/listen"));
    }
    let filter = requested(&params)?;
    let mut grant = grant(server, &filter);
    grant.fields = grant_fields(server, ctx, &filter).await?;
    Ok(grant)
}

/// The listen handler. Its result (`{resultType, _meta: {subscriptionId}}`) is sent when the
/// subscription ends from the server side: shutdown, or a subscriber too slow to keep up.
/// `-32603` with `data.reason = "listenLimit"` when the connection or the caller already holds
/// as many subscriptions as [`ListenLimits`](super::ListenLimits) allow.
///
/// This future is held for the subscription's whole life, so it is kept small: the setup runs
/// in a future of its own (boxed, gone once the grant is made), and what is only needed for a
/// moment (the acknowledgement, the event being delivered) is scoped so that it is not kept.
pub(crate) async fn listen(
    server: &impl ListenHost,
    ctx: RequestContext,
    params: Map<String, Value>,
) -> Result<Value, McpError> {
    let grant = Box::pin(setup(server, &ctx, params)).await?;
    // Held until this future ends or is dropped, however the subscription ends.
    let _slot = server.listen_slots().acquire(ctx.connection(), ctx.principal()).map_err(Refused::into_error)?;
    // Every delivery writes the id, serialized once; the `Value` is made again from `ctx` on
    // the rare paths that need it, rather than kept in this long-lived state. Cannot fail: an
    // id is a string or a number.
    let sid_json = serde_json::to_string(&ctx.request_id().to_value()).unwrap_or_default();
    // Held until this future ends, as the slot: what produces updates of these resources
    // (`Server::subscribed_resources`) knows of them by the time the client is acknowledged.
    let _interest: Vec<super::InterestHold> =
        grant.uris.iter().flatten().map(|uri| server.resource_interest().hold(uri)).collect();
    // Subscribe before acknowledging, so nothing published after the ack can be missed.
    let mut events = server.hub().subscribe();
    let _open = server.open_subscriptions().open();
    let notifier = ctx.notifier();
    {
        let mut ack = json!({ "notifications": grant.to_json() });
        ack["_meta"] = subscription_meta(&ctx.request_id().to_value());
        notifier.send("notifications/subscriptions/acknowledged", ack)
    }
    .await;
    // Made once, not per event, and polled only after one of them woke the subscription: a
    // poll locks its token (the shutdown token is shared by every subscription), so checking
    // both after every event cost two locks per event and subscriber.
    let stopped = server.closing().cancelled();
    let gone = ctx.cancellation().cancelled();
    tokio::pin!(stopped, gone);
    let fired = Arc::new(Fired { set: AtomicBool::new(true), task: AtomicWaker::new() });
    loop {
        // Scoped: the step, the event and its notification end with the block, so this
        // future's state holds none of them while the send below waits (or while idle).
        let delivery = {
            let step = std::future::poll_fn(|cx| {
                fired.task.register(cx.waker());
                if fired.set.swap(false, Ordering::AcqRel) {
                    let waker = futures::task::waker_ref(&fired);
                    let mut on_fire = Context::from_waker(&waker);
                    if stopped.as_mut().poll(&mut on_fire).is_ready() {
                        return Poll::Ready(Step::Stopped);
                    }
                    if gone.as_mut().poll(&mut on_fire).is_ready() {
                        return Poll::Ready(Step::Gone);
                    }
                }
                events.poll_next_unpin(cx).map(Step::Event)
            })
            .await;
            let event = match step {
                Step::Stopped => return Ok(listen_result(&ctx.request_id().to_value())),
                Step::Gone => return Err(McpError::internal("subscription cancelled")),
                Step::Event(Some(Ok(event))) => event,
                // Lagged (or the hub closed): end with the result rather than skip events.
                Step::Event(Some(Err(_)) | None) => return Ok(listen_result(&ctx.request_id().to_value())),
            };
            let Some((method, params)) = grant.deliver(&event) else { continue };
            let params = match params.as_ref() {
                Value::Object(_) => params,
                Value::Null => Cow::Owned(Value::Object(Map::new())),
                other => {
                    // Notification params are an object (JSON-RPC, MCP); there is nowhere to
                    // put the subscription id. A publisher bug: skip it, keep the subscription.
                    tracing::warn!(%method, params = %other, "listen: an event's params are not an object; not delivered");
                    continue;
                }
            };
            // Inside the listen request's span: in the subscriber's trace (its `traceparent`),
            // and a span event per delivery where an exporter keeps them. DEBUG: a stream can
            // last for hours, and OpenTelemetry keeps at most 128 events per span.
            tracing::event!(
                target: crate::context::SPAN_TARGET,
                tracing::Level::DEBUG,
                mcp.method.name = method,
                "listen delivery"
            );
            let encoded = server.encoded_events();
            notifier.send_encoded(
                || encoded.message(method, &params, &sid_json),
                || encoded::message_value(method, params.as_ref().clone(), &ctx.request_id().to_value()),
            )
        };
        delivery.await;
    }
}
