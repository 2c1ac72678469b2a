//! The move-out's cost from how vacant units re-let, the caps over time, the flag synonyms and
//! the held increases.

use super::*;
use crate::ecri::settings::EcriEngineSettings;
use crate::ecri::stay::StayModel;

pub(super) fn tenant(rent: f64) -> TenantInput {
    TenantInput {
        tenant_id: "t".to_owned(),
        size: "10x10".to_owned(),
        tier: None,
        rent,
        months_since_move_in: Some(30.0),
        months_since_last_increase: Some(12.0),
        pending_increase: None,
        past_increases: 1,
        rent_12_months_ago: None,
        rent_at_cap_base: None,
        customer_id: None,
        flags: Vec::new(),
        tenant_count: 1,
    }
}

pub(super) fn market(street: f64, units: u32, occupancy: f64, ins: f64, outs: f64) -> SizeMarket {
    SizeMarket {
        street_rate: street,
        of_tier: false,
        competitor_low: None,
        competitor_median: Some(street),
        competitor_high: None,
        units,
        occupancy_pct: occupancy,
        move_ins_per_month: ins,
        move_outs_per_month: Some(outs),
    }
}

fn reason_text<'a>(s: &'a Suggestion, name: &str) -> &'a str {
    &s.reasons
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("{name} in {:?}", s.reasons))
        .text
}

#[test]
fn a_vacant_unit_re_lets_at_the_gross_move_in_pace_not_the_net_one() {
    // The demo: 600 units 87 % full (78 vacant), 40 move-ins a month and 42 move-outs. The net
    // pace is below zero, yet the units re-let: 78 / 40 = 1.95 months, shrunk toward 1.5:
    // D = 78 x (2.957 + 1) / (40 x 2.957 + 1 x 78 / 1.5) = 308.6 / 170.3 = 1.81 months.
    let demo = market(116.69, 600, 87.0, 40.0, 42.0);
    let d = demo.expected_vacant_months(12.0);
    assert!((d - 1.812).abs() < 0.01, "{d}");
    // One tier of it: 120 units 87 % full (15.6 vacant), its 10 move-ins a month: 1.54 months.
    let tier = SizeMarket {
        move_outs_per_month: None,
        ..market(125.0, 120, 87.0, 10.0, 11.0)
    };
    let d = tier.expected_vacant_months(12.0);
    assert!((1.0..2.0).contains(&d), "{d}");
    assert!((d - 1.545).abs() < 0.01, "{d}");
    // The reason says it in days, not the horizon's 365.
    let s = EcriEngineSettings::default();
    let model = StayModel::from_prior(&s.stay_prior);
    let r = decide(&tenant(100.0), &tier, &model, &s);
    let text = reason_text(&r, "move_out_cost");
    assert!(text.contains("empty about 47 days"), "{text}");
    // No move-in at all in 90 days: long, but the prior keeps it finite; at most the horizon.
    let dead = market(100.0, 50, 90.0, 0.0, 2.0);
    let d = dead.expected_vacant_months(12.0);
    assert!((d - 5.94).abs() < 0.01, "{d}");
    assert_eq!(dead.expected_vacant_months(3.0), 3.0);
    // Full: the vacated unit is the only one, let within days.
    let full = market(100.0, 100, 100.0, 10.0, 10.0);
    assert!(full.expected_vacant_months(12.0) < 0.2);
}

