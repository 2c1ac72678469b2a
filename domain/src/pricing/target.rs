//! The target rate of one unit type: an anchor (the competitor median, a lease-up fill rate, or
//! the rate of a few weeks ago when no competitor prices the size) moved by offsets in percent
//! of the anchor. Nothing here reads the current rate (but for the price response's average
//! rate over its window, weighed under 1), so a signal that lasts gives the same target run
//! after run instead of another change on top of the last one.

use super::band::CompetitorBand;
use super::engine::{month_name, size_key, FacilityInput, Factor, Mode, UnitTypeInput};
use super::response::response_offset;
use super::settings::PricingSettings;
use chrono::Datelike;

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
    /// Occupancy gained per week (points) since the earlier reading, as the target read it.
    pub trend: Option<f64>,
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
        return lease_up(b, trend, s);
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
                    trend,
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
    finish(anchor, kind, name, detail, offsets, trend)
}

/// The lease-up target: from the competitor P25 (less the lease-up discount), climbing toward
/// the median with the fill pace; it takes no offsets.
fn lease_up(b: &CompetitorBand, trend: Option<f64>, s: &PricingSettings) -> Target {
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
    finish(
        anchor,
        Anchor::LeaseUp,
        "lease_up_fill",
        detail,
        Vec::new(),
        trend,
    )
}

fn finish(
    anchor: f64,
    kind: Anchor,
    name: &str,
    detail: String,
    offsets: Vec<Factor>,
    trend: Option<f64>,
) -> Target {
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
        trend,
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
