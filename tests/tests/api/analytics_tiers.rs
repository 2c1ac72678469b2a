//! The tiers of a size banded on their own competitor sets outside the engine's run too: the
//! facility history chart's bands, the portfolio's "street rate above the competitor P75" flag
//! and lease-up fill suggestions, through the real server. A facility whose competitor rates
//! name no tier reads as before: one band of the size's whole set, at the size's street rate.
//!
//! Every facility below: a snapshot of 2026-10-31 at 80 % and one of 2026-11-20 at 50 %
//! (occupancy falling, into lease-up), the latter with a 10x20 climate unit type at 340 and a
//! drive-up one at 200, 40 units each (the size's street rate 270). Competitors: climate at
//! 300, 320, 340, 360 (P25 310, median 330, P75 350) and drive-up at 140, 160, 180, 200 (P25
//! 150, median 170, P75 190). The eight as one set: P25 170, median 250, P75 330 (Hazen
//! positions (i - 1/2) / 8).

use crate::pricing_tiers::{rates, tier as rec};
use e2e::{get_ok, push_ok, spawn_app};
use serde_json::{json, Value};

const CLIMATE: [f64; 4] = [300.0, 320.0, 340.0, 360.0];
const DRIVE_UP: [f64; 4] = [140.0, 160.0, 180.0, 200.0];

/// Pushes both snapshots of a facility and runs the jobs (ingest, lease-up, pricing runs);
/// its id.
async fn facility(app: &e2e::TestApp, name: &str, competitor_rates: Vec<Value>) -> String {
    push_ok(
        app,
        json!({ "facility": { "name": name }, "date": "2026-10-31", "occupancy_pct": 80 }),
    )
    .await;
    let out = push_ok(
        app,
        json!({
            "facility": { "name": name }, "date": "2026-11-20", "occupancy_pct": 50,
            "unit_types": [
                { "size": "10x20", "tier": "climate", "street_rate": 340, "occupancy_pct": 50,
                  "total_units": 40 },
                { "size": "10x20", "tier": "drive-up", "street_rate": 200, "occupancy_pct": 50,
                  "total_units": 40 },
            ],
            "competitor_rates": competitor_rates,
        }),
    )
    .await;
    app.run_jobs().await;
    out["facility"]["id"].as_str().unwrap().to_owned()
}

fn by_name<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["facilities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["facility_name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {list}"))
}

