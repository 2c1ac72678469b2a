//! The pure core of the service: plain values in, plain values out. Value types parsed once at
//! the boundary (`values`), typed ids (`ids`), the daily snapshot and its derived figures
//! (`sync`), upload rows (`upload`), competitor rates (`competitors`), the pricing engine and
//! its backtest (`pricing`), rent increases of tenants in place and their backtest (`ecri`),
//! the analytics maths (`analytics`), the lease-up rule (`lease_up`) and the engines' sentences
//! with their amounts written as money (`prose`).
//!
//! Nothing here performs IO; the crate's dependencies keep it that way (no database, queue,
//! HTTP or mail crate is among them). `jobs` loads inputs, calls these functions and stores
//! what they return. Layout: docs/architecture.md.

pub mod analytics;
pub mod competitors;
pub mod ecri;
pub mod ids;
pub mod lease_up;
pub mod pricing;
pub mod prose;
pub mod sync;
pub mod upload;
pub mod validation;
pub mod values;

pub use validation::ValidationError;
