//! The evidence the stay model learns from: the records of the company's past increases (the
//! rolls' rent changes, and the notices of its approved batches) turned into outcomes by
//! `domain::ecri::evidence`, and the tenants it left alone, read from the rent rolls.
//!
//! Per facility, as of its roll in force (a window counts once the roll has reached its end):
//! - each increase: an upward rent change of the roll, with the notice of the approved batch
//!   line of the same tenant whose notice date is on or before it and whose effective date is
//!   at most [`APPLY_SLACK_DAYS`] before it (the window then starts at the notice); and each
//!   kept line of an approved batch whose new rent never showed, when the tenant moved out
//!   after the notice and before the line's effective date + [`APPLY_SLACK_DAYS`] (it left
//!   during the notice: a reaction). A line whose rent never showed while the tenant stayed
//!   past that day is counted as `not_applied` and left out. Past increases are the tenant's
//!   plausible upward rent changes before the window's start, and the increase the CRM dated
//!   before the tenant's first roll (`rent_roll_tenants.prior_increase_date`).
//! - the premium of each against the reference of the tenant's size and tier as of the first
//!   day of the month the window starts in (`references`), the one the decision reads;
//! - the baseline: the tenants in place 90 days before the roll's date who were neither
//!   increased since nor had a notice whose 90 days reach into that window, by tenure band.
//!
//! A handful of queries for the whole company, whatever its number of facilities.

mod baseline;
mod references;

use super::OUTCOME_DAYS;
use crate::error::Result;
use chrono::{Datelike, Duration, NaiveDate};
use domain::ecri::evidence::{
    cell, cell_outcome, increase_outcomes, judge, months_between, Cell, IncreaseRecord, LeftOut,
    Skip, Windows,
};
use domain::ecri::Outcome;
use domain::ids::CompanyId;
use sqlx::PgPool;
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// Days after a line's effective date within which the roll is expected to show its new rent.
pub const APPLY_SLACK_DAYS: i64 = 45;
/// The stop-loss weighs the increases whose window started within this many days of the roll.
const RECENT_DAYS: i64 = 2 * OUTCOME_DAYS;

/// What one facility's model learns from.
#[derive(Clone, Debug, Default)]
pub(crate) struct FacilityEvidence {
    /// The increases whose window is over or, for a share seen, still open (alike ones
    /// grouped), and the baseline by tenure band.
    pub outcomes: Vec<Outcome>,
    /// The increases whose window is over and started in the last 180 days (and the
    /// baseline): what the stop-loss weighs.
    pub recent: Vec<Outcome>,
    /// Records of increases left out, by reason (tenants).
    pub left_out: LeftOut,
    /// Increases counted that were judged from their notice.
    pub from_notices: u32,
    /// Increases counted from a window still open, for the share of it seen.
    pub open: u32,
}

/// Outcomes pooled in cells (`evidence::cell`): per cell, tenants and those who moved out.
pub(crate) type Cells = BTreeMap<Cell, (u32, u32)>;

/// The cells of `outcomes`.
pub(crate) fn cells_of<'a>(outcomes: impl IntoIterator<Item = &'a Outcome>) -> Cells {
    let mut cells = Cells::new();
    for o in outcomes {
        let c = cells.entry(cell(o)).or_default();
        c.0 = c.0.saturating_add(o.tenants);
        c.1 = c.1.saturating_add(o.moved_out.min(o.tenants));
    }
    cells
}

/// The outcomes of the pooled cells less a facility's own (`part`): the company a facility is
/// shrunk toward, without what it would count twice.
pub(crate) fn others(pooled: &Cells, part: &Cells) -> Vec<Outcome> {
    pooled
        .iter()
        .map(|(c, (n, left))| {
            let (pn, pl) = part.get(c).copied().unwrap_or((0, 0));
            (c, n.saturating_sub(pn), left.saturating_sub(pl))
        })
        .filter(|(_, n, _)| *n > 0)
        .map(|(c, n, left)| cell_outcome(c, n, left))
        .collect()
}

/// One increase as read, before its reference is known.
struct Raw {
    facility_id: Uuid,
    size: String,
    /// The tenant's tier as compared (`tiers::tier_key`), '' when the roll names none.
    tier: String,
    record: IncreaseRecord,
}

/// A rent change upward of the roll.
struct Change {
    facility_id: Uuid,
    tenant_id: String,
    size: String,
    tier: String,
    date: NaiveDate,
    before: f64,
    after: f64,
    move_in: Option<NaiveDate>,
    moved_out_on: Option<NaiveDate>,
    /// The tenant's increase before its first roll, as the CRM told it.
    prior: Option<NaiveDate>,
}

