//! What a push may do to the data it lands on: rent rolls of one facility pushed at once all
//! land (none answers 5xx, the newest is in force), a roll that would move out a large share of
//! the tenants in force is held until confirmed, a member or key that may not edit
//! facilities cannot change a facility's details through a push, and an upload and a push of
//! the same days at once both land.

use super::pricing_tiers::upload_csv;
use chrono::{Duration, Utc};
use e2e::{get_ok, spawn_app, status_json, Tenant, TestApp};
use reqwest::Method;
use serde_json::{json, Value};

fn day(back: i64) -> String {
    (Utc::now().date_naive() - Duration::days(back)).to_string()
}

/// `n` tenants `T-0`.. in place since 2024, each at `rent` plus its number.
fn tenants(n: usize, rent: f64) -> Vec<Value> {
    (0..n)
        .map(|i| {
            json!({"tenant_id": format!("T-{i}"), "size": if i % 2 == 0 { "10x10" } else { "5x5" },
                   "rent": rent + i as f64, "move_in_date": "2024-03-01"})
        })
        .collect()
}

fn roll(facility: &Value, date: &str, tenants: Vec<Value>) -> Value {
    json!({
        "facility": facility,
        "date": date,
        "unit_types": [
            {"size": "10x10", "tier": "standard", "street_rate": 130, "total_units": 50, "occupied_units": 45},
            {"size": "5x5", "tier": "standard", "street_rate": 55, "total_units": 20, "occupied_units": 18}
        ],
        "tenants": tenants
    })
}

async fn push_as(app: &TestApp, who: &Tenant, body: &Value) -> (u16, Value) {
    status_json(
        app.req_as(who, Method::POST, "/api/v1/sync")
            .json(body)
            .send()
            .await
            .expect("the request is sent"),
    )
    .await
}

async fn push(app: &TestApp, body: &Value) -> Value {
    let (s, answer) = push_as(app, &app.tenant, body).await;
    assert_eq!(s, 200, "{answer}");
    answer
}

/// A facility's details a push may not change without the right to edit it.
fn details_of(f: &Value) -> Value {
    let keys = [
        "name",
        "address",
        "website_url",
        "rentable_sqft",
        "external_id",
        "source_system",
    ];
    keys.iter()
        .map(|k| (k.to_string(), f[*k].clone()))
        .collect()
}

/// The audit log's entries of `action`, newest first.
async fn audit(app: &TestApp, action: &str) -> Vec<Value> {
    get_ok(app, &format!("/api/v1/audit-log?action={action}")).await["entries"]
        .as_array()
        .expect("entries")
        .clone()
}

#[tokio::test]
async fn rent_rolls_of_one_facility_pushed_at_once_all_land_and_the_newest_is_in_force() {
    let app = spawn_app().await;
    let facility = json!({"name": "Parallel Street"});
    let first = push(&app, &roll(&facility, &day(200), tenants(2, 100.0))).await;
    let fid = first["facility"]["id"].as_str().unwrap().to_owned();
    let by_id = json!({ "id": fid });
    for round in 0..6i64 {
        // Six days at once, as a CRM that pushes a backfill in parallel does; each day's roll
        // has the same two tenants at that day's rent.
        let dates: Vec<String> = (0..6).map(|k| day(150 - round * 10 - k)).collect();
        let answers = futures::future::join_all(dates.iter().enumerate().map(|(k, d)| {
            let body = roll(
                &by_id,
                d,
                tenants(2, 100.0 + (round * 10 + k as i64) as f64),
            );
            let app = &app;
            async move { push_as(app, &app.tenant, &body).await }
        }))
        .await;
        for (s, answer) in &answers {
            assert_eq!(*s, 200, "round {round}: {answer}");
        }
        // A late re-send of an old day is not applied and says which roll is in force: the
        // newest of the round, whatever order the pushes landed in.
        let probe = push(&app, &roll(&by_id, &day(300), tenants(2, 1.0))).await;
        assert_eq!(probe["rent_roll"]["applied"], false, "{probe}");
        assert_eq!(
            probe["rent_roll"]["roll_date"],
            json!(dates[5]),
            "round {round}"
        );
        let rents: Vec<f64> = sqlx::query_scalar(
            "SELECT rent FROM rent_roll_tenants WHERE moved_out_on IS NULL ORDER BY tenant_id",
        )
        .fetch_all(app.db())
        .await
        .unwrap();
        let newest = 100.0 + (round * 10 + 5) as f64;
        assert_eq!(rents, vec![newest, newest + 1.0], "round {round}");
    }
    app.run_jobs().await;
}