/// The portfolio's "street above P75" flag of a facility: (threshold, value, detail).
fn p75_flag(portfolio: &Value, name: &str) -> Option<(f64, f64, String)> {
    by_name(portfolio, name)["flags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["flag"] == "street_above_p75_while_occupancy_falls")
        .map(|f| {
            (
                f["threshold"].as_f64().unwrap(),
                f["value"].as_f64().unwrap(),
                f["detail"].as_str().unwrap().to_owned(),
            )
        })
}

/// A facility's fill suggestions: (tier, set source, street, P25, floor, suggested, floor applied).
type FillRow = (Value, Value, f64, f64, f64, f64, bool);

fn fills(lease_up: &Value, name: &str) -> Vec<FillRow> {
    by_name(lease_up, name)["fill_suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert_eq!(s["size"], "10x20");
            (
                s["tier"].clone(),
                s["competitor_set_source"].clone(),
                s["street_rate"].as_f64().unwrap(),
                s["competitor_p25"].as_f64().unwrap(),
                s["floor"].as_f64().unwrap(),
                s["suggested_rate"].as_f64().unwrap(),
                s["floor_applied"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// The facility's latest run.
async fn run(app: &e2e::TestApp, id: &str) -> Value {
    get_ok(
        app,
        &format!("/api/v1/facilities/{id}/recommendations?regenerate=0"),
    )
    .await
}

/// The history's band series: (tier, last point).
async fn bands(app: &e2e::TestApp, id: &str) -> Vec<(Value, Value)> {
    let h = get_ok(app, &format!("/api/v1/facilities/{id}/history?days=30")).await;
    h["competitor_bands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            assert_eq!(b["size"], "10x20");
            let points = b["points"].as_array().unwrap();
            // Only the last day has competitor rates.
            assert_eq!(points.len(), 1, "{h}");
            (b["tier"].clone(), points[0].clone())
        })
        .collect()
}

fn figures(point: &Value) -> (f64, f64, f64, u64) {
    (
        point["p25"].as_f64().unwrap(),
        point["median"].as_f64().unwrap(),
        point["p75"].as_f64().unwrap(),
        point["competitors"].as_u64().unwrap(),
    )
}

#[tokio::test]
async fn the_history_the_p75_flag_and_lease_up_band_each_tier_on_its_own_set() {
    let app = spawn_app().await;
    let mut comps = rates(Some("Climate"), "C", &CLIMATE);
    comps.extend(rates(Some("drive-up"), "D", &DRIVE_UP));
    let tiers = facility(&app, "Tiers", comps).await;
    let plain = facility(&app, "Plain", {
        let mut c = rates(None, "C", &CLIMATE);
        c.extend(rates(None, "D", &DRIVE_UP));
        c
    })
    .await;

    // History: one band per tier, each the band the engine priced that tier with; climate's
    // is its own set (median 330), not the mixed set's 250.
    let run_tiers = run(&app, &tiers).await;
    let series = bands(&app, &tiers).await;
    assert_eq!(
        series.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>(),
        vec![json!("climate"), json!("drive-up")]
    );
    assert_eq!(figures(&series[0].1), (310.0, 330.0, 350.0, 4));
    assert_eq!(figures(&series[1].1), (150.0, 170.0, 190.0, 4));
    for (tier, point) in &series {
        let r = rec(&run_tiers, tier.as_str().unwrap());
        assert_eq!(r["competitor_set"]["source"], "tier");
        for key in ["p25", "median", "p75", "competitors"] {
            assert_eq!(point[key], r["competitor_band"][key], "{tier} {key}");
        }
    }
    // Without tier names: one band of the whole set, as before.
    let series = bands(&app, &plain).await;
    assert_eq!(series.len(), 1);
    assert_eq!(series[0].0, Value::Null);
    assert_eq!(figures(&series[0].1), (170.0, 250.0, 330.0, 8));

    // Portfolio: drive-up at 200 is above its own P75 (190); climate at 340 is under its own
    // (350), where the mixed set's 330 would have flagged it. Without tiers the size's 270 is
    // under the whole set's 330: no flag, as before.
    let portfolio = get_ok(&app, "/api/v1/analytics/portfolio").await;
    let (threshold, value, detail) = p75_flag(&portfolio, "Tiers").expect("the P75 flag");
    assert_eq!((threshold, value), (190.0, 200.0));
    assert!(
        detail.contains("for drive-up 10x20 while") && !detail.contains("climate"),
        "{detail}"
    );
    assert_eq!(p75_flag(&portfolio, "Plain"), None);

    // Lease-up (3 % under the P25 since engine 2026.11.10): climate from its own P25 310 less
    // 3 %: 300.70, 301 (floor 70 % of 340, 238); drive-up from 150 less 3 %: 145.50, 146 (floor
    // 140). Without tiers, one suggestion for the size: the whole set's P25 170 less 3 %
    // (164.90) is under the floor of 70 % of 270 (189).
    let lease_up = get_ok(&app, "/api/v1/analytics/lease-up").await;
    assert_eq!(
        fills(&lease_up, "Tiers"),
        vec![
            (
                json!("climate"),
                json!("tier"),
                340.0,
                310.0,
                238.0,
                301.0,
                false
            ),
            (
                json!("drive-up"),
                json!("tier"),
                200.0,
                150.0,
                140.0,
                146.0,
                false
            ),
        ]
    );
    assert_eq!(
        fills(&lease_up, "Plain"),
        vec![(Value::Null, Value::Null, 270.0, 170.0, 189.0, 189.0, true)]
    );
    // Beside a unit type's suggestion, the engine's rate of that unit type; beside the size's,
    // the mean of its tiers'.
    let engine = |f: &Value, i: usize| f["fill_suggestions"][i]["engine_rate"].as_f64();
    let t = by_name(&lease_up, "Tiers");
    assert_eq!(
        (engine(t, 0), engine(t, 1)),
        (
            rec(&run_tiers, "climate")["recommended_rate"].as_f64(),
            rec(&run_tiers, "drive-up")["recommended_rate"].as_f64()
        )
    );
    let run_plain = run(&app, &plain).await;
    let mean = (rec(&run_plain, "climate")["recommended_rate"]
        .as_f64()
        .unwrap()
        + rec(&run_plain, "drive-up")["recommended_rate"]
            .as_f64()
            .unwrap())
        / 2.0;
    assert_eq!(
        engine(by_name(&lease_up, "Plain"), 0),
        Some((mean * 100.0).round() / 100.0)
    );
}

#[tokio::test]
async fn a_tier_without_competitors_of_its_own_is_banded_on_the_converted_size_set() {
    let app = spawn_app().await;
    // Only drive-up competitors. The facility prices climate at 340 over drive-up at 200, a
    // premium of 70 %: climate is banded on the drive-up rates times 1.7 (238, 272, 306, 340:
    // P25 255, median 289, P75 323), as the engine bands it; its 340 is above that P75.
    let id = facility(&app, "Fallback", rates(Some("drive-up"), "D", &DRIVE_UP)).await;
    let run = run(&app, &id).await;
    let series = bands(&app, &id).await;
    assert_eq!(series[0].0, "climate");
    let point = &series[0].1;
    let climate = rec(&run, "climate");
    assert_eq!(climate["competitor_set"]["source"], "size_adjusted");
    for key in ["p25", "median", "p75", "competitors"] {
        assert_eq!(point[key], climate["competitor_band"][key], "{key}");
    }
    let (p25, median, p75, _) = figures(point);
    for (got, want) in [(p25, 255.0), (median, 289.0), (p75, 323.0)] {
        assert!((got - want).abs() < 0.01, "{point}");
    }

    // Both unit types are above their P75 by the same share (340 / 323 = 200 / 190: the
    // converted band scales with the premium), each named with its tier.
    let portfolio = get_ok(&app, "/api/v1/analytics/portfolio").await;
    let (_, _, detail) = p75_flag(&portfolio, "Fallback").expect("the P75 flag");
    assert!(
        detail.contains("for climate 10x20, drive-up 10x20 while"),
        "{detail}"
    );

    let lease_up = get_ok(&app, "/api/v1/analytics/lease-up").await;
    let f = fills(&lease_up, "Fallback");
    assert_eq!(
        (f[0].0.clone(), f[0].1.clone()),
        (json!("climate"), json!("size_adjusted"))
    );
    assert!((f[0].3 - 255.0).abs() < 0.01, "{f:?}");
}
