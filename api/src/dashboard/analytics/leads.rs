//! The lead funnel page: leads by channel over 30 or 90 days, dead channels flagged.

use super::*;
use domain::analytics::leads::Channel;
use jobs::analytics::reports::leads::Report;

pub async fn leads(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(p): Query<Params>,
) -> PageResult {
    let facility = p.facility()?;
    let (days, period) = period_of(p.period.as_deref())?;
    let report = reports::leads::report(&state.db, s.company_id, facility, &s.scope, days).await?;
    let fig = Figures::new(s.currency);
    let table = channels_table(&fig, &report, days);
    let chart = channels_chart(fig, &report.funnel.channels, days);
    // The table below is the chart's table view (the same figures).
    if let Some(r) = chart::export(&[&table], p.csv.as_deref(), "leads") {
        return Ok(r);
    }
    let q = p.query();
    let form = scope_form(&state, &s, PAGES[3].0, facility, period_field(period)).await?;
    let body = html! {
        (form)
        (summary(&fig, &report, days))
        (chart.svg())
        (table.render(&q))
    };
    frame(&s, "Lead funnel", PAGES[3].0, body)
}

/// The period asked for: its days and its name (30 days when none is given).
fn period_of(asked: Option<&str>) -> Result<(i64, &'static str), ApiError> {
    match asked {
        None | Some("" | "30d") => Ok((30, "30d")),
        Some("90d") => Ok((90, "90d")),
        Some(other) => {
            let shown: String = other.chars().take(30).collect();
            Err(ApiError::Invalid(format!(
                "query parameter period: must be 30d or 90d, got '{shown}'"
            )))
        }
    }
}

/// The scope form's own field: the period, the current one chosen.
fn period_field(period: &str) -> Markup {
    html! {
        label { "Period"
            select name="period" {
                @for v in ["30d", "90d"] {
                    @if v == period { option value=(v) selected { (v) } } @else { option value=(v) { (v) } }
                }
            }
        }
    }
}

/// Leads per channel against the period before, which is named for the days it covers when
/// it began before the data did.
fn channels_table(fig: &Figures, report: &Report, days: i64) -> Table {
    let previous_days = report.previous_period_days_covered;
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
            channel_word(&c.channel),
            fig.count(c.leads as f64),
            fig.pct(c.share_pct),
            fig.count(c.previous_period_leads as f64),
            yes(c.dead),
            c.conversion.replace('_', " "),
        ]);
    }
    table
}

/// The chart of each channel's leads in this period and the one before.
fn channels_chart(fig: Figures, channels: &[Channel], days: i64) -> Chart {
    Chart {
        id: "chart-leads".into(),
        title: format!("Leads per channel, last {days} days and the period before"),
        unit: "leads".into(),
        measure: Measure::Count,
        figures: fig,
        labels: channels.iter().map(|c| channel_word(&c.channel)).collect(),
        series: vec![
            Series::new(
                "This period",
                Kind::Bar,
                channels.iter().map(|c| Some(c.leads as f64)).collect(),
            ),
            Series::new(
                "Previous period",
                Kind::Bar,
                channels
                    .iter()
                    .map(|c| Some(c.previous_period_leads as f64))
                    .collect(),
            ),
        ],
        from_zero: true,
    }
}

/// The funnel's tiles, and the banners and notes on what its figures cover.
fn summary(fig: &Figures, report: &Report, days: i64) -> Markup {
    let f = &report.funnel;
    let previous_days = report.previous_period_days_covered;
    html! {
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
                "No leads this period from a channel that brought some before: "
                (f.dead_channels.iter().map(|c| channel_word(c)).collect::<Vec<_>>().join(", ")) "."
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
    }
}

/// A channel id as a person reads it: `walk_in` is "Walk-in", `google_ads` "Google ads",
/// `email` "E-mail". The id the CRM sent stays in the API's answer.
fn channel_word(id: &str) -> String {
    let id = id.trim();
    match id.to_lowercase().as_str() {
        "walk_in" | "walk-in" | "walkin" => return "Walk-in".to_owned(),
        "email" | "e_mail" => return "E-mail".to_owned(),
        "sms" => return "SMS".to_owned(),
        _ => {}
    }
    let words = id.replace(['_', '-'], " ");
    let mut c = words.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn channel_ids_read_as_words() {
        for (id, word) in [
            ("walk_in", "Walk-in"),
            ("web", "Web"),
            ("phone", "Phone"),
            ("google_ads", "Google ads"),
            ("email", "E-mail"),
            ("", ""),
        ] {
            assert_eq!(super::channel_word(id), word);
        }
    }
}
