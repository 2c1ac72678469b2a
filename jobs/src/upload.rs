//! Uploads with IO: merging uploaded unit types into a stored day (`merge`) and writing a whole
//! upload in one transaction (`store`). Row parsing is `domain::upload`.

pub mod merge;
pub mod store;
