//! The facility page's forms: add a competitor rate and the pricing settings, with a refused
//! value's message at its field.

use super::*;

pub(super) fn field_error(refused: &Refused, form: &str, field: &str) -> Markup {
    html! {
        @if let Some(m) = refused.at(form, field) {
            span class="field-error" id={"err-" (form) "-" (field)} role="alert" { (m) }
        }
    }
}

/// The fields of the add-rate form: name, label, input type.
pub(super) const RATE_FIELDS: [(&str, &str, &str); 6] = [
    ("competitor", "Competitor", "text"),
    ("size", "Size (e.g. 10x10)", "text"),
    ("rate", "Rate per month", "text"),
    ("promo", "Promotion (optional)", "text"),
    ("source_url", "Source address (optional)", "url"),
    ("observed_on", "Observed on (default today)", "date"),
];

pub(super) fn rate_form(s: &Session, action: &str, refused: &Refused) -> Markup {
    let values = if refused.form == "rate" {
        refused.values.clone()
    } else {
        BTreeMap::new()
    };
    html! {
        form class="card stack" id="add-rate" method="post" action=(action) hx-post=(action)
            hx-target="#rates" hx-select="#rates" hx-swap="outerHTML" hx-select-oob="#flash" {
            h3 { "Add a competitor rate" }
            (page::csrf(s))
            @for (name, label, kind) in RATE_FIELDS {
                label { (label)
                    input type=(kind) name=(name) value=[values.get(name)]
                        aria-invalid=[refused.at("rate", name).map(|_| "true")];
                    (field_error(refused, "rate", name))
                }
            }
            div class="actions" { button type="submit" { "Add rate" } }
        }
    }
}

pub(super) fn label_of(name: &str) -> String {
    let words = name
        .replace("_pct", " (%)")
        .replace("_pp", " (pp)")
        .replace('_', " ");
    let mut c = words.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// A setting's value as its input field holds it: a plain number of up to two decimals, no
/// separators, no trailing zeros (what the form parses back).
fn plain(v: f64) -> String {
    let s = format!("{:.2}", (v * 100.0).round() / 100.0);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_owned()
    } else {
        s.to_owned()
    }
}

pub(super) fn value_of(settings: &serde_json::Value, range: &Range) -> String {
    settings[range.name]
        .as_f64()
        .map(|v| {
            if range.whole {
                format!("{v:.0}")
            } else {
                plain(v)
            }
        })
        .unwrap_or_default()
}

pub(super) fn settings_form(
    s: &Session,
    action: &str,
    current: &PricingSettings,
    refused: &Refused,
    editable: bool,
) -> Markup {
    let current_v = serde_json::to_value(current).unwrap_or_default();
    let defaults = serde_json::to_value(PricingSettings::default()).unwrap_or_default();
    let typed = |r: &Range| {
        if refused.form == "settings" {
            refused.values.get(r.name).cloned().unwrap_or_default()
        } else {
            value_of(&current_v, r)
        }
    };
    let round = if refused.form == "settings" {
        refused.values.contains_key("round_to_whole")
    } else {
        current.round_to_whole
    };
    html! {
        form class="card" id="settings" method="post" action=(action) hx-post=(action)
            hx-target="#pricing-settings" hx-select="#pricing-settings" hx-swap="outerHTML" hx-select-oob="#flash" {
            p class="muted" { "Each setting shows its default and the range it accepts. A value equal to its default is not stored as an override." }
            (page::csrf(s))
            // A role that may not change them reads them in the same fields, disabled.
            fieldset class="plain" disabled[!editable] {
            div class="settings-grid" {
                @for r in &RANGES {
                    label {
                        (label_of(r.name))
                        span class="hint" { "default " (value_of(&defaults, r)) ", " (plain(r.min)) " to " (plain(r.max)) }
                        input type="text" inputmode="decimal" name=(r.name) value=(typed(r))
                            aria-invalid=[refused.at("settings", r.name).map(|_| "true")];
                        (field_error(refused, "settings", r.name))
                    }
                }
                label class="check" {
                    @if round { input type="checkbox" name="round_to_whole" value="true" checked; }
                    @else { input type="checkbox" name="round_to_whole" value="true"; }
                    "Round to whole currency units (default yes)"
                }
            }
            }
            @if editable {
                div class="actions" { button type="submit" { "Save settings" } }
            } @else {
                p class="muted" { "Your role (" (s.role.as_str()) ") may not change the settings: a manager, an admin or an owner may." }
            }
        }
    }
}

/// The form as the overrides object of `PUT .../pricing-settings`: only values that differ
/// from the default; a value that is not a number is sent as typed, for the parser to name.
pub(super) fn overrides_of(values: &BTreeMap<String, String>) -> serde_json::Value {
    let defaults = serde_json::to_value(PricingSettings::default()).unwrap_or_default();
    let mut o = serde_json::Map::new();
    for r in &RANGES {
        let Some(v) = values.get(r.name).map(|v| v.trim()) else {
            continue;
        };
        let value = match v.parse::<f64>() {
            Ok(n) if r.whole && n.fract() == 0.0 => serde_json::json!(n as i64),
            Ok(n) => serde_json::json!(n),
            Err(_) => serde_json::json!(v),
        };
        if value.as_f64() != defaults[r.name].as_f64() {
            o.insert(r.name.to_owned(), value);
        }
    }
    let round = values.contains_key("round_to_whole");
    if round != PricingSettings::default().round_to_whole {
        o.insert("round_to_whole".into(), serde_json::json!(round));
    }
    serde_json::Value::Object(o)
}
