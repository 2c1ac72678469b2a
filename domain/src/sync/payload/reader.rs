//! Reads values out of a sync payload one field at a time: a value that cannot be read is left
//! out with a warning naming its path, an unknown field is noted and ignored.

use crate::validation::ValidationError;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

pub(super) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(super) fn join(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.is_empty() || path == "body") {
        (true, _) => path.to_owned(),
        (false, true) => prefix.to_owned(),
        (false, false) if path.starts_with('[') => format!("{prefix}{path}"),
        (false, false) => format!("{prefix}.{path}"),
    }
}

/// Reads values out of the payload, collecting what it noted.
#[derive(Default)]
pub(super) struct Reader {
    pub(super) warnings: Vec<String>,
    pub(super) left_out: Vec<ValidationError>,
}

impl Reader {
    pub(super) fn note(&mut self, path: &str, what: impl std::fmt::Display) {
        self.warnings.push(format!("{path}: {what}"));
    }

    pub(super) fn leave_out(&mut self, e: ValidationError) {
        self.warnings
            .push(format!("{}: {}; left out", e.path, e.message));
        self.left_out.push(e);
    }

    /// Deserialises one value, noting unknown fields; errors carry the full path.
    pub(super) fn value<T: DeserializeOwned>(
        &mut self,
        v: &Value,
        path: &str,
    ) -> Result<T, ValidationError> {
        let mut unknown = Vec::new();
        let result = {
            let mut seen = |p: serde_ignored::Path<'_>| unknown.push(p.to_string());
            serde_path_to_error::deserialize(serde_ignored::Deserializer::new(v, &mut seen))
        };
        match result {
            Ok(t) => {
                for u in unknown {
                    self.note(&join(path, &display_path(&u)), "unknown field, ignored");
                }
                Ok(t)
            }
            Err(e) => {
                let root = matches!(e.path().to_string().as_str(), "." | "");
                let e = ValidationError::from_serde(e);
                // At the root of this value, `from_serde` speaks of the whole body.
                let message = match (root, e.message.strip_prefix("must be a JSON object (")) {
                    (true, Some(inner)) if e.path == "body" => {
                        inner.strip_suffix(')').unwrap_or(inner).to_owned()
                    }
                    _ => e.message,
                };
                Err(ValidationError::new(join(path, &e.path), message))
            }
        }
    }

    /// Deserialises an object, leaving out (and noting) each optional field that cannot be
    /// read. A required field that cannot be read, or one of `strict`, is the object's error.
    pub(super) fn object<T: DeserializeOwned>(
        &mut self,
        obj: &mut Map<String, Value>,
        path: &str,
        strict: &[&str],
    ) -> Result<T, ValidationError> {
        let mut dropped: Vec<ValidationError> = Vec::new();
        loop {
            let mut trial = Reader::default();
            match trial.value::<T>(&Value::Object(obj.clone()), path) {
                Ok(t) => {
                    self.warnings.extend(trial.warnings);
                    for e in dropped {
                        self.leave_out(e);
                    }
                    return Ok(t);
                }
                Err(e) => {
                    let within = if path.is_empty() {
                        e.path.as_str()
                    } else {
                        e.path
                            .strip_prefix(path)
                            .map_or("", |p| p.trim_start_matches('.'))
                    };
                    let field = within.split(['.', '[']).next().unwrap_or("");
                    let removable = !field.is_empty()
                        && !strict.contains(&field)
                        && e.message != "is required"
                        && remove_path(obj, within);
                    if !removable || dropped.len() > 32 {
                        // A required field that was left out for its value: its first error
                        // says more than "is required".
                        let first = dropped.into_iter().find(|d| d.path == e.path);
                        return Err(first.unwrap_or(e));
                    }
                    dropped.push(e);
                }
            }
        }
    }

    /// Reads each item of an array on its own: one that cannot be read (or that `check`
    /// refuses) is left out of the result and of `list`, and noted with its path.
    pub(super) fn items<T: DeserializeOwned>(
        &mut self,
        list: &mut Vec<Value>,
        key: &str,
        mut check: impl FnMut(&T) -> Result<(), ValidationError>,
    ) -> Vec<T> {
        let mut out = Vec::with_capacity(list.len());
        let mut index = 0;
        list.retain_mut(|item| {
            let path = format!("{key}[{index}]");
            index += 1;
            let read = match item {
                Value::Object(o) => self.object::<T>(o, &path, &[]),
                other => Err(ValidationError::new(
                    path.clone(),
                    format!("must be an object, got {}", kind(other)),
                )),
            };
            match read.and_then(|t| {
                check(&t).map_err(|e| ValidationError::new(join(&path, &e.path), e.message))?;
                Ok(t)
            }) {
                Ok(t) => {
                    out.push(t);
                    true
                }
                Err(e) => {
                    self.warnings
                        .push(format!("{path}: left out ({}: {})", e.path, e.message));
                    self.left_out.push(e);
                    false
                }
            }
        });
        out
    }
}

/// Removes the value at a path such as `move_ins.mtd` or `website_url`; false when there is
/// nothing there to remove.
fn remove_path(obj: &mut Map<String, Value>, path: &str) -> bool {
    match path.split_once('.') {
        None => obj.remove(path).is_some(),
        Some((head, rest)) => match obj.get_mut(head) {
            Some(Value::Object(inner)) => remove_path(inner, rest),
            _ => obj.remove(head).is_some(),
        },
    }
}

/// Renders a serde_ignored path (`unit_types.?.0.extra`) in the style of error paths
/// (`unit_types[0].extra`): option markers dropped, indexes in brackets.
fn display_path(raw: &str) -> String {
    let mut out = String::new();
    for seg in raw.split('.').filter(|s| *s != "?" && !s.is_empty()) {
        if seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(seg);
        }
    }
    out
}
