//! A result as the type its caller expects: decoded from the JSON text the peer hands over
//! (`peer.rs`), or through a [`Value`] where that fails, so both read alike.

use crate::error::ClientError;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

/// `result` as `T`.
///
/// Errors: [`ClientError::Protocol`] naming what does not decode.
pub(crate) fn decode<T: DeserializeOwned>(method: &str, result: Value) -> Result<T, ClientError> {
    serde_json::from_value(result)
        .map_err(|e| ClientError::Protocol(format!("{method}: the result does not decode: {e}")))
}

/// [`decode`] from the result's text. What the text does not decode into `T` is decoded again
/// through a [`Value`], so the outcome is [`decode`]'s: a repeated key keeps its last value, and
/// an error reads the same.
///
/// Errors: [`ClientError::Protocol`] naming what does not decode.
pub(crate) fn decode_text<T: DeserializeOwned>(method: &str, result: &RawValue) -> Result<T, ClientError> {
    match serde_json::from_str(result.get()) {
        Ok(decoded) => Ok(decoded),
        Err(_) => decode(method, value_of(method, result)?),
    }
}

/// A result's text as a [`Value`].
///
/// Errors: [`ClientError::Protocol`] for text a `Value` cannot hold (the response path already
/// refuses such text; this is what keeps a mistake there from being a panic).
pub(crate) fn value_of(method: &str, result: &RawValue) -> Result<Value, ClientError> {
    serde_json::from_str(result.get())
        .map_err(|e| ClientError::Protocol(format!("{method}: the result does not decode: {e}")))
}
