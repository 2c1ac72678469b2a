//! A facility's pricing page: the latest recommendation run per size with its factors and
//! guardrails, "run now" and the run history, charts of its daily history (30, 90 or 365
//! days), its competitor rates with an add-rate form, and its pricing settings. Every figure
//! comes from the `jobs` function of the matching `/api/v1` route (recommendations,
//! recommendation-runs, history, competitor-rates, pricing-settings).

use super::chart::{self, num, opt, Chart, Kind, Series, Table};
use super::page::{self, Messages, Nav, PageResult};
use super::session::SignedIn;
use super::{form_json, require_access, Notice};
use crate::error::ApiError;
use crate::extract::path_id;
use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum::Form;
use chrono::{NaiveDate, Utc};
use domain::pricing::engine::Recommendation;
use domain::pricing::settings::{Range, RANGES};
use domain::pricing::PricingSettings;
use jobs::competitors::{self, ListQuery};
use jobs::pricing::history::{self, History};
use jobs::pricing::store::{self, Trigger};
use jobs::web_sessions::Session;
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

/// Everything the page shows, read through the API's `jobs` functions.
struct Loaded {
    name: String,
    latest: Option<store::Run>,
    runs: Vec<store::RunSummary>,
    history: History,
    rates: competitors::Listing,
    settings: PricingSettings,
}

async fn load(state: &AppState, s: &Session, id: Uuid, days: i64) -> Result<Loaded, ApiError> {
    let f = jobs::facilities::get(&state.db, s.company_id, id).await?;
    let mut conn = state.db.acquire().await.map_err(jobs::Error::from)?;
    let latest = store::latest(&mut conn, s.company_id, id).await?;
    let runs = store::list_runs(&mut conn, s.company_id, id, RUNS_SHOWN, None).await?;
    let history = history::load(&mut conn, s.company_id, id, days).await?;
    let rates = competitors::list(
        &mut conn,
        s.company_id,
        id,
        &ListQuery {
            size: None,
            since: None,
            limit: RATES_SHOWN,
        },
        Utc::now().date_naive(),
    )
    .await?;
    let (settings, _) = store::settings_of(&mut conn, s.company_id, id).await?;
    Ok(Loaded {
        name: f.name,
        latest,
        runs,
        history,
        rates,
        settings,
    })
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

async fn render(
    state: &AppState,
    s: &Session,
    id: Uuid,
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
    let (rec_table, factor_table, guard_table) = recommendation_tables(&recs);
    let runs_table = runs_table(&l.runs);
    let charts = charts(&l.history, days);
    let chart_tables: Vec<Table> = charts
        .iter()
        .map(|c| c.table(format!("{}-table", c.id)))
        .collect();
    let rates_table = rates_table(&l.rates);
    let bands_table = bands_table(&l.rates);
    let mut tables: Vec<&Table> = vec![
        &rec_table,
        &factor_table,
        &guard_table,
        &runs_table,
        &rates_table,
        &bands_table,
    ];
    tables.extend(chart_tables.iter());
    if let Some(r) = chart::export(&tables, csv, &format!("facility-{id}")) {
        return Ok(r);
    }
    let refused = refused.unwrap_or_default();
    let action = |p: &str| format!("/app/facilities/{id}/{p}");
    let body = html! {
        p class="muted" {
            a href="/app/facilities" { "All facilities" } " · "
            @if let Some(to) = l.history.to { "Latest data " (to) } @else { "No data yet" }
            @if let Some(run) = &l.latest { " · mode " (run.mode.replace('_', "-")) }
        }
        section aria-labelledby="recs-h" {
            h2 id="recs-h" { "Latest recommendations" }
            div class="actions" {
                form method="post" action=(action("run")) {
                    (page::csrf(s))
                    button type="submit" id="run-now" { "Run now" }
                }
                @if let Some(run) = &l.latest {
                    span class="muted" id="latest-run" {
                        "Run " (page::when(Some(run.generated_at))) " (" (run.trigger) ") on the data of " (run.snapshot_date)
                    }
                }
            }
            @if l.latest.is_none() {
                p class="muted" { "No recommendation run yet: run the engine now." }
            } @else {
                (rec_table.render(&query))
                h3 { "Why: each factor's share of the change" }
                (factor_table.render(&query))
                h3 { "Guardrails that bound a recommendation" }
                @if guard_table.rows.is_empty() {
                    p class="muted" { "No guardrail changed a recommendation of this run." }
                }
                (guard_table.render(&query))
            }
            h3 { "Run history" }
            (runs_table.render(&query))
        }
        section aria-labelledby="charts-h" {
            h2 id="charts-h" { "History" }
            nav class="range" aria-label="Chart range" {
                @for d in RANGES_DAYS {
                    @if d == days {
                        a href={"?days=" (d)} aria-current="true" { (d) " days" }
                    } @else {
                        a href={"?days=" (d)} { (d) " days" }
                    }
                }
            }
            @for (c, t) in charts.iter().zip(&chart_tables) {
                (chart::with_table(c, t, &query))
            }
        }
        section aria-labelledby="rates-h" {
            h2 id="rates-h" { "Competitor rates" }
            p class="muted" { "Stale: older than " (l.settings.competitor_stale_after_days) " days (the facility's setting); the engine gives a stale rate less weight." }
            (bands_table.render(&query))
            (rates_table.render(&query))
            (rate_form(s, &action("competitor-rates"), &refused))
        }
        section aria-labelledby="settings-h" {
            h2 id="settings-h" { "Pricing settings" }
            (settings_form(s, &action("settings"), &l.settings, &refused))
        }
    };
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
        page::frame(s, Nav::Facilities, &l.name, &messages, body),
    ))
}

