//! The JSON the API answers, as types of the API's own, each built from the rows and values
//! `jobs` returns (`From<jobs::...>`). A stored row's shape may change with its SQL; what an
//! integrator reads changes only here, where the OpenAPI document is made from, and the
//! document's snapshot test shows it.

pub(crate) mod analytics;
pub(crate) mod api_keys;
pub(crate) mod audit;
pub(crate) mod competitors;
pub(crate) mod data_sources;
pub(crate) mod decisions;
pub(crate) mod ecri;
pub(crate) mod ecri_batches;
pub(crate) mod facilities;
pub(crate) mod job_runs;
pub(crate) mod pricing;
pub(crate) mod pulls;
pub(crate) mod rates;
pub(crate) mod sync;
pub(crate) mod team;
pub(crate) mod upload;
pub(crate) mod webhooks;
