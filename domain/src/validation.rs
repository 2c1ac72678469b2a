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

/// Checks every string of a JSON body, keys included, against the text rule of the API
/// ([`crate::values::is_forbidden_in_text`]: no control character, no invisible
/// text-direction or formatting character), written raw or as an escape (`\u0000`,
/// `\u202e`, `\n`). The error names the first offending field as the body's parser does
/// (`decisions[0].reason`). A body that is not valid JSON passes: its parser says why.
///
/// One pass over the bytes, before the body is parsed: every body of the API goes through it
/// whatever its fields, so a value PostgreSQL refuses (a NUL) never reaches a statement, and
/// text that reads differently from what it holds is never stored.
pub fn require_plain_text(body: &[u8]) -> Result<(), ValidationError> {
    let mut path: Vec<Step> = Vec::new();
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'"' => {
                let (end, bad) = scan_string(body, i + 1);
                let is_key = matches!(path.last(), Some(Step::Key(_, true)));
                if let Some(bad) = bad {
                    let (at, what) = if is_key {
                        (shown(&path[..path.len() - 1]), "a key with")
                    } else {
                        (shown(&path), "")
                    };
                    return Err(ValidationError::new(at, refusal(bad, what)));
                }
                if is_key {
                    let key = String::from_utf8_lossy(&body[i + 1..end.saturating_sub(1)]);
                    path.pop();
                    path.push(Step::Key(key.into_owned(), false));
                }
                i = end;
                continue;
            }
            b'{' => path.push(Step::Key(String::new(), true)),
            b'[' => path.push(Step::Index(0)),
            b'}' | b']' => {
                path.pop();
            }
            b',' => match path.last_mut() {
                Some(Step::Index(n)) => *n += 1,
                Some(step @ Step::Key(..)) => *step = Step::Key(String::new(), true),
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Where the scan of [`require_plain_text`] is: a key of an object (and whether the next
/// string is that key), or an index of an array.
enum Step {
    Key(String, bool),
    Index(usize),
}

fn shown(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k, _) if k.is_empty() => {}
            Step::Key(k, _) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Index(n) => out.push_str(&format!("[{n}]")),
        }
    }
    if out.is_empty() {
        "body".to_owned()
    } else {
        out
    }
}

fn refusal(bad: char, what: &str) -> String {
    let kind = if bad.is_control() {
        "control characters"
    } else {
        "invisible text-direction or formatting characters"
    };
    if what.is_empty() {
        format!("must not contain {kind}")
    } else {
        format!("must not have {what} {kind}")
    }
}

/// Scans a string from just after its opening quote: the index just after its closing quote,
/// and the first character the text rule refuses, raw or escaped.
fn scan_string(body: &[u8], mut i: usize) -> (usize, Option<char>) {
    let forbidden = |c: char| crate::values::is_forbidden_in_text(c).then_some(c);
    let mut bad = None;
    while i < body.len() {
        let b = body[i];
        let found = match b {
            b'"' => return (i + 1, bad),
            b'\\' => {
                let (c, len) = match body.get(i + 1) {
                    Some(b'u') => {
                        let hex = body
                            .get(i + 2..i + 6)
                            .and_then(|h| std::str::from_utf8(h).ok());
                        let unit = hex.and_then(|h| u32::from_str_radix(h, 16).ok());
                        // A surrogate half is never a refused character; the parser pairs it.
                        (unit.and_then(char::from_u32), 6)
                    }
                    Some(b'b') => (Some('\u{8}'), 2),
                    Some(b'f') => (Some('\u{c}'), 2),
                    Some(b'n') => (Some('\n'), 2),
                    Some(b'r') => (Some('\r'), 2),
                    Some(b't') => (Some('\t'), 2),
                    _ => (None, 2),
                };
                i += len;
                c.and_then(forbidden)
            }
            b if b < 0x80 => {
                i += 1;
                forbidden(char::from(b))
            }
            _ => {
                let len = match b {
                    0xC0..=0xDF => 2,
                    0xE0..=0xEF => 3,
                    _ => 4,
                };
                let c = body
                    .get(i..i + len)
                    .and_then(|s| std::str::from_utf8(s).ok())
                    .and_then(|s| s.chars().next());
                i += if c.is_some() { len } else { 1 };
                c.and_then(forbidden)
            }
        };
        if bad.is_none() {
            bad = found;
        }
    }
    (i, bad)
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

    #[test]
    fn every_string_is_held_to_the_text_rule_and_the_field_is_named() {
        let at = |body: &str| require_plain_text(body.as_bytes()).map_err(|e| e.to_string());
        assert_eq!(at(r#"{"a": "x", "b": [1, "y", {"c": "ok"}]}"#), Ok(()));
        assert_eq!(
            at(r#"{"decisions": [{"size": "10x10"}, {"size": "5x5", "reason": "a\u0000b"}]}"#),
            Err("decisions[1].reason: must not contain control characters".to_owned())
        );
        assert_eq!(
            at("{\"flags\": [\"ok\", \"a\u{202E}b\"]}"),
            Err(
                "flags[1]: must not contain invisible text-direction or formatting characters"
                    .to_owned()
            )
        );
        assert_eq!(
            at(r#"{"a": {"b": "x\u202Ey"}}"#),
            Err(
                "a.b: must not contain invisible text-direction or formatting characters"
                    .to_owned()
            )
        );
        assert_eq!(
            at(r#"{"a": "line\nbreak"}"#),
            Err("a: must not contain control characters".to_owned())
        );
        assert_eq!(
            at(r#"{"k\u0000": 1}"#),
            Err("body: must not have a key with control characters".to_owned())
        );
        assert_eq!(
            at(r#"["x", "\u0001"]"#),
            Err("[1]: must not contain control characters".to_owned())
        );
        // Escaped quotes and backslashes stay in their string; joiners and emoji pass.
        assert_eq!(
            at(r#"{"a": "say \"hi\" \\", "b": "\u0000"}"#).unwrap_err(),
            "b: must not contain control characters"
        );
        assert_eq!(at("{\"a\": \"\u{200D}\u{1F600}\u{00E9}\"}"), Ok(()));
        assert_eq!(at(r#"{"a": "\ud83d\ude00"}"#), Ok(()));
        // Not JSON at all: the parser's to refuse.
        assert_eq!(at("{\"a\": \"unterminated"), Ok(()));
    }
}