fn action_word(a: domain::pricing::engine::Action) -> &'static str {
    match a {
        domain::pricing::engine::Action::Raise => "raise",
        domain::pricing::engine::Action::Hold => "hold",
        domain::pricing::engine::Action::Lower => "lower",
    }
}

fn recommendation_tables(recs: &[Recommendation]) -> (Table, Table, Table) {
    let mut r = Table::new(
        "recommendations",
        "One row per unit type of the latest run",
        &[
            "Size",
            "Tier",
            "Current",
            "Recommended",
            "Change",
            "Change %",
            "Action",
            "Confidence",
            "Occupancy %",
            "Competitor P25 / median / P75",
        ],
    );
    let mut f = Table::new(
        "factors",
        "Percentage points of the current rate each factor moved the target by",
        &["Size", "Tier", "Factor", "Contribution (pp)", "Explanation"],
    );
    let mut g = Table::new(
        "guardrails",
        "The rate before and after each guardrail that changed it",
        &["Size", "Tier", "Guardrail", "Before", "After", "Why"],
    );
    for rec in recs {
        r.row(vec![
            rec.size.clone(),
            rec.tier.clone(),
            num(rec.current_rate),
            num(rec.recommended_rate),
            num(rec.change_amount),
            num(rec.change_pct),
            action_word(rec.action).to_owned(),
            num(rec.confidence),
            opt(rec.occupancy_pct),
            rec.competitor_band
                .as_ref()
                .map(|b| format!("{} / {} / {}", num(b.p25), num(b.median), num(b.p75)))
                .unwrap_or_else(|| "no competitors".to_owned()),
        ]);
        for x in &rec.factors {
            f.row(vec![
                rec.size.clone(),
                rec.tier.clone(),
                x.name.replace('_', " "),
                num(x.contribution_pct),
                x.detail.clone(),
            ]);
        }
        for x in &rec.guardrails {
            g.row(vec![
                rec.size.clone(),
                rec.tier.clone(),
                x.name.replace('_', " "),
                num(x.before),
                num(x.after),
                x.detail.clone(),
            ]);
        }
    }
    (r, f, g)
}

fn runs_table(runs: &[store::RunSummary]) -> Table {
    let mut t = Table::new(
        "runs",
        format!("The latest {RUNS_SHOWN} runs, newest first"),
        &[
            "Generated",
            "Trigger",
            "Data of",
            "Mode",
            "Sizes",
            "Raise",
            "Hold",
            "Lower",
        ],
    );
    for r in runs {
        t.row(vec![
            page::when(Some(r.generated_at)),
            r.trigger.clone(),
            r.snapshot_date.to_string(),
            r.mode.replace('_', "-"),
            r.per_size_count.to_string(),
            r.raise.to_string(),
            r.hold.to_string(),
            r.lower.to_string(),
        ]);
    }
    t
}

fn rates_table(l: &competitors::Listing) -> Table {
    let mut t = Table::new(
        "competitor-rates",
        format!("Observations, newest first (at most {RATES_SHOWN})"),
        &[
            "Competitor",
            "Size",
            "Rate",
            "Promotion",
            "Effective rate",
            "Observed",
            "Age (days)",
            "Fresh",
            "Source",
        ],
    );
    for r in &l.competitor_rates {
        t.row(vec![
            r.competitor.clone(),
            r.size.clone(),
            num(r.rate),
            r.promo.clone().unwrap_or_default(),
            num(r.effective_rate),
            r.observed_on.to_string(),
            r.age_days.to_string(),
            if r.stale { "stale" } else { "fresh" }.to_owned(),
            r.source.clone(),
        ]);
    }
    t
}

