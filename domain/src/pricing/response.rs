//! The price response: each size's demand learned from its own recent fill against its position
//! relative to the competitor median, and the rate at which it would fill.

use super::engine::{DayReading, Factor, UnitTypeInput};
use super::settings::PricingSettings;
use chrono::NaiveDate;

/// What a size's own recent history says about its price: the demand it showed over the trend
/// window at the rate it had then, and the position against the competitor median where that
/// demand would hold it at `response_fill_pct`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Response {
    /// The occupancy (share of units) the size would hold at the competitor median.
    pub demand: f64,
    /// The rate over the window (the earlier one, and the current one from its last change)
    /// against today's median.
    pub then: f64,
    /// The learned position (rate / median).
    pub position: f64,
    /// The position holds the size at `response_fill_pct`; when false it is the position
    /// where rent per unit is highest (no rate at or above it fills the size).
    pub fills: bool,
    /// The size was full at either end of the window: turned-away demand went unseen, so the
    /// position is a lower bound and does not fall below the earlier one.
    pub censored: bool,
    /// Occupancy (share of units) at the start and at the end of the window, and its days:
    /// the figures a sentence about the response must cite.
    pub occupancy_then: f64,
    pub occupancy_now: f64,
    pub days: u32,
    /// Learned from the size's daily history (since 2026.11.7) rather than the trend window's
    /// two readings: the counts it rests on.
    pub history: Option<Evidence>,
}

/// What a size's daily history showed: the move-ins of its days with a vacant unit against
/// those a size whose demand keeps all its units let at the median would have had at the
/// rates of those days.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evidence {
    pub move_ins: f64,
    pub expected: f64,
    /// 0..1: how far the learned demand counts, expected / (expected +
    /// `response_evidence_move_ins`), both weighed toward recent days.
    pub trust: f64,
}

/// The price level of a size by its demand, fitted to the going concern's optimal policy of
/// the engine's own demand model (elasticity 3, 400-day stays, the national season; solved by
/// `backtest::optimal` over three years, read in the first March, for demand 0.6 to 1.6): at
/// 90 % occupancy it prices at `LEVEL_AT_90 + LEVEL_PER_LN_DEMAND x ln(demand / LEVEL_DEMAND)`
/// of the median (within 0.015 of the solved policy), and `LEVEL_PER_POINT` more a point of
/// occupancy. Until engine 2026.11.11 the fit was to the policy of one year (0.90 and 0.19),
/// which in March already lets cheaper for the tenants it will not count after 31 December.
pub const LEVEL_AT_90: f64 = 0.94;
pub const LEVEL_DEMAND: f64 = 0.95;
pub const LEVEL_PER_LN_DEMAND: f64 = 0.21;
pub const LEVEL_PER_POINT: f64 = 0.005;

/// The position (rate / median) the optimal policy of the engine's model gives a size of this
/// demand at this occupancy (%), the occupancy taken inside the band (outside it the
/// occupancy offset moves the target), never below the revenue-best position.
pub fn demand_level(demand: f64, occupancy_pct: f64, s: &PricingSettings) -> f64 {
    let inside = occupancy_pct.clamp(s.occupancy_target_low_pct, s.occupancy_target_high_pct);
    (LEVEL_AT_90
        + LEVEL_PER_LN_DEMAND * (demand.max(1e-6) / LEVEL_DEMAND).ln()
        + LEVEL_PER_POINT * (inside - 90.0))
        .max(revenue_best_position(s.price_elasticity.max(0.1)))
}

