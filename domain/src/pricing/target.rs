//! The target rate of one unit type: an anchor (the competitor median, a lease-up fill rate, or
//! the rate of a few weeks ago when no competitor prices the size) moved by offsets in percent
//! of the anchor. Nothing here reads the current rate (but for the price response's average
//! rate over its window, weighed under 1), so a signal that lasts gives the same target run
//! after run instead of another change on top of the last one.

use super::band::CompetitorBand;
use super::engine::{month_name, size_key, FacilityInput, Factor, Mode, UnitTypeInput};
use super::settings::PricingSettings;
use chrono::{Datelike, NaiveDate};

/// What the target starts from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Anchor {
    Median,
    LeaseUp,
    OwnRate,
    /// Neither competitor rates nor an earlier rate: no target, the rate holds.
    None,
}

/// The target and what made it. Offsets are in percent of the anchor.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub anchor: f64,
    pub kind: Anchor,
    /// The anchor's own factor (its distance from the current rate is its contribution).
    pub anchor_factor: Factor,
    pub offsets: Vec<Factor>,
    pub rate: f64,
}

/// Occupancy gained per week (points) since the earlier reading, when one is far enough back.
pub fn trend_pp_per_week(ut: &UnitTypeInput, occupancy: Option<f64>) -> Option<f64> {
    let e = ut.earlier.as_ref()?;
    let (now, then) = (occupancy?, e.occupancy_pct?);
    (e.days_ago >= 7 && now.is_finite() && then.is_finite())
        .then(|| (now - then) / f64::from(e.days_ago) * 7.0)
}

