//! Everything the api and worker processes share: configuration, the domain (value types,
//! sync payload, derived figures), data access, and (in later modules) job handlers.
//!
//! This crate must never depend on HTTP framework types: the api maps its errors to statuses.

pub mod analytics;
pub mod competitors;
pub mod config;
pub mod crm;
pub mod cron;
pub mod crypto;
pub mod data_sources;
pub mod db;
pub mod domain;
pub mod error;
pub mod facilities;
pub mod handlers;
pub mod key_rotation;
pub mod lease_up;
pub mod mail;
pub mod outbound;
pub mod password_reset;
pub mod pricing;
pub mod queue;
pub mod runs;
pub mod seed;
pub mod sync;
pub mod tenancy;
pub mod upload;
pub mod versions;
pub mod web_sessions;
pub mod webhooks;

pub use error::{Error, Result, ValidationError};
