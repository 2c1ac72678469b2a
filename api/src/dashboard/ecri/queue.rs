//! The facility's ECRI page as a work queue: a summary per size, a GET form of filters (size,
//! tier, increase band, binding guardrail, flagged), the matching lines a page at a time with
//! short reason chips (the full explanation folded under `<details>`), and a box per line to
//! draft a batch of the tenants picked. Tenants whose approved increase is not yet in force are
//! shown as such and never offered.

use crate::dashboard::chart::Table;
use crate::dashboard::figures::{cells, Figures};
use crate::dashboard::page;
use chrono::NaiveDate;
use jobs::ecri::sizes::{size_order, SizeSummary};
use jobs::ecri::TenantLine;
use jobs::ecri_batches::{Status, Summary};
use jobs::sessions::Session;
use maud::{html, Markup};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};

/// Lines on one page of the queue.
pub const PER_PAGE: usize = 50;

/// The prefix of a line's box in the selection form (`pick.<tenant id>=1`).
pub const PICK: &str = "pick.";

/// The queue's filters, as the page's query string carries them.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Filters {
    pub size: Option<String>,
    pub tier: Option<String>,
    /// `none`, `under5`, `5to10`, `over10`, or any increase (`raised`).
    pub band: Option<String>,
    pub guardrail: Option<String>,
    /// `1`: only tenants carrying a flag.
    pub flagged: Option<String>,
    /// 1-based (text, so a bad page reads as the first rather than refusing the page).
    pub page: Option<String>,
}

/// The increase bands of the filter, with their labels.
const BANDS: [(&str, &str); 5] = [
    ("raised", "any increase"),
    ("none", "no increase (0 %)"),
    ("under5", "under 5 %"),
    ("5to10", "5 to 10 %"),
    ("over10", "over 10 %"),
];

fn set(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

impl Filters {
    /// Whether a line passes every filter set.
    pub fn keeps(&self, l: &TenantLine) -> bool {
        let x = &l.suggestion;
        let pct = x.increase_pct;
        set(&self.size).is_none_or(|s| l.size == s)
            && set(&self.tier).is_none_or(|t| l.input.tier.as_deref() == Some(t))
            && set(&self.guardrail)
                .is_none_or(|g| x.binding_guardrail.is_some_and(|b| b.name() == g))
            && (set(&self.flagged) != Some("1") || !l.input.flags.is_empty())
            && match set(&self.band) {
                None => true,
                Some("raised") => x.increase > 0.0,
                Some("none") => x.increase <= 0.0,
                Some("under5") => x.increase > 0.0 && pct < 5.0,
                Some("5to10") => (5.0..=10.0).contains(&pct),
                Some("over10") => pct > 10.0,
                Some(_) => true,
            }
    }

    /// The page asked for, at least 1.
    pub fn page(&self) -> usize {
        set(&self.page)
            .and_then(|p| p.parse::<usize>().ok())
            .unwrap_or(1)
            .max(1)
    }

    /// The filters as a query string (without the page), for links and the CSV.
    pub fn query(&self) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new());
        for (k, v) in [
            ("size", &self.size),
            ("tier", &self.tier),
            ("band", &self.band),
            ("guardrail", &self.guardrail),
            ("flagged", &self.flagged),
        ] {
            if let Some(v) = set(v) {
                q.append_pair(k, v);
            }
        }
        q.finish()
    }

    /// The address of page `page` under the same filters.
    pub fn page_href(&self, page: usize) -> String {
        let q = self.query();
        let sep = if q.is_empty() { "" } else { "&" };
        format!("?{q}{sep}page={page}#queue-h")
    }
}

/// The lines that pass the filters, in the queue's order: sizes in their natural order, then
/// the largest expected gain first, then the tenant.
pub fn filtered<'a>(lines: &'a [TenantLine], f: &Filters) -> Vec<&'a TenantLine> {
    let mut out: Vec<&TenantLine> = lines.iter().filter(|l| f.keeps(l)).collect();
    out.sort_by(|a, b| {
        size_order(&a.size, &b.size)
            .then(
                b.suggestion
                    .expected_gain
                    .total_cmp(&a.suggestion.expected_gain),
            )
            .then_with(|| a.suggestion.tenant_id.cmp(&b.suggestion.tenant_id))
    });
    out
}

/// A tenant's approved increase not yet in force: when it was approved and when it takes
/// effect.
#[derive(Clone, Copy, Debug)]
pub struct InBatch {
    pub approved: NaiveDate,
    pub effective: NaiveDate,
}

