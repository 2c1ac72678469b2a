//! Storage of the daily snapshot: `store` places one snapshot (facility matching, its ingest
//! job) and `write` is the one writer of snapshot rows. Parsing and derived figures are
//! `domain::sync`.

pub mod store;
pub mod write;

pub use store::{ingest, store, Outcome, Source};