/// The size's demand learned from its daily history (`response_history_days`, weighed by
/// `response_half_life_days`): move-ins over the days it had a vacant unit, against the
/// move-ins a demand of 1 (all units let at the median) brings at the rates of those days.
/// `None` without unit counts, history or a day with a vacant unit.
fn history_response(
    ut: &UnitTypeInput,
    occupancy: Option<f64>,
    median: f64,
    s: &PricingSettings,
) -> Option<Response> {
    let window = u32::try_from(s.response_history_days)
        .ok()
        .filter(|w| *w > 0)?;
    let units = f64::from(ut.total_units.filter(|n| *n > 0)?);
    let now = occupancy? / 100.0;
    if !(now.is_finite() && median.is_finite() && median > 0.0) {
        return None;
    }
    let stay_days = s.expected_stay_months.max(1.0) * 365.25 / 12.0;
    let elasticity = s.price_elasticity.max(0.1);
    let half_life = s.response_half_life_days.max(1) as f64;
    // Not one unit vacant: the day's demand was turned away unseen.
    let full = 1.0 - 0.5 / units;
    let days: Vec<&DayReading> = ut
        .history
        .iter()
        .filter(|r| r.days_ago > 0 && r.days_ago <= window)
        .collect();
    let (mut seen, mut expected, mut x_sum) = (0.0, 0.0, 0.0);
    let (mut seen_w, mut expected_w) = (0.0, 0.0);
    for (i, r) in days.iter().enumerate() {
        let q = r.occupancy_pct / 100.0;
        let x = r.street_rate / median;
        if !(q.is_finite() && x.is_finite() && x > 0.0) || q >= full {
            continue;
        }
        // The days until the next reading (gaps in the history count at this reading).
        let (next_q, next_ago) = days
            .get(i + 1)
            .map_or((now, 0), |n| (n.occupancy_pct / 100.0, n.days_ago));
        let span = f64::from(r.days_ago.saturating_sub(next_ago).max(1));
        let arrived = match r.move_ins.filter(|m| m.is_finite() && *m >= 0.0) {
            Some(m) if span <= 1.0 => m,
            // Inferred: the occupancy gained plus the move-outs the stay implies.
            _ => units * (next_q.clamp(0.0, 1.0) - q) + units * q * span / stay_days,
        };
        let w = 0.5f64.powf(f64::from(r.days_ago) / half_life);
        let e = units / stay_days * span * response_share(x, elasticity);
        seen += arrived;
        expected += e;
        seen_w += w * arrived;
        expected_w += w * e;
        x_sum += w * e * x;
    }
    if expected_w <= 0.0 {
        return None;
    }
    let demand = (seen_w / expected_w).max(1e-6);
    let evidence = s.response_evidence_move_ins.max(0.0);
    Some(Response {
        demand,
        then: x_sum / expected_w,
        position: demand_level(demand, now * 100.0, s),
        fills: true,
        censored: false,
        occupancy_then: days.first().map_or(now, |r| r.occupancy_pct / 100.0),
        occupancy_now: now,
        days: days.first().map_or(0, |r| r.days_ago),
        history: Some(Evidence {
            move_ins: seen.max(0.0),
            expected,
            trust: expected_w / (expected_w + evidence),
        }),
    })
}

/// Learns the size's price response: from its daily history where it has one (since
/// 2026.11.7), else from its earlier reading (below).
pub fn learned_response(
    as_of: NaiveDate,
    ut: &UnitTypeInput,
    occupancy: Option<f64>,
    median: f64,
    s: &PricingSettings,
) -> Option<Response> {
    history_response(ut, occupancy, median, s)
        .or_else(|| window_response(as_of, ut, occupancy, median, s))
}

/// Share of move-ins a rate at `x` times the median wins against one at the median, for an
/// elasticity `e` there: 2 / (1 + e^(2e (x - 1))).
pub fn response_share(x: f64, e: f64) -> f64 {
    2.0 / (1.0 + (2.0 * e * (x - 1.0)).exp())
}

/// 2e x q - 1 - q with q = e^(2e (x - 1)): negative while raising x still adds rent per unit
/// (x times the share it wins), positive once it loses rent.
fn rent_slope(x: f64, k: f64) -> f64 {
    let q = (k * (x - 1.0)).exp();
    k * x * q - 1.0 - q
}

