//! Rotating the requestState key in a rolling deploy (`--previous-state-key-env`): an input
//! round begun on an instance still sealing with the old key is finished by one sealing with
//! the new key, and the reverse is refused until the old instances know the new key.

use crate::common::*;
use serde_json::{Value, json};

const OLD: &str = "the-old-requestState-key-of-at-least-32-bytes";
const NEW: &str = "the-new-requestState-key-of-at-least-32-bytes";

fn ask(extra: Value) -> Value {
    let mut params = json!({ "name": "test_input_required_result_elicitation",
        "_meta": meta(json!({ "elicitation": {} })) });
    for (k, v) in extra.as_object().into_iter().flatten() {
        params[k] = v.clone();
    }
    params
}

/// Round one on `from`, the answer on `to`: the second round's result.
async fn round_trip(from: &HttpServer, to: &HttpServer) -> Value {
    let c = client();
    let r1 = send(modern(&c, &from.url, json!(1), "tools/call", ask(json!({})))).await;
    let result = &r1.last()["result"];
    assert_eq!(result["resultType"], "input_required", "{result}");
    let state = result["requestState"].as_str().expect("a requestState").to_owned();
    let answer = json!({ "user_name": { "action": "accept", "content": { "name": "Ada" } } });
    let retry = ask(json!({ "inputResponses": answer, "requestState": state }));
    send(modern(&c, &to.url, json!(2), "tools/call", retry)).await.last().clone()
}

#[tokio::test]
async fn input_rounds_cross_instances_during_a_key_rotation() {
    let env = [("STATE_KEY_OLD", OLD), ("STATE_KEY_NEW", NEW)];
    // Step 1 of the rotation: seals with the old key, already knows the new one.
    let step1 = HttpServer::start_with_env(
        "everything",
        &["--state-key-env", "STATE_KEY_OLD", "--previous-state-key-env", "STATE_KEY_NEW"],
        &env,
    );
    // Step 2: seals with the new key, still opens the old one's states.
    let step2 = HttpServer::start_with_env(
        "everything",
        &["--state-key-env", "STATE_KEY_NEW", "--previous-state-key-env", "STATE_KEY_OLD"],
        &env,
    );
    // A server that never heard of the old key.
    let fresh = HttpServer::start_with_env("everything", &["--state-key-env", "STATE_KEY_NEW"], &env);
    let done = |r: &Value| r["result"]["content"][0]["text"] == "Hello, Ada!";
    for (from, to, what) in [(&step1, &step2, "old to new"), (&step2, &step1, "new to old"), (&step2, &fresh, "new")] {
        let r = round_trip(from, to).await;
        assert!(done(&r), "{what}: {r}");
    }
    let r = round_trip(&step1, &fresh).await;
    assert_eq!(r["error"]["code"], -32602, "a key the server does not know: {r}");
    assert!(r["error"]["message"].as_str().is_some_and(|m| m.contains("requestState")), "{r}");
}
