//! `GET /api/v1/analytics/portfolio` end to end on a hand-built portfolio; the expected figures
//! are worked out in the comments.

use e2e::{get_ok, push_ok as push, spawn_app};
use serde_json::{json, Value};

#[track_caller]
fn assert_close(v: &Value, want: f64) {
    assert!(
        v.as_f64().is_some_and(|x| (x - want).abs() < 0.006),
        "{v} is not {want}"
    );
}

fn days_ago(date: &str) -> i64 {
    let d: chrono::NaiveDate = date.parse().unwrap();
    (chrono::Utc::now().date_naive() - d).num_days()
}

#[tokio::test]
async fn analytics_portfolio_by_hand() {
    let app = spawn_app().await;
    // North: October ends at 80 %, November 20 at 75 % (below 80 and falling). 5 move-ins and
    // 8 move-outs MTD against a target of 30: by day 20 of 30 expect 20, so 75 % behind.
    // 10x10: 100 units at 150, 75 occupied; 75 tenants at 120: actual rent 9,000, GPR 15,000,
    // area 100 x 100 = 10,000 sq ft (estimated). ECRI gap 150 / 120 - 1 = 25 % (>= 15).
    // Competitors 120, 130, 140 (equal weights, Hazen positions 1/6, 1/2, 5/6): P75 = 130 +
    // 10 x (0.75 - 0.5) / (5/6 - 1/2) = 137.5; street 150 is above it while occupancy falls.
    push(
        &app,
        json!({ "facility": { "name": "North" }, "date": "2026-10-31", "occupancy_pct": 80 }),
    )
    .await;
    push(
        &app,
        json!({
            "facility": { "name": "North" }, "date": "2026-11-20", "occupancy_pct": 75,
            "move_ins": { "daily": 1, "mtd": 5, "target_monthly": 30 },
            "move_outs": { "daily": 1, "mtd": 8 },
            "unit_types": [{ "size": "10x10", "street_rate": 150, "total_units": 100, "occupied_units": 75 }],
            "tenant_rents": [{ "size": "10x10", "avg_rent": 120, "tenant_count": 75, "months_since_last_increase": 9 }],
            "competitor_rates": [
                { "competitor": "A", "size": "10x10", "rate": 120 },
                { "competitor": "B", "size": "10x10", "rate": 130 },
                { "competitor": "C", "size": "10x10", "rate": 140 }
            ]
        }),
    )
    .await;
    // South: 92 %, 20 move-ins and 5 move-outs against 25 (expect 16.7 by day 20): on pace.
    // 5x5: 200 units at 60, 184 occupied, no tenant rents: actual rent estimated 184 x 60 =
    // 11,040; GPR 12,000; area 200 x 25 = 5,000 sq ft (estimated).
    push(
        &app,
        json!({
            "facility": { "name": "South" }, "date": "2026-11-20", "occupancy_pct": 92,
            "move_ins": { "daily": 2, "mtd": 20, "target_monthly": 25 },
            "move_outs": { "daily": 0, "mtd": 5 },
            "unit_types": [{ "size": "5x5", "street_rate": 60, "total_units": 200, "occupied_units": 184 }]
        }),
    )
    .await;
    app.create_facility("Empty Lot").await;

    let body = get_ok(&app, "/api/v1/analytics/portfolio").await;
    // Rollup: 300 units, 259 occupied (86.33 %); actual rent 9,000 + 11,040 = 20,040
    // (estimated: South's), GPR 27,000, RevPAU 20,040 / 300 = 66.80, RevPAF 20,040 / 15,000 =
    // 1.336; MTD move-ins 25, move-outs 13, net 12.
    let r = &body["rollup"];
    assert_eq!(body["as_of"], "2026-11-20");
    assert_eq!(r["facilities"], 3);
    assert_eq!(r["facilities_with_data"], 2);
    assert_eq!(r["facilities_in_lease_up"], 0);
    assert_eq!(r["facilities_flagged"], 2);
    assert_eq!(r["total_units"], 300);
    assert_eq!(r["occupied_units"], 259);
    assert_close(&r["unit_occupancy_pct"], 86.33);
    assert_close(&r["actual_rent"], 20_040.0);
    assert_eq!(r["actual_rent_estimated"], true);
    assert_close(&r["gross_potential_rent"], 27_000.0);
    assert_close(&r["revpau"], 66.8);
    assert_close(&r["revpaf"], 1.336);
    assert_eq!(r["month"], "2026-11");
    assert_eq!(
        (
            r["move_ins_mtd"].clone(),
            r["move_outs_mtd"].clone(),
            r["net_absorption_mtd"].clone()
        ),
        (json!(25), json!(13), json!(12))
    );
    assert_eq!(body["thresholds"]["occupancy_below_pct"], 80.0);

    let fac = |name: &str| {
        body["facilities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["facility_name"] == name)
            .unwrap()
            .clone()
    };
    let north = fac("North");
    assert_eq!(north["previous_month_occupancy_pct"], 80.0);
    assert_close(&north["revpau"], 90.0);
    let flags: Vec<(String, f64, f64)> = north["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["flag"].as_str().unwrap().to_owned(),
                f["threshold"].as_f64().unwrap(),
                f["value"].as_f64().unwrap(),
            )
        })
        .collect();
    let stale = days_ago("2026-11-20") as f64;
    assert_eq!(
        flags,
        vec![
            ("occupancy_low_and_falling".to_owned(), 80.0, 75.0),
            ("move_outs_exceed_move_ins".to_owned(), 5.0, 8.0),
            ("move_in_pace_behind_target".to_owned(), 25.0, 75.0),
            (
                "street_above_p75_while_occupancy_falls".to_owned(),
                137.5,
                150.0
            ),
            ("no_recent_sync".to_owned(), 2.0, stale),
            ("large_ecri_runway".to_owned(), 15.0, 25.0),
        ]
    );
    let south = fac("South");
    let south_flags: Vec<&str> = south["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["flag"].as_str().unwrap())
        .collect();
    assert_eq!(south_flags, vec!["no_recent_sync"]);
    assert_eq!(south["actual_rent_estimated"], true);
    let empty = fac("Empty Lot");
    assert_eq!(empty["flags"], json!([]));
    assert_eq!(empty["revpau"], Value::Null);
    assert!(empty["reason"].as_str().unwrap().contains("no sync"));
    app.run_jobs().await;
}

