//! The engine's guardrails, in the order they apply to a proposed rate: each may hold the rate
//! in force or clip the move, and records itself when it does. One function per guardrail, so
//! the order reads in [`clip`] and each rule with its reason reads on its own.

use super::factors::Move;
use super::{Guardrail, Inputs, Mode};
use crate::pricing::band::round_within;
use crate::pricing::settings::PricingSettings;
use crate::pricing::target::Anchor;
use crate::values::round2;

/// The proposed rate as the guardrails so far left it, with those that moved it.
struct Clip<'r> {
    current: f64,
    proposed: f64,
    applied: &'r mut Vec<Guardrail>,
}

impl Clip<'_> {
    /// Records a guardrail that moves the proposed rate to `after` (shown as `shown`).
    fn apply(&mut self, name: &str, after: f64, shown: f64, detail: String) {
        self.applied.push(Guardrail {
            name: name.into(),
            before: round2(self.proposed),
            after: shown,
            detail,
        });
        self.proposed = after;
    }

    /// Records a guardrail that holds the rate in force.
    fn hold(&mut self, name: &str, detail: String) {
        let current = self.current;
        self.apply(name, current, current, detail);
    }
}

/// The interval a move may end in: the largest step either way, and the band's ceiling and
/// floor (the floor raised to the lease-up floor in lease-up) where there is a band.
struct Bounds {
    step_lo: f64,
    step_hi: f64,
    ceiling: Option<f64>,
    floor: Option<f64>,
}

/// The rate `m` proposes as every guardrail leaves it, rounded within the bounds they allow;
/// each guardrail that moved it is added to `applied`. `kind` and `trend` are the target's.
pub(super) fn clip(
    u: &Inputs<'_>,
    m: &Move,
    kind: Anchor,
    trend: Option<f64>,
    applied: &mut Vec<Guardrail>,
) -> f64 {
    let mut c = Clip {
        current: u.current,
        proposed: u.current * (1.0 + m.total_pct / 100.0),
        applied,
    };
    tolerance(&mut c, u, m);
    cooldown(&mut c, u);
    let (step_lo, step_hi) = max_step(&mut c, u.s);
    // Bounds in whole cents, so a ceiling of 115 is not 114.99999999999999.
    let ceiling = u.band.map(|b| round2(b.p75 * u.s.ceiling_share_of_p75));
    let mut floor = u.band.map(|b| round2(b.p25 * u.s.floor_share_of_p25));
    if let Some(ceiling) = ceiling {
        ceiling_of_band(&mut c, u.s, ceiling);
    }
    if let Some(floor) = floor {
        floor_of_band(&mut c, u.s, floor);
    }
    if kind == Anchor::LeaseUp {
        floor = Some(lease_up_floor(&mut c, u.s, floor));
    }
    full_no_cut(&mut c, u);
    fill_first(&mut c, u, trend);
    min_change(&mut c, u.s);
    let bounds = Bounds {
        step_lo,
        step_hi,
        ceiling,
        floor,
    };
    round_in_bounds(c.proposed, c.current, &bounds, u.s)
}

/// `tolerance`: the rate holds while it is close to the target; turning back on the last
/// change takes a wider gap, so noise does not flip the rate. A probe and a retreat are steps
/// of their own size, each with its own conditions, and pass.
fn tolerance(c: &mut Clip<'_>, u: &Inputs<'_>, m: &Move) {
    let (s, current, target_rate) = (u.s, c.current, m.target_rate);
    let gap_pct = (target_rate / current - 1.0) * 100.0;
    let turning = match (u.ut.last_rate_change, u.ut.last_change_raised) {
        (Some(on), Some(raised)) => {
            (u.input.as_of - on).num_days() <= s.reversal_window_days && raised != (gap_pct > 0.0)
        }
        _ => false,
    };
    let tolerance = if turning {
        s.reversal_tolerance_pct.max(s.target_tolerance_pct)
    } else {
        s.target_tolerance_pct
    };
    if c.proposed != current && gap_pct.abs() < tolerance && !m.probing {
        c.hold(
            "tolerance",
            if turning {
                format!(
                    "the last change, less than {} days ago, went the other way: the rate turns \
                     only when the target {:.2} is more than {tolerance}% away",
                    s.reversal_window_days, target_rate
                )
            } else {
                format!(
                    "the rate is within {tolerance}% of the target {:.2}: it holds",
                    target_rate
                )
            },
        );
    }
}

/// `cooldown`: the rate holds for some days after a change.
fn cooldown(c: &mut Clip<'_>, u: &Inputs<'_>) {
    if let Some(changed) = u.ut.last_rate_change {
        let days = (u.input.as_of - changed).num_days();
        if days < u.s.cooldown_days && c.proposed != c.current {
            c.hold(
                "cooldown",
                format!(
                    "rate changed {days} days ago; holds for {} days after a change",
                    u.s.cooldown_days
                ),
            );
        }
    }
}

