use super::*;
use crate::values::{Count, Text};

fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 22).unwrap()
}

#[test]
fn parses_a_full_payload_and_warns_about_unknown_fields() {
    let body = br#"{
        "facility": {"external_id": "F-1", "source_system": "sitelink", "name": "Elm St", "colour": "red"},
        "date": "2026-11-21",
        "occupancy_pct": 91.5,
        "move_ins": {"daily": 2, "mtd": 31, "target_monthly": 45},
        "move_outs": {"daily": 1, "mtd": 20},
        "unit_types": [{"size": "10X10", "tier": "climate", "street_rate": 129.999, "occupancy_pct": 93, "move_ins_mtd": 4, "extra": 1}],
        "promotions": [{"name": "First month free", "depth_pct": 100, "applies_to": "5x5"}],
        "competitor_rates": [{"competitor": "Public Storage", "size": "10x10", "rate": 139, "promo": null, "source_url": "https://example.com"}],
        "tenant_rents": [{"size": "10x10", "avg_rent": 118, "tenant_count": 40, "months_since_last_increase": 9, "original_rent": 99}],
        "leads": [{"channel": "web", "count": 4}]
    }"#;
    let parsed = parse(body, today()).unwrap();
    assert_eq!(parsed.payload.unit_types[0].size.to_string(), "10x10");
    assert_eq!(parsed.payload.unit_types[0].street_rate.get(), 130.0);
    assert_eq!(
        parsed.warnings,
        vec![
            "facility.colour: unknown field, ignored",
            "unit_types[0].extra: unknown field, ignored"
        ]
    );
}

