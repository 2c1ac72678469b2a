//! Existing-customer rent increases (ECRI), per size, from the tenant rents of a snapshot.
//!
//! Each tenant-rent row is a cohort (its tenants share an average rent and the months since
//! their last increase). Per cohort, in this order:
//! 1. no street rate for the size: no suggestion;
//! 2. ceiling = street x (1 + premium); a cohort at or above it gets nothing (`street_ceiling`);
//! 3. fewer months since the last increase than the minimum (or unknown): nothing
//!    (`months_since_last_increase`);
//! 4. increase = min(ceiling - rent, rent x max step, rent x jurisdiction cap), each cap that is
//!    the binding one reported (`street_ceiling`, `max_step`, `jurisdiction_cap`);
//! 5. rounded down to whole currency, so no cap is exceeded by rounding;
//! 6. below the minimum worth a notice: nothing (`minimum_increase`). The minimum is the
//!    larger of min % of rent and the min amount, except for a rent so small that the largest
//!    step allowed cannot reach the min amount (rent x max step < amount: under $50 with the
//!    defaults): there the min % alone applies, or no such rent could ever be raised.
//!
//! Per size: tenants affected = tenants of the cohorts with an increase; monthly uplift = sum of
//! tenants x increase; expected move-outs = tenants affected x the move-out rate after an
//! increase; net monthly uplift = uplift x (1 - that rate): the tenants expected to leave take
//! their increase with them. Their rent is not counted as lost, on the assumption that a vacated
//! unit re-lets at the street rate, which is at or above their new rent; the vacancy between two
//! tenants is not modelled.

use crate::values::round2;
use serde::Serialize;

/// The guardrails, each a named setting (docs/analytics.md).
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct EcriSettings {
    /// Minimum months since a cohort's last increase.
    pub min_months_since_increase: f64,
    /// Largest increase in one step, percent of the current rent.
    pub max_step_pct: f64,
    /// New rent never above street x (1 + this / 100).
    pub street_premium_pct: f64,
    /// Smallest increase worth a notice, percent of the current rent ...
    pub min_increase_pct: f64,
    /// ... and in currency; the larger of the two applies, except below the rent at which a
    /// full step reaches this amount (rent x max step < amount), where the percent alone does.
    pub min_increase_amount: f64,
    /// Legal cap per increase, percent, where one applies (e.g. 10 in a declared emergency area).
    pub jurisdiction_cap_pct: Option<f64>,
    /// Share of tenants expected to move out after an increase, percent (about 80 % stay).
    pub move_out_after_increase_pct: f64,
}

impl Default for EcriSettings {
    fn default() -> Self {
        Self {
            min_months_since_increase: 6.0,
            max_step_pct: 10.0,
            street_premium_pct: 0.0,
            min_increase_pct: 3.0,
            min_increase_amount: 5.0,
            jurisdiction_cap_pct: None,
            move_out_after_increase_pct: 20.0,
        }
    }
}

/// One tenant-rent row.
#[derive(Clone, Debug, PartialEq)]
pub struct Cohort {
    pub tenant_count: u32,
    pub avg_rent: f64,
    pub months_since_last_increase: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, utoipa::ToSchema)]
#[schema(as = EcriGuardrail)]
#[serde(rename_all = "snake_case")]
pub enum Guardrail {
    MonthsSinceLastIncrease,
    MaxStep,
    StreetCeiling,
    JurisdictionCap,
    MinimumIncrease,
}

/// The suggestion for one cohort: the increase per tenant (0 when none) and what limited it.
#[derive(Clone, Debug, PartialEq)]
pub struct CohortSuggestion {
    pub increase: f64,
    pub guardrails: Vec<Guardrail>,
}

