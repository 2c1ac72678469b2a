use super::*;
use crate::pricing::band::CompetitorBand;
use crate::pricing::engine::Action as EngineAction;

fn day(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

/// A 10x10 at 100, 90 % occupied, band 100 / 135 / 145 (ceiling 166.75, floor 85), stabilized,
/// recommended 108 (+8 %).
fn rec(size: &str, tier: &str) -> Recommendation {
    Recommendation {
        size: size.into(),
        tier: tier.into(),
        mode: Mode::Stabilized,
        current_rate: 100.0,
        recommended_rate: 108.0,
        change_amount: 8.0,
        change_pct: 8.0,
        action: EngineAction::Raise,
        confidence: 0.8,
        occupancy_pct: Some(90.0),
        factors: vec![],
        guardrails: vec![],
        competitor_band: Some(CompetitorBand {
            p25: 100.0,
            median: 135.0,
            p75: 145.0,
            competitors: 4,
            stale: 0,
            weight: 4.0,
            newest_observed_on: day("2026-11-10"),
            oldest_observed_on: day("2026-11-10"),
        }),
        competitor_set: None,
        tier_inversion: None,
    }
}

fn ask(size: &str, action: Action, rate: Option<f64>) -> Requested {
    Requested {
        size: size.into(),
        tier: Some("standard".into()),
        action,
        rate,
        reason: None,
        force: false,
    }
}

fn names(b: &[Broken]) -> Vec<&str> {
    b.iter().map(|b| b.name).collect()
}

#[test]
fn an_override_within_every_guardrail_breaks_none() {
    let s = PricingSettings::default();
    let r = rec("10x10", "standard");
    for rate in [92.0, 100.0, 104.5, 108.0] {
        assert!(broken_guardrails(rate, &r, &s).is_empty(), "{rate}");
    }
}

#[test]
fn each_guardrail_is_named_where_the_engine_would_stop() {
    let s = PricingSettings::default();
    let r = rec("10x10", "standard");
    // The step: at most 8 % either way.
    assert_eq!(names(&broken_guardrails(108.01, &r, &s)), ["max_step"]);
    assert_eq!(names(&broken_guardrails(91.99, &r, &s)), ["max_step"]);
    // The ceiling: a raise past 115 % of the P75 (166.75).
    assert_eq!(
        names(&broken_guardrails(170.0, &r, &s)),
        ["max_step", "ceiling"]
    );
    let wide = PricingSettings {
        max_step_pct: 100.0,
        ..s
    };
    assert!(broken_guardrails(166.75, &r, &wide).is_empty());
    assert_eq!(names(&broken_guardrails(166.76, &r, &wide)), ["ceiling"]);
    // The floor: a cut below 85 % of the P25 (85).
    assert_eq!(names(&broken_guardrails(84.99, &r, &wide)), ["floor"]);
    assert!(broken_guardrails(85.0, &r, &wide).is_empty());
    // Lease-up: never below 70 % of the rate in force.
    let mut lease_up = rec("10x10", "standard");
    lease_up.mode = Mode::LeaseUp;
    lease_up.competitor_band = None;
    assert_eq!(
        names(&broken_guardrails(69.99, &lease_up, &wide)),
        ["lease_up_floor"]
    );
    assert!(broken_guardrails(70.0, &lease_up, &wide).is_empty());
    // A full size is not cut unless it is priced well above the P75.
    let mut full = rec("10x10", "standard");
    full.occupancy_pct = Some(95.0);
    full.competitor_band = None;
    assert_eq!(names(&broken_guardrails(99.0, &full, &s)), ["full_no_cut"]);
    assert!(broken_guardrails(101.0, &full, &s).is_empty());
    let mut overpriced = rec("10x10", "standard");
    overpriced.occupancy_pct = Some(95.0);
    overpriced.current_rate = 170.0;
    assert!(broken_guardrails(165.0, &overpriced, &s).is_empty());
}

#[test]
fn decisions_are_matched_to_the_runs_unit_types() {
    let s = PricingSettings::default();
    let recs = [rec("10x10", "standard"), rec("5x5", "standard")];
    let checked = check(
        &[
            ask("10X10", Action::Accept, None),
            Requested {
                reason: Some("  too steep  ".into()),
                ..ask("5x5", Action::Reject, None)
            },
        ],
        &recs,
        &s,
    )
    .unwrap();
    assert_eq!(checked[0].size, "10x10");
    assert_eq!(checked[0].rate, Some(108.0));
    assert_eq!(checked[0].previous_rate, 100.0);
    assert_eq!(checked[1].rate, None);
    assert_eq!(checked[1].reason.as_deref(), Some("too steep"));

    let err = |r: &[Requested]| check(r, &recs, &s).unwrap_err();
    assert_eq!(err(&[]).path, "decisions");
    let unknown = err(&[
        ask("10x10", Action::Accept, None),
        ask("7x7", Action::Accept, None),
    ]);
    assert_eq!(unknown.path, "decisions[1]");
    assert!(
        unknown.message.contains("10x10 standard, 5x5 standard"),
        "{}",
        unknown.message
    );
    let no_tier = err(&[Requested {
        tier: None,
        ..ask("10x10", Action::Accept, None)
    }]);
    assert_eq!(no_tier.path, "decisions[0]");
    let twice = err(&[
        ask("10x10", Action::Accept, None),
        ask("10x10", Action::Reject, None),
    ]);
    assert_eq!(twice.path, "decisions[1]");
    assert!(twice.message.contains("decisions[0]"));
    assert_eq!(
        err(&[ask("10x10", Action::Override, None)]).path,
        "decisions[0].rate"
    );
    assert_eq!(
        err(&[ask("10x10", Action::Override, Some(0.0))]).path,
        "decisions[0].rate"
    );
    assert_eq!(
        err(&[ask("10x10", Action::Accept, Some(100.0))]).path,
        "decisions[0].rate"
    );
    let long = err(&[Requested {
        reason: Some("x".repeat(501)),
        ..ask("10x10", Action::Reject, None)
    }]);
    assert_eq!(long.path, "decisions[0].reason");
}

#[test]
fn an_override_past_a_guardrail_needs_force_and_a_reason() {
    let s = PricingSettings::default();
    let recs = [rec("10x10", "standard")];
    let e = check(&[ask("10x10", Action::Override, Some(120.0))], &recs, &s).unwrap_err();
    assert_eq!(e.path, "decisions[0]");
    assert!(e.message.contains("max_step"), "{}", e.message);
    assert!(e.message.contains("force: true"), "{}", e.message);
    // Force without a reason is not enough.
    let forced_bare = Requested {
        force: true,
        reason: Some("   ".into()),
        ..ask("10x10", Action::Override, Some(120.0))
    };
    assert!(check(std::slice::from_ref(&forced_bare), &recs, &s).is_err());
    let forced = Requested {
        reason: Some("new building opened".into()),
        ..forced_bare
    };
    let c = &check(&[forced], &recs, &s).unwrap()[0];
    assert!(c.forced);
    assert_eq!(c.broken, ["max_step"]);
    assert_eq!(c.rate, Some(120.0));
    // Force on an override that breaks nothing stores it as a plain override.
    let within = Requested {
        force: true,
        ..ask("10x10", Action::Override, Some(104.999))
    };
    let c = &check(&[within], &recs, &s).unwrap()[0];
    assert!(!c.forced);
    assert_eq!(c.rate, Some(105.0));
}

#[test]
fn auto_accept_takes_small_raises_and_lowers_never_holds() {
    let mut small = rec("10x10", "a");
    small.change_pct = 3.0;
    small.recommended_rate = 103.0;
    let big = rec("10x10", "b");
    let mut lower = rec("5x5", "a");
    lower.change_pct = -2.0;
    lower.recommended_rate = 98.0;
    lower.action = EngineAction::Lower;
    let mut hold = rec("5x5", "b");
    hold.change_pct = 0.0;
    hold.recommended_rate = 100.0;
    hold.action = EngineAction::Hold;
    let recs = [small, big, lower, hold];
    assert!(auto_accepted(&recs, &PricingSettings::default()).is_empty());
    let s = PricingSettings {
        auto_accept_within_pct: 3.0,
        ..PricingSettings::default()
    };
    let taken: Vec<(String, Option<f64>)> = auto_accepted(&recs, &s)
        .into_iter()
        .map(|c| (format!("{} {}", c.size, c.tier), c.rate))
        .collect();
    assert_eq!(
        taken,
        [
            ("10x10 a".to_owned(), Some(103.0)),
            ("5x5 a".to_owned(), Some(98.0))
        ]
    );
}

#[test]
fn an_approved_rate_is_pending_until_shown_or_fourteen_days_pass() {
    let decided = day("2026-11-10");
    assert_eq!(
        status(decided, None, Some(day("2026-11-10"))),
        Status::Pending
    );
    assert_eq!(
        status(decided, None, Some(day("2026-11-23"))),
        Status::Pending
    );
    assert_eq!(
        status(decided, None, Some(day("2026-11-24"))),
        Status::NotApplied
    );
    assert_eq!(
        status(decided, Some(day("2026-11-10")), Some(day("2026-11-30"))),
        Status::Applied
    );
    assert_eq!(
        status(decided, Some(day("2026-11-09")), Some(day("2026-11-11"))),
        Status::Pending
    );
}

#[test]
fn summaries_read_as_sentences_in_the_companys_currency() {
    let s = PricingSettings::default();
    let recs = [rec("10x10", "")];
    let one = |r: Requested| check(&[r], &recs, &s).unwrap().remove(0);
    let usd = Currency::USD;
    let accept = one(Requested {
        tier: None,
        ..ask("10x10", Action::Accept, None)
    });
    assert_eq!(
        summary(&accept, usd, false),
        "Accepted 10x10 at $108.00 (was $100.00)"
    );
    assert_eq!(
        summary(&accept, usd, true),
        "Accepted automatically 10x10 at $108.00 (was $100.00)"
    );
    let forced = one(Requested {
        tier: None,
        force: true,
        reason: Some("market moved".into()),
        ..ask("10x10", Action::Override, Some(120.0))
    });
    assert_eq!(
        summary(&forced, usd, false),
        "Overrode 10x10 to $120.00 (recommended $108.00, was $100.00), past max_step"
    );
    let reject = one(Requested {
        tier: None,
        ..ask("10x10", Action::Reject, None)
    });
    assert_eq!(
        summary(&reject, Currency::parse("JPY").unwrap(), false),
        "Rejected the recommendation of ¥108 for 10x10 (stays at ¥100)"
    );
}
