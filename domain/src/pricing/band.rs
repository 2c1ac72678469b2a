//! The competitor band: effective competitor rates for one unit size and their weighted
//! 25th percentile, median and 75th percentile.
//!
//! - Only each competitor's most recent observation counts (names compare case-insensitively).
//! - A promotion is spread over the expected stay: "first month free" on a 100/month rate with a
//!   12-month stay is an effective 100 x (1 - 1/12) = 91.67.
//! - Observations older than `stale_after_days` weigh `stale_weight` instead of 1; observations
//!   older than `max_age_days` are dropped.
//! - Percentiles are weighted Hazen percentiles: value i (sorted) sits at position
//!   (sum of the weights before it + w_i / 2) / total weight, and a percentile is interpolated
//!   linearly between positions (clamped to the smallest and largest value at the ends). With
//!   equal weights this is the textbook "type 5" percentile.

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

/// One competitor price seen on a day.
#[derive(Debug, Clone, PartialEq)]
pub struct CompetitorObservation {
    pub competitor: String,
    pub rate: f64,
    /// Free-text promotion ("First month free", "50% off 2 months", "$1 first month").
    pub promo: Option<String>,
    pub observed_on: NaiveDate,
    /// The unit tier the rate was seen for (climate controlled, drive-up...), when the source
    /// named it; `None` for a rate of unknown tier.
    pub tier: Option<String>,
}

/// Settings of the band (part of the facility's pricing settings).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BandSettings {
    /// Months a new tenant is expected to stay; a promotion's value is spread over them.
    pub expected_stay_months: f64,
    /// Older observations are stale and weigh less.
    pub stale_after_days: i64,
    /// Weight of a stale observation (a fresh one weighs 1).
    pub stale_weight: f64,
    /// Observations older than this are ignored.
    pub max_age_days: i64,
}

impl Default for BandSettings {
    fn default() -> Self {
        Self {
            expected_stay_months: 12.0,
            stale_after_days: 14,
            stale_weight: 0.25,
            max_age_days: 90,
        }
    }
}

/// The band used for one size, with the facts it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CompetitorBand {
    /// 25th percentile of the effective competitor rates.
    pub p25: f64,
    /// Median of the effective competitor rates.
    pub median: f64,
    /// 75th percentile of the effective competitor rates.
    pub p75: f64,
    /// Competitors counted (one observation each).
    pub competitors: usize,
    /// Of which older than `stale_after_days`.
    pub stale: usize,
    /// Sum of the weights (competitors minus the discount on stale ones).
    pub weight: f64,
    /// Date of the newest observation counted.
    pub newest_observed_on: NaiveDate,
    /// Date of the oldest observation counted.
    pub oldest_observed_on: NaiveDate,
}

impl CompetitorBand {
    /// The band as reported: rates to cents, the weight to two decimals.
    pub fn rounded(&self) -> Self {
        use crate::values::round2;
        Self {
            p25: round2(self.p25),
            median: round2(self.median),
            p75: round2(self.p75),
            weight: round2(self.weight),
            ..self.clone()
        }
    }

    /// How much the band can be trusted, 0..=1: weighted competitor count against five fresh
    /// competitors.
    pub fn strength(&self) -> f64 {
        (self.weight / 5.0).clamp(0.0, 1.0)
    }
}

/// Months of rent a promotion gives away, read from its text; 0 when the text is not understood.
///
/// Understood shapes (case-insensitive): "first month free", "1st month free", "2 months free",
/// "one/two/three month(s) free", "50% off first month", "50% off 2 months", "50% off" (one
/// month), "$1 first month" / "$1 move-in" (all but one currency unit of the first month free),
/// "$50 off" (that amount off once).
pub fn promo_free_months(promo: &str, rate: f64) -> f64 {
    let text = promo.trim().to_lowercase();
    if text.is_empty() || !(rate.is_finite() && rate > 0.0) {
        return 0.0;
    }
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '!' | ';' | '(' | ')'))
        .filter(|w| !w.is_empty())
        .collect();
    let months_named = months_in(&words);
    // "N% off ..." : share of N months (one when no month count is named).
    if let Some(pct) = words
        .iter()
        .find_map(|w| w.strip_suffix('%')?.parse::<f64>().ok())
    {
        if text.contains("off") && (0.0..=100.0).contains(&pct) {
            return pct / 100.0 * months_named.unwrap_or(1.0);
        }
    }
    // "$X first month" / "$X move-in": pay X instead of the month's rent.
    // "$X off": X off once.
    if let Some(amount) = words
        .iter()
        .find_map(|w| w.strip_prefix('$')?.parse::<f64>().ok())
    {
        if amount.is_finite() && amount >= 0.0 {
            if text.contains("off") {
                return (amount / rate).min(months_named.unwrap_or(1.0).max(1.0));
            }
            if text.contains("first") || text.contains("move") {
                return ((rate - amount) / rate).max(0.0) * months_named.unwrap_or(1.0);
            }
        }
    }
    if text.contains("free") {
        return months_named.unwrap_or(1.0);
    }
    0.0
}

/// The count of months named in the words ("first month" is one, "2 months" two).
fn months_in(words: &[&str]) -> Option<f64> {
    for (i, w) in words.iter().enumerate() {
        if !(w.starts_with("month") || matches!(*w, "mo" | "mos" | "mo." | "mos.")) {
            continue;
        }
        let Some(prev) = i.checked_sub(1).map(|j| words[j]) else {
            return Some(1.0);
        };
        let n = match prev {
            "first" | "1st" | "one" | "a" => 1.0,
            "second" | "2nd" | "two" => 2.0,
            "three" | "3rd" => 3.0,
            other => other.parse::<f64>().unwrap_or(1.0),
        };
        if n.is_finite() && n > 0.0 {
            return Some(n.min(24.0));
        }
    }
    None
}