/// A kept line of an approved batch.
struct Notice {
    facility_id: Uuid,
    tenant_id: String,
    size: String,
    tier: String,
    notice: NaiveDate,
    effective: NaiveDate,
    before: f64,
    after: f64,
    move_in: Option<NaiveDate>,
    moved_out_on: Option<NaiveDate>,
    /// The tenant's increase before its first roll, as the CRM told it.
    prior: Option<NaiveDate>,
}

/// The evidence of each facility of the company that has a roll (of those of `only`, when
/// given).
pub(crate) async fn evidence(
    pool: &PgPool,
    company_id: CompanyId,
    only: Option<&[Uuid]>,
) -> Result<BTreeMap<Uuid, FacilityEvidence>> {
    let only: Option<Vec<Uuid>> = only.map(<[Uuid]>::to_vec);
    let rolls: BTreeMap<Uuid, NaiveDate> = sqlx::query!(
        r#"SELECT id, rent_roll_date AS "d!" FROM facilities
           WHERE company_id = $1 AND rent_roll_date IS NOT NULL
             AND ($2::uuid[] IS NULL OR id = ANY($2))"#,
        company_id.uuid(),
        only.as_deref()
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|r| (r.id, r.d))
    .collect();
    let mut out: BTreeMap<Uuid, FacilityEvidence> = BTreeMap::new();
    if rolls.is_empty() {
        return Ok(out);
    }
    let (changes, notices) = read_increases(pool, company_id, only.as_deref()).await?;
    let (raws, not_applied) = records(changes, notices, &rolls);
    let keys: BTreeSet<references::Key> = raws.iter().map(reference_key).collect();
    let refs = references::references(pool, &keys).await?;
    let mut by_facility: BTreeMap<Uuid, Vec<(IncreaseRecord, bool)>> = BTreeMap::new();
    for mut raw in raws {
        let Some(&as_of) = rolls.get(&raw.facility_id) else {
            continue;
        };
        raw.record.reference_rate = refs.get(&reference_key(&raw)).copied();
        let start = raw.record.notice_date.unwrap_or(raw.record.effective_date);
        let recent = start > as_of - Duration::days(RECENT_DAYS);
        by_facility
            .entry(raw.facility_id)
            .or_default()
            .push((raw.record, recent));
    }
    for (id, as_of) in &rolls {
        let records = by_facility.remove(id).unwrap_or_default();
        let all: Vec<IncreaseRecord> = records.iter().map(|(r, _)| r.clone()).collect();
        let recent: Vec<IncreaseRecord> = records
            .into_iter()
            .filter(|(_, recent)| *recent)
            .map(|(r, _)| r)
            .collect();
        let ev = increase_outcomes(&all, *as_of, Windows::Open);
        let mut left_out = ev.left_out;
        left_out.not_applied = not_applied.get(id).copied().unwrap_or(0);
        out.insert(
            *id,
            FacilityEvidence {
                outcomes: ev.outcomes,
                recent: increase_outcomes(&recent, *as_of, Windows::Complete).outcomes,
                left_out,
                from_notices: ev.from_notices,
                open: ev.open,
            },
        );
    }
    for (id, o) in baseline::baseline(pool, company_id, only.as_deref()).await? {
        if let Some(f) = out.get_mut(&id) {
            f.outcomes.extend(o.iter().copied());
            f.recent.extend(o);
        }
    }
    Ok(out)
}

/// What the reference of a record is looked up by: its facility, size, tier and day.
fn reference_key(r: &Raw) -> references::Key {
    (
        r.facility_id,
        r.size.clone(),
        r.tier.clone(),
        key_date(&r.record),
    )
}

/// The day the reference of a record is taken on: the first of the month its window starts in.
fn key_date(r: &IncreaseRecord) -> NaiveDate {
    let start = r.notice_date.unwrap_or(r.effective_date);
    start.with_day(1).unwrap_or(start)
}

