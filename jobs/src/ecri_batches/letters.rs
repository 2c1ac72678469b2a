//! The mail merge of an approved batch: one row per tenant with what its notice says.

use super::{get, key, Batch, Failing, Status};
use crate::ecri::FacilityEcri;
use crate::error::{Error, Result};
use domain::ids::{CompanyId, FacilityId};
use sqlx::PgPool;
use uuid::Uuid;

/// One letter.
#[derive(Clone, Debug, PartialEq)]
pub struct Letter {
    /// None for a cohort line (no tenant to address: the row stands for `tenant_count`).
    pub tenant_id: Option<String>,
    pub customer_id: Option<String>,
    pub tenant_count: i32,
    pub size: String,
    pub current_rent: f64,
    pub new_rent: f64,
    pub increase: f64,
    pub increase_pct: f64,
}

/// An approved batch's letters and what each carries besides its line.
pub struct Letters {
    pub batch: Batch,
    pub facility_address: Option<String>,
    /// The company's ISO 4217 code: the rents are in it.
    pub currency: String,
    pub letters: Vec<Letter>,
    /// Lines kept at approval whose letter is withheld because they would not pass now: the
    /// tenant left, was flagged, or its rent changed to something else than the batch's.
    pub withheld: Vec<Failing>,
}

/// The batch's letters (lines not left out, by line) with the facility's address; 409 unless
/// the batch is approved (a letter carries the notice and effective dates).
pub async fn letters(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
    id: Uuid,
) -> Result<Letters> {
    let batch = get(pool, company_id, facility_id, id).await?;
    if batch.status != Status::Approved {
        return Err(Error::Conflict(format!(
            "the batch is {}: letters are made once it is approved (they carry its notice and effective dates)",
            batch.status.as_str()
        )));
    }
    let r = sqlx::query!(
        "SELECT f.address, c.currency FROM facilities f JOIN companies c ON c.id = f.company_id
         WHERE f.id = $1",
        batch.facility_id
    )
    .fetch_one(pool)
    .await?;
    let now = crate::ecri::facility(pool, company_id, facility_id).await?;
    let withheld = withheld(&batch, &now);
    let letters = batch
        .lines
        .iter()
        .filter(|l| !l.excluded && !withheld.iter().any(|w| w.line == l.line))
        .map(|l| Letter {
            tenant_id: l.tenant_id.clone(),
            customer_id: l.customer_id.clone(),
            tenant_count: l.tenant_count,
            size: l.size.clone(),
            current_rent: l.current_rent,
            new_rent: l.new_rent,
            increase: l.increase(),
            increase_pct: l.increase_pct(),
        })
        .collect();
    Ok(Letters {
        batch,
        facility_address: r.address,
        currency: r.currency,
        letters,
        withheld,
    })
}

/// The kept lines whose letter must not go out now: a tenant no longer in the roll, one
/// carrying an excluding flag, or one whose rent is neither the rent the batch raised nor the
/// new rent (changed by someone else since). A cohort line is checked for its cohort only.
fn withheld(batch: &Batch, now: &FacilityEcri) -> Vec<Failing> {
    let fresh = super::recheck::by_key(now);
    let mut out = Vec::new();
    for l in batch
        .lines
        .iter()
        .filter(|l| !l.excluded && l.tenant_id.is_some())
    {
        let k = key(
            l.tenant_id.as_deref(),
            &l.size,
            l.months_since_last_increase,
        );
        let fail = |guardrail: &str, reason: String| Failing::of(l, guardrail, reason);
        let Some(t) = fresh.get(&k) else {
            out.push(fail(
                "not_in_roll",
                "the tenant is no longer in the rent roll".to_owned(),
            ));
            continue;
        };
        if let Some(flag) = now.settings.excludes(&t.input.flags) {
            out.push(fail(
                "excluded_flag",
                format!("flagged `{flag}` since the approval: never increased"),
            ));
        } else if (t.input.rent - l.current_rent).abs() > 0.005
            && (t.input.rent - l.new_rent).abs() > 0.005
        {
            out.push(fail(
                "rent_changed",
                format!(
                    "the rent is now {:.2}, neither the {:.2} raised nor the new {:.2}",
                    t.input.rent, l.current_rent, l.new_rent
                ),
            ));
        }
    }
    out
}
