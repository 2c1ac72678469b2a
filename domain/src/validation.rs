//! Input that breaks a rule, and the checks every JSON body passes before it is parsed.

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
        None => Err(ValidationError::new(
            "body",
            "must be a JSON object, got an empty body",
        )),
        Some(b'{') => require_depth(body),
        Some(_) => Err(ValidationError::new("body", "must be a JSON object")),
    }
}

/// Checks that a body nests at most [`MAX_JSON_DEPTH`] levels, before it is parsed.
pub fn require_depth(body: &[u8]) -> Result<(), ValidationError> {
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