#[test]
fn only_a_snapshot_that_cannot_be_placed_is_an_error() {
    let cases: &[(&[u8], &str)] = &[
        (br#"{}"#, "date: is required"),
        (br#"[]"#, "body: must be a JSON object"),
        (
            br#"{"date": "2026-02-30"}"#,
            "date: is not a real calendar date",
        ),
        (br#"{"date": ""}"#, "date: is required"),
        (
            br#"{"date": "2026-11-24"}"#,
            "date: 2026-11-24 is in the future",
        ),
        (br#"{"date": "2026-11-21"} x"#, "body: trailing characters"),
        (
            br#"{"date": "2026-11-21", "facility": "Elm"}"#,
            "facility: must be an object",
        ),
    ];
    for (body, want) in cases {
        let e = parse(body, today()).unwrap_err().to_string();
        assert!(e.contains(want), "{e} should contain {want}");
    }
}

#[test]
fn what_cannot_be_read_is_left_out_with_its_path_and_reason() {
    let body = br#"{
        "facility": {"name": "Elm St", "website_url": "not a url", "rentable_sqft": -5},
        "date": "2026-11-21",
        "occupancy_pct": 101,
        "move_ins": {"daily": 2, "mtd": 2.5, "target_monthly": 45},
        "unit_types": [
            {"size": "10x10", "street_rate": 129},
            {"size": "10", "street_rate": 99},
            {"size": "5x5", "street_rate": "cheap"},
            {"size": "10x10", "street_rate": 131},
            {"size": "5x10", "street_rate": 80, "occupancy_pct": 140},
            "5x5",
            {"size": "10x20", "street_rate": 200, "total_units": 3, "occupied_units": 4}
        ],
        "competitor_rates": [{"competitor": "A", "size": "10x10", "rate": -1}, {"competitor": "B", "size": "10x10", "rate": 140}],
        "leads": [{"channel": "web", "count": 1}, {"channel": "WEB", "count": 2}],
        "promotions": {"name": "not an array"}
    }"#;
    let p = parse(body, today()).unwrap();
    let pl = &p.payload;
    assert_eq!(
        pl.facility
            .as_ref()
            .unwrap()
            .name
            .as_ref()
            .unwrap()
            .as_str(),
        "Elm St"
    );
    assert!(pl.facility.as_ref().unwrap().website_url.is_none());
    assert!(pl.occupancy_pct.is_none());
    let mi = pl.move_ins.as_ref().unwrap();
    assert_eq!(
        (
            mi.daily.map(Count::get),
            mi.mtd,
            mi.target_monthly.map(Count::get)
        ),
        (Some(2), None, Some(45))
    );
    let units: Vec<(String, f64, Option<f64>)> = pl
        .unit_types
        .iter()
        .map(|u| {
            (
                u.size.to_string(),
                u.street_rate.get(),
                u.occupancy_pct.map(Percent::get),
            )
        })
        .collect();
    // The second 10x10 repeats the first; 5x10's occupancy is left out, not the unit type.
    assert_eq!(
        units,
        vec![
            ("10x10".to_owned(), 129.0, None),
            ("5x10".to_owned(), 80.0, None)
        ]
    );
    assert_eq!(pl.competitor_rates.len(), 1);
    assert_eq!(pl.competitor_rates[0].competitor.as_str(), "B");
    assert_eq!(pl.leads.len(), 1);
    assert!(pl.promotions.is_empty());
    let w = p.warnings.join("\n");
    for want in [
        "facility.website_url: ",
        "facility.rentable_sqft: ",
        "occupancy_pct: must be a percentage from 0 to 100, got 101; left out",
        "move_ins.mtd: ",
        "unit_types[1]: left out (unit_types[1].size: must be a size like 10x10",
        "unit_types[2]: left out (unit_types[2].street_rate: ",
        "unit_types[3]: left out (unit_types[3].size: size 10x10 with tier '' appears twice)",
        "unit_types[4].occupancy_pct: must be a percentage from 0 to 100, got 140; left out",
        "unit_types[5]: left out (unit_types[5]: must be an object, got a string)",
        "unit_types[6]: left out (unit_types[6].occupied_units: 4 is more than total_units 3)",
        "competitor_rates[0]: left out (competitor_rates[0].rate: ",
        "leads[1]: left out (leads[1].channel: 'WEB' appears twice)",
        "promotions: must be an array, got an object; left out",
    ] {
        assert!(w.contains(want), "missing {want:?} in:\n{w}");
    }
    // The normalised form matches the payload item for item.
    assert_eq!(p.normalized["unit_types"].as_array().unwrap().len(), 2);
    assert!(p.normalized.get("occupancy_pct").is_none());
    assert!(parse_exact(body, today()).is_err());
}

#[test]
fn what_is_clearly_meant_is_read_as_meant() {
    let body = br#"{
        "facility": {"name": "Elm St", "external_id": "", "address": "  "},
        "date": "2026-11-21",
        "occupancy_pct": "91.5%",
        "move_ins": {"daily": 2.0, "mtd": "31", "target_monthly": 45.0},
        "unit_types": [
            {"size": "10'x10'", "street_rate": "$1,299.00"},
            {"size": "10 X 10 CC", "street_rate": 150, "tier": ""},
            {"size": "5x10 Drive Up", "tier": "outdoor", "street_rate": 90}
        ],
        "competitor_rates": [
            {"competitor": "A", "size": "10x10", "rate": 140, "promo": true},
            {"competitor": "B", "size": "10x10", "rate": 141, "promo": false},
            {"competitor": "C", "size": "10X10 CC", "rate": "142", "promo": 50}
        ]
    }"#;
    let p = parse_exact(body, today()).unwrap();
    let pl = &p.payload;
    let f = pl.facility.as_ref().unwrap();
    assert!(f.external_id.is_none() && f.address.is_none());
    assert_eq!(pl.occupancy_pct.map(Percent::get), Some(91.5));
    let mi = pl.move_ins.as_ref().unwrap();
    assert_eq!(
        (mi.daily.map(Count::get), mi.mtd.map(Count::get)),
        (Some(2), Some(31))
    );
    let units: Vec<(String, String, f64)> = pl
        .unit_types
        .iter()
        .map(|u| {
            (
                u.size.to_string(),
                u.tier_str().to_owned(),
                u.street_rate.get(),
            )
        })
        .collect();
    assert_eq!(
        units,
        vec![
            ("10x10".to_owned(), String::new(), 1299.0),
            ("10x10".to_owned(), "CC".to_owned(), 150.0),
            ("5x10".to_owned(), "outdoor".to_owned(), 90.0),
        ]
    );
    let promos: Vec<Option<&str>> = pl
        .competitor_rates
        .iter()
        .map(|c| c.promo.as_ref().map(Text::as_str))
        .collect();
    assert_eq!(promos, vec![Some("promotion"), None, Some("50")]);
    assert_eq!(pl.competitor_rates[2].size.to_string(), "10x10");
    assert_eq!(pl.competitor_rates[2].rate.get(), 142.0);
    let w = p.warnings.join("\n");
    assert!(
        w.contains("unit_types[1].size: '10 X 10 CC' read as size 10x10 with tier 'CC'"),
        "{w}"
    );
    assert!(
        w.contains("unit_types[2].size: '5x10 Drive Up' read as size 5x10; 'Drive Up' ignored"),
        "{w}"
    );
    assert!(
        w.contains("competitor_rates[2].size: '10X10 CC' read as size 10x10; 'CC' ignored"),
        "{w}"
    );
}