/// The portfolio reads each facility's latest snapshot: re-pushing an older day leaves the
/// figures alone, an upload of a newer day replaces them, and the overview's record count
/// follows both.
#[tokio::test]
async fn the_portfolio_follows_a_repushed_older_day_and_an_upload() {
    let app = spawn_app().await;
    let day = |date: &str, occ: f64, rate: f64, occupied: u32| {
        json!({
            "facility": { "name": "West" }, "date": date, "occupancy_pct": occ,
            "unit_types": [{ "size": "10x10", "street_rate": rate, "total_units": 100, "occupied_units": occupied }]
        })
    };
    push(&app, day("2026-11-18", 70.0, 140.0, 70)).await;
    let id = push(&app, day("2026-11-20", 75.0, 150.0, 75)).await["facility"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let west = |body: &Value| body["facilities"][0].clone();
    let before = get_ok(&app, "/api/v1/analytics/portfolio").await;
    assert_eq!(west(&before)["as_of"], "2026-11-20");
    assert_close(&west(&before)["gross_potential_rent"], 15_000.0);

    // The older day again, with other figures: the latest snapshot is still 2026-11-20.
    push(&app, day("2026-11-18", 60.0, 120.0, 60)).await;
    let after_repush = get_ok(&app, "/api/v1/analytics/portfolio").await;
    assert_eq!(west(&after_repush), west(&before));
    assert_eq!(after_repush["rollup"], before["rollup"]);

    // An upload of 2026-11-21 (100 units at 160, 82 occupied) becomes the latest snapshot.
    let (s, up) = e2e::status_json(
        app.req(
            reqwest::Method::POST,
            &format!("/api/v1/facilities/{id}/upload"),
        )
        .header("content-type", "text/csv")
        .body(
            "date,size,tier,street_rate,occupancy_pct,move_ins_mtd,total_units,occupied_units\n\
             2026-11-21,10x10,,160,82,,100,82\n",
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(s, 200, "{up}");
    let after_upload = get_ok(&app, "/api/v1/analytics/portfolio").await;
    let w = west(&after_upload);
    assert_eq!(after_upload["as_of"], "2026-11-21");
    assert_eq!(w["as_of"], "2026-11-21");
    assert_eq!(w["total_units"], 100);
    assert_eq!(w["occupied_units"], 82);
    assert_close(&w["gross_potential_rent"], 16_000.0);
    assert_eq!(after_upload["rollup"]["occupied_units"], 82);
    assert_eq!(
        after_upload["rollup"]["facilities_with_data"],
        before["rollup"]["facilities_with_data"]
    );

    // Three stored days (the re-push replaced its day), all received this month.
    let status = get_ok(&app, "/api/v1/status").await;
    assert_eq!(status["usage"]["sync_records"], 3);
    assert_eq!(status["usage"]["sync_records_this_month"], 3);
    app.run_jobs().await;
}

/// The portfolio reads the latest day's unit types, tenant rents and the previous month in one
/// go: a re-push of the latest day with other unit types (or none) changes the street rate and
/// the ECRI gap it reports.
#[tokio::test]
async fn the_portfolio_follows_the_latest_days_unit_types() {
    let app = spawn_app().await;
    push(
        &app,
        json!({ "facility": { "name": "East" }, "date": "2026-10-30", "occupancy_pct": 90 }),
    )
    .await;
    let latest = |unit_types: Value| {
        json!({
            "facility": { "name": "East" }, "date": "2026-11-20", "occupancy_pct": 85,
            "unit_types": unit_types,
            "tenant_rents": [{ "size": "10x10", "avg_rent": 115, "tenant_count": 80 }]
        })
    };
    let east = |body: &Value| body["facilities"][0].clone();
    // 10x10 in two tiers, weighted by units: (150 x 60 + 120 x 40) / 100 = 138; gap against
    // 80 tenants at 115: 138 / 115 - 1 = 20 %.
    push(
        &app,
        latest(json!([
            { "size": "10x10", "tier": "climate", "street_rate": 150, "total_units": 60, "occupied_units": 51 },
            { "size": "10x10", "tier": "drive-up", "street_rate": 120, "total_units": 40, "occupied_units": 34 }
        ])),
    )
    .await;
    let body = get_ok(&app, "/api/v1/analytics/portfolio").await;
    let e = east(&body);
    assert_eq!(e["as_of"], "2026-11-20");
    assert_eq!(e["previous_month_occupancy_pct"], 90.0);
    assert_eq!(e["total_units"], 100);
    assert_close(&e["ecri_gap_pct"], 20.0);
    assert_close(&e["gross_potential_rent"], 13_800.0);

    // The same day again without unit types: no street rate, so no gap and no units.
    push(&app, latest(json!([]))).await;
    let e = east(&get_ok(&app, "/api/v1/analytics/portfolio").await);
    assert_eq!(e["ecri_gap_pct"], Value::Null);
    assert_eq!(e["total_units"], Value::Null);
    assert_eq!(e["previous_month_occupancy_pct"], 90.0);

    // And with one tier at 130: 130 / 115 - 1 = 13.04 %.
    push(
        &app,
        latest(json!([{ "size": "10x10", "street_rate": 130, "total_units": 100, "occupied_units": 85 }])),
    )
    .await;
    let e = east(&get_ok(&app, "/api/v1/analytics/portfolio").await);
    assert_close(&e["ecri_gap_pct"], 13.04);
    assert_eq!(e["total_units"], 100);

    // Two cohorts of the size and one of a size without a street rate: every cohort of 10x10
    // counts by its tenants, 100 x 130 / (80 x 115 + 20 x 140) - 1 = 8.33 %; the 5x5 cohort
    // has no street rate and is left out.
    let mut cohorts = latest(
        json!([{ "size": "10x10", "street_rate": 130, "total_units": 100, "occupied_units": 85 }]),
    );
    cohorts["tenant_rents"] = json!([
        { "size": "10x10", "avg_rent": 115, "tenant_count": 80 },
        { "size": "10x10", "avg_rent": 140, "tenant_count": 20 },
        { "size": "5x5", "avg_rent": 40, "tenant_count": 30 }
    ]);
    push(&app, cohorts).await;
    let e = east(&get_ok(&app, "/api/v1/analytics/portfolio").await);
    assert_close(&e["ecri_gap_pct"], 8.33);
    // A snapshot stored before the per-size sums were (null): the sums come from its rows,
    // and rows that do not read (a rent in words, a fractional count, not an object) are left
    // out of the figure rather than failing the report.
    let facility_id: uuid::Uuid = e["facility_id"].as_str().unwrap().parse().unwrap();
    let stored: Value = sqlx::query_scalar(
        "SELECT tenant_rent_by_size FROM sync_records WHERE facility_id = $1
         ORDER BY snapshot_date DESC LIMIT 1",
    )
    .bind(facility_id)
    .fetch_one(app.db())
    .await
    .unwrap();
    assert_eq!(
        stored,
        json!({ "10x10": [100.0, 12_000.0], "5x5": [30.0, 1_200.0] })
    );
    sqlx::query(
        r#"UPDATE sync_records SET tenant_rent_by_size = NULL, tenant_rents = tenant_rents || '[
               {"size": "10x10", "avg_rent": "high", "tenant_count": 50},
               {"size": "10x10", "avg_rent": 10, "tenant_count": 2.5}, 7]'::jsonb
           WHERE facility_id = $1"#,
    )
    .bind(facility_id)
    .execute(app.db())
    .await
    .unwrap();
    let e = east(&get_ok(&app, "/api/v1/analytics/portfolio").await);
    assert_close(&e["ecri_gap_pct"], 8.33);
    app.run_jobs().await;
}

#[tokio::test]
async fn the_demo_portfolio_reads_like_an_operators() {
    let app = e2e::spawn_app().await;
    let today = chrono::Utc::now().date_naive();
    jobs::seed::seed_bulk(app.db(), app.tenant.company_id.into(), 8, 120, today, 2)
        .await
        .unwrap();
    let body = e2e::get_ok(&app, "/api/v1/analytics/portfolio").await;
    let num = |v: &serde_json::Value| v.as_f64().unwrap_or_else(|| panic!("{v} is a number"));
    let r = &body["rollup"];
    // Every occupied tenant's rent is sent, spread around street: economic occupancy a little
    // under unit occupancy, RevPAF about a dollar per square foot a month at US-like rates.
    assert_eq!(num(&r["actual_rent_coverage_pct"]), 100.0, "{r}");
    assert_eq!(r["actual_rent_estimated"], false);
    let economic = num(&r["economic_occupancy_pct"]);
    assert!(
        (75.0..=95.0).contains(&economic),
        "economic occupancy {economic}"
    );
    let revpaf = num(&r["revpaf"]);
    assert!((0.7..=1.5).contains(&revpaf), "RevPAF {revpaf}");
    // The invariant on every facility: over 50 % occupied with rents near street, economic
    // occupancy stays within 50-120 %, and the rent gap stays within a few tenths of street.
    for f in body["facilities"].as_array().unwrap() {
        let occupancy = num(&f["occupancy_pct"]);
        let economic = num(&f["economic_occupancy_pct"]);
        if occupancy > 50.0 {
            assert!((50.0..=120.0).contains(&economic), "{f}");
        }
        let gap = num(&f["rent_gap_pct"]);
        assert!((-20.0..=30.0).contains(&gap), "{f}");
    }
    // Every facility sent leads.
    let leads = e2e::get_ok(&app, "/api/v1/analytics/leads").await;
    assert_eq!(leads["facilities_with_leads"], 8);
    assert_eq!(leads["facilities_reporting"], 8);
    // Every facility's latest day carries its rent roll: the ECRI engine answers tenant by
    // tenant, one per occupied unit, raising some, holding the recent move-ins and the business
    // tenants.
    let f = &body["facilities"][0];
    let id = f["facility_id"].as_str().unwrap();
    app.ecri_now(&id).await;
    let e = e2e::get_ok(&app, &format!("/api/v1/facilities/{id}/ecri")).await;
    assert_eq!(e["basis"], "rent_roll", "{}", e["reason"]);
    let lines = e["tenants"].as_array().unwrap();
    let occupied: u64 = sqlx::query_scalar::<_, i32>(
        "SELECT occupied_units FROM sync_records WHERE facility_id = $1::uuid
         ORDER BY snapshot_date DESC LIMIT 1",
    )
    .bind(id)
    .fetch_one(app.db())
    .await
    .unwrap() as u64;
    assert_eq!(lines.len() as u64, occupied);
    let held = |g: &str| {
        lines
            .iter()
            .filter(|l| l["guardrails"] == serde_json::json!([g]))
            .count()
    };
    assert!(
        held("excluded_flag") > 0 && held("months_since_move_in") > 0,
        "{}",
        e["totals"]
    );
    let raised = e["totals"]["tenants_affected"].as_u64().unwrap();
    assert!(raised > 0 && raised < occupied, "{}", e["totals"]);
    app.run_jobs().await;
}