pub fn suggest(c: &Cohort, street_rate: f64, s: &EcriSettings) -> CohortSuggestion {
    let none = |g: Guardrail| CohortSuggestion {
        increase: 0.0,
        guardrails: vec![g],
    };
    let ceiling = street_rate * (1.0 + s.street_premium_pct / 100.0);
    if c.avg_rent >= ceiling {
        return none(Guardrail::StreetCeiling);
    }
    match c.months_since_last_increase {
        Some(m) if m >= s.min_months_since_increase => {}
        _ => return none(Guardrail::MonthsSinceLastIncrease),
    }
    let mut candidates = vec![
        (ceiling - c.avg_rent, Guardrail::StreetCeiling),
        (c.avg_rent * s.max_step_pct / 100.0, Guardrail::MaxStep),
    ];
    if let Some(cap) = s.jurisdiction_cap_pct {
        candidates.push((c.avg_rent * cap / 100.0, Guardrail::JurisdictionCap));
    }
    let smallest = candidates.iter().map(|c| c.0).fold(f64::INFINITY, f64::min);
    let mut guardrails: Vec<Guardrail> = candidates
        .iter()
        .filter(|c| c.0 <= smallest)
        .map(|c| c.1)
        .collect();
    guardrails.sort();
    let increase = smallest.max(0.0).floor();
    let by_pct = c.avg_rent * s.min_increase_pct / 100.0;
    let full_step = c.avg_rent * s.max_step_pct / 100.0;
    let minimum = if full_step < s.min_increase_amount {
        by_pct
    } else {
        by_pct.max(s.min_increase_amount)
    };
    if increase < minimum {
        return none(Guardrail::MinimumIncrease);
    }
    CohortSuggestion {
        increase,
        guardrails,
    }
}

/// How many tenants a guardrail limited.
#[derive(Clone, Debug, PartialEq, Serialize, utoipa::ToSchema)]
#[schema(as = EcriGuardrailUse)]
pub struct GuardrailUse {
    /// The guardrail.
    pub guardrail: Guardrail,
    /// Tenants whose increase it limited.
    pub tenants: u32,
}

/// The ECRI figures of one size.
#[derive(Clone, Debug, PartialEq, Serialize, utoipa::ToSchema)]
pub struct SizeEcri {
    /// Tenants of the size.
    pub tenants: u32,
    /// Tenant-weighted average in-place rent.
    pub current_avg_rent: f64,
    /// Tenants paying less than the street rate.
    pub tenants_below_street: u32,
    /// street / current average rent - 1, percent.
    pub rent_gap_pct: f64,
    /// Tenants an increase is suggested for.
    pub tenants_affected: u32,
    /// Average increase per affected tenant (currency per month); 0 when none.
    pub suggested_increase: f64,
    /// suggested_increase / the affected tenants' average current rent, percent.
    pub suggested_increase_pct: f64,
    /// Affected tenants' average rent after the increase; null when none.
    pub suggested_new_rent: Option<f64>,
    /// Added rent per month if the suggestion is made.
    pub monthly_uplift: f64,
    /// Tenants expected to move out after the increase.
    pub expected_move_outs: f64,
    /// Monthly uplift less the rent of the expected move-outs.
    pub net_monthly_uplift: f64,
    /// Guardrails that limited the increase, with the tenants they held back.
    pub guardrails: Vec<GuardrailUse>,
}

