//! A request's decisions checked against the run they are about, one step per rule: which unit
//! type each names, the reason, and the rate it approves. Kept apart from the rest of
//! `decisions` (the guardrails an override breaks, the status, the history's sentence) because
//! this is where a person's request is refused, and every refusal must name the decision and
//! the field at fault.

use super::{
    broken_guardrails, unit_label, Action, Checked, Requested, MAX_RATE, MAX_REASON_CHARS,
};
use crate::pricing::engine::{size_key, Recommendation};
use crate::pricing::settings::PricingSettings;
use crate::validation::ValidationError;
use crate::values::round2;

/// Checks a request's decisions against the run's recommendations and settings: every one
/// names a unit type of the run, at most once; an accept needs a rate to accept, an override a
/// positive rate within the guardrails (or `force` with a reason); a reason is at most
/// [`MAX_REASON_CHARS`]. The first problem is the error, with the decision's path.
pub fn check(
    requested: &[Requested],
    recs: &[Recommendation],
    s: &PricingSettings,
) -> Result<Vec<Checked>, ValidationError> {
    if requested.is_empty() {
        return Err(ValidationError::new(
            "decisions",
            "must hold at least one decision",
        ));
    }
    let mut seen: Vec<(usize, usize)> = Vec::new();
    let mut out = Vec::with_capacity(requested.len());
    for (i, d) in requested.iter().enumerate() {
        let at = |field: &str| decision_path(i, field);
        let rec_ix = unit_type_of(d, recs, &at)?;
        if let Some((first, _)) = seen.iter().find(|(_, r)| *r == rec_ix) {
            return Err(ValidationError::new(
                at(""),
                format!(
                    "repeats the unit type of decisions[{first}]: one decision per unit type in a \
                     request"
                ),
            ));
        }
        seen.push((i, rec_ix));
        let rec = &recs[rec_ix];
        let reason = reason_of(d, &at)?;
        let (rate, forced, broken) = match d.action {
            Action::Accept | Action::Reject => (accepted_rate(d, rec, &at)?, false, Vec::new()),
            Action::Override => {
                let (rate, broken) = override_rate(d, rec, reason.is_some(), s, &at)?;
                (Some(rate), !broken.is_empty(), broken)
            }
        };
        out.push(Checked {
            index: i,
            size: rec.size.clone(),
            tier: rec.tier.clone(),
            action: d.action,
            rate,
            previous_rate: rec.current_rate,
            recommended_rate: rec.recommended_rate,
            reason,
            forced,
            broken,
        });
    }
    Ok(out)
}

/// The path of decision `i`'s `field` in the request (of the decision itself when empty).
fn decision_path(i: usize, field: &str) -> String {
    if field.is_empty() {
        format!("decisions[{i}]")
    } else {
        format!("decisions[{i}].{field}")
    }
}

/// The position in `recs` of the unit type a decision names, or the error listing the run's.
fn unit_type_of(
    d: &Requested,
    recs: &[Recommendation],
    at: &dyn Fn(&str) -> String,
) -> Result<usize, ValidationError> {
    let tier = d.tier.as_deref().map(str::trim).unwrap_or_default();
    let key = size_key(&d.size);
    recs.iter()
        .position(|r| size_key(&r.size) == key && r.tier == tier)
        .ok_or_else(|| {
            let known: Vec<String> = recs.iter().map(|r| unit_label(&r.size, &r.tier)).collect();
            ValidationError::new(
                at(""),
                format!(
                    "the run has no unit type {}; it has: {}",
                    unit_label(
                        &d.size.trim().chars().take(40).collect::<String>(),
                        &tier.chars().take(100).collect::<String>()
                    ),
                    known.join(", ")
                ),
            )
        })
}

/// The decision's reason, trimmed (none when empty), at most [`MAX_REASON_CHARS`].
fn reason_of(
    d: &Requested,
    at: &dyn Fn(&str) -> String,
) -> Result<Option<String>, ValidationError> {
    let reason = d
        .reason
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_owned);
    if reason
        .as_ref()
        .is_some_and(|r| r.chars().count() > MAX_REASON_CHARS)
    {
        return Err(ValidationError::new(
            at("reason"),
            format!("must be at most {MAX_REASON_CHARS} characters"),
        ));
    }
    // The text rule of every stored text: PostgreSQL refuses a NUL, and an override of the
    // text direction would show another reason than the one stored.
    if reason
        .as_ref()
        .is_some_and(|r| r.contains(crate::values::is_forbidden_in_text))
    {
        return Err(ValidationError::new(
            at("reason"),
            "must not contain control characters or invisible text-direction or formatting characters",
        ));
    }
    Ok(reason)
}

/// The rate an accept approves (the recommended one; it needs one) or none for a reject;
/// neither takes a rate of its own.
fn accepted_rate(
    d: &Requested,
    rec: &Recommendation,
    at: &dyn Fn(&str) -> String,
) -> Result<Option<f64>, ValidationError> {
    if d.rate.is_some() {
        return Err(ValidationError::new(
            at("rate"),
            "only an override takes a rate (accept takes the recommended rate)",
        ));
    }
    if d.action == Action::Reject {
        Ok(None)
    } else if rec.recommended_rate.is_finite() && rec.recommended_rate > 0.0 {
        Ok(Some(rec.recommended_rate))
    } else {
        Err(ValidationError::new(
            at(""),
            "the run recommends no positive rate for this unit type: override it \
             with a rate instead",
        ))
    }
}

/// An override's rate (to the cent) and the names of the guardrails it breaks, which need
/// `force` and a reason (`has_reason`) to be stored.
fn override_rate(
    d: &Requested,
    rec: &Recommendation,
    has_reason: bool,
    s: &PricingSettings,
    at: &dyn Fn(&str) -> String,
) -> Result<(f64, Vec<String>), ValidationError> {
    let rate = match d.rate {
        None => {
            return Err(ValidationError::new(
                at("rate"),
                "is required for an override",
            ))
        }
        Some(r) if !(r.is_finite() && r > 0.0 && r <= MAX_RATE) => {
            return Err(ValidationError::new(
                at("rate"),
                format!("must be a rate above 0 and at most {MAX_RATE:.0}"),
            ))
        }
        Some(r) => round2(r),
    };
    if rate <= 0.0 {
        return Err(ValidationError::new(at("rate"), "must be at least 0.01"));
    }
    let broken = broken_guardrails(rate, rec, s);
    if !(broken.is_empty() || (d.force && has_reason)) {
        let list: Vec<String> = broken
            .iter()
            .map(|b| format!("{} ({})", b.name, b.detail))
            .collect();
        return Err(ValidationError::new(
            at(""),
            format!(
                "the override of {} to {rate:.2} breaks the guardrail{} {}: send \
                 force: true with a reason to store it anyway",
                unit_label(&rec.size, &rec.tier),
                if broken.len() > 1 { "s" } else { "" },
                list.join(", ")
            ),
        ));
    }
    Ok((rate, broken.iter().map(|b| b.name.to_owned()).collect()))
}