fn bands_table(l: &competitors::Listing) -> Table {
    let mut t = Table::new(
        "competitor-bands",
        format!("The band per size as of {}", l.as_of),
        &[
            "Size",
            "P25",
            "Median",
            "P75",
            "Competitors",
            "Stale",
            "Newest",
        ],
    );
    for b in &l.bands {
        t.row(vec![
            b.size.clone(),
            num(b.band.p25),
            num(b.band.median),
            num(b.band.p75),
            b.band.competitors.to_string(),
            b.band.stale.to_string(),
            b.band.newest_observed_on.to_string(),
        ]);
    }
    t
}

/// The charts of the history: occupancy, move-ins against the prorated target, and per size
/// its street rate (each tier) against the competitor band.
fn charts(h: &History, days: i64) -> Vec<Chart> {
    let labels: Vec<String> = h.days.iter().map(|d| d.date.to_string()).collect();
    let index: HashMap<NaiveDate, usize> = h
        .days
        .iter()
        .enumerate()
        .map(|(i, d)| (d.date, i))
        .collect();
    let aligned = |points: &mut dyn Iterator<Item = (NaiveDate, f64)>| {
        let mut v = vec![None; labels.len()];
        for (date, value) in points {
            if let Some(&i) = index.get(&date) {
                v[i] = Some(value);
            }
        }
        v
    };
    let mut out = vec![
        Chart {
            id: "chart-occupancy".into(),
            title: format!("Occupancy, last {days} days"),
            unit: "%".into(),
            labels: labels.clone(),
            series: vec![Series::new(
                "Occupancy",
                Kind::Line,
                h.days.iter().map(|d| d.occupancy_pct).collect(),
            )],
            from_zero: false,
        },
        Chart {
            id: "chart-move-ins".into(),
            title: format!("Move-ins this month against the prorated target, last {days} days"),
            unit: "move-ins".into(),
            labels: labels.clone(),
            series: vec![
                Series::new(
                    "Move-ins month to date",
                    Kind::Line,
                    h.days
                        .iter()
                        .map(|d| d.move_ins_mtd.map(f64::from))
                        .collect(),
                ),
                Series::new(
                    "Target to date",
                    Kind::Dashed,
                    h.days.iter().map(|d| d.move_ins_target_to_date).collect(),
                ),
            ],
            from_zero: true,
        },
    ];
    let mut sizes: Vec<&str> = Vec::new();
    for u in &h.unit_types {
        if !sizes.contains(&u.size.as_str()) {
            sizes.push(&u.size);
        }
    }
    for size in sizes {
        let mut series: Vec<Series> = h
            .unit_types
            .iter()
            .filter(|u| u.size == size)
            .map(|u| {
                Series::new(
                    format!("Street rate {}", u.tier),
                    Kind::Line,
                    aligned(&mut u.points.iter().map(|p| (p.date, p.street_rate))),
                )
            })
            .collect();
        if let Some(band) = h.competitor_bands.iter().find(|b| b.size == size) {
            for (name, pick) in [
                (
                    "Competitor P25",
                    (|p: &history::BandPoint| p.p25) as fn(&_) -> f64,
                ),
                ("Competitor median", |p| p.median),
                ("Competitor P75", |p| p.p75),
            ] {
                series.push(Series::new(
                    name,
                    Kind::Dashed,
                    aligned(&mut band.points.iter().map(|p| (p.date, pick(p)))),
                ));
            }
        }
        out.push(Chart {
            id: format!(
                "chart-rate-{}",
                size.replace(|c: char| !c.is_ascii_alphanumeric(), "-")
            ),
            title: format!("{size}: street rate against the competitor band, last {days} days"),
            unit: "per month".into(),
            labels: labels.clone(),
            series,
            from_zero: false,
        });
    }
    out
}

fn field_error(refused: &Refused, form: &str, field: &str) -> Markup {
    html! {
        @if let Some(m) = refused.at(form, field) {
            span class="field-error" id={"err-" (form) "-" (field)} role="alert" { (m) }
        }
    }
}

/// The fields of the add-rate form: name, label, input type.
const RATE_FIELDS: [(&str, &str, &str); 6] = [
    ("competitor", "Competitor", "text"),
    ("size", "Size (e.g. 10x10)", "text"),
    ("rate", "Rate per month", "text"),
    ("promo", "Promotion (optional)", "text"),
    ("source_url", "Source address (optional)", "url"),
    ("observed_on", "Observed on (default today)", "date"),
];

