//! A facility's pricing page: the latest recommendation run per size with its factors and
//! guardrails, "run now" and the run history, charts of its daily history (30, 90 or 365
//! days), its competitor rates with an add-rate form, its pricing settings, and the decisions on
//! the latest run (accept, override, reject) with the approved rates and their status. Every
//! figure comes from the `jobs` function of the matching `/api/v1` route (recommendations,
//! recommendation-runs, history, competitor-rates, pricing-settings, decisions, rates).

mod charts;
mod decisions;
mod forms;
mod held_roll;
mod sections;
mod sheet;
mod tables;
use super::extract::{Form, Query};
use charts::*;
use decisions::*;
use domain::ids::FacilityId;
use forms::*;
pub use held_roll::confirm_roll;
use sections::{Page, Tables};
use tables::*;

use super::chart::{self, Chart, Kind, Series, Table};
use super::figures::{cells, Figures, Measure};
use super::page::{self, Messages, Nav, PageResult};
use super::session::SignedIn;
use super::{form_error, form_json, require_access, through_api, Notice};
use crate::error::ApiError;
use crate::extract::path_id;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use chrono::{NaiveDate, Utc};
use domain::pricing::engine::Recommendation;
use domain::pricing::settings::{Range, RANGES};
use domain::pricing::PricingSettings;
use jobs::competitors;
use jobs::pricing::history::{self, History};
use jobs::sessions::Session;
use maud::{html, Markup};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use uuid::Uuid;

/// The chart ranges offered, in days.
pub const RANGES_DAYS: [i64; 3] = [30, 90, 365];
/// Runs shown in the history.
const RUNS_SHOWN: i64 = 20;
/// Competitor rates listed.
const RATES_SHOWN: i64 = 200;

#[derive(Deserialize)]
pub struct PageQuery {
    days: Option<i64>,
    csv: Option<String>,
    notice: Option<String>,
}

/// A refused form shown again: the values typed and the message at its field.
#[derive(Default)]
struct Refused {
    form: &'static str,
    values: BTreeMap<String, String>,
    field: Option<String>,
    message: String,
}

impl Refused {
    fn new(form: &'static str, values: BTreeMap<String, String>, message: String) -> Self {
        // A validation message reads "<path>: <what is wrong>"; the path names the field.
        let field = message.split_once(": ").map(|(path, _)| {
            path.trim_start_matches("settings.")
                .trim_start_matches("competitor_rates[0].")
                .to_owned()
        });
        Self {
            form,
            values,
            field,
            message,
        }
    }

    fn at(&self, form: &str, field: &str) -> Option<&str> {
        (self.form == form && self.field.as_deref() == Some(field)).then_some(self.message.as_str())
    }
}

async fn load(
    state: &AppState,
    s: &Session,
    id: FacilityId,
    days: i64,
) -> Result<jobs::pricing::Overview, ApiError> {
    Ok(jobs::pricing::overview(
        &state.db,
        s.company_id,
        id,
        days,
        RUNS_SHOWN,
        RATES_SHOWN,
        Utc::now().date_naive(),
    )
    .await?)
}

pub async fn show(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
    Query(q): Query<PageQuery>,
) -> PageResult {
    let id = path_id(&id, "facility")?;
    let notice = Notice { notice: q.notice }.text();
    render(&state, &s, id, q.days, q.csv.as_deref(), notice, None).await
}

fn days_of(days: Option<i64>) -> i64 {
    days.filter(|d| RANGES_DAYS.contains(d)).unwrap_or(90)
}

/// The page, or one of its tables as CSV when `csv` names it; a refused form is shown again
/// with its values and message (and a 422).
async fn render(
    state: &AppState,
    s: &Session,
    id: FacilityId,
    days: Option<i64>,
    csv: Option<&str>,
    notice: Option<&'static str>,
    refused: Option<Refused>,
) -> PageResult {
    let days = days_of(days);
    let l = load(state, s, id, days).await?;
    let query = format!("days={days}");
    let recs: Vec<Recommendation> = l
        .latest
        .as_ref()
        .and_then(|r| serde_json::from_value(r.recommendations.clone()).ok())
        .unwrap_or_default();
    let fig = Figures::new(s.currency);
    let charts = charts(&fig, &l.history, days);
    let tables = Tables::new(&fig, &l, &recs, &charts);
    if let Some(r) = chart::export(&tables.all(), csv, &format!("facility-{id}")) {
        return Ok(r);
    }
    let refused = refused.unwrap_or_default();
    let roll = jobs::rent_roll::state(&state.db, s.company_id, id).await?;
    let body = Page {
        s,
        id,
        l: &l,
        fig: &fig,
        recs: &recs,
        days,
        charts: &charts,
        t: &tables,
        query: &query,
        refused: &refused,
    }
    .body();
    let body = html! { (held_roll::notice(s, id, roll.held.as_ref())) (body) };
    let status = if refused.form.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    let messages = if refused.form.is_empty() {
        Messages::notice(notice)
    } else {
        Messages::error(refused.message.clone())
    };
    Ok(page::render_status(
        status,
        page::frame(s, Nav::Facilities, &l.facility.name, &messages, body),
    ))
}

