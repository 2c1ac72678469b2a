//! What a job row carries (`job_runs.payload`), typed: one variant per kind of job, built and
//! parsed here and nowhere else. The kind lives in its own column (`job_runs.kind`), so the JSON
//! is the variant's fields alone; a field added later must be optional, so rows written by an
//! older release still parse.

use crate::queue::Kind;
use chrono::{DateTime, NaiveDate, Utc};
use domain::ids::FacilityId;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// The payload of one job.
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    Ingest(Ingest),
    PricingRun(PricingRun),
    WebhookDelivery(WebhookDelivery),
    CrmPull(CrmPull),
    EcriRun(EcriRun),
    EcriFit(EcriFit),
}

/// Compute a facility's ECRI suggestions and store them as a run (`crate::ecri::runs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EcriRun {
    pub facility_id: FacilityId,
    pub trigger: crate::ecri::runs::Trigger,
}

/// Fit a company's stay-model evidence (`crate::ecri::fit`), then (when `then_run`) request a
/// run of each of its facilities: the nightly work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EcriFit {
    #[serde(default)]
    pub then_run: bool,
}

/// Re-evaluate a facility's lease-up mode after a stored snapshot, then request a pricing run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ingest {
    /// The stored snapshot (`sync_records.id`).
    pub sync_id: Uuid,
    pub facility_id: FacilityId,
    /// The snapshot's date (for reading a job; the handler reads the record).
    #[serde(default)]
    pub date: Option<NaiveDate>,
}

/// Run the pricing engine on a facility's latest snapshot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PricingRun {
    pub facility_id: FacilityId,
    /// The snapshot whose ingest asked for the run.
    #[serde(default)]
    pub sync_id: Option<Uuid>,
}

/// Deliver one recorded webhook event (`webhook_deliveries.id`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WebhookDelivery {
    pub delivery_id: Uuid,
}

/// Why a CRM pull runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PullTrigger {
    /// The source's cron schedule came due.
    Schedule,
    /// Someone asked for it (dashboard or API).
    OnDemand,
}

impl PullTrigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Schedule => "schedule",
            Self::OnDemand => "on_demand",
        }
    }
}

/// Fetch snapshots from a connected CRM: the dates `from` to `to`, or yesterday in the company's
/// time zone when neither is given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CrmPull {
    pub source_id: Uuid,
    pub trigger: PullTrigger,
    #[serde(default)]
    pub from: Option<NaiveDate>,
    #[serde(default)]
    pub to: Option<NaiveDate>,
    /// The schedule tick that caused a scheduled pull.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick: Option<DateTime<Utc>>,
}

impl Payload {
    pub fn kind(&self) -> Kind {
        match self {
            Self::Ingest(_) => Kind::Ingest,
            Self::PricingRun(_) => Kind::PricingRun,
            Self::WebhookDelivery(_) => Kind::WebhookDelivery,
            Self::CrmPull(_) => Kind::CrmPull,
            Self::EcriRun(_) => Kind::EcriRun,
            Self::EcriFit(_) => Kind::EcriFit,
        }
    }

    /// The JSON stored in `job_runs.payload`.
    pub fn to_json(&self) -> Value {
        let v = match self {
            Self::Ingest(p) => serde_json::to_value(p),
            Self::PricingRun(p) => serde_json::to_value(p),
            Self::WebhookDelivery(p) => serde_json::to_value(p),
            Self::CrmPull(p) => serde_json::to_value(p),
            Self::EcriRun(p) => serde_json::to_value(p),
            Self::EcriFit(p) => serde_json::to_value(p),
        };
        // Plain structs of ids, dates and enums always serialise.
        v.unwrap_or(Value::Null)
    }

    /// Reads a stored payload of `kind`; the error says what is wrong with it.
    pub fn parse(kind: Kind, json: &Value) -> Result<Self, String> {
        fn read<T: serde::de::DeserializeOwned>(json: &Value) -> Result<T, String> {
            T::deserialize(json).map_err(|e| format!("the job's payload is not valid: {e}"))
        }
        Ok(match kind {
            Kind::Ingest => Self::Ingest(read(json)?),
            Kind::PricingRun => Self::PricingRun(read(json)?),
            Kind::WebhookDelivery => Self::WebhookDelivery(read(json)?),
            Kind::CrmPull => Self::CrmPull(read(json)?),
            Kind::EcriRun => Self::EcriRun(read(json)?),
            Kind::EcriFit => Self::EcriFit(read(json)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_kind_round_trips_through_its_stored_json() {
        let id = Uuid::now_v7();
        let date = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        let all = [
            Payload::Ingest(Ingest {
                sync_id: id,
                facility_id: id.into(),
                date: Some(date),
            }),
            Payload::PricingRun(PricingRun {
                facility_id: id.into(),
                sync_id: None,
            }),
            Payload::WebhookDelivery(WebhookDelivery { delivery_id: id }),
            Payload::CrmPull(CrmPull {
                source_id: id,
                trigger: PullTrigger::OnDemand,
                from: Some(date),
                to: None,
                tick: None,
            }),
            Payload::EcriRun(EcriRun {
                facility_id: id.into(),
                trigger: crate::ecri::runs::Trigger::Nightly,
            }),
            Payload::EcriFit(EcriFit { then_run: true }),
        ];
        for p in all {
            assert_eq!(Payload::parse(p.kind(), &p.to_json()), Ok(p));
        }
    }

    #[test]
    fn rows_written_before_the_types_still_parse() {
        // The shapes the handlers wrote as untyped JSON.
        let source = Uuid::now_v7();
        let scheduled =
            json!({ "source_id": source, "trigger": "schedule", "tick": "2026-11-20T02:00:00Z" });
        let Ok(Payload::CrmPull(p)) = Payload::parse(Kind::CrmPull, &scheduled) else {
            panic!("a scheduled pull's payload parses");
        };
        assert_eq!(
            (p.trigger, p.from, p.to),
            (PullTrigger::Schedule, None, None)
        );
        let on_demand =
            json!({ "source_id": source, "trigger": "on_demand", "from": null, "to": null });
        assert!(Payload::parse(Kind::CrmPull, &on_demand).is_ok());
        let run = json!({ "facility_id": source, "sync_id": source });
        assert!(Payload::parse(Kind::PricingRun, &run).is_ok());
        let ingest = json!({ "sync_id": source, "facility_id": source });
        assert!(Payload::parse(Kind::Ingest, &ingest).is_ok());
    }

    #[test]
    fn a_payload_of_another_kind_is_refused_with_its_reason() {
        let delivery = json!({ "delivery_id": Uuid::now_v7() });
        let err = Payload::parse(Kind::Ingest, &delivery).unwrap_err();
        assert!(err.contains("sync_id"), "{err}");
    }
}
