//! The HTTP process: routes, extractors, auth, rate limiting, the error envelope and the admin
//! CLI. Handlers parse, check, call `jobs`, and answer; no durable work runs in a request task.

pub mod access;
pub mod app;
pub mod auth;
pub mod body_timeout;
pub mod cli;
pub(crate) mod csv_export;
pub mod dashboard;
pub mod docs_page;
pub mod error;
pub(crate) mod exports;
pub mod extract;
pub mod health;
pub mod openapi;
pub mod ratelimit;
pub(crate) mod requests;
pub mod routes;
pub mod server;
pub mod state;
pub mod telemetry;
pub(crate) mod views;

pub use app::app;
pub use state::AppState;
