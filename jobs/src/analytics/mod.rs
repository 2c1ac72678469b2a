//! Analytics reports: each loads a company's figures from PostgreSQL, calls the maths of
//! `domain::analytics` and shapes the answer. Formulas: docs/analytics.md.

pub mod reports;
