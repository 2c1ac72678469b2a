//! ECRI batches as the API answers them, built from `jobs::ecri_batches`.

use super::decisions::Actor;
use chrono::{DateTime, NaiveDate, Utc};
use domain::prose::with_money;
use domain::values::Currency;
use jobs::ecri_batches as b;
use serde::Serialize;
use uuid::Uuid;

/// An ECRI batch with its lines, totals and (once approved) its outcome.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct EcriBatch {
    #[serde(flatten)]
    pub summary: EcriBatchSummary,
    /// One line per tenant (per cohort when only cohorts are known), by size then tenant.
    pub lines: Vec<EcriBatchLine>,
    /// What happened after the notices, from the later rent rolls; null unless approved.
    pub outcome: Option<EcriOutcome>,
}

/// A batch without its lines.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct EcriBatchSummary {
    /// Id of the batch.
    pub id: Uuid,
    /// The facility.
    pub facility_id: Uuid,
    /// `draft` (editable), `approved` (notices sent) or `cancelled`.
    #[schema(pattern = "^(draft|approved|cancelled)$")]
    pub status: &'static str,
    /// `rent_roll` (a line per tenant) or `cohorts` (a line per cohort of the snapshot).
    #[schema(pattern = "^(rent_roll|cohorts)$")]
    pub basis: &'static str,
    /// Date of the rent roll (or snapshot) the lines were drawn from.
    pub as_of: NaiveDate,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// Who created it.
    pub created_by: Actor,
    /// When it was approved; null until then.
    pub approved_at: Option<DateTime<Utc>>,
    /// Who approved it; null until then.
    pub approved_by: Option<Actor>,
    /// When it was cancelled; null unless cancelled.
    pub cancelled_at: Option<DateTime<Utc>>,
    /// Who cancelled it; null unless cancelled.
    pub cancelled_by: Option<Actor>,
    /// The day the notices go out; null until approved.
    pub notice_date: Option<NaiveDate>,
    /// The day the new rents take effect (notice date + notice days); null until approved.
    pub effective_date: Option<NaiveDate>,
    /// Days of notice (the facility's ECRI setting).
    pub notice_days: i32,
    /// The share (%) of eligible tenants held out as a control group.
    pub holdout_pct: f64,
    /// Tenants held out (drawn when the batch is approved).
    pub held_out_tenants: i64,
    /// The seed the holdout was drawn with: the same seed over the same lines draws the same
    /// control group. Null before approval or with no holdout.
    pub holdout_seed: Option<i64>,
    /// Per stratum (size and rent-to-street band): the tenants eligible and held out.
    #[schema(value_type = Option<Vec<Object>>)]
    pub holdout_strata: Option<serde_json::Value>,
    /// Sums over the lines not left out.
    pub totals: EcriBatchTotals,
}

/// Sums over a batch's lines that are not left out.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct EcriBatchTotals {
    /// Lines in the batch (not left out).
    pub lines: u32,
    /// Lines left out.
    pub excluded_lines: u32,
    /// Tenants of the lines.
    pub tenants: i64,
    /// Rent of those tenants per month now.
    pub current_monthly_rent: f64,
    /// Their rent per month at the new rents.
    pub new_monthly_rent: f64,
    /// Added rent per month if every tenant stays.
    pub monthly_uplift: f64,
    /// Expected revenue over the horizon against no increase, net of expected move-outs.
    pub expected_gain: f64,
}

/// One line of a batch.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct EcriBatchLine {
    /// The line's number, for edits.
    pub line: i32,
    /// The tenancy's id in the rent roll; null for a cohort line.
    pub tenant_id: Option<String>,
    /// The customer, where the roll names one.
    pub customer_id: Option<String>,
    /// Unit size.
    pub size: String,
    /// Whole months since the rent was last set.
    pub months_since_last_increase: Option<f64>,
    /// Tenants of the line (1 for a tenant).
    pub tenant_count: i32,
    /// Rent now, currency per month.
    pub current_rent: f64,
    /// The engine's suggestion when the batch was made.
    pub suggested_rent: f64,
    /// The rent the notice gives.
    pub new_rent: f64,
    /// new_rent - current_rent.
    pub increase: f64,
    /// The increase in % of the current rent.
    pub increase_pct: f64,
    /// Chance (0 to 1) each tenant is still in place 90 days after the notice, at new_rent.
    pub stay_probability: f64,
    /// Expected revenue over the horizon against no increase, for the line's tenants.
    pub expected_gain: f64,
    /// The rent was set by hand.
    pub edited: bool,
    /// The line is left out of the batch.
    pub excluded: bool,
    /// Why the service left the line out (an approval's re-check: the guardrail it broke;
    /// `holdout`: drawn into the control group); null when kept or left out by hand.
    pub dropped: Option<EcriDroppedLine>,
    /// The figures the rent rests on, each with what it means (`text`, its amounts in the
    /// company's currency).
    #[schema(value_type = Vec<Object>)]
    pub reasons: serde_json::Value,
}

