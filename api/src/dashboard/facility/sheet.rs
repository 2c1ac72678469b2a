//! The decision sheet: one row per unit type of the latest run (current and recommended rate,
//! change, confidence, occupancy and vacant units, competitor band, the decision in force),
//! accept / override / reject in the row with the rate field holding the recommendation, a box
//! per row for "accept the selected", and the factors and guardrails behind a disclosure under
//! each row. A role that may not decide sees the figures without the controls, and why.

use super::*;
use jobs::rates::{RateLine, Rates};

/// Columns of a sheet row without the box and the decision cell (a reader who may not decide).
const FIGURE_COLUMNS: usize = 8;

/// A rate as its input field holds it: plain, two decimals (what the parser reads back).
fn plain_rate(v: f64) -> String {
    format!("{v:.2}")
}

/// The value of a row's box: the unit type, as `size|tier` (a size never holds `|`).
pub(super) fn pick_value(size: &str, tier: &str) -> String {
    format!("{size}|{tier}")
}

impl Page<'_> {
    /// Whether the reader's role may decide rates (and run the engine, change the settings:
    /// the same permission).
    pub(super) fn may_decide(&self) -> bool {
        page::may_post(self.s, "/app/facilities/{id}/decisions")
    }

    /// The sheet of the latest run, with the bulk form above it.
    pub(super) fn sheet(&self, run_id: Uuid) -> Markup {
        let decide = self.may_decide();
        let bulk_refused = self.refused.form == "bulk";
        html! {
            @if decide {
                form id="bulk" class="actions bulk" method="post" action=(self.action("decisions")) {
                    (page::csrf(self.s))
                    input type="hidden" name="run_id" value=(run_id);
                    input type="hidden" name="bulk" value="accept";
                    button type="submit" id="bulk-accept" { "Bulk accept the selection" }
                    span class="muted" { "Tick the rows to accept at their recommended rate; they are stored together, or none is." }
                }
                @if bulk_refused {
                    p class="field-error" role="alert" id="bulk-error" { (self.refused.message) }
                }
            }
            div class="table-wrap" {
                table id="sheet" class="sheet" {
                    thead { tr {
                        @if decide { th scope="col" { span class="skip" { "Select" } } }
                        th scope="col" { "Unit type" }
                        th scope="col" { "Current" }
                        th scope="col" { "Recommended" }
                        th scope="col" { "Change" }
                        th scope="col" { "Confidence" }
                        th scope="col" { "Occupancy" }
                        th scope="col" { "Competitors P25 to P75" }
                        th scope="col" { "Decision in force" }
                        @if decide { th scope="col" { "Decide" } }
                    } }
                    tbody {
                        @for (i, rec) in self.recs.iter().enumerate() {
                            (self.sheet_row(i, rec, run_id, decide))
                        }
                    }
                }
            }
        }
    }

    fn line_of(&self, rec: &Recommendation) -> Option<&RateLine> {
        let rates: &Rates = &self.l.rates_in_force;
        rates
            .rates
            .iter()
            .find(|l| l.size == rec.size && l.tier == rec.tier)
    }

    /// One unit type's row and the row of its reasons under it.
    fn sheet_row(&self, i: usize, rec: &Recommendation, run_id: Uuid, decide: bool) -> Markup {
        let fig = self.fig;
        let unit = domain::pricing::decisions::unit_label(&rec.size, &rec.tier);
        let line = self.line_of(rec);
        let picked = self.refused.form == "bulk"
            && self
                .refused
                .values
                .contains_key(&format!("pick:{}", pick_value(&rec.size, &rec.tier)));
        // The sign is the amount's (a cut reads `-$4.00`); the action word under it says which
        // way a change goes.
        let change = format!(
            "{} ({})",
            fig.rate(rec.change_amount),
            fig.pct(rec.change_pct)
        );
        let columns = FIGURE_COLUMNS + 2 * usize::from(decide);
        html! {
            tr id={"row-" (i)} data-size=(rec.size) data-tier=(rec.tier) {
                @if decide {
                    td {
                        input type="checkbox" form="bulk" name="pick" value=(pick_value(&rec.size, &rec.tier))
                            aria-label={"Select " (unit)} checked[picked];
                    }
                }
                th scope="row" { (unit) }
                td class="num" { (fig.rate(rec.current_rate)) }
                td class="num" { strong { (fig.rate(rec.recommended_rate)) } }
                td class="num" { (change) " " br; span class="muted" { (action_word(rec.action)) } }
                td class="num" { (fig.index(rec.confidence)) }
                td class="num" { (fig.pct(rec.occupancy_pct)) " " br; span class="muted" { (vacant(line)) } }
                td class="band" { (band_words(fig, rec)) }
                td { (in_force_words(fig, line)) }
                @if decide { td { (self.decide_form(i, rec, run_id)) } }
            }
            tr class="why" {
                td colspan=(columns) {
                    details {
                        summary { "Why " (unit) ": " (reasons_count(rec)) }
                        (reasons(fig, rec))
                    }
                }
            }
        }
    }

    /// Accept, override, reject in the row: the rate field holds the recommendation; the
    /// "apply anyway" box shows once an override was refused for a guardrail.
    fn decide_form(&self, i: usize, rec: &Recommendation, run_id: Uuid) -> Markup {
        let r = self.refused;
        let mine = r.form == "decision"
            && r.values.get("size") == Some(&rec.size)
            && r.values.get("tier").map_or("", |t| t.as_str()) == rec.tier;
        let typed = |name: &str| {
            if mine {
                r.values.get(name).cloned()
            } else {
                None
            }
        };
        let rate = typed("rate").unwrap_or_else(|| plain_rate(rec.recommended_rate));
        let unit = domain::pricing::decisions::unit_label(&rec.size, &rec.tier);
        html! {
            form class="decide" id={"decide-" (i)} method="post" action=(self.action("decisions")) {
                (page::csrf(self.s))
                input type="hidden" name="run_id" value=(run_id);
                input type="hidden" name="size" value=(rec.size);
                input type="hidden" name="tier" value=(rec.tier);
                @if mine { p class="field-error" role="alert" { (r.message) } }
                div class="decide-fields" {
                    input type="text" inputmode="decimal" name="rate" value=(rate) size="8"
                        aria-label={"Rate for " (unit)} title="The rate to override with";
                    input type="text" name="reason" maxlength="500" value=[typed("reason")]
                        placeholder="Reason (optional)" aria-label={"Reason for " (unit)};
                }
                @if mine && r.field.as_deref() == Some("force") {
                    label class="check" {
                        input type="checkbox" name="force" value="true";
                        "Apply anyway (past the guardrails; give a reason)"
                    }
                }
                div class="actions" {
                    button type="submit" name="action" value="accept" { "Accept" }
                    button type="submit" name="action" value="override" class="secondary" { "Override" }
                    button type="submit" name="action" value="reject" class="secondary" { "Reject" }
                }
            }
        }
    }
}

