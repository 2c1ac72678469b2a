use e2e::{payload, spawn_app, status_json};
use serde_json::json;

#[tokio::test]
async fn first_push_creates_and_repeat_updates_without_duplicates() {
    let app = spawn_app().await;
    let body = payload("Elm Street", "2026-11-20", 20, 15, 20);

    let (status, first) = status_json(app.sync(&body).await).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["ok"], true);
    assert_eq!(first["idempotent"], "created");
    assert_eq!(first["facility"]["created"], true);
    assert_eq!(first["facility"]["name"], "Elm Street");
    assert_eq!(first["date"], "2026-11-20");
    assert_eq!(first["warnings"], json!([]));

    // The repeat carries fewer unit types: the record's rows are replaced, not appended.
    let repeat = payload("Elm Street", "2026-11-20", 5, 3, 2);
    let (status, second) = status_json(app.sync(&repeat).await).await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["idempotent"], "updated");
    assert_eq!(second["facility"]["created"], false);
    assert_eq!(second["facility"]["id"], first["facility"]["id"]);
    assert_eq!(second["sync_id"], first["sync_id"]);

    assert_eq!(app.count("facilities").await, 1);
    assert_eq!(app.count("sync_records").await, 1);
    assert_eq!(app.count("sync_unit_types").await, 5);
    assert_eq!(app.count("competitor_rates").await, 3);
    assert_eq!(app.count("sync_leads").await, 2);

    // Another date is another record of the same facility.
    let (_, third) = status_json(
        app.sync(&payload("Elm Street", "2026-11-21", 5, 3, 2))
            .await,
    )
    .await;
    assert_eq!(third["idempotent"], "created");
    assert_eq!(third["facility"]["created"], false);
    assert_eq!(app.count("sync_records").await, 2);
}

#[tokio::test]
async fn stored_record_holds_the_payload_and_derived_figures() {
    let app = spawn_app().await;
    // Two unit types with counts: 10x10 x 50 at 100 (45 occupied), 5x5 x 100 at 50 (80 occupied).
    // GPR = 50*100 + 100*50 = 10,000; no tenant rents, so actual rent is estimated as
    // 45*100 + 80*50 = 8,500; area derived as 50*100 + 100*25 = 7,500 sq ft.
    let body = json!({
        "facility": { "name": "Oak", "address": "1 Oak Rd", "colour": "blue" },
        "date": "2026-11-01",
        "occupancy_pct": 83.3,
        "move_ins": { "daily": 3, "mtd": 3, "target_monthly": 30 },
        "move_outs": { "daily": 1, "mtd": 1 },
        "unit_types": [
            { "size": "10X10", "tier": "climate", "street_rate": 100, "total_units": 50, "occupied_units": 45 },
            { "size": "5x5", "street_rate": 50, "total_units": 100, "occupied_units": 80, "note": "x" }
        ],
        "leads": [{ "channel": "Web", "count": 7 }]
    });
    let (status, res) = status_json(app.sync(&body).await).await;
    assert_eq!(status, 200, "{res}");
    assert_eq!(
        res["warnings"],
        json!([
            "facility.colour: unknown field, ignored",
            "unit_types[1].note: unknown field, ignored"
        ])
    );
    let row: (f64, i32, i32, i32, f64, f64, bool, f64, bool, i32, String) = sqlx::query_as(
        "SELECT occupancy_pct, move_ins_mtd, total_units, occupied_units, gross_potential_rent, actual_rent,
                actual_rent_estimated, rentable_sqft, rentable_sqft_estimated, leads_total, raw_payload->'facility'->>'colour'
         FROM sync_records",
    )
    .fetch_one(app.db())
    .await
    .unwrap();
    assert_eq!(
        row,
        (
            83.3,
            3,
            150,
            125,
            10_000.0,
            8_500.0,
            true,
            7_500.0,
            true,
            7,
            "blue".to_owned()
        )
    );
    let sizes: Vec<(String, String)> =
        sqlx::query_as("SELECT size, tier FROM sync_unit_types ORDER BY size")
            .fetch_all(app.db())
            .await
            .unwrap();
    assert_eq!(
        sizes,
        vec![
            ("10x10".into(), "climate".into()),
            ("5x5".into(), String::new())
        ]
    );
    let channel: String = sqlx::query_scalar("SELECT channel FROM sync_leads")
        .fetch_one(app.db())
        .await
        .unwrap();
    assert_eq!(channel, "web");
    let address: String = sqlx::query_scalar("SELECT address FROM facilities")
        .fetch_one(app.db())
        .await
        .unwrap();
    assert_eq!(address, "1 Oak Rd");
}

