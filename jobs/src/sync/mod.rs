//! The daily snapshot: parsing (`payload`), derived figures (`derive`) and storage (`store`).

pub mod derive;
pub mod payload;
pub mod store;

pub use payload::{parse, parse_exact, Parsed, SyncPayload};
pub use store::{ingest, store, Outcome, Source};
