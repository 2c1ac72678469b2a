//! The rent roll through `POST /api/v1/sync`: stored per tenant, changed by events, cohorts
//! derived from it, and a roll that cannot be read whole left aside.

use chrono::{Duration, Utc};
use e2e::{get_ok, spawn_app, status_json, TestApp};
use serde_json::{json, Value};

fn day(back: i64) -> String {
    (Utc::now().date_naive() - Duration::days(back)).to_string()
}

fn tenant(id: &str, size: &str, rent: f64, moved_in: &str, raised: Option<&str>) -> Value {
    json!({"tenant_id": id, "size": size, "rent": rent, "move_in_date": moved_in,
           "last_increase_date": raised})
}

fn snapshot(date: &str, tenants: Vec<Value>) -> Value {
    json!({
        "facility": {"name": "Roll Street"},
        "date": date,
        "unit_types": [
            {"size": "10x10", "tier": "standard", "street_rate": 130, "total_units": 50, "occupied_units": 45},
            {"size": "5x5", "tier": "standard", "street_rate": 55, "total_units": 20, "occupied_units": 18}
        ],
        "tenants": tenants
    })
}

async fn sync(app: &TestApp, body: &Value) -> Value {
    let (status, answer) = status_json(app.sync(body).await).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

async fn events(app: &TestApp) -> Vec<(String, String, String, Option<f64>, Option<f64>)> {
    sqlx::query_as(
        "SELECT tenant_id, kind, event_date::text, rent_before, rent_after FROM rent_roll_events
         ORDER BY id",
    )
    .fetch_all(app.db())
    .await
    .unwrap()
}

#[tokio::test]
async fn a_roll_is_stored_per_tenant_and_changed_by_events_only() {
    let app = spawn_app().await;
    let (d1, d2) = (day(10), day(3));
    let first = vec![
        tenant("A-1", "10x10", 120.0, "2024-02-01", Some("2025-06-01")),
        tenant("B-2", "10x10", 110.0, "2025-01-15", None),
        tenant("C-3", "5x5", 45.10, "2025-03-01", None),
    ];
    let r = sync(&app, &snapshot(&d1, first.clone())).await;
    assert_eq!(
        r["rent_roll"],
        json!({"applied": true, "held": false, "tenants": 3, "moved_in": 3, "moved_out": 0,
               "rent_changed": 0, "updated": 0, "roll_date": d1})
    );
    // A week later: A-1 raised to 132 on d2, B-2 gone, D-4 moved in.
    let second = vec![
        tenant("A-1", "10x10", 132.0, "2024-02-01", Some(&d2)),
        tenant("C-3", "5x5", 45.10, "2025-03-01", None),
        tenant("D-4", "5x5", 55.0, &d2, None),
    ];
    let r = sync(&app, &snapshot(&d2, second.clone())).await;
    assert_eq!(r["rent_roll"]["moved_in"], 1, "{r}");
    assert_eq!(r["rent_roll"]["moved_out"], 1, "{r}");
    assert_eq!(r["rent_roll"]["rent_changed"], 1, "{r}");
    let recorded = events(&app).await;
    let expected = vec![
        (
            "A-1".into(),
            "moved_in".into(),
            "2024-02-01".into(),
            None,
            Some(120.0),
        ),
        (
            "B-2".into(),
            "moved_in".into(),
            "2025-01-15".into(),
            None,
            Some(110.0),
        ),
        (
            "C-3".into(),
            "moved_in".into(),
            "2025-03-01".into(),
            None,
            Some(45.1),
        ),
        (
            "A-1".into(),
            "rent_changed".into(),
            d2.clone(),
            Some(120.0),
            Some(132.0),
        ),
        (
            "D-4".into(),
            "moved_in".into(),
            d2.clone(),
            None,
            Some(55.0),
        ),
        (
            "B-2".into(),
            "moved_out".into(),
            d2.clone(),
            Some(110.0),
            None,
        ),
    ];
    let mut sorted = recorded.clone();
    sorted.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    let mut want = expected.clone();
    want.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    assert_eq!(sorted, want);

    // The same roll again (a re-send, or the next day with nothing changed) writes no tenant
    // row and no event.
    let before: (i64, chrono::DateTime<Utc>) =
        sqlx::query_as("SELECT count(*), max(updated_at) FROM rent_roll_tenants")
            .fetch_one(app.db())
            .await
            .unwrap();
    let r = sync(&app, &snapshot(&day(2), second.clone())).await;
    assert_eq!(
        (
            r["rent_roll"]["moved_in"].as_u64(),
            r["rent_roll"]["moved_out"].as_u64(),
            r["rent_roll"]["rent_changed"].as_u64(),
            r["rent_roll"]["updated"].as_u64()
        ),
        (Some(0), Some(0), Some(0), Some(0))
    );
    let after: (i64, chrono::DateTime<Utc>) =
        sqlx::query_as("SELECT count(*), max(updated_at) FROM rent_roll_tenants")
            .fetch_one(app.db())
            .await
            .unwrap();
    assert_eq!(before, after, "an unchanged roll touches no tenant row");
    assert_eq!(events(&app).await.len(), 6);

    // A late re-send of the first roll is older than the roll in force: it changes nothing.
    let r = sync(&app, &snapshot(&d1, first)).await;
    assert_eq!(r["rent_roll"]["applied"], false, "{r}");
    assert_eq!(r["rent_roll"]["roll_date"], day(2));
    assert_eq!(events(&app).await.len(), 6);
    let in_place: Vec<(String, f64)> = sqlx::query_as(
        "SELECT tenant_id, rent FROM rent_roll_tenants WHERE moved_out_on IS NULL ORDER BY tenant_id",
    )
    .fetch_all(app.db())
    .await
    .unwrap();
    assert_eq!(
        in_place,
        vec![
            ("A-1".into(), 132.0),
            ("C-3".into(), 45.1),
            ("D-4".into(), 55.0)
        ]
    );

    // The stored body keeps the cohorts derived from the roll, not the roll.
    let raw: Value =
        sqlx::query_scalar("SELECT raw_payload FROM sync_records WHERE snapshot_date = $1::date")
            .bind(day(2))
            .fetch_one(app.db())
            .await
            .unwrap();
    assert!(raw.get("tenants").is_none(), "{raw}");
    assert_eq!(raw["tenant_rents"].as_array().unwrap().len(), 3, "{raw}");

    // The cohorts answer the ECRI report: on day(2), A-1 at 132 raised 1 month ago at most
    // (d2 is a week earlier), C-3 at 45.10 since 2025-03-01, D-4 at 55 since d2.
    let facility = r["facility"]["id"].as_str().unwrap().to_owned();
    app.ecri_now(&facility).await;
    let ecri = get_ok(
        &app,
        &format!("/api/v1/analytics/ecri?facility_id={facility}"),
    )
    .await;
    let sizes = ecri["facilities"][0]["sizes"].as_array().unwrap();
    let tenants_of = |size: &str| {
        sizes
            .iter()
            .find(|z| z["size"] == size)
            .map(|z| z["tenants"].as_u64().unwrap_or(0))
    };
    assert_eq!(tenants_of("10x10"), Some(1), "{ecri}");
    assert_eq!(tenants_of("5x5"), Some(2), "{ecri}");
    // Actual rent is the roll's: 132 + 45.10 + 55, every occupied unit not sent estimated.
    let revpas = get_ok(
        &app,
        &format!("/api/v1/analytics/revpas?facility_id={facility}"),
    )
    .await;
    let f = &revpas["facilities"][0];
    assert_eq!(f["actual_rent_estimated"], true, "{f}");
    app.run_jobs().await;
}

#[tokio::test]
async fn a_roll_with_an_unreadable_tenant_is_set_aside_whole() {
    let app = spawn_app().await;
    let d1 = day(5);
    sync(
        &app,
        &snapshot(
            &d1,
            vec![
                tenant("A-1", "10x10", 120.0, "2024-02-01", None),
                tenant("B-2", "10x10", 110.0, "2025-01-15", None),
            ],
        ),
    )
    .await;
    // B-2 is missing and C-3 moved in after the snapshot's date: applying the readable part
    // would move B-2 out. The roll is set aside and the snapshot stored without it.
    let bad = snapshot(
        &day(4),
        vec![
            tenant("A-1", "10x10", 125.0, "2024-02-01", None),
            tenant("C-3", "5x5", 50.0, &day(1), None),
            json!({"tenant_id": "E-5", "size": "10x10", "rent": "lots", "move_in_date": "2025-01-01"}),
        ],
    );
    let r = sync(&app, &bad).await;
    assert!(r.get("rent_roll").is_none(), "{r}");
    let warnings = r["warnings"].to_string();
    assert!(warnings.contains("tenants[1].move_in_date"), "{warnings}");
    assert!(warnings.contains("tenants[2].rent"), "{warnings}");
    assert!(
        warnings.contains("the rent roll was set aside: 2 of 3 tenants"),
        "{warnings}"
    );
    assert_eq!(events(&app).await.len(), 2, "nothing moved");
    // Duplicated ids are unreadable too; over 10,000 tenants is a 422.
    let dup = snapshot(
        &day(3),
        vec![
            tenant("A-1", "10x10", 120.0, "2024-02-01", None),
            tenant("A-1", "5x5", 50.0, "2024-02-01", None),
        ],
    );
    let r = sync(&app, &dup).await;
    assert!(
        r["warnings"].to_string().contains("'A-1' appears twice"),
        "{r}"
    );
    let many: Vec<Value> = (0..10_001)
        .map(|i| tenant(&format!("T{i}"), "10x10", 100.0, "2024-01-01", None))
        .collect();
    let (status, body) = status_json(app.sync(&snapshot(&day(2), many)).await).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"], "tenants: at most 10000 entries, got 10001");
    app.run_jobs().await;
}

#[tokio::test]
async fn the_engine_answers_each_tenant_of_the_roll_with_its_reasons() {
    let app = spawn_app().await;
    let (d1, d2) = (day(10), day(3));
    sync(
        &app,
        &snapshot(
            &d1,
            vec![
                tenant("A-1", "10x10", 120.0, "2024-02-01", Some("2025-06-01")),
                tenant("C-3", "5x5", 45.10, "2025-03-01", None),
            ],
        ),
    )
    .await;
    let r = sync(
        &app,
        &snapshot(
            &d2,
            vec![
                tenant("A-1", "10x10", 132.0, "2024-02-01", Some(&d2)),
                tenant("C-3", "5x5", 45.10, "2025-03-01", None),
                tenant("D-4", "5x5", 55.0, &d2, None),
                json!({"tenant_id": "E-5", "size": "10x10", "rent": 90, "move_in_date": "2023-01-01",
                       "flags": ["Business"]}),
            ],
        ),
    )
    .await;
    let facility = r["facility"]["id"].as_str().unwrap().to_owned();
    app.ecri_now(&facility).await;
    let e = get_ok(&app, &format!("/api/v1/facilities/{facility}/ecri")).await;
    assert_eq!(e["basis"], "rent_roll");
    assert_eq!(e["as_of"], d2.as_str());
    assert_eq!(e["horizon_months"], 12.0);
    let lines = e["tenants"].as_array().unwrap();
    let ids: Vec<&str> = lines
        .iter()
        .map(|l| l["tenant_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["A-1", "E-5", "C-3", "D-4"], "by size, then id");
    let line = |id: &str| lines.iter().find(|l| l["tenant_id"] == id).unwrap();
    // Raised a week ago, moved in a week ago, a business tenant: held, each by its guardrail.
    assert_eq!(line("A-1")["guardrails"], json!(["months_since_increase"]));
    assert_eq!(line("D-4")["guardrails"], json!(["months_since_move_in"]));
    assert_eq!(line("E-5")["guardrails"], json!(["excluded_flag"]));
    for id in ["A-1", "D-4", "E-5"] {
        assert_eq!(line(id)["increase"], 0.0, "{id}");
        assert_eq!(line(id)["new_rent"], line(id)["rent"], "{id}");
    }
    // C-3 pays $45.10 for a $55 size, 20+ months after moving in: raised, the reasons say why.
    let c = line("C-3");
    assert_eq!(c["rent"], 45.1);
    let increase = c["increase"].as_f64().unwrap();
    assert!(increase >= 1.0, "{c}");
    assert_eq!(c["new_rent"].as_f64().unwrap(), 45.1 + increase);
    let p = c["stay_probability"].as_f64().unwrap();
    assert!((0.5..1.0).contains(&p), "{c}");
    assert!(c["expected_gain"].as_f64().unwrap() > 0.0, "{c}");
    let reasons: Vec<&str> = c["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(reasons.contains(&"stay_probability"), "{reasons:?}");
    assert_eq!(e["totals"]["tenants"], 4);
    assert_eq!(e["totals"]["tenants_affected"], 1);
    assert_eq!(e["totals"]["monthly_uplift"].as_f64().unwrap(), increase);
    // No outcome yet: the model is the prior's.
    assert_eq!(e["model"]["increased_tenants"], 0);
    assert_eq!(e["model"]["increase_sensitivity"], 1.0);

    // The per-size report sums the same stored run: C-3's 5x5 increase is the size's uplift.
    let report = get_ok(
        &app,
        &format!("/api/v1/analytics/ecri?facility_id={facility}"),
    )
    .await;
    assert_eq!(report["facilities"][0]["run"]["run_id"], e["run"]["run_id"]);
    let five = report["facilities"][0]["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|z| z["size"] == "5x5")
        .unwrap()
        .clone();
    assert_eq!(five["tenants"], 2, "{five}");
    assert_eq!(five["tenants_affected"], 1, "{five}");
    assert_eq!(five["monthly_uplift"].as_f64().unwrap(), increase);

    // The dashboard's ECRI pages show the same lines, money as money: the facility's queue
    // lists them, the analytics page says what they rest on and links to the queue.
    let cookie = app.session_cookie().await;
    app.ecri_now(&facility).await;
    let page = app
        .page_text(
            &cookie,
            &format!("/app/analytics/ecri?facility_id={facility}"),
        )
        .await;
    assert!(
        page.contains("From the rent roll of"),
        "the page says what it rests on"
    );
    assert!(page.contains(&format!(r#"href="/app/facilities/{facility}/ecri""#)));
    let queue = app
        .page_text(&cookie, &format!("/app/facilities/{facility}/ecri"))
        .await;
    let html = scraper::Html::parse_document(&queue);
    let row = scraper::Selector::parse("#ecri-queue tbody tr").unwrap();
    let td = scraper::Selector::parse("td").unwrap();
    let shown: Vec<Vec<String>> = html
        .select(&row)
        .map(|r| {
            r.select(&td)
                .map(|c| c.text().collect::<String>())
                .collect()
        })
        .collect();
    assert_eq!(shown.len(), 4, "{shown:?}");
    let c3 = shown.iter().find(|r| r[1] == "C-3").unwrap();
    assert_eq!(c3[3], "$45.10");
    assert_eq!(c3[4], format!("${:.2}", 45.1 + increase));
    assert!(c3[5].starts_with(&format!("${increase:.2} (")), "{c3:?}");
    let e5 = shown.iter().find(|r| r[1] == "E-5").unwrap();
    assert!(e5[6].contains("excluded flag"), "{e5:?}");
    // Another company's facility is not there.
    let other = app.create_tenant("Other Storage").await;
    app.ecri_now(&facility).await;
    let r = app
        .req_as(
            &other,
            reqwest::Method::GET,
            &format!("/api/v1/facilities/{facility}/ecri"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    app.run_jobs().await;
}

/// A roll of `n` tenants of 10x10 at `rent`, ids `T0`..; `raised` of them (from `T0`) at
/// `raised_rent`, increased on `raised_on`.
fn roll(
    n: usize,
    rent: f64,
    raised: usize,
    raised_rent: f64,
    raised_on: &str,
    gone: &[usize],
) -> Vec<Value> {
    (0..n)
        .filter(|i| !gone.contains(i))
        .map(|i| {
            if i < raised {
                tenant(
                    &format!("T{i}"),
                    "10x10",
                    raised_rent,
                    "2020-01-01",
                    Some(raised_on),
                )
            } else {
                tenant(&format!("T{i}"), "10x10", rent, "2020-01-01", None)
            }
        })
        .collect()
}

#[tokio::test]
async fn the_engine_learns_how_a_facilitys_tenants_took_their_increases() {
    let app = spawn_app().await;
    let raised_on = day(200);
    // 40 tenants at $100; 20 raised to $115 200 days ago; 8 of those and 2 others left 50
    // days later: 40 % of the increased tenants left within 90 days, against none since of the
    // others. The company's only facility: its own outcomes are all the evidence.
    let gone: Vec<usize> = (0..8).chain([30, 31]).collect();
    for (date, tenants) in [
        (day(300), roll(40, 100.0, 0, 0.0, &raised_on, &[])),
        (
            raised_on.clone(),
            roll(40, 100.0, 20, 115.0, &raised_on, &[]),
        ),
        (day(150), roll(40, 100.0, 20, 115.0, &raised_on, &gone)),
        (day(5), roll(40, 100.0, 20, 115.0, &raised_on, &gone)),
    ] {
        let mut body = snapshot(&date, tenants);
        body["facility"]["name"] = json!("Learner");
        let r = sync(&app, &body).await;
        // 10 of 40 leaving in one roll is more than the default share: the roll is held, and
        // confirmed as an operator who knows they left would.
        if r["rent_roll"]["held"] == true {
            let id = r["facility"]["id"].as_str().unwrap();
            let path = format!("/api/v1/facilities/{id}/rent-roll/confirm");
            let (s, c) = status_json(app.post(&path, &json!({})).await).await;
            assert_eq!(s, 200, "{c}");
        }
    }
    let facilities = get_ok(&app, "/api/v1/facilities").await;
    let id = facilities["facilities"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    app.ecri_now(&id).await;
    let learned = get_ok(&app, &format!("/api/v1/facilities/{id}/ecri")).await;
    let m = &learned["model"];
    assert_eq!(m["increased_tenants"], 20, "{m}");
    // Not increased in the last 90 days: the 30 still in place (the 12 raised 200 days ago
    // count again once their increase's 90 days are over).
    assert_eq!(m["baseline_tenants"], 30, "{m}");
    assert!(m["increase_sensitivity"].as_f64().unwrap() > 1.0, "{m}");
    assert!(
        learned["stop_loss"].is_null(),
        "the increases are older than the last quarter"
    );

    // A company with the same roll today and no history keeps the prior: it raises more.
    let fresh = app.create_tenant("Other Storage").await;
    let mut body = snapshot(&day(5), roll(40, 100.0, 20, 115.0, &raised_on, &gone));
    body["facility"]["name"] = json!("Newcomer");
    let r = app
        .req_as(&fresh, reqwest::Method::POST, "/api/v1/sync")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let fresh_id = r.json::<Value>().await.unwrap()["facility"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    app.ecri_now(&fresh_id).await;
    let prior: Value = app
        .req_as(
            &fresh,
            reqwest::Method::GET,
            &format!("/api/v1/facilities/{fresh_id}/ecri"),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(prior["model"]["increase_sensitivity"], 1.0);
    let uplift = |v: &Value| v["totals"]["monthly_uplift"].as_f64().unwrap();
    assert!(
        uplift(&learned) < uplift(&prior),
        "learned {} against prior {}",
        uplift(&learned),
        uplift(&prior)
    );
    app.run_jobs().await;
}

async fn upload(
    app: &TestApp,
    id: &str,
    query: &str,
    content_type: &str,
    body: String,
) -> (u16, Value) {
    status_json(
        app.req(
            reqwest::Method::POST,
            &format!("/api/v1/facilities/{id}/upload{query}"),
        )
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap(),
    )
    .await
}

#[tokio::test]
async fn a_rent_roll_is_uploaded_as_csv_or_json_and_merged_into_its_day() {
    let app = spawn_app().await;
    let d1 = day(6);
    // The day already has its unit types from a push; the roll joins them.
    let r = sync(&app, &snapshot(&d1, vec![])).await;
    let id = r["facility"]["id"].as_str().unwrap().to_owned();
    // An export as a CRM writes it: its own column names, money with a sign, flags in a list,
    // no date column (the upload's date parameter gives it).
    let csv = "Tenant ID,Unit Size,Unit Type,Current Rent,Move In,Last Rate Change,Account,Flags\n\
               A-1,10x10,climate,$120.00,2024-02-01,2025-06-01,C-1,\n\
               B-2,10X10,climate,110,2025-01-15,,C-1,\"business; military\"\n\
               C-3,5x5,,45.10,2025-03-01,,C-3,\n";
    let (status, body) = upload(
        &app,
        &id,
        &format!("?date={d1}"),
        "text/csv",
        csv.to_owned(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["kind"], "rent_roll", "detected from the tenant column");
    assert_eq!(body["rows"], 3);
    let day1 = &body["snapshots"][0];
    assert_eq!(day1["date"], d1.as_str());
    assert_eq!(day1["merged"], true);
    assert_eq!(day1["rent_roll"]["moved_in"], 3, "{body}");
    let stored: Vec<(String, String, Vec<String>, Option<String>)> = sqlx::query_as(
        "SELECT tenant_id, tier, flags, customer_id FROM rent_roll_tenants ORDER BY tenant_id",
    )
    .fetch_all(app.db())
    .await
    .unwrap();
    assert_eq!(
        stored,
        vec![
            ("A-1".into(), "climate".into(), vec![], Some("C-1".into())),
            (
                "B-2".into(),
                "climate".into(),
                vec!["business".into(), "military".into()],
                Some("C-1".into())
            ),
            ("C-3".into(), "".into(), vec![], Some("C-3".into())),
        ]
    );
    // The pushed unit types are still the day's.
    let units: i64 =
        sqlx::query_scalar("SELECT count(*) FROM sync_unit_types WHERE snapshot_date = $1::date")
            .bind(&d1)
            .fetch_one(app.db())
            .await
            .unwrap();
    assert_eq!(units, 2);

    // A JSON roll of a later day, with flags as a list: B-2 gone, A-1 raised.
    let d2 = day(2);
    let json_body = json!({"kind": "rent_roll", "date": d2, "rows": [
        {"tenant_id": "A-1", "size": "10x10", "tier": "climate", "rent": 129, "move_in_date": "2024-02-01",
         "last_increase_date": d2, "flags": ["Military"]},
        {"tenant_id": "C-3", "size": "5x5", "rent": 45.10, "move_in_date": "2025-03-01"}
    ]});
    let (status, body) = upload(&app, &id, "", "application/json", json_body.to_string()).await;
    assert_eq!(status, 200, "{body}");
    let r = &body["snapshots"][0]["rent_roll"];
    assert_eq!(
        (r["moved_out"].as_u64(), r["rent_changed"].as_u64()),
        (Some(1), Some(1)),
        "{body}"
    );
    assert_eq!(body["snapshots"][0]["merged"], false, "a new day");

    // Bad rows are each listed and nothing is written.
    let bad = format!(
        "tenant_id,size,rent,move_in_date,last_increase_date\n\
         A-1,10x10,130,2024-02-01,\n\
         A-1,5x5,50,2024-02-01,\n\
         Z-9,10x10,100,{},\n\
         Y-8,10x10,100,2024-01-01,2023-01-01\n",
        day(-5)
    );
    let (status, body) = upload(&app, &id, "", "text/csv", bad).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error_count"], 3, "{body}");
    let fields: Vec<&str> = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        ["tenant_id", "move_in_date", "last_increase_date"],
        "{body}"
    );
    assert_eq!(
        events(&app).await.len(),
        5,
        "3 moved in, 1 out, 1 raise: nothing more"
    );

    // The template reads back as a roll.
    let template = app
        .req(
            reqwest::Method::GET,
            "/api/v1/upload-templates/rent_roll.csv",
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(template.starts_with("date,tenant_id,size,tier,rent,move_in_date,last_increase_date"));
    let (status, body) = upload(&app, &id, "?kind=rent_roll", "text/csv", template).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["snapshots"][0]["date"], "2026-11-21");
    app.run_jobs().await;
}

#[tokio::test]
async fn a_facilitys_guardrails_are_its_own_settings() {
    let app = spawn_app().await;
    let r = sync(
        &app,
        &snapshot(
            &day(3),
            vec![
                tenant("D-4", "5x5", 40.0, &day(20), None),
                json!({"tenant_id": "E-5", "size": "10x10", "rent": 90, "move_in_date": "2023-01-01",
                       "flags": ["business"]}),
            ],
        ),
    )
    .await;
    let id = r["facility"]["id"].as_str().unwrap().to_owned();
    let guardrails = |e: &Value| -> Vec<Value> {
        e["tenants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["guardrails"].clone())
            .collect()
    };
    app.ecri_now(&id).await;
    let e = get_ok(&app, &format!("/api/v1/facilities/{id}/ecri")).await;
    assert_eq!(
        guardrails(&e),
        vec![json!(["excluded_flag"]), json!(["months_since_move_in"])],
        "E-5 (10x10) then D-4 (5x5)"
    );
    let s = get_ok(&app, &format!("/api/v1/facilities/{id}/ecri-settings")).await;
    assert_eq!(s["settings"], s["defaults"]);
    assert_eq!(s["overrides"], json!({}));
    assert_eq!(
        s["defaults"]["excluded_flags"],
        json!(["business", "delinquent", "military", "lien", "bankruptcy"])
    );
    // This operator raises business tenants and new ones too.
    let (status, s) = status_json(
        app.put(
            &format!("/api/v1/facilities/{id}/ecri-settings"),
            &json!({"excluded_flags": ["delinquent"], "min_months_since_move_in": 0,
                    "stay_prior": {"moving_cost_pct": 25}}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{s}");
    assert_eq!(s["settings"]["min_months_since_move_in"], 0.0);
    assert_eq!(s["settings"]["stay_prior"]["moving_cost_pct"], 25.0);
    assert_eq!(
        s["settings"]["stay_prior"]["per_increase_pct"],
        s["defaults"]["stay_prior"]["per_increase_pct"]
    );
    app.ecri_now(&id).await;
    let e = get_ok(&app, &format!("/api/v1/facilities/{id}/ecri")).await;
    for g in guardrails(&e) {
        assert!(
            !g.to_string().contains("excluded_flag")
                && !g.to_string().contains("months_since_move_in"),
            "{e}"
        );
    }
    // Bad overrides are refused, naming the field, and change nothing.
    for (body, field) in [
        (json!({"max_step_pct": 500}), "max_step_pct"),
        (json!({"max_steps": 5}), "settings.max_steps"),
        (
            json!({"stay_prior": {"nope": 1}}),
            "settings.stay_prior.nope",
        ),
        (json!({"notice_days": "thirty"}), "notice_days"),
    ] {
        let (status, err) = status_json(
            app.put(&format!("/api/v1/facilities/{id}/ecri-settings"), &body)
                .await,
        )
        .await;
        assert_eq!(status, 422, "{body}: {err}");
        assert!(
            err["error"].as_str().unwrap().contains(field),
            "{body}: {err}"
        );
    }
    let s = get_ok(&app, &format!("/api/v1/facilities/{id}/ecri-settings")).await;
    assert_eq!(
        s["settings"]["min_months_since_move_in"], 0.0,
        "unchanged by the refusals"
    );
    let other = app.create_tenant("Other Storage").await;
    let r = app
        .req_as(
            &other,
            reqwest::Method::PUT,
            &format!("/api/v1/facilities/{id}/ecri-settings"),
        )
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    app.run_jobs().await;
}
