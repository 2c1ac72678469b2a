//! Value types of the domain, each parsed once at the boundary.

pub mod values;
