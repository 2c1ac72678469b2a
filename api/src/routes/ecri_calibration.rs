//! `GET /api/v1/analytics/ecri/calibration`: the stay model's predictions against what
//! happened, over the company's approved ECRI batches whose 90 days after the notice are in the
//! rent roll, by decile of predicted stay and by facility (`jobs::ecri_batches::calibration`).
//! The reader's scope limits the facilities, as on every analytics route.

use crate::auth::Auth;
use crate::error::ApiResult;
use crate::extract::{facility_id_param, Query};
use crate::state::AppState;
use axum::extract::State;
use axum::Json;
use jobs::ecri_batches::calibration as c;
use serde::{Deserialize, Serialize};
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(calibration))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct Params {
    /// One facility of the company; every facility in the reader's scope when absent.
    #[param(value_type = Option<Uuid>)]
    facility_id: Option<String>,
}

/// Tenants of one bin: the mean predicted stay against the share that stayed.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriCalibrationBin)]
pub(crate) struct Bin {
    /// Tenants in the bin.
    pub tenants: usize,
    /// Mean predicted stay 90 days after the notice (the lines' stay probabilities), %.
    pub predicted: f64,
    /// Share of the bin still in place 90 days after the notice, %.
    pub realized: f64,
}

/// A decile of predicted stay.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriCalibrationDecile)]
pub(crate) struct Decile {
    /// 1 (lowest predicted stay) to 10; a decile without tenants is left out.
    pub decile: u32,
    /// Lowest predicted stay in the decile, %.
    pub predicted_low: f64,
    /// Highest predicted stay in the decile, %.
    pub predicted_high: f64,
    /// Tenants in the decile.
    pub tenants: usize,
    /// Mean predicted stay, %.
    pub predicted: f64,
    /// Share still in place 90 days after the notice, %.
    pub realized: f64,
}

/// One facility's tenants.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriCalibrationFacility)]
pub(crate) struct Facility {
    /// The facility.
    pub facility_id: Uuid,
    /// Its name.
    pub facility_name: String,
    /// Approved batches with tenants counted.
    pub batches: usize,
    /// Tenants counted.
    pub tenants: usize,
    /// Mean predicted stay, %.
    pub predicted: f64,
    /// Share still in place 90 days after the notice, %.
    pub realized: f64,
}

/// Predicted against realized 90-day stay of the increased tenants.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EcriCalibration)]
pub(crate) struct Calibration {
    /// Approved batches with tenants counted (those whose notice + 90 days is in the roll).
    pub batches: usize,
    /// Tenants counted.
    pub tenants: usize,
    /// Over every tenant counted; null without tenants.
    pub overall: Option<Bin>,
    /// By decile of predicted stay, lowest first.
    pub deciles: Vec<Decile>,
    /// Facilities with tenants counted, by name.
    pub facilities: Vec<Facility>,
}

impl From<c::Calibration> for Calibration {
    fn from(r: c::Calibration) -> Self {
        Self {
            batches: r.batches,
            tenants: r.tenants,
            overall: r.overall.map(|b| Bin {
                tenants: b.tenants,
                predicted: b.predicted_stay_pct,
                realized: b.realized_stay_pct,
            }),
            deciles: r
                .deciles
                .into_iter()
                .map(|d| Decile {
                    decile: d.decile,
                    predicted_low: d.predicted_low_pct,
                    predicted_high: d.predicted_high_pct,
                    tenants: d.bin.tenants,
                    predicted: d.bin.predicted_stay_pct,
                    realized: d.bin.realized_stay_pct,
                })
                .collect(),
            facilities: r
                .facilities
                .into_iter()
                .map(|f| Facility {
                    facility_id: f.facility_id,
                    facility_name: f.facility_name,
                    batches: f.batches,
                    tenants: f.bin.tenants,
                    predicted: f.bin.predicted_stay_pct,
                    realized: f.bin.realized_stay_pct,
                })
                .collect(),
        }
    }
}

/// The ECRI stay model's calibration: predicted against realized 90-day stay of the increased
/// tenants, by decile of predicted stay and by facility.
#[utoipa::path(
    get,
    path = "/api/v1/analytics/ecri/calibration",
    tag = "analytics",
    params(Params),
    responses(
        (status = 200, description = "Predicted against realized 90-day stay by decile of predicted stay and by facility, over the approved batches whose 90 days after the notice are in the rent roll.", body = Calibration),
        (status = 404, description = "`facility_id` names no facility of the company.", body = crate::openapi::ErrorBody),
    )
)]
async fn calibration(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(p): Query<Params>,
) -> ApiResult<Json<Calibration>> {
    let facility = facility_id_param(p.facility_id.as_deref())?;
    Ok(Json(
        c::calibration(&state.db, who.company_id, facility, &who.scope)
            .await?
            .into(),
    ))
}
