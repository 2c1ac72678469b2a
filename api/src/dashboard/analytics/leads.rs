//! The lead funnel page: leads by channel over 30 or 90 days, dead channels flagged.

use super::*;

pub async fn leads(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(p): Query<Params>,
) -> PageResult {
    let facility = p.facility()?;
    let (days, period) = match p.period.as_deref() {
        None | Some("" | "30d") => (30, "30d"),
        Some("90d") => (90, "90d"),
        Some(other) => {
            let shown: String = other.chars().take(30).collect();
            return Err(ApiError::Invalid(format!(
                "query parameter period: must be 30d or 90d, got '{shown}'"
            ))
            .into());
        }
    };
    let report = reports::leads::report(&state.db, s.company_id, facility, &s.scope, days).await?;
    let fig = Figures::new(s.currency);
    let previous_days = report.previous_period_days_covered;
    // A previous period that began before the data did is named for what it covers.
    let previous = if previous_days < days {
        format!("the {days} days before (data for {previous_days} of them)")
    } else {
        format!("the {days} days before")
    };
    let mut table = Table::new(
        "lead-channels",
        format!("Leads per channel, last {days} days against {previous}"),
        &[
            "Channel",
            "Leads",
            "Share",
            "Previous period",
            "Dead channel",
            "Conversion",
        ],
    );
    for c in &report.funnel.channels {
        table.row(cells![
            c.channel.clone(),
            fig.count(c.leads as f64),
            fig.pct(c.share_pct),
            fig.count(c.previous_period_leads as f64),
            yes(c.dead),
            c.conversion.replace('_', " "),
        ]);
    }
    let chart = Chart {
        id: "chart-leads".into(),
        title: format!("Leads per channel, last {days} days and the period before"),
        unit: "leads".into(),
        measure: Measure::Count,
        figures: fig,
        labels: report
            .funnel
            .channels
            .iter()
            .map(|c| c.channel.clone())
            .collect(),
        series: vec![
            Series::new(
                "This period",
                Kind::Bar,
                report
                    .funnel
                    .channels
                    .iter()
                    .map(|c| Some(c.leads as f64))
                    .collect(),
            ),
            Series::new(
                "Previous period",
                Kind::Bar,
                report
                    .funnel
                    .channels
                    .iter()
                    .map(|c| Some(c.previous_period_leads as f64))
                    .collect(),
            ),
        ],
        from_zero: true,
    };
    // The table below is the chart's table view (the same figures).
    if let Some(r) = chart::export(&[&table], p.csv.as_deref(), "leads") {
        return Ok(r);
    }
    let q = p.query();
    let extra = html! {
        label { "Period"
            select name="period" {
                @for v in ["30d", "90d"] {
                    @if v == period { option value=(v) selected { (v) } } @else { option value=(v) { (v) } }
                }
            }
        }
    };
    let form = scope_form(&state, &s, PAGES[3].0, facility, extra).await?;
    let f = &report.funnel;
    let body = html! {
        (form)
        div class="figures" {
            div { "Leads" b id="leads-total" { (fig.count(f.total_leads as f64)) } }
            div { "Move-ins" b id="leads-move-ins" { (fig.count(f.move_ins as f64)) } }
            div { "Lead to move-in" b id="leads-conversion" { (fig.pct(f.conversion_pct)) }
                span class="muted" id="leads-conversion-scope" {
                    (f.conversion_move_ins) " move-ins of the " (report.facilities_with_leads)
                    " of " (report.facilities_reporting) " facilities that sent leads"
                }
            }
            div { "Dead channels" b id="leads-dead" { (f.dead_channels.len()) } }
        }
        @if !f.dead_channels.is_empty() {
            p class="banner" id="dead-channels" {
                "No leads this period from a channel that brought some before: " (f.dead_channels.join(", ")) "."
            }
        }
        p class="muted" { "Per-channel conversion is not measured: the data carries move-ins, not their channel." }
        @if previous_days < days {
            p class="banner" id="leads-partial-previous" {
                "The previous " (days) " days reach back before the first data: only " (previous_days)
                " of them have any, so their counts are not a full period's."
            }
        }
        @if let Some(reason) = &report.reason { p class="muted" { (reason) } }
        (chart.svg())
        (table.render(&q))
    };
    frame(&s, "Lead funnel", PAGES[3].0, body)
}
