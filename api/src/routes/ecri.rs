//! `GET /api/v1/facilities/:id/ecri`: the ECRI engine's suggestion for each tenant of the
//! facility's rent roll (each cohort when it has none), with the stay model it learned.

use crate::auth::Auth;
use crate::error::ApiResult;
use crate::extract::{path_id, JsonBytes};
use crate::state::AppState;
use crate::views::ecri as views;
use axum::extract::{Path, State};
use axum::Json;
use chrono::{DateTime, NaiveDate, Utc};
use domain::ecri::EcriEngineSettings;
use domain::ids::FacilityId;
use domain::values::round2;
use jobs::ecri::runs::page;
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(facility_ecri))
        .routes(routes!(read_settings, write_settings))
}

/// A facility's ECRI settings.
#[derive(Serialize, utoipa::ToSchema)]
struct EcriSettingsBody {
    /// The facility.
    facility_id: Uuid,
    /// The settings in force: the defaults with the overrides applied.
    settings: EcriEngineSettings,
    /// The facility's overrides as stored.
    overrides: serde_json::Value,
    /// The defaults.
    defaults: EcriEngineSettings,
}

/// The facility's ECRI settings in force (guardrails, horizon, notice days, excluded flags,
/// the stay prior), its overrides and the defaults.
#[utoipa::path(get, path = "/api/v1/facilities/{id}/ecri-settings", tag = "analytics",
    params(("id" = Uuid, Path, description = "Id of the facility.")),
    responses((status = 200, description = "The settings.", body = EcriSettingsBody)))]
async fn read_settings(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<Json<EcriSettingsBody>> {
    let facility_id: FacilityId = path_id(&id, "facility")?;
    let (settings, overrides) =
        jobs::ecri::settings(&state.db, who.company_id, facility_id).await?;
    Ok(Json(EcriSettingsBody {
        facility_id: facility_id.uuid(),
        settings,
        overrides,
        defaults: EcriEngineSettings::default(),
    }))
}

/// Replaces the facility's ECRI overrides with the body's object (`{}` returns to the
/// defaults; `stay_prior` may be given field by field).
#[utoipa::path(put, path = "/api/v1/facilities/{id}/ecri-settings", tag = "analytics",
    params(("id" = Uuid, Path, description = "Id of the facility.")),
    request_body(content = Object, description = "Overrides: any fields of the settings (see `defaults`); `{}` returns to the defaults.", content_type = "application/json"),
    responses((status = 200, description = "The settings now in force.", body = EcriSettingsBody)))]
async fn write_settings(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Path(id): Path<String>,
    JsonBytes(body): JsonBytes,
) -> ApiResult<Json<EcriSettingsBody>> {
    let facility_id: FacilityId = path_id(&id, "facility")?;
    let done = jobs::ecri::set_settings(&state.db, &acting.who, facility_id, &body).await?;
    let (settings, overrides) = state.finish(done).await;
    Ok(Json(EcriSettingsBody {
        facility_id: facility_id.uuid(),
        settings,
        overrides,
        defaults: EcriEngineSettings::default(),
    }))
}

/// The stored run an answer comes from.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriRun)]
struct Run {
    /// Id of the run.
    run_id: Uuid,
    /// When the worker computed it.
    generated_at: DateTime<Utc>,
    /// The engine version that computed it.
    engine_version: String,
    /// What asked for it: `sync`, `nightly`, `settings`, `batch` or `on_demand`.
    trigger: String,
    /// When the company's stay-model evidence it read was fitted (nightly).
    fitted_at: Option<DateTime<Utc>>,
    /// Why the run no longer describes the facility (a newer roll or snapshot, another
    /// engine version); null while it does.
    stale: Option<String>,
}

/// The suggestions of one facility, from its latest stored ECRI run.
#[derive(Serialize, utoipa::ToSchema)]
struct FacilityEcri {
    /// The facility.
    facility_id: Uuid,
    /// The facility's name.
    facility_name: String,
    /// The run read; null before the facility's first run (then `pending_job` is set when one
    /// is on its way, and `reason` says so).
    run: Option<Run>,
    /// A job that will store a newer run (`GET /api/v1/jobs/{id}` follows it); null when none
    /// is waiting.
    pending_job: Option<Uuid>,
    /// Date of the rent roll (or of the snapshot, for cohorts) the suggestions are for.
    as_of: Option<NaiveDate>,
    /// `rent_roll`: one line per tenant of the roll in force; `cohorts`: one per cohort of the
    /// latest snapshot's `tenant_rents` (no roll sent yet); null without a snapshot.
    #[schema(value_type = Option<String>, pattern = "^(rent_roll|cohorts)$")]
    basis: Option<&'static str>,
    /// Months over which the expected gain is counted (null without a run).
    horizon_months: Option<f64>,
    /// The stay model the suggestions rest on (null without a run).
    model: Option<views::Model>,
    /// Set when increases are held: the facility's increased tenants lately left faster than
    /// the stop-loss allows.
    stop_loss: Option<views::StopLoss>,
    /// Sums over the lines.
    totals: Totals,
    /// One line per tenant (or cohort), by size then tenant id: the page's (every line when
    /// no `limit` was asked).
    tenants: Vec<Line>,
    /// The `cursor` of the next page; null on the last page and when no `limit` was asked.
    next_cursor: Option<String>,
    /// Why there are no suggestions, when there are none.
    reason: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriFacilityTotals)]
