//! Facilities: list, create, edit, delete (after a confirmation). The form is turned into the
//! JSON body of `/api/v1/facilities` and parsed by the same code, so the rules are the API's.

use super::extract::{Form, Query};
use super::page::{self, Messages, Nav, PageResult};
use super::session::SignedIn;
use super::{form_error, form_json, require_access, through_api, Notice};
use crate::error::ApiError;
use crate::extract::path_id;
use crate::requests::FacilityInput;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use jobs::facilities::{self, Facility};
use jobs::sessions::Session;
use maud::{html, Markup};
use std::collections::BTreeMap;

const FIELDS: [(&str, &str, &str); 6] = [
    ("name", "Name", "text"),
    ("external_id", "External id", "text"),
    ("source_system", "Source system", "text"),
    ("address", "Address", "text"),
    ("website_url", "Website", "url"),
    ("rentable_sqft", "Rentable area (sq ft)", "text"),
];

fn value_of(f: &Facility, field: &str) -> String {
    match field {
        "name" => f.name.clone(),
        "external_id" => f.external_id.clone().unwrap_or_default(),
        "source_system" => f.source_system.clone().unwrap_or_default(),
        "address" => f.address.clone().unwrap_or_default(),
        "website_url" => f.website_url.clone().unwrap_or_default(),
        "rentable_sqft" => f.rentable_sqft.map(|v| v.to_string()).unwrap_or_default(),
        _ => String::new(),
    }
}

/// Whether the signed-in user's role may add, change or delete facilities (an admin's work).
fn may_change(s: &Session) -> bool {
    page::may_post(s, "/app/facilities")
}

fn no_changes(s: &Session) -> Markup {
    page::role_note(s, "add, edit or delete facilities", "an admin or an owner")
}

fn form(s: &Session, action: &str, values: &BTreeMap<String, String>, submit: &str) -> Markup {
    if !may_change(s) {
        return no_changes(s);
    }
    html! {
        form class="stack" method="post" action=(action) {
            (page::csrf(s))
            @for (name, label, kind) in FIELDS {
                label { (label)
                    @if name == "name" {
                        input type=(kind) name=(name) required value=[values.get(name)];
                    } @else {
                        input type=(kind) name=(name) value=[values.get(name)];
                    }
                }
            }
            div class="actions" {
                button type="submit" { (submit) }
                a class="button secondary" href="/app/facilities" { "Cancel" }
            }
        }
    }
}

pub async fn list(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(n): Query<Notice>,
) -> PageResult {
    let items = facilities::list(&state.db, s.company_id, &s.scope).await?;
    let admin = may_change(&s);
    let body = html! {
        @if admin {
            p { a class="button" href="/app/facilities/new" { "Add a facility" } }
        } @else {
            (no_changes(&s))
        }
        @if items.is_empty() {
            p class="muted" { "No facility yet. Add one here, push a sync, or upload a file." }
        } @else {
            div class="table-wrap" {
                table id="facilities" {
                    thead { tr { th { "Name" } th { "External id" } th { "Address" } th { "Area (sq ft)" } th { "Latest data" } th { span class="skip" { "Actions" } } } }
                    tbody {
                        @for f in &items {
                            tr data-facility-id=(f.id) {
                                td { a href={"/app/facilities/" (f.id)} { (f.name) } }
                                td { (f.external_id.as_deref().unwrap_or("")) }
                                td { (f.address.as_deref().unwrap_or("")) }
                                td class="num" { (f.rentable_sqft.map(|v| v.to_string()).unwrap_or_default()) }
                                td { (f.last_sync_date.map(|d| d.to_string()).unwrap_or_else(|| "none".to_owned())) }
                                td { div class="actions" {
                                    a href={"/app/facilities/" (f.id)} { "Pricing" }
                                    @if admin {
                                        a href={"/app/facilities/" (f.id) "/edit"} { "Edit" }
                                        a href={"/app/facilities/" (f.id) "/delete"} { "Delete" }
                                    }
                                } }
                            }
                        }
                    }
                }
            }
        }
    };
    Ok(page::render(page::frame(
        &s,
        Nav::Facilities,
        "Facilities",
        &Messages::notice(n.text()),
        body,
    )))
}

