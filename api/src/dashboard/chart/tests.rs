use super::*;
use crate::dashboard::figures::{cells, Cell};
use domain::values::Currency;

fn usd() -> Figures {
    Figures::new(Currency::USD)
}

fn chart(measure: Measure, kind: Kind, labels: Vec<String>, values: Vec<Option<f64>>) -> Chart {
    Chart {
        id: "c".into(),
        title: "C".into(),
        unit: "".into(),
        measure,
        figures: usd(),
        labels,
        series: vec![Series::new("x", kind, values)],
        from_zero: false,
    }
}

fn year_chart() -> Chart {
    let labels: Vec<String> = (0..365).map(|d| format!("2026-{:03}", d)).collect();
    let values = (0..365)
        .map(|d| Some(80.0 + f64::from(d % 17) * 0.73))
        .collect();
    Chart {
        id: "occupancy".into(),
        title: "Occupancy".into(),
        unit: "%".into(),
        measure: Measure::Pct,
        figures: usd(),
        labels,
        series: vec![Series::new("Occupancy", Kind::Line, values)],
        from_zero: false,
    }
}

/// The texts of a drawn chart's labels of `class` (`y-label`, `x-label`) with their x.
fn labels_of(svg: &str, class: &str) -> Vec<(f64, String)> {
    svg.split(&format!(r#"<text class="{class}" x=""#))
        .skip(1)
        .map(|s| {
            let x: f64 = s.split('"').next().unwrap().parse().unwrap();
            let inner = s[s.find('>').unwrap() + 1..]
                .split("</text>")
                .next()
                .unwrap();
            let text = inner.rsplit("</title>").next().unwrap().to_owned();
            (x, text)
        })
        .collect()
}

/// The y-axis labels of a drawn chart.
fn y_labels(svg: &str) -> Vec<String> {
    labels_of(svg, "y-label")
        .into_iter()
        .map(|(_, t)| t)
        .collect()
}

#[test]
fn a_year_of_one_series_is_well_under_50_kb() {
    let svg = year_chart().svg().into_string();
    assert!(svg.len() < 50_000, "{} bytes", svg.len());
    assert_eq!(svg.matches("<polyline").count(), 1);
    assert!(svg.contains("<title id=\"occupancy-title\">Occupancy</title>"));
}

#[test]
fn gaps_split_a_line_and_bars_start_at_zero() {
    assert_eq!(
        runs(&[Some(1.0), None, Some(2.0), Some(3.0), Some(f64::NAN)]),
        vec![vec![(0, 1.0)], vec![(2, 2.0), (3, 3.0)]]
    );
    let c = chart(
        Measure::Count,
        Kind::Bar,
        vec!["a".into(), "b".into()],
        vec![Some(5.0), Some(10.0)],
    );
    assert_eq!(c.range().unwrap().1[0], 0.0);
    assert_eq!(c.svg().into_string().matches("<rect x=").count(), 2);
}

#[test]
fn the_table_view_holds_every_point_in_its_measure() {
    let t = year_chart().table("occupancy-table");
    assert_eq!(t.rows.len(), 365);
    assert_eq!(t.headers, vec!["Point", "Occupancy (%)"]);
    assert_eq!(t.rows[3][0].shown, "2026-003");
    assert_eq!(t.rows[3][1].shown, "82.2\u{a0}%");
    assert_eq!(t.rows[3][1].plain, "82.2");
}

#[test]
fn ticks_fall_on_round_steps() {
    let labels = |lo, hi, measure| {
        let f = usd();
        let (step, ticks) = nice_ticks(lo, hi, 4, f.decimals(measure));
        ticks
            .iter()
            .map(|v| tick(&f, measure, *v, step))
            .collect::<Vec<_>>()
    };
    // An occupancy axis: 81.57 to 93.2 reads 80, 85, 90, 95.
    assert_eq!(
        labels(81.57, 93.2, Measure::Pct),
        ["80\u{a0}%", "85\u{a0}%", "90\u{a0}%", "95\u{a0}%"]
    );
    assert_eq!(
        labels(0.0, 1234.0, Measure::Amount),
        ["$0", "$500", "$1,000", "$1,500"]
    );
    // A count never gets a tick of 2.5.
    assert_eq!(labels(0.0, 9.0, Measure::Count), ["0", "5", "10"]);
    // A percent axis never gets a tick of two decimals.
    let narrow = labels(42.0, 42.3, Measure::Pct);
    assert!(narrow.iter().all(|t| !t.contains(".05")), "{narrow:?}");
    assert_eq!(labels(0.47, 0.474, Measure::PerSqFt), ["$0.47", "$0.48"]);
    assert_eq!(
        labels(-3.0, 7.0, Measure::Rate),
        ["-$5.00", "-$2.50", "$0.00", "$2.50", "$5.00", "$7.50"]
    );
    // Every step is 1, 2, 2.5 or 5 x 10^k, and the ticks cover the data.
    for (lo, hi) in [
        (81.57, 93.2),
        (3.3, 1e6),
        (-0.002, 0.009),
        (87.35, 88.45),
        (0.0, 0.0),
    ] {
        let (step, ticks) = nice_ticks(lo, hi, 4, 6);
        let mantissa = step / 10f64.powf(step.log10().floor());
        assert!(
            [1.0, 2.0, 2.5, 5.0]
                .iter()
                .any(|m| (m - mantissa).abs() < 1e-9),
            "step {step}"
        );
        assert!(ticks[0] <= lo && *ticks.last().unwrap() >= hi, "{ticks:?}");
        assert!((2..=7).contains(&ticks.len()), "{ticks:?}");
    }
}

#[test]
fn no_tick_has_more_decimals_than_its_measure() {
    let f = usd();
    for measure in [
        Measure::Amount,
        Measure::Rate,
        Measure::PerSqFt,
        Measure::Pct,
        Measure::Count,
        Measure::Index,
    ] {
        for (lo, hi) in [
            (0.0, 0.3),
            (92.0, 92.4),
            (1.01, 1.04),
            (0.0, 3.0),
            (-1.0, 1.0),
        ] {
            let c = chart(
                measure,
                Kind::Line,
                vec!["a".into(), "b".into()],
                vec![Some(lo), Some(hi)],
            );
            for label in y_labels(&c.svg().into_string()) {
                let digits = label
                    .split('.')
                    .nth(1)
                    .map_or(0, |d| d.chars().take_while(char::is_ascii_digit).count());
                assert!(
                    digits as u32 <= f.decimals(measure),
                    "{measure:?} {lo}..{hi}: tick {label}"
                );
            }
        }
    }
}

#[test]
fn a_small_swing_is_drawn_as_small() {
    // Occupancy from 90 % to 92 %: the axis spans at least a fifth of the value, so the
    // swing fills about a tenth of the height, not all of it.
    let c = chart(
        Measure::Pct,
        Kind::Line,
        vec!["a".into(), "b".into()],
        vec![Some(90.0), Some(92.0)],
    );
    let (_, ticks) = c.range().unwrap();
    let span = ticks.last().unwrap() - ticks[0];
    assert!(span >= 0.2 * 92.0, "{ticks:?}");
    assert!(2.0 / span <= 0.12, "{ticks:?}");
    // Positive values never get a negative axis.
    let small = chart(
        Measure::Count,
        Kind::Line,
        vec!["a".into(), "b".into()],
        vec![Some(0.5), Some(1.0)],
    );
    assert!(small.range().unwrap().1[0] >= 0.0);
}

#[test]
fn the_drawn_axis_is_labelled_with_its_round_ticks() {
    let svg = year_chart().svg().into_string();
    // The year chart's values run from 80 to 91.68: its axis shows them on round ticks.
    let labels = y_labels(&svg);
    assert!(labels.contains(&"80\u{a0}%".to_owned()), "{labels:?}");
    assert!(labels.contains(&"90\u{a0}%".to_owned()), "{labels:?}");
}

#[test]
fn category_labels_never_overlap() {
    let names: Vec<String> = (0..12)
        .map(|i| format!("Harbor Self Storage of North Riverside {i}"))
        .collect();
    let c = chart(
        Measure::Amount,
        Kind::Bar,
        names.clone(),
        (0..12).map(|i| Some(f64::from(i) * 10.0)).collect(),
    );
    let svg = c.svg().into_string();
    let shown = labels_of(&svg, "x-label");
    assert!(!shown.is_empty());
    for w in shown.windows(2) {
        let (x0, a) = &w[0];
        let (x1, b) = &w[1];
        let half = |t: &str| t.chars().count() as f64 * 6.5 / 2.0;
        assert!(
            x0 + half(a) <= x1 - half(b),
            "{a:?} at {x0} runs into {b:?} at {x1}"
        );
    }
    // The whole name is kept as the label's tooltip.
    assert!(svg.contains(&format!("<title>{}</title>", names[0])));
}

#[test]
fn csv_holds_plain_figures_and_names_the_currency() {
    let f = usd();
    let mut t = Table::new("x", "x", &["name", "rate", "occupancy"]);
    t.row(cells!["Self, Storage \"A\"", f.rate(1234.5), f.pct(85.25)]);
    t.row(vec![Cell::text("B"), f.rate(None), f.pct(None)]);
    assert_eq!(t.rows[0][1].shown, "$1,234.50");
    assert_eq!(
        String::from_utf8(t.csv_bytes()).unwrap(),
        "name,rate (USD),occupancy\n\"Self, Storage \"\"A\"\"\",1234.50,85.3\nB,,\n"
    );
}

#[test]
fn category_labels_keep_the_part_that_tells_them_apart() {
    let labels = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        distinct_parts(&labels(&[
            "Demo Storage 0001",
            "Demo Storage 0002",
            "Demo Storage 0010"
        ])),
        labels(&["0001", "0002", "0010"])
    );
    assert_eq!(
        distinct_parts(&labels(&["North Self Storage", "South Self Storage"])),
        labels(&["North", "South"])
    );
    // Nothing in common, one word, a single label: kept whole.
    for kept in [
        labels(&["Elm Street", "Oak Avenue"]),
        labels(&["2026-10-01", "2026-10-02"]),
        labels(&["Demo Storage 0001"]),
        labels(&["Main", "Main Street"]),
    ] {
        assert_eq!(distinct_parts(&kept), kept);
    }
}
