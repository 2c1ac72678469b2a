//! Competitor rates added through the API or an upload, checked whole before anything is stored.

use crate::sync::payload::{SnapshotDate, EARLIEST_DATE, MAX_ITEMS};
use crate::validation::ValidationError;
use crate::values::{HttpUrl, Money, Text, UnitSize};
use chrono::NaiveDate;
use serde::Deserialize;

/// One competitor price, as posted (the interface's competitor rate record plus the day it was
/// seen, today when absent).
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[schema(as = CompetitorRateInput)]
pub struct NewRate {
    /// The competitor's name.
    pub competitor: Text<200>,
    /// Unit size of the rate.
    pub size: UnitSize,
    /// The competitor's street rate, currency per month.
    pub rate: Money,
    /// Optional: the unit tier the rate is for (climate controlled, drive-up...), when the
    /// source knows it: 1 to 100 characters, trimmed; empty or null when unknown. Compared
    /// case-insensitively with the facility's tiers.
    #[serde(default)]
    #[schema(max_length = 100)]
    pub tier: Option<String>,
    /// The competitor's promotion as text; null when there is none (`false` is none, `true` a
    /// promotion of unknown terms).
    pub promo: Option<Text<500>>,
    /// Where the rate was seen.
    pub source_url: Option<HttpUrl>,
    /// The day the rate was seen (today when absent; not after tomorrow).
    pub observed_on: Option<SnapshotDate>,
}

/// A checked rate, ready to store.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    pub competitor: String,
    pub size: String,
    pub rate: f64,
    /// The tier the rate is for, trimmed; `None` when unknown.
    pub tier: Option<String>,
    pub promo: Option<String>,
    pub source_url: Option<String>,
    pub observed_on: NaiveDate,
}

impl NewRate {
    /// Checks what the types cannot: a positive rate and a date not in the future.
    pub fn check(self, today: NaiveDate) -> std::result::Result<Checked, (String, String)> {
        let observed_on = self.observed_on.map_or(today, |d| d.0);
        if observed_on > today.succ_opt().unwrap_or(today) {
            return Err((
                "observed_on".into(),
                "must not be later than tomorrow".into(),
            ));
        }
        if observed_on < EARLIEST_DATE {
            return Err(("observed_on".into(), "must not be before 2000-01-01".into()));
        }
        if self.rate.get() <= 0.0 {
            return Err(("rate".into(), "must be greater than 0".into()));
        }
        // Blank is unknown, as a unit type's tier is; otherwise checked as a unit type's.
        let tier = match self.tier.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(t) => Some(Text::<100>::parse(t).map_err(|m| ("tier".to_owned(), m))?),
        };
        let competitor = self.competitor.as_str().trim().to_owned();
        if competitor.is_empty() {
            return Err(("competitor".into(), "must not be empty".into()));
        }
        Ok(Checked {
            competitor,
            size: self.size.to_string(),
            rate: self.rate.get(),
            tier: tier.map(Text::into_string),
            promo: self
                .promo
                .map(|p| p.as_str().trim().to_owned())
                .filter(|p| !p.is_empty()),
            source_url: self.source_url.map(|u| u.as_str().to_owned()),
            observed_on,
        })
    }
}

/// The shapes a `POST .../competitor-rates` body may take.
#[derive(Deserialize)]
#[serde(untagged)]
enum Body {
    Wrapped {
        competitor_rates: Vec<serde_json::Value>,
    },
    List(Vec<serde_json::Value>),
}

/// Parses and checks a `POST .../competitor-rates` body: `{"competitor_rates": [...]}`, a bare
/// array of rates, or a single rate object, with at most [`MAX_ITEMS`] rates. The first bad rate
/// is reported with its path (`competitor_rates[i].field` for the wrapped form, `[i].field` for
/// an array, `field` for a single rate).
pub fn parse_body(
    body: &[u8],
    today: NaiveDate,
) -> std::result::Result<Vec<Checked>, ValidationError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ValidationError::new(
            "body",
            "must be a JSON object or array, got an empty body",
        ));
    }
    crate::validation::require_depth(body)?;
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| ValidationError::new("body", format!("is not valid JSON: {e}")))?;
    let single = value.get("competitor").is_some() || value.get("competitor_rates").is_none();
    let (items, prefix) = match (&value, single) {
        (serde_json::Value::Object(_), true) => (vec![value], None),
        _ => match serde_json::from_value::<Body>(value) {
            Ok(Body::Wrapped { competitor_rates }) => (competitor_rates, Some("competitor_rates")),
            Ok(Body::List(items)) => (items, Some("")),
            Err(_) => {
                return Err(ValidationError::new(
                    "body",
                    "must be a rate, an array of rates or {\"competitor_rates\": [...]}",
                ))
            }
        },
    };
    let at = |i: usize| match prefix {
        None => String::new(),
        Some(p) => format!("{p}[{i}]"),
    };
    let name = prefix.filter(|p| !p.is_empty()).unwrap_or("body");
    if items.is_empty() {
        return Err(ValidationError::new(name, "must not be empty"));
    }
    if items.len() > MAX_ITEMS {
        return Err(ValidationError::new(
            name,
            format!("must have at most {MAX_ITEMS} items"),
        ));
    }
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let path = at(i);
            let field = |f: &str| {
                if path.is_empty() {
                    f.to_owned()
                } else {
                    format!("{path}.{f}")
                }
            };
            let rate: NewRate = serde_path_to_error::deserialize(&item).map_err(|e| {
                let v = ValidationError::from_serde(e);
                if v.path == "body" {
                    let whole = if path.is_empty() {
                        "body"
                    } else {
                        path.as_str()
                    };
                    ValidationError::new(whole, "must be a rate object")
                } else {
                    ValidationError::new(field(&v.path), v.message)
                }
            })?;
            rate.check(today)
                .map_err(|(f, m)| ValidationError::new(field(&f), m))
        })
        .collect()
}
