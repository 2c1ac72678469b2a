//! Properties that hold for any input and settings.

use super::*;

fn settings_strategy() -> impl Strategy<Value = PricingSettings> {
    (
        0.0f64..50.0,
        0.0f64..1.0,
        1.0f64..3.0,
        0i64..30,
        any::<bool>(),
        0.0f64..50.0,
        0.3f64..1.0,
    )
        .prop_map(
            |(step, floor, ceiling, cooldown, round, disc, lu_floor)| PricingSettings {
                max_step_pct: step,
                floor_share_of_p25: floor,
                ceiling_share_of_p75: ceiling,
                cooldown_days: cooldown,
                round_to_whole: round,
                lease_up_discount_pct: disc,
                lease_up_floor_share: lu_floor,
                occupancy_max_pp: 30.0,
                competitor_max_pp: 30.0,
                ..PricingSettings::default()
            },
        )
}

fn input_strategy() -> impl Strategy<Value = FacilityInput> {
    let unit = (
        prop::sample::select(vec!["5x5", "5x10", "10x10", "10x15", "10x20"]),
        0.0f64..2000.0,
        prop::option::of(0.0f64..100.0),
        prop::option::of(0u32..500),
        prop::option::of(0i64..60),
        prop::option::of(any::<bool>()),
        prop::option::of((7u32..90, prop::option::of(0.0f64..100.0), 1.0f64..2000.0)),
    );
    let comp = (
        prop::sample::select(vec!["5x5", "5x10", "10x10", "10x15", "10x20"]),
        prop::sample::select(vec!["A", "B", "C", "D", "E", "F"]),
        0.0f64..2000.0,
        prop::option::of(prop::sample::select(vec![
            "First month free",
            "50% off 2 months",
            "$1 first month",
            "$500 off",
            "nonsense",
        ])),
        0i64..200,
    );
    (
        any::<bool>(),
        prop::option::of(0.0f64..100.0),
        prop::option::of(0.0f64..200.0),
        prop::option::of(0.0f64..100.0),
        0.5f64..1.5,
        0u32..1000,
        prop::collection::vec(unit, 0..20),
        prop::collection::vec(comp, 0..30),
        prop::collection::vec(
            (
                0.0f64..100.0,
                prop::sample::select(vec!["all", "10x10", "5x5 standard"]),
            ),
            0..3,
        ),
        0u32..365,
    )
        .prop_map(
            |(lease_up, occ, mtd, target, season, hist, units, comps, promos, day)| {
                let as_of = d("2026-01-01") + chrono::Days::new(u64::from(day));
                FacilityInput {
                    as_of,
                    mode: if lease_up {
                        Mode::LeaseUp
                    } else {
                        Mode::Stabilized
                    },
                    occupancy_pct: occ,
                    move_ins_mtd: mtd,
                    move_ins_target_monthly: target,
                    seasonality: SeasonalIndex {
                        index: season,
                        own_data: hist > 365,
                    },
                    history_days: hist,
                    unit_types: units
                        .into_iter()
                        .map(
                            |(size, rate, occ, n, changed, raised, earlier)| UnitTypeInput {
                                size: size.into(),
                                tier: "standard".into(),
                                street_rate: rate,
                                occupancy_pct: occ,
                                total_units: n,
                                last_rate_change: changed
                                    .map(|c| as_of - chrono::Days::new(c as u64)),
                                last_change_raised: raised,
                                history: Vec::new(),
                                earlier: earlier.map(|(days_ago, occupancy_pct, street_rate)| {
                                    EarlierReading {
                                        days_ago,
                                        occupancy_pct,
                                        street_rate,
                                    }
                                }),
                            },
                        )
                        .collect(),
                    promotions: promos
                        .into_iter()
                        .map(|(depth, to)| PromotionInput {
                            name: "p".into(),
                            depth_pct: depth,
                            applies_to: to.into(),
                        })
                        .collect(),
                    competitors: comps
                        .into_iter()
                        .map(|(size, name, rate, promo, age)| {
                            (
                                size.to_string(),
                                CompetitorObservation {
                                    competitor: name.into(),
                                    rate,
                                    promo: promo.map(Into::into),
                                    observed_on: as_of - chrono::Days::new(age as u64),
                                    tier: None,
                                },
                            )
                        })
                        .collect(),
                }
            },
        )
}

