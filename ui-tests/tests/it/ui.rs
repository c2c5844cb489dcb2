//! trybuild runner for the pass and fail cases.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/pass/*.rs");
    cases.compile_fail("tests/fail/*.rs");
}
