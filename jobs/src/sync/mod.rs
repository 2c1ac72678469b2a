//! Storage of the daily snapshot; its parsing and derived figures are `domain::sync`.

pub mod store;

pub use store::{ingest, store, Outcome, Source};