const EPS: f64 = 1e-9;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn guardrails_hold_for_any_input(input in input_strategy(), s in settings_strategy()) {
        let out = recommend(&input, &s);
        prop_assert_eq!(out.len(), input.unit_types.len());
        for (r, ut) in out.iter().zip(&input.unit_types) {
            prop_assert_eq!(&r.size, &ut.size);
            prop_assert!(r.recommended_rate.is_finite());
            prop_assert!((0.0..=1.0).contains(&r.confidence));
            prop_assert!(r.factors.iter().all(|f| f.contribution_pct.is_finite()));
            let cur = ut.street_rate;
            if cur <= 0.0 {
                prop_assert_eq!(r.recommended_rate, cur);
                continue;
            }
            // The step cap is never broken, in either mode.
            let step = s.max_step_pct / 100.0;
            prop_assert!(r.recommended_rate <= cur * (1.0 + step) + EPS, "{r:?}");
            prop_assert!(r.recommended_rate >= cur * (1.0 - step) - EPS, "{r:?}");
            if let Some(b) = &r.competitor_band {
                // A raise never goes above the ceiling, a cut never below the floor (within a
                // cent: the band is reported to cents, the engine used it unrounded).
                if r.recommended_rate > cur {
                    prop_assert!(r.recommended_rate <= round2(b.p75 * s.ceiling_share_of_p75) + 0.01 + EPS, "{r:?}");
                }
                if r.recommended_rate < cur {
                    prop_assert!(r.recommended_rate >= round2(b.p25 * s.floor_share_of_p25) - 0.01 - EPS, "{r:?}");
                }
                if r.mode == Mode::LeaseUp {
                    // The floor rounded to cents, or the rate itself when it is under a cent
                    // (a floor rounded up past it does not make holding wrong).
                    let floor = round2(cur * s.lease_up_floor_share).min(cur);
                    prop_assert!(r.recommended_rate >= floor - EPS, "{r:?}");
                }
            }
            // A size at or above the top of its band is cut only far above the P75.
            if r.recommended_rate < cur
                && r.occupancy_pct.is_some_and(|o| o >= s.occupancy_target_high_pct)
            {
                let b = r.competitor_band.as_ref();
                prop_assert!(
                    b.is_some_and(|b| cur > b.p75 * (1.0 + s.full_cut_above_p75_pct / 100.0)),
                    "{r:?}"
                );
            }
            // Outside lease-up, a size below its band is raised only while it fills fast.
            if r.recommended_rate > cur
                && r.mode != Mode::LeaseUp
                && r.occupancy_pct.is_some_and(|o| o < s.occupancy_target_low_pct)
            {
                let trend = crate::pricing::target::trend_pp_per_week(ut, r.occupancy_pct);
                prop_assert!(
                    trend.is_some_and(|t| t >= s.fill_first_pp_per_week),
                    "{r:?}"
                );
            }
            // Inside the cooldown the rate holds.
            if ut.last_rate_change.is_some_and(|c| (input.as_of - c).num_days() < s.cooldown_days) {
                prop_assert_eq!(r.recommended_rate, cur);
            }
            let expected_action = if r.recommended_rate > cur {
                Action::Raise
            } else if r.recommended_rate < cur {
                Action::Lower
            } else {
                Action::Hold
            };
            prop_assert_eq!(r.action, expected_action);
        }
    }

    /// The learned position reads only the past (the earlier reading against today's median),
    /// never the current rate, rises with the demand a size showed, and never goes under the
    /// revenue-best position.
    #[test]
    fn the_learned_position_rises_with_demand_and_ignores_the_current_rate(
        now in 0.0f64..100.0,
        more in 0.0f64..20.0,
        then in 0.0f64..100.0,
        days in 7u32..120,
        rate_then in 50.0f64..200.0,
        rate_now in 50.0f64..200.0,
        median in 50.0f64..200.0,
        elasticity in 0.5f64..10.0,
        fill in 50.0f64..100.0,
    ) {
        let s = PricingSettings {
            price_elasticity: elasticity,
            response_fill_pct: fill,
            ..PricingSettings::default()
        };
        let ut = |rate: f64| UnitTypeInput {
            size: "10x10".into(),
            tier: "standard".into(),
            street_rate: rate,
            occupancy_pct: None,
            total_units: Some(80),
            last_rate_change: None,
            last_change_raised: None,
            history: Vec::new(),
            earlier: Some(EarlierReading { days_ago: days, occupancy_pct: Some(then), street_rate: rate_then }),
        };
        let learn = |rate: f64, occ: f64| {
            crate::pricing::response::learned_response(d("2026-06-01"), &ut(rate), Some(occ), median, &s).unwrap()
        };
        let a = learn(rate_now, now);
        prop_assert!(a.position.is_finite() && a.demand.is_finite());
        prop_assert_eq!(a, learn(rate_now * 1.5, now));
        prop_assert!(
            a.position >= crate::pricing::response::revenue_best_position(elasticity) - 1e-9
        );
        let higher = (now + more).min(100.0);
        let b = learn(rate_now, higher);
        prop_assert!(b.position >= a.position - 1e-9, "{a:?} {b:?}");
    }

    #[test]
    fn band_percentiles_are_ordered_and_inside_the_rates(
        rates in prop::collection::vec((1.0f64..5000.0, 0i64..100), 1..40)
    ) {
        let as_of = d("2026-06-01");
        let obs: Vec<CompetitorObservation> = rates
            .iter()
            .enumerate()
            .map(|(i, (r, age))| CompetitorObservation {
                competitor: format!("c{i}"),
                rate: *r,
                promo: None,
                observed_on: as_of - chrono::Days::new(*age as u64),
                tier: None,
            })
            .collect();
        if let Some(b) = crate::pricing::band::competitor_band(&obs, as_of, &Default::default()) {
            let min = rates.iter().map(|r| r.0).fold(f64::MAX, f64::min);
            let max = rates.iter().map(|r| r.0).fold(f64::MIN, f64::max);
            prop_assert!(b.p25 <= b.median + EPS && b.median <= b.p75 + EPS);
            prop_assert!(b.p25 >= min - EPS && b.p75 <= max + EPS);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The same snapshot run again and again, each run's rate taken as the next run's rate:
    /// the rate never turns back, and it stops moving (a lasting signal does not compound).
    #[test]
    fn repeated_runs_on_one_snapshot_converge_without_compounding(
        input in input_strategy(),
        s in settings_strategy(),
        step in 5.0f64..50.0,
        recent in any::<bool>(),
    ) {
        let s = PricingSettings { max_step_pct: step, ..s };
        let mut input = input;
        // With a change a week ago inside the earlier reading's window, the price response
        // averages in the current rate (by the days it stood): that must not compound either.
        let changed = recent.then(|| input.as_of - chrono::Days::new(7));
        for ut in &mut input.unit_types {
            ut.last_rate_change = changed;
            ut.last_change_raised = None;
        }
        let mut history: Vec<Vec<f64>> = vec![input.unit_types.iter().map(|u| u.street_rate).collect()];
        // Every change is at least `min_change_pct` of the rate and, as asserted below, all in
        // one direction, so between a cent and a few thousand the rate can change at most
        // ln(4000 / 0.01) / ln(1.005), about 2,600 times; a rate that still moves after 3,000
        // runs is compounding. A run with a tight per-run limit (a lease-up floor share of
        // 0.99, say) legitimately takes hundreds of runs to arrive.
        let mut still = 0;
        for _ in 0..3_000 {
            let out = recommend(&input, &s);
            for (ut, r) in input.unit_types.iter_mut().zip(&out) {
                ut.street_rate = r.recommended_rate;
            }
            let rates: Vec<f64> = input.unit_types.iter().map(|u| u.street_rate).collect();
            still = if history.last() == Some(&rates) { still + 1 } else { 0 };
            history.push(rates);
            if still == 10 {
                break;
            }
        }
        for i in 0..input.unit_types.len() {
            let rates: Vec<f64> = history.iter().map(|h| h[i]).collect();
            let ups = rates.windows(2).any(|w| w[1] > w[0]);
            let downs = rates.windows(2).any(|w| w[1] < w[0]);
            prop_assert!(!(ups && downs), "turned back: {rates:?}");
            let tail = &rates[rates.len() - 10..];
            prop_assert!(tail.iter().all(|r| *r == tail[0]), "still moving after {} runs: {:?}", rates.len(), &rates[rates.len() - 20..]);
        }
    }

    /// A market that stays the same (competitors, occupancy, season, pace) day after day, the
    /// engine run daily with its cooldown and its last change: the rate settles and stays.
    #[test]
    fn a_constant_market_converges(input in input_strategy()) {
        let s = PricingSettings::default();
        let mut input = input;
        for ut in &mut input.unit_types {
            ut.last_rate_change = None;
            ut.last_change_raised = None;
            ut.earlier = None;
        }
        // Month-to-date move-ins change with the day of the month: not a constant market.
        input.move_ins_mtd = None;
        let start = input.as_of;
        let mut rates: Vec<Vec<f64>> = Vec::new();
        // Weekly, the default cooldown: a week is the soonest the rate may move again.
        for week in 0..200u64 {
            input.as_of = start + chrono::Days::new(week * 7);
            for (_, o) in &mut input.competitors {
                o.observed_on = input.as_of;
            }
            let out = recommend(&input, &s);
            for (ut, r) in input.unit_types.iter_mut().zip(&out) {
                if r.recommended_rate != ut.street_rate {
                    ut.last_rate_change = Some(input.as_of);
                    ut.last_change_raised = Some(r.recommended_rate > ut.street_rate);
                    ut.street_rate = r.recommended_rate;
                }
            }
            rates.push(input.unit_types.iter().map(|u| u.street_rate).collect());
        }
        let last = rates.last().cloned().unwrap_or_default();
        for r in &rates[rates.len() - 10..] {
            prop_assert_eq!(r, &last);
        }
    }
}
