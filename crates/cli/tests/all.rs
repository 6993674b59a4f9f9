//! The `ironbees` binary, end to end, on temporary projects.
mod suite;
