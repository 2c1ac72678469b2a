//! A facility's ECRI pages: the engine's suggestion per tenant with its reasons, the batches
//! (create one from the suggestions, edit its lines, approve it with a notice date, cancel it,
//! download its letters), and what approved batches did (predicted against realized stay).
//! Every action calls the `jobs::ecri_batches` function its `/api/v1` twin calls.

//!
//! `facility` is the facility's page (a work queue: `queue` filters, pages and picks its lines),
//! `batch` one batch's page, `actions` the forms that change a batch (each finishing the use
//! case its `/api/v1` twin calls).

mod actions;
mod batch;
mod batch_lines;
mod facility;
mod queue;

pub use actions::{approve, cancel, create, edit, letters, run_now};
pub use batch::batch;
pub use facility::show;

use super::chart::Table;
use super::figures::{cells, Figures};
use super::page::{self, Messages, Nav, PageResult};
use axum::http::StatusCode;
use jobs::sessions::Session;
use uuid::Uuid;

pub(super) fn notice_text(n: Option<&str>) -> Option<&'static str> {
    Some(match n? {
        "created" => "The draft batch is made: check its lines, then approve it.",
        "edited" => "The batch's lines are saved.",
        "approved" => "Approved: download the letters and send them by the notice date.",
        "cancelled" => "The batch is cancelled.",
        "run" => "A new ECRI run is on its way: reload the page in a moment to see it.",
        _ => return None,
    })
}

pub(super) fn href(facility: Uuid) -> String {
    format!("/app/facilities/{facility}/ecri")
}

pub(super) fn batch_href(facility: Uuid, batch: Uuid) -> String {
    format!("/app/facilities/{facility}/ecri-batches/{batch}")
}

/// The engine's suggestion per tenant (per cohort without a rent roll) with its reasons, as
/// `GET /api/v1/facilities/:id/ecri` answers them.
pub(super) fn suggestions_table(
    fig: &Figures,
    lines: &[jobs::ecri::TenantLine],
    id: &str,
) -> Table {
    let mut t = Table::new(
        id,
        "The engine's suggestion per tenant (per cohort without a rent roll), with why",
        &[
            "Tenant",
            "Size",
            "Tenants",
            "Months unchanged",
            "Rent",
            "New rent",
            "Increase",
            "Increase (%)",
            "Stays 90 days",
            "Expected gain (horizon)",
            "Guardrail",
            "Why",
        ],
    );
    for l in lines {
        let x = &l.suggestion;
        t.row(cells![
            x.tenant_id.clone(),
            l.size.clone(),
            fig.count(f64::from(x.tenant_count.max(1))),
            fig.count(l.months_since_last_increase),
            fig.rate(x.current_rent),
            fig.rate(x.new_rent),
            fig.rate(x.increase),
            fig.pct(x.increase_pct),
            fig.pct(x.stay_probability),
            fig.amount(x.expected_gain),
            x.binding_guardrail
                .map(|g| g.name().replace('_', " "))
                .unwrap_or_default(),
            x.reasons
                .iter()
                .map(|r| r.text_in(fig.currency))
                .collect::<Vec<_>>()
                .join("; "),
        ]);
    }
    t
}

/// A page of this module: the refusal (422) or the notice at its top.
pub(super) fn respond(
    s: &Session,
    title: &str,
    notice: Option<&'static str>,
    error: Option<String>,
    body: maud::Markup,
) -> PageResult {
    let (status, messages) = match error {
        Some(e) => (StatusCode::UNPROCESSABLE_ENTITY, Messages::error(e)),
        None => (StatusCode::OK, Messages::notice(notice)),
    };
    Ok(page::render_status(
        status,
        page::frame(s, Nav::Facilities, title, &messages, body),
    ))
}
