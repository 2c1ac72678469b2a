//! Uploads of unit rates and competitor rates, as CSV and JSON, through the real server.

use e2e::{spawn_app, status_json};
use reqwest::Method;
use serde_json::{json, Value};

async fn upload_csv(app: &e2e::TestApp, id: &str, query: &str, csv: &str) -> (u16, Value) {
    status_json(
        app.req(
            Method::POST,
            &format!("/api/v1/facilities/{id}/upload{query}"),
        )
        .header("content-type", "text/csv")
        .body(csv.to_owned())
        .send()
        .await
        .unwrap(),
    )
    .await
}

/// The stored unit types of a facility, without ids: (date, size, tier, rate, occupancy,
/// move-ins, total, occupied).
async fn unit_rows(
    app: &e2e::TestApp,
    id: &str,
) -> Vec<(
    String,
    String,
    String,
    f64,
    Option<f64>,
    Option<i32>,
    Option<i32>,
    Option<i32>,
)> {
    sqlx::query_as(
        "SELECT snapshot_date::text, size, tier, street_rate, occupancy_pct, move_ins_mtd, total_units,
                occupied_units
         FROM sync_unit_types WHERE facility_id = $1::uuid ORDER BY snapshot_date, size, tier",
    )
    .bind(id)
    .fetch_all(app.db())
    .await
    .unwrap()
}

/// Facility-level figures of a facility's records: (date, source, total units, occupied,
/// gross potential rent).
async fn records(
    app: &e2e::TestApp,
    id: &str,
) -> Vec<(String, String, Option<i32>, Option<i32>, Option<f64>)> {
    sqlx::query_as(
        "SELECT snapshot_date::text, source, total_units, occupied_units, gross_potential_rent
         FROM sync_records WHERE facility_id = $1::uuid ORDER BY snapshot_date",
    )
    .bind(id)
    .fetch_all(app.db())
    .await
    .unwrap()
}

#[tokio::test]
async fn an_uploaded_day_is_the_record_a_push_of_that_day_makes() {
    let app = spawn_app().await;
    let uploaded = app.create_facility("Uploaded").await;
    let pushed = app.create_facility("Pushed").await;
    let csv = "date,size,tier,street_rate,occupancy_pct,move_ins_mtd,total_units,occupied_units\n\
               2026-11-20,10x10,climate,149,91.5,6,120,110\n\
               2026-11-20,5x5,,55,80,2,40,32\n\
               2026-11-21,10x10,climate,152,92,7,120,111\n";
    let (s, body) = upload_csv(&app, &uploaded, "", csv).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["kind"], "unit_rates");
    assert_eq!(body["rows"], 3);
    assert_eq!(body["snapshots"].as_array().unwrap().len(), 2);
    for (date, unit_types) in [
        (
            "2026-11-20",
            json!([
            {"size": "10x10", "tier": "climate", "street_rate": 149, "occupancy_pct": 91.5, "move_ins_mtd": 6, "total_units": 120, "occupied_units": 110},
            {"size": "5x5", "street_rate": 55, "occupancy_pct": 80, "move_ins_mtd": 2, "total_units": 40, "occupied_units": 32}]),
        ),
        (
            "2026-11-21",
            json!([
            {"size": "10x10", "tier": "climate", "street_rate": 152, "occupancy_pct": 92, "move_ins_mtd": 7, "total_units": 120, "occupied_units": 111}]),
        ),
    ] {
        let (s, body) = status_json(
            app.sync(&json!({"facility": {"id": pushed}, "date": date, "unit_types": unit_types}))
                .await,
        )
        .await;
        assert_eq!(s, 200, "{body}");
    }
    let up = unit_rows(&app, &uploaded).await;
    assert_eq!(up.len(), 3);
    assert_eq!(up, unit_rows(&app, &pushed).await);
    let (rec_up, rec_push) = (records(&app, &uploaded).await, records(&app, &pushed).await);
    // Same derived figures; only the source differs.
    assert_eq!(rec_up.len(), 2);
    for (u, p) in rec_up.iter().zip(&rec_push) {
        assert_eq!((u.1.as_str(), p.1.as_str()), ("upload", "push"));
        assert_eq!((&u.0, u.2, u.3, u.4), (&p.0, p.2, p.3, p.4));
    }
    // 2026-11-20: 120 x 149 + 40 x 55 = 20,080 gross potential rent.
    assert_eq!(rec_up[0].4, Some(20_080.0));
    // An ingest job was recorded per uploaded day.
    let jobs: i64 = sqlx::query_scalar("SELECT count(*) FROM job_runs WHERE kind = 'ingest'")
        .fetch_one(app.db())
        .await
        .unwrap();
    assert_eq!(jobs, 4);
    app.run_jobs().await;
}