/// The position where rent per unit, x times the share it wins, is highest when capacity does
/// not bind: the root of 1 + q = 2e x q with q = e^(2e (x - 1)). 2e x q - 1 - q is increasing
/// and convex in x, so Newton's method from 1 + 2 / 2e (where it is positive) comes down to
/// the root without overshooting.
pub fn revenue_best_position(e: f64) -> f64 {
    let k = 2.0 * e.max(0.1);
    let mut x = 1.0 + 2.0 / k;
    for _ in 0..100 {
        let q = (k * (x - 1.0)).exp();
        let step = rent_slope(x, k) / (k * k * x * q);
        x -= step;
        if step.is_nan() || step.abs() <= 1e-12 {
            break;
        }
    }
    x
}

/// Learns the size's price response from its earlier reading: move-ins over the window are the
/// occupancy gained plus the move-outs an `expected_stay_months` stay implies, read against
/// the rate of then; `None` without an earlier occupancy, a window under a week or a median.
fn window_response(
    as_of: NaiveDate,
    ut: &UnitTypeInput,
    occupancy: Option<f64>,
    median: f64,
    s: &PricingSettings,
) -> Option<Response> {
    let e = ut.earlier.as_ref()?;
    let (now, then) = (occupancy? / 100.0, e.occupancy_pct? / 100.0);
    let x_then = e.street_rate / median;
    if !(e.days_ago >= 7 && now.is_finite() && then.is_finite() && x_then.is_finite())
        || x_then <= 0.0
    {
        return None;
    }
    let (now, then) = (now.clamp(0.0, 1.0), then.clamp(0.0, 1.0));
    let days = f64::from(e.days_ago);
    // The rate changed inside the window: the move-ins came at both rates, weighed by the days
    // each stood.
    let x_now = ut.street_rate / median;
    let since = ut
        .last_rate_change
        .map(|c| (as_of - c).num_days() as f64)
        .filter(|c| (0.0..days).contains(c) && x_now.is_finite() && x_now > 0.0);
    let x_then = since.map_or(x_then, |c| (x_then * (days - c) + x_now * c) / days);
    let stay_days = s.expected_stay_months.max(1.0) * 365.25 / 12.0;
    let move_ins = ((now - then) / days + (now + then) / 2.0 / stay_days).max(0.0);
    let elasticity = s.price_elasticity.max(0.1);
    let demand = move_ins * stay_days / response_share(x_then, elasticity);
    // The share that holds the fill occupancy; at 2 or more no rate fills the size. Below the
    // revenue-best position a higher rate still adds rent: the position stops there.
    let needed = s.response_fill_pct / 100.0 / demand.max(1e-9);
    let fill = 1.0 + (2.0 / needed - 1.0).ln() / (2.0 * elasticity);
    let fills = needed < 2.0 && fill.is_finite() && rent_slope(fill, 2.0 * elasticity) >= 0.0;
    // Full (not one unit vacant) at either end of the window: demand was turned away unseen.
    let full = ut
        .total_units
        .filter(|n| *n > 0)
        .map_or(0.995, |n| 1.0 - 0.5 / f64::from(n));
    let censored = now >= full || then >= full;
    let mut position = if fills {
        fill
    } else {
        revenue_best_position(elasticity)
    };
    if censored {
        position = position.max(x_then);
    }
    // A rate far from the median (a share of 0 or a fill beyond reach in floating point)
    // teaches nothing.
    if !(demand.is_finite() && position.is_finite()) {
        return None;
    }
    Some(Response {
        demand,
        then: x_then,
        position,
        fills,
        censored,
        occupancy_then: then,
        occupancy_now: now,
        days: e.days_ago,
        history: None,
    })
}

