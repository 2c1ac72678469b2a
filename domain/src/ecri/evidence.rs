//! From records of past increases to the stay model's outcomes (docs/ecri.md, "Learning,
//! pooled and shrunk"): which 90-day window each increase is judged over, whether the tenant
//! left within it, and which records are no evidence of a reaction at all.
//!
//! - The window starts at the notice date wherever it is known (the service's own approved
//!   batches), else at the effective date (an increase seen only in the rent roll). A tenant who
//!   moves out between the notice and the effective date has reacted to the increase: it counts
//!   as a move-out of the increase, never as one of a tenant not increased.
//! - A window counts once complete: `as_of >= start + 90 days`. For the stay model's learning
//!   ([`Windows::Open`]) a window still open counts too, once [`OPEN_STEP_DAYS`] of it have
//!   passed, for what has been seen: the move-outs up to the last whole step of
//!   [`OPEN_STEP_DAYS`] days, with the share of the window seen (`Outcome::open_share`). Younger
//!   ones (and every open one for [`Windows::Complete`], the stop-loss's reading) are counted
//!   as `incomplete` and wait.
//! - Records that cannot be an increase a tenant reacted to are left out and counted by reason
//!   ([`LeftOut`]): a rent not positive, no increase, an increase above
//!   [`MAX_PLAUSIBLE_INCREASE_PCT`] (a promotion ending, a data fix), a new rent more than
//!   [`MAX_PLAUSIBLE_PREMIUM_PCT`] above its reference (a reference of another unit), a change
//!   within [`MIN_MONTHS_SINCE_MOVE_IN`] of the move-in or before it (a move-in rate that ends,
//!   a rent reset on a re-let), a notice after the effective date or more than
//!   [`MAX_NOTICE_LEAD_DAYS`] before it, a move-out on or before the window's start.
//! - Alike records (same increase, premium, tenure band and past increases, capped at
//!   [`PAST_INCREASES_CAP`]) are one outcome of their tenants: the fit's cost grows with rows.
//!   Tenure is grouped in bands ([`TENURE_EDGES`], months) and carried as the band's middle.

use super::stay::{raised_recently, Outcome};
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Days after the notice over which a move-out counts as caused by it.
pub const WINDOW_DAYS: i64 = 90;
/// An increase above this (% of the old rent) is not an increase a tenant was asked to take:
/// a promotion ending or a data fix. 60 is 2.4 times the engine's own largest step (25 %).
pub const MAX_PLAUSIBLE_INCREASE_PCT: f64 = 60.0;
/// A new rent more than this (%) above its reference is measured against the wrong reference.
pub const MAX_PLAUSIBLE_PREMIUM_PCT: f64 = 200.0;
/// A change within this many months of the move-in (or before it) is a move-in rate ending or a
/// rent reset on a re-let, not an increase of a tenant in place.
pub const MIN_MONTHS_SINCE_MOVE_IN: f64 = 1.0;
/// A notice more than this many days before its effective date is not the notice of it.
pub const MAX_NOTICE_LEAD_DAYS: i64 = 365;
/// Past increases beyond this are grouped with it.
pub const PAST_INCREASES_CAP: u32 = 3;
/// The edges of the tenure bands (months since move-in): under 3, 3-6, 6-12, 12-24, 24-48, 48
/// and more.
pub const TENURE_EDGES: [f64; 5] = [3.0, 6.0, 12.0, 24.0, 48.0];
/// The months each band is carried as (its middle; 72 for the last).
pub const TENURE_BAND_MONTHS: [f64; 6] = [1.5, 4.5, 9.0, 18.0, 36.0, 72.0];

/// An open window counts once this many days of it have passed, and is read in whole steps of
/// as many days (a tenth of the window): the first days say little, and the steps keep alike
/// records one outcome.
pub const OPEN_STEP_DAYS: i64 = 9;

/// Which windows [`increase_outcomes`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Windows {
    /// Only windows that are over (the stop-loss compares whole windows with whole windows).
    Complete,
    /// Open ones too, for what has been seen of them (the stay model's learning).
    Open,
}

/// Days in an average month.
const MONTH_DAYS: f64 = 365.25 / 12.0;

/// The band (0..=5) of a tenure in months: the number of edges at or below it.
pub fn tenure_band(months: f64) -> usize {
    TENURE_EDGES.iter().filter(|e| months >= **e).count()
}

