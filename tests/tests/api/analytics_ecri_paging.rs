//! `GET /api/v1/analytics/ecri` pages the company's facilities the largest expected gain
//! first (then by name and id; a facility without a run last), with an opaque cursor that
//! walks every facility once; a facility id, the cursor of the report's first versions, is
//! still taken.

use super::ecri_batches::sync;
use chrono::{Duration, Utc};
use e2e::{get_ok, spawn_app, status_json};
use serde_json::{json, Value};

fn snapshot(name: &str, tenants: usize) -> Value {
    let date = (Utc::now().date_naive() - Duration::days(3)).to_string();
    let roll: Vec<Value> = (0..tenants)
        .map(|i| {
            json!({"tenant_id": format!("T-{i:02}"), "size": "10x10", "rent": 100.0 + i as f64,
                   "move_in_date": "2024-03-01"})
        })
        .collect();
    json!({
        "facility": {"name": name},
        "date": date,
        "unit_types": [
            {"size": "10x10", "tier": "standard", "street_rate": 140, "total_units": 60, "occupied_units": 57}
        ],
        "tenants": roll
    })
}

fn gain(f: &Value) -> f64 {
    f["totals"]["expected_gain"].as_f64().unwrap()
}

#[tokio::test]
async fn facilities_come_largest_expected_gain_first_and_the_cursor_walks_each_once() {
    let app = spawn_app().await;
    // Bravo and Delta have the same roll, so the same gain: their names order them.
    for (name, tenants) in [
        ("Alpha", 2),
        ("Delta", 8),
        ("Charlie", 4),
        ("Bravo", 8),
        ("Echo", 6),
    ] {
        let id = sync(&app, &snapshot(name, tenants)).await;
        app.ecri_now(&id).await;
    }
    // A facility without a sync has no run: it comes last, whatever its name.
    let empty = app.create_facility("Aardvark").await;

    let all = get_ok(&app, "/api/v1/analytics/ecri").await;
    assert_eq!(all["next_cursor"], Value::Null);
    let names: Vec<&str> = all["facilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["facility_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["Bravo", "Delta", "Echo", "Charlie", "Alpha", "Aardvark"],
        "{all}"
    );
    let facilities = all["facilities"].as_array().unwrap();
    for pair in facilities[..5].windows(2) {
        assert!(gain(&pair[0]) >= gain(&pair[1]), "{pair:?}");
    }
    assert!(gain(&facilities[2]) > gain(&facilities[3]));
    assert_eq!(gain(&facilities[0]), gain(&facilities[1]));
    assert_eq!(facilities[5]["facility_id"], empty.as_str());
    assert_eq!(facilities[5]["run"], Value::Null);

    // Two at a time: the same order, every facility once, the totals of every page alike.
    let mut walked = Vec::new();
    let mut cursors = Vec::new();
    let mut path = "/api/v1/analytics/ecri?limit=2".to_owned();
    loop {
        let page = get_ok(&app, &path).await;
        assert_eq!(page["totals"], all["totals"]);
        walked.extend(page["facilities"].as_array().unwrap().iter().cloned());
        let Some(cursor) = page["next_cursor"].as_str() else {
            break;
        };
        assert!(uuid::Uuid::parse_str(cursor).is_err(), "opaque: {cursor}");
        cursors.push(cursor.to_owned());
        path = format!("/api/v1/analytics/ecri?limit=2&cursor={cursor}");
    }
    assert_eq!(cursors.len(), 2);
    assert_eq!(&walked, facilities);

    // An old-style cursor, a facility's id: the page starts after that facility.
    let second = facilities[1]["facility_id"].as_str().unwrap();
    let page = get_ok(
        &app,
        &format!("/api/v1/analytics/ecri?limit=2&cursor={second}"),
    )
    .await;
    assert_eq!(page["facilities"].as_array().unwrap(), &facilities[2..4]);
    assert_eq!(page["next_cursor"].as_str(), Some(cursors[1].as_str()));

    for bad in ["nonsense", "e30", &uuid::Uuid::new_v4().to_string()] {
        let (s, e) = status_json(
            app.get(&format!("/api/v1/analytics/ecri?cursor={bad}"))
                .await,
        )
        .await;
        assert_eq!(s, 422, "{bad}: {e}");
        assert!(e["error"].as_str().unwrap().contains("cursor"), "{e}");
    }
    app.run_jobs().await;
}
