//! Calibration of the stay model across the company's approved batches: for each increased
//! tenant whose 90 days after the notice are in the facility's rent roll, the stay the engine
//! predicted (the line's `stay_probability`) against whether the tenant was still in place 90
//! days after the notice, by decile of predicted stay and by facility.
//!
//! - Tenants: the lines kept (not left out, the held-out ones included in neither side) of
//!   approved batches made from a rent roll, of tenants in place at the notice date, as the
//!   outcome counts them (`outcome::realized_stay_pct`): a tenant stayed unless the roll shows
//!   it gone (a move-out dated after the notice and on or before notice + 90 days).
//! - Deciles: the tenants ranked by predicted stay (ties by batch and tenant), the rank `r` of
//!   `n` in decile `floor(10 r / n) + 1`; a decile without tenants is left out (under ten
//!   tenants). Each bin: its tenants, the mean predicted stay and the share that stayed, %.
//! - Only the facilities in the reader's scope; a company without such tenants answers zeros.

use super::outcome::STAY_DAYS;
use crate::access::Scope;
use crate::analytics::reports::{ids, scope};
use crate::error::Result;
use domain::ids::{CompanyId, FacilityId};
use domain::values::round2;
use sqlx::PgPool;
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// Bins of predicted stay.
pub const DECILES: usize = 10;

/// One tenant counted: what the engine predicted and what happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Counted {
    pub facility_id: Uuid,
    pub batch_id: Uuid,
    pub tenant_id: String,
    /// 0 to 1.
    pub predicted: f64,
    pub stayed: bool,
}

/// A bin of tenants: the mean predicted stay against the share that stayed.
#[derive(Clone, Debug, PartialEq)]
pub struct Bin {
    pub tenants: usize,
    /// Mean predicted stay, %.
    pub predicted_stay_pct: f64,
    /// Share of the bin still in place 90 days after the notice, %.
    pub realized_stay_pct: f64,
}

/// A decile of predicted stay.
#[derive(Clone, Debug, PartialEq)]
pub struct Decile {
    /// 1 (lowest predicted stay) to 10.
    pub decile: u32,
    /// The lowest and highest predicted stay in the decile, %.
    pub predicted_low_pct: f64,
    pub predicted_high_pct: f64,
    pub bin: Bin,
}

/// One facility's tenants.
#[derive(Clone, Debug, PartialEq)]
pub struct FacilityBin {
    pub facility_id: Uuid,
    pub facility_name: String,
    /// Approved batches with tenants counted.
    pub batches: usize,
    pub bin: Bin,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// Approved batches with tenants counted.
    pub batches: usize,
    pub tenants: usize,
    /// Over every tenant counted; none without tenants.
    pub overall: Option<Bin>,
    pub deciles: Vec<Decile>,
    /// Facilities with tenants counted, by name.
    pub facilities: Vec<FacilityBin>,
}

/// The calibration of the company's approved batches (one facility's with `facility`), over
/// the facilities `allowed` lets the reader see; 404 for a facility not the company's or
/// outside the scope.
pub async fn calibration(
    pool: &PgPool,
    company_id: CompanyId,
    facility: Option<FacilityId>,
    allowed: &Scope,
) -> Result<Calibration> {
    let facilities = scope(pool, company_id, facility, allowed).await?;
    let rows = sqlx::query!(
        r#"SELECT b.facility_id, b.id AS batch_id, l.tenant_id AS "tenant_id!", l.stay_probability,
                  (NOT EXISTS (SELECT 1 FROM rent_roll_events e
                               WHERE e.facility_id = b.facility_id AND e.tenant_id = l.tenant_id
                                 AND e.kind = 'moved_out' AND e.event_date > b.notice_date
                                 AND e.event_date <= b.notice_date + $3::int)
                   AND (t.moved_out_on IS NULL OR t.moved_out_on > b.notice_date + $3::int)) AS "stayed!"
           FROM ecri_batches b
           JOIN facilities f ON f.id = b.facility_id
           JOIN ecri_batch_lines l ON l.batch_id = b.id
           JOIN rent_roll_tenants t ON t.facility_id = b.facility_id AND t.tenant_id = l.tenant_id
           WHERE b.company_id = $1 AND b.facility_id = ANY($2) AND b.status = 'approved'
             AND b.basis = 'rent_roll' AND NOT l.excluded AND l.tenant_id IS NOT NULL
             AND f.rent_roll_date >= b.notice_date + $3::int
             AND t.first_seen_on <= b.notice_date AND t.move_in_date <= b.notice_date
             AND (t.moved_out_on IS NULL OR t.moved_out_on > b.notice_date)"#,
        company_id.uuid(),
        &ids(&facilities),
        STAY_DAYS as i32
    )
    .fetch_all(pool)
    .await?;
    let counted: Vec<Counted> = rows
        .into_iter()
        .map(|r| Counted {
            facility_id: r.facility_id,
            batch_id: r.batch_id,
            tenant_id: r.tenant_id,
            predicted: r.stay_probability,
            stayed: r.stayed,
        })
        .collect();
    let names: BTreeMap<Uuid, String> = facilities.into_iter().map(|f| (f.id, f.name)).collect();
    Ok(report(&counted, &names))
}