/// Why the service left a line out.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct EcriDroppedLine {
    /// The guardrail the line broke when it was checked again (`excluded_flag`,
    /// `months_since_increase`, `rent_changed`, `not_in_roll`, `holdout_control`, ...), or
    /// `holdout`.
    pub guardrail: String,
    /// The same in a sentence, its amounts in the company's currency.
    pub reason: String,
}

impl EcriBatchLine {
    /// The line `l` as answered, its sentences' amounts in `currency`.
    fn of(l: b::Line, currency: Currency) -> Self {
        Self {
            line: l.line,
            increase: l.increase(),
            increase_pct: l.increase_pct(),
            tenant_id: l.tenant_id,
            customer_id: l.customer_id,
            size: l.size,
            months_since_last_increase: l.months_since_last_increase,
            tenant_count: l.tenant_count,
            current_rent: l.current_rent,
            suggested_rent: l.suggested_rent,
            new_rent: l.new_rent,
            stay_probability: l.stay_probability,
            expected_gain: l.expected_gain,
            edited: l.edited,
            excluded: l.excluded,
            reasons: reasons_in(l.reasons, currency),
            dropped: l.dropped.map(|d| EcriDroppedLine {
                guardrail: d.guardrail,
                reason: with_money(&d.reason, currency),
            }),
        }
    }
}

/// A line's stored reasons (`[{name, value, text}]`) with each text's amounts in `currency`:
/// the batch stores them as the engine wrote them, without one.
fn reasons_in(mut reasons: serde_json::Value, currency: Currency) -> serde_json::Value {
    for r in reasons.as_array_mut().into_iter().flatten() {
        let name = r
            .get("name")
            .and_then(|n| n.as_str())
            .unwrap_or("")
            .to_owned();
        if let Some(serde_json::Value::String(text)) = r.get_mut("text") {
            *text = domain::ecri::decide::reason_with_money(&name, text, currency);
        }
    }
    reasons
}

impl From<b::Totals> for EcriBatchTotals {
    fn from(t: b::Totals) -> Self {
        Self {
            lines: t.lines,
            excluded_lines: t.excluded_lines,
            tenants: t.tenants,
            current_monthly_rent: t.current_monthly_rent,
            new_monthly_rent: t.new_monthly_rent,
            monthly_uplift: t.monthly_uplift,
            expected_gain: t.expected_gain,
        }
    }
}

impl EcriBatchSummary {
    pub fn of(batch: &b::Batch, totals: b::Totals) -> Self {
        Self {
            id: batch.id,
            facility_id: batch.facility_id,
            status: batch.status.as_str(),
            basis: match batch.basis {
                jobs::ecri::Basis::RentRoll => "rent_roll",
                jobs::ecri::Basis::Cohorts => "cohorts",
            },
            as_of: batch.as_of,
            created_at: batch.created_at,
            created_by: batch.created_by.clone().into(),
            approved_at: batch.approved_at,
            approved_by: batch.approved_by.clone().map(Into::into),
            cancelled_at: batch.cancelled_at,
            cancelled_by: batch.cancelled_by.clone().map(Into::into),
            notice_date: batch.notice_date,
            effective_date: batch.effective_date,
            notice_days: batch.notice_days,
            holdout_pct: batch.holdout_pct,
            held_out_tenants: batch.held_out,
            holdout_seed: batch.holdout_seed,
            holdout_strata: batch.holdout_strata.clone(),
            totals: totals.into(),
        }
    }
}

impl EcriBatch {
    /// The batch as answered, its sentences' amounts (reasons, dropped reasons, the outcome's
    /// notes) in `currency`, the company's as it is when the batch is read.
    pub fn of(batch: b::Batch, outcome: Option<b::Outcome>, currency: Currency) -> Self {
        let summary = EcriBatchSummary::of(&batch, batch.totals());
        Self {
            summary,
            lines: batch
                .lines
                .into_iter()
                .map(|l| EcriBatchLine::of(l, currency))
                .collect(),
            outcome: outcome.map(|o| EcriOutcome::of(o, currency)),
        }
    }
}

/// What an approved batch did, from the rent rolls after it (docs/ecri.md).
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct EcriOutcome {
    /// Date of the facility's latest rent roll.
    pub as_of: Option<NaiveDate>,
    /// `waiting` (the roll has not reached the effective date), `partial`, `complete` (it
    /// reaches 90 days after the effective date) or `unavailable` (a batch of cohorts).
    #[schema(pattern = "^(waiting|partial|complete|unavailable)$")]
    pub status: &'static str,
    /// What limits the figures, when something does.
    pub note: Option<String>,
    /// Tenants in place at the effective date and 30, 60 and 90 days after.
    pub checkpoints: Vec<EcriCheckpoint>,
    /// Predicted share (%) still in place 90 days after the notice (the lines' stay
    /// probabilities, tenant-weighted).
    pub predicted_stay_pct: f64,
    /// The day the realized stay is read at (notice date + 90 days).
    pub stay_date: NaiveDate,
    /// Share (%) of the batch's tenants in place on `stay_date`, once the roll reaches it.
    pub realized_stay_pct: Option<f64>,
    /// The increased tenants' rent now less their rent before, over those still in place.
    pub realized_monthly_uplift: Option<f64>,
    /// Increased tenants in place whose rent in the roll shows the new rent.
    pub applied_tenants: Option<i64>,
    /// The measured lift against the held-out tenants; null without a holdout.
    pub lift: Option<EcriLift>,
}

