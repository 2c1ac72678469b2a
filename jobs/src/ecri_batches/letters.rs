//! The mail merge of an approved batch: one letter per customer (a customer's units together,
//! each listed), with the customer's name and mailing address from the rent roll when the
//! reader's role may see them.

use super::{get, key, Batch, Failing, Line, Status};
use crate::ecri::FacilityEcri;
use crate::error::{Error, Result};
use crate::rent_roll::Mailing;
use domain::ids::{CompanyId, FacilityId};
use domain::values::round2;
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

/// One unit of a letter: a line of the batch.
#[derive(Clone, Debug, PartialEq)]
pub struct LetterUnit {
    /// None for a cohort line (no tenant to address: the row stands for `tenant_count`).
    pub tenant_id: Option<String>,
    /// The unit's number at the facility, when the roll gives it.
    pub unit_id: Option<String>,
    pub tenant_count: i32,
    pub size: String,
    pub current_rent: f64,
    pub new_rent: f64,
    pub increase: f64,
    pub increase_pct: f64,
}

/// One letter: a customer (a tenant without a customer id is its own) and its units.
#[derive(Clone, Debug, PartialEq)]
pub struct Letter {
    pub customer_id: Option<String>,
    /// The customer's name and address; empty when the roll has none or the reader's role may
    /// not see tenants.
    pub mailing: Mailing,
    pub units: Vec<LetterUnit>,
}

impl Letter {
    pub fn tenant_count(&self) -> i32 {
        self.units.iter().map(|u| u.tenant_count).sum()
    }

    /// The rents of every unit together (per month; a cohort's for each of its tenants).
    pub fn current_rent(&self) -> f64 {
        round2(self.units.iter().map(|u| u.current_rent).sum())
    }

    pub fn new_rent(&self) -> f64 {
        round2(self.units.iter().map(|u| u.new_rent).sum())
    }

    pub fn increase(&self) -> f64 {
        round2(self.new_rent() - self.current_rent())
    }

    pub fn increase_pct(&self) -> f64 {
        let now = self.current_rent();
        if now > 0.0 {
            round2((self.new_rent() / now - 1.0) * 100.0)
        } else {
            0.0
        }
    }
}

/// An approved batch's letters and what each carries besides its lines.
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

impl Letters {
    /// The file's name: the facility's name and the notice date (`Elm-Street-2026-12-01`),
    /// letters, digits and dashes only.
    pub fn file_stem(&self) -> String {
        let name: String = self
            .batch
            .facility_name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let name = name
            .split('-')
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("-");
        let name = if name.is_empty() {
            "facility".to_owned()
        } else {
            name
        };
        match self.batch.notice_date {
            Some(d) => format!("{name}-{d}"),
            None => name,
        }
    }
}

/// The batch's letters (lines not left out, a customer's together, in the order of their first
/// line) with the facility's address; 409 unless the batch is approved (a letter carries the
/// notice and effective dates). `personal`: whether the reader's role may see tenants'
/// names and addresses (`Role::sees_tenants`); without it they are left empty.
pub async fn letters(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
    id: Uuid,
    personal: bool,
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
    let kept: Vec<&Line> = batch
        .lines
        .iter()
        .filter(|l| !l.excluded && !withheld.iter().any(|w| w.line == l.line))
        .collect();
    let mailing = mailing(pool, facility_id, &kept).await?;
    let letters = group(&kept, &mailing, personal);
    Ok(Letters {
        batch,
        facility_address: r.address,
        currency: r.currency,
        letters,
        withheld,
    })
}

/// The roll's unit numbers, names and addresses of the lines' tenants, by tenant id.
async fn mailing(
    pool: &PgPool,
    facility_id: FacilityId,
    lines: &[&Line],
) -> Result<HashMap<String, Mailing>> {
    let ids: Vec<String> = lines.iter().filter_map(|l| l.tenant_id.clone()).collect();
    let rows = sqlx::query!(
        "SELECT tenant_id, unit_id, customer_name, address_line1, address_line2, city, region,
                postal_code
         FROM rent_roll_tenants WHERE facility_id = $1 AND tenant_id = ANY($2)",
        facility_id.uuid(),
        &ids
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            (
                r.tenant_id,
                Mailing {
                    unit_id: r.unit_id,
                    customer_name: r.customer_name,
                    address_line1: r.address_line1,
                    address_line2: r.address_line2,
                    city: r.city,
                    region: r.region,
                    postal_code: r.postal_code,
                },
            )
        })
        .collect())
}

/// One letter per customer (a line without a customer is its own), in the order of each
/// customer's first line; the name and address of the customer's first unit that has one.
fn group(lines: &[&Line], mailing: &HashMap<String, Mailing>, personal: bool) -> Vec<Letter> {
    let mut out: Vec<Letter> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for l in lines {
        let m = l.tenant_id.as_ref().and_then(|t| mailing.get(t));
        let unit = LetterUnit {
            tenant_id: l.tenant_id.clone(),
            unit_id: m.and_then(|m| m.unit_id.clone()),
            tenant_count: l.tenant_count,
            size: l.size.clone(),
            current_rent: l.current_rent,
            new_rent: l.new_rent,
            increase: l.increase(),
            increase_pct: l.increase_pct(),
        };
        let who = match (&l.customer_id, &l.tenant_id) {
            (Some(c), _) => Some(format!("c:{c}")),
            (None, Some(t)) => Some(format!("t:{t}")),
            (None, None) => None,
        };
        let person = m
            .filter(|_| personal)
            .map(|m| Mailing {
                unit_id: None,
                ..m.clone()
            })
            .unwrap_or_default();
        match who.as_ref().and_then(|w| at.get(w)) {
            Some(&i) => {
                let letter = &mut out[i];
                if letter.mailing == Mailing::default() {
                    letter.mailing = person;
                }
                letter.units.push(unit);
            }
            None => {
                if let Some(w) = who {
                    at.insert(w, out.len());
                }
                out.push(Letter {
                    customer_id: l.customer_id.clone(),
                    mailing: person,
                    units: vec![unit],
                });
            }
        }
    }
    out
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