/// The tenants of approved batches whose new rent is not in force on `today`, by tenant id
/// (the latest approval when a tenant is in several).
pub fn in_batches(listed: &[Summary], today: NaiveDate) -> BTreeMap<String, InBatch> {
    let mut out = BTreeMap::new();
    for b in listed.iter().rev().map(|s| &s.batch) {
        let (Some(effective), Some(at)) = (b.effective_date, b.approved_at) else {
            continue;
        };
        if b.status != Status::Approved || effective <= today {
            continue;
        }
        for l in b.lines.iter().filter(|l| !l.excluded) {
            if let Some(t) = &l.tenant_id {
                out.insert(
                    t.clone(),
                    InBatch {
                        approved: at.date_naive(),
                        effective,
                    },
                );
            }
        }
    }
    out
}

/// The per-size summary: tenants, those suggested an increase, the average and median
/// increase, the expected move-outs and gain, the guardrails that bind; sizes in natural order.
pub fn sizes_table(fig: &Figures, sizes: &[SizeSummary]) -> Table {
    let mut t = Table::new(
        "ecri-queue-sizes",
        "Per size: what the latest run suggests",
        &[
            "Size",
            "Tenants",
            "Suggested",
            "Average increase (%)",
            "Median increase (%)",
            "Expected move-outs",
            "Expected gain",
            "Guardrails that bind",
        ],
    );
    for z in sizes {
        t.row(cells![
            z.size.clone(),
            fig.count(z.tenants as f64),
            fig.count(z.tenants_affected as f64),
            fig.pct(z.avg_increase_pct),
            fig.pct(z.median_increase_pct),
            fig.expected(z.expected_move_outs),
            fig.amount(z.expected_gain),
            z.guardrails
                .iter()
                .map(|(g, n)| format!("{} ({n})", g.replace('_', " ")))
                .collect::<Vec<_>>()
                .join("; "),
        ]);
    }
    t
}

/// The GET form of the filters, its choices drawn from the run's lines.
pub fn filter_form(lines: &[TenantLine], f: &Filters) -> Markup {
    let mut sizes: Vec<&str> = lines
        .iter()
        .map(|l| l.size.as_str())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    sizes.sort_by(|a, b| size_order(a, b));
    let tiers: BTreeSet<&str> = lines
        .iter()
        .filter_map(|l| l.input.tier.as_deref())
        .collect();
    let guardrails: BTreeSet<&str> = lines
        .iter()
        .filter_map(|l| l.suggestion.binding_guardrail.map(|g| g.name()))
        .collect();
    let own = |v: &[&str]| -> Vec<(String, String)> {
        v.iter()
            .map(|s| ((*s).to_owned(), s.replace('_', " ")))
            .collect()
    };
    let tiers: Vec<&str> = tiers.into_iter().collect();
    let guardrails: Vec<&str> = guardrails.into_iter().collect();
    let bands: Vec<(String, String)> = BANDS
        .iter()
        .map(|(v, t)| ((*v).to_owned(), (*t).to_owned()))
        .collect();
    html! {
        form class="card filters" method="get" id="queue-filters" action="#queue-h" {
            (choice(("size", "Size", "every size"), &own(sizes.as_slice()), set(&f.size)))
            @if !tiers.is_empty() { (choice(("tier", "Tier", "every tier"), &own(tiers.as_slice()), set(&f.tier))) }
            (choice(("band", "Increase", "any"), &bands, set(&f.band)))
            (choice(("guardrail", "Guardrail that binds", "any"), &own(guardrails.as_slice()), set(&f.guardrail)))
            label { input type="checkbox" name="flagged" value="1" checked[set(&f.flagged) == Some("1")]; " Only flagged tenants" }
            div class="actions" {
                button type="submit" id="apply-filters" { "Show" }
                a href="?#queue-h" { "Clear" }
            }
        }
    }
}

/// One choice of the filters: its field name, label and the text of "no filter".
pub(super) fn choice(
    (name, label, all): (&str, &str, &str),
    options: &[(String, String)],
    current: Option<&str>,
) -> Markup {
    html! {
        label { (label)
            select name=(name) id={"filter-" (name)} {
                option value="" selected[current.is_none()] { (all) }
                @for (v, text) in options {
                    option value=(v) selected[current == Some(v.as_str())] { (text) }
                }
            }
        }
    }
}

