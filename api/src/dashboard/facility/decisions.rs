//! The facility page's decisions: a decision form as the API's body (one unit type, or the
//! ticked rows of the sheet), a refusal in words a person acts on, the table of approved
//! rates with their status and the facility's history of decisions.

use super::*;
use jobs::rates::Rates;

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

/// The ticked rows of the sheet as the body of `POST .../decisions`: an accept of each, in
/// one request (stored together, or none is).
pub(super) fn bulk_body(picks: &[(String, String)]) -> Vec<u8> {
    let decisions: Vec<serde_json::Value> = picks
        .iter()
        .map(|(size, tier)| serde_json::json!({ "size": size, "tier": tier, "action": "accept" }))
        .collect();
    serde_json::to_vec(&serde_json::json!({ "decisions": decisions })).unwrap_or_default()
}

/// A refusal of the decision API as the person who clicked reads it: the unit type named
/// instead of `decisions[0]`, and for an override past a guardrail, the guardrails with their
/// bounds in money and what to do ("tick Apply anyway") instead of the API's `force: true`.
/// The second value is the field the message belongs to (`force` for a guardrail).
pub(super) fn speak(
    message: &str,
    units: &[(String, String)],
    fig: &Figures,
    broken: impl Fn(usize) -> Vec<domain::pricing::decisions::Broken>,
) -> (String, Option<String>) {
    let (index, field, text) = match message
        .strip_prefix("decisions[")
        .and_then(|r| r.split_once(']'))
    {
        Some((n, rest)) => {
            let (path, text) = rest.split_once(": ").unwrap_or(("", rest));
            (
                n.parse::<usize>().ok(),
                path.trim_start_matches('.').to_owned(),
                text.to_owned(),
            )
        }
        None => (None, String::new(), message.to_owned()),
    };
    let unit = index
        .and_then(|i| units.get(i))
        .map(|(s, t)| domain::pricing::decisions::unit_label(s, t));
    if text.contains("breaks the guardrail") {
        let list: Vec<String> = index
            .map(&broken)
            .unwrap_or_default()
            .iter()
            .map(|b| format!("{} ({})", b.name.replace('_', " "), fig.prose(&b.detail)))
            .collect();
        let text = format!(
            "{}: this rate is outside the run's guardrails: {}. To set it anyway, tick \
             \u{201c}Apply anyway\u{201d}, give a reason and press Override again.",
            unit.unwrap_or_default(),
            list.join("; ")
        );
        return (text, Some("force".to_owned()));
    }
    let text = fig.prose(&text);
    let field_word = match field.as_str() {
        "" => String::new(),
        f => format!("{} ", sentence(f)),
    };
    let text = match unit {
        Some(u) => format!("{u}: {field_word}{text}"),
        None => format!("{field_word}{text}"),
    };
    (text, (!field.is_empty()).then_some(field))
}

fn sentence(s: &str) -> String {
    let s = s.replace('_', " ");
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// The facility's street-rate decisions, newest first: when, who, the unit type, what was
/// done, the rate, the recommendation, the rate it started from, the reason.
pub(super) fn history_table(fig: &Figures, logged: &[jobs::decisions::Logged]) -> Table {
    let mut t = Table::new(
        "decision-history",
        "Street-rate decisions of this facility, newest first",
        &[
            "When",
            "Who",
            "Unit type",
            "Decision",
            "Rate",
            "Recommended",
            "Was",
            "Reason",
        ],
    );
    for e in logged.iter().filter(|e| e.action.starts_with("rate.")) {
        let d = &e.detail;
        let word = match e.action.as_str() {
            "rate.accepted" => "accepted",
            "rate.overridden" if d["forced"] == true => "overridden (forced)",
            "rate.overridden" => "overridden",
            "rate.rejected" => "rejected",
            other => other,
        };
        let who = if d["automatic"] == true {
            "the service (auto-accept)".to_owned()
        } else {
            e.actor.label()
        };
        t.row(cells![
            page::when(Some(e.at)),
            who,
            domain::pricing::decisions::unit_label(
                d["size"].as_str().unwrap_or_default(),
                d["tier"].as_str().unwrap_or_default()
            ),
            word,
            fig.rate(d["rate"].as_f64()),
            fig.rate(d["recommended_rate"].as_f64()),
            fig.rate(d["previous_rate"].as_f64()),
            d["reason"].as_str().unwrap_or_default().to_owned(),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::pricing::decisions::Broken;

    fn usd() -> Figures {
        Figures::new(domain::values::Currency::parse("USD").unwrap())
    }

    fn units() -> Vec<(String, String)> {
        vec![
            ("5x5".to_owned(), String::new()),
            ("10x10".to_owned(), "climate".to_owned()),
        ]
    }

    #[test]
    fn a_guardrail_refusal_names_the_unit_the_bounds_in_money_and_what_to_tick() {
        let api = "decisions[1]: the override of 10x10 climate to 150.00 breaks the guardrail \
                   max_step (at most 8% per change, 92.00 to 108.00): send force: true with a \
                   reason to store it anyway";
        let (text, field) = speak(api, &units(), &usd(), |i| {
            assert_eq!(i, 1);
            vec![Broken {
                name: "max_step",
                detail: "at most 8% per change, 92.00 to 108.00".into(),
            }]
        });
        assert_eq!(
            text,
            "10x10 climate: this rate is outside the run's guardrails: max step (at most 8% per \
             change, $92.00 to $108.00). To set it anyway, tick \u{201c}Apply anyway\u{201d}, \
             give a reason and press Override again."
        );
        assert_eq!(field.as_deref(), Some("force"));
    }

    #[test]
    fn other_refusals_name_the_unit_and_the_field_in_words() {
        let (text, field) = speak(
            "decisions[0].rate: must be a rate above 0 and at most 1000000",
            &units(),
            &usd(),
            |_| Vec::new(),
        );
        assert_eq!(text, "5x5: Rate must be a rate above 0 and at most 1000000");
        assert_eq!(field.as_deref(), Some("rate"));
        let (text, field) = speak("decisions: must not be empty", &[], &usd(), |_| Vec::new());
        assert_eq!(text, "decisions: must not be empty");
        assert_eq!(field, None);
    }
}
