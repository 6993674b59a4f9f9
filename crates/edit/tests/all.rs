//! The one integration-test binary of the edit engine: transactions, encodings,
//! undo/redo and history, concurrency, and the CLI-independent error cases, each
//! module in `suite/`. (The crash test lives in the unit-test binary, where its
//! crash points are compiled in: `src/crash_tests.rs`.)

mod suite;
