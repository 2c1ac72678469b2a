//! What the analytics routes answer, one module per report, built from `jobs::analytics::reports`.

pub(crate) mod ecri;
pub(crate) mod leads;
pub(crate) mod lease_up;
pub(crate) mod portfolio;
pub(crate) mod revpas;
pub(crate) mod seasonality;
