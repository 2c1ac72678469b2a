//! The forms that change a batch: create one from the suggestions, edit its lines, approve it
//! with a notice date, cancel it; and its letters. Each finishes the use case its `/api/v1`
//! twin calls; a refusal renders the page again with the reason.

use super::batch::batch_page;
use super::batch_href;
use super::batch_lines::{self, LineFilters};
use super::facility::facility_page;
use crate::dashboard::extract::Form;
use crate::dashboard::page::PageResult;
use crate::dashboard::require_access;
use crate::dashboard::session::SignedIn;
use crate::extract::{batch_ids as ids, path_id};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Redirect};
use domain::ids::FacilityId;
use jobs::ecri_batches as batches;
use jobs::sessions::Session;
use std::collections::BTreeMap;
use uuid::Uuid;

/// Creates a draft from one of the page's two forms: the tenants picked in the queue
/// (`selection=1` and a `pick.<tenant id>` per box), or every suggestion, optionally of some
/// sizes (comma-separated).
pub async fn create(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path(id): Path<String>,
    Form(values): Form<BTreeMap<String, String>>,
) -> PageResult {
    let id: FacilityId = path_id(&id, "facility")?;
    require_access(&s)?;
    let sizes: Vec<String> = values
        .get("sizes")
        .map(|v| {
            v.split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let selection = values.contains_key("selection");
    let picked = super::queue::picked(&values);
    let no_filters = super::queue::Filters::default();
    if selection && picked.is_empty() {
        let msg = "Pick at least one tenant in the list to draft a batch of them.".to_owned();
        return facility_page(&state, &s, id, (None, &no_filters), None, Some(msg)).await;
    }
    let filter = if selection {
        batches::NewBatch {
            sizes: None,
            tenant_ids: Some(picked),
        }
    } else {
        batches::NewBatch {
            sizes: (!sizes.is_empty()).then_some(sizes),
            tenant_ids: None,
        }
    };
    match batches::create(&state.db, &acting.who, id, &filter).await {
        Ok(done) => {
            let b = state.finish(done).await;
            Ok(
                Redirect::to(&format!("{}?notice=created", batch_href(id.uuid(), b.id)))
                    .into_response(),
            )
        }
        Err(e @ (jobs::Error::Invalid(_) | jobs::Error::Conflict(_))) => {
            facility_page(
                &state,
                &s,
                id,
                (None, &no_filters),
                None,
                Some(e.to_string()),
            )
            .await
        }
        Err(e) => Err(e.into()),
    }
}

/// Asks for a new ECRI run of the facility (the page's "Run now").
pub async fn run_now(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path(id): Path<String>,
) -> PageResult {
    let id: FacilityId = path_id(&id, "facility")?;
    require_access(&s)?;
    let done = jobs::ecri::runs::run_now(&state.db, &acting.who, id).await?;
    state.finish(done).await;
    let to = format!("{}?notice=run", super::href(id.uuid()));
    Ok(Redirect::to(&to).into_response())
}

/// The end of a form that changes a batch: its jobs pushed and the batch's page with `notice`,
/// or the page again with the refusal.
async fn finished<T>(
    state: &AppState,
    s: &Session,
    id: FacilityId,
    bid: Uuid,
    done: jobs::Result<jobs::door::Committed<T>>,
    notice: &str,
) -> PageResult {
    match done {
        Ok(done) => {
            state.finish(done).await;
            let to = format!("{}?notice={notice}", batch_href(id.uuid(), bid));
            Ok(Redirect::to(&to).into_response())
        }
        Err(e) => refused(state, s, id, bid, e).await,
    }
}

/// The page again with the refusal, or the refusal itself when it is not the form's.
async fn refused(
    state: &AppState,
    s: &Session,
    id: FacilityId,
    bid: Uuid,
    e: jobs::Error,
) -> PageResult {
    match e {
        jobs::Error::Invalid(_) | jobs::Error::Conflict(_) => {
            batch_page(
                state,
                s,
                (id, bid),
                (None, &LineFilters::default()),
                None,
                Some(e.to_string()),
            )
            .await
        }
        e => Err(e.into()),
    }
}

/// Saves the lines' form: a rent that differs from the line's, a line kept or left out; only
/// the lines the form showed.
pub async fn edit(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path((id, bid)): Path<(String, String)>,
    Form(values): Form<BTreeMap<String, String>>,
) -> PageResult {
    let (id, bid) = ids(&id, &bid)?;
    require_access(&s)?;
    let b = batches::get(&state.db, s.company_id, id, bid).await?;
    // The form shows one page of the lines and names them; a line it did not show is not read.
    let shown = batch_lines::shown(&values);
    let mut edits = Vec::new();
    for l in b
        .lines
        .iter()
        .filter(|l| shown.as_ref().is_none_or(|n| n.contains(&l.line)))
    {
        let typed = values.get(&format!("rent_{}", l.line)).map(|v| {
            v.trim()
                .trim_start_matches(['$', '€', '£'])
                .replace(',', "")
        });
        let new_rent = match typed.as_deref() {
            None | Some("") => None,
            Some(v) => match v.parse::<f64>() {
                Ok(r) if (r - l.new_rent).abs() >= 0.005 => Some(r),
                Ok(_) => None,
                Err(_) => {
                    let msg = format!("line {}: '{v}' is not an amount", l.line);
                    return batch_page(
                        &state,
                        &s,
                        (id, bid),
                        (None, &LineFilters::default()),
                        None,
                        Some(msg),
                    )
                    .await;
                }
            },
        };
        let excluded = !values.contains_key(&format!("keep_{}", l.line));
        let excluded = (excluded != l.excluded).then_some(excluded);
        if new_rent.is_some() || excluded.is_some() {
            edits.push(batches::LineEdit {
                line: l.line,
                // A line left out keeps its rent; only a kept line's rent is checked.
                new_rent: new_rent.filter(|_| excluded != Some(true)),
                excluded,
            });
        }
    }
    let edits: Vec<_> = edits
        .into_iter()
        .filter(|e| e.new_rent.is_some() || e.excluded.is_some())
        .collect();
    if edits.is_empty() {
        return Ok(Redirect::to(&batch_href(id.uuid(), bid)).into_response());
    }
    let done = batches::edit(&state.db, &acting.who, id, bid, &edits).await;
    finished(&state, &s, id, bid, done, "edited").await
}

/// Approves with the form's notice date (today when empty).
pub async fn approve(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path((id, bid)): Path<(String, String)>,
    Form(values): Form<BTreeMap<String, String>>,
) -> PageResult {
    let (id, bid) = ids(&id, &bid)?;
    require_access(&s)?;
    let notice = match values.get("notice_date").map(|v| v.trim()) {
        None | Some("") => None,
        Some(v) => match v.parse() {
            Ok(d) => Some(d),
            Err(_) => {
                let msg = format!("notice_date: '{v}' is not a date (YYYY-MM-DD)");
                return batch_page(
                    &state,
                    &s,
                    (id, bid),
                    (None, &LineFilters::default()),
                    None,
                    Some(msg),
                )
                .await;
            }
        },
    };
    let request = batches::Approve {
        notice_date: notice,
        drop_failing: values.get("drop_failing").is_some_and(|v| v == "1"),
    };
    let done = batches::approve(&state.db, &acting.who, id, bid, &request).await;
    finished(&state, &s, id, bid, done, "approved").await
}

pub async fn cancel(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path((id, bid)): Path<(String, String)>,
) -> PageResult {
    let (id, bid) = ids(&id, &bid)?;
    require_access(&s)?;
    let done = batches::cancel(&state.db, &acting.who, id, bid).await;
    finished(&state, &s, id, bid, done, "cancelled").await
}

/// The letters' CSV, the same file as the API's.
pub async fn letters(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path((id, bid)): Path<(String, String)>,
) -> PageResult {
    let (id, bid) = ids(&id, &bid)?;
    match batches::letters(&state.db, s.company_id, id, bid, s.role.sees_tenants()).await {
        Ok(l) => Ok(crate::exports::letters(&l)),
        Err(e) => refused(&state, &s, id, bid, e).await,
    }
}