/// Tenants in place on one day after the effective date.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct EcriCheckpoint {
    /// Days after the effective date (0, 30, 60, 90).
    pub days: i64,
    /// The day.
    pub date: NaiveDate,
    /// Whether the rent roll has reached the day; the counts are null until then.
    pub known: bool,
    /// The batch's tenants (in place at the notice date).
    pub increased: Option<EcriGroup>,
    /// Tenants of the same sizes in place at the notice date and not increased since.
    pub not_increased: Option<EcriGroup>,
}

/// A group of tenants on a day.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct EcriGroup {
    /// Tenants of the group.
    pub tenants: i64,
    /// Of which in place on the day.
    pub in_place: i64,
    /// in_place / tenants, %.
    pub stay_pct: Option<f64>,
}

/// Revenue per tenant of the increased tenants against the held-out ones.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct EcriLift {
    /// Increased tenants counted.
    pub increased_tenants: usize,
    /// Held-out tenants counted.
    pub control_tenants: usize,
    /// Customers of the increased tenants (a tenant without a customer id is one): a
    /// customer's units are one observation of the interval.
    pub increased_clusters: usize,
    /// Customers of the held-out tenants.
    pub control_clusters: usize,
    /// Days counted from the effective date (at most 91: the effective date and 90 after).
    pub window_days: i64,
    /// Whether the rent roll reaches the window's last day; until then the verdict is
    /// `too_early`.
    pub window_complete: bool,
    /// Revenue per increased tenant over the window (rent for the days each stayed).
    pub increased_revenue_per_tenant: f64,
    /// Revenue per held-out tenant over the window.
    pub control_revenue_per_tenant: f64,
    /// The difference per tenant.
    pub lift_per_tenant: f64,
    /// The difference in % of the held-out tenants' revenue.
    pub lift_pct: Option<f64>,
    /// Low end of the 95 % confidence interval of the difference per tenant (Welch's t with
    /// customers as clusters); null with under two customers in a group.
    pub ci_low: Option<f64>,
    /// High end of that interval.
    pub ci_high: Option<f64>,
    /// The interval's Welch-Satterthwaite degrees of freedom (customers as the sample).
    pub degrees_of_freedom: Option<f64>,
    /// Student's t quantile (97.5 %) the interval is drawn with.
    pub t_quantile: Option<f64>,
    /// `too_small` (under 10 customers in a group), `too_early` (the window is not complete),
    /// `inconclusive`, `positive` or `negative`.
    #[schema(pattern = "^(too_small|too_early|inconclusive|positive|negative)$")]
    pub verdict: &'static str,
    /// The verdict in words, its amounts in the company's currency.
    pub note: String,
}

impl From<b::outcome::Group> for EcriGroup {
    fn from(g: b::outcome::Group) -> Self {
        Self {
            tenants: g.tenants,
            in_place: g.in_place,
            stay_pct: g.stay_pct(),
        }
    }
}

impl EcriOutcome {
    fn of(o: b::Outcome, currency: Currency) -> Self {
        Self {
            as_of: o.as_of,
            status: o.status,
            note: o.note.map(|n| with_money(&n, currency)),
            checkpoints: o
                .checkpoints
                .into_iter()
                .map(|c| EcriCheckpoint {
                    days: c.days,
                    date: c.date,
                    known: c.known,
                    increased: c.increased.map(Into::into),
                    not_increased: c.not_increased.map(Into::into),
                })
                .collect(),
            predicted_stay_pct: o.predicted_stay_pct,
            stay_date: o.stay_date,
            realized_stay_pct: o.realized_stay_pct,
            realized_monthly_uplift: o.realized_monthly_uplift,
            applied_tenants: o.applied_tenants,
            lift: o.lift.map(|l| EcriLift {
                increased_tenants: l.increased_tenants,
                control_tenants: l.control_tenants,
                increased_clusters: l.increased_clusters,
                control_clusters: l.control_clusters,
                window_days: l.window_days,
                window_complete: l.window_complete,
                increased_revenue_per_tenant: l.increased_revenue_per_tenant,
                control_revenue_per_tenant: l.control_revenue_per_tenant,
                lift_per_tenant: l.lift_per_tenant,
                lift_pct: l.lift_pct,
                ci_low: l.ci_low,
                ci_high: l.ci_high,
                degrees_of_freedom: l.degrees_of_freedom,
                t_quantile: l.t_quantile,
                verdict: l.verdict,
                note: with_money(&l.note, currency),
            }),
        }
    }
}

/// The facility's batches, newest first.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct EcriBatchList {
    /// At most 200.
    pub batches: Vec<EcriBatchSummary>,
}