/// Aggregates the cohorts of one size against its street rate.
pub fn size_ecri(cohorts: &[Cohort], street_rate: f64, s: &EcriSettings) -> SizeEcri {
    let mut tenants = 0u32;
    let mut rent_sum = 0.0;
    let mut below = 0u32;
    let mut affected = 0u32;
    let mut affected_rent = 0.0;
    let mut uplift = 0.0;
    let mut uses: Vec<GuardrailUse> = Vec::new();
    for c in cohorts {
        // Saturating: days stored before their tenant counts were bounded in total.
        tenants = tenants.saturating_add(c.tenant_count);
        rent_sum += f64::from(c.tenant_count) * c.avg_rent;
        if c.avg_rent < street_rate {
            below = below.saturating_add(c.tenant_count);
        }
        let sug = suggest(c, street_rate, s);
        if sug.increase > 0.0 {
            affected = affected.saturating_add(c.tenant_count);
            affected_rent += f64::from(c.tenant_count) * c.avg_rent;
            uplift += f64::from(c.tenant_count) * sug.increase;
        }
        for g in sug.guardrails {
            match uses.iter_mut().find(|u| u.guardrail == g) {
                Some(u) => u.tenants = u.tenants.saturating_add(c.tenant_count),
                None => uses.push(GuardrailUse {
                    guardrail: g,
                    tenants: c.tenant_count,
                }),
            }
        }
    }
    uses.sort_by_key(|u| u.guardrail);
    let current_avg_rent = if tenants > 0 {
        rent_sum / f64::from(tenants)
    } else {
        0.0
    };
    let rent_gap_pct = if current_avg_rent > 0.0 {
        (street_rate / current_avg_rent - 1.0) * 100.0
    } else {
        0.0
    };
    let (increase, increase_pct, new_rent) = if affected > 0 {
        let inc = uplift / f64::from(affected);
        let avg = affected_rent / f64::from(affected);
        (inc, inc / avg * 100.0, Some(round2(avg + inc)))
    } else {
        (0.0, 0.0, None)
    };
    let rate = s.move_out_after_increase_pct / 100.0;
    SizeEcri {
        tenants,
        current_avg_rent: round2(current_avg_rent),
        tenants_below_street: below,
        rent_gap_pct: round2(rent_gap_pct),
        tenants_affected: affected,
        suggested_increase: round2(increase),
        suggested_increase_pct: round2(increase_pct),
        suggested_new_rent: new_rent,
        monthly_uplift: round2(uplift),
        expected_move_outs: (f64::from(affected) * rate * 10.0).round() / 10.0,
        net_monthly_uplift: round2(uplift * (1.0 - rate)),
        guardrails: uses,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cohort(n: u32, rent: f64, months: f64) -> Cohort {
        Cohort {
            tenant_count: n,
            avg_rent: rent,
            months_since_last_increase: Some(months),
        }
    }

    #[test]
    fn step_cap_binds_far_below_street() {
        // Rent 100, street 130: gap 30, step cap 10 -> +10 (max_step).
        let s = suggest(&cohort(10, 100.0, 8.0), 130.0, &EcriSettings::default());
        assert_eq!(s.increase, 10.0);
        assert_eq!(s.guardrails, vec![Guardrail::MaxStep]);
    }

    #[test]
    fn street_ceiling_binds_near_street() {
        // Rent 120, street 127: gap 7 < cap 12 -> +7, stops at street.
        let s = suggest(&cohort(10, 120.0, 8.0), 127.0, &EcriSettings::default());
        assert_eq!(s.increase, 7.0);
        assert_eq!(s.guardrails, vec![Guardrail::StreetCeiling]);
    }

    #[test]
    fn too_soon_too_small_and_above_street_get_nothing() {
        let d = EcriSettings::default();
        assert_eq!(
            suggest(&cohort(5, 100.0, 4.0), 130.0, &d).guardrails,
            vec![Guardrail::MonthsSinceLastIncrease]
        );
        let unknown = Cohort {
            months_since_last_increase: None,
            ..cohort(5, 100.0, 0.0)
        };
        assert_eq!(
            suggest(&unknown, 130.0, &d).guardrails,
            vec![Guardrail::MonthsSinceLastIncrease]
        );
        // Rent 100, street 104: +4 is below max(3 % of 100, 5) = 5.
        let small = suggest(&cohort(5, 100.0, 9.0), 104.0, &d);
        assert_eq!(
            (small.increase, small.guardrails),
            (0.0, vec![Guardrail::MinimumIncrease])
        );
        assert_eq!(
            suggest(&cohort(5, 140.0, 9.0), 130.0, &d).guardrails,
            vec![Guardrail::StreetCeiling]
        );
    }

    #[test]
    fn a_small_rent_far_below_street_is_raised_by_the_percent_minimum() {
        // A 5x5 at $45.10, 18 % under its $55 street, 14 months since its last increase: a full
        // 10 % step is $4.51, which can never reach the $5 minimum; the 3 % minimum ($1.35)
        // applies, and it gets $4 (whole currency, rounded down).
        let d = EcriSettings::default();
        let s = suggest(&cohort(12, 45.10, 14.0), 55.0, &d);
        assert_eq!((s.increase, s.guardrails), (4.0, vec![Guardrail::MaxStep]));
        // At $50 a full step reaches $5: the $5 minimum applies again, as for any larger rent.
        let s = suggest(&cohort(12, 50.0, 14.0), 53.0, &d);
        assert_eq!(
            (s.increase, s.guardrails),
            (0.0, vec![Guardrail::MinimumIncrease]),
            "$3 to the street is under $5"
        );
        let s = suggest(&cohort(12, 30.0, 14.0), 30.5, &d);
        assert_eq!(
            (s.increase, s.guardrails),
            (0.0, vec![Guardrail::MinimumIncrease]),
            "$0.50 rounds down to nothing"
        );
    }

    #[test]
    fn jurisdiction_cap_and_premium() {
        let s = EcriSettings {
            jurisdiction_cap_pct: Some(7.0),
            street_premium_pct: 5.0,
            ..EcriSettings::default()
        };
        // Rent 200, street 190 (+5 % = 199.5): already above the ceiling.
        assert_eq!(suggest(&cohort(1, 200.0, 12.0), 190.0, &s).increase, 0.0);
        // Rent 150, street 200: gap 60, step 15, legal 10.5 -> floor 10.
        let r = suggest(&cohort(1, 150.0, 12.0), 200.0, &s);
        assert_eq!(r.increase, 10.0);
        assert_eq!(r.guardrails, vec![Guardrail::JurisdictionCap]);
    }

    #[test]
    fn size_figures_by_hand() {
        // Street 130. Cohort A: 40 tenants at 100, 8 months -> +10 (max step).
        // Cohort B: 10 tenants at 120, 3 months -> too soon. Cohort C: 10 at 135 -> above street.
        // Tenants 60; average rent (4000 + 1200 + 1350) / 60 = 109.17; below street 50.
        // Gap 130 / 109.1667 - 1 = 19.08 %. Affected 40, uplift 400, +10 = 10 % of 100,
        // new rent 110. Move-outs 40 x 20 % = 8; net uplift 400 x 0.8 = 320.
        let r = size_ecri(
            &[
                cohort(40, 100.0, 8.0),
                cohort(10, 120.0, 3.0),
                cohort(10, 135.0, 12.0),
            ],
            130.0,
            &EcriSettings::default(),
        );
        assert_eq!(r.tenants, 60);
        assert_eq!(r.current_avg_rent, 109.17);
        assert_eq!(r.tenants_below_street, 50);
        assert_eq!(r.rent_gap_pct, 19.08);
        assert_eq!(r.tenants_affected, 40);
        assert_eq!(r.suggested_increase, 10.0);
        assert_eq!(r.suggested_increase_pct, 10.0);
        assert_eq!(r.suggested_new_rent, Some(110.0));
        assert_eq!(r.monthly_uplift, 400.0);
        assert_eq!(r.expected_move_outs, 8.0);
        assert_eq!(r.net_monthly_uplift, 320.0);
        assert_eq!(
            r.guardrails,
            vec![
                GuardrailUse {
                    guardrail: Guardrail::MonthsSinceLastIncrease,
                    tenants: 10
                },
                GuardrailUse {
                    guardrail: Guardrail::MaxStep,
                    tenants: 40
                },
                GuardrailUse {
                    guardrail: Guardrail::StreetCeiling,
                    tenants: 10
                },
            ]
        );
    }

    proptest! {
        /// Whatever the input, a suggested increase respects every guardrail.
        #[test]
        fn guardrails_always_hold(
            rent in 1.0f64..2_000.0,
            street in 1.0f64..2_000.0,
            months in 0.0f64..40.0,
            premium in 0.0f64..20.0,
            step in 1.0f64..30.0,
            cap in proptest::option::of(1.0f64..30.0),
        ) {
            let s = EcriSettings {
                street_premium_pct: premium,
                max_step_pct: step,
                jurisdiction_cap_pct: cap,
                ..EcriSettings::default()
            };
            let r = suggest(&cohort(3, rent, months), street, &s);
            prop_assert!(r.increase >= 0.0);
            prop_assert_eq!(r.increase, r.increase.floor());
            if r.increase > 0.0 {
                prop_assert!(months >= s.min_months_since_increase);
                prop_assert!(rent + r.increase <= street * (1.0 + premium / 100.0) + 1e-9);
                prop_assert!(r.increase <= rent * step / 100.0 + 1e-9);
                if let Some(c) = cap {
                    prop_assert!(r.increase <= rent * c / 100.0 + 1e-9);
                }
                let minimum = if rent * step / 100.0 < 5.0 {
                    rent * 0.03
                } else {
                    (rent * 0.03).max(5.0)
                };
                prop_assert!(r.increase >= minimum);
            }
        }
    }
}
