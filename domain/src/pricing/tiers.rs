//! Tiers of a size as markets of their own (since engine 2026.11.9).
//!
//! - A unit type is banded against the competitor rates that name its tier when at least
//!   `tier_min_competitors` competitors priced that tier (`tier`).
//! - Otherwise against the size's whole set (every rate of the size, whatever its tier), each
//!   rate of a tier of the other class (climate-controlled against plain) converted by the
//!   tier premium (`size_adjusted`). The premium is learned from the facility's own street
//!   rates where a size has both classes, else `tier_premium_pct`.
//! - A size none of whose rates names a tier, and a unit type without a tier, are banded on the
//!   size's whole set as before (`size`).
//! - A climate-controlled tier recommended below a plain tier of its size is held at the plain
//!   tier's recommendation, with the reason (`hold_tier_order`).
//!
//! Tiers compare as unit types' tiers do (trimmed, case-insensitive). The rules are written
//! out in `docs/pricing.md`.

use super::band::{competitor_band, BandSettings, CompetitorBand, CompetitorObservation};
use super::engine::{size_key, Guardrail, Recommendation, UnitTypeInput};
use super::settings::PricingSettings;
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

/// A tier as compared: trimmed and lower case.
pub fn tier_key(tier: &str) -> String {
    tier.trim().to_lowercase()
}

/// Whether a tier is climate controlled (the premium class) rather than plain (drive-up,
/// outdoor, standard, interior, no tier...): one of its words is `climate`, `cc`, `heated`,
/// `conditioned`, `temperature` or `temp`, and none is a negation (`non`, `no`, `not`,
/// `without`, `unheated`): "Climate Controlled", "CC", "climate-drive-up" are climate;
/// "non-climate", "Drive Up", "standard" are plain.
pub fn is_climate(tier: &str) -> bool {
    let lower = tier.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let negated = words.iter().any(|w| {
        matches!(*w, "non" | "no" | "not" | "without" | "unheated") || w.starts_with("non")
    });
    let climate = words.iter().any(|w| {
        matches!(
            *w,
            "climate" | "cc" | "heated" | "conditioned" | "temperature" | "temp"
        ) || w.starts_with("climate")
    });
    climate && !negated
}

/// The premium of climate-controlled tiers over plain ones the fallback converts rates by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Premium {
    /// In percent (20 means climate is priced 1.2 times plain).
    pub pct: f64,
    /// Sizes of the facility with both classes the premium was learned from; 0 when it is the
    /// default.
    pub sizes: usize,
}

/// The climate premium of the facility's own street rates: per size that has both a climate
/// and a plain unit type with a rate, the mean climate rate over the mean plain rate; the
/// geometric mean of those over the sizes. With no such size, or a premium under 0 (climate
/// priced under plain is the inversion the engine flags, not a premium to learn), the default
/// `tier_premium_pct`.
pub fn premium(unit_types: &[UnitTypeInput], s: &PricingSettings) -> Premium {
    premium_of(
        unit_types
            .iter()
            .map(|ut| (ut.size.as_str(), ut.tier.as_str(), ut.street_rate)),
        s,
    )
}

/// `premium` of street rates given as (size, tier, street rate), one per unit type: what the
/// analytics read of a snapshot's unit types.
pub fn premium_of<'a>(
    unit_types: impl IntoIterator<Item = (&'a str, &'a str, f64)>,
    s: &PricingSettings,
) -> Premium {
    let mut sizes: Vec<(String, [f64; 2], [u32; 2])> = Vec::new();
    for (size, tier, street_rate) in unit_types {
        if !(street_rate.is_finite() && street_rate > 0.0) {
            continue;
        }
        let key = size_key(size);
        let class = usize::from(is_climate(tier));
        let i = match sizes.iter().position(|(k, _, _)| *k == key) {
            Some(i) => i,
            None => {
                sizes.push((key, [0.0; 2], [0; 2]));
                sizes.len() - 1
            }
        };
        sizes[i].1[class] += street_rate;
        sizes[i].2[class] += 1;
    }
    let logs: Vec<f64> = sizes
        .iter()
        .filter(|(_, _, n)| n[0] > 0 && n[1] > 0)
        .map(|(_, sum, n)| ((sum[1] / f64::from(n[1])) / (sum[0] / f64::from(n[0]))).ln())
        .collect();
    let fallback = Premium {
        pct: s.tier_premium_pct,
        sizes: 0,
    };
    if logs.is_empty() {
        return fallback;
    }
    let ratio = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
    if !(ratio.is_finite() && ratio >= 1.0) {
        return fallback;
    }
    Premium {
        pct: (ratio - 1.0) * 100.0,
        sizes: logs.len(),
    }
}