#[tokio::test]
async fn an_upload_and_a_push_of_the_same_days_at_once_both_land() {
    let app = spawn_app().await;
    let first = push(
        &app,
        &roll(
            &json!({"name": "Race Street"}),
            &day(100),
            tenants(2, 100.0),
        ),
    )
    .await;
    let fid = first["facility"]["id"].as_str().unwrap().to_owned();
    let by_id = json!({ "id": fid });
    for round in 0..12i64 {
        // Three days the facility has already, then an upload of their rates and pushes of
        // the same days sent together: the upload merges into each day's record while the
        // pushes replace them, every writer of the facility in turn.
        let dates: Vec<String> = (0..3).map(|k| day(90 - round * 4 - k)).collect();
        for d in &dates {
            push(&app, &roll(&by_id, d, tenants(2, 100.0))).await;
        }
        let csv = std::iter::once("date,size,tier,street_rate\n".to_owned())
            .chain(
                dates
                    .iter()
                    .map(|d| format!("{d},10x20,standard,{}\n", 200 + round)),
            )
            .collect::<String>();
        let upload = upload_csv(&app, &fid, csv);
        let pushes = futures::future::join_all(dates.iter().rev().map(|d| {
            let body = roll(&by_id, d, tenants(2, 110.0));
            let app = &app;
            async move { push_as(app, &app.tenant, &body).await }
        }));
        let ((s, uploaded), pushed) = futures::future::join(upload, pushes).await;
        assert_eq!(s, 200, "round {round}: {uploaded}");
        for (s, answer) in pushed {
            assert_eq!(s, 200, "round {round}: {answer}");
        }
        let records: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM sync_records WHERE facility_id = $1::uuid AND snapshot_date = ANY($2::date[])",
        )
        .bind(&fid)
        .bind(&dates)
        .fetch_one(app.db())
        .await
        .unwrap();
        assert_eq!(records, 3, "one record a day, round {round}");
    }
    app.run_jobs().await;
}

