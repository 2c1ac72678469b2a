//! Errors of the domain and data layer. The api maps each variant to one HTTP status.

use std::fmt;

/// Input that breaks a rule: 422 at the edge, with the JSON path of the offending field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    pub path: String,
    pub message: String,
}

impl ValidationError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }

    /// Turns a serde error (with its path) into a message a client can act on.
    pub fn from_serde(e: serde_path_to_error::Error<serde_json::Error>) -> Self {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if !inner.is_data() {
            // Syntax errors, truncated input, invalid UTF-8, nesting beyond the parser's limit.
            return Self::new("body", format!("is not valid JSON: {inner}"));
        }
        let mut text = inner.to_string();
        // serde appends " at line L column C"; the path already says where.
        if let Some(i) = text.rfind(" at line ") {
            text.truncate(i);
        }
        let root = path == "." || path.is_empty();
        if let Some(field) = text.strip_prefix("missing field `").and_then(|t| t.strip_suffix('`')) {
            let full = if root { field.to_owned() } else { format!("{path}.{field}") };
            return Self::new(full, "is required");
        }
        if root && text.starts_with("invalid type") {
            return Self::new("body", format!("must be a JSON object ({text})"));
        }
        Self::new(if root { "body".to_owned() } else { path }, text)
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for ValidationError {}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Invalid(#[from] ValidationError),
    /// The thing does not exist for this company (another company's rows are reported the same).
    #[error("{0}")]
    NotFound(String),
    /// The request conflicts with existing data (a unique name, say).
    #[error("{0}")]
    Conflict(String),
    #[error("database error")]
    Database(#[from] sqlx::Error),
}

impl Error {
    pub fn not_found(what: impl Into<String>) -> Self {
        Self::NotFound(what.into())
    }
}

/// Maps a unique-constraint violation to a conflict with `message`; other errors pass through.
pub fn conflict_on_unique(e: sqlx::Error, message: impl FnOnce(&str) -> String) -> Error {
    if let sqlx::Error::Database(db) = &e {
        if db.is_unique_violation() {
            return Error::Conflict(message(db.constraint().unwrap_or_default()));
        }
    }
    Error::Database(e)
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