/// Which competitor set a unit type was banded against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = PricingCompetitorSetSource)]
pub enum SetSource {
    /// The size's rates, none naming a tier (or the unit type has no tier): as before tiers.
    Size,
    /// The rates that name the unit type's tier.
    Tier,
    /// The size's whole set, rates of the other class converted by the tier premium.
    SizeAdjusted,
}

/// The competitor set behind a unit type's band, as the run reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = PricingCompetitorSet)]
pub struct CompetitorSet {
    /// `size`, `tier` or `size_adjusted`.
    pub source: SetSource,
    /// Competitors whose rates name this unit type's tier.
    pub tier_competitors: usize,
    /// The premium (%) of climate over plain the other class's rates were converted by;
    /// null unless some were.
    pub premium_pct: Option<f64>,
    /// Sizes of the facility's own street rates the premium was learned from; 0 for the
    /// default `tier_premium_pct`; null when no rate was converted.
    pub premium_sizes: Option<usize>,
    /// The set in a sentence.
    pub detail: String,
}

/// Whether any of a size's rates names a tier: only then are its tiers banded apart.
pub fn names_a_tier(obs: &[CompetitorObservation]) -> bool {
    obs.iter().any(|o| o.tier.is_some())
}

/// A unit type as the tier rules name it: "climate 10x20"; the size alone without a tier.
pub fn unit_type_name(size: &str, tier: &str) -> String {
    match tier.trim() {
        "" => size.to_owned(),
        t => format!("{t} {size}"),
    }
}

/// The band of one unit type, given as (size, tier), and the set it was built from; `obs` are
/// the rates of its size.
pub fn band_for(
    (size, tier): (&str, &str),
    obs: &[CompetitorObservation],
    as_of: NaiveDate,
    bs: &BandSettings,
    s: &PricingSettings,
    premium: Premium,
) -> (Option<CompetitorBand>, Option<CompetitorSet>) {
    let key = tier_key(tier);
    if key.is_empty() || !names_a_tier(obs) {
        let band = competitor_band(obs, as_of, bs);
        let set = band.as_ref().map(|_| CompetitorSet {
            source: SetSource::Size,
            tier_competitors: 0,
            premium_pct: None,
            premium_sizes: None,
            detail: String::new(),
        });
        return (band, set);
    }
    let own: Vec<CompetitorObservation> = obs
        .iter()
        .filter(|o| o.tier.as_deref().is_some_and(|t| tier_key(t) == key))
        .cloned()
        .collect();
    let own_band = competitor_band(&own, as_of, bs);
    let own_count = own_band.as_ref().map_or(0, |b| b.competitors);
    let min = usize::try_from(s.tier_min_competitors.max(1)).unwrap_or(1);
    let name = unit_type_name(size, tier);
    if own_count >= min {
        let detail = format!(
            "banded against the {own_count} competitors that priced the {name} tier itself"
        );
        return (
            own_band,
            Some(CompetitorSet {
                source: SetSource::Tier,
                tier_competitors: own_count,
                premium_pct: None,
                premium_sizes: None,
                detail,
            }),
        );
    }
    let climate = is_climate(tier);
    let factor = 1.0 + premium.pct / 100.0;
    let mut converted = 0usize;
    // Each competitor counts once (its latest rate): on a tie of dates its rate of this tier
    // wins, then one of unknown tier, then one converted from the other class.
    let mut adjusted: Vec<(u8, CompetitorObservation)> = obs
        .iter()
        .map(|o| {
            let mut o = o.clone();
            let rank = match o.tier.as_deref() {
                Some(t) if tier_key(t) == key => 2,
                Some(t) if is_climate(t) != climate => {
                    o.rate = if climate {
                        o.rate * factor
                    } else {
                        o.rate / factor
                    };
                    converted += 1;
                    0
                }
                _ => 1,
            };
            (rank, o)
        })
        .collect();
    adjusted.sort_by_key(|(rank, _)| *rank);
    let adjusted: Vec<CompetitorObservation> = adjusted.into_iter().map(|(_, o)| o).collect();
    let band = competitor_band(&adjusted, as_of, bs);
    let set = band.as_ref().map(|b| {
        let other = if climate {
            "plain"
        } else {
            "climate-controlled"
        };
        let how = if converted == 0 {
            String::new()
        } else {
            format!(
                ", {other} tiers' rates converted by a climate premium of {:.1}% ({})",
                premium.pct,
                if premium.sizes == 0 {
                    "the default: no size of the facility prices both at a premium".to_owned()
                } else {
                    format!(
                        "learned from the facility's own rates of {} size{}",
                        premium.sizes,
                        if premium.sizes == 1 { "" } else { "s" }
                    )
                }
            )
        };
        CompetitorSet {
            source: SetSource::SizeAdjusted,
            tier_competitors: own_count,
            premium_pct: (converted > 0).then(|| crate::values::round2(premium.pct)),
            premium_sizes: (converted > 0).then_some(premium.sizes),
            detail: format!(
                "the {name} tier has {own_count} competitor{} of its own (fewer than {min}), so \
                 it is banded against the size's {} competitors{how}",
                if own_count == 1 { "" } else { "s" },
                b.competitors
            ),
        }
    });
    (band, set)
}

