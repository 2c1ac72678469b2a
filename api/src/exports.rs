//! The files a route and a page both answer, written once: an approved ECRI batch's letters
//! and the audit log, as CSV (through the one CSV writer, `csv_export`).

use crate::error::ApiError;
use crate::state::AppState;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use domain::ids::CompanyId;
use jobs::ecri_batches as batches;

/// The header of the letters' CSV: one row per customer. The first fourteen columns are those
/// of a letter of one unit (a customer's units joined by "; " in `tenant_id` and `unit_size`,
/// their rents summed), then the customer's name and mailing address and the units listed.
pub(crate) const LETTER_COLUMNS: [&str; 22] = [
    "tenant_id",
    "customer_id",
    "tenant_count",
    "facility_name",
    "facility_address",
    "unit_size",
    "currency",
    "current_rent",
    "new_rent",
    "increase",
    "increase_pct",
    "notice_date",
    "effective_date",
    "batch_id",
    "customer_name",
    "address_line1",
    "address_line2",
    "city",
    "region",
    "postal_code",
    "unit_count",
    "units",
];

/// The letters of an approved batch as CSV, for a mail merge.
pub(crate) fn letters_csv(l: &batches::Letters) -> Vec<u8> {
    let headers: Vec<String> = LETTER_COLUMNS.iter().map(|c| (*c).to_owned()).collect();
    let date = |d: Option<chrono::NaiveDate>| d.map(|d| d.to_string()).unwrap_or_default();
    let opt = |v: &Option<String>| v.clone().unwrap_or_default();
    let rows = l.letters.iter().map(|t| {
        let join = |f: fn(&batches::LetterUnit) -> String| {
            t.units.iter().map(f).collect::<Vec<_>>().join("; ")
        };
        let m = &t.mailing;
        vec![
            join(|u| u.tenant_id.clone().unwrap_or_default()),
            t.customer_id.clone().unwrap_or_default(),
            t.tenant_count().to_string(),
            l.batch.facility_name.clone(),
            l.facility_address.clone().unwrap_or_default(),
            join(|u| u.size.clone()),
            l.currency.clone(),
            format!("{:.2}", t.current_rent()),
            format!("{:.2}", t.new_rent()),
            format!("{:.2}", t.increase()),
            format!("{:.2}", t.increase_pct()),
            date(l.batch.notice_date),
            date(l.batch.effective_date),
            l.batch.id.to_string(),
            opt(&m.customer_name),
            opt(&m.address_line1),
            opt(&m.address_line2),
            opt(&m.city),
            opt(&m.region),
            opt(&m.postal_code),
            t.units.len().to_string(),
            t.units
                .iter()
                .map(|u| {
                    format!(
                        "{} ({}): {:.2} to {:.2} {}",
                        u.unit_id
                            .clone()
                            .or_else(|| u.tenant_id.clone())
                            .unwrap_or_else(|| "cohort".to_owned()),
                        u.size,
                        u.current_rent,
                        u.new_rent,
                        l.currency
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
        ]
    });
    crate::csv_export::write(&headers, rows)
}

/// The CSV answer of a batch's letters, named by the facility and the notice date.
pub(crate) fn letters(l: &batches::Letters) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{}.csv\"", l.file_stem()),
            ),
            // Lines whose letter is withheld because they would not pass now (the tenant left,
            // was flagged, or its rent changed): how many, and each with its reason.
            (
                header::HeaderName::from_static("x-letters-withheld"),
                l.withheld.len().to_string(),
            ),
        ],
        letters_csv(l),
    )
        .into_response()
}

/// Most rows of one CSV export.
pub(crate) const CSV_MAX_ROWS: usize = 50_000;

/// The log under `filter` as CSV rows, newest first (older than `filter.before_id` when it is
/// set), at most [`CSV_MAX_ROWS`].
pub(crate) async fn audit_log(
    state: &AppState,
    company: CompanyId,
    filter: jobs::audit::Filter,
) -> Result<Response, ApiError> {
    audit_log_rows(state, company, filter, CSV_MAX_ROWS).await
}

/// [`audit_log`] with at most `max_rows` rows.
pub(crate) async fn audit_log_rows(
    state: &AppState,
    company: CompanyId,
    mut filter: jobs::audit::Filter,
    max_rows: usize,
) -> Result<Response, ApiError> {
    let max_rows = max_rows.min(CSV_MAX_ROWS);
    filter.limit = jobs::audit::MAX_PAGE.min(max_rows as i64).max(1);
    let mut rows: Vec<Vec<String>> = Vec::new();
    loop {
        let page = jobs::audit::list(&state.db, company, &filter).await?;
        rows.extend(page.entries.into_iter().map(|e| {
            let json = |v: Option<serde_json::Value>| v.map(|v| v.to_string()).unwrap_or_default();
            vec![
                e.at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                e.actor.label(),
                e.role.unwrap_or_default(),
                e.action,
                e.target.unwrap_or_default(),
                e.facility_id.map(|f| f.to_string()).unwrap_or_default(),
                json(e.before),
                json(e.after),
                e.client_addr.unwrap_or_default(),
                e.via.unwrap_or_default(),
            ]
        }));
        match page.next {
            Some(next) if rows.len() < max_rows => filter.before_id = Some(next),
            _ => break,
        }
    }
    rows.truncate(max_rows);
    let headers: Vec<String> = [
        "Time (UTC)",
        "Actor",
        "Role",
        "Action",
        "Target",
        "Facility id",
        "Before",
        "After",
        "Client address",
        "Via",
    ]
    .iter()
    .map(|h| (*h).to_owned())
    .collect();
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"audit-log.csv\"",
            ),
        ],
        crate::csv_export::write(&headers, rows),
    )
        .into_response())
}