/// The company's upward rent changes and the kept lines of its approved batches, each with
/// the tenant's move-in and move-out.
async fn read_increases(
    pool: &PgPool,
    company_id: CompanyId,
    only: Option<&[Uuid]>,
) -> Result<(Vec<Change>, Vec<Notice>)> {
    let changes = sqlx::query!(
        r#"SELECT e.facility_id, e.tenant_id, e.size, e.event_date,
                  lower(btrim(coalesce(t.tier, ''))) AS "tier!",
                  e.rent_before AS "before!", e.rent_after AS "after!",
                  t.move_in_date AS "move_in?", t.moved_out_on,
                  t.prior_increase_date AS "prior?"
           FROM rent_roll_events e
           LEFT JOIN rent_roll_tenants t
             ON t.facility_id = e.facility_id AND t.tenant_id = e.tenant_id
           WHERE e.company_id = $1 AND e.kind = 'rent_changed'
             AND e.rent_after > e.rent_before
             AND ($2::uuid[] IS NULL OR e.facility_id = ANY($2))
           ORDER BY e.facility_id, e.tenant_id, e.event_date, e.id"#,
        company_id.uuid(),
        only
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|r| Change {
        facility_id: r.facility_id,
        tenant_id: r.tenant_id,
        size: r.size,
        tier: r.tier,
        date: r.event_date,
        before: r.before,
        after: r.after,
        move_in: r.move_in,
        moved_out_on: r.moved_out_on,
        prior: r.prior,
    })
    .collect();
    let notices = sqlx::query!(
        r#"SELECT b.facility_id, l.tenant_id AS "tenant_id!", l.size,
                  lower(btrim(coalesce(t.tier, ''))) AS "tier!",
                  b.notice_date AS "notice!", b.effective_date AS "effective!",
                  l.current_rent, l.new_rent,
                  t.move_in_date AS "move_in?", t.moved_out_on,
                  t.prior_increase_date AS "prior?"
           FROM ecri_batches b
           JOIN ecri_batch_lines l ON l.batch_id = b.id
           LEFT JOIN rent_roll_tenants t
             ON t.facility_id = b.facility_id AND t.tenant_id = l.tenant_id
           WHERE b.company_id = $1 AND b.status = 'approved' AND NOT l.excluded
             AND l.tenant_id IS NOT NULL
             AND b.notice_date IS NOT NULL AND b.effective_date IS NOT NULL
             AND ($2::uuid[] IS NULL OR b.facility_id = ANY($2))
           ORDER BY b.facility_id, l.tenant_id, b.notice_date"#,
        company_id.uuid(),
        only
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|r| Notice {
        facility_id: r.facility_id,
        tenant_id: r.tenant_id,
        size: r.size,
        tier: r.tier,
        notice: r.notice,
        effective: r.effective,
        before: r.current_rent,
        after: r.new_rent,
        move_in: r.move_in,
        moved_out_on: r.moved_out_on,
        prior: r.prior,
    })
    .collect();
    Ok((changes, notices))
}

/// The records of increases (without their reference yet), and per facility the notices
/// whose new rent never showed though the tenant stayed.
fn records(
    changes: Vec<Change>,
    notices: Vec<Notice>,
    rolls: &BTreeMap<Uuid, NaiveDate>,
) -> (Vec<Raw>, BTreeMap<Uuid, u32>) {
    let mut by_tenant: BTreeMap<(Uuid, String), Vec<Notice>> = BTreeMap::new();
    for n in notices {
        by_tenant
            .entry((n.facility_id, n.tenant_id.clone()))
            .or_default()
            .push(n);
    }
    let mut out = Vec::new();
    // Each tenant's plausible increases so far (window start, effective date), for
    // `past_increases` and `months_since_last_increase`.
    let mut past: BTreeMap<(Uuid, String), Vec<(NaiveDate, NaiveDate)>> = BTreeMap::new();
    let mut used: BTreeMap<(Uuid, String), Vec<bool>> = BTreeMap::new();
    for c in changes {
        let key = (c.facility_id, c.tenant_id.clone());
        let lines = by_tenant.get(&key).map_or(&[][..], Vec::as_slice);
        let taken = used
            .entry(key.clone())
            .or_insert_with(|| vec![false; lines.len()]);
        // The notice of this change: told on or before it, effective at most the slack before.
        let matched = lines.iter().enumerate().position(|(i, n)| {
            !taken[i]
                && n.notice <= c.date
                && c.date <= n.effective + Duration::days(APPLY_SLACK_DAYS)
        });
        let notice = matched.map(|i| {
            taken[i] = true;
            lines[i].notice
        });
        let start = notice.unwrap_or(c.date);
        let record = IncreaseRecord {
            notice_date: notice,
            effective_date: c.date,
            rent_before: c.before,
            rent_after: c.after,
            reference_rate: None,
            moved_out_on: c.moved_out_on,
            months_since_move_in: months_between(c.move_in, start),
            past_increases: 0,
            months_since_last_increase: None,
        };
        out.push(with_past(
            Raw {
                facility_id: c.facility_id,
                size: c.size,
                tier: c.tier,
                record,
            },
            &mut past,
            &key,
            c.prior,
        ));
    }
    let mut not_applied: BTreeMap<Uuid, u32> = BTreeMap::new();
    for (key, lines) in by_tenant {
        let taken = used.get(&key);
        for (i, n) in lines.into_iter().enumerate() {
            if taken.is_some_and(|t| t[i]) {
                continue;
            }
            let due = n.effective + Duration::days(APPLY_SLACK_DAYS);
            let left_in_notice = n.moved_out_on.is_some_and(|d| d > n.notice && d <= due);
            let roll = rolls.get(&n.facility_id).copied();
            if !left_in_notice && roll.is_some_and(|r| r >= due) {
                let c = not_applied.entry(n.facility_id).or_default();
                *c = c.saturating_add(1);
                continue;
            }
            let record = IncreaseRecord {
                notice_date: Some(n.notice),
                effective_date: n.effective,
                rent_before: n.before,
                rent_after: n.after,
                reference_rate: None,
                moved_out_on: n.moved_out_on,
                months_since_move_in: months_between(n.move_in, n.notice),
                past_increases: 0,
                months_since_last_increase: None,
            };
            out.push(with_past(
                Raw {
                    facility_id: n.facility_id,
                    size: n.size,
                    tier: n.tier,
                    record,
                },
                &mut past,
                &key,
                n.prior,
            ));
        }
    }
    (out, not_applied)
}