/// `6 of 90 vacant`, or nothing where the snapshot did not count units.
fn vacant(line: Option<&RateLine>) -> String {
    match line.map(|l| (l.total_units, l.occupied_units)) {
        Some((Some(total), Some(occupied))) => {
            format!("{} of {total} vacant", (total - occupied).max(0))
        }
        _ => String::new(),
    }
}

fn band_words(fig: &Figures, rec: &Recommendation) -> Markup {
    match &rec.competitor_band {
        Some(b) => html! {
            (fig.rate(b.p25)) " to " (fig.rate(b.p75)) " " br;
            span class="muted" { "median " (fig.rate(b.median)) }
        },
        None => html! { span class="muted" { "no competitors" } },
    }
}

/// The unit type's approved rate, where one is in force, and whether a snapshot shows it.
fn in_force_words(fig: &Figures, line: Option<&RateLine>) -> Markup {
    match line.and_then(|l| l.approved.as_ref()) {
        Some(a) => html! {
            (if a.action == "override" { "Overridden to " } else { "Accepted at " })
            (fig.rate(a.rate)) " " br;
            span class="muted" { (a.status.map_or("", |s| s.as_str()).replace('_', " ")) }
        },
        None => html! { span class="muted" { "none" } },
    }
}

fn reasons_count(rec: &Recommendation) -> String {
    let (f, g) = (rec.factors.len(), rec.guardrails.len());
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    if g == 0 {
        plural(f, "factor", "factors")
    } else {
        format!(
            "{}, {}",
            plural(f, "factor", "factors"),
            plural(g, "guardrail", "guardrails")
        )
    }
}

/// The factors (each one's share of the change) and the guardrails that bound the rate.
fn reasons(fig: &Figures, rec: &Recommendation) -> Markup {
    html! {
        ul class="factors" {
            @for x in &rec.factors {
                li {
                    strong { (sentence_case(&x.name.replace('_', " "))) }
                    " (" (fig.points(x.contribution_pct)) "): " (fig.prose(&x.detail))
                }
            }
            @for x in &rec.guardrails {
                li {
                    strong { "Guardrail " (x.name.replace('_', " ")) }
                    ": " (fig.rate(x.before)) " to " (fig.rate(x.after)) ". " (fig.prose(&x.detail))
                }
            }
        }
    }
}

fn sentence_case(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}
