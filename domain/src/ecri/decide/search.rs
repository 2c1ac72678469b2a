//! The search over whole new rents for the one with the largest expected gain, and which
//! guardrail, if any, is to be named for the result: the cap the gain still grows past, or
//! the minimum or cap that kept out the only increases that would have paid.

use super::edit::cap_text;
use super::plan::{evaluate, Plan};
use super::{reason, Guardrail, Reason};

/// The whole new rent within the plan's guardrails with the largest expected gain, and that
/// gain (the lowest such rent on a tie); none when the guardrails leave no rent.
pub(super) fn top(p: &Plan<'_>) -> Option<(f64, f64)> {
    let mut top: Option<(f64, f64)> = None;
    let mut r = p.first;
    while r <= p.last {
        let (gain, ..) = evaluate(p, r);
        if top.is_none_or(|(_, g)| gain > g) {
            top = Some((r, gain));
        }
        r += 1.0;
    }
    top
}

/// The best whole new rent of a plan and the guardrail that bound it.
pub(super) fn best(p: &Plan<'_>) -> (Option<f64>, Option<Guardrail>, Vec<Reason>) {
    match top(p) {
        Some((r, gain)) if gain > 0.0 => {
            // The cap binds when the gain still grows past it.
            let binds = r == p.last && evaluate(p, r + 1.0).0 > gain;
            if binds {
                (Some(r), Some(p.cap), vec![cap_reason(p, r)])
            } else {
                (Some(r), None, Vec::new())
            }
        }
        _ => {
            let (binding, reasons) = no_increase(p);
            (None, binding, reasons)
        }
    }
}

/// The reason naming the plan's cap, holding the new rent at `r` at most.
fn cap_reason(p: &Plan<'_>, r: f64) -> Reason {
    reason(p.cap.name(), r, cap_text(p.tenant, p.settings, p.cap, r))
}

/// Why no increase within the guardrails pays: would an increase under the minimum, or over
/// the cap, have paid? The guardrail in the way when so, none when no increase would.
fn no_increase(p: &Plan<'_>) -> (Option<Guardrail>, Vec<Reason>) {
    let rent = p.tenant.rent;
    // Increases under the minimum that the caps allow (a cap under the minimum is the cap's).
    let mut below = rent.floor() + 1.0;
    while below < p.first && below <= p.last {
        if evaluate(p, below).0 > 0.0 {
            return (
                Some(Guardrail::MinimumIncrease),
                vec![reason(
                    "minimum_increase",
                    p.minimum,
                    format!(
                        "only an increase under the minimum of {:.2} would pay",
                        p.minimum
                    ),
                )],
            );
        }
        below += 1.0;
    }
    if p.first > p.last {
        let beyond = p.first.max(p.last + 1.0);
        if evaluate(p, beyond).0 > 0.0 || p.last < rent {
            return (Some(p.cap), vec![cap_reason(p, p.last.max(rent))]);
        }
        return (
            Some(Guardrail::MinimumIncrease),
            vec![reason(
                "minimum_increase",
                p.minimum,
                format!(
                    "{} leaves room for less than the minimum increase of {:.2}",
                    p.cap.name(),
                    p.minimum
                ),
            )],
        );
    }
    (
        None,
        vec![reason(
            "no_increase_pays",
            0.0,
            "no increase within the guardrails is expected to earn more than the move-outs it causes cost".to_owned(),
        )],
    )
}
