//! The street-rate engine: one recommendation per unit type of a facility, each with the factors
//! that moved it, the guardrails that clipped it, a confidence and the competitor band used.
//! The formulas are written out in `docs/pricing.md`.

use super::band::{competitor_band, round_within, CompetitorBand, CompetitorObservation};
use super::settings::PricingSettings;
use super::target::{self, Anchor};
use crate::values::round2;
use chrono::{Datelike, NaiveDate};

/// Bumped whenever the maths changes, and stored with every run.
pub const ENGINE_VERSION: &str = "2026.11.7";

pub use crate::lease_up::Mode;

mod rules;
mod types;
pub use types::{
    Action, DayReading, EarlierReading, FacilityInput, Factor, Guardrail, PromotionInput,
    Recommendation, UnitTypeInput,
};

/// Canonical form of a size for matching: lower case, no spaces, `X` as `x`.
pub fn size_key(size: &str) -> String {
    size.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Runs the engine: one recommendation per unit type, in input order. Never panics.
pub fn recommend(input: &FacilityInput, s: &PricingSettings) -> Vec<Recommendation> {
    let band_settings = s.band();
    // Observations by size, and one band per size (unit types of two tiers share it).
    let mut by_size: std::collections::HashMap<String, Vec<CompetitorObservation>> =
        std::collections::HashMap::new();
    for (size, o) in &input.competitors {
        by_size.entry(size_key(size)).or_default().push(o.clone());
    }
    let mut bands: std::collections::HashMap<String, Option<CompetitorBand>> =
        std::collections::HashMap::new();
    input
        .unit_types
        .iter()
        .map(|ut| {
            let key = size_key(&ut.size);
            let band = bands
                .entry(key)
                .or_insert_with_key(|k| {
                    by_size
                        .get(k)
                        .and_then(|obs| competitor_band(obs, input.as_of, &band_settings))
                })
                .clone();
            recommend_one(input, ut, band, s)
        })
        .collect()
}

fn recommend_one(
    input: &FacilityInput,
    ut: &UnitTypeInput,
    band: Option<CompetitorBand>,
    s: &PricingSettings,
) -> Recommendation {
    let current = ut.street_rate;
    let occupancy = ut
        .occupancy_pct
        .or(input.occupancy_pct)
        .filter(|o| o.is_finite());
    let confidence = confidence(input, ut, band.as_ref());
    let mut rec = Recommendation {
        size: ut.size.clone(),
        tier: ut.tier.clone(),
        mode: input.mode,
        current_rate: current,
        recommended_rate: current,
        change_amount: 0.0,
        change_pct: 0.0,
        action: Action::Hold,
        confidence,
        occupancy_pct: occupancy,
        factors: Vec::new(),
        guardrails: Vec::new(),
        // Shown to cents; the engine worked with the band unrounded.
        competitor_band: band.as_ref().map(CompetitorBand::rounded),
    };
    if !(current.is_finite() && current > 0.0) {
        rec.guardrails.push(Guardrail {
            name: "no_current_rate".into(),
            before: current,
            after: current,
            detail: "the unit type has no positive street rate to move from".into(),
        });
        rec.confidence = 0.0;
        return rec;
    }

    // Each run closes a share of the gap to the target; the factors split that move, in
    // percentage points of the current rate, so they still add up to the proposed change.
    let t = target::target(input, ut, occupancy, band.as_ref(), s);
    let share = s.target_approach_share;
    let scale = share * t.anchor / current;
    let weak = (t.rate < current)
        .then(|| rules::weak_evidence(occupancy, t.trend, s))
        .flatten();
    let mut anchor = t.anchor_factor;
    anchor.contribution_pct = round2(share * (t.anchor / current - 1.0) * 100.0);
    anchor.detail = format!(
        "{}; target {:.2}, a run moves {:.0}% of the way",
        anchor.detail,
        t.rate,
        share * 100.0
    );
    let mut factors = vec![anchor];
    factors.extend(t.offsets.into_iter().map(|mut f| {
        f.contribution_pct = round2(f.contribution_pct * scale);
        f
    }));
    if let Some(w) = &weak {
        factors.push(rules::weak_close_factor(w, t.rate, current, s));
    }
    // A size that stays full is probed upward, and a raise that cost a full size its occupancy
    // is undone: both read the current rate, so each takes the place of the target's move.
    let probe = rules::probe(input, ut, occupancy, band.as_ref(), t.rate, s);
    for f in &mut factors {
        if !f.contribution_pct.is_finite() {
            f.contribution_pct = 0.0;
        }
    }
    let mut total: f64 = factors.iter().map(|f| f.contribution_pct).sum();
    let mut target_rate = t.rate;
    if let Some(p) = &probe {
        let pp = round2((p.rate / current - 1.0) * 100.0);
        // A probe replaces a smaller raise; a retreat undoes the raise, and no more: a deeper
        // cut, if still called for, follows the usual rules on a later run.
        let moves = p.kind == rules::ProbeKind::Retreat || pp > total;
        if moves {
            factors.push(Factor {
                name: p.kind.name().into(),
                contribution_pct: round2(pp - total),
                detail: p.detail.clone(),
            });
            total = pp;
            target_rate = p.rate;
        }
    }
    let probing = target_rate != t.rate;
    rec.factors = factors;
    let mut proposed = current * (1.0 + total / 100.0);

    // Guardrails, in order.
    let gap_pct = (target_rate / current - 1.0) * 100.0;
    // Turning back on the last change takes a wider gap, so noise does not flip the rate.
    let turning = match (ut.last_rate_change, ut.last_change_raised) {
        (Some(on), Some(raised)) => {
            (input.as_of - on).num_days() <= s.reversal_window_days && raised != (gap_pct > 0.0)
        }
        _ => false,
    };
    let tolerance = if turning {
        s.reversal_tolerance_pct.max(s.target_tolerance_pct)
    } else {
        s.target_tolerance_pct
    };
    // A probe and a retreat are steps of their own size, each with its own conditions.
    if proposed != current && gap_pct.abs() < tolerance && !probing {
        rec.guardrails.push(Guardrail {
            name: "tolerance".into(),
            before: round2(proposed),
            after: current,
            detail: if turning {
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
        });
        proposed = current;
    }
    if let Some(changed) = ut.last_rate_change {
        let days = (input.as_of - changed).num_days();
        if days < s.cooldown_days && proposed != current {
            rec.guardrails.push(Guardrail {
                name: "cooldown".into(),
                before: round2(proposed),
                after: current,
                detail: format!(
                    "rate changed {days} days ago; holds for {} days after a change",
                    s.cooldown_days
                ),
            });
            proposed = current;
        }
    }
    let step = s.max_step_pct / 100.0;
    let (step_lo, step_hi) = (current * (1.0 - step), current * (1.0 + step));
    if proposed > step_hi || proposed < step_lo {
        let after = proposed.clamp(step_lo, step_hi);
        rec.guardrails.push(Guardrail {
            name: "max_step".into(),
            before: round2(proposed),
            after: round2(after),
            detail: format!("at most {}% per run", s.max_step_pct),
        });
        proposed = after;
    }
    // Bounds in whole cents, so a ceiling of 115 is not 114.99999999999999.
    let ceiling = band
        .as_ref()
        .map(|b| round2(b.p75 * s.ceiling_share_of_p75));
    let mut floor = band.as_ref().map(|b| round2(b.p25 * s.floor_share_of_p25));
    if let Some(c) = ceiling {
        if proposed > current && proposed > c {
            let after = c.max(current);
            rec.guardrails.push(Guardrail {
                name: "ceiling".into(),
                before: round2(proposed),
                after: round2(after),
                detail: format!(
                    "a raise stops at {:.0}% of the competitor P75 ({:.2})",
                    s.ceiling_share_of_p75 * 100.0,
                    c
                ),
            });
            proposed = after;
        }
    }
    if let Some(f) = floor {
        if proposed < current && proposed < f {
            let after = f.min(current);
            rec.guardrails.push(Guardrail {
                name: "floor".into(),
                before: round2(proposed),
                after: round2(after),
                detail: format!(
                    "a cut stops at {:.0}% of the competitor P25 ({:.2})",
                    s.floor_share_of_p25 * 100.0,
                    f
                ),
            });
            proposed = after;
        }
    }
    if t.kind == Anchor::LeaseUp {
        let lu_floor = round2(current * s.lease_up_floor_share);
        floor = Some(floor.map_or(lu_floor, |f| f.max(lu_floor)));
        if proposed < lu_floor {
            rec.guardrails.push(Guardrail {
                name: "lease_up_floor".into(),
                before: round2(proposed),
                after: lu_floor,
                detail: format!(
                    "never below {:.0}% of the current street rate ({lu_floor:.2})",
                    s.lease_up_floor_share * 100.0
                ),
            });
            proposed = lu_floor;
        }
    }
    let full = occupancy.is_some_and(|o| o >= s.occupancy_target_high_pct);
    let overpriced = band
        .as_ref()
        .is_some_and(|b| current > b.p75 * (1.0 + s.full_cut_above_p75_pct / 100.0));
    if proposed < current && full && !overpriced {
        rec.guardrails.push(Guardrail {
            name: "full_no_cut".into(),
            before: round2(proposed),
            after: current,
            detail: format!(
                "a size at or above the top of its band ({}%) is not cut unless its rate is more \
                 than {}% above the competitor P75",
                s.occupancy_target_high_pct, s.full_cut_above_p75_pct
            ),
        });
        proposed = current;
    }
    // The mirror of `full_no_cut`: a size under its band fills before it is raised, unless it
    // fills fast (the trend the target read); lease-up has its own climb with the fill pace.
    if proposed > current
        && s.fill_first_pp_per_week > 0.0
        && input.mode != Mode::LeaseUp
        && occupancy.is_some_and(|o| o < s.occupancy_target_low_pct)
        && !t.trend.is_some_and(|tr| tr >= s.fill_first_pp_per_week)
    {
        rec.guardrails.push(Guardrail {
            name: "fill_first".into(),
            before: round2(proposed),
            after: current,
            detail: format!(
                "a size below the low end of its band ({}%) is not raised unless it gains at \
                 least {} points of occupancy a week",
                s.occupancy_target_low_pct, s.fill_first_pp_per_week
            ),
        });
        proposed = current;
    }
    if proposed != current && ((proposed / current - 1.0) * 100.0).abs() < s.min_change_pct {
        rec.guardrails.push(Guardrail {
            name: "min_change".into(),
            before: round2(proposed),
            after: current,
            detail: format!("changes under {}% are not worth making", s.min_change_pct),
        });
        proposed = current;
    }
    if proposed != current {
        // The interval every guardrail above allows for a move in this direction.
        let (lo, hi) = if proposed > current {
            (
                current,
                ceiling.map_or(step_hi, |c| step_hi.min(c.max(current))),
            )
        } else {
            (
                floor.map_or(step_lo, |f| step_lo.max(f.min(current))),
                current,
            )
        };
        let step = if s.round_to_whole { 1.0 } else { 0.01 };
        proposed = round_within(proposed, lo, hi, step);
    }
    finish(rec, proposed)
}

fn finish(mut rec: Recommendation, rate: f64) -> Recommendation {
    let current = rec.current_rate;
    // Already rounded within the guardrails by the caller.
    rec.recommended_rate = rate;
    rec.change_amount = round2(rec.recommended_rate - current);
    rec.change_pct = round2((rec.recommended_rate / current - 1.0) * 100.0);
    rec.action = if rec.recommended_rate > current {
        Action::Raise
    } else if rec.recommended_rate < current {
        Action::Lower
    } else {
        Action::Hold
    };
    rec
}

/// 0..=1 from data depth: competitor band strength (40 %), days of history against 90 (30 %),
/// units in the type against 50 (30 %; half credit when unit counts are not sent), on a base of 0.2.
fn confidence(input: &FacilityInput, ut: &UnitTypeInput, band: Option<&CompetitorBand>) -> f64 {
    let comp = band.map_or(0.0, CompetitorBand::strength);
    let hist = (f64::from(input.history_days) / 90.0).clamp(0.0, 1.0);
    let units = ut
        .total_units
        .map_or(0.5, |n| (f64::from(n) / 50.0).clamp(0.0, 1.0));
    round2(0.2 + 0.8 * (0.4 * comp + 0.3 * hist + 0.3 * units))
}

pub fn days_in_month(d: NaiveDate) -> u32 {
    let (y, m) = (d.year(), d.month());
    let next = if m == 12 {
        NaiveDate::from_ymd_opt(y + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(y, m + 1, 1)
    };
    next.and_then(|n| n.pred_opt()).map_or(30, |l| l.day())
}

pub(crate) fn month_name(m: u32) -> &'static str {
    const NAMES: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    NAMES[(m.clamp(1, 12) - 1) as usize]
}

#[cfg(test)]
mod tests;
