//! The bodies and query parameters the API takes, as types of the API's own: each is parsed
//! here (with its OpenAPI schema beside it) and turned into the input of a `jobs` use case
//! (`From<...> for jobs::...`). What an integrator sends changes only here; the use case's input
//! can change with its code without changing the published document. The dashboard's forms
//! are parsed into the same types (`dashboard::through_api`), so a form and its API twin take
//! the same fields under the same rules.

use chrono::NaiveDate;
use domain::values::{Currency, HttpUrl, Quantity, Text};
use serde::{Deserialize, Deserializer};
use uuid::Uuid;

/// A new connected CRM.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewDataSource {
    /// A live provider (see `providers.live` of the list).
    pub provider: String,
    /// Name shown in lists; the provider's when absent.
    pub name: Option<Text<200>>,
    /// `https://` without credentials; the adapter adds its own path and query. Optional for a
    /// provider with a default address.
    pub base_url: Option<String>,
    /// The CRM's read-only API key.
    pub api_key: Text<500>,
    /// The key's secret, for providers that sign with one (storEDGE).
    pub api_secret: Option<Text<500>>,
    /// The CRM's own account (company) id, for providers that need one (storEDGE).
    pub account_id: Option<Text<100>>,
    /// Cron expression with seconds (`sec min hour day month weekday`).
    pub schedule: Option<String>,
    /// `false` skips the connection test made before the source is stored.
    pub verify: Option<bool>,
}

impl From<NewDataSource> for jobs::data_sources::NewDataSource {
    fn from(b: NewDataSource) -> Self {
        Self {
            provider: b.provider,
            name: b.name,
            base_url: b.base_url,
            api_key: b.api_key,
            api_secret: b.api_secret,
            account_id: b.account_id,
            schedule: b.schedule,
            verify: b.verify,
        }
    }
}

/// A change to a data source: every field optional, absent fields stay as they are. The same
/// rules as at creation apply to what is given.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateDataSource {
    /// New name.
    pub name: Option<Text<200>>,
    /// New cron expression with seconds; at most one pull an hour.
    pub schedule: Option<String>,
    /// Turns scheduled pulls on or off.
    pub enabled: Option<bool>,
    /// A new read-only key for the CRM (sealed again; the hint follows it).
    pub api_key: Option<Text<500>>,
    /// The new key's secret, given with it for providers that sign with one.
    pub api_secret: Option<Text<500>>,
}

impl From<UpdateDataSource> for jobs::data_sources::UpdateDataSource {
    fn from(b: UpdateDataSource) -> Self {
        Self {
            name: b.name,
            schedule: b.schedule,
            enabled: b.enabled,
            api_key: b.api_key,
            api_secret: b.api_secret,
        }
    }
}

/// The dates a pull asks for: one `date`, a `from`/`to` range (both ends included, at most 90
/// days), or neither (yesterday in the company's time zone, when it runs).
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PullRange {
    /// One date to pull (`YYYY-MM-DD`).
    pub date: Option<NaiveDate>,
    /// First date of a backfill, given with `to`.
    pub from: Option<NaiveDate>,
    /// Last date of a backfill (at most 90 days after `from`, not later than tomorrow).
    pub to: Option<NaiveDate>,
}

impl From<PullRange> for jobs::data_sources::PullRange {
    fn from(b: PullRange) -> Self {
        Self {
            date: b.date,
            from: b.from,
            to: b.to,
        }
    }
}

/// `Some(None)` for an explicit `null`, `None` when the field is absent.
pub(crate) fn explicit_null<'de, D, T>(de: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(de).map(Some)
}

