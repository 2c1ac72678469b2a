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
    app.run_jobs().await;
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
    app.run_jobs().await;
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

    // An id that names nothing falls through to the other fields, with a warning: here the
    // name, which creates the facility.
    let unknown = uuid::Uuid::new_v4();
    let (s, r) = status_json(
        app.sync(&push(
            json!({ "id": unknown, "name": "Delta" }),
            "2026-11-07",
        ))
        .await,
    )
    .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["facility"]["created"], true, "{r}");
    assert_eq!(
        r["warnings"][0],
        format!("facility.id: no facility has the id {unknown}; a new facility was created from the name")
    );
    // ... and here the external id, which matches Gamma.
    let (s, r) = status_json(
        app.sync(&push(
            json!({ "id": unknown, "external_id": "G-1", "source_system": "crm" }),
            "2026-11-08",
        ))
        .await,
    )
    .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["facility"]["id"], gamma_id, "{r}");
    assert!(
        r["warnings"][0]
            .as_str()
            .unwrap()
            .contains("matched by external_id or name instead"),
        "{r}"
    );
    // An id alone that names nothing is a 404, never a creation.
    let (s, r) = status_json(
        app.sync(&push(json!({ "id": unknown }), "2026-11-09"))
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
    // Delta was created from its name; Gamma got one more day.
    assert_eq!(app.count("facilities").await, 4);
    assert_eq!(app.count("sync_records").await, 8);
    app.run_jobs().await;
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
    app.run_jobs().await;
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
    app.run_jobs().await;
}

/// size, tier, street_rate, total_units, occupied_units of a stored unit type.
type StoredUnit = (String, String, f64, Option<i32>, Option<i32>);

#[tokio::test]
async fn a_crm_shaped_payload_is_stored_as_meant_and_its_odd_item_is_named() {
    let app = spawn_app().await;
    let body = json!({
        "facility": { "name": "Maple", "external_id": "", "website_url": "" },
        "date": "2026-11-10",
        "occupancy_pct": "88.5%",
        "move_ins": { "daily": 2.0, "mtd": "14", "target_monthly": 30.0 },
        "unit_types": [
            { "size": "10'x10'", "street_rate": "$129.00", "total_units": 40.0, "occupied_units": "36" },
            { "size": "10 X 10 CC", "street_rate": 155, "tier": "" },
            { "size": "5x10", "street_rate": "call us" },
            { "size": "10x20", "tier": "Drive Up", "street_rate": 210.5 }
        ],
        "competitor_rates": [
            { "competitor": "A", "size": "10X10", "rate": "139", "promo": true },
            { "competitor": "B", "size": "10x10 CC", "rate": 160, "promo": false },
            { "competitor": "C", "size": "10x10", "rate": 141, "promo": 50 }
        ]
    });
    let (s, r) = status_json(app.sync(&body).await).await;
    assert_eq!(s, 200, "{r}");
    let warnings: Vec<String> = serde_json::from_value(r["warnings"].clone()).unwrap();
    assert_eq!(
        warnings,
        vec![
            "competitor_rates[1].size: '10x10 CC' read as size 10x10; 'CC' ignored".to_owned(),
            "unit_types[1].size: '10 X 10 CC' read as size 10x10 with tier 'CC'".to_owned(),
            "unit_types[2]: left out (unit_types[2].street_rate: invalid type: string \"call us\", expected f64)".to_owned(),
        ]
    );
    let sync_id = r["sync_id"].as_str().unwrap();
    let units: Vec<StoredUnit> = sqlx::query_as(
        "SELECT size, tier, street_rate, total_units, occupied_units FROM sync_unit_types
         WHERE sync_id = $1::uuid ORDER BY size, tier",
    )
    .bind(sync_id)
    .fetch_all(app.db())
    .await
    .unwrap();
    assert_eq!(
        units,
        vec![
            ("10x10".to_owned(), String::new(), 129.0, Some(40), Some(36)),
            ("10x10".to_owned(), "CC".to_owned(), 155.0, None, None),
            ("10x20".to_owned(), "Drive Up".to_owned(), 210.5, None, None),
        ]
    );
    let (occupancy, mtd): (Option<f64>, Option<i32>) =
        sqlx::query_as("SELECT occupancy_pct, move_ins_mtd FROM sync_records WHERE id = $1::uuid")
            .bind(sync_id)
            .fetch_one(app.db())
            .await
            .unwrap();
    assert_eq!((occupancy, mtd), (Some(88.5), Some(14)));
    let rates: Vec<(String, String, f64, Option<String>)> = sqlx::query_as(
        "SELECT competitor, size, rate, promo FROM competitor_rates WHERE sync_id = $1::uuid
         ORDER BY competitor",
    )
    .bind(sync_id)
    .fetch_all(app.db())
    .await
    .unwrap();
    assert_eq!(
        rates,
        vec![
            (
                "A".to_owned(),
                "10x10".to_owned(),
                139.0,
                Some("promotion".to_owned())
            ),
            ("B".to_owned(), "10x10".to_owned(), 160.0, None),
            (
                "C".to_owned(),
                "10x10".to_owned(),
                141.0,
                Some("50".to_owned())
            ),
        ]
    );
    // The raw payload is kept as it was sent.
    let raw: serde_json::Value =
        sqlx::query_scalar("SELECT raw_payload FROM sync_records WHERE id = $1::uuid")
            .bind(sync_id)
            .fetch_one(app.db())
            .await
            .unwrap();
    assert_eq!(raw, body);
    app.run_jobs().await;
}