/// `max_step`: at most so much per run, either way. Returns the step's (low, high) rates.
fn max_step(c: &mut Clip<'_>, s: &PricingSettings) -> (f64, f64) {
    let current = c.current;
    let step = s.max_step_pct / 100.0;
    let (step_lo, step_hi) = (current * (1.0 - step), current * (1.0 + step));
    if c.proposed > step_hi || c.proposed < step_lo {
        let after = c.proposed.clamp(step_lo, step_hi);
        c.apply(
            "max_step",
            after,
            round2(after),
            format!("at most {}% per run", s.max_step_pct),
        );
    }
    (step_lo, step_hi)
}

/// `ceiling`: a raise stops at a share of the competitor P75.
fn ceiling_of_band(c: &mut Clip<'_>, s: &PricingSettings, ceiling: f64) {
    if c.proposed > c.current && c.proposed > ceiling {
        let after = ceiling.max(c.current);
        c.apply(
            "ceiling",
            after,
            round2(after),
            format!(
                "a raise stops at {:.0}% of the competitor P75 ({:.2})",
                s.ceiling_share_of_p75 * 100.0,
                ceiling
            ),
        );
    }
}

/// `floor`: a cut stops at a share of the competitor P25.
fn floor_of_band(c: &mut Clip<'_>, s: &PricingSettings, floor: f64) {
    if c.proposed < c.current && c.proposed < floor {
        let after = floor.min(c.current);
        c.apply(
            "floor",
            after,
            round2(after),
            format!(
                "a cut stops at {:.0}% of the competitor P25 ({:.2})",
                s.floor_share_of_p25 * 100.0,
                floor
            ),
        );
    }
}

/// `lease_up_floor`: in lease-up, never below a share of the current street rate. Returns the
/// floor of the band raised to it.
fn lease_up_floor(c: &mut Clip<'_>, s: &PricingSettings, floor: Option<f64>) -> f64 {
    let lu_floor = round2(c.current * s.lease_up_floor_share);
    if c.proposed < lu_floor {
        c.apply(
            "lease_up_floor",
            lu_floor,
            lu_floor,
            format!(
                "never below {:.0}% of the current street rate ({lu_floor:.2})",
                s.lease_up_floor_share * 100.0
            ),
        );
    }
    floor.map_or(lu_floor, |f| f.max(lu_floor))
}

/// `full_no_cut`: a size at or above the top of its band is not cut, unless its rate is well
/// above the competitor P75.
fn full_no_cut(c: &mut Clip<'_>, u: &Inputs<'_>) {
    let s = u.s;
    let full = u
        .occupancy
        .is_some_and(|o| o >= s.occupancy_target_high_pct);
    let overpriced = u
        .band
        .is_some_and(|b| c.current > b.p75 * (1.0 + s.full_cut_above_p75_pct / 100.0));
    if c.proposed < c.current && full && !overpriced {
        c.hold(
            "full_no_cut",
            format!(
                "a size at or above the top of its band ({}%) is not cut unless its rate is more \
                 than {}% above the competitor P75",
                s.occupancy_target_high_pct, s.full_cut_above_p75_pct
            ),
        );
    }
}

/// `fill_first`, the mirror of `full_no_cut`: a size under its band fills before it is
/// raised, unless it fills fast (the trend the target read); lease-up has its own climb with
/// the fill pace.
fn fill_first(c: &mut Clip<'_>, u: &Inputs<'_>, trend: Option<f64>) {
    let s = u.s;
    if c.proposed > c.current
        && s.fill_first_pp_per_week > 0.0
        && u.input.mode != Mode::LeaseUp
        && u.occupancy.is_some_and(|o| o < s.occupancy_target_low_pct)
        && !trend.is_some_and(|tr| tr >= s.fill_first_pp_per_week)
    {
        c.hold(
            "fill_first",
            format!(
                "a size below the low end of its band ({}%) is not raised unless it gains at \
                 least {} points of occupancy a week",
                s.occupancy_target_low_pct, s.fill_first_pp_per_week
            ),
        );
    }
}

/// `min_change`: a change too small to be worth making holds.
fn min_change(c: &mut Clip<'_>, s: &PricingSettings) {
    if c.proposed != c.current && ((c.proposed / c.current - 1.0) * 100.0).abs() < s.min_change_pct
    {
        c.hold(
            "min_change",
            format!("changes under {}% are not worth making", s.min_change_pct),
        );
    }
}

/// The proposed rate rounded (to whole currency or to cents) within the interval every
/// guardrail allows for a move in its direction; the rate in force when there is no move.
fn round_in_bounds(proposed: f64, current: f64, b: &Bounds, s: &PricingSettings) -> f64 {
    if proposed == current {
        return proposed;
    }
    let (lo, hi) = if proposed > current {
        (
            current,
            b.ceiling
                .map_or(b.step_hi, |c| b.step_hi.min(c.max(current))),
        )
    } else {
        (
            b.floor.map_or(b.step_lo, |f| b.step_lo.max(f.min(current))),
            current,
        )
    };
    let step = if s.round_to_whole { 1.0 } else { 0.01 };
    round_within(proposed, lo, hi, step)
}
