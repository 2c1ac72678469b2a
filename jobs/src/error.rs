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
        if let Some(field) = text
            .strip_prefix("missing field `")
            .and_then(|t| t.strip_suffix('`'))
        {
            let full = if root {
                field.to_owned()
            } else {
                format!("{path}.{field}")
            };
            return Self::new(full, "is required");
        }
        if root && text.starts_with("invalid type") {
            return Self::new("body", format!("must be a JSON object ({text})"));
        }
        Self::new(if root { "body".to_owned() } else { path }, text)
    }
}

/// Deepest nesting of arrays and objects accepted in a body. Real payloads nest four levels;
/// the bound keeps ignored fields from smuggling structures that are costly to store.
pub const MAX_JSON_DEPTH: usize = 32;

/// Checks that a body is a non-empty JSON object (serde would accept an array for a struct)
/// nested at most [`MAX_JSON_DEPTH`] levels, before it is parsed.
pub fn require_object(body: &[u8]) -> Result<(), ValidationError> {
    match body.iter().find(|b| !b.is_ascii_whitespace()) {
        None => {
            return Err(ValidationError::new(
                "body",
                "must be a JSON object, got an empty body",
            ))
        }
        Some(b'{') => {}
        Some(_) => return Err(ValidationError::new("body", "must be a JSON object")),
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in body {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Err(ValidationError::new(
                        "body",
                        format!("is nested deeper than {MAX_JSON_DEPTH} levels"),
                    ));
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
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
    /// A failure of ours that no input explains (a hash that cannot be computed, a task that
    /// stopped): 500 at the edge, logged with its cause.
    #[error("internal error: {0}")]
    Internal(String),
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

/// Whether a database error means the server is away or restarting rather than that the
/// request or the data is wrong: no connection could be had in time, the connection broke, or
/// the server ended the session (SQLSTATE class 08, `57P01` to `57P03` while it shuts down,
/// restarts or starts up, `53300` when it has no connection slot left). Such a request may
/// succeed when sent again; the api answers it with 503.
pub fn is_unavailable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_) => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            code.starts_with("08") || matches!(code.as_ref(), "57P01" | "57P02" | "57P03" | "53300")
        }),
        _ => false,
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_must_be_shallow_objects() {
        assert!(
            require_object(br#" {"a": [1, {"b": "[[[["}]}"#).is_ok(),
            "brackets in strings do not count"
        );
        assert!(require_object(b"[]").is_err());
        assert!(require_object(b"  ").is_err());
        let deep = format!(
            "{{\"a\": {}{}}}",
            "[".repeat(MAX_JSON_DEPTH),
            "]".repeat(MAX_JSON_DEPTH)
        );
        assert!(require_object(deep.as_bytes())
            .unwrap_err()
            .message
            .contains("nested deeper"));
        let ok = format!(
            "{{\"a\": {}{}}}",
            "[".repeat(MAX_JSON_DEPTH - 1),
            "]".repeat(MAX_JSON_DEPTH - 1)
        );
        assert!(require_object(ok.as_bytes()).is_ok());
        assert!(
            require_object(br#"{"a": "\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}"#).is_ok(),
            "escaped quotes stay in the string"
        );
    }
}
