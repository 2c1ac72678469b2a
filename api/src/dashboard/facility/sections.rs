//! The facility page's sections, each rendered from the loaded overview and the page's tables:
//! the latest recommendations with "run now" and the run history, the decisions with the
//! approved rates, the history charts, the competitor rates and the pricing settings.

use super::*;
use jobs::pricing::Overview;

/// Every table of the page: each is shown and also answers as CSV.
pub(super) struct Tables {
    pub recs: Table,
    pub factors: Table,
    pub guards: Table,
    pub runs: Table,
    pub rates: Table,
    pub bands: Table,
    pub approved: Table,
    pub history: Table,
    /// The table view of each chart, in the charts' order.
    pub charts: Vec<Table>,
}

impl Tables {
    pub fn new(fig: &Figures, l: &Overview, recs: &[Recommendation], charts: &[Chart]) -> Self {
        let (recs, factors, guards) = recommendation_tables(fig, recs);
        Self {
            recs,
            factors,
            guards,
            runs: runs_table(fig, &l.runs),
            rates: rates_table(fig, &l.rates),
            bands: bands_table(fig, &l.rates),
            approved: approved_table(fig, &l.rates_in_force),
            history: history_table(fig, &l.history.decisions),
            charts: charts
                .iter()
                .map(|c| c.table(format!("{}-table", c.id)))
                .collect(),
        }
    }

    /// The tables in the order the CSV export looks them up.
    pub fn all(&self) -> Vec<&Table> {
        let mut all = vec![
            &self.approved,
            &self.history,
            &self.recs,
            &self.factors,
            &self.guards,
            &self.runs,
            &self.rates,
            &self.bands,
        ];
        all.extend(self.charts.iter());
        all
    }
}

/// One rendering of the page: what its sections draw on.
pub(super) struct Page<'a> {
    pub s: &'a Session,
    pub id: FacilityId,
    pub l: &'a Overview,
    pub fig: &'a Figures,
    pub recs: &'a [Recommendation],
    pub days: i64,
    pub charts: &'a [Chart],
    pub t: &'a Tables,
    /// The page's own query (`days=...`), for its tables' CSV links.
    pub query: &'a str,
    pub refused: &'a Refused,
}

