//! Replays every committed fuzz input (`fuzz/corpus/TARGET/*`) through the entry points the
//! fuzz targets use (`switchyard::fuzzing`), so inputs the fuzzer once found interesting stay
//! regression tests in CI: no panic, no hang past EOF, and every answer a well-formed JSON-RPC
//! message. The dispatch inputs run against the dispatch table of `examples/everything`,
//! whose modules are compiled in here.

#[path = "../everything/prompts.rs"]
#[allow(dead_code)]
mod prompts;
#[path = "../everything/resources.rs"]
#[allow(dead_code)]
mod resources;
#[path = "../everything/tools.rs"]
#[allow(dead_code)]
mod tools;

use serde_json::{Value, json};
use std::path::PathBuf;
use switchyard::Server;
use switchyard::fuzzing::{
    HttpTarget, check_server_message, decode_envelope, dispatch_input, mirrored_header, seal_request_state,
    stdio_exchange, verify_request_state,
};

/// Every file of `fuzz/corpus/TARGET`, sorted; at least one (an empty corpus tests nothing).
fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no inputs", dir.display());
    files.into_iter().map(|p| (p.clone(), std::fs::read(&p).expect("readable corpus file"))).collect()
}

/// Fails naming `path` unless every line the server wrote is a well-formed JSON-RPC message.
fn check_lines(path: &std::path::Path, lines: &[Vec<u8>]) {
    for line in lines {
        if let Err(e) = check_server_message(line) {
            panic!("{}: malformed output ({e}): {}", path.display(), String::from_utf8_lossy(line));
        }
    }
}

#[test]
fn envelope_corpus_gets_well_formed_answers() {
    for (path, data) in corpus("envelope") {
        if let Some(answer) = decode_envelope(&data) {
            let line = serde_json::to_vec(&answer).expect("a Value serializes");
            if let Err(e) = check_server_message(&line) {
                panic!("{}: malformed answer ({e}): {}", path.display(), String::from_utf8_lossy(&line));
            }
        }
    }
}

#[test]
fn headers_corpus_fails_only_with_header_mismatch() {
    for (path, data) in corpus("headers") {
        if let Err(e) = mirrored_header(&data) {
            assert_eq!(e.code().0, -32020, "{}: {e:?}", path.display());
        }
    }
}

#[test]
fn dispatch_corpus_gets_well_formed_answers() {
    let server = Server::builder("fuzz-everything", "0").build().expect("the everything table builds");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().expect("runtime");
    for (path, data) in corpus("dispatch") {
        let lines = rt.block_on(stdio_exchange(server.clone(), &dispatch_input(&data))).expect("in-memory I/O");
        check_lines(&path, &lines);
    }
}

#[test]
fn stdio_framing_corpus_gets_well_formed_answers() {
    let server = Server::builder("fuzz-everything", "0").build().expect("the everything table builds");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().expect("runtime");
    for (path, data) in corpus("stdio_framing") {
        let lines = rt.block_on(stdio_exchange(server.clone(), &data)).expect("in-memory I/O");
        check_lines(&path, &lines);
    }
}

#[test]
fn http_corpus_gets_well_formed_replies() {
    let server = Server::builder("fuzz-everything", "0").build().expect("the everything table builds");
    let target = HttpTarget::new(server);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().expect("runtime");
    let mut statuses = std::collections::BTreeSet::new();
    for (path, data) in corpus("http") {
        match rt.block_on(target.exchange(&data)) {
            Ok(status) => statuses.insert(status),
            Err(e) => panic!("{}: {e}", path.display()),
        };
    }
    // The corpus reaches past the front door: answered requests as well as refusals.
    assert!(statuses.contains(&200), "{statuses:?}");
    assert!(statuses.iter().any(|s| (400..500).contains(s)), "{statuses:?}");
}

/// The `request_state` fuzz target's decoding of one input (see
/// `fuzz/fuzz_targets/request_state.rs`): the token to verify and the `inputResponses`.
fn request_state_case(data: &[u8], valid: &str) -> Option<(String, Option<Value>)> {
    let (&mode, rest) = data.split_first()?;
    let (state_part, responses_part) = match rest.iter().position(|&b| b == 0) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let responses = responses_part
        .map(|r| serde_json::from_slice(r).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(r).into_owned())));
    let token = if mode & 1 == 0 {
        String::from_utf8_lossy(state_part).into_owned()
    } else {
        let mut bytes = valid.as_bytes().to_vec();
        for pair in state_part.chunks_exact(2) {
            let at = usize::from(pair[0]) * 7 % bytes.len();
            bytes[at] = pair[1];
        }
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Some((token, responses))
}

#[test]
fn request_state_corpus_is_rejected_unless_genuine() {
    let valid = seal_request_state("fuzz");
    for (path, data) in corpus("request_state") {
        let Some((token, responses)) = request_state_case(&data, &valid) else { continue };
        let responses_ok = matches!(responses, None | Some(Value::Null) | Some(Value::Object(_)));
        let outcome = verify_request_state("fuzz", Value::String(token.clone()), responses);
        if token == valid && responses_ok {
            let answers = outcome.unwrap_or_else(|e| panic!("{}: the genuine state failed: {e:?}", path.display()));
            assert!(answers.contains_key("confirm"), "{}: {answers:?}", path.display());
        } else {
            let e =
                outcome.expect_err(&format!("{}: a forged state or bad inputResponses was accepted", path.display()));
            assert_eq!(e.code().0, -32602, "{}: {e:?}", path.display());
        }
    }
}

#[test]
fn request_state_verification_rejects_every_single_byte_tamper() {
    let valid = seal_request_state("fuzz");
    let genuine = verify_request_state("fuzz", json!(valid), Some(json!({ "extra": { "action": "decline" } })))
        .expect("the genuine state verifies");
    assert_eq!(genuine["confirm"], json!({ "action": "accept" }));
    assert_eq!(genuine["extra"], json!({ "action": "decline" }));
    // Bound to the arguments: the same state on another `text` is rejected.
    let e = verify_request_state("other", json!(valid), None).expect_err("bound to the arguments");
    assert_eq!(e.code().0, -32602);
    for at in 0..valid.len() {
        for replacement in [b'A', b'_', b'.', b'0'] {
            let mut bytes = valid.clone().into_bytes();
            if bytes[at] == replacement {
                continue;
            }
            bytes[at] = replacement;
            let token = String::from_utf8(bytes).expect("ASCII");
            let e = verify_request_state("fuzz", json!(token), None).expect_err(&format!("tampered at {at}: {token}"));
            assert_eq!(e.code().0, -32602, "{e:?}");
        }
    }
    for wrong in [json!(42), json!(["v1"]), json!({ "state": valid })] {
        assert_eq!(verify_request_state("fuzz", wrong, None).expect_err("not a string").code().0, -32602);
    }
    let e = verify_request_state("fuzz", json!(valid), Some(json!([1]))).expect_err("inputResponses not an object");
    assert_eq!(e.code().0, -32602);
}