#[test]
fn a_tenant_is_weighed_against_its_tiers_street_rate() {
    // 10x10: climate at 125, drive-up at 106, 116.69 the size's blend.
    let climate = SizeMarket {
        of_tier: true,
        ..market(125.0, 60, 87.0, 5.0, 5.0)
    };
    let drive_up = SizeMarket {
        of_tier: true,
        ..market(106.0, 60, 87.0, 5.0, 5.0)
    };
    let markets = BTreeMap::from([
        ("10x10".to_owned(), market(116.69, 120, 87.0, 10.0, 10.0)),
        (market_key("10x10", "Climate "), climate),
        (market_key("10x10", "drive-up"), drive_up),
    ]);
    let s = EcriEngineSettings::default();
    let model = StayModel::from_prior(&s.stay_prior);
    let with_tier = |tier: Option<&str>| TenantInput {
        tier: tier.map(str::to_owned),
        ..tenant(100.0)
    };
    let roll = [
        with_tier(Some("CLIMATE")),
        with_tier(Some("drive-up")),
        with_tier(Some("vault")),
        with_tier(None),
    ];
    assert_eq!(market_for(&markets, &roll[0]), Some(&climate));
    let out = decide_facility(&roll, &markets, &model, &[], &s);
    assert!(
        reason_text(&out[0], "move_out_cost").contains("the 10x10 CLIMATE street rate 125.00"),
        "{:?}",
        out[0].reasons
    );
    assert!(reason_text(&out[1], "move_out_cost").contains("street rate 106.00"));
    assert!(reason_text(&out[1], "rent_against_street").contains("106.00"));
    // An unknown tier, or none: the size's market.
    for r in &out[2..] {
        assert!(reason_text(r, "move_out_cost").contains("the 10x10 street rate 116.69"));
    }
    // The street cap follows the tier: 20 % over 125 is 150, over 106 is 127.2.
    let rich = [
        TenantInput {
            rent: 145.0,
            ..roll[0].clone()
        },
        TenantInput {
            rent: 130.0,
            ..roll[1].clone()
        },
    ];
    let out = decide_facility(&rich, &markets, &model, &[], &s);
    assert!(out[0].new_rent <= 150.0, "{:?}", out[0]);
    assert_eq!(
        (out[1].increase, out[1].binding_guardrail),
        (0.0, Some(Guardrail::MaxPremiumOverStreet))
    );
}

/// Settings under which the caps below bind: the curve read at the estimate, so the tenant
/// raised 7 months before (whose ρ and ρ12 the prior alone knows) wants more than they allow.
fn cap_settings() -> EcriEngineSettings {
    EcriEngineSettings {
        uncertainty_pct: 0.0,
        ..EcriEngineSettings::default()
    }
}

/// A tenant the engine raises well past 15 %: rent 110 in a size whose street is 150.
fn raised_twice() -> (TenantInput, SizeMarket, StayModel) {
    let s = cap_settings();
    let t = TenantInput {
        rent: 110.0,
        rent_12_months_ago: Some(100.0),
        months_since_last_increase: Some(7.0),
        ..tenant(110.0)
    };
    (
        t,
        market(150.0, 100, 95.0, 10.0, 10.0),
        StayModel::from_prior(&s.stay_prior),
    )
}

#[test]
fn the_twelve_month_cap_holds_across_two_increases() {
    let (t, m, model) = raised_twice();
    let open = cap_settings();
    let free = decide(&t, &m, &model, &open);
    assert!(free.new_rent > 115.0, "{free:?}");
    // 100 twelve months ago, 110 now: +15 % over 12 months leaves 5.
    let capped = EcriEngineSettings {
        cap_12_months_pct: Some(15.0),
        ..open.clone()
    };
    let r = decide(&t, &m, &model, &capped);
    assert_eq!(
        (r.new_rent, r.binding_guardrail),
        (115.0, Some(Guardrail::TwelveMonthCap))
    );
    let text = reason_text(&r, "twelve_month_cap");
    assert!(
        text.contains("the rent of 12 months before 100.00"),
        "{text}"
    );
    // Already 10 % up and a cap of 10 %: nothing left this year.
    let spent = EcriEngineSettings {
        cap_12_months_pct: Some(10.0),
        ..open.clone()
    };
    let r = decide(&t, &m, &model, &spent);
    assert_eq!(
        (r.increase, r.binding_guardrail),
        (0.0, Some(Guardrail::TwelveMonthCap))
    );
    // Unknown rent of 12 months before: the cap is over the rent now.
    let unknown = TenantInput {
        rent_12_months_ago: None,
        ..t.clone()
    };
    assert_eq!(decide(&unknown, &m, &model, &capped).new_rent, 126.0);
    // An edited rent above it is refused, naming it.
    let refused = reprice(&t, &m, &model, &capped, 116.0).unwrap_err();
    assert_eq!(refused.guardrail, Guardrail::TwelveMonthCap);
    assert!(refused
        .text
        .contains("twelve_month_cap holds the new rent at 115.00"));
    assert!(reprice(&t, &m, &model, &capped, 115.0).is_ok());
}

