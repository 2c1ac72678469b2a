//! The upload page: a facility, the kind (or detect it), the date, and a CSV or JSON file
//! (dropped on the field or chosen). "Check" reads and checks every row and shows the first
//! ones as mapped, writing nothing; "Upload" does the same and then writes, through the use
//! cases behind `POST /api/v1/facilities/:id/upload` (`jobs::upload::{collect, store}`). Any bad row: every one is listed with
//! its line, field and reason, and nothing is written.

use super::figures::Figures;
use super::page::{self, Messages, Nav, PageResult};
use super::require_access;
use super::session::SignedIn;
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Multipart, Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use domain::ids::FacilityId;
use domain::upload::UploadKind;
use jobs::facilities::{self, Facility};
use jobs::sessions::Session;
use jobs::upload::{Collected, Request};
use maud::{html, Markup};

/// Largest file taken through the page (bigger files: the API streams up to 64 MiB).
pub const MAX_FILE_BYTES: usize = 16 * 1024 * 1024;
/// Rows shown in a preview.
const PREVIEW_ROWS: usize = 10;

#[derive(Default)]
struct Choice {
    facility: String,
    kind: String,
    date: String,
}

fn form(s: &Session, items: &[Facility], c: &Choice) -> Markup {
    let kinds = [
        ("", "Detect from the columns"),
        ("unit_rates", "Unit rates"),
        ("competitor_rates", "Competitor rates"),
        ("rent_roll", "Rent roll (every tenant)"),
    ];
    if !super::page::may_post(s, "/app/upload") {
        return super::page::role_note(s, "upload files", "a manager, an admin or an owner");
    }
    html! {
        form class="stack card" method="post" enctype="multipart/form-data"
             action={"/app/upload?csrf=" (s.csrf_token)} {
            label { "Facility"
                select name="facility" required {
                    @for f in items {
                        option value=(f.id) selected[c.facility == f.id.to_string()] { (f.name) }
                    }
                }
            }
            label { "Kind"
                select name="kind" {
                    @for (v, l) in kinds { option value=(v) selected[c.kind == v] { (l) } }
                }
            }
            label { "Date" span class="hint" { "For rows without a date column; leave empty for today." }
                input type="date" name="date" value=(c.date); }
            label class="dropzone" { "CSV or JSON file: drop it here or choose it"
                input type="file" name="file" accept=".csv,.json,text/csv,application/json" required; }
            div class="actions" {
                button type="submit" name="action" value="check" class="secondary" { "Check and preview" }
                button type="submit" name="action" value="upload" { "Upload" }
            }
        }
        p { "Templates: "
            a href="/app/upload/templates/unit_rates" download { "unit rates (CSV)" } " · "
            a href="/app/upload/templates/competitor_rates" download { "competitor rates (CSV)" } " · "
            a href="/app/upload/templates/rent_roll" download { "rent roll (CSV)" }
            ". A rent roll is the whole roll of its date: a tenant missing from it has moved out. Column names may vary (e.g. " em { "rate" } " for street rate); a JSON file is " code { "{\"rows\": [...]}" } "."
        }
    }
}

