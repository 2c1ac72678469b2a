//! What an increase is worth for one tenant, worked out once before any new rent is tried:
//! the eligibility guardrails that rule the tenant out, the caps and minimum that bound the new
//! rent, and the months paid and the move-out cost that every candidate rent is weighed with.

use super::{edit, reason, Guardrail, Reason, SizeMarket, TenantInput, MONTH_DAYS};
use crate::ecri::settings::EcriEngineSettings;
use crate::ecri::stay::StayModel;

/// A tenant that passed the eligibility guardrails, with what its decision needs.
#[derive(Debug, Clone)]
pub(super) struct Plan<'a> {
    pub(super) tenant: &'a TenantInput,
    /// The stay model adjusted for the tenant (`StayModel::for_tenant`).
    pub(super) model: StayModel,
    /// The model a candidate rent is weighed with: `model` at the mean of the slopes the
    /// evidence allows (`StayModel::at_mean_slope`, the variance from
    /// `StayModel::slope_variance` times `uncertainty_pct` / 100).
    pub(super) weighed: StayModel,
    pub(super) settings: &'a EcriEngineSettings,
    /// The street rate a vacated unit re-lets at (its tier's when known).
    pub(super) street: f64,
    /// Whether `street` and the months empty are the tenant's tier's (else its size's).
    pub(super) of_tier: bool,
    pub(super) reference: f64,
    /// Months the tenant pays the new rent if staying, A(H) - A(n).
    pub(super) pay_months: f64,
    /// What a move-out the increase causes costs, per tenant (>= 0): the rent lost less the
    /// unit's rent once re-let, plus `next_increase`.
    pub(super) move_out_cost: f64,
    /// The part of the next increase's expected gain a move-out forgoes that is counted
    /// (`next_increase_pct`; 0 when off).
    pub(super) next_increase: f64,
    pub(super) vacant_months: f64,
    /// Lowest and highest whole new rent within the guardrails (first > last: none).
    pub(super) first: f64,
    pub(super) last: f64,
    /// The cap that sets `last`.
    pub(super) cap: Guardrail,
    pub(super) minimum: f64,
}

/// The expected gain of one new rent, per tenant: (gain, extra move-out, increase %, premium %),
/// the extra move-out read at the mean of the slopes the evidence allows.
pub(super) fn evaluate(p: &Plan<'_>, new_rent: f64) -> (f64, f64, f64, f64) {
    let rent = p.tenant.rent;
    let increase_pct = (new_rent / rent - 1.0) * 100.0;
    let premium_pct = (new_rent / p.reference - 1.0) * 100.0;
    let extra = p
        .weighed
        .extra_move_out_of(increase_pct, premium_pct, new_rent - rent);
    let gain = (1.0 - extra) * (new_rent - rent) * p.pay_months - extra * p.move_out_cost;
    (gain, extra, increase_pct, premium_pct)
}

/// Months a tenant pays within `t` months at a monthly move-out hazard `h`.
fn paid_months(t: f64, h: f64) -> f64 {
    if h < 1e-9 {
        t
    } else {
        (1.0 - (-h * t).exp()) / h
    }
}

/// The tenant's plan, or the eligibility guardrail that rules it out with its reason.
pub(super) fn plan<'a>(
    t: &'a TenantInput,
    m: &SizeMarket,
    model: &'a StayModel,
    s: &'a EcriEngineSettings,
) -> Result<Plan<'a>, (Guardrail, Reason)> {
    eligible(t, m, s)?;
    let mut p = plan_from(t, m, model, s, 0.0);
    if s.next_increase_pct > 0.0 {
        p.next_increase = next_increase_gain(&p, m, model) * s.next_increase_pct / 100.0;
        p.move_out_cost += p.next_increase;
    }
    Ok(p)
}