pub fn target(
    input: &FacilityInput,
    ut: &UnitTypeInput,
    occupancy: Option<f64>,
    band: Option<&CompetitorBand>,
    s: &PricingSettings,
) -> Target {
    let trend = trend_pp_per_week(ut, occupancy);
    if let (Mode::LeaseUp, Some(b)) = (input.mode, band) {
        let start = b.p25 * (1.0 - s.lease_up_discount_pct / 100.0);
        let climb = if s.lease_up_climb_pp_per_week > 0.0 {
            (trend.unwrap_or(0.0) / s.lease_up_climb_pp_per_week).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let anchor = start + (b.median.max(start) - start) * climb;
        let detail = format!(
            "lease-up: the target starts at the competitor P25 ({:.2}){} and climbs toward the \
             median ({:.2}) with the fill pace, {} of {:.1} points a week: {:.0}% of the way",
            b.p25,
            if s.lease_up_discount_pct > 0.0 {
                format!(" less {}%", s.lease_up_discount_pct)
            } else {
                String::new()
            },
            b.median,
            trend.map_or("no trend".to_owned(), |t| format!("{t:.1}")),
            s.lease_up_climb_pp_per_week,
            climb * 100.0
        );
        return finish(anchor, Anchor::LeaseUp, "lease_up_fill", detail, Vec::new());
    }
    let (anchor, kind, name, detail) = match band {
        Some(b) => (
            b.median,
            Anchor::Median,
            "competitors",
            format!(
                "the target starts from the competitor median {:.2} (P25 {:.2}, P75 {:.2}; {} \
                 competitors, {} stale, weight {:.0}%)",
                b.median,
                b.p25,
                b.p75,
                b.competitors,
                b.stale,
                b.strength() * 100.0
            ),
        ),
        None => {
            let Some(e) = ut
                .earlier
                .as_ref()
                .filter(|e| e.street_rate.is_finite() && e.street_rate > 0.0)
            else {
                // Anchoring on the current rate would let a lasting signal compound.
                return Target {
                    anchor: ut.street_rate,
                    kind: Anchor::None,
                    anchor_factor: Factor {
                        name: "competitors".into(),
                        contribution_pct: 0.0,
                        detail: "no competitor rates for this size and no earlier rate to start \
                                 a target from: the rate holds"
                            .into(),
                    },
                    offsets: Vec::new(),
                    rate: ut.street_rate,
                };
            };
            (
                e.street_rate,
                Anchor::OwnRate,
                "competitors",
                format!(
                    "no competitor rates for this size: the target starts from the rate of {} \
                     days ago ({:.2}), and only occupancy and its trend move it",
                    e.days_ago, e.street_rate
                ),
            )
        }
    };
    // Room for every offset and the lease-up note, so the list is allocated once.
    let mut offsets = Vec::with_capacity(7);
    offsets.push(occupancy_offset(occupancy, s));
    offsets.push(trend_offset(trend, s));
    if let (Anchor::Median, Some(b)) = (kind, band) {
        offsets.push(response_offset(input.as_of, ut, occupancy, b.median, s));
        offsets.push(pace_offset(input, occupancy, s));
        offsets.push(season_offset(input, occupancy, s));
    }
    let pressure: f64 = offsets.iter().map(|f| f.contribution_pct).sum();
    if let Some(f) = promotion_offset(input, ut, pressure, s) {
        offsets.push(f);
    }
    if input.mode == Mode::LeaseUp {
        offsets.push(Factor {
            name: "lease_up_fill".into(),
            contribution_pct: 0.0,
            detail: "lease-up mode, but no competitor rates for this size: the stabilized \
                     factors apply"
                .into(),
        });
    }
    finish(anchor, kind, name, detail, offsets)
}

fn finish(anchor: f64, kind: Anchor, name: &str, detail: String, offsets: Vec<Factor>) -> Target {
    let mut offsets = offsets;
    for f in &mut offsets {
        if !f.contribution_pct.is_finite() {
            f.contribution_pct = 0.0;
        }
    }
    let total: f64 = offsets.iter().map(|f| f.contribution_pct).sum();
    Target {
        anchor,
        kind,
        anchor_factor: Factor {
            name: name.into(),
            contribution_pct: 0.0,
            detail,
        },
        offsets,
        rate: anchor * (1.0 + total / 100.0),
    }
}

fn occupancy_offset(occupancy: Option<f64>, s: &PricingSettings) -> Factor {
    let (low, high) = (s.occupancy_target_low_pct, s.occupancy_target_high_pct);
    let (pp, detail) = match occupancy {
        Some(o) if o > high => (
            ((o - high) * s.occupancy_pp_per_point).min(s.occupancy_max_pp),
            format!("occupancy {o:.1}% above the {low}-{high}% target band raises the target"),
        ),
        Some(o) if o < low => (
            -((low - o) * s.occupancy_pp_per_point).min(s.occupancy_max_pp),
            format!("occupancy {o:.1}% below the {low}-{high}% target band lowers the target"),
        ),
        Some(o) => (
            0.0,
            format!("occupancy {o:.1}% inside the {low}-{high}% target band"),
        ),
        None => (0.0, "no occupancy in the snapshot".into()),
    };
    Factor {
        name: "occupancy".into(),
        contribution_pct: pp,
        detail,
    }
}

fn trend_offset(trend: Option<f64>, s: &PricingSettings) -> Factor {
    let (pp, detail) = match trend {
        Some(t) => (
            (t * s.trend_pp_per_weekly_point).clamp(-s.trend_max_pp, s.trend_max_pp),
            format!(
                "occupancy {} {:.2} points a week over the last {} days",
                if t >= 0.0 { "gained" } else { "lost" },
                t.abs(),
                s.occupancy_trend_days
            ),
        ),
        None => (0.0, "no earlier occupancy to measure a trend".into()),
    };
    Factor {
        name: "occupancy_trend".into(),
        contribution_pct: pp,
        detail,
    }
}

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
pub fn learned_response(
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
    })
}

