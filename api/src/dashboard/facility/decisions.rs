//! The facility page's decisions: a form per unit type of the latest run (accept, override
//! with a rate, reject, each with a reason; a force box once an override is refused for a
//! guardrail) and the table of approved rates with their status.

use super::*;
use jobs::rates::Rates;

/// The form of each unit type of the latest run, posted to `action`.
pub(super) fn decision_forms(
    s: &Session,
    action: &str,
    run_id: Uuid,
    fig: &Figures,
    recs: &[Recommendation],
    refused: &Refused,
) -> Markup {
    html! {
        div class="stack" id="decision-forms" {
            @for (i, rec) in recs.iter().enumerate() {
                @let mine = refused.form == "decision"
                    && refused.values.get("size") == Some(&rec.size)
                    && refused.values.get("tier").map_or("", |t| t.as_str()) == rec.tier;
                @let typed = |name: &str| if mine { refused.values.get(name).cloned() } else { None };
                form class="card decision" id={"decide-" (i)} method="post" action=(action) {
                    (page::csrf(s))
                    input type="hidden" name="run_id" value=(run_id);
                    input type="hidden" name="size" value=(rec.size);
                    input type="hidden" name="tier" value=(rec.tier);
                    p {
                        strong { (domain::pricing::decisions::unit_label(&rec.size, &rec.tier)) }
                        ": " (fig.rate(rec.current_rate)) " now, recommended "
                        (fig.rate(rec.recommended_rate)) " (" (action_word(rec.action)) ")"
                    }
                    @if mine {
                        p class="field-error" role="alert" { (refused.message) }
                    }
                    div class="actions" {
                        label { "Rate"
                            input type="text" inputmode="decimal" name="rate" value=[typed("rate")]; }
                        label { "Reason"
                            input type="text" name="reason" maxlength="500" value=[typed("reason")]; }
                        @if mine && refused.message.contains("force: true") {
                            label class="check" {
                                input type="checkbox" name="force" value="true";
                                "Override past the guardrails (needs a reason)"
                            }
                        }
                        button type="submit" name="action" value="accept" { "Accept" }
                        button type="submit" name="action" value="override" { "Override" }
                        button type="submit" name="action" value="reject" { "Reject" }
                    }
                }
            }
        }
    }
}

/// The unit types with an approved rate: in force, approved, source, status, when and by whom.
pub(super) fn approved_table(fig: &Figures, rates: &Rates) -> Table {
    let mut t = Table::new(
        "pending-rates",
        "Approved rates and whether a snapshot shows them yet",
        &[
            "Size",
            "Tier",
            "Rate in force",
            "Approved rate",
            "Source",
            "Status",
            "Decided",
            "Decided by",
        ],
    );
    for line in &rates.rates {
        let Some(a) = &line.approved else {
            continue;
        };
        t.row(cells![
            line.size.clone(),
            line.tier.clone(),
            fig.rate(line.rate_in_force),
            fig.rate(a.rate),
            jobs::rates::source_of(&a.action),
            a.status.map_or("", |s| s.as_str()).replace('_', " "),
            page::when(Some(a.decided_at)),
            a.actor.label(),
        ]);
    }
    t
}

/// A decision form as the body of `POST .../decisions`: one decision, its rate only for an
/// override (a rate typed before pressing accept or reject is not meant for them).
pub(super) fn decision_body(values: &BTreeMap<String, String>) -> Vec<u8> {
    let action = values.get("action").map(|a| a.trim()).unwrap_or_default();
    let mut fields: BTreeMap<String, String> = values
        .iter()
        .filter(|(k, _)| matches!(k.as_str(), "size" | "tier" | "action" | "rate" | "reason"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if action != "override" {
        fields.remove("rate");
    }
    let mut decision: serde_json::Value =
        serde_json::from_slice(&form_json(&fields, &["rate"], false)).unwrap_or_default();
    if values.contains_key("force") {
        decision["force"] = serde_json::Value::Bool(true);
    }
    serde_json::to_vec(&serde_json::json!({ "decisions": [decision] })).unwrap_or_default()
}