impl Page<'_> {
    /// The address a form of the page posts to.
    pub(super) fn action(&self, p: &str) -> String {
        format!("/app/facilities/{}/{p}", self.id)
    }

    /// The page's body: the line under the title, then its sections: the decision sheet
    /// first, the rates in force beside the decisions made, then the history, the competitor
    /// rates and the settings (the long lists folded).
    pub fn body(&self) -> Markup {
        html! {
            (self.header_line())
            @if !self.may_decide() {
                (page::role_note(self.s, "decide rates, run the engine, add competitor rates or change the settings", "a manager, an admin or an owner"))
            }
            // The forms swap their own section with htmx (the page the server answers, its
            // section and messages taken in place of the current ones); without script they post
            // and the whole page loads, as before.
            (self.recs_section())
            (self.decisions_section())
            (self.history_section())
            (self.rates_section())
            section id="pricing-settings" aria-labelledby="settings-h" {
                h2 id="settings-h" { "Pricing settings" }
                details class="fold" open[self.refused.form == "settings"] {
                    summary { "Show the settings" }
                    (settings_form(self.s, &self.action("settings"), &self.l.settings, self.refused, self.may_decide()))
                }
            }
        }
    }

    /// The way back, the facility's ECRI page, its latest data and mode.
    fn header_line(&self) -> Markup {
        let l = self.l;
        html! {
            p class="muted" {
                a href="/app/facilities" { "All facilities" } " · "
                a href={"/app/facilities/" (self.id) "/ecri"} { "Rent increases (ECRI)" } " · "
                @if let Some(to) = l.history.to { "Latest data " (to) } @else { "No data yet" }
                @if let Some(run) = &l.latest { " · mode " (run.mode.replace('_', "-")) }
            }
        }
    }

    /// The latest run as a decision sheet, "run now" and the run history.
    fn recs_section(&self) -> Markup {
        let (l, t, query) = (self.l, self.t, self.query);
        let run_now = self.action("run");
        html! {
            section id="recs" aria-labelledby="recs-h" {
                h2 id="recs-h" { "Decide the street rates" }
                div class="actions" {
                    @if self.may_decide() {
                        form method="post" action=(run_now) hx-post=(run_now)
                            hx-target="#recs" hx-select="#recs" hx-swap="outerHTML" hx-select-oob="#flash" {
                            (page::csrf(self.s))
                            button type="submit" id="run-now" class="secondary" { "Run now" }
                        }
                    }
                    @if let Some(run) = &l.latest {
                        span class="muted" id="latest-run" {
                            "Run " (page::when(Some(run.generated_at))) " (" (run.trigger) ") on the data of " (run.snapshot_date)
                        }
                        a class="csv" href={"?" (query) "&csv=recommendations"} download { "CSV" }
                    }
                }
                @if let Some(run) = &l.latest {
                    @if self.may_decide() {
                        p class="muted" {
                            "Accept the recommended rate, override it with the rate in the field (within the run's guardrails, or applied anyway with a reason), or reject it. The next run starts from an approved rate until a snapshot shows it."
                        }
                    }
                    (self.sheet(run.recommendation_id))
                } @else {
                    p class="muted" { "No recommendation run yet: run the engine now." }
                }
                details class="fold" {
                    summary { "Run history (the latest " (RUNS_SHOWN) " runs)" }
                    (t.runs.render(query))
                }
            }
        }
    }

    /// The rates in force and approved (with their CSV for the PMS) beside the facility's
    /// history of decisions.
    fn decisions_section(&self) -> Markup {
        let (approved, history) = (&self.t.approved, &self.t.history);
        html! {
            section id="decisions" aria-labelledby="decisions-h" {
                h2 id="decisions-h" { "Rates in force and decisions" }
                div class="side-by-side" {
                    div {
                        h3 { "Approved rates" }
                        p class="muted" {
                            "Pending until a snapshot dated on or after the decision day shows it; not applied after "
                            (jobs::rates::PENDING_DAYS) " days of snapshots without it. "
                            a href=(self.action("rates.csv")) id="rates-csv" download { "Pending rates for your PMS (CSV)" }
                        }
                        (approved.render(self.query))
                    }
                    div {
                        h3 { "Decision history" }
                        (history.render(self.query))
                    }
                }
            }
        }
    }

    /// The history charts over the chosen range, with the links to the other ranges.
    fn history_section(&self) -> Markup {
        html! {
            section aria-labelledby="charts-h" {
                h2 id="charts-h" { "History" }
                nav class="range" aria-label="Chart range" {
                    @for d in RANGES_DAYS {
                        @if d == self.days {
                            a href={"?days=" (d)} aria-current="true" { (d) " days" }
                        } @else {
                            a href={"?days=" (d)} { (d) " days" }
                        }
                    }
                }
                div class="charts-grid" {
                    @for (c, t) in self.charts.iter().zip(&self.t.charts) {
                        div { (chart::with_table(c, t, self.query)) }
                    }
                }
            }
        }
    }

    /// The competitor rates and their band per size, with the form to add a rate.
    fn rates_section(&self) -> Markup {
        html! {
            section id="rates" aria-labelledby="rates-h" {
                h2 id="rates-h" { "Competitor rates" }
                p class="muted" { "Stale: older than " (self.l.settings.competitor_stale_after_days) " days (the facility's setting); the engine gives a stale rate less weight." }
                (self.t.bands.render(self.query))
                details class="fold" open[self.refused.form == "rate"] {
                    summary { "Every observation (" (self.t.rates.rows.len()) ")" }
                    (self.t.rates.render(self.query))
                }
                @if self.may_decide() {
                    (rate_form(self.s, &self.action("competitor-rates"), self.refused))
                }
            }
        }
    }
}