#[test]
fn an_emergency_cap_is_over_the_rent_before_the_emergency() {
    let (t, m, model) = raised_twice();
    // 10 % from the rent in force on the day the emergency began (100), not from 110.
    let s = EcriEngineSettings {
        jurisdiction_cap_pct: Some(10.0),
        cap_base_date: NaiveDate::from_ymd_opt(2026, 1, 7),
        ..cap_settings()
    };
    let t = TenantInput {
        rent: 105.0,
        rent_at_cap_base: Some(100.0),
        ..t
    };
    let r = decide(&t, &m, &model, &s);
    assert_eq!(
        (r.new_rent, r.binding_guardrail),
        (110.0, Some(Guardrail::EmergencyCap))
    );
    assert!(reason_text(&r, "emergency_cap").contains("the rent in force on 2026-01-07 100.00"));
    // Without the date the cap is over the rent now: 105 x 1.1 = 115.50.
    let now = EcriEngineSettings {
        cap_base_date: None,
        ..s.clone()
    };
    let r = decide(&t, &m, &model, &now);
    assert_eq!(
        (r.new_rent, r.binding_guardrail),
        (115.0, Some(Guardrail::JurisdictionCap))
    );
    let refused = reprice(&t, &m, &model, &s, 112.0).unwrap_err();
    assert_eq!(refused.guardrail, Guardrail::EmergencyCap);
    assert!(refused.text.contains("emergency_cap"), "{}", refused.text);
    assert_eq!(
        reprice(&t, &m, &model, &now, 116.0).unwrap_err().guardrail,
        Guardrail::JurisdictionCap
    );
}

#[test]
fn flags_are_matched_through_their_synonyms() {
    let s = EcriEngineSettings::default();
    let flagged = |f: &str| s.excludes(&[f.to_owned()]);
    assert_eq!(flagged("DNI").as_deref(), Some("DNI (do_not_increase)"));
    assert_eq!(
        flagged("Do Not Increase").as_deref(),
        Some("Do Not Increase (do_not_increase)")
    );
    assert!(flagged("do-not-increase").is_some());
    assert_eq!(flagged("scra").as_deref(), Some("scra (military)"));
    assert_eq!(flagged("military").as_deref(), Some("military"));
    for f in [
        "Active-Duty",
        "LIEN",
        "pre lien",
        "Past Due",
        "bankruptcy",
        "Business",
    ] {
        assert!(flagged(f).is_some(), "{f}");
    }
    assert_eq!(flagged("vip"), None);
    assert_eq!(flagged("veteran"), None);
    // The operator's own: `no bump` means do not increase, `veteran` is taken as military.
    let own = EcriEngineSettings {
        flag_synonyms: BTreeMap::from([
            ("No-Bump".to_owned(), "do not increase".to_owned()),
            ("veteran".to_owned(), "SCRA".to_owned()),
        ]),
        ..s.clone()
    };
    assert_eq!(
        own.excludes(&["no bump".to_owned()]).as_deref(),
        Some("no bump (do_not_increase)")
    );
    assert!(own.excludes(&["Veteran".to_owned()]).is_some());
    // Military excluded by default, not always: an operator may leave it out.
    let raise_military = EcriEngineSettings {
        excluded_flags: vec!["delinquent".to_owned()],
        ..s.clone()
    };
    assert_eq!(raise_military.excludes(&["SCRA".to_owned()]), None);
    assert!(raise_military.excludes(&["dni".to_owned()]).is_some());
    // And the engine holds such a tenant, naming the flag.
    let model = StayModel::from_prior(&s.stay_prior);
    let t = TenantInput {
        flags: vec!["no_bump".to_owned()],
        ..tenant(100.0)
    };
    let m = market(130.0, 100, 95.0, 10.0, 10.0);
    let r = decide(&t, &m, &model, &own);
    assert_eq!(r.binding_guardrail, Some(Guardrail::ExcludedFlag));
    assert!(reason_text(&r, "excluded_flag").contains("no_bump (do_not_increase)"));
    assert!(decide(&t, &m, &model, &s).increase > 0.0);
}