pub(super) fn response_offset(
    as_of: NaiveDate,
    ut: &UnitTypeInput,
    occupancy: Option<f64>,
    median: f64,
    s: &PricingSettings,
) -> Factor {
    let name = "price_response".to_string();
    if s.response_weight <= 0.0 {
        return Factor {
            name,
            contribution_pct: 0.0,
            detail: "the learned price response is turned off (response_weight 0)".into(),
        };
    }
    let Some(r) = learned_response(as_of, ut, occupancy, median, s) else {
        return Factor {
            name,
            contribution_pct: 0.0,
            detail: "no earlier occupancy to learn the size's price response from".into(),
        };
    };
    // Inside the band the size already sits where it should; below it the response may only
    // deepen a cut, above it only add to a raise, so the noise of a few weeks of move-ins does
    // not turn the rate.
    let trust = r.history.map_or(1.0, |h| h.trust);
    let pp = (trust * s.response_weight * (r.position - 1.0) * 100.0)
        .clamp(-s.response_max_pp, s.response_max_pp);
    let pp = pp.min(0.0);
    if let Some(h) = r.history {
        return history_factor(name, &r, &h, pp);
    }
    // Every sentence starts from what was seen (the window, the fill at both ends, the rate
    // against the median), so what it concludes can be checked against those figures. Whole
    // percents: formatting integers costs a fraction of formatting floats, and this runs for
    // every unit type of every run.
    let seen = format!(
        "over the last {} days the size went from {}% to {}% full at {}% of the competitor median",
        r.days,
        whole_pct(r.occupancy_then),
        whole_pct(r.occupancy_now),
        whole_pct(r.then)
    );
    if pp == 0.0 {
        return Factor {
            name,
            contribution_pct: 0.0,
            detail: if r.censored {
                format!("{seen}; a full size turns demand away unseen, so its fill shows no reason to cut")
            } else if r.fills {
                format!(
                    "{seen}; at that pace of move-ins it would reach its fill target \
                     (response_fill_pct) at about {}% of the median, not below the median, so \
                     this factor adds no cut",
                    whole_pct(r.position)
                )
            } else {
                format!(
                    "{seen}; no rate near the median fills it, rent per unit is highest at about \
                     {}% of the median, not below the median, so this factor adds no cut",
                    whole_pct(r.position)
                )
            },
        };
    }
    Factor {
        name,
        contribution_pct: pp,
        detail: format!(
            "{seen}; move-ins at that pace would keep {}% of its units let at the median rate, \
             so {}% of the median {}",
            whole_pct(r.demand),
            whole_pct(r.position),
            if r.censored {
                "is where it stands, no lower than before since a full size turns demand away \
                 unseen"
            } else if r.fills {
                "would hold it at its fill target (response_fill_pct)"
            } else {
                "earns the most rent, as no rate near it fills the size"
            }
        ),
    }
}

/// The price response's factor when it was learned from the daily history.
fn history_factor(name: String, r: &Response, h: &Evidence, pp: f64) -> Factor {
    let seen = format!(
        "over the last {} days the size took {:.0} move-ins on its days with a vacant unit, at \
         {}% of the competitor median on average, where a demand that keeps all its units let at \
         the median would have brought {:.1}",
        r.days,
        h.move_ins,
        whole_pct(r.then),
        h.expected
    );
    let level = format!(
        "so its demand is about {}% of that (recent days weighing more), and at {}% occupancy a \
         size with that demand earns the most at about {}% of the median",
        whole_pct(r.demand),
        whole_pct(r.occupancy_now),
        whole_pct(r.position)
    );
    Factor {
        name,
        contribution_pct: pp,
        detail: if pp == 0.0 {
            format!("{seen}; {level}, not below the median, so this factor adds no cut")
        } else {
            format!(
                "{seen}; {level}, counted at {}% on this much history",
                whole_pct(h.trust)
            )
        },
    }
}

/// A share as a whole percent (1.0549 is 105).
fn whole_pct(share: f64) -> i64 {
    // Saturating: the shares here are finite and small.
    (share * 100.0).round() as i64
}