/// Body of create and update. On update, an absent field stays as it is and `null` clears it.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
pub struct FacilityInput {
    /// The CRM's facility id (unique per company together with `source_system`).
    #[serde(default, deserialize_with = "explicit_null")]
    #[schema(value_type = Option<Text<200>>)]
    pub external_id: Option<Option<Text<200>>>,
    /// Free-form label of the originating system.
    #[serde(default, deserialize_with = "explicit_null")]
    #[schema(value_type = Option<Text<100>>)]
    pub source_system: Option<Option<Text<100>>>,
    /// Name, unique within the company: required on creation, never cleared.
    #[serde(default, deserialize_with = "explicit_null")]
    #[schema(value_type = Option<Text<200>>)]
    pub name: Option<Option<Text<200>>>,
    /// Postal address.
    #[serde(default, deserialize_with = "explicit_null")]
    #[schema(value_type = Option<Text<500>>)]
    pub address: Option<Option<Text<500>>>,
    /// The facility's website.
    #[serde(default, deserialize_with = "explicit_null")]
    #[schema(value_type = Option<HttpUrl>)]
    pub website_url: Option<Option<HttpUrl>>,
    /// Rentable area in square feet.
    #[serde(default, deserialize_with = "explicit_null")]
    #[schema(value_type = Option<Quantity>)]
    pub rentable_sqft: Option<Option<Quantity>>,
}

impl From<FacilityInput> for jobs::facilities::FacilityInput {
    fn from(b: FacilityInput) -> Self {
        Self {
            external_id: b.external_id,
            source_system: b.source_system,
            name: b.name,
            address: b.address,
            website_url: b.website_url,
            rentable_sqft: b.rentable_sqft,
        }
    }
}

/// A new webhook subscription.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[schema(as = NewWebhookSubscription)]
#[serde(deny_unknown_fields)]
pub struct NewSubscription {
    /// Delivery target: an absolute `https://` URL of at most 2,048 characters, no credentials,
    /// not an internal address.
    #[schema(max_length = 2048, pattern = "^[hH][tT][tT][pP][sS]://")]
    pub url: String,
    /// Events to take (`recommendations.ready`); every event, including later ones, when absent.
    pub events: Option<Vec<String>>,
}

impl From<NewSubscription> for jobs::webhooks::NewSubscription {
    fn from(b: NewSubscription) -> Self {
        Self {
            url: b.url,
            events: b.events,
        }
    }
}

/// Delivery states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryStatus {
    Queued,
    Retrying,
    Complete,
    Failed,
}

impl From<DeliveryStatus> for jobs::webhooks::DeliveryStatus {
    fn from(s: DeliveryStatus) -> Self {
        match s {
            DeliveryStatus::Queued => Self::Queued,
            DeliveryStatus::Retrying => Self::Retrying,
            DeliveryStatus::Complete => Self::Complete,
            DeliveryStatus::Failed => Self::Failed,
        }
    }
}

/// Filters and page of the delivery log.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct DeliveryFilter {
    /// Only deliveries of this subscription.
    pub subscription_id: Option<Uuid>,
    /// Only deliveries in this state.
    pub status: Option<DeliveryStatus>,
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page: deliveries older than it.
    pub cursor: Option<Uuid>,
}

impl From<DeliveryFilter> for jobs::webhooks::DeliveryFilter {
    fn from(b: DeliveryFilter) -> Self {
        Self {
            subscription_id: b.subscription_id,
            status: b.status.map(Into::into),
            limit: b.limit,
            cursor: b.cursor,
        }
    }
}

/// The company's settings; an absent field stays as it is.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompanySettings {
    /// The currency the dashboard shows the company's amounts in (no amount is converted).
    pub currency: Option<Currency>,
}

/// What a new ECRI batch takes: every current suggestion (`{}`), or those of some sizes and/or
/// some tenants.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewEcriBatch {
    /// Only tenants of these sizes (`10x10`; compared without spaces and case).
    pub sizes: Option<Vec<String>>,
    /// Only these tenants of the rent roll.
    pub tenant_ids: Option<Vec<String>>,
}

impl From<NewEcriBatch> for jobs::ecri_batches::NewBatch {
    fn from(b: NewEcriBatch) -> Self {
        Self {
            sizes: b.sizes,
            tenant_ids: b.tenant_ids,
        }
    }
}

/// Edits of a draft batch's lines, all or nothing.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EcriBatchEdits {
    /// One entry per line edited.
    pub lines: Vec<EcriLineEdit>,
}

/// One line's edit: a new rent (within the guardrails), or the line left out (or back in).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EcriLineEdit {
    /// The line's number (`line` of the batch).
    pub line: i32,
    /// The rent the notice will give, currency per month.
    pub new_rent: Option<f64>,
    /// `true` leaves the line out of the batch; `false` puts it back.
    pub excluded: Option<bool>,
}