/// Months since move-in, from dates (None when the move-in is unknown).
pub fn months_between(move_in: Option<NaiveDate>, day: NaiveDate) -> Option<f64> {
    move_in.map(|m| (day - m).num_days() as f64 / MONTH_DAYS)
}

/// One increase of one tenant.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IncreaseRecord {
    /// The day the tenant was told, where known (the service's own approved batches).
    pub notice_date: Option<NaiveDate>,
    /// The day the new rent took effect (the roll's rent_changed event).
    pub effective_date: NaiveDate,
    pub rent_before: f64,
    pub rent_after: f64,
    /// The rent the premium is measured against: the same definition as when deciding
    /// (competitor median, else street), as of the increase.
    pub reference_rate: Option<f64>,
    pub moved_out_on: Option<NaiveDate>,
    /// Months since move-in at the window's start; None when unknown.
    pub months_since_move_in: Option<f64>,
    /// Increases the tenant had before this one.
    pub past_increases: u32,
    /// Months from the effective date of the tenant's previous increase to this one's window
    /// start; None when none is known.
    pub months_since_last_increase: Option<f64>,
}

/// Why a record is not counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    Incomplete,
    NotAnIncrease,
    NonPositiveRent,
    TooLarge,
    ImplausiblePremium,
    AtMoveIn,
    InconsistentDates,
    GoneBeforeNotice,
}

/// Records left out, by reason (tenants).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LeftOut {
    /// The 90-day window is not over yet (waiting, not wrong).
    pub incomplete: u32,
    /// The new rent is not above the old one.
    pub not_an_increase: u32,
    /// A rent of zero or less (or not a number).
    pub non_positive_rent: u32,
    /// Above [`MAX_PLAUSIBLE_INCREASE_PCT`].
    pub too_large: u32,
    /// New rent above [`MAX_PLAUSIBLE_PREMIUM_PCT`] over its reference.
    pub implausible_premium: u32,
    /// Within a month of the move-in, or before the move-in on record (a re-let).
    pub at_move_in: u32,
    /// The notice after the effective date, or too long before it.
    pub inconsistent_dates: u32,
    /// Moved out on or before the window's start.
    pub gone_before_notice: u32,
    /// A notice whose new rent never showed in the roll, the tenant still in place (filled by
    /// the caller, which knows the roll).
    pub not_applied: u32,
}

impl LeftOut {
    fn count(&mut self, why: Skip) {
        let c = match why {
            Skip::Incomplete => &mut self.incomplete,
            Skip::NotAnIncrease => &mut self.not_an_increase,
            Skip::NonPositiveRent => &mut self.non_positive_rent,
            Skip::TooLarge => &mut self.too_large,
            Skip::ImplausiblePremium => &mut self.implausible_premium,
            Skip::AtMoveIn => &mut self.at_move_in,
            Skip::InconsistentDates => &mut self.inconsistent_dates,
            Skip::GoneBeforeNotice => &mut self.gone_before_notice,
        };
        *c = c.saturating_add(1);
    }

    /// Records that are no evidence of a reaction (all but the incomplete ones).
    pub fn implausible(&self) -> u32 {
        [
            self.not_an_increase,
            self.non_positive_rent,
            self.too_large,
            self.implausible_premium,
            self.at_move_in,
            self.inconsistent_dates,
            self.gone_before_notice,
            self.not_applied,
        ]
        .into_iter()
        .fold(0u32, u32::saturating_add)
    }

    /// Both counts added.
    pub fn add(&mut self, o: &LeftOut) {
        let pairs = [
            (&mut self.incomplete, o.incomplete),
            (&mut self.not_an_increase, o.not_an_increase),
            (&mut self.non_positive_rent, o.non_positive_rent),
            (&mut self.too_large, o.too_large),
            (&mut self.implausible_premium, o.implausible_premium),
            (&mut self.at_move_in, o.at_move_in),
            (&mut self.inconsistent_dates, o.inconsistent_dates),
            (&mut self.gone_before_notice, o.gone_before_notice),
            (&mut self.not_applied, o.not_applied),
        ];
        for (a, b) in pairs {
            *a = a.saturating_add(b);
        }
    }
}

/// The outcomes of the records counted, and those left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evidence {
    pub outcomes: Vec<Outcome>,
    pub left_out: LeftOut,
    /// Records counted (tenants).
    pub counted: u32,
    /// Of those, judged from their notice date (the rest from their effective date).
    pub from_notices: u32,
    /// Of those, counted from a window still open ([`Windows::Open`]).
    pub open: u32,
}