#[tokio::test]
async fn matching_follows_id_then_external_id_then_name() {
    let app = spawn_app().await;
    let (_, alpha) = status_json(
        app.post(
            "/api/v1/facilities",
            &json!({ "name": "Alpha", "external_id": "A-1", "source_system": "crm" }),
        )
        .await,
    )
    .await;
    let (_, beta) = status_json(
        app.post("/api/v1/facilities", &json!({ "name": "Beta" }))
            .await,
    )
    .await;
    let alpha_id = alpha["id"].as_str().unwrap().to_owned();
    let beta_id = beta["id"].as_str().unwrap().to_owned();
    let push =
        |facility: serde_json::Value, date: &str| json!({ "facility": facility, "date": date });

    // 1. id wins over external_id and name.
    let (s, r) = status_json(
        app.sync(&push(
            json!({ "id": alpha_id, "external_id": "X", "name": "Beta" }),
            "2026-11-01",
        ))
        .await,
    )
    .await;
    assert_eq!(
        (s, r["facility"]["id"].as_str()),
        (200, Some(alpha_id.as_str())),
        "{r}"
    );
    assert_eq!(r["facility"]["name"], "Alpha");

    // 2. external_id with source_system wins over name.
    let (_, r) = status_json(
        app.sync(&push(
            json!({ "external_id": "A-1", "source_system": "crm", "name": "Beta" }),
            "2026-11-02",
        ))
        .await,
    )
    .await;
    assert_eq!(r["facility"]["id"].as_str(), Some(alpha_id.as_str()), "{r}");

    // The same external_id in another source system is another facility's id: fall to name.
    let (_, r) = status_json(
        app.sync(&push(
            json!({ "external_id": "A-1", "source_system": "other", "name": "Beta" }),
            "2026-11-03",
        ))
        .await,
    )
    .await;
    assert_eq!(r["facility"]["id"].as_str(), Some(beta_id.as_str()), "{r}");

    // 3. name, case-insensitively.
    let (_, r) = status_json(
        app.sync(&push(json!({ "name": "  alpha " }), "2026-11-04"))
            .await,
    )
    .await;
    assert_eq!(r["facility"]["id"].as_str(), Some(alpha_id.as_str()), "{r}");
    assert_eq!(r["facility"]["created"], false);

    // Unknown everywhere, with a name: created, and its external id is matched from then on.
    let (_, r) = status_json(
        app.sync(&push(
            json!({ "name": "Gamma", "external_id": "G-1", "source_system": "crm" }),
            "2026-11-05",
        ))
        .await,
    )
    .await;
    assert_eq!(r["facility"]["created"], true, "{r}");
    let gamma_id = r["facility"]["id"].clone();
    let (_, r) = status_json(
        app.sync(&push(
            json!({ "external_id": "G-1", "source_system": "crm" }),
            "2026-11-06",
        ))
        .await,
    )
    .await;
    assert_eq!(r["facility"]["id"], gamma_id, "{r}");
    assert_eq!(r["facility"]["name"], "Gamma");
    assert_eq!(app.count("facilities").await, 3);

    // An explicit id that names nothing is a 404, never a creation.
    let (s, r) = status_json(
        app.sync(&push(
            json!({ "id": uuid::Uuid::new_v4(), "name": "Delta" }),
            "2026-11-07",
        ))
        .await,
    )
    .await;
    assert_eq!(s, 404, "{r}");
    assert!(r["error"].as_str().unwrap().contains("no facility"), "{r}");

    // Nothing to match and no name to create with: 422.
    let (s, r) = status_json(
        app.sync(&push(
            json!({ "external_id": "nope", "source_system": "crm" }),
            "2026-11-07",
        ))
        .await,
    )
    .await;
    assert_eq!(s, 422, "{r}");
    assert!(r["error"].as_str().unwrap().starts_with("facility:"), "{r}");
    let (s, _) = status_json(app.sync(&json!({ "date": "2026-11-07" })).await).await;
    assert_eq!(s, 422);
    assert_eq!(app.count("facilities").await, 3);
    assert_eq!(app.count("sync_records").await, 6);
}

#[tokio::test]
async fn another_companys_facility_id_is_not_found_on_sync() {
    let app = spawn_app().await;
    let other = app.create_tenant("Other Co").await;
    let r = app
        .req_as(&other, reqwest::Method::POST, "/api/v1/sync")
        .json(&json!({ "facility": { "name": "Theirs" }, "date": "2026-11-01" }))
        .send()
        .await
        .unwrap();
    let (_, theirs) = status_json(r).await;
    let (s, r) = status_json(
        app.sync(&json!({ "facility": { "id": theirs["facility"]["id"] }, "date": "2026-11-01" }))
            .await,
    )
    .await;
    assert_eq!(s, 404, "{r}");
    assert_eq!(app.count("sync_records").await, 1);
}

#[tokio::test]
async fn twenty_concurrent_pushes_of_one_facility_and_date_leave_one_record() {
    let app = spawn_app().await;
    let body = payload("Concurrent Storage", "2026-11-20", 20, 15, 20);
    let pushes = (0..20).map(|_| {
        let req = app.req(reqwest::Method::POST, "/api/v1/sync").json(&body);
        async move { status_json(req.send().await.unwrap()).await }
    });
    let results = futures::future::join_all(pushes).await;
    for (status, body) in &results {
        assert_eq!(*status, 200, "{body}");
    }
    let created = results
        .iter()
        .filter(|(_, b)| b["idempotent"] == "created")
        .count();
    let facility_created = results
        .iter()
        .filter(|(_, b)| b["facility"]["created"] == true)
        .count();
    assert_eq!(created, 1);
    assert_eq!(facility_created, 1);
    let ids: std::collections::HashSet<String> = results
        .iter()
        .map(|(_, b)| b["facility"]["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 1);
    assert_eq!(app.count("facilities").await, 1);
    assert_eq!(app.count("sync_records").await, 1);
    assert_eq!(app.count("sync_unit_types").await, 20);
    assert_eq!(app.count("competitor_rates").await, 15);
}