/// The record with the tenant's plausible increases whose window started before its own. A
/// tenant's past starts with `prior`, the increase the CRM dated before its first roll: a
/// notice to a tenant raised before the service knew it is a notice to a tenant raised before,
/// as the decision reads it.
fn with_past(
    mut raw: Raw,
    past: &mut BTreeMap<(Uuid, String), Vec<(NaiveDate, NaiveDate)>>,
    key: &(Uuid, String),
    prior: Option<NaiveDate>,
) -> Raw {
    let start = raw.record.notice_date.unwrap_or(raw.record.effective_date);
    let before = past
        .entry(key.clone())
        .or_insert_with(|| prior.map(|p| vec![(p, p)]).unwrap_or_default());
    raw.record.past_increases = before.iter().filter(|(d, _)| *d < start).count() as u32;
    raw.record.months_since_last_increase = before
        .iter()
        .filter(|(d, e)| *d < start && *e <= start)
        .map(|(_, e)| *e)
        .max()
        .and_then(|e| months_between(Some(e), start));
    // Plausible whatever the window's state: judged as if the roll were far ahead.
    let far = start + Duration::days(10 * OUTCOME_DAYS);
    let probe = IncreaseRecord {
        moved_out_on: None,
        ..raw.record.clone()
    };
    if !matches!(
        judge(&probe, far),
        Err(Skip::NonPositiveRent
            | Skip::NotAnIncrease
            | Skip::TooLarge
            | Skip::AtMoveIn
            | Skip::InconsistentDates)
    ) {
        before.push((start, raw.record.effective_date));
    }
    raw
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(inc: f64, prem: f64, tenants: u32, left: u32) -> Outcome {
        Outcome {
            increase_pct: inc,
            premium_pct: prem,
            tenants,
            moved_out: left,
            ..Outcome::default()
        }
    }

    #[test]
    fn the_company_of_a_facility_is_the_others_pooled_in_cells() {
        let a = vec![o(10.0, 5.1, 10, 2), o(0.0, 0.0, 30, 3)];
        let b = vec![o(10.1, 4.9, 5, 1), o(0.0, 0.0, 20, 1)];
        let c = vec![o(20.0, 0.0, 4, 4)];
        let pooled = cells_of(a.iter().chain(&b).chain(&c));
        let mut for_a = others(&pooled, &cells_of(&a));
        for_a.sort_by(|x, y| x.increase_pct.total_cmp(&y.increase_pct));
        assert_eq!(
            for_a,
            vec![o(0.0, 0.0, 20, 1), o(10.0, 5.0, 5, 1), o(20.0, 0.0, 4, 4)]
        );
        // a's and b's increases share a cell: for c, one outcome of their 15 tenants.
        let for_c = others(&pooled, &cells_of(&c));
        assert_eq!(for_c.len(), 2, "{for_c:?}");
        assert!(for_c.contains(&o(10.0, 5.0, 15, 3)));
        assert!(for_c.contains(&o(0.0, 0.0, 50, 4)));
    }
}