pub async fn new_page(SignedIn(s): SignedIn) -> PageResult {
    let body = form(&s, "/app/facilities", &BTreeMap::new(), "Create facility");
    Ok(page::render(page::frame(
        &s,
        Nav::Facilities,
        "Add a facility",
        &Messages::default(),
        body,
    )))
}

/// The form as the API's JSON body. On create an empty field is left out; on update it is
/// `null`, which clears it (as in `PUT /api/v1/facilities/:id`).
fn input(values: &BTreeMap<String, String>, clear_empty: bool) -> Vec<u8> {
    form_json(values, &["rentable_sqft"], clear_empty)
}

fn rejected(
    s: &Session,
    title: &str,
    action: &str,
    values: &BTreeMap<String, String>,
    e: ApiError,
) -> PageResult {
    let m = form_error(e)?;
    let body = form(s, action, values, "Save");
    Ok(page::render_status(
        StatusCode::UNPROCESSABLE_ENTITY,
        page::frame(s, Nav::Facilities, title, &Messages::error(m), body),
    ))
}

pub async fn create(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Form(values): Form<BTreeMap<String, String>>,
) -> PageResult {
    require_access(&s)?;
    let result = through_api(&input(&values, false), |i: FacilityInput| {
        facilities::create(&state.db, &acting.who, i.into())
    })
    .await;
    match result {
        Ok(done) => {
            state.finish(done).await;
            Ok(Redirect::to("/app/facilities?notice=created").into_response())
        }
        Err(e) => rejected(&s, "Add a facility", "/app/facilities", &values, e),
    }
}

pub async fn edit_page(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
) -> PageResult {
    let id = path_id(&id, "facility")?;
    let f = facilities::get(&state.db, s.company_id, id).await?;
    let values = FIELDS
        .iter()
        .map(|(n, _, _)| ((*n).to_owned(), value_of(&f, n)))
        .collect();
    let body = form(&s, &format!("/app/facilities/{id}"), &values, "Save");
    Ok(page::render(page::frame(
        &s,
        Nav::Facilities,
        &format!("Edit {}", f.name),
        &Messages::default(),
        body,
    )))
}

pub async fn update(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path(id): Path<String>,
    Form(values): Form<BTreeMap<String, String>>,
) -> PageResult {
    let id = path_id(&id, "facility")?;
    require_access(&s)?;
    let result = through_api(&input(&values, true), |i: FacilityInput| {
        facilities::update(&state.db, &acting.who, id, i.into())
    })
    .await;
    match result {
        Ok(done) => {
            state.finish(done).await;
            Ok(Redirect::to("/app/facilities?notice=updated").into_response())
        }
        Err(e) => rejected(
            &s,
            "Edit facility",
            &format!("/app/facilities/{id}"),
            &values,
            e,
        ),
    }
}

pub async fn confirm_delete(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
) -> PageResult {
    let id = path_id(&id, "facility")?;
    let f = facilities::get(&state.db, s.company_id, id).await?;
    if !may_change(&s) {
        return Ok(page::render(page::frame(
            &s,
            Nav::Facilities,
            "Delete a facility",
            &Messages::default(),
            no_changes(&s),
        )));
    }
    Ok(page::confirm(
        &s,
        page::Confirm {
            nav: Nav::Facilities,
            title: "Delete a facility",
            question: format!("Delete “{}” with all its data (daily records, recommendations, competitor rates)? This cannot be undone.", f.name),
            action: format!("/app/facilities/{id}/delete"),
            button: "Delete facility",
            back: "/app/facilities",
        },
    ))
}

pub async fn delete(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path(id): Path<String>,
) -> PageResult {
    let id = path_id(&id, "facility")?;
    require_access(&s)?;
    let done = facilities::delete(&state.db, &acting.who, id).await?;
    state.finish(done).await;
    Ok(Redirect::to("/app/facilities?notice=deleted").into_response())
}
