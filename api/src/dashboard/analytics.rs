//! The analytics pages, one per `/api/v1/analytics/*` endpoint, each a chart and tables with
//! the numbers of the same `jobs` report the endpoint answers with (the pages round to two
//! decimals, as the reports do). Parameters are the endpoint's: `facility_id`, `size`
//! (seasonality) and `period` (leads).

mod calibration;
mod ecri;
mod leads;
mod lease_up;
mod revpas;
mod seasonality;
pub use ecri::ecri;
pub use leads::leads;
pub use lease_up::lease_up;
pub(crate) use revpas::rent_estimate;
pub use revpas::revpas;
pub use seasonality::seasonality;

use super::chart::{self, Chart, Kind, Series, Table};
use super::extract::Query;
use super::figures::{cells, Cell, Figures, Measure};
use super::page::{self, Messages, Nav, PageResult};
use super::session::SignedIn;
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::State;
use domain::analytics::AnalyticsSettings;
use domain::values::UnitSize;
use jobs::analytics::reports;
use jobs::sessions::Session;
use maud::{html, Markup};
use serde::{Deserialize, Serialize};

/// The pages: address, title.
const PAGES: [(&str, &str); 5] = [
    ("/app/analytics/ecri", "Rent increases (ECRI)"),
    ("/app/analytics/seasonality", "Seasonality"),
    ("/app/analytics/lease-up", "Lease-up"),
    ("/app/analytics/leads", "Lead funnel"),
    ("/app/analytics/revpas", "RevPAU / RevPAF"),
];

/// Bars a company-wide chart draws at most (the table has every row).
const MAX_BARS: usize = 40;

#[derive(Deserialize)]
pub struct Params {
    facility_id: Option<String>,
    size: Option<String>,
    period: Option<String>,
    csv: Option<String>,
    /// A page of the ECRI report's facilities (its `next_cursor`).
    cursor: Option<String>,
}

impl Params {
    fn facility(&self) -> Result<Option<domain::ids::FacilityId>, ApiError> {
        crate::extract::facility_id_param(
            self.facility_id.as_deref().filter(|s| !s.trim().is_empty()),
        )
    }

    /// The page's own query (without `csv`), for its CSV links.
    fn query(&self) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new());
        for (k, v) in [
            ("facility_id", &self.facility_id),
            ("size", &self.size),
            ("period", &self.period),
            ("cursor", &self.cursor),
        ] {
            if let Some(v) = v.as_deref().filter(|v| !v.trim().is_empty()) {
                q.append_pair(k, v);
            }
        }
        q.finish()
    }
}

/// A serialized enum's name in words (`max_step` reads "max step").
fn word<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
        .unwrap_or_default()
}

fn yes(b: bool) -> Cell {
    Cell::text(if b { "yes" } else { "" })
}

fn sub_nav(current: &str) -> Markup {
    html! {
        nav class="range" aria-label="Analytics" {
            @for (href, title) in PAGES {
                @if href == current { a href=(href) aria-current="page" { (title) } }
                @else { a href=(href) { (title) } }
            }
        }
    }
}

/// The scope form: a facility (or all), and the page's own extra fields.
async fn scope_form(
    state: &AppState,
    s: &Session,
    action: &str,
    chosen: Option<domain::ids::FacilityId>,
    extra: Markup,
) -> Result<Markup, ApiError> {
    let facilities = jobs::facilities::list(&state.db, s.company_id, &s.scope).await?;
    Ok(html! {
        form class="scope actions" method="get" action=(action) {
            label { "Facility"
                select name="facility_id" {
                    option value="" { "All facilities" }
                    @for f in &facilities {
                        @if chosen.is_some_and(|c| c.uuid() == f.id) { option value=(f.id) selected { (f.name) } }
                        @else { option value=(f.id) { (f.name) } }
                    }
                }
            }
            (extra)
            button type="submit" { "Show" }
        }
    })
}

fn frame(s: &Session, title: &str, current: &str, body: Markup) -> PageResult {
    Ok(page::render(page::frame(
        s,
        Nav::Analytics,
        title,
        &Messages::default(),
        html! { (sub_nav(current)) (body) },
    )))
}
