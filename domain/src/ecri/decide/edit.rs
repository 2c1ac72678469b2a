//! A new rent chosen by hand (an edited batch line), checked against every guardrail of one
//! tenant and priced with the same stay model as the engine's own choice.

use super::explain::suggestion;
use super::plan::plan;
use super::{reason, Guardrail, SizeMarket, Suggestion, TenantInput};
use crate::ecri::settings::EcriEngineSettings;
use crate::ecri::stay::StayModel;

/// Why a rent chosen by hand is refused: the guardrail it breaks and a sentence a person reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    pub guardrail: Guardrail,
    pub text: String,
}

/// Every cap on one increase, each with its guardrail: the largest step, the premium over the
/// street rate, the jurisdiction's cap where one applies (over the rent in force on
/// `cap_base_date` when one is set: `emergency_cap`), and the cap over 12 months (the rent of
/// 12 months before x (1 + `cap_12_months_pct`), so two notices cannot together pass it).
pub(super) fn caps(
    t: &TenantInput,
    m: &SizeMarket,
    s: &EcriEngineSettings,
) -> Vec<(f64, Guardrail)> {
    let mut caps = vec![
        (t.rent * (1.0 + s.max_step_pct / 100.0), Guardrail::MaxStep),
        (
            m.street_rate * (1.0 + s.max_premium_over_street_pct / 100.0),
            Guardrail::MaxPremiumOverStreet,
        ),
    ];
    let known = |r: Option<f64>| r.filter(|r| r.is_finite() && *r > 0.0).unwrap_or(t.rent);
    if let Some(cap) = s.jurisdiction_cap_pct {
        caps.push(match s.cap_base_date {
            Some(_) => (
                known(t.rent_at_cap_base) * (1.0 + cap / 100.0),
                Guardrail::EmergencyCap,
            ),
            None => (t.rent * (1.0 + cap / 100.0), Guardrail::JurisdictionCap),
        });
    }
    if let Some(cap) = s.cap_12_months_pct {
        caps.push((
            known(t.rent_12_months_ago) * (1.0 + cap / 100.0),
            Guardrail::TwelveMonthCap,
        ));
    }
    caps
}

/// What a cap says of the new rent it holds at `at` most, with what it is measured from.
pub(super) fn cap_text(t: &TenantInput, s: &EcriEngineSettings, g: Guardrail, at: f64) -> String {
    let from = |what: &str, rent: Option<f64>, pct: Option<f64>| {
        format!(
            " ({what} {:.2} + {:.1} %)",
            rent.filter(|r| r.is_finite() && *r > 0.0).unwrap_or(t.rent),
            pct.unwrap_or(0.0)
        )
    };
    let basis = match g {
        Guardrail::TwelveMonthCap => from(
            "the rent of 12 months before",
            t.rent_12_months_ago,
            s.cap_12_months_pct,
        ),
        Guardrail::EmergencyCap => from(
            &format!(
                "the rent in force on {}",
                s.cap_base_date.map(|d| d.to_string()).unwrap_or_default()
            ),
            t.rent_at_cap_base,
            s.jurisdiction_cap_pct,
        ),
        _ => String::new(),
    };
    format!("{} holds the new rent at {at:.2} at most{basis}", g.name())
}

/// The suggestion for `t` at `new_rent`, or the guardrail it breaks: the tenant must be
/// eligible (the same checks as the engine's: a street rate, no excluding flag, months since
/// move-in and since the last increase), the rent must go up by at least the minimum increase,
/// and stay within every cap. The stop-loss and the customer rule are the facility's, not a
/// line's, and are not checked here.
pub fn reprice(
    t: &TenantInput,
    m: &SizeMarket,
    model: &StayModel,
    s: &EcriEngineSettings,
    new_rent: f64,
) -> Result<Suggestion, Refused> {
    let p = plan(t, m, model, s).map_err(|(guardrail, why)| Refused {
        guardrail,
        text: why.text,
    })?;
    if !new_rent.is_finite() || new_rent <= t.rent {
        return Err(Refused {
            guardrail: Guardrail::MinimumIncrease,
            text: format!(
                "{new_rent:.2} is not an increase on the rent {:.2}: exclude the line instead",
                t.rent
            ),
        });
    }
    if new_rent - t.rent < p.minimum - 1e-9 {
        return Err(Refused {
            guardrail: Guardrail::MinimumIncrease,
            text: format!(
                "an increase of {:.2} is under the minimum of {:.2}",
                new_rent - t.rent,
                p.minimum
            ),
        });
    }
    if let Some((cap, g)) = caps(t, m, s)
        .into_iter()
        .filter(|(cap, _)| new_rent > cap + 1e-9)
        .min_by(|a, b| a.0.total_cmp(&b.0))
    {
        return Err(Refused {
            guardrail: g,
            text: cap_text(t, s, g, (cap * 100.0 + 1e-6).floor() / 100.0),
        });
    }
    let why = reason(
        "edited",
        new_rent,
        format!("set by hand to {new_rent:.2} (the engine suggested otherwise)"),
    );
    Ok(suggestion(&p, Some(new_rent), None, s, vec![why]))
}
