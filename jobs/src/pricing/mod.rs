//! Pricing with IO: `store` loads a facility's engine inputs and stores and reads
//! recommendation runs; `history` reads the daily series the dashboard charts. The engine itself
//! is `domain::pricing`.

pub mod history;
pub mod inputs;
pub mod store;
