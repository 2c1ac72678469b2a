//! Everything with IO that the api and worker processes share: configuration, data access, the
//! job platform and its handlers, mail and outbound HTTP. The pure core is the `domain` crate.
//!
//! This crate must never depend on HTTP framework types: the api maps its errors to statuses.

pub mod access;
pub mod actor;
pub mod analytics;
pub mod audit;
pub mod competitors;
pub mod config;
pub mod counters;
pub mod crm;
pub mod cron;
pub mod crypto;
pub mod data_sources;
pub mod db;
pub mod decisions;
pub mod door;
pub mod ecri;
pub mod ecri_batches;
pub mod error;
pub mod facilities;
pub mod handlers;
pub mod key_rotation;
pub mod lease_up;
pub mod mail;
pub mod outbound;
pub mod password_reset;
pub mod payload;
pub mod pricing;
pub mod queue;
pub mod rates;
pub mod rent_roll;
pub mod runs;
#[cfg(feature = "demo-seed")]
pub mod seed;
pub mod sessions;
pub mod sign_up;
pub mod status;
pub mod sync;
pub mod team;
pub mod tenancy;
pub mod upload;
pub mod versions;
pub mod webhooks;

pub use error::{Error, Result, ValidationError};
