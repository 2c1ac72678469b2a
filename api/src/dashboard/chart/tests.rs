use super::*;

fn year_chart() -> Chart {
    let labels: Vec<String> = (0..365).map(|d| format!("2026-{:03}", d)).collect();
    let values = (0..365)
        .map(|d| Some(80.0 + f64::from(d % 17) * 0.73))
        .collect();
    Chart {
        id: "occupancy".into(),
        title: "Occupancy".into(),
        unit: "%".into(),
        labels,
        series: vec![Series::new("Occupancy", Kind::Line, values)],
        from_zero: false,
    }
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
    let c = Chart {
        id: "b".into(),
        title: "Bars".into(),
        unit: "".into(),
        labels: vec!["a".into(), "b".into()],
        series: vec![Series::new("x", Kind::Bar, vec![Some(5.0), Some(10.0)])],
        from_zero: false,
    };
    assert_eq!(c.range().unwrap().1[0], 0.0);
    assert_eq!(c.svg().into_string().matches("<rect x=").count(), 2);
}

#[test]
fn the_table_view_holds_every_point() {
    let t = year_chart().table("occupancy-table");
    assert_eq!(t.rows.len(), 365);
    assert_eq!(t.headers, vec!["Point", "Occupancy (%)"]);
    assert_eq!(t.rows[3], vec!["2026-003".to_owned(), "82.19".to_owned()]);
}

#[test]
fn ticks_fall_on_round_steps() {
    let labels = |lo, hi| {
        let (step, ticks) = nice_ticks(lo, hi, 4);
        ticks.iter().map(|v| tick(*v, step)).collect::<Vec<_>>()
    };
    // An occupancy axis: 81.57 to 93.2 reads 80, 85, 90, 95.
    assert_eq!(labels(81.57, 93.2), ["80", "85", "90", "95"]);
    assert_eq!(labels(0.0, 1234.0), ["0", "500", "1000", "1500"]);
    assert_eq!(labels(0.0, 9.0), ["0", "2.5", "5", "7.5", "10"]);
    assert_eq!(
        labels(0.47, 0.474),
        ["0.47", "0.471", "0.472", "0.473", "0.474"]
    );
    assert_eq!(labels(-3.0, 7.0), ["-5", "-2.5", "0", "2.5", "5", "7.5"]);
    assert_eq!(labels(0.1, 0.7), ["0", "0.2", "0.4", "0.6", "0.8"]);
    // A flat series still gets an axis of its own.
    assert_eq!(labels(42.0, 42.0), ["42", "42.25", "42.5", "42.75", "43"]);
    // Every step is 1, 2, 2.5 or 5 x 10^k, and the ticks cover the data.
    for (lo, hi) in [
        (81.57, 93.2),
        (3.3, 1e6),
        (-0.002, 0.009),
        (87.35, 88.45),
        (0.0, 0.0),
    ] {
        let (step, ticks) = nice_ticks(lo, hi, 4);
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
fn the_drawn_axis_is_labelled_with_its_round_ticks() {
    let svg = year_chart().svg().into_string();
    // The year chart's values run from 80 to 91.68.
    for label in [">80<", ">85<", ">90<", ">95<"] {
        assert!(svg.contains(label), "{label} missing");
    }
}

#[test]
fn numbers_read_plainly_and_csv_quotes_what_it_must() {
    assert_eq!(num(12.0), "12");
    assert_eq!(num(12.345), "12.35");
    assert_eq!(num(-0.001), "0");
    let mut t = Table::new("x", "x", &["name", "rate"]);
    t.row(vec!["Self, Storage \"A\"".into(), "12.5".into()]);
    assert_eq!(
        String::from_utf8(t.csv_bytes()).unwrap(),
        "name,rate\n\"Self, Storage \"\"A\"\"\",12.5\n"
    );
}