pub async fn run_now(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path(id): Path<String>,
) -> PageResult {
    let id = path_id(&id, "facility")?;
    require_access(&s)?;
    match jobs::pricing::run_now(&state.db, &acting.who, id).await {
        Ok(done) => state.finish(done).await,
        Err(jobs::Error::Invalid(v)) => {
            let r = Refused::new("run", BTreeMap::new(), v.to_string());
            return render(&state, &s, id, None, None, None, Some(r)).await;
        }
        Err(e) => return Err(e.into()),
    };
    Ok(Redirect::to(&format!("/app/facilities/{id}?notice=run")).into_response())
}

pub async fn add_rate(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path(id): Path<String>,
    Form(values): Form<BTreeMap<String, String>>,
) -> PageResult {
    let id = path_id(&id, "facility")?;
    require_access(&s)?;
    let body = form_json(&values, &["rate"], false);
    let today = Utc::now().date_naive();
    match competitors::add(&state.db, &acting.who, id, &body, today).await {
        Ok(done) => {
            state.finish(done).await;
        }
        Err(jobs::Error::Invalid(e)) => {
            let r = Refused::new("rate", values, e.to_string());
            return render(&state, &s, id, None, None, None, Some(r)).await;
        }
        Err(e) => return Err(e.into()),
    }
    Ok(Redirect::to(&format!("/app/facilities/{id}?notice=rate#rates-h")).into_response())
}

pub async fn save_settings(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path(id): Path<String>,
    Form(values): Form<BTreeMap<String, String>>,
) -> PageResult {
    let id = path_id(&id, "facility")?;
    require_access(&s)?;
    let body = overrides_of(&values).to_string();
    match jobs::pricing::set_settings(&state.db, &acting.who, id, body.as_bytes()).await {
        Ok(done) => {
            state.finish(done).await;
            Ok(
                Redirect::to(&format!("/app/facilities/{id}?notice=settings#settings-h"))
                    .into_response(),
            )
        }
        Err(jobs::Error::Invalid(v)) => {
            let r = Refused::new("settings", values, v.to_string());
            render(&state, &s, id, None, None, None, Some(r)).await
        }
        Err(e) => Err(e.into()),
    }
}

