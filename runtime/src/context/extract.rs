use super::{Logger, Progress, RequestContext, State};
use crate::jsonrpc::McpError;
use std::any::TypeId;
use tokio_util::sync::CancellationToken;

/// A handler argument that is built from the request context rather than from the params.
///
/// Implemented for [`RequestContext`], [`State<T>`], [`CancellationToken`], [`Progress`],
/// [`Logger`] and [`Server`](crate::Server). Implement it for your own types to make them extractors, and
/// mark such arguments `#[extract]` in the handler signature so the macro does not take them for
/// the params type.
///
/// Errors: an extractor that cannot be built returns an [`McpError`] and the handler does not run.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be extracted from the request context",
    label = "not an extractor",
    note = "extractors are RequestContext, State<T>, CancellationToken, Progress, Logger and Server, or types implementing switchyard::FromRequestContext",
    note = "if `{Self}` is your params type, named like an extractor, mark the argument `#[params]`"
)]
pub trait FromRequestContext: Sized {
    /// Builds the value for one handler invocation.
    fn from_request_context(ctx: &RequestContext) -> Result<Self, McpError>;

    /// The shared state this extractor reads (`TypeId` and type name), checked when the server
    /// is built: [`ServerBuilder::build`](crate::ServerBuilder::build) fails when a registered
    /// handler takes an extractor whose state was never given to
    /// [`ServerBuilder::state`](crate::ServerBuilder::state). `None` (the default): no state.
    fn required_state() -> Option<RequiredState> {
        None
    }
}

/// Shared state an extractor needs: see [`FromRequestContext::required_state`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequiredState {
    /// `TypeId::of::<T>()` of the state type.
    pub type_id: TypeId,
    /// `std::any::type_name::<T>()`, for the build error.
    pub type_name: &'static str,
}

impl RequiredState {
    /// The requirement of state of type `T`.
    pub fn of<T: 'static>() -> Self {
        RequiredState { type_id: TypeId::of::<T>(), type_name: std::any::type_name::<T>() }
    }
}

/// What a generated registration lists for its handler's extractors: one
/// [`FromRequestContext::required_state`] per extractor argument.
pub type StateRequirement = fn() -> Option<RequiredState>;

impl FromRequestContext for RequestContext {
    fn from_request_context(ctx: &RequestContext) -> Result<Self, McpError> {
        Ok(ctx.clone())
    }
}

impl<T: Send + Sync + 'static> FromRequestContext for State<T> {
    fn required_state() -> Option<RequiredState> {
        Some(RequiredState::of::<T>())
    }

    fn from_request_context(ctx: &RequestContext) -> Result<Self, McpError> {
        ctx.state::<T>().map(State).ok_or_else(|| {
            // The type name helps the server's author, not the client: it goes to the log only.
            tracing::error!(
                state = std::any::type_name::<T>(),
                "a handler extracts State<T> that was never registered with ServerBuilder::state"
            );
            McpError::internal("the server is misconfigured; see its log")
        })
    }
}

impl FromRequestContext for CancellationToken {
    fn from_request_context(ctx: &RequestContext) -> Result<Self, McpError> {
        Ok(ctx.cancellation().clone())
    }
}

impl FromRequestContext for Progress {
    fn from_request_context(ctx: &RequestContext) -> Result<Self, McpError> {
        Ok(ctx.progress())
    }
}

impl FromRequestContext for Logger {
    fn from_request_context(ctx: &RequestContext) -> Result<Self, McpError> {
        Ok(ctx.logger())
    }
}
