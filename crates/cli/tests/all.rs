//! The one integration-test binary of the `ironbees` CLI: end-to-end tests that run
//! the real binary on temporary projects, grouped by feature in `suite/`.
#![allow(clippy::disallowed_methods)] // tests start the binary and helpers as processes

mod suite;