/// A decision of a sheet row, or "bulk accept" of the ticked rows, through the API's parser
/// and use case (`POST /api/v1/facilities/:id/recommendation-runs/:run_id/decisions`); a
/// refusal is shown at its row in words a person acts on.
pub async fn decide(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path(id): Path<String>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> PageResult {
    let id = path_id(&id, "facility")?;
    require_access(&s)?;
    let mut values: BTreeMap<String, String> =
        pairs.iter().filter(|(k, _)| k != "pick").cloned().collect();
    let run_id: domain::ids::RunId = path_id(
        values.get("run_id").map_or("", |r| r.as_str()),
        "recommendation run",
    )?;
    let bulk = values.contains_key("bulk");
    let units: Vec<(String, String)> = if bulk {
        pairs
            .iter()
            .filter(|(k, _)| k == "pick")
            .filter_map(|(_, v)| v.split_once('|'))
            .map(|(size, tier)| (size.to_owned(), tier.to_owned()))
            .collect()
    } else {
        let field = |k: &str| values.get(k).cloned().unwrap_or_default();
        vec![(field("size"), field("tier"))]
    };
    let form = if bulk { "bulk" } else { "decision" };
    if bulk {
        for (size, tier) in &units {
            values.insert(
                format!("pick:{}", sheet::pick_value(size, tier)),
                "on".into(),
            );
        }
    }
    if bulk && units.is_empty() {
        let r = Refused {
            form,
            values,
            field: None,
            message: "Tick the rows to accept first: nothing was stored.".to_owned(),
        };
        return render(&state, &s, id, None, None, None, Some(r)).await;
    }
    let body = if bulk {
        bulk_body(&units)
    } else {
        decision_body(&values)
    };
    let decided = through_api(&body, |b: crate::requests::RateDecisions| {
        let requested: Vec<jobs::rates::Requested> =
            b.decisions.into_iter().map(Into::into).collect();
        let db = state.db.clone();
        let who = acting.who.clone();
        async move { jobs::rates::decide(&db, &who, id, run_id, &requested).await }
    })
    .await;
    match decided {
        Ok(done) => {
            state.finish(done).await;
            let notice = if bulk { "accepted" } else { "decision" };
            Ok(
                Redirect::to(&format!("/app/facilities/{id}?notice={notice}#decisions-h"))
                    .into_response(),
            )
        }
        Err(e) => {
            let message = form_error(e)?;
            let r = refusal(&state, &s, id, form, values, &units, &message).await?;
            render(&state, &s, id, None, None, None, Some(r)).await
        }
    }
}

/// A refused decision in words: the unit type named, a guardrail's bounds in money and the
/// "apply anyway" box to tick, a run replaced meanwhile said as such.
async fn refusal(
    state: &AppState,
    s: &Session,
    id: FacilityId,
    form: &'static str,
    values: BTreeMap<String, String>,
    units: &[(String, String)],
    message: &str,
) -> Result<Refused, page::PageError> {
    if message.contains("is not the facility's latest run") {
        return Ok(Refused {
            form,
            values,
            field: None,
            message: "A newer run has replaced the one this page showed: the sheet now shows the latest run; decide on it again.".to_owned(),
        });
    }
    let run = jobs::pricing::latest_run(&state.db, s.company_id, id).await?;
    let recs: Vec<Recommendation> = run
        .as_ref()
        .and_then(|r| serde_json::from_value(r.recommendations.clone()).ok())
        .unwrap_or_default();
    let settings: PricingSettings = run
        .as_ref()
        .and_then(|r| serde_json::from_value(r.settings.clone()).ok())
        .unwrap_or_default();
    let rate = values
        .get("rate")
        .and_then(|r| r.trim().parse::<f64>().ok());
    let broken = |i: usize| {
        let rec = units
            .get(i)
            .and_then(|(size, tier)| recs.iter().find(|r| &r.size == size && &r.tier == tier));
        match (rec, rate) {
            (Some(rec), Some(rate)) => {
                domain::pricing::decisions::broken_guardrails(rate, rec, &settings)
            }
            _ => Vec::new(),
        }
    };
    let (message, field) = speak(message, units, &Figures::new(s.currency), broken);
    Ok(Refused {
        form,
        values,
        field,
        message,
    })
}

/// The approved rates waiting for a snapshot, as the CSV of `GET .../rates.csv`.
pub async fn rates_csv(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
) -> PageResult {
    let id = path_id(&id, "facility")?;
    let rates = jobs::rates::rates(&state.db, s.company_id, id).await?;
    Ok(crate::csv_export::pending_rates(&rates))
}

/// The facility page's address, for links from other pages.
pub fn href(id: Uuid) -> String {
    format!("/app/facilities/{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_sends_only_what_differs_from_the_default() {
        let mut v = BTreeMap::new();
        v.insert("max_step_pct".to_owned(), "8".to_owned());
        v.insert("cooldown_days".to_owned(), "14".to_owned());
        v.insert("min_change_pct".to_owned(), "lots".to_owned());
        v.insert("round_to_whole".to_owned(), "true".to_owned());
        assert_eq!(
            overrides_of(&v),
            serde_json::json!({ "cooldown_days": 14, "min_change_pct": "lots" })
        );
        v.remove("round_to_whole");
        assert_eq!(overrides_of(&v)["round_to_whole"], false);
    }

    #[test]
    fn a_message_names_its_field() {
        let r = Refused::new(
            "settings",
            BTreeMap::new(),
            "settings.max_step_pct: must be between 0 and 50".into(),
        );
        assert_eq!(
            r.at("settings", "max_step_pct"),
            Some("settings.max_step_pct: must be between 0 and 50")
        );
        assert_eq!(r.at("rate", "max_step_pct"), None);
        assert_eq!(label_of("max_step_pct"), "Max step (%)");
    }
}
