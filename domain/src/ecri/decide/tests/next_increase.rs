//! The next increase a move-out forgoes (`next_increase_pct`).

use super::{market, reason_text, tenant};
use crate::ecri::decide::{decide, MONTH_DAYS};
use crate::ecri::settings::EcriEngineSettings;
use crate::ecri::stay::StayModel;

fn cost(s: &crate::ecri::decide::Suggestion) -> f64 {
    s.reasons
        .iter()
        .find(|r| r.name == "move_out_cost")
        .expect("a move-out cost")
        .value
}

#[test]
fn a_move_out_also_costs_the_next_increase_the_tenant_would_have_taken() {
    let off = EcriEngineSettings {
        uncertainty_pct: 0.0,
        next_increase_pct: 0.0,
        ..EcriEngineSettings::default()
    };
    let on = EcriEngineSettings {
        next_increase_pct: 100.0,
        ..off.clone()
    };
    // Tenants half again as sensitive as the prior: the best increase lies under the caps.
    let model = StayModel::from_prior(&off.stay_prior).with_sensitivity(1.5);
    // A tenant under the street rate in a size that fills at 2 units a month (10 vacant): a
    // move-out leaves the unit empty 5 months.
    let m = market(120.0, 100, 90.0, 8.0, 6.0);
    let t = tenant(100.0);
    let before = decide(&t, &m, &model, &off);
    let after = decide(&t, &m, &model, &on);
    // By hand: the next notice goes out 6 months after this increase takes effect (30 days),
    // to the tenant as it will then be. Its hazard is memoryless, so its gain within the 12
    // months is the gain of that tenant's increase over the months left, times the chance the
    // tenant is still there when its notice goes out.
    let start = 30.0 / MONTH_DAYS + 6.0;
    let later = crate::ecri::decide::TenantInput {
        months_since_move_in: Some(30.0 + start),
        months_since_last_increase: Some(6.0),
        past_increases: 2,
        rent_12_months_ago: Some(100.0),
        ..t.clone()
    };
    let rest = EcriEngineSettings {
        horizon_months: 12.0 - start,
        ..off.clone()
    };
    let next = decide(&later, &m, &model, &rest);
    let b = model
        .for_tenant_since(Some(30.0 + start), 2, Some(6.0))
        .baseline;
    let h = -(1.0 - b).ln() / (90.0 / MONTH_DAYS);
    let forgone = next.expected_gain * (-h * start).exp();
    assert!(forgone > 5.0, "{forgone}");
    assert!(
        (cost(&after) - cost(&before) - forgone).abs() < 0.02,
        "{} {} {forgone}",
        cost(&after),
        cost(&before)
    );
    let counted = cost(&after) - cost(&before);
    assert!(
        reason_text(&after, "move_out_cost").contains(&format!(
            "{counted:.2} of it the next increase a tenant who stays could be given"
        )),
        "{}",
        reason_text(&after, "move_out_cost")
    );
    assert!(!reason_text(&before, "move_out_cost").contains("next increase"));
    // A move-out dearer by about 2 %: the same whole rent still pays best, and is worth less.
    assert_eq!((before.new_rent, after.new_rent), (117.0, 117.0));
    assert!(after.expected_gain < before.expected_gain);
    // A next notice past the horizon is worth nothing here.
    let short = EcriEngineSettings {
        horizon_months: 7.0,
        ..on.clone()
    };
    let short_off = EcriEngineSettings {
        next_increase_pct: 0.0,
        ..short.clone()
    };
    assert_eq!(
        cost(&decide(&t, &m, &model, &short)),
        cost(&decide(&t, &m, &model, &short_off))
    );
}

#[test]
fn counting_more_of_the_next_increase_never_gives_a_larger_increase() {
    let prior = StayModel::from_prior(&EcriEngineSettings::default().stay_prior);
    let mut smaller = 0;
    for sensitivity in [0.5, 1.0, 2.0, 4.0] {
        let model = prior.with_sensitivity(sensitivity);
        for street in [80.0, 100.0, 120.0, 150.0] {
            for rent in [60.0, 90.0, 110.0, 140.0] {
                let m = market(street, 100, 96.0, 8.0, 8.0);
                let t = tenant(rent);
                let mut last = f64::INFINITY;
                for pct in [0.0, 25.0, 50.0, 100.0] {
                    let s = EcriEngineSettings {
                        next_increase_pct: pct,
                        ..EcriEngineSettings::default()
                    };
                    let r = decide(&t, &m, &model, &s).new_rent;
                    assert!(
                        r <= last,
                        "s {sensitivity} street {street} rent {rent}: {r} at {pct} % after {last}"
                    );
                    if pct == 100.0 && r < last {
                        smaller += 1;
                    }
                    last = r;
                }
            }
        }
    }
    // In a full size, where a move-out costs little more than the next increase, counting it
    // lowers some increases.
    assert!(smaller > 0, "{smaller}");
}
