//! Stores one snapshot: the idempotent upsert keyed on facility and date, in one transaction.

use super::write::{write_snapshots, Day};
use crate::audit::Change;
use crate::door::{self, Committed, Jobs, Who};
use crate::error::{Result, ValidationError};
use crate::facilities::{self, Sender};
use crate::payload::Payload;
use crate::queue::Kind;
use chrono::NaiveDate;
use domain::ids::CompanyId;
use domain::sync::payload::SyncPayload;
use serde::Serialize;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// Which intake path produced a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Push,
    Upload,
    Crm,
}

impl Source {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Push => "push",
            Self::Upload => "upload",
            Self::Crm => "crm",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct FacilityOutcome {
    /// Id of the facility.
    pub id: Uuid,
    /// The facility's name.
    pub name: String,
    /// True when the sync created the facility.
    pub created: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub sync_id: Uuid,
    pub date: NaiveDate,
    /// `created` or `updated`.
    pub idempotent: &'static str,
    pub facility: FacilityOutcome,
    /// The `ingest` job recorded with the snapshot; push it once committed.
    pub job_id: Uuid,
    /// Notes on how the snapshot was placed (`<JSON path>: <reason>`), e.g. a `facility.id`
    /// that matched nothing.
    pub warnings: Vec<String>,
    /// What the snapshot's rent roll changed, when it carried one.
    pub rent_roll: Option<crate::rent_roll::RollOutcome>,
    /// The facility's details the snapshot carried and its sender may not change (left alone).
    pub ignored: Vec<&'static str>,
}

/// Checks that JSON text, already parsed, can be stored in a `jsonb` column: PostgreSQL refuses
/// the escape `\u0000` and any escaped UTF-16 surrogate that is not part of a pair (`"\ud800"`),
/// both of which are valid JSON that serde skips without complaint inside ignored fields. Every
/// raw body the service keeps passes through here, so such input is a 422, not a 500.
pub fn check_storable(raw_json: &str) -> Result<(), ValidationError> {
    let refuse = |what: &str| {
        Err(ValidationError::new(
            "body",
            format!("contains the escape {what}, which cannot be stored"),
        ))
    };
    let b = raw_json.as_bytes();
    let hex4 = |at: usize| -> Option<u16> {
        let digits = std::str::from_utf8(b.get(at..at + 4)?).ok()?;
        u16::from_str_radix(digits, 16).ok()
    };
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        if b.get(i + 1) != Some(&b'u') {
            i += 2; // any other escape is one character
            continue;
        }
        let Some(unit) = hex4(i + 2) else {
            i += 2;
            continue;
        };
        match unit {
            0 => return refuse("\\u0000"),
            0xD800..=0xDBFF => {
                let low = (b.get(i + 6) == Some(&b'\\') && b.get(i + 7) == Some(&b'u'))
                    .then(|| hex4(i + 8))
                    .flatten();
                if !matches!(low, Some(0xDC00..=0xDFFF)) {
                    return refuse(&format!("\\u{unit:04x} (an unpaired surrogate)"));
                }
                i += 12;
            }
            0xDC00..=0xDFFF => return refuse(&format!("\\u{unit:04x} (an unpaired surrogate)")),
            _ => i += 6,
        }
    }
    Ok(())
}

/// Attempts of a push whose transaction PostgreSQL cancelled to break a lock conflict.
const LOCK_ATTEMPTS: u32 = 4;

/// A push of one snapshot (`POST /api/v1/sync`): stored in its own transaction (see
/// [`store`]) with its audit entry; its `ingest` job is pushed by the caller. A member or key
/// whose role may not edit facilities leaves their details alone (named in `warnings`).
///
/// A transaction PostgreSQL cancels to break a lock conflict (a deadlock, `40P01`, or a
/// serialization failure, `40001`) wrote nothing, so it is run again, up to 4 attempts in all
/// (`LOCK_ATTEMPTS`); one still refused then is the caller's to send again (the
/// api answers 409 with `Retry-After`).
pub async fn ingest(
    pool: &PgPool,
    who: &Who,
    allowed: &crate::access::Scope,
    p: &SyncPayload,
    raw_json: &str,
    source: Source,
) -> Result<Committed<Outcome>> {
    let mut attempt = 1;
    loop {
        match ingest_once(pool, who, allowed, p, raw_json, source).await {
            Err(crate::Error::Database(e))
                if crate::error::is_lock_conflict(&e) && attempt < LOCK_ATTEMPTS =>
            {
                tracing::warn!(attempt, error = %e, "a push met a lock conflict; storing it again");
                let jitter = rand::random::<u64>() % 25;
                let wait = 10 * u64::from(attempt) + jitter;
                tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
                attempt += 1;
            }
            done => return done,
        }
    }
}

async fn ingest_once(
    pool: &PgPool,
    who: &Who,
    allowed: &crate::access::Scope,
    p: &SyncPayload,
    raw_json: &str,
    source: Source,
) -> Result<Committed<Outcome>> {
    let mut tx = pool.begin().await?;
    let edits = who
        .role
        .is_none_or(|r| r.allows(crate::access::Permission::Administer));
    let sender = Sender {
        scope: allowed.ids(),
        edits,
    };
    let mut outcome = place_as(&mut tx, who.company, allowed, sender, p, raw_json, source).await?;
    if !outcome.ignored.is_empty() {
        let role = who.role.map_or("", |r| r.as_str());
        let fields: Vec<String> = outcome
            .ignored
            .iter()
            .map(|f| format!("facility.{f}"))
            .collect();
        outcome.warnings.push(format!(
            "{}: ignored: your role ({role}) may not change a facility's details (that needs \
             the admin or owner role); the snapshot was stored without them",
            fields.join(", ")
        ));
    }
    let change = Change::new("sync.push")
        .target("sync_record", outcome.sync_id)
        .facility(outcome.facility.id);
    let jobs = Jobs::one(Kind::Ingest, outcome.job_id);
    door::commit(tx, who, change, outcome, jobs).await
}

