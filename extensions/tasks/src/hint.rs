//! The internal event that tells the instance where a task waits for input that `tasks/update`
//! stored answers for it (published by `tasks/update`, watched by the maintenance).

use serde_json::json;
use switchyard::subscriptions::{Event, Publisher};

/// The routing key of the internal event that tells the instance where a task waits for input
/// that `tasks/update` stored answers for it. No `#[subscription_field]` claims it, so no listen
/// stream is ever granted it and it never reaches a client.
pub(crate) const INPUT_KEY: &str = "switchyard.tasks.input";

/// The method name the input event carries (never sent to a client; see [`INPUT_KEY`]).
const INPUT_METHOD: &str = "switchyard/tasks/input";

/// Tells whichever instance runs task `id` that answers for it are in the store. A hint only:
/// it carries no answers, and a lost one delays the task until its next read of the store.
pub(crate) fn hint_input(publisher: &Publisher, id: &str) {
    publisher.publish(Event::Extension {
        key: INPUT_KEY.to_owned(),
        item: json!(id),
        method: INPUT_METHOD.to_owned(),
        params: json!({ "taskId": id }),
    });
}