#[test]
fn an_approved_increase_not_yet_in_force_holds_the_tenant() {
    let s = EcriEngineSettings::default();
    let model = StayModel::from_prior(&s.stay_prior);
    let t = TenantInput {
        pending_increase: NaiveDate::from_ymd_opt(2026, 12, 20),
        ..tenant(100.0)
    };
    let m = market(130.0, 100, 95.0, 10.0, 10.0);
    let r = decide(&t, &m, &model, &s);
    assert_eq!(
        (r.increase, r.binding_guardrail),
        (0.0, Some(Guardrail::MonthsSinceIncrease))
    );
    assert!(reason_text(&r, "months_since_increase").contains("2026-12-20"));
    assert_eq!(
        reprice(&t, &m, &model, &s, 110.0).unwrap_err().guardrail,
        Guardrail::MonthsSinceIncrease
    );
}

#[test]
fn the_compliance_settings_name_their_bad_field() {
    let bad = |json: serde_json::Value| EcriEngineSettings::with_overrides(&json).unwrap_err().path;
    assert_eq!(
        bad(serde_json::json!({"cap_12_months_pct": 150})),
        "ecri_settings.cap_12_months_pct"
    );
    assert_eq!(
        bad(serde_json::json!({"cap_base_date": "2026-01-07"})),
        "ecri_settings.cap_base_date"
    );
    assert_eq!(
        bad(serde_json::json!({"jurisdiction_cap_pct": 10, "cap_base_date": "1900-01-01"})),
        "ecri_settings.cap_base_date"
    );
    assert!(bad(serde_json::json!({"cap_base_date": "January"})).contains("cap_base_date"));
    assert_eq!(
        bad(serde_json::json!({"flag_synonyms": {"  ": "military"}})),
        "ecri_settings.flag_synonyms.  "
    );
    let ok = EcriEngineSettings::with_overrides(&serde_json::json!({
        "cap_12_months_pct": 15, "jurisdiction_cap_pct": 10, "cap_base_date": "2026-01-07",
        "flag_synonyms": {"no bump": "do_not_increase"}
    }))
    .unwrap();
    assert_eq!(ok.cap_12_months_pct, Some(15.0));
    assert_eq!(ok.cap_base_date, NaiveDate::from_ymd_opt(2026, 1, 7));
    assert_eq!(ok.flag_synonyms.len(), 1);
    // The defaults change nothing for a facility's caps.
    let d = EcriEngineSettings::default();
    assert_eq!((d.cap_12_months_pct, d.cap_base_date), (None, None));
}