#[tokio::test]
async fn an_empty_roll_is_held_until_confirmed_and_a_small_shrink_applies_at_once() {
    let app = spawn_app().await;
    let facility = json!({"name": "Guarded Street"});
    let r = push(&app, &roll(&facility, &day(10), tenants(10, 100.0))).await;
    let fid = r["facility"]["id"].as_str().unwrap().to_owned();
    let state_path = format!("/api/v1/facilities/{fid}/rent-roll");

    // One of ten moves out: within the share, applied at once.
    let r = push(&app, &roll(&facility, &day(9), tenants(9, 100.0))).await;
    assert_eq!(r["rent_roll"]["applied"], true, "{r}");
    assert_eq!(r["rent_roll"]["held"], false, "{r}");
    assert_eq!(r["rent_roll"]["moved_out"], 1, "{r}");

    // An empty roll would move all nine out: held, the rest of the snapshot stored.
    let r = push(&app, &roll(&facility, &day(8), vec![])).await;
    assert_eq!(r["idempotent"], "created", "{r}");
    assert_eq!(r["rent_roll"]["held"], true, "{r}");
    assert_eq!(r["rent_roll"]["applied"], false, "{r}");
    assert_eq!(r["rent_roll"]["moved_out"], 0, "{r}");
    assert_eq!(r["rent_roll"]["roll_date"], json!(day(9)), "{r}");
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("tenants: the roll was held")
            && warnings.contains("9 of the 9 tenants in force"),
        "{warnings}"
    );
    let in_force = get_ok(&app, &state_path).await;
    assert_eq!(in_force["roll_date"], json!(day(9)), "{in_force}");
    assert_eq!(in_force["tenants_in_force"], 9, "{in_force}");
    assert_eq!(in_force["move_out_hold_pct"], 20.0, "{in_force}");
    assert_eq!(in_force["held"]["roll_date"], json!(day(8)), "{in_force}");
    assert_eq!(in_force["held"]["tenants"], 0, "{in_force}");
    assert_eq!(in_force["held"]["moving_out"], 9, "{in_force}");
    let held = audit(&app, "rent_roll.hold").await;
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0]["facility_id"], json!(fid));
    assert_eq!(held[0]["after"]["roll_date"], json!(day(8)));
    // The facility page says so and offers the confirmation.
    let cookie = app.session_cookie().await;
    let page = app
        .page_text(&cookie, &format!("/app/facilities/{fid}"))
        .await;
    assert!(page.contains("A rent roll is held"), "{page}");
    assert!(page.contains("rent-roll/confirm"), "{page}");

    // Confirmed, it applies: all nine move out on its date, and the confirmation is audited.
    let (s, c) = status_json(app.post(&format!("{state_path}/confirm"), &json!({})).await).await;
    assert_eq!(s, 200, "{c}");
    assert_eq!(c["rent_roll"]["applied"], true, "{c}");
    assert_eq!(c["rent_roll"]["moved_out"], 9, "{c}");
    assert_eq!(c["rent_roll"]["roll_date"], json!(day(8)), "{c}");
    let after = get_ok(&app, &state_path).await;
    assert_eq!(after["tenants_in_force"], 0, "{after}");
    assert_eq!(after["held"], Value::Null, "{after}");
    let confirmed = audit(&app, "rent_roll.confirm").await;
    assert_eq!(confirmed.len(), 1, "{confirmed:?}");
    assert_eq!(confirmed[0]["actor"]["type"], "api_key", "{confirmed:?}");
    // Nothing left to confirm.
    let (s, e) = status_json(app.post(&format!("{state_path}/confirm"), &json!({})).await).await;
    assert_eq!(s, 404, "{e}");
    app.run_jobs().await;
}