/// The figures of an increase whose notice goes out `start` months from now (0: today), for
/// a tenant that passed the eligibility guardrails.
fn plan_from<'a>(
    t: &'a TenantInput,
    m: &SizeMarket,
    model: &'a StayModel,
    s: &'a EcriEngineSettings,
    start: f64,
) -> Plan<'a> {
    let rent = t.rent;
    let (max_rent, cap) = edit::caps(t, m, s)
        .into_iter()
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .expect("two caps at least");
    let minimum = (rent * s.min_increase_pct / 100.0).min(s.min_increase_amount);
    let slope_variance = model.slope_variance(t.past_increases, t.months_since_last_increase)
        * s.uncertainty_pct
        / 100.0;
    let model = model.for_tenant_since(
        t.months_since_move_in,
        t.past_increases,
        t.months_since_last_increase,
    );
    let h = -(1.0 - model.baseline).max(1e-9).ln() / (90.0 / MONTH_DAYS);
    let horizon = s.horizon_months;
    let notice = (start + f64::from(s.notice_days) / MONTH_DAYS).min(horizon);
    let vacant_months = m.marginal_vacant_months(horizon);
    let pay_months = paid_months(horizon, h) - paid_months(notice, h);
    let relet_months =
        paid_months(horizon, h) - paid_months((notice + vacant_months).min(horizon), h);
    let move_out_cost = (rent * pay_months - m.street_rate * relet_months).max(0.0);
    // Whole currency; the small allowances keep 100 x 1.1 = 110.00000000000001 whole.
    let first = (rent + minimum - 1e-9).ceil().max(rent.floor() + 1.0);
    let last = (max_rent + 1e-9).floor();
    Plan {
        tenant: t,
        model,
        weighed: model.at_mean_slope(slope_variance),
        settings: s,
        street: m.street_rate,
        of_tier: m.of_tier,
        reference: m.reference_rate(),
        pay_months,
        move_out_cost,
        next_increase: 0.0,
        vacant_months,
        first,
        last,
        cap,
        minimum,
    }
}

/// The expected gain, within the horizon, of the increase a tenant who stays can be given
/// next: its notice `min_months_since_increase` after this one takes effect, the tenant then
/// raised once more, its last increase that many months old and its tenure longer by as much,
/// weighed as this one is (the same search over whole rents, on today's rent and market). 0
/// when that notice would fall past the horizon or no increase would pay then.
fn next_increase_gain(p: &Plan<'_>, m: &SizeMarket, model: &StayModel) -> f64 {
    let s = p.settings;
    let t = p.tenant;
    let notice = f64::from(s.notice_days) / MONTH_DAYS;
    let start = notice + s.min_months_since_increase;
    if start + notice >= s.horizon_months {
        return 0.0;
    }
    let later = TenantInput {
        months_since_move_in: t.months_since_move_in.map(|x| x + start),
        months_since_last_increase: Some(s.min_months_since_increase),
        past_increases: t.past_increases + 1,
        pending_increase: None,
        rent_12_months_ago: Some(t.rent_12_months_ago.unwrap_or(t.rent)),
        ..t.clone()
    };
    super::search::top(&plan_from(&later, m, model, s, start))
        .map_or(0.0, |(_, gain)| gain.max(0.0))
}

/// The eligibility guardrails, in order: a street rate to weigh a move-out against, no
/// excluding flag, and enough months since the move-in and since the last increase.
fn eligible(
    t: &TenantInput,
    m: &SizeMarket,
    s: &EcriEngineSettings,
) -> Result<(), (Guardrail, Reason)> {
    if !(m.street_rate.is_finite() && m.street_rate > 0.0 && t.rent.is_finite() && t.rent > 0.0) {
        return Err((
            Guardrail::NoStreetRate,
            reason(
                "no_street_rate",
                m.street_rate,
                format!(
                    "no street rate for {}: a move-out cannot be weighed",
                    t.size
                ),
            ),
        ));
    }
    if let Some(flag) = s.excludes(&t.flags) {
        return Err((
            Guardrail::ExcludedFlag,
            reason(
                "excluded_flag",
                0.0,
                format!("flagged `{flag}`: never increased"),
            ),
        ));
    }
    if let Some(on) = t.pending_increase {
        return Err((
            Guardrail::MonthsSinceIncrease,
            reason(
                "months_since_increase",
                0.0,
                format!("an approved increase takes effect on {on}: not increased again before"),
            ),
        ));
    }
    // Unknown move-in: a known last increase shows the tenant has stayed at least that long.
    let tenure = t.months_since_move_in.or(t.months_since_last_increase);
    match tenure {
        Some(months) if months >= s.min_months_since_move_in => {}
        _ => {
            return Err((
                Guardrail::MonthsSinceMoveIn,
                reason(
                    "months_since_move_in",
                    tenure.unwrap_or(0.0),
                    match tenure {
                        Some(months) => format!(
                            "moved in {months:.1} months ago, under the {:.0} months required",
                            s.min_months_since_move_in
                        ),
                        None => "move-in date unknown".to_owned(),
                    },
                ),
            ))
        }
    }
    if let Some(months) = t.months_since_last_increase {
        if months < s.min_months_since_increase {
            return Err((
                Guardrail::MonthsSinceIncrease,
                reason(
                    "months_since_increase",
                    months,
                    format!(
                        "last increased {months:.1} months ago, under the {:.0} months required",
                        s.min_months_since_increase
                    ),
                ),
            ));
        }
    }
    Ok(())
}
