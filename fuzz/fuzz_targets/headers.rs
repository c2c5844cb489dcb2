//! Validation of headers that mirror body fields (the `=?base64?...?=` sentinel): never
//! panics; failures are `-32020`; a decoded sentinel was valid base64 of UTF-8.
#![no_main]

use libfuzzer_sys::fuzz_target;
use switchyard::fuzzing::mirrored_header;

fuzz_target!(|data: &[u8]| {
    match mirrored_header(data) {
        Ok(_) => {}
        Err(e) => assert_eq!(e.code.0, -32020, "header errors are -32020: {e:?}"),
    }
});