#[tokio::test]
async fn a_held_roll_gives_way_to_a_later_roll_within_the_share_and_the_share_is_a_setting() {
    let app = spawn_app().await;
    let facility = json!({"name": "Setting Street"});
    let r = push(&app, &roll(&facility, &day(10), tenants(10, 100.0))).await;
    let fid = r["facility"]["id"].as_str().unwrap().to_owned();
    let state_path = format!("/api/v1/facilities/{fid}/rent-roll");
    // A roll of 3 out of 10 is held; the next day's full roll agrees with the one in force:
    // applied, and the held roll is dropped.
    let r = push(&app, &roll(&facility, &day(9), tenants(3, 100.0))).await;
    assert_eq!(r["rent_roll"]["held"], true, "{r}");
    let r = push(&app, &roll(&facility, &day(8), tenants(10, 100.0))).await;
    assert_eq!(r["rent_roll"]["applied"], true, "{r}");
    assert_eq!(r["rent_roll"]["moved_out"], 0, "{r}");
    let s = get_ok(&app, &state_path).await;
    assert_eq!(
        (s["held"].clone(), s["tenants_in_force"].clone()),
        (Value::Null, json!(10))
    );

    // The share is the facility's setting: a bad one is refused, 80 % lets 7 of 10 through.
    let settings = format!("{state_path}/settings");
    for bad in [
        json!({"move_out_hold_pct": 101}),
        json!({"move_out_hold_pct": "x"}),
        json!({}),
    ] {
        let (code, e) = status_json(app.put(&settings, &bad).await).await;
        assert_eq!(code, 422, "{bad}: {e}");
    }
    let (code, e) = status_json(app.put(&settings, &json!({"move_out_hold_pct": 80})).await).await;
    assert_eq!(code, 200, "{e}");
    assert_eq!(e["move_out_hold_pct"], 80.0);
    let r = push(&app, &roll(&facility, &day(7), tenants(3, 100.0))).await;
    assert_eq!(
        (
            r["rent_roll"]["applied"].clone(),
            r["rent_roll"]["moved_out"].clone()
        ),
        (json!(true), json!(7)),
        "{r}"
    );
    let changed = audit(&app, "rent_roll_settings.update").await;
    assert_eq!(changed[0]["before"], json!({"move_out_hold_pct": 20.0}));
    assert_eq!(changed[0]["after"], json!({"move_out_hold_pct": 80.0}));
    // Another company's facility is unknown to these routes.
    let other = app.create_tenant("Other Storage").await;
    let (code, _) = status_json(
        app.req_as(&other, Method::GET, &state_path)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(code, 404);
    app.run_jobs().await;
}

#[tokio::test]
async fn a_scoped_manager_cannot_change_facility_details_through_a_push() {
    let app = spawn_app().await;
    let north = push(
        &app,
        &json!({"facility": {"name": "North", "address": "1 North Road"}, "date": day(5)}),
    )
    .await["facility"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    push(
        &app,
        &json!({"facility": {"name": "South", "external_id": "S-1", "source_system": "crm"},
                "date": day(5)}),
    )
    .await;
    let (s, key) = status_json(
        app.post(
            "/api/v1/api-keys",
            &json!({"name": "north desk", "role": "manager", "facility_ids": [north]}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{key}");
    let manager = Tenant {
        api_key: key["api_key"].as_str().unwrap().to_owned(),
        ..app.tenant.clone()
    };
    let details = format!("/api/v1/facilities/{north}");
    let before = details_of(&get_ok(&app, &details).await);
    // The manager may not edit the facility...
    let (s, _) = status_json(
        app.req_as(&manager, Method::PUT, &details)
            .json(&json!({"name": "North", "address": "9 Elsewhere"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 403);
    // ...nor through a push: the snapshot is stored, the details are left alone and named.
    let (s, r) = push_as(
        &app,
        &manager,
        &json!({"facility": {"id": north, "address": "9 Elsewhere", "website_url": "https://evil.example",
                             "rentable_sqft": 1, "external_id": "EVIL", "source_system": "x"},
                "date": day(4)}),
    )
    .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(details_of(&get_ok(&app, &details).await), before);
    let warnings = r["warnings"].to_string();
    for field in [
        "facility.address",
        "facility.website_url",
        "facility.rentable_sqft",
        "facility.external_id",
    ] {
        assert!(warnings.contains(field), "{field}: {warnings}");
    }
    assert!(
        warnings.contains("your role (manager) may not change a facility's details"),
        "{warnings}"
    );
    // South's external id, sent for North, is neither adopted nor answered with a 409 that
    // tells South exists; matched by it with North's name, the push lands on North as if the
    // id matched nothing.
    let (s, r) = push_as(
        &app,
        &manager,
        &json!({"facility": {"id": north, "external_id": "S-1", "source_system": "crm"}, "date": day(3)}),
    )
    .await;
    assert_eq!(s, 200, "{r}");
    assert!(!r.to_string().contains("another facility"), "{r}");
    let (s, r) = push_as(
        &app,
        &manager,
        &json!({"facility": {"external_id": "S-1", "source_system": "crm", "name": "North"},
                "date": day(2)}),
    )
    .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["facility"]["id"], json!(north), "{r}");
    assert_eq!(details_of(&get_ok(&app, &details).await), before);
    // An unknown name and a name outside the scope get the same answer.
    let (s1, outside) = push_as(
        &app,
        &manager,
        &json!({"facility": {"name": "South"}, "date": day(2)}),
    )
    .await;
    let (s2, unknown) = push_as(
        &app,
        &manager,
        &json!({"facility": {"name": "Nowhere"}, "date": day(2)}),
    )
    .await;
    assert_eq!((s1, s2), (404, 404));
    assert_eq!(outside, unknown);
    // An admin's push still updates them.
    let r = push(
        &app,
        &json!({"facility": {"id": north, "address": "2 North Road"}, "date": day(1)}),
    )
    .await;
    assert!(
        !r["warnings"].to_string().contains("facility.address"),
        "{r}"
    );
    assert_eq!(get_ok(&app, &details).await["address"], "2 North Road");
    app.run_jobs().await;
}