fn response_offset(
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
    let pp = (s.response_weight * (r.position - 1.0) * 100.0)
        .clamp(-s.response_max_pp, s.response_max_pp);
    let pp = pp.min(0.0);
    if pp == 0.0 {
        return Factor {
            name,
            contribution_pct: 0.0,
            detail: if r.censored {
                "the size was full in the last weeks, so its own fill shows no reason to cut"
            } else {
                "the size's own fill at its recent rate shows it would hold its fill target at \
                 or above the competitor median, so it adds no cut"
            }
            .into(),
        };
    }
    Factor {
        name,
        contribution_pct: pp,
        // Whole percents: formatting integers costs a fraction of formatting floats, and this
        // runs for every unit type of every run.
        detail: format!(
            "at {}% of the median the size showed demand for {}% of its units at the median, \
             so {}% of the median {}",
            whole_pct(r.then),
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

/// A share as a whole percent (1.0549 is 105).
fn whole_pct(share: f64) -> i64 {
    // Saturating: the shares here are finite and small.
    (share * 100.0).round() as i64
}

/// Vacant units of the facility, from the unit types that send counts and occupancy.
fn vacant_units(input: &FacilityInput) -> Option<f64> {
    let mut any = false;
    let vacant = input
        .unit_types
        .iter()
        .filter_map(|u| {
            let occ = u.occupancy_pct.or(input.occupancy_pct)?;
            let n = f64::from(u.total_units?);
            any = true;
            Some((n * (1.0 - occ.clamp(0.0, 100.0) / 100.0)).round())
        })
        .sum();
    any.then_some(vacant)
}

fn pace_offset(input: &FacilityInput, occupancy: Option<f64>, s: &PricingSettings) -> Factor {
    let name = "move_in_pace".to_string();
    let (Some(mtd), Some(target)) = (input.move_ins_mtd, input.move_ins_target_monthly) else {
        return Factor {
            name,
            contribution_pct: 0.0,
            detail: "no month-to-date move-ins or monthly target in the snapshot".into(),
        };
    };
    if !(target > 0.0 && mtd.is_finite() && mtd >= 0.0) {
        return Factor {
            name,
            contribution_pct: 0.0,
            detail: "no monthly move-in target".into(),
        };
    }
    let day = f64::from(input.as_of.day());
    let days = f64::from(super::engine::days_in_month(input.as_of));
    // Move-ins the facility could not have taken (no vacant unit) are not missed demand.
    let prorated = target * day / days;
    let allowed = vacant_units(input).map_or(prorated, |v| prorated.min(mtd + v));
    let pace = if allowed > 0.0 { mtd / allowed } else { 1.0 };
    // A few days into a month the count is mostly chance: it weighs by the share of the month
    // gone.
    let mut pp =
        ((pace - 1.0) * s.pace_pp_per_unit).clamp(-s.pace_max_pp, s.pace_max_pp) * (day / days);
    let full = occupancy.is_some_and(|o| o >= s.occupancy_target_high_pct);
    if full && pp < 0.0 {
        pp = 0.0;
    }
    Factor {
        name,
        contribution_pct: pp,
        detail: format!(
            "{mtd:.0} move-ins month to date against {allowed:.1} expected by day {day:.0} of \
             {days:.0} (target {target:.0}, as far as vacant units allow): pace {:.0}%, weighed by the share of \
             the month gone{}",
            pace * 100.0,
            if full && pace < 1.0 {
                ", not counted against a size at the top of its band"
            } else {
                ""
            }
        ),
    }
}

fn season_offset(input: &FacilityInput, occupancy: Option<f64>, s: &PricingSettings) -> Factor {
    let idx = input.seasonality.index;
    let mut pp = (idx - 1.0) * s.seasonality_pp_per_index;
    let room = occupancy.is_none_or(|o| o < s.occupancy_target_low_pct);
    let held = pp < 0.0 && !room;
    if held {
        pp = 0.0;
    }
    Factor {
        name: "seasonality".into(),
        contribution_pct: pp,
        detail: format!(
            "{} index {idx:.2} from {}{}",
            month_name(input.as_of.month()),
            if input.seasonality.own_data {
                "the facility's own move-in history"
            } else {
                "the national prior (not enough own history)"
            },
            if held {
                ", not a cut for a size inside or above its band"
            } else {
                ""
            }
        ),
    }
}

fn promotion_offset(
    input: &FacilityInput,
    ut: &UnitTypeInput,
    pressure: f64,
    s: &PricingSettings,
) -> Option<Factor> {
    let key = size_key(&ut.size);
    let tier = ut.tier.to_lowercase();
    let promo = input
        .promotions
        .iter()
        .filter(|p| {
            let a = p.applies_to.trim().to_lowercase();
            a.is_empty()
                || a == "all"
                || a == "*"
                || a.split([',', ';']).any(|part| {
                    let mut words = part.split_whitespace();
                    let size_ok = words.next().is_some_and(|w| size_key(w) == key);
                    let rest: Vec<&str> = words.collect();
                    size_ok && (rest.is_empty() || rest.join(" ") == tier)
                })
        })
        .filter(|p| p.depth_pct.is_finite() && p.depth_pct > 0.0)
        .max_by(|a, b| a.depth_pct.total_cmp(&b.depth_pct))?;
    let value_pp = promo.depth_pct.min(100.0) / s.expected_stay_months.max(1.0);
    let offset = if pressure < 0.0 {
        (value_pp * s.promotion_offset_share).min(-pressure)
    } else {
        0.0
    };
    Some(Factor {
        name: "promotion".into(),
        contribution_pct: offset,
        detail: format!(
            "\"{}\" ({}% off one month) is worth {:.2}% of rent over a {}-month stay{}",
            promo.name,
            promo.depth_pct,
            value_pp,
            s.expected_stay_months,
            if offset > 0.0 {
                "; it already eases the price, so part of the downward pressure is offset"
            } else {
                "; no downward pressure to offset"
            }
        ),
    })
}
