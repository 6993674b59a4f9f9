//! The one integration-test binary of the workflow engine, each module in
//! `suite/`. (The crash test lives in the unit-test binary, where its crash points
//! are compiled in: `src/crash_test.rs`.)

mod suite;