proptest::proptest! {
    /// Whatever the history and the caps, a suggested or accepted rent is within both new caps.
    #[test]
    fn no_rent_passes_a_cap_over_time(
        rent in 20.0f64..400.0,
        year_ago in 0.5f64..1.2,
        at_base in 0.5f64..1.2,
        cap12 in 0.0f64..40.0,
        cap in 0.0f64..20.0,
        street in 20.0f64..400.0,
        ins in 0.0f64..30.0,
        edited in 0.0f64..0.5,
    ) {
        let s = EcriEngineSettings {
            cap_12_months_pct: Some(cap12),
            jurisdiction_cap_pct: Some(cap),
            cap_base_date: NaiveDate::from_ymd_opt(2026, 1, 7),
            ..EcriEngineSettings::default()
        };
        let t = TenantInput {
            rent_12_months_ago: Some(rent * year_ago),
            rent_at_cap_base: Some(rent * at_base),
            ..tenant(rent)
        };
        let m = market(street, 100, 90.0, ins, ins);
        let model = StayModel::from_prior(&s.stay_prior);
        let within = |r: f64| {
            r <= rent * year_ago * (1.0 + cap12 / 100.0) + 1e-6
                && r <= rent * at_base * (1.0 + cap / 100.0) + 1e-6
        };
        let r = decide(&t, &m, &model, &s);
        proptest::prop_assert!(r.increase == 0.0 || within(r.new_rent), "{r:?}");
        let hand = (rent * (1.0 + edited)).round();
        if let Ok(ok) = reprice(&t, &m, &model, &s, hand) {
            proptest::prop_assert!(within(ok.new_rent), "{ok:?}");
        }
    }
}

/// A roll of `n` alike tenants far under street, each its own id.
fn alike_roll(n: usize) -> Vec<TenantInput> {
    (0..n)
        .map(|i| TenantInput {
            tenant_id: format!("T-{i:04}"),
            ..tenant(100.0)
        })
        .collect()
}

#[test]
fn the_ramp_holds_back_most_of_the_first_increases_under_the_prior() {
    let s = EcriEngineSettings {
        ramp_share_pct: 30.0,
        ..EcriEngineSettings::default()
    };
    let roll = alike_roll(400);
    let markets = BTreeMap::from([("10x10".to_owned(), market(130.0, 500, 90.0, 20.0, 18.0))]);
    let prior = StayModel::from_prior(&s.stay_prior);
    let out = decide_facility(&roll, &markets, &prior, &[], &s);
    let raised = out.iter().filter(|x| x.increase > 0.0).count();
    let ramp = out
        .iter()
        .filter(|x| x.binding_guardrail == Some(Guardrail::Ramp))
        .count();
    assert_eq!(raised + ramp, 400);
    // About the ramp's 30 % go first, the same ones run after run.
    assert!((90..=150).contains(&raised), "{raised}");
    assert_eq!(out, decide_facility(&roll, &markets, &prior, &[], &s));
    let held = out.iter().find(|x| x.increase == 0.0).unwrap();
    assert!(reason_text(held, "ramp").contains("30 % of its increases go now"));
    // Once the facility's own outcomes carry its model, every increase goes.
    let learned = StayModel {
        evidence_weight: 0.8,
        ..prior
    };
    let out = decide_facility(&roll, &markets, &learned, &[], &s);
    assert!(out.iter().all(|x| x.increase > 0.0));
    // A ramp of 100 % (the default) is none.
    let out = decide_facility(&roll, &markets, &prior, &[], &EcriEngineSettings::default());
    assert!(out.iter().all(|x| x.increase > 0.0));
}

#[test]
fn a_move_out_in_a_size_that_is_not_full_costs_until_the_size_would_fill() {
    // 200 units 80 % full (40 vacant), 10 move-ins a month: the gross pace re-lets a vacant
    // unit in about 2.8 months, but one vacancy more is filled only when the size runs out of
    // vacant units.
    let size = |outs: Option<f64>| SizeMarket {
        move_outs_per_month: outs,
        ..market(100.0, 200, 80.0, 10.0, 0.0)
    };
    let gross = size(None).expected_vacant_months(12.0);
    assert!((2.0..4.5).contains(&gross), "{gross}");
    assert_eq!(size(None).marginal_vacant_months(12.0), gross);
    // Filling by 5 a month: 40 / 5 = 8 months.
    assert!((size(Some(5.0)).marginal_vacant_months(12.0) - 8.0).abs() < 1e-9);
    // As many out as in: it never fills within the horizon.
    assert_eq!(size(Some(10.0)).marginal_vacant_months(12.0), 12.0);
    // Filling by 10 a month: 4 months.
    assert!((size(Some(0.0)).marginal_vacant_months(12.0) - 4.0).abs() < 1e-9);
    // Full (95 % and more): the vacated unit re-lets at the gross pace.
    let full = SizeMarket {
        occupancy_pct: 97.0,
        ..size(Some(10.0))
    };
    assert_eq!(
        full.marginal_vacant_months(12.0),
        full.expected_vacant_months(12.0)
    );
}

