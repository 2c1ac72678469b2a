//! End-to-end tests of the api: real server on port 0, real PostgreSQL (a fresh database per
//! test) and real Redis (a private key prefix per test).

mod analytics;
mod analytics_lease_up;
mod analytics_params;
mod analytics_portfolio;
mod api_keys;
mod auth;
mod bad_input;
mod cli;
mod crm_outbound;
mod dashboard;
mod dashboard_ecri;
mod dashboard_pricing;
mod dashboard_rates;
mod data_sources;
mod ecri_batches;
mod envelope;
mod facilities;
mod health;
mod jobs;
mod openapi;
mod password;
mod pricing;
mod rate_decisions;
mod rate_limit;
mod rent_roll;
mod restarts;
mod security;
mod slow_clients;
mod status;
mod storedge;
mod sync;
mod upload;
mod upload_limits;
mod webhooks;