/// A line's short reasons: stay, gain, the binding guardrail, its flags, its batch.
fn chips(fig: &Figures, l: &TenantLine, held: Option<&InBatch>) -> Markup {
    let x = &l.suggestion;
    html! {
        span class="chips" {
            @if let Some(h) = held {
                span class="chip held" { "in the batch approved on " (h.approved) ", effective " (h.effective) }
            }
            span class="chip" { "stay " (fig.pct(x.stay_probability)) }
            span class="chip" { "gain " (fig.amount(x.expected_gain)) }
            @if let Some(g) = x.binding_guardrail { span class="chip guard" { (g.name().replace('_', " ")) } }
            @for flag in &l.input.flags { span class="chip flag" { (flag) } }
        }
    }
}

/// One page of the queue in a form that drafts a batch of the tenants picked.
pub fn queue(
    s: &Session,
    fig: &Figures,
    lines: &[&TenantLine],
    f: &Filters,
    held: &BTreeMap<String, InBatch>,
    action: &str,
) -> Markup {
    let pages = lines.len().div_ceil(PER_PAGE).max(1);
    let page = f.page().min(pages);
    let shown = lines.iter().skip((page - 1) * PER_PAGE).take(PER_PAGE);
    let may_batch = page::may_post(s, "/app/facilities/{id}/ecri-batches");
    let from = (page - 1) * PER_PAGE + usize::from(!lines.is_empty());
    let to = (page * PER_PAGE).min(lines.len());
    let nav = html! {
        nav class="pager" aria-label="Pages of the queue" {
            span id="queue-position" { "Lines " (from) " to " (to) " of " (lines.len()) " · page " (page) " of " (pages) }
            @if page > 1 { " " a id="queue-prev" href=(f.page_href(page - 1)) { "Previous" } }
            @if page < pages { " " a id="queue-next" href=(f.page_href(page + 1)) { "Next" } }
        }
    };
    html! {
        (nav)
        form method="post" action=(action) id="queue-form" {
            (page::csrf(s))
            input type="hidden" name="selection" value="1";
            div class="table-wrap" {
                table id="ecri-queue" {
                    thead { tr {
                        th scope="col" { span class="visually-hidden" { "Pick" } }
                        th scope="col" { "Tenant" } th scope="col" { "Size" }
                        th scope="col" { "Rent" } th scope="col" { "New rent" } th scope="col" { "Increase" }
                        th scope="col" { "Why" }
                    } }
                    tbody {
                        @for l in shown {
                            @let x = &l.suggestion;
                            @let hold = held.get(&x.tenant_id);
                            tr data-tenant=(x.tenant_id) {
                                td {
                                    @if may_batch && hold.is_none() && x.increase > 0.0 && !x.tenant_id.is_empty() && x.tenant_count <= 1 {
                                        input type="checkbox" name={(PICK) (x.tenant_id)} value="1" aria-label={"Pick " (x.tenant_id)};
                                    }
                                }
                                td { @if x.tenant_id.is_empty() { "(cohort of " (x.tenant_count) ")" } @else { (x.tenant_id) } }
                                td { (l.size) @if let Some(t) = &l.input.tier { " " span class="muted" { (t) } } }
                                td class="num" { (fig.rate(x.current_rent)) }
                                td class="num" { @if x.increase > 0.0 { (fig.rate(x.new_rent)) } @else { "unchanged" } }
                                td class="num" { @if x.increase > 0.0 { (fig.rate(x.increase)) " (" (fig.pct(x.increase_pct)) ")" } @else { "none" } }
                                td {
                                    (chips(fig, l, hold))
                                    details { summary { "Why" }
                                        p { (x.reasons.iter().map(|r| r.text_in(fig.currency)).collect::<Vec<_>>().join("; ")) }
                                    }
                                }
                            }
                        }
                    }
                    @if lines.is_empty() {
                        tfoot { tr { td class="muted empty" colspan="7" { "No line matches these filters." } } }
                    }
                }
            }
            @if may_batch {
                div class="actions" { button type="submit" id="create-selected" { "Create a draft batch of the selected tenants" } }
            }
        }
        (nav)
    }
}

/// The tenant ids a selection form picked.
pub fn picked(values: &BTreeMap<String, String>) -> Vec<String> {
    values
        .iter()
        .filter(|(_, v)| v.as_str() == "1")
        .filter_map(|(k, _)| k.strip_prefix(PICK))
        .map(str::to_owned)
        .collect()
}
