//! The rules of engine 2026.11.6 that read the current rate: a size that stays full is probed
//! upward and a raise that cost a full size its occupancy is undone (`full_probe`,
//! `probe_retreat`), and a clearly weak size closes more of its gap to the target in one run
//! (`weak_close`).

use super::{FacilityInput, Factor, UnitTypeInput};
use crate::pricing::band::CompetitorBand;
use crate::pricing::settings::PricingSettings;
use crate::values::round2;

/// How strongly a size below its band shows it is over-priced for its demand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Weak {
    /// 0..=1: from half of `weak_gap_pp` under the band's low end (0) to all of it (1).
    pub evidence: f64,
    pub occupancy: f64,
    /// Points of occupancy gained per week over the trend window (below 0 here).
    pub trend: f64,
}

/// A size under its band that is losing occupancy: the further under, the stronger the
/// evidence. `None` when the rule is off, the size is in or above its band, holds or gains
/// occupancy, or has no trend to show it.
pub(super) fn weak_evidence(
    occupancy: Option<f64>,
    trend: Option<f64>,
    s: &PricingSettings,
) -> Option<Weak> {
    let (occupancy, trend) = (occupancy?, trend?);
    let under = s.occupancy_target_low_pct - occupancy;
    (s.weak_gap_pp > 0.0 && under > s.weak_gap_pp / 2.0 && trend <= 0.0).then(|| Weak {
        // None for the first half of `weak_gap_pp` (a size a few points under its band is
        // as likely unlucky as over-priced), all of it at the full gap.
        evidence: ((under - s.weak_gap_pp / 2.0) / (s.weak_gap_pp / 2.0)).clamp(0.0, 1.0),
        occupancy,
        trend,
    })
}

/// The extra share of the gap a weak size closes, as a factor: the base share's move is the
/// other factors'.
pub(super) fn weak_close_factor(
    w: &Weak,
    target: f64,
    current: f64,
    s: &PricingSettings,
) -> Factor {
    let base = s.target_approach_share;
    let share = base + (1.0 - base) * w.evidence;
    Factor {
        name: "weak_close".into(),
        contribution_pct: round2((share - base) * (target / current - 1.0) * 100.0),
        detail: format!(
            "the size is {:.1} points under its band at {:.1}% and lost {:.2} points a week over \
             the last {} days, so this run closes {:.0}% of the gap to the target instead of \
             {:.0}%",
            s.occupancy_target_low_pct - w.occupancy,
            w.occupancy,
            // Not -0.00 for a size that held its occupancy.
            if w.trend < 0.0 { -w.trend } else { 0.0 },
            s.occupancy_trend_days,
            share * 100.0,
            base * 100.0
        ),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ProbeKind {
    Raise,
    Retreat,
}

impl ProbeKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Raise => "full_probe",
            Self::Retreat => "probe_retreat",
        }
    }
}

/// A probe or a retreat: the rate it moves to and why.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Probe {
    pub kind: ProbeKind,
    pub rate: f64,
    pub detail: String,
}

/// Days a vacant unit of a size stays empty on average, by Little's law over the two readings:
/// vacant units / move-ins a day, with move-ins a day at occupied units / the expected stay
/// (a size that holds its occupancy lets as many units as leave).
pub(super) fn relet_days(now_pct: f64, then_pct: f64, s: &PricingSettings) -> f64 {
    let occupied = ((now_pct + then_pct) / 200.0).clamp(0.0, 1.0);
    let stay_days = s.expected_stay_months.max(1.0) * 365.25 / 12.0;
    if occupied <= 0.0 {
        return f64::INFINITY;
    }
    (1.0 - occupied) * stay_days / occupied
}

/// The full-size probe and its retreat, when either applies; `target` is the target rate the
/// other factors set.
pub(super) fn probe(
    input: &FacilityInput,
    ut: &UnitTypeInput,
    occupancy: Option<f64>,
    band: Option<&CompetitorBand>,
    target: f64,
    s: &PricingSettings,
) -> Option<Probe> {
    let current = ut.street_rate;
    let e = ut.earlier.as_ref()?;
    let (now, then) = (occupancy?, e.occupancy_pct?);
    if !(now.is_finite() && then.is_finite() && e.days_ago >= 7) {
        return None;
    }
    let high = s.occupancy_target_high_pct;
    let since = ut.last_rate_change.map(|c| (input.as_of - c).num_days());
    // The retreat: the last change raised a size that was full at the earlier reading (taken
    // before that raise) by no more than a probe's step, above the target the other factors
    // set (a probe), and since then the size fell below the top of its band and lost
    // `probe_retreat_pp` points. A larger raise was the target's, and the target undoes it
    // under the reversal tolerance.
    // A probe lands on the nearest rounding unit to its step (or lower, at its caps): a raise
    // of a whole unit more on a small rate (57 to 59 where a probe makes 58) was the target's.
    let unit = if s.round_to_whole { 1.0 } else { 0.01 };
    let probe_top = (e.street_rate * (1.0 + s.probe_step_pct / 100.0) / unit).round() * unit;
    let probe_sized = current <= probe_top + 1e-9;
    if s.probe_retreat_pp > 0.0
        && ut.last_change_raised == Some(true)
        && current > target
        && probe_sized
        && since.is_some_and(|d| d <= i64::from(e.days_ago))
        && then >= high
        && now < high
        && then - now >= s.probe_retreat_pp
        && e.street_rate.is_finite()
        && e.street_rate > 0.0
        && e.street_rate < current
    {
        return Some(Probe {
            kind: ProbeKind::Retreat,
            rate: e.street_rate,
            detail: format!(
                "the last raise, {} days ago, came when the size was {then:.1}% full and it has \
                 fallen to {now:.1}%, so the rate returns to {:.2}, where it was {} days ago",
                since.unwrap_or(0),
                e.street_rate,
                e.days_ago
            ),
        });
    }
    // The probe: full at both ends of the window, vacant units re-let fast, no change for
    // `probe_interval_days` and no cut inside the reversal window.
    let b = band?;
    if !(s.probe_relet_days > 0.0 && s.probe_step_pct > 0.0 && now >= high && then >= high) {
        return None;
    }
    let relet = relet_days(now, then, s);
    if relet > s.probe_relet_days {
        return None;
    }
    let quiet = match (since, ut.last_change_raised) {
        (None, _) => true,
        (Some(d), Some(false)) => d >= s.probe_interval_days && d > s.reversal_window_days,
        (Some(d), _) => d >= s.probe_interval_days,
    };
    if !quiet {
        return None;
    }
    // Up to halfway to where `full_no_cut` stops protecting a full size (so a band that
    // drifts down does not expose the probed rate to a cut at once), and the ceiling.
    let cap = round2(b.p75 * (1.0 + s.full_cut_above_p75_pct / 200.0))
        .min(round2(b.p75 * s.ceiling_share_of_p75));
    let rate = (current * (1.0 + s.probe_step_pct / 100.0)).min(cap);
    (rate > current).then(|| Probe {
        kind: ProbeKind::Raise,
        rate,
        detail: format!(
            "the size was {then:.1}% full {} days ago and is {now:.1}% full now, a vacated unit \
             re-lets in about {relet:.0} days, and its rate has not changed for {}, so it is \
             probed {:.1}% higher",
            e.days_ago,
            since.map_or("the period read".to_owned(), |d| format!("{d} days")),
            (rate / current - 1.0) * 100.0
        ),
    })
}