struct Totals {
    /// Tenants of the lines.
    tenants: u64,
    /// Tenants an increase is suggested for.
    tenants_affected: u64,
    /// Added rent per month if every suggestion is made and every tenant stays.
    monthly_uplift: f64,
    /// Expected revenue over the horizon against no increase, net of expected move-outs and
    /// the months their units stand empty.
    expected_gain: f64,
}

/// One tenant (or cohort) with the engine's suggestion.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriTenant)]
struct Line {
    /// The tenancy's id in the roll; null for a cohort.
    tenant_id: Option<String>,
    /// Unit size.
    size: String,
    /// Tenants of the line (1 for a tenant of the roll).
    tenant_count: u32,
    /// Months since the rent was last set (the last increase, else the move-in).
    months_since_last_increase: Option<f64>,
    /// Rent in place, currency per month.
    rent: f64,
    /// Suggested rent (the rent in place when no increase is suggested).
    new_rent: f64,
    /// Suggested increase, currency per month (0 for none).
    increase: f64,
    /// Suggested increase, % of the rent in place.
    increase_pct: f64,
    /// Chance the tenant is still in place 90 days after the notice (0 to 1).
    stay_probability: f64,
    /// Expected revenue over the horizon against no increase, for all the line's tenants.
    expected_gain: f64,
    /// The guardrail that held the increase back or capped it (none when the stay model
    /// chose): `no_street_rate`, `excluded_flag`, `months_since_move_in`,
    /// `months_since_increase`, `stop_loss`, `max_step`, `jurisdiction_cap`,
    /// `max_premium_over_street`, `minimum_increase`, `customer_units`, `ramp`, `step_test`.
    guardrails: Vec<String>,
    /// The figures the suggestion rests on, each with what it means.
    reasons: Vec<Reason>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriReason)]
struct Reason {
    /// What the figure is (`stay_probability`, `expected_gain`, `move_out_cost`, ...).
    name: String,
    /// The figure.
    value: f64,
    /// What it says, in words, its amounts in the company's currency.
    text: String,
}

#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct EcriQuery {
    /// `true` asks the worker for a new run now and answers 202 with the job (an operator or
    /// above); without it the latest stored run is read.
    fresh: Option<bool>,
    /// Lines per page, 1 to 1,000; every line when absent. `totals` always cover every line.
    limit: Option<i64>,
    /// The `next_cursor` of the previous page, as it was given (opaque): the page continues
    /// the run that page came from, even when a newer one was stored since.
    cursor: Option<String>,
}

/// A run asked for.
#[derive(Serialize, utoipa::ToSchema)]
struct RunRequested {
    /// The job that will store the run (a run already waiting for the facility is joined).
    job: super::JobRef,
}

/// Existing-tenant rent increases for one facility, tenant by tenant.
///
/// Read from the facility's latest stored ECRI run: the worker computes one after each sync,
/// settings change and approval, and nightly; the read never recomputes, so two reads give the
/// same `run.run_id` until a new run is stored. `?fresh=true` asks for a new run and answers
/// 202 with the job to follow.
///
/// Per tenant of the rent roll in force (per cohort of the latest snapshot's `tenant_rents`
/// when no roll was sent), the increase that maximises the expected revenue over the horizon,
/// with the chance the tenant stays, the expected gain and the guardrail that bound it. The
/// stay model is learned from the facility's own past increases (the roll's events), pooled
/// over the company and shrunk toward a documented prior while the evidence is thin.
#[utoipa::path(get, path = "/api/v1/facilities/{id}/ecri", tag = "analytics",
    params(("id" = Uuid, Path, description = "Id of the facility."), EcriQuery),
    responses(
        (status = 200, description = "The suggestions of the latest stored run.", body = FacilityEcri),
        (status = 202, description = "A run was asked for (`fresh=true`).", body = RunRequested),
        (status = 403, description = "`fresh=true` from a role below operator.", body = crate::openapi::ErrorBody),
    ))]
