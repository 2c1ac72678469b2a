//! Tenant flags as CRMs and staff write them, read as the canonical flags the guardrail
//! `excluded_flag` knows: case, spaces, hyphens and underscores folded (`Do Not Increase`,
//! `do-not-increase` and `DO_NOT_INCREASE` are one flag), then the synonyms below, then the
//! operator's own (`flag_synonyms`), which come first.

use std::collections::BTreeMap;

/// The canonical flags and what else they are written as (folded).
pub const SYNONYMS: &[(&str, &[&str])] = &[
    (
        "do_not_increase",
        &[
            "dni",
            "do_not_raise",
            "no_increase",
            "no_increases",
            "no_rate_increase",
            "no_rent_increase",
            "no_ecri",
            "rate_lock",
            "rate_locked",
        ],
    ),
    (
        "military",
        &[
            "scra",
            "active_duty",
            "servicemember",
            "service_member",
            "armed_forces",
        ],
    ),
    (
        "lien",
        &["in_lien", "lien_sale", "pre_lien", "prelien", "auction"],
    ),
    (
        "delinquent",
        &["delinquency", "past_due", "overdue", "late_payer"],
    ),
    (
        "bankruptcy",
        &["bankrupt", "chapter_7", "chapter_11", "chapter_13"],
    ),
    ("business", &["commercial", "business_account", "corporate"]),
];

/// A flag with case folded and every run of spaces, hyphens and underscores made one `_`.
pub fn fold(flag: &str) -> String {
    let mut out = String::with_capacity(flag.len());
    for c in flag.trim().chars() {
        if c == ' ' || c == '-' || c == '_' || c.is_whitespace() {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out.trim_end_matches('_').to_owned()
}

/// The canonical flag of `flag`: the operator's synonym first (keys folded), then the list
/// above, else the folded flag itself.
pub fn canonical(flag: &str, operator: &BTreeMap<String, String>) -> String {
    let f = fold(flag);
    if let Some(to) = operator.iter().find(|(k, _)| fold(k) == f).map(|(_, v)| v) {
        return built_in(&fold(to));
    }
    built_in(&f)
}

fn built_in(f: &str) -> String {
    SYNONYMS
        .iter()
        .find(|(c, others)| *c == f || others.contains(&f))
        .map_or_else(|| f.to_owned(), |(c, _)| (*c).to_owned())
}