fn preview(fig: &Figures, c: &Collected) -> Markup {
    html! {
        h2 { "Preview: the first rows as read" }
        div class="table-wrap" {
            @match c.kind {
                UploadKind::UnitRates => {
                    table id="preview" {
                        thead { tr { th { "Line" } th { "Date" } th { "Size" } th { "Tier" } th { "Street rate" } th { "Occupancy" } th { "Move-ins MTD" } th { "Units" } th { "Occupied" } } }
                        tbody {
                            @for r in c.units.values().flatten().take(PREVIEW_ROWS) {
                                tr { td class="num" { (r.line) } td { (r.date.map(|d| d.to_string()).unwrap_or_default()) }
                                     td { (r.size) } td { (r.tier) } td class="num" { (fig.rate(r.street_rate)) }
                                     td class="num" { (fig.pct(r.occupancy_pct)) } td class="num" { (fig.count(r.move_ins_mtd.map(f64::from))) }
                                     td class="num" { (fig.count(r.total_units.map(f64::from))) } td class="num" { (fig.count(r.occupied_units.map(f64::from))) } }
                            }
                        }
                    }
                }
                UploadKind::RentRoll => {
                    table id="preview" {
                        thead { tr { th { "Line" } th { "Roll date" } th { "Tenant" } th { "Size" } th { "Tier" } th { "Rent" } th { "Moved in" } th { "Last increase" } th { "Flags" } } }
                        tbody {
                            @for r in c.rolls.values().flatten().take(PREVIEW_ROWS) {
                                tr { td class="num" { (r.line) } td { (r.date) } td { (r.tenant.tenant_id.as_str()) }
                                     td { (r.tenant.size) } td { (r.tenant.tier_str()) } td class="num" { (fig.rate(r.tenant.rent.get())) }
                                     td { (r.tenant.move_in_date.0) } td { (r.tenant.last_increase_date.map(|d| d.0.to_string()).unwrap_or_default()) }
                                     td { (r.tenant.flags.iter().map(|f| f.as_str()).collect::<Vec<_>>().join(", ")) } }
                            }
                        }
                    }
                }
                UploadKind::CompetitorRates => {
                    table id="preview" {
                        thead { tr { th { "Observed" } th { "Competitor" } th { "Size" } th { "Rate" } th { "Promotion" } th { "Source" } } }
                        tbody {
                            @for r in c.competitors.iter().take(PREVIEW_ROWS) {
                                tr { td { (r.observed_on) } td { (r.competitor) } td { (r.size) } td class="num" { (fig.rate(r.rate)) }
                                     td { (r.promo.as_deref().unwrap_or("")) } td { (r.source_url.as_deref().unwrap_or("")) } }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn rows(n: u64) -> String {
    if n == 1 {
        "1 row".to_owned()
    } else {
        format!("{n} rows")
    }
}

fn bad_rows(c: &Collected) -> Markup {
    html! {
        div class="error" role="alert" id="errors" {
            (c.error_count) " of " (c.rows) " rows are invalid; nothing was written. Correct them and upload the file again."
        }
        div class="table-wrap" {
            table id="bad-rows" {
                thead { tr { th { "Line" } th { "Field" } th { "Problem" } } }
                tbody {
                    @for e in &c.errors {
                        tr { td class="num" { (e.line) } td { (e.field.as_deref().unwrap_or("")) } td { (e.message) } }
                    }
                }
            }
        }
        @if (c.errors.len() as u64) < c.error_count {
            p class="muted" { "The first " (c.errors.len()) " are listed." }
        }
    }
}

async fn render(
    state: &AppState,
    s: &Session,
    status: StatusCode,
    m: &Messages<'_>,
    c: &Choice,
    extra: Markup,
) -> PageResult {
    let items = facilities::list(&state.db, s.company_id, &s.scope).await?;
    // The outcome of a file (its bad lines, or its preview) comes first, the form under it.
    let body = html! {
        (extra)
        @if items.is_empty() {
            p { "Add a facility first: " a href="/app/facilities/new" { "add a facility" } "." }
        } @else {
            (form(s, &items, c))
        }
    };
    Ok(page::render_status(
        status,
        page::frame(s, Nav::Upload, "Upload", m, body),
    ))
}

pub async fn page(State(state): State<AppState>, SignedIn(s): SignedIn) -> PageResult {
    render(
        &state,
        &s,
        StatusCode::OK,
        &Messages::default(),
        &Choice::default(),
        html! {},
    )
    .await
}

pub async fn template(axum::extract::Path(kind): Path<String>) -> Response {
    match UploadKind::parse(&kind) {
        Some(kind) => (
            [
                (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{}.csv\"", kind.as_str()),
                ),
            ],
            domain::upload::template(kind),
        )
            .into_response(),
        None => page::PageError(ApiError::NotFound(format!("no template {kind}"))).into_response(),
    }
}

struct Submitted {
    choice: Choice,
    check_only: bool,
    file_name: String,
    file: Vec<u8>,
}

async fn read_form(mut form: Multipart) -> Result<Submitted, ApiError> {
    let mut out = Submitted {
        choice: Choice::default(),
        check_only: false,
        file_name: String::new(),
        file: Vec::new(),
    };
    let unreadable = |e: axum::extract::multipart::MultipartError| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::PayloadTooLarge(format!(
                "a file on this page may be at most {} MiB; send larger ones through the API",
                MAX_FILE_BYTES / (1024 * 1024)
            ))
        } else {
            ApiError::Invalid(format!("the form could not be read: {e}"))
        }
    };
    while let Some(field) = form.next_field().await.map_err(unreadable)? {
        match field.name().unwrap_or("") {
            "file" => {
                out.file_name = field.file_name().unwrap_or("").to_owned();
                out.file = field.bytes().await.map_err(unreadable)?.to_vec();
            }
            "facility" => out.choice.facility = field.text().await.map_err(unreadable)?,
            "kind" => out.choice.kind = field.text().await.map_err(unreadable)?,
            "date" => out.choice.date = field.text().await.map_err(unreadable)?,
            "action" => out.check_only = field.text().await.map_err(unreadable)? == "check",
            _ => {}
        }
    }
    Ok(out)
}

pub async fn submit(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    form: Multipart,
) -> PageResult {
    require_access(&s)?;
    let sent = match read_form(form).await {
        Ok(sent) => sent,
        Err(e) => return reject(&state, &s, &Choice::default(), e).await,
    };
    if sent.file.is_empty() {
        return reject(
            &state,
            &s,
            &sent.choice,
            ApiError::Invalid("choose a file to upload".into()),
        )
        .await;
    }
    let facility_id = facility_in_scope(&s, &sent.choice)?;
    let request = request_of(&s, facility_id, &sent.choice, &sent.file_name, &sent.file);
    let file = futures::stream::iter([Ok::<_, std::io::Error>(axum::body::Bytes::from(sent.file))]);
    let collected = match jobs::upload::collect(&state.db, &request, file)
        .await
        .map_err(crate::error::upload_refused)
    {
        Ok(c) => c,
        Err(e @ ApiError::NotFound(_)) => return Err(e.into()),
        Err(e) => return reject(&state, &s, &sent.choice, e).await,
    };
    if collected.error_count > 0 {
        return render(
            &state,
            &s,
            StatusCode::UNPROCESSABLE_ENTITY,
            &Messages::default(),
            &sent.choice,
            bad_rows(&collected),
        )
        .await;
    }
    let warnings = collected.warnings.clone();
    let shown = preview(&Figures::new(s.currency), &collected);
    let notice = if sent.check_only {
        format!(
            "{} checked: all good. Nothing was written yet; choose the file again and press Upload.",
            rows(collected.rows)
        )
    } else {
        store(&state, &acting.who, facility_id, collected, &sent.file_name).await?
    };
    let extra = html! {
        @for w in &warnings { p class="banner" { (w) } }
        (shown)
    };
    render(
        &state,
        &s,
        StatusCode::OK,
        &Messages::notice(Some(&notice)),
        &sent.choice,
        extra,
    )
    .await
}

/// The chosen facility, when the member's scope sees it: one outside it is as unknown as
/// another company's.
fn facility_in_scope(s: &Session, c: &Choice) -> Result<FacilityId, page::PageError> {
    c.facility
        .trim()
        .parse::<FacilityId>()
        .ok()
        .filter(|id| s.scope.sees(id.uuid()))
        .ok_or_else(|| ApiError::NotFound(format!("no facility with id {}", c.facility)).into())
}

/// The upload as the API route would take it: JSON when the file's name or its first
/// character says so, else CSV.
fn request_of<'a>(
    s: &Session,
    facility_id: FacilityId,
    c: &'a Choice,
    file_name: &str,
    file: &[u8],
) -> Request<'a> {
    let is_json = file_name.to_ascii_lowercase().ends_with(".json")
        || file.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    Request {
        company_id: s.company_id,
        facility_id,
        kind: Some(c.kind.as_str()).filter(|k| !k.is_empty()),
        date: Some(c.date.as_str()).filter(|d| !d.is_empty()),
        content_type: if is_json {
            "application/json"
        } else {
            "text/csv"
        },
        declared_length: Some(file.len() as u64),
    }
}

/// Writes the checked rows; the notice of what was written: the rows, from which file, and
/// what each rent roll changed.
async fn store(
    state: &AppState,
    who: &jobs::door::Who,
    facility_id: FacilityId,
    collected: Collected,
    file_name: &str,
) -> Result<String, page::PageError> {
    let count = rows(collected.rows);
    let stored = jobs::upload::store(
        &state.db,
        who,
        facility_id,
        collected,
        chrono::Utc::now().date_naive(),
    )
    .await?;
    let stored = state.finish(stored).await;
    Ok(format!(
        "{count} uploaded from {}.{}",
        if file_name.is_empty() {
            "the file"
        } else {
            file_name
        },
        rolls_applied(&stored)
    ))
}

/// Per rent roll stored, its moves and rent changes, or that it was older than the roll in
/// force and so not applied (empty for other kinds).
fn rolls_applied(stored: &jobs::upload::Stored) -> String {
    match stored {
        jobs::upload::Stored::Rolls { days, .. } => days
            .iter()
            .filter_map(|d| d.rent_roll.as_ref().map(|r| (d.date, r)))
            .map(|(date, r)| {
                if r.applied {
                    format!(
                        " Roll of {date}: {} moved in, {} moved out, {} rent changes.",
                        r.moved_in, r.moved_out, r.rent_changed
                    )
                } else {
                    format!(
                        " Roll of {date}: older than the roll in force ({}), not applied.",
                        r.roll_date.map(|d| d.to_string()).unwrap_or_default()
                    )
                }
            })
            .collect::<String>(),
        _ => String::new(),
    }
}

async fn reject(state: &AppState, s: &Session, c: &Choice, e: ApiError) -> PageResult {
    match e {
        ApiError::Invalid(m)
        | ApiError::PayloadTooLarge(m)
        | ApiError::UnsupportedMediaType(m)
        | ApiError::Conflict(m) => {
            render(
                state,
                s,
                StatusCode::UNPROCESSABLE_ENTITY,
                &Messages::error(m),
                c,
                html! {},
            )
            .await
        }
        other => Err(other.into()),
    }
}