#[test]
fn the_re_let_pace_is_shrunk_toward_its_prior_by_the_weight_of_a_month() {
    // Where the size's own pace says what the prior says (V / I = 1.5 months), that is the
    // answer, however many units.
    for (units, ins) in [(100, 6.0), (1000, 60.0)] {
        let m = market(100.0, units, 91.0, ins, 0.0);
        let d = m.expected_vacant_months(12.0);
        assert!((d - RELET_PRIOR_MONTHS).abs() < 1e-9, "{units} {d}");
    }
    // 30 vacant units, 5 move-ins a month: its own 6 months, the prior 1.5 weighing one month
    // against the pace's 2.957: 30 x 3.957 / (5 x 2.957 + 30 / 1.5) = 3.41 months.
    let slow = market(100.0, 100, 70.0, 5.0, 0.0);
    let d = slow.expected_vacant_months(12.0);
    let by_hand = 30.0 * (PACE_MONTHS + 1.0) / (5.0 * PACE_MONTHS + 30.0 / 1.5);
    assert!((d - by_hand).abs() < 1e-9 && (d - 3.41).abs() < 0.01, "{d}");
    assert!(d > RELET_PRIOR_MONTHS && d < 6.0);
    // Ten times the evidence (10x the units and the move-ins): nearer its own 6 months.
    let more = market(100.0, 1000, 70.0, 50.0, 0.0);
    let d10 = more.expected_vacant_months(12.0);
    assert!(d10 > d && d10 < 6.0, "{d10}");
}

#[test]
fn the_move_out_cost_is_the_rent_lost_less_the_tiers_street_rate_once_re_let() {
    // The next increase a move-out forgoes left out (its own test: `next_increase`).
    let s = EcriEngineSettings {
        next_increase_pct: 0.0,
        ..EcriEngineSettings::default()
    };
    let model = StayModel::from_prior(&s.stay_prior);
    let t = TenantInput {
        tier: Some("drive-up".to_owned()),
        rent: 120.0,
        ..tenant(120.0)
    };
    let tier = SizeMarket {
        of_tier: true,
        move_outs_per_month: None,
        ..market(106.0, 60, 87.0, 5.0, 0.0)
    };
    let markets = BTreeMap::from([
        ("10x10".to_owned(), market(116.69, 120, 87.0, 10.0, 10.0)),
        (market_key("10x10", "drive-up"), tier),
    ]);
    // By hand: the tenant's 90-day baseline at 30 months, its monthly hazard, the months paid
    // after the 30 days' notice, and after the notice and the months empty.
    let b = model.for_tenant(Some(30.0), 1).baseline;
    let h = -(1.0 - b).ln() / (90.0 / MONTH_DAYS);
    let paid = |m: f64| (1.0 - (-h * m).exp()) / h;
    let notice = 30.0 / MONTH_DAYS;
    let empty = tier.expected_vacant_months(12.0);
    let cost = 120.0 * (paid(12.0) - paid(notice)) - 106.0 * (paid(12.0) - paid(notice + empty));
    let out = decide_facility(std::slice::from_ref(&t), &markets, &model, &[], &s);
    let r = out[0]
        .reasons
        .iter()
        .find(|r| r.name == "move_out_cost")
        .expect("a move-out cost");
    // The reason's value is to the cent.
    assert!((r.value - cost).abs() < 0.006, "{} {cost}", r.value);
    assert!(cost > 100.0, "{cost}");
    // At the size's blended street (116.69), the same pace, a move-out would cost 10.69 a
    // month less once re-let: the tier's rate counts.
    let blended = SizeMarket {
        street_rate: 116.69,
        of_tier: false,
        ..tier
    };
    let v = decide(&t, &blended, &model, &s)
        .reasons
        .iter()
        .find(|r| r.name == "move_out_cost")
        .unwrap()
        .value;
    let less = 10.69 * (paid(12.0) - paid(notice + empty));
    assert!((v - (cost - less)).abs() < 0.006, "{v} {cost} {less}");
    assert!(less > 50.0, "{less}");
    // A street rate well above the rent: a move-out costs nothing, never a gain.
    let rich = SizeMarket {
        street_rate: 200.0,
        ..tier
    };
    let r = decide(&t, &rich, &model, &s);
    let v = r
        .reasons
        .iter()
        .find(|r| r.name == "move_out_cost")
        .unwrap();
    assert_eq!(v.value, 0.0);
}

