//! The facility page's charts over the chosen range: occupancy, move-ins against the prorated
//! target, and street rate against the competitor band per size.

use super::*;

/// The charts of the history: occupancy, move-ins against the prorated target, and per size
/// its street rate (each tier) against the competitor band.
pub(super) fn charts(fig: &Figures, h: &History, days: i64) -> Vec<Chart> {
    let labels: Vec<String> = h.days.iter().map(|d| d.date.to_string()).collect();
    let index: HashMap<NaiveDate, usize> = h
        .days
        .iter()
        .enumerate()
        .map(|(i, d)| (d.date, i))
        .collect();
    let aligned = |points: &mut dyn Iterator<Item = (NaiveDate, f64)>| {
        let mut v = vec![None; labels.len()];
        for (date, value) in points {
            if let Some(&i) = index.get(&date) {
                v[i] = Some(value);
            }
        }
        v
    };
    let mut out = vec![
        Chart {
            id: "chart-occupancy".into(),
            title: format!("Occupancy, last {days} days"),
            unit: "%".into(),
            measure: Measure::Pct,
            figures: *fig,
            labels: labels.clone(),
            series: vec![Series::new(
                "Occupancy",
                Kind::Line,
                h.days.iter().map(|d| d.occupancy_pct).collect(),
            )],
            from_zero: false,
        },
        Chart {
            id: "chart-move-ins".into(),
            title: format!("Move-ins this month against the prorated target, last {days} days"),
            unit: "move-ins".into(),
            measure: Measure::Count,
            figures: *fig,
            labels: labels.clone(),
            series: vec![
                Series::new(
                    "Move-ins month to date",
                    Kind::Line,
                    h.days
                        .iter()
                        .map(|d| d.move_ins_mtd.map(f64::from))
                        .collect(),
                ),
                Series::new(
                    "Target to date",
                    Kind::Dashed,
                    h.days.iter().map(|d| d.move_ins_target_to_date).collect(),
                ),
            ],
            from_zero: true,
        },
    ];
    let mut sizes: Vec<&str> = Vec::new();
    for u in &h.unit_types {
        if !sizes.contains(&u.size.as_str()) {
            sizes.push(&u.size);
        }
    }
    for size in sizes {
        let mut series: Vec<Series> = h
            .unit_types
            .iter()
            .filter(|u| u.size == size)
            .map(|u| {
                Series::new(
                    format!("Street rate {}", u.tier),
                    Kind::Line,
                    aligned(&mut u.points.iter().map(|p| (p.date, p.street_rate))),
                )
            })
            .collect();
        // One band for the size, or one per tier where its competitor rates name a tier.
        for band in h.competitor_bands.iter().filter(|b| b.size == size) {
            let of = band
                .tier
                .as_deref()
                .map(|t| format!(" {}", if t.is_empty() { "(no tier)" } else { t }))
                .unwrap_or_default();
            for (name, pick) in [
                (
                    "Competitor P25",
                    (|p: &history::BandPoint| p.p25) as fn(&_) -> f64,
                ),
                ("Competitor median", |p| p.median),
                ("Competitor P75", |p| p.p75),
            ] {
                series.push(Series::new(
                    format!("{name}{of}"),
                    Kind::Dashed,
                    aligned(&mut band.points.iter().map(|p| (p.date, pick(p)))),
                ));
            }
        }
        out.push(Chart {
            id: format!(
                "chart-rate-{}",
                size.replace(|c: char| !c.is_ascii_alphanumeric(), "-")
            ),
            title: format!("{size}: street rate against the competitor band, last {days} days"),
            unit: "per month".into(),
            measure: Measure::Rate,
            figures: *fig,
            labels: labels.clone(),
            series,
            from_zero: false,
        });
    }
    out
}