/// The rate after spreading the promotion over the expected stay, never below zero.
pub fn effective_rate(rate: f64, promo: Option<&str>, expected_stay_months: f64) -> f64 {
    let stay = if expected_stay_months.is_finite() && expected_stay_months >= 1.0 {
        expected_stay_months
    } else {
        1.0
    };
    let free = promo.map_or(0.0, |p| promo_free_months(p, rate)).min(stay);
    (rate * (1.0 - free / stay)).max(0.0)
}

/// The band of the observations as of a date; `None` when no usable observation is left.
pub fn competitor_band(
    observations: &[CompetitorObservation],
    as_of: NaiveDate,
    settings: &BandSettings,
) -> Option<CompetitorBand> {
    // Most recent observation per competitor.
    let mut keys: Vec<String> = Vec::new();
    let mut latest: Vec<&CompetitorObservation> = Vec::new();
    for o in observations {
        if !(o.rate.is_finite() && o.rate > 0.0) {
            continue;
        }
        let age = (as_of - o.observed_on).num_days();
        if age > settings.max_age_days {
            continue;
        }
        let key = o.competitor.trim().to_lowercase();
        match keys.iter().position(|k| *k == key) {
            Some(i) if latest[i].observed_on <= o.observed_on => latest[i] = o,
            Some(_) => {}
            None => {
                keys.push(key);
                latest.push(o);
            }
        }
    }
    if latest.is_empty() {
        return None;
    }
    let stale_weight = settings.stale_weight.clamp(0.0, 1.0);
    let mut points: Vec<(f64, f64)> = latest
        .iter()
        .map(|o| {
            let age = (as_of - o.observed_on).num_days();
            let w = if age > settings.stale_after_days {
                stale_weight
            } else {
                1.0
            };
            (
                effective_rate(o.rate, o.promo.as_deref(), settings.expected_stay_months),
                w,
            )
        })
        .collect();
    // All stale with weight 0: fall back to equal weights so there is still a band.
    if points.iter().all(|(_, w)| *w <= 0.0) {
        points.iter_mut().for_each(|p| p.1 = 1.0);
    }
    points.retain(|(_, w)| *w > 0.0);
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let stale = latest
        .iter()
        .filter(|o| (as_of - o.observed_on).num_days() > settings.stale_after_days)
        .count();
    Some(CompetitorBand {
        p25: weighted_percentile(&points, 0.25),
        median: weighted_percentile(&points, 0.5),
        p75: weighted_percentile(&points, 0.75),
        competitors: latest.len(),
        stale,
        weight: points.iter().map(|p| p.1).sum(),
        newest_observed_on: latest.iter().map(|o| o.observed_on).max()?,
        oldest_observed_on: latest.iter().map(|o| o.observed_on).min()?,
    })
}

/// Weighted Hazen percentile of sorted (value, weight) points with positive weights.
fn weighted_percentile(points: &[(f64, f64)], q: f64) -> f64 {
    let total: f64 = points.iter().map(|p| p.1).sum();
    let mut before = 0.0;
    let mut prev: Option<(f64, f64)> = None; // (position, value)
    for &(value, w) in points {
        let pos = (before + w / 2.0) / total;
        before += w;
        if pos >= q {
            return match prev {
                None => value,
                Some((p0, v0)) if pos > p0 => v0 + (value - v0) * (q - p0) / (pos - p0),
                Some(_) => value,
            };
        }
        prev = Some((pos, value));
    }
    points.last().map_or(0.0, |p| p.0)
}

/// The lease-up aggressive-fill suggestion for one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeaseUpFill {
    /// The suggested street rate (whole currency units when the bounds allow).
    pub rate: f64,
    /// The competitor 25th percentile it is placed at or below.
    pub p25: f64,
    /// `floor_share` x the current street rate: never suggested below it.
    pub floor: f64,
    /// True when the floor, not the percentile, set the rate.
    pub floor_applied: bool,
}

/// Lease-up aggressive fill: the competitor P25 less `discount_pct`, never below `floor_share`
/// (0.70) of the current street rate and never above the current rate. Rounded to whole currency
/// units inside those bounds (left unrounded when no whole number fits between them).
pub fn lease_up_fill(
    street_rate: f64,
    band: &CompetitorBand,
    discount_pct: f64,
    floor_share: f64,
) -> LeaseUpFill {
    let floor = street_rate * floor_share;
    let target = (band.p25 * (1.0 - discount_pct / 100.0)).min(street_rate);
    let (raw, floor_applied) = if target < floor {
        (floor, true)
    } else {
        (target, false)
    };
    let hi = band.p25.min(street_rate).max(floor);
    LeaseUpFill {
        rate: round_within(raw, floor, hi, 1.0),
        p25: band.p25,
        floor,
        floor_applied,
    }
}

/// Rounds to a multiple of `step` kept within [lo, hi]; returns the value unrounded (clamped)
/// when no multiple lies in the bounds.
pub fn round_within(value: f64, lo: f64, hi: f64, step: f64) -> f64 {
    let hi = hi.max(lo);
    let (lo_w, hi_w) = ((lo / step).ceil() * step, (hi / step).floor() * step);
    if lo_w > hi_w || lo_w < lo || hi_w > hi {
        return value.clamp(lo, hi);
    }
    ((value / step).round() * step).clamp(lo_w, hi_w)
}

#[cfg(test)]
mod tests;