fn rate_form(s: &Session, action: &str, refused: &Refused) -> Markup {
    let values = if refused.form == "rate" {
        refused.values.clone()
    } else {
        BTreeMap::new()
    };
    html! {
        form class="card stack" id="add-rate" method="post" action=(action) {
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

fn label_of(name: &str) -> String {
    let words = name
        .replace("_pct", " (%)")
        .replace("_pp", " (pp)")
        .replace('_', " ");
    let mut c = words.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

fn value_of(settings: &serde_json::Value, range: &Range) -> String {
    settings[range.name]
        .as_f64()
        .map(|v| {
            if range.whole {
                format!("{v:.0}")
            } else {
                num(v)
            }
        })
        .unwrap_or_default()
}

fn settings_form(
    s: &Session,
    action: &str,
    current: &PricingSettings,
    refused: &Refused,
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
        form class="card" id="settings" method="post" action=(action) {
            p class="muted" { "Each setting shows its default and the range it accepts. A value equal to its default is not stored as an override." }
            (page::csrf(s))
            div class="settings-grid" {
                @for r in &RANGES {
                    label {
                        (label_of(r.name))
                        span class="hint" { "default " (value_of(&defaults, r)) ", " (num(r.min)) " to " (num(r.max)) }
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
            div class="actions" { button type="submit" { "Save settings" } }
        }
    }
}

pub async fn run_now(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
) -> PageResult {
    let id = path_id(&id, "facility")?;
    require_access(&s)?;
    // As `GET /api/v1/facilities/:id/recommendations` does: run, store, then queue the
    // webhook deliveries once committed.
    let mut tx = state.db.begin().await.map_err(jobs::Error::from)?;
    let stored =
        match store::run_and_store(&mut tx, s.company_id, id, Uuid::now_v7(), Trigger::Api).await {
            Ok(stored) => stored,
            Err(jobs::Error::Invalid(v)) => {
                return Ok(page::render_status(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    page::frame(
                        &s,
                        Nav::Facilities,
                        "Cannot run the engine",
                        &Messages::error(v.to_string()),
                        html! { p { a href={"/app/facilities/" (id)} { "Back to the facility" } } },
                    ),
                ))
            }
            Err(e) => return Err(e.into()),
        };
    tx.commit().await.map_err(jobs::Error::from)?;
    state
        .push_after_commit(jobs::queue::Kind::WebhookDelivery, &stored.delivery_jobs)
        .await;
    Ok(Redirect::to(&format!("/app/facilities/{id}?notice=run")).into_response())
}

pub async fn add_rate(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
    Form(values): Form<BTreeMap<String, String>>,
) -> PageResult {
    let id = path_id(&id, "facility")?;
    require_access(&s)?;
    jobs::facilities::ensure_owned(&state.db, s.company_id, id).await?;
    let body = form_json(&values, &["rate"], false);
    let rates = match competitors::parse_body(&body, Utc::now().date_naive()) {
        Ok(rates) => rates,
        Err(e) => {
            let r = Refused::new("rate", values, e.to_string());
            return render(&state, &s, id, None, None, None, Some(r)).await;
        }
    };
    let mut tx = state.db.begin().await.map_err(jobs::Error::from)?;
    competitors::upsert(&mut tx, s.company_id, id, "api", &rates).await?;
    tx.commit().await.map_err(jobs::Error::from)?;
    Ok(Redirect::to(&format!("/app/facilities/{id}?notice=rate#rates-h")).into_response())
}

/// The form as the overrides object of `PUT .../pricing-settings`: only values that differ
/// from the default; a value that is not a number is sent as typed, for the parser to name.
fn overrides_of(values: &BTreeMap<String, String>) -> serde_json::Value {
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

pub async fn save_settings(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
    Form(values): Form<BTreeMap<String, String>>,
) -> PageResult {
    let id = path_id(&id, "facility")?;
    require_access(&s)?;
    let overrides = overrides_of(&values);
    let mut conn = state.db.acquire().await.map_err(jobs::Error::from)?;
    match store::set_overrides(&mut conn, s.company_id, id, &overrides).await {
        Ok(_) => Ok(
            Redirect::to(&format!("/app/facilities/{id}?notice=settings#settings-h"))
                .into_response(),
        ),
        Err(jobs::Error::Invalid(v)) => {
            drop(conn);
            let r = Refused::new("settings", values, v.to_string());
            render(&state, &s, id, None, None, None, Some(r)).await
        }
        Err(e) => Err(e.into()),
    }
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
