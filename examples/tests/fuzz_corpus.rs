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

use std::path::PathBuf;
use switchyard::Server;
use switchyard::fuzzing::{check_server_message, decode_envelope, dispatch_input, mirrored_header, stdio_exchange};

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
            assert_eq!(e.code.0, -32020, "{}: {e:?}", path.display());
        }
    }
}

#[test]
fn dispatch_corpus_gets_well_formed_answers() {
    let server = Server::builder("fuzz-everything", "0").build().expect("the everything table builds");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().expect("runtime");
    for (path, data) in corpus("dispatch") {
        let lines = rt.block_on(stdio_exchange(server.clone(), &dispatch_input(&data))).expect("in-memory I/O");
        for line in lines {
            if let Err(e) = check_server_message(&line) {
                panic!("{}: malformed output ({e}): {}", path.display(), String::from_utf8_lossy(&line));
            }
        }
    }
}
