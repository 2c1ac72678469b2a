//! The pricing engine: plain structs in, plain structs out. `jobs::pricing` loads a facility's
//! inputs from the database and stores recommendation runs.

pub mod backtest;
pub mod band;
pub mod decisions;
pub mod engine;
pub mod response;
pub mod seasonality;
pub mod settings;
pub mod target;
pub mod tiers;

pub use band::{
    competitor_band, lease_up_fill, BandSettings, CompetitorBand, CompetitorObservation,
};
pub use engine::{recommend, FacilityInput, Mode, Recommendation, ENGINE_VERSION};
pub use settings::PricingSettings;