impl From<EcriLineEdit> for jobs::ecri_batches::LineEdit {
    fn from(e: EcriLineEdit) -> Self {
        Self {
            line: e.line,
            new_rent: e.new_rent,
            excluded: e.excluded,
        }
    }
}

/// An approval.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApproveEcriBatch {
    /// The day the notices go out: today (in the company's time zone) when absent; not before
    /// today, at most 90 days ahead.
    pub notice_date: Option<NaiveDate>,
    /// Every line is checked again when the batch is approved (the roll, flags and settings of
    /// now, the stop-loss, other batches' increases and control groups). False (the default):
    /// a line that no longer passes refuses the approval (409 naming each line and the
    /// guardrail it breaks). True: such lines are left out, each with its reason, and the rest
    /// approved.
    #[serde(default)]
    pub drop_failing: bool,
}

/// Filters of the batch list.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct EcriBatchQuery {
    /// Only batches of this status.
    #[param(pattern = "^(draft|approved|cancelled)$")]
    pub status: Option<String>,
}
/// Decisions on the recommendations of a facility's latest run.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RateDecisions {
    /// At most one per unit type of the run.
    #[schema(min_items = 1)]
    pub decisions: Vec<RateDecision>,
}

/// One decision on a unit type of the run.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RateDecision {
    /// The unit type's size, as the run names it (`10x10`).
    #[schema(max_length = 40)]
    pub size: String,
    /// The unit type's tier; empty or absent for the unit type without one.
    #[schema(max_length = 100)]
    pub tier: Option<String>,
    /// `accept` approves the run's recommended rate, `override` approves `rate`, `reject`
    /// records that the recommendation is not taken (the rate in force stays).
    pub action: RateAction,
    /// The rate of an override (per unit and month, above 0); only an override takes one.
    #[schema(exclusive_minimum = 0.0, maximum = 1000000.0)]
    pub rate: Option<f64>,
    /// Why (at most 500 characters); required to force an override past a guardrail.
    #[schema(max_length = 500)]
    pub reason: Option<String>,
    /// Stores an override that breaks a guardrail (with a `reason`); the guardrails it breaks
    /// are kept with it.
    pub force: Option<bool>,
}

/// What a decision does.
#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RateAction {
    Accept,
    Override,
    Reject,
}

impl From<RateDecision> for jobs::rates::Requested {
    fn from(d: RateDecision) -> Self {
        Self {
            size: d.size,
            tier: d.tier,
            action: match d.action {
                RateAction::Accept => jobs::rates::Action::Accept,
                RateAction::Override => jobs::rates::Action::Override,
                RateAction::Reject => jobs::rates::Action::Reject,
            },
            rate: d.rate,
            reason: d.reason,
            force: d.force.unwrap_or(false),
        }
    }
}

/// Filters of the audit log; each is optional.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuditQuery {
    /// Only entries at or after this time (RFC 3339).
    pub since: Option<chrono::DateTime<chrono::Utc>>,
    /// Only entries of this actor: a member's address or a key's name (case-insensitive).
    #[param(max_length = 254)]
    pub actor: Option<String>,
    /// Only this action (`api_key.create`), or every action of a noun with a trailing dot
    /// (`api_key.`).
    #[param(max_length = 100)]
    pub action: Option<String>,
    /// Only entries about this facility.
    pub facility_id: Option<uuid::Uuid>,
    /// The `next` of the previous page: entries older than it.
    #[param(minimum = 1)]
    pub before: Option<i64>,
    /// Page size, 1 to 500 (default 100).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
}

impl AuditQuery {
    pub(crate) fn filter(self, default_limit: i64) -> jobs::audit::Filter {
        jobs::audit::Filter {
            since: self.since,
            actor: self.actor.filter(|a| !a.trim().is_empty()),
            action: self.action.filter(|a| !a.trim().is_empty()),
            facility_id: self.facility_id,
            before_id: self.before,
            limit: self.limit.unwrap_or(default_limit),
        }
    }
}

/// The rent roll guard's setting of a facility.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RentRollSettings {
    /// The share of the tenants in force a roll may move out before it is held for a
    /// confirmation, in percent (0 to 100; 100 never holds; 20 unless set).
    #[schema(minimum = 0, maximum = 100)]
    pub move_out_hold_pct: f64,
}
