//! The ECRI page's calibration section: the stay model's predicted 90-day stay against the
//! realized one, by decile of predicted stay (a chart with the diagonal, where a calibrated
//! model's points lie) and by facility, from the same `jobs::ecri_batches::calibration` as
//! `GET /api/v1/analytics/ecri/calibration`.

use super::*;
use jobs::ecri_batches::calibration::{calibration, Calibration};

/// The section's chart, its table view and the facilities' table.
pub(super) struct Section {
    pub report: Calibration,
    pub chart: Chart,
    pub chart_table: Table,
    pub facilities: Table,
}

pub(super) async fn section(
    state: &AppState,
    s: &Session,
    facility: Option<domain::ids::FacilityId>,
    fig: Figures,
) -> Result<Section, ApiError> {
    let report = calibration(&state.db, s.company_id, facility, &s.scope).await?;
    let chart = Chart {
        id: "chart-ecri-calibration".into(),
        title: "Stay 90 days after the notice by decile of predicted stay: realized against predicted (the dashed diagonal: realized = predicted)".into(),
        unit: "%".into(),
        measure: Measure::Pct,
        figures: fig,
        labels: report
            .deciles
            .iter()
            .map(|d| {
                format!(
                    "D{} ({:.0}-{:.0} %)",
                    d.decile, d.predicted_low_pct, d.predicted_high_pct
                )
            })
            .collect(),
        series: vec![
            Series::new(
                "Diagonal: predicted",
                Kind::Dashed,
                report
                    .deciles
                    .iter()
                    .map(|d| Some(d.bin.predicted_stay_pct))
                    .collect(),
            ),
            Series::new(
                "Realized",
                Kind::Line,
                report
                    .deciles
                    .iter()
                    .map(|d| Some(d.bin.realized_stay_pct))
                    .collect(),
            ),
        ],
        from_zero: true,
    };
    let mut chart_table = Table::new(
        "chart-ecri-calibration-table",
        "By decile of predicted stay: tenants, predicted and realized stay",
        &[
            "Decile",
            "Predicted from (%)",
            "Predicted to (%)",
            "Tenants",
            "Predicted (%)",
            "Realized (%)",
        ],
    );
    for d in &report.deciles {
        chart_table.row(cells![
            format!("D{}", d.decile),
            fig.pct(d.predicted_low_pct),
            fig.pct(d.predicted_high_pct),
            fig.count(d.bin.tenants as f64),
            fig.pct(d.bin.predicted_stay_pct),
            fig.pct(d.bin.realized_stay_pct),
        ]);
    }
    let mut facilities = Table::new(
        "ecri-calibration-facilities",
        "By facility: predicted against realized stay 90 days after the notice",
        &[
            "Facility",
            "Batches",
            "Tenants",
            "Predicted (%)",
            "Realized (%)",
        ],
    );
    for f in &report.facilities {
        facilities.row(cells![
            f.facility_name.clone(),
            fig.count(f.batches as f64),
            fig.count(f.bin.tenants as f64),
            fig.pct(f.bin.predicted_stay_pct),
            fig.pct(f.bin.realized_stay_pct),
        ]);
    }
    Ok(Section {
        report,
        chart,
        chart_table,
        facilities,
    })
}

impl Section {
    pub(super) fn render(&self, fig: &Figures, q: &str) -> Markup {
        let r = &self.report;
        html! {
            section id="calibration" aria-labelledby="calibration-h" {
                h2 id="calibration-h" { "Calibration of the stay model" }
                p class="muted" id="calibration-summary" {
                    "The increased tenants of " (fig.count(r.batches as f64)) " approved batches whose 90 days after the notice are in the rent roll: "
                    (fig.count(r.tenants as f64)) " tenants"
                    @if let Some(o) = &r.overall {
                        ", " (fig.pct(o.predicted_stay_pct)) " predicted to stay, " (fig.pct(o.realized_stay_pct)) " stayed"
                    }
                    "."
                }
                @if r.tenants > 0 {
                    (chart::with_table(&self.chart, &self.chart_table, q))
                    (self.facilities.render(q))
                }
            }
        }
    }
}