/// The report over the tenants counted; `names` names the facilities (in their order).
pub fn report(counted: &[Counted], names: &BTreeMap<Uuid, String>) -> Calibration {
    let batches: BTreeSet<Uuid> = counted.iter().map(|c| c.batch_id).collect();
    let mut facilities: Vec<FacilityBin> = names
        .iter()
        .filter_map(|(id, name)| {
            let of: Vec<&Counted> = counted.iter().filter(|c| c.facility_id == *id).collect();
            Some(FacilityBin {
                facility_id: *id,
                facility_name: name.clone(),
                batches: of.iter().map(|c| c.batch_id).collect::<BTreeSet<_>>().len(),
                bin: bin(&of)?,
            })
        })
        .collect();
    facilities.sort_by(|a, b| {
        (a.facility_name.to_lowercase(), a.facility_id)
            .cmp(&(b.facility_name.to_lowercase(), b.facility_id))
    });
    Calibration {
        batches: batches.len(),
        tenants: counted.len(),
        overall: bin(&counted.iter().collect::<Vec<_>>()),
        deciles: deciles(counted),
        facilities,
    }
}

/// A bin of tenants; none when empty.
fn bin(of: &[&Counted]) -> Option<Bin> {
    if of.is_empty() {
        return None;
    }
    let n = of.len() as f64;
    Some(Bin {
        tenants: of.len(),
        predicted_stay_pct: round2(of.iter().map(|c| c.predicted).sum::<f64>() / n * 100.0),
        realized_stay_pct: round2(of.iter().filter(|c| c.stayed).count() as f64 / n * 100.0),
    })
}

/// The tenants by decile of predicted stay, lowest first; empty deciles left out.
pub fn deciles(counted: &[Counted]) -> Vec<Decile> {
    let mut ranked: Vec<&Counted> = counted.iter().collect();
    ranked.sort_by(|a, b| {
        a.predicted
            .total_cmp(&b.predicted)
            .then_with(|| (a.batch_id, &a.tenant_id).cmp(&(b.batch_id, &b.tenant_id)))
    });
    let n = ranked.len();
    let mut bins: Vec<Vec<&Counted>> = vec![Vec::new(); DECILES];
    for (r, c) in ranked.into_iter().enumerate() {
        bins[r * DECILES / n].push(c);
    }
    bins.into_iter()
        .enumerate()
        .filter_map(|(i, of)| {
            let b = bin(&of)?;
            Some(Decile {
                decile: i as u32 + 1,
                predicted_low_pct: round2(of.first()?.predicted * 100.0),
                predicted_high_pct: round2(of.last()?.predicted * 100.0),
                bin: b,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(n: usize, stayed_every: usize) -> Vec<Counted> {
        (0..n)
            .map(|i| Counted {
                facility_id: Uuid::from_u128(1 + (i % 2) as u128),
                batch_id: Uuid::from_u128(100 + (i % 3) as u128),
                tenant_id: format!("T-{i:02}"),
                // Predicted 0.50 to 0.69 across the tenants, in reverse of their ids.
                predicted: 0.5 + (n - 1 - i) as f64 / 100.0,
                stayed: i % stayed_every != 0,
            })
            .collect()
    }

    #[test]
    fn twenty_tenants_make_ten_deciles_of_two() {
        let c = counted(20, 4);
        let d = deciles(&c);
        assert_eq!(d.len(), 10);
        // Decile 1: the two lowest predictions, 0.50 (T-19) and 0.51 (T-18): both stayed.
        assert_eq!(d[0].decile, 1);
        assert_eq!(
            (d[0].predicted_low_pct, d[0].predicted_high_pct),
            (50.0, 51.0)
        );
        assert_eq!(d[0].bin.tenants, 2);
        assert_eq!(d[0].bin.predicted_stay_pct, 50.5);
        assert_eq!(d[0].bin.realized_stay_pct, 100.0);
        // Decile 8: 0.64 (T-05) and 0.65 (T-04, which left): half stayed.
        assert_eq!(d[7].bin.predicted_stay_pct, 64.5);
        assert_eq!(d[7].bin.realized_stay_pct, 50.0);
        // Decile 10: 0.68 (T-01) and 0.69 (T-00, which left).
        assert_eq!(d[9].bin.predicted_stay_pct, 68.5);
        assert_eq!(d[9].bin.realized_stay_pct, 50.0);
    }

    #[test]
    fn under_ten_tenants_leave_deciles_empty_and_nothing_answers_zeros() {
        let c = counted(4, 2);
        let d = deciles(&c);
        // Ranks 0..3 of 4 fall in deciles 1, 3, 6 and 8.
        assert_eq!(d.iter().map(|d| d.decile).collect::<Vec<_>>(), [1, 3, 6, 8]);
        assert!(d.iter().all(|d| d.bin.tenants == 1));
        let names = BTreeMap::from([(Uuid::from_u128(1), "North".to_owned())]);
        let r = report(&[], &names);
        assert_eq!((r.batches, r.tenants), (0, 0));
        assert!(r.deciles.is_empty() && r.facilities.is_empty() && r.overall.is_none());
    }

    #[test]
    fn each_facility_has_its_own_bin() {
        let c = counted(20, 4);
        let names = BTreeMap::from([
            (Uuid::from_u128(1), "South".to_owned()),
            (Uuid::from_u128(2), "north".to_owned()),
            (Uuid::from_u128(3), "Empty".to_owned()),
        ]);
        let r = report(&c, &names);
        assert_eq!((r.batches, r.tenants), (3, 20));
        let names: Vec<&str> = r
            .facilities
            .iter()
            .map(|f| f.facility_name.as_str())
            .collect();
        assert_eq!(names, ["north", "South"]);
        // Facility 1 holds the even ids: 0, 4, 8, 12, 16 left of ten; predicted 0.69 - i/100.
        let south = &r.facilities[1];
        assert_eq!(south.bin.tenants, 10);
        assert_eq!(south.bin.realized_stay_pct, 50.0);
        assert_eq!(south.bin.predicted_stay_pct, 60.0);
        assert_eq!(south.batches, 3);
        assert_eq!(r.overall.unwrap().realized_stay_pct, 75.0);
    }
}