#[tokio::test]
async fn crm_header_spellings_are_understood() {
    let app = spawn_app().await;
    let a = app.create_facility("Standard headers").await;
    let b = app.create_facility("Export headers").await;
    let standard = "size,tier,street_rate,occupancy_pct,total_units,occupied_units\n\
                    10x10,climate,149,91.5,120,110\n";
    // The same data as a CRM might export it: other names, case, symbols, a byte-order mark,
    // money with a currency sign and thousands separator, a percent sign, an extra column.
    let export = "\u{feff}Unit Size,Unit Type,Web Rate ($),Occupancy %,Units,Rented,Notes\n\
                  10x10,climate,\"$1,149.00\",91.5%,120,110,corner unit\n";
    let (s, body) = upload_csv(&app, &a, "?date=2026-11-20", standard).await;
    assert_eq!(s, 200, "{body}");
    let (s, body) = upload_csv(&app, &b, "?date=2026-11-20", export).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(
        body["warnings"][0],
        "column 'Notes' is not used for unit_rates and was ignored"
    );
    let (ra, rb) = (unit_rows(&app, &a).await, unit_rows(&app, &b).await);
    assert_eq!(rb.len(), 1);
    assert_eq!(rb[0].3, 1149.0);
    assert_eq!(
        (&ra[0].0, &ra[0].1, &ra[0].2, ra[0].4, ra[0].6, ra[0].7),
        (&rb[0].0, &rb[0].1, &rb[0].2, rb[0].4, rb[0].6, rb[0].7)
    );
    app.run_jobs().await;
}

