//! Storage of the daily snapshot: `store` places one snapshot (facility matching, its ingest
//! job) and `write` is the one writer of snapshot rows. Parsing and derived figures are
//! `domain::sync`.

pub(crate) mod store;
pub(crate) mod write;

pub(crate) use store::store;
pub use store::{ingest, FacilityOutcome, Outcome, Source};