#[test]
fn the_ramp_holds_until_the_evidence_reaches_its_bar_and_keeps_a_customers_units_together() {
    let s = EcriEngineSettings {
        ramp_share_pct: 30.0,
        ramp_until_evidence_pct: 50.0,
        ..EcriEngineSettings::default()
    };
    let prior = StayModel::from_prior(&s.stay_prior);
    let at = |w: f64| StayModel {
        evidence_weight: w,
        ..prior
    };
    assert!(ramp::ramping(&at(0.0), &s));
    assert!(ramp::ramping(&at(0.499), &s));
    assert!(!ramp::ramping(&at(0.5), &s));
    // The share grows with the evidence: 30 % with none, halfway to the bar 65 %, all at it.
    assert!((ramp::share(&at(0.0), &s) - 30.0).abs() < 1e-9);
    assert!((ramp::share(&at(0.25), &s) - 65.0).abs() < 1e-9);
    assert!((ramp::share(&at(0.5), &s) - 100.0).abs() < 1e-9);
    // The company's evidence counts too: a facility new to increases in a company that has
    // learned is not ramped.
    let company_knows = StayModel {
        company_evidence_weight: 0.6,
        ..at(0.1)
    };
    assert!(!ramp::ramping(&company_knows, &s));
    // A share of 100 % is no ramp, whatever the evidence; 0 % holds every increase.
    let all = EcriEngineSettings {
        ramp_share_pct: 100.0,
        ..s.clone()
    };
    assert!(!ramp::ramping(&at(0.0), &all));
    let none = EcriEngineSettings {
        ramp_share_pct: 0.0,
        ..s.clone()
    };
    let markets = BTreeMap::from([("10x10".to_owned(), market(130.0, 500, 90.0, 20.0, 18.0))]);
    let roll = alike_roll(50);
    let out = decide_facility(&roll, &markets, &prior, &[], &none);
    assert!(out
        .iter()
        .all(|x| x.increase == 0.0 && x.binding_guardrail == Some(Guardrail::Ramp)));
    // The draw is the customer's: 40 customers of 3 units each, every customer's units go
    // (or wait) together, in the share's proportion.
    let roll: Vec<TenantInput> = (0..120)
        .map(|i| TenantInput {
            tenant_id: format!("U-{i:03}"),
            customer_id: Some(format!("C-{:02}", i / 3)),
            ..tenant(100.0)
        })
        .collect();
    let solo = EcriEngineSettings {
        raise_customer_units_together: false,
        ..s.clone()
    };
    let out = decide_facility(&roll, &markets, &prior, &[], &solo);
    for (units, t) in out.chunks(3).zip(roll.chunks(3)) {
        let first = ramp::draw(&t[0]);
        assert!((0.0..100.0).contains(&first));
        assert!(t.iter().all(|u| ramp::draw(u) == first));
        let raised: Vec<bool> = units.iter().map(|x| x.increase > 0.0).collect();
        assert_eq!(raised, vec![first < 30.0; 3], "{t:?}");
    }
}

mod next_increase;
