//! The daily snapshot: parsing (`payload`) and derived figures (`derive`). `jobs::sync` stores it.

pub mod derive;
pub mod payload;
pub mod roll;

pub use payload::{parse, parse_exact, Parsed, SyncPayload};