#[tokio::test]
async fn competitor_rates_upload_as_csv_and_json_with_the_kind_detected() {
    let app = spawn_app().await;
    let id = app.create_facility("Main").await;
    let csv = "Observed On,Competitor Name,Size,Price,Special,URL\n\
               2026-11-20,Public Storage,10x10,139,First month free,https://example.com/ps\n\
               2026-11-20,Extra Space,10x10,145,,\n\
               2026-11-20,CubeSmart,5x5,60,,\n";
    let (s, body) = upload_csv(&app, &id, "", csv).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["kind"], "competitor_rates");
    assert_eq!(
        (body["inserted"].as_u64(), body["updated"].as_u64()),
        (Some(3), Some(0))
    );
    let json_body = json!({ "kind": "competitor_rates", "rows": [
        {"observed_on": "2026-11-20", "competitor": "Public Storage", "size": "10x10", "rate": 135},
        {"date": "2026-11-21", "competitor": "Storage King", "size": "10x10", "rate": "$150"},
    ]});
    let (s, body) = status_json(
        app.post(&format!("/api/v1/facilities/{id}/upload"), &json_body)
            .await,
    )
    .await;
    // "observed_on" and "date" both mean the observation date: refused as ambiguous.
    assert_eq!(s, 422, "{body}");
    let json_body = json!({ "rows": [
        {"observed_on": "2026-11-20", "competitor": "Public Storage", "size": "10x10", "rate": 135},
        {"observed_on": "2026-11-21", "competitor": "Storage King", "size": "10x10", "rate": "$150"},
    ]});
    let (s, body) = status_json(
        app.post(&format!("/api/v1/facilities/{id}/upload"), &json_body)
            .await,
    )
    .await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(
        (body["inserted"].as_u64(), body["updated"].as_u64()),
        (Some(1), Some(1))
    );
    let ps: f64 = sqlx::query_scalar(
        "SELECT rate FROM competitor_rates WHERE competitor = 'Public Storage' AND source = 'upload'",
    )
    .fetch_one(app.db())
    .await
    .unwrap();
    assert_eq!(ps, 135.0);
    assert_eq!(app.count("competitor_rates").await, 4);

    // JSON unit rates.
    let (s, body) = status_json(
        app.post(
            &format!("/api/v1/facilities/{id}/upload"),
            &json!({"kind": "unit_rates", "date": "2026-11-21",
                    "rows": [{"size": "10x10", "street_rate": 150, "occupancy_pct": 90}]}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(unit_rows(&app, &id).await.len(), 1);
    app.run_jobs().await;
}

#[tokio::test]
async fn every_bad_row_is_reported_by_line_and_nothing_is_written() {
    let app = spawn_app().await;
    let id = app.create_facility("Main").await;
    // Lines 3, 5 and 6 are bad (the header is line 1).
    let csv = "date,size,street_rate,occupancy_pct\n\
               2026-11-20,10x10,149,91\n\
               2026-11-20,10x10x3,149,91\n\
               2026-11-20,5x5,55,80\n\
               2026-11-20,10x15,abc,80\n\
               2026-11-20,10x20,99,180\n";
    let (s, body) = upload_csv(&app, &id, "", csv).await;
    assert_eq!(s, 422, "{body}");
    let errors = body["errors"].as_array().unwrap();
    let lines: Vec<(u64, &str)> = errors
        .iter()
        .map(|e| (e["line"].as_u64().unwrap(), e["field"].as_str().unwrap()))
        .collect();
    assert_eq!(
        lines,
        [(3, "size"), (5, "street_rate"), (6, "occupancy_pct")]
    );
    assert_eq!(body["error_count"], 3);
    let msg = body["error"].as_str().unwrap();
    assert!(
        msg.starts_with("3 of 5 rows are invalid, nothing was written"),
        "{msg}"
    );
    assert!(msg.contains("line 5: street_rate"), "{msg}");
    assert_eq!(app.count("sync_records").await, 0);
    assert_eq!(app.count("job_runs").await, 0);

    // Competitor rates: the good rows before the bad one are not kept either.
    let csv = "competitor,size,rate\nA,10x10,100\nB,10x10,-1\nC,10x10,120\n";
    let (s, body) = upload_csv(&app, &id, "", csv).await;
    assert_eq!(s, 422, "{body}");
    assert_eq!(body["errors"][0]["line"], 3);
    assert_eq!(app.count("competitor_rates").await, 0);

    // The same size twice on one date names the first line.
    let csv = "date,size,street_rate\n2026-11-20,10x10,1\n2026-11-20,10x10,2\n";
    let (s, body) = upload_csv(&app, &id, "", csv).await;
    assert_eq!(s, 422, "{body}");
    assert!(
        body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("line 2"),
        "{body}"
    );
}

#[tokio::test]
async fn empty_wrong_kind_and_foreign_uploads_are_refused() {
    let app = spawn_app().await;
    let id = app.create_facility("Main").await;
    for (csv, query, expect) in [
        ("", "", "no header row"),
        ("size,street_rate\n", "", "no rows"),
        (
            "competitor,size,rate\nA,10x10,100\n",
            "?kind=unit_rates",
            "looks like competitor_rates",
        ),
        (
            "size,street_rate\n10x10,100\n",
            "?kind=competitor_rates",
            "missing: competitor",
        ),
        ("colour,weight\nred,3\n", "", "pass kind"),
        ("size,street_rate\n10x10,100\n", "", "date"),
        (
            "size,street_rate\n10x10,100\n",
            "?kind=everything",
            "query parameter kind",
        ),
    ] {
        let (s, body) = upload_csv(&app, &id, query, csv).await;
        assert_eq!(s, 422, "{csv:?} {query} -> {body}");
        assert!(
            body["error"].as_str().unwrap().contains(expect),
            "{csv:?} -> {body}"
        );
    }
    let r = app
        .req(Method::POST, &format!("/api/v1/facilities/{id}/upload"))
        .header("content-type", "application/xml")
        .body("<rows/>")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 415);
    let (s, _) = status_json(
        app.post(
            &format!("/api/v1/facilities/{id}/upload"),
            &json!({"rows": "nope"}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 422);
    let other = app.create_tenant("Rival Storage").await;
    let r = app
        .req_as(
            &other,
            Method::POST,
            &format!("/api/v1/facilities/{id}/upload"),
        )
        .header("content-type", "text/csv")
        .body("size,street_rate\n10x10,100\n")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(app.count("sync_records").await, 0);
    assert_eq!(app.count("competitor_rates").await, 0);
}

#[tokio::test]
async fn templates_are_offered_per_kind_and_upload_as_they_are() {
    let app = spawn_app().await;
    let id = app.create_facility("Main").await;
    for kind in ["unit_rates", "competitor_rates"] {
        let r = app.get(&format!("/api/v1/upload-templates/{kind}")).await;
        assert_eq!(r.status(), 200);
        assert!(r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv"));
        let csv = r.text().await.unwrap();
        let (s, body) = upload_csv(&app, &id, "", &csv).await;
        assert_eq!(s, 200, "{kind}: {body}");
        assert_eq!(body["kind"], kind);
    }
    assert_eq!(
        app.get("/api/v1/upload-templates/other").await.status(),
        404
    );
    app.run_jobs().await;
}
