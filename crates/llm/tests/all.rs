//! The one integration-test binary of `llm`: every provider wire format against
//! the wire-level mock server in `test_support::mock_llm`.
mod suite;
