//! What a CRM clearly means, made plain before the payload is read:
//!
//! - an empty (or blank) string is an absent field;
//! - a number sent as text (`"129.00"`, `"$129"`, `"91.5%"`, `"1,200"`) is that number, in the
//!   fields that hold numbers;
//! - sizes such as `10'x10'`, `10 X 10`, `10×10` or `10x10 CC` are `10x10`; a unit type's suffix
//!   (`CC`) becomes its tier when it has none (noted), and is otherwise dropped (noted);
//! - a competitor's `promo` sent as a boolean or a number: `false` is no promotion, `true` a
//!   promotion of unknown terms (`"promotion"`), a number its text.
//!
//! Whole numbers sent as `12.0` need nothing here: counts accept them.

use super::Reader;
use serde_json::{Map, Number, Value};

/// Fields that hold numbers, wherever they appear in the payload.
const NUMERIC: [&str; 17] = [
    "occupancy_pct",
    "daily",
    "mtd",
    "target_monthly",
    "street_rate",
    "move_ins_mtd",
    "total_units",
    "occupied_units",
    "depth_pct",
    "rate",
    "avg_rent",
    "tenant_count",
    "months_since_last_increase",
    "original_rent",
    "flagged_count",
    "count",
    "rentable_sqft",
];

/// Arrays whose items carry a `size`.
const SIZED: [&str; 3] = ["unit_types", "competitor_rates", "tenant_rents"];

/// Cleans the payload object in place; `path` is its JSON path ("" at the root).
pub(super) fn clean(obj: &mut Map<String, Value>, path: &str, r: &mut Reader) {
    obj.retain(|_, v| !matches!(v, Value::String(s) if s.trim().is_empty()));
    for (key, value) in obj.iter_mut() {
        let here = super::join(path, key);
        match value {
            Value::String(s) if NUMERIC.contains(&key.as_str()) => {
                if let Some(n) = number(s) {
                    *value = Value::Number(n);
                }
            }
            Value::Object(inner) => clean(inner, &here, r),
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    if let Value::Object(o) = item {
                        let at = format!("{here}[{i}]");
                        clean(o, &at, r);
                        if path.is_empty() && SIZED.contains(&key.as_str()) {
                            sized_item(o, &at, key == "unit_types", r);
                        }
                        if path.is_empty() && key == "competitor_rates" {
                            promo(o);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// `"$1,299.50"`, `" 91.5% "`: the number, when that is all the text says.
fn number(text: &str) -> Option<Number> {
    let t = text.trim();
    let t = t.strip_prefix('$').unwrap_or(t);
    let t = t.strip_suffix('%').unwrap_or(t).trim();
    let t: String = t.chars().filter(|c| *c != ',').collect();
    if t.is_empty()
        || !t
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+'))
    {
        return None;
    }
    let v: f64 = t.parse().ok()?;
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 9.0e15 {
        // Whole numbers stay integers, as a CRM that sent them as numbers would have.
        Some(Number::from(v as i64))
    } else {
        Number::from_f64(v)
    }
}

fn sized_item(o: &mut Map<String, Value>, path: &str, unit_type: bool, r: &mut Reader) {
    let Some(Value::String(raw)) = o.get("size") else {
        return;
    };
    let Some((size, suffix)) = split_size(raw) else {
        return;
    };
    let raw = raw.clone();
    o.insert("size".to_owned(), Value::String(size.clone()));
    if suffix.is_empty() {
        return;
    }
    let at = format!("{path}.size");
    if unit_type && !o.contains_key("tier") {
        o.insert("tier".to_owned(), Value::String(suffix.clone()));
        r.note(
            &at,
            format!("'{raw}' read as size {size} with tier '{suffix}'"),
        );
    } else {
        r.note(
            &at,
            format!("'{raw}' read as size {size}; '{suffix}' ignored"),
        );
    }
}

/// A size's width and depth as `WxD`, and whatever follows the depth (trimmed), when the text
/// starts with a size: `10'x10' CC`, `10 X 10`, `10×10`, `7.5*10 ft`.
pub(super) fn split_size(raw: &str) -> Option<(String, String)> {
    let plain: String = raw
        .chars()
        .filter(|c| !matches!(c, '\'' | '"' | '′' | '″'))
        .map(|c| {
            if matches!(c, '×' | '*' | 'X') {
                'x'
            } else {
                c
            }
        })
        .collect();
    let (w, rest) = plain.split_once('x')?;
    let w = feet(w)?;
    let rest = rest.trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (d, suffix) = rest.split_at(end);
    let d = feet(d)?;
    let suffix = suffix.trim();
    let suffix = suffix
        .strip_prefix("ft")
        .or_else(|| suffix.strip_prefix("feet"))
        .filter(|s| s.is_empty() || s.starts_with(' '))
        .unwrap_or(suffix)
        .trim();
    Some((format!("{w}x{d}"), suffix.to_owned()))
}

/// One side: digits with at most one point, an optional `ft`.
fn feet(side: &str) -> Option<&str> {
    let s = side.trim();
    let s = s.strip_suffix("ft").unwrap_or(s).trim();
    let digits = !s.is_empty()
        && s.chars().all(|c| c.is_ascii_digit() || c == '.')
        && s.matches('.').count() <= 1;
    digits.then_some(s)
}

fn promo(o: &mut Map<String, Value>) {
    let replaced = match o.get("promo") {
        Some(Value::Bool(false)) => Value::Null,
        Some(Value::Bool(true)) => Value::String("promotion".to_owned()),
        Some(Value::Number(n)) => Value::String(n.to_string()),
        _ => return,
    };
    o.insert("promo".to_owned(), replaced);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_as_crms_write_them() {
        let cases = [
            ("10x10", ("10x10", "")),
            ("10'x10'", ("10x10", "")),
            ("10 X 10", ("10x10", "")),
            ("10×15", ("10x15", "")),
            ("7.5*10 ft", ("7.5x10", "")),
            ("10x10 CC", ("10x10", "CC")),
            ("10' x 20' Drive Up", ("10x20", "Drive Up")),
        ];
        for (raw, (size, suffix)) in cases {
            assert_eq!(
                split_size(raw),
                Some((size.to_owned(), suffix.to_owned())),
                "{raw}"
            );
        }
        for raw in ["10", "x10", "10x", "ten by ten", "1.2.3x4"] {
            assert_eq!(split_size(raw), None, "{raw}");
        }
    }

    #[test]
    fn numbers_sent_as_text() {
        assert_eq!(number("129.00"), Some(Number::from(129)));
        assert_eq!(number(" $1,299.50 "), Number::from_f64(1299.5));
        assert_eq!(number("91.5%"), Number::from_f64(91.5));
        for text in ["", "abc", "12 units", "NaN", "inf"] {
            assert_eq!(number(text), None, "{text}");
        }
    }
}