/// The window's start of a record counted, and whether the tenant left within it; or why it
/// is left out (`Incomplete` while the window is open).
pub fn judge(r: &IncreaseRecord, as_of: NaiveDate) -> Result<(NaiveDate, bool), Skip> {
    match judge_seen(r, as_of)? {
        (start, left, seen) if seen >= 1.0 => Ok((start, left)),
        _ => Err(Skip::Incomplete),
    }
}

/// [`judge`] with open windows: the window's start, whether the tenant left within what has
/// been seen of it, and the share seen (1 once it is over; for an open one the whole steps of
/// [`OPEN_STEP_DAYS`] days passed, the move-outs up to their end). `Incomplete` before the
/// first step.
pub fn judge_seen(r: &IncreaseRecord, as_of: NaiveDate) -> Result<(NaiveDate, bool, f64), Skip> {
    let rents = [r.rent_before, r.rent_after];
    if rents.iter().any(|x| !x.is_finite() || *x <= 0.0) {
        return Err(Skip::NonPositiveRent);
    }
    if r.rent_after <= r.rent_before {
        return Err(Skip::NotAnIncrease);
    }
    if increase_pct(r) > MAX_PLAUSIBLE_INCREASE_PCT {
        return Err(Skip::TooLarge);
    }
    if premium_pct(r) > MAX_PLAUSIBLE_PREMIUM_PCT {
        return Err(Skip::ImplausiblePremium);
    }
    if r.months_since_move_in
        .is_some_and(|m| m.is_nan() || m < MIN_MONTHS_SINCE_MOVE_IN)
    {
        return Err(Skip::AtMoveIn);
    }
    if let Some(n) = r.notice_date {
        let lead = (r.effective_date - n).num_days();
        if !(0..=MAX_NOTICE_LEAD_DAYS).contains(&lead) {
            return Err(Skip::InconsistentDates);
        }
    }
    let start = r.notice_date.unwrap_or(r.effective_date);
    if r.moved_out_on.is_some_and(|d| d <= start) {
        return Err(Skip::GoneBeforeNotice);
    }
    let end = start + chrono::Duration::days(WINDOW_DAYS);
    if as_of >= end {
        return Ok((start, r.moved_out_on.is_some_and(|d| d <= end), 1.0));
    }
    let steps = (as_of - start).num_days() / OPEN_STEP_DAYS;
    if steps < 1 {
        return Err(Skip::Incomplete);
    }
    let seen_until = start + chrono::Duration::days(steps * OPEN_STEP_DAYS);
    let seen = (steps * OPEN_STEP_DAYS) as f64 / WINDOW_DAYS as f64;
    Ok((start, r.moved_out_on.is_some_and(|d| d <= seen_until), seen))
}

fn increase_pct(r: &IncreaseRecord) -> f64 {
    (r.rent_after / r.rent_before - 1.0) * 100.0
}

fn premium_pct(r: &IncreaseRecord) -> f64 {
    r.reference_rate
        .filter(|x| x.is_finite() && *x > 0.0)
        .map_or(0.0, |x| (r.rent_after / x - 1.0) * 100.0)
}

/// Alike records: increase and premium (bits), tenure band (6 = unknown), past increases
/// (capped), the increase in currency (bits), a recent previous increase, the share seen (bits).
type GroupKey = (u64, u64, usize, u32, u64, bool, u64);

