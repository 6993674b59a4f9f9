//! The sandbox crate's one integration-test binary: the escape suite (every attempt
//! to get out must be blocked or killed, and the result must name the limit), the
//! live runner fixtures, and the parsers on recorded output.
mod suite;