async fn facility_ecri(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Path(id): Path<String>,
    crate::extract::Query(q): crate::extract::Query<EcriQuery>,
) -> ApiResult<axum::response::Response> {
    use axum::response::IntoResponse as _;
    let id: FacilityId = path_id(&id, "facility")?;
    if q.fresh == Some(true) {
        if !acting.access.role.allows(jobs::access::Permission::Operate) {
            return Err(crate::error::ApiError::Forbidden(format!(
                "asking for a new ECRI run needs the operator role or above; yours is {}",
                acting.access.role.as_str()
            )));
        }
        let done = jobs::ecri::runs::run_now(&state.db, &acting.who, id).await?;
        let job = state.finish(done).await;
        let body = RunRequested {
            job: super::JobRef {
                id: job,
                kind: "ecri_run",
            },
        };
        return Ok((axum::http::StatusCode::ACCEPTED, Json(body)).into_response());
    }
    let limit = page::limit(q.limit)?;
    let from = q.cursor.as_deref().map(page::Cursor::decode).transpose()?;
    let latest =
        jobs::ecri::runs::read(&state.db, acting.who.company, id, from.map(|c| c.run_id)).await?;
    let currency = jobs::tenancy::currency(&state.db, acting.who.company).await?;
    Ok(Json(answer(latest, currency, from, limit)).into_response())
}

/// The answer of a facility's latest run (or of its absence), its reasons' amounts in
/// `currency` (the stored run writes them without one): the page of its lines from `from`
/// (the first when none), at most `limit` of them (all when none); the totals of every line.
fn answer(
    latest: jobs::ecri::runs::Latest,
    currency: domain::values::Currency,
    from: Option<page::Cursor>,
    limit: Option<usize>,
) -> FacilityEcri {
    let Some(run) = latest.run else {
        let reason = match latest.pending_job {
            Some(job) => format!("no ECRI run yet: the first is on its way (job {job})"),
            None => "no ECRI run yet: one follows the facility's next sync, or ask for one with `?fresh=true`".to_owned(),
        };
        return FacilityEcri {
            facility_id: latest.facility_id,
            facility_name: latest.facility_name,
            run: None,
            pending_job: latest.pending_job,
            as_of: None,
            basis: None,
            horizon_months: None,
            model: None,
            stop_loss: None,
            totals: Totals {
                tenants: 0,
                tenants_affected: 0,
                monthly_uplift: 0.0,
                expected_gain: 0.0,
            },
            tenants: Vec::new(),
            next_cursor: None,
            reason: Some(reason),
        };
    };
    let meta = Run {
        run_id: run.id,
        generated_at: run.created_at,
        engine_version: run.engine_version,
        trigger: run.trigger,
        fitted_at: run.ecri.fitted_at,
        stale: run.stale,
    };
    let f = run.ecri;
    let mut totals = Totals {
        tenants: 0,
        tenants_affected: 0,
        monthly_uplift: 0.0,
        expected_gain: 0.0,
    };
    for s in f.lines.iter().map(|l| &l.suggestion) {
        let n = u64::from(s.tenant_count.max(1));
        totals.tenants += n;
        if s.increase > 0.0 {
            totals.tenants_affected += n;
            totals.monthly_uplift += s.increase * n as f64;
        }
        totals.expected_gain += s.expected_gain;
    }
    let (start, end, next) = page::stretch(f.lines.len(), meta.run_id, from, limit);
    let tenants: Vec<Line> = f
        .lines
        .into_iter()
        .skip(start)
        .take(end - start)
        .map(|l| {
            let s = l.suggestion;
            Line {
                tenant_id: (!s.tenant_id.is_empty()).then_some(s.tenant_id),
                size: l.size,
                tenant_count: s.tenant_count.max(1),
                months_since_last_increase: l.months_since_last_increase,
                rent: round2(s.current_rent),
                new_rent: round2(s.new_rent),
                increase: round2(s.increase),
                increase_pct: round2(s.increase_pct),
                stay_probability: (s.stay_probability * 100.0).round() / 10_000.0,
                expected_gain: round2(s.expected_gain),
                guardrails: s
                    .binding_guardrail
                    .map(|g| g.name().to_owned())
                    .into_iter()
                    .collect(),
                reasons: s
                    .reasons
                    .into_iter()
                    .map(|r| Reason {
                        text: r.text_in(currency),
                        name: r.name,
                        value: r.value,
                    })
                    .collect(),
            }
        })
        .collect();
    totals.monthly_uplift = round2(totals.monthly_uplift);
    totals.expected_gain = round2(totals.expected_gain);
    FacilityEcri {
        facility_id: latest.facility_id,
        facility_name: latest.facility_name,
        run: Some(meta),
        pending_job: latest.pending_job,
        as_of: f.as_of,
        basis: f.basis.map(|b| match b {
            jobs::ecri::Basis::RentRoll => "rent_roll",
            jobs::ecri::Basis::Cohorts => "cohorts",
        }),
        horizon_months: Some(f.settings.horizon_months),
        model: Some(views::Model::of(&f.model)),
        stop_loss: f.stop_loss.map(Into::into),
        totals,
        tenants,
        next_cursor: next.map(|c| c.encode()),
        reason: f.reason,
    }
}