/// Stores one snapshot on the caller's transaction (see [`store`]), for a sender limited to
/// `allowed`: a snapshot that matched another facility, or would create one, is refused as an
/// unknown facility would be, and the caller's transaction (a created facility with it) must
/// be rolled back. (The demo seed's; a push goes through [`ingest`].)
#[cfg(feature = "demo-seed")]
pub(crate) async fn place(
    tx: &mut PgConnection,
    company_id: CompanyId,
    allowed: &crate::access::Scope,
    p: &SyncPayload,
    raw_json: &str,
    source: Source,
) -> Result<Outcome> {
    place_as(tx, company_id, allowed, Sender::ANY, p, raw_json, source).await
}

/// Stores one snapshot for a sender limited to `allowed` (as the seed's `place` does), matching
/// as `sender` (its scope, whether it may change details).
async fn place_as(
    tx: &mut PgConnection,
    company_id: CompanyId,
    allowed: &crate::access::Scope,
    sender: Sender<'_>,
    p: &SyncPayload,
    raw_json: &str,
    source: Source,
) -> Result<Outcome> {
    let outcome = store_as(tx, company_id, sender, p, raw_json, source).await?;
    // Matching kept to the sender's scope already; this stays as the rule's last word.
    if !allowed.sees(outcome.facility.id) {
        return Err(crate::Error::not_found(facilities::OUTSIDE_SCOPE));
    }
    Ok(outcome)
}

/// Matches (or creates) the facility and upserts the record for its date, replacing the
/// record's per-size rows, leads and competitor observations, and records its `ingest` job, all
/// on the caller's connection: an upload or a CRM pull stores all of its snapshots in one
/// transaction. `raw_json` is the body as received, kept for audit. Concurrent calls for one
/// facility and date serialise on the record's row.
pub(crate) async fn store(
    tx: &mut PgConnection,
    company_id: CompanyId,
    p: &SyncPayload,
    raw_json: &str,
    source: Source,
) -> Result<Outcome> {
    store_as(tx, company_id, Sender::ANY, p, raw_json, source).await
}

/// [`store`] matching as `sender`.
async fn store_as(
    tx: &mut PgConnection,
    company_id: CompanyId,
    sender: Sender<'_>,
    p: &SyncPayload,
    raw_json: &str,
    source: Source,
) -> Result<Outcome> {
    check_storable(raw_json)?;
    let fref = p.facility.clone().unwrap_or_default();
    let facility = facilities::resolve_for_sender(&mut *tx, company_id, &fref, sender).await?;
    let day = Day {
        payload: p,
        raw_json,
    };
    let written = write_snapshots(&mut *tx, company_id, &facility, &[day], source).await?;
    let Some(w) = written.first() else {
        return Err(crate::Error::Internal(
            "the snapshot was not written".to_owned(),
        ));
    };
    let (sync_id, created, rent_roll) = (w.sync_id, w.created, w.rent_roll.clone());
    let job_id = crate::runs::insert(
        &mut *tx,
        crate::runs::NewJob::new(
            Some(company_id),
            Payload::Ingest(crate::payload::Ingest {
                sync_id,
                facility_id: facility.id.into(),
                date: Some(p.date.0),
            }),
        ),
    )
    .await?
    .ok_or_else(|| crate::Error::Conflict("the ingest job could not be recorded".to_owned()))?;
    let held = rent_roll.as_ref().and_then(|r| r.held.as_ref());
    let held_warning = held.map(|h| h.warning(facility.id));
    let ignored = facility.ignored.clone();
    let mut warnings: Vec<String> = facility
        .unmatched_id
        .map(|id| {
            format!(
                "facility.id: no facility has the id {id}; {}",
                if facility.created {
                    "a new facility was created from the name"
                } else {
                    "matched by external_id or name instead"
                }
            )
        })
        .into_iter()
        .collect();
    warnings.extend(held_warning);
    Ok(Outcome {
        job_id,
        sync_id,
        date: p.date.0,
        idempotent: if created { "created" } else { "updated" },
        facility: facilities_outcome(facility),
        warnings,
        rent_roll,
        ignored,
    })
}

fn facilities_outcome(f: facilities::Resolved) -> FacilityOutcome {
    FacilityOutcome {
        id: f.id,
        name: f.name,
        created: f.created,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_escapes_are_refused() {
        assert!(check_storable(r#"{"a":"x\u0000y"}"#).is_err());
        assert!(check_storable(r#"{"a":"x\u0001y"}"#).is_ok());
        // An escaped backslash followed by "u0000" is text, not an escape.
        assert!(check_storable(r#"{"a":"x\\u0000y"}"#).is_ok());
    }

    #[test]
    fn only_paired_surrogates_are_stored() {
        assert!(check_storable(r#"{"a":"\ud83d\ude00"}"#).is_ok());
        assert!(check_storable(r#"{"a":"\uD83D\uDE00 and \u00e9"}"#).is_ok());
        for bad in [
            r#"{"a":"\ud800"}"#,
            r#"{"a":"\ud800x"}"#,
            r#"{"a":"\udc00"}"#,
            r#"{"a":"\ud800\u0041"}"#,
            r#"{"a":"\ud800\ud800"}"#,
            r#"{"\udfff":1}"#,
        ] {
            assert!(check_storable(bad).is_err(), "{bad}");
        }
    }
}