/// The outcomes of the records whose 90-day window is complete on `as_of` (and with
/// [`Windows::Open`] of those still open, for what has been seen), alike ones grouped, with the
/// records left out counted by reason.
pub fn increase_outcomes(
    records: &[IncreaseRecord],
    as_of: NaiveDate,
    windows: Windows,
) -> Evidence {
    let mut ev = Evidence::default();
    let mut groups: BTreeMap<GroupKey, Outcome> = BTreeMap::new();
    for r in records {
        let judged = judge_seen(r, as_of).and_then(|j| match windows {
            Windows::Complete if j.2 < 1.0 => Err(Skip::Incomplete),
            _ => Ok(j),
        });
        let (left, seen) = match judged {
            Ok((_, left, seen)) => (left, seen),
            Err(why) => {
                ev.left_out.count(why);
                continue;
            }
        };
        ev.counted = ev.counted.saturating_add(1);
        if seen < 1.0 {
            ev.open = ev.open.saturating_add(1);
        }
        if r.notice_date.is_some() {
            ev.from_notices = ev.from_notices.saturating_add(1);
        }
        let band = r.months_since_move_in.map(tenure_band);
        let past = r.past_increases.min(PAST_INCREASES_CAP);
        let (inc, prem) = (increase_pct(r), premium_pct(r));
        let amount = r.rent_after - r.rent_before;
        let recent = raised_recently(r.months_since_last_increase);
        let key = (
            inc.to_bits(),
            prem.to_bits(),
            band.unwrap_or(6),
            past,
            amount.to_bits(),
            recent,
            seen.to_bits(),
        );
        let o = groups.entry(key).or_insert_with(|| Outcome {
            increase_pct: inc,
            premium_pct: prem,
            increase_amount: amount,
            raised_recently: recent,
            months_since_move_in: band.map(|b| TENURE_BAND_MONTHS[b]),
            past_increases: past,
            open_share: 1.0 - seen,
            ..Outcome::default()
        });
        o.tenants = o.tenants.saturating_add(1);
        o.moved_out = o.moved_out.saturating_add(u32::from(left));
    }
    ev.outcomes = groups.into_values().collect();
    ev
}

/// The outcome of tenants not increased of one tenure band (`band` as [`tenure_band`], None
/// when unknown): `tenants` each watched for `watched` of a 90-day window (0..1; in tenths, as
/// the cells keep it), `left` of them moved out while watched. A tenant is watched from the
/// window's start until it moves out, is given a notice (its days after it are that notice's
/// outcome) or the window ends. Counting a tenant a notice took out early as a whole window
/// would count it as a stayer it was not seen to be, and leave the tenants who moved out
/// before any notice could reach them as the baseline's only leavers: the rate read high.
pub fn baseline_outcome(band: Option<usize>, tenants: u32, left: u32, watched: f64) -> Outcome {
    let tenths = (watched.clamp(0.0, 1.0) * 10.0).round() / 10.0;
    Outcome {
        tenants,
        moved_out: left.min(tenants),
        months_since_move_in: band.map(|b| TENURE_BAND_MONTHS[b.min(5)]),
        open_share: 1.0 - tenths,
        ..Outcome::default()
    }
}

/// A cell of a company's pooled outcomes: increase and premium to the nearest half point (an
/// increase stays above 0), tenure band, past increases, the increase in currency to the
/// nearest half (0: unknown), a recent previous increase, the tenths of the window seen (10:
/// over). Within a cell the prior's logit moves by at most 0.03 (0.06 per point of increase,
/// 0.12 per point of premium), while a company's thousands of rows become a few hundred cells:
/// the per-facility company fits are what the answer for a thousand facilities spends its time
/// on.
pub type Cell = (i64, i64, Option<u64>, u32, i64, bool, u8);

/// The tenths of a window seen, as a cell keeps them (10: the window is over).
fn seen_tenths(o: &Outcome) -> u8 {
    (o.seen_share() * 10.0).round().clamp(0.0, 10.0) as u8
}

/// The cell of an outcome.
pub fn cell(o: &Outcome) -> Cell {
    let half = |x: f64| (x * 2.0).round() as i64;
    let increase = if o.increased() {
        half(o.increase_pct).max(1)
    } else {
        0
    };
    (
        increase,
        half(o.premium_pct),
        o.months_since_move_in.map(f64::to_bits),
        o.past_increases,
        if o.increased() {
            half(o.increase_amount.max(0.0))
        } else {
            0
        },
        o.raised_recently,
        seen_tenths(o),
    )
}

/// The outcome of a cell's `tenants`, `moved_out` of them.
pub fn cell_outcome(c: &Cell, tenants: u32, moved_out: u32) -> Outcome {
    Outcome {
        increase_pct: c.0 as f64 / 2.0,
        premium_pct: c.1 as f64 / 2.0,
        tenants,
        moved_out: moved_out.min(tenants),
        months_since_move_in: c.2.map(f64::from_bits),
        past_increases: c.3,
        increase_amount: c.4 as f64 / 2.0,
        raised_recently: c.5,
        open_share: 1.0 - f64::from(c.6.min(10)) / 10.0,
    }
}

#[cfg(test)]
mod tests;
