use super::*;
use chrono::NaiveDate;

fn h(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn today() -> NaiveDate {
    "2026-11-22".parse().unwrap()
}

#[test]
fn headers_normalise() {
    assert_eq!(normalise_header(" Street Rate ($) "), "street_rate");
    assert_eq!(normalise_header("Occupancy %"), "occupancy_pct");
    assert_eq!(normalise_header("Move-Ins MTD"), "move_ins_mtd");
    assert_eq!(normalise_header("\u{feff}Unit Size"), "unit_size");
}

#[test]
fn kind_is_detected_from_the_columns() {
    let c = map_headers(&h(&["Unit Size", "Web Rate", "Occupancy %", "Notes"]), None).unwrap();
    assert_eq!(c.kind, UploadKind::UnitRates);
    assert_eq!(
        c.fields,
        vec![
            Some(Field::Size),
            Some(Field::StreetRate),
            Some(Field::OccupancyPct),
            None
        ]
    );
    assert_eq!(c.ignored, vec!["Notes"]);
    let c = map_headers(&h(&["Competitor Name", "Size", "Price", "Special"]), None).unwrap();
    assert_eq!(c.kind, UploadKind::CompetitorRates);
    assert!(map_headers(&h(&["foo", "bar"]), None)
        .unwrap_err()
        .contains("pass kind"));
}

#[test]
fn wrong_kind_and_missing_columns_are_reported() {
    let e = map_headers(
        &h(&["competitor", "size", "rate"]),
        Some(UploadKind::UnitRates),
    )
    .unwrap_err();
    assert!(e.contains("looks like competitor_rates"), "{e}");
    let e = map_headers(&h(&["size", "rate"]), Some(UploadKind::CompetitorRates)).unwrap_err();
    assert!(e.contains("missing: competitor"), "{e}");
    let e = map_headers(&h(&["size", "rate", "price"]), None).unwrap_err();
    assert!(e.contains("both mean street_rate"), "{e}");
}

#[test]
fn rows_are_checked_with_their_line() {
    let c = map_headers(&h(&["date", "size", "street_rate", "occupancy"]), None).unwrap();
    let ok = parse_row(
        &c,
        2,
        &["2026-11-20", "10x10", "$1,149.50", "91.5%"],
        None,
        today(),
    );
    let Ok(Row::Unit(r)) = ok else {
        panic!("{ok:?}")
    };
    assert_eq!((r.street_rate, r.occupancy_pct), (1149.5, Some(91.5)));
    let e = parse_row(&c, 3, &["2026-11-20", "10x10", "abc", ""], None, today()).unwrap_err();
    assert_eq!((e.line, e.field.as_deref()), (3, Some("street_rate")));
    let e = parse_row(&c, 4, &["2026-11-20", "10x10", "100", "140"], None, today()).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("occupancy_pct"));
    let e = parse_row(&c, 5, &["", "10x10", "100", ""], None, today()).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("date"));
    // The upload's date stands in for a missing date column.
    assert!(parse_row(&c, 6, &["", "10x10", "100", ""], Some(today()), today()).is_ok());
    let e = parse_row(&c, 7, &["2026-11-20", "ten", "100", ""], None, today()).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("size"));
}

#[test]
fn duplicates_within_a_date_name_the_first_line() {
    let c = map_headers(&h(&["date", "size", "street_rate"]), None).unwrap();
    let mut dup = DuplicateCheck::default();
    for (line, cells) in [
        (2, ["2026-11-20", "10x10", "1"]),
        (3, ["2026-11-21", "10x10", "1"]),
    ] {
        let Ok(Row::Unit(r)) = parse_row(&c, line, &cells, None, today()) else {
            panic!()
        };
        dup.check(&r).unwrap();
    }
    let Ok(Row::Unit(r)) = parse_row(&c, 4, &["2026-11-20", "10X10", "2"], None, today()) else {
        panic!()
    };
    assert!(dup.check(&r).unwrap_err().message.contains("line 2"));
}
