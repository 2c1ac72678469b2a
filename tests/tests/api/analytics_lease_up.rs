//! `GET /api/v1/analytics/lease-up` end to end with a real worker: the interface's hysteresis
//! table, one event per change, the same history whatever the arrival order, and the engine's
//! aggressive-fill suggestions.

use e2e::{all_jobs_finished, get_ok, push_ok as push, spawn_app};
use serde_json::json;

#[tokio::test]
async fn analytics_lease_up_history_and_fill_in_any_arrival_order() {
    let app = spawn_app().await;
    // Occupancy 75, 55, 65, 69.9, 70, 59, 62 on consecutive days from Mar 1: enter lease-up at
    // 55 (Mar 2), leave at 70 (Mar 5), enter again at 59 (Mar 6); 65, 69.9 and 62 hold.
    // The last day carries 10x10 at 100 with competitors 80, 90, 100 (P25 = 80 + 10 x
    // (0.25 - 1/6) / (1/2 - 1/6) = 82.5): fill at P25 within [70 % x 100 = 70, 82.5], whole
    // currency: 82. 5x5 at 50 with one competitor at 30: P25 30 is below the floor 35: 35.
    let readings = [75.0, 55.0, 65.0, 69.9, 70.0, 59.0, 62.0];
    let day = |i: usize| {
        (chrono::NaiveDate::from_ymd_opt(2026, 3, 1).unwrap() + chrono::Duration::days(i as i64))
            .to_string()
    };
    let body = |name: &str, i: usize| {
        let mut b =
            json!({ "facility": { "name": name }, "date": day(i), "occupancy_pct": readings[i] });
        if i == 6 {
            b["unit_types"] = json!([{ "size": "10x10", "street_rate": 100 }, { "size": "5x5", "street_rate": 50 }]);
            b["competitor_rates"] = json!([
                { "competitor": "X", "size": "10x10", "rate": 80 },
                { "competitor": "Y", "size": "10x10", "rate": 90 },
                { "competitor": "Z", "size": "10x10", "rate": 100 },
                { "competitor": "X", "size": "5x5", "rate": 30 }
            ]);
        }
        b
    };
    for i in 0..7 {
        push(&app, body("In Order", i)).await;
    }
    for i in [6, 3, 0, 5, 1, 4, 2] {
        push(&app, body("Out Of Order", i)).await;
    }
    push(
        &app,
        json!({ "facility": { "name": "Steady" }, "date": day(6), "occupancy_pct": 91 }),
    )
    .await;
    // Every ingest (and the pricing runs they request) runs in arrival order.
    assert!(app.run_jobs().await >= 15);
    assert!(all_jobs_finished(app.db()).await);

    let res = get_ok(&app, "/api/v1/analytics/lease-up").await;
    assert_eq!(
        res["thresholds"],
        json!({ "enter_below_pct": 60.0, "leave_at_or_above_pct": 70.0 })
    );
    assert_eq!(res["facilities_in_lease_up"], 2);
    let want_events = [
        (day(1), "stabilized", "lease_up", 55.0),
        (day(4), "lease_up", "stabilized", 70.0),
        (day(5), "stabilized", "lease_up", 59.0),
    ];
    for name in ["In Order", "Out Of Order"] {
        let f = res["facilities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["facility_name"] == name)
            .unwrap();
        assert_eq!(f["mode"], "lease_up", "{name}");
        assert_eq!(f["occupancy_pct"], 62.0);
        let events: Vec<(String, &str, &str, f64)> = f["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["date"].as_str().unwrap().to_owned(),
                    e["from"].as_str().unwrap(),
                    e["to"].as_str().unwrap(),
                    e["occupancy_pct"].as_f64().unwrap(),
                )
            })
            .collect();
        let want: Vec<(String, &str, &str, f64)> = want_events
            .iter()
            .map(|(d, a, b, o)| (d.clone(), *a, *b, *o))
            .collect();
        assert_eq!(events, want, "{name}");
        let fills: Vec<(String, f64, f64, f64, bool)> = f["fill_suggestions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["size"].as_str().unwrap().to_owned(),
                    s["suggested_rate"].as_f64().unwrap(),
                    s["competitor_p25"].as_f64().unwrap(),
                    s["floor"].as_f64().unwrap(),
                    s["floor_applied"].as_bool().unwrap(),
                )
            })
            .collect();
        // The suggestion is the P25 less `lease_up_discount_pct` (3 % since engine
        // 2026.11.10): 82.50 x 0.97 = 80.03, rounded 80, above the floor of 70.
        assert_eq!(
            fills,
            vec![
                ("10x10".to_owned(), 80.0, 82.5, 70.0, false),
                ("5x5".to_owned(), 35.0, 30.0, 35.0, true)
            ],
            "{name}"
        );
        // Beside each suggestion, the engine's rate of the facility's latest run and why the
        // two differ, in words that match the figures.
        let id = f["facility_id"].as_str().unwrap();
        let runs = get_ok(
            &app,
            &format!("/api/v1/facilities/{id}/recommendation-runs"),
        )
        .await;
        let latest = &runs["runs"][0];
        let run = get_ok(
            &app,
            &format!(
                "/api/v1/facilities/{id}/recommendation-runs/{}",
                latest["recommendation_id"].as_str().unwrap()
            ),
        )
        .await;
        for s in f["fill_suggestions"].as_array().unwrap() {
            let size = s["size"].as_str().unwrap();
            let engine = run["recommendations"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["size"] == size)
                .unwrap()["recommended_rate"]
                .as_f64()
                .unwrap();
            assert_eq!(s["engine_rate"].as_f64(), Some(engine), "{name} {size}");
            let suggested = s["suggested_rate"].as_f64().unwrap();
            let note = s["engine_note"].as_str().unwrap();
            let want = if (engine - suggested).abs() < 1.0 {
                "agrees"
            } else if engine > suggested {
                "holds more"
            } else {
                "goes lower"
            };
            assert!(
                note.contains(want),
                "{name} {size}: {engine} vs {suggested}: {note}"
            );
        }
    }
    let steady = res["facilities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["facility_name"] == "Steady")
        .unwrap();
    assert_eq!(steady["mode"], "stabilized");
    assert_eq!(steady["events"], json!([]));
    assert_eq!(steady["fill_suggestions"], json!([]));
    assert!(steady["reason"]
        .as_str()
        .unwrap()
        .contains("not in lease-up"));

    let id = steady["facility_id"].as_str().unwrap();
    let one = get_ok(
        &app,
        &format!("/api/v1/analytics/lease-up?facility_id={id}"),
    )
    .await;
    assert_eq!(one["facilities"].as_array().unwrap().len(), 1);
    assert_eq!(one["facilities_in_lease_up"], 0);
}