/// A climate-controlled tier the engine would have recommended below a plain tier of its size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = PricingTierInversion)]
pub struct TierInversion {
    /// The plain tier it fell below (the highest recommended one of the size).
    pub plain_tier: String,
    /// That tier's recommendation.
    pub plain_rate: f64,
    /// What the other rules recommended for this unit type.
    pub recommended_rate: f64,
    /// Where it is held: the plain tier's recommendation.
    pub held_at: f64,
    /// The reason in a sentence.
    pub reason: String,
}

/// Holds every climate-controlled recommendation at no lower than the highest plain
/// recommendation of its size, flags it and adds a `tier_order` guardrail; `set_rate` moves a
/// recommendation (its change and action with it). Unit types without a positive rate on
/// either side are left alone. The hold is the last rule: the tier order outranks the step and
/// the cooldown, since an inverted pair is a pricing error, not a market signal.
pub(crate) fn hold_tier_order(
    recs: &mut [Recommendation],
    set_rate: impl Fn(&mut Recommendation, f64),
) {
    let priced = |r: &Recommendation| {
        r.current_rate.is_finite()
            && r.current_rate > 0.0
            && r.recommended_rate.is_finite()
            && r.recommended_rate > 0.0
    };
    for i in 0..recs.len() {
        if !(is_climate(&recs[i].tier) && priced(&recs[i])) {
            continue;
        }
        let key = size_key(&recs[i].size);
        let plain = recs
            .iter()
            .filter(|r| !is_climate(&r.tier) && size_key(&r.size) == key && priced(r))
            .max_by(|a, b| a.recommended_rate.total_cmp(&b.recommended_rate))
            .map(|r| (r.tier.clone(), r.recommended_rate));
        let Some((plain_tier, plain_rate)) = plain else {
            continue;
        };
        let rec = &mut recs[i];
        let before = rec.recommended_rate;
        if before >= plain_rate {
            continue;
        }
        let plain_name = if plain_tier.trim().is_empty() {
            "the unit type without a tier".to_owned()
        } else {
            format!("the {}", plain_tier.trim())
        };
        let reason = format!(
            "the {} {} would be recommended at {before:.2}, below {plain_name} {} at \
             {plain_rate:.2}: a climate-controlled unit is never priced under a plain one of \
             its size, so it is held at {plain_rate:.2}",
            rec.tier.trim(),
            rec.size,
            rec.size
        );
        rec.guardrails.push(Guardrail {
            name: "tier_order".into(),
            before,
            after: plain_rate,
            detail: reason.clone(),
        });
        rec.tier_inversion = Some(TierInversion {
            plain_tier,
            plain_rate,
            recommended_rate: before,
            held_at: plain_rate,
            reason,
        });
        set_rate(rec, plain_rate);
    }
}

#[cfg(test)]
mod tests;
