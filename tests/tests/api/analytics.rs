//! The analytics endpoints end to end: small hand-built portfolios pushed through
//! `POST /api/v1/sync`, then each endpoint read and its figures checked against the numbers
//! worked out by hand in the comments. Formulas: docs/analytics.md.

use e2e::{get_ok, push_ok as push, spawn_app};
use serde_json::{json, Value};

fn close(v: &Value, want: f64) -> bool {
    v.as_f64().is_some_and(|x| (x - want).abs() < 0.006)
}

#[track_caller]
fn assert_close(v: &Value, want: f64) {
    assert!(close(v, want), "{v} is not {want}");
}

#[tokio::test]
async fn analytics_seasonality_by_hand() {
    let app = spawn_app().await;
    // Month-end snapshots: June 30 with 60 move-ins MTD (2.0 a day), July 31 with 31 (1.0 a
    // day); the current month is August (latest snapshot Aug 15, 30 MTD: 2.0 a day).
    // 10x10 move-ins MTD: 30 (1.0/day), 31 (1.0/day), 15 (1.0/day).
    // Own months June and July (>= 20 facility-days each); the prior (engine's national
    // prior) has June 1.15, July 1.14, August 1.08 and averages 1.0.
    // Own paces are scaled to the prior's level on the same months:
    // June 2.0 x 1.145 / 1.5 = 1.52667, July 1.0 x 1.145 / 1.5 = 0.76333; the twelve still
    // average 1.0. Base pace 1.5 / 1.145 = 1.31004; August expected 1.31004 x 1.08 = 1.41485;
    // 2.0 / 1.41485 - 1 = +41.36 %.
    // Per size 10x10: both own months 1.0/day, so both 1.145; base 1 / 1.145 = 0.87336;
    // August expected 0.94323; 1.0 / 0.94323 - 1 = +6.02 % (in line).
    let unit = |mtd: u32| json!([{ "size": "10x10", "street_rate": 100, "move_ins_mtd": mtd }]);
    let mut id = String::new();
    for (date, mtd, size_mtd) in [
        ("2026-06-30", 60, 30),
        ("2026-07-31", 31, 31),
        ("2026-08-15", 30, 15),
    ] {
        let res = push(
            &app,
            json!({ "facility": { "name": "Pace" }, "date": date, "occupancy_pct": 90,
                    "move_ins": { "mtd": mtd }, "unit_types": unit(size_mtd) }),
        )
        .await;
        id = res["facility"]["id"].as_str().unwrap().to_owned();
    }
    app.create_facility("Empty Lot").await;

    let body = get_ok(
        &app,
        &format!("/api/v1/analytics/seasonality?facility_id={id}"),
    )
    .await;
    assert_eq!(body["scope"], "facility");
    assert_eq!(body["as_of"], "2026-08-15");
    assert_eq!(
        (
            body["own_data_months"].clone(),
            body["prior_months"].clone()
        ),
        (json!(2), json!(10))
    );
    let months = body["months"].as_array().unwrap();
    assert_eq!(months.len(), 12);
    assert_close(&months[5]["index"], 1.5267);
    assert_eq!(months[5]["basis"], "own");
    assert_close(&months[6]["index"], 0.7633);
    assert_close(&months[7]["index"], 1.08);
    assert_eq!(months[7]["basis"], "prior");
    assert_close(&months[0]["index"], 0.85);
    let mean: f64 = months
        .iter()
        .map(|m| m["index"].as_f64().unwrap())
        .sum::<f64>()
        / 12.0;
    assert!((mean - 1.0).abs() < 1e-9);
    let cur = &body["current_month"];
    assert_eq!(cur["month"], 8);
    assert_close(&cur["pace"], 2.0);
    assert_close(&cur["expected_pace"], 1.4148);
    assert_close(&cur["vs_profile_pct"], 41.36);
    let advice = body["advisory"].as_str().unwrap();
    assert!(advice.contains("41% above"), "{advice}");
    assert!(advice.contains("past move-in pace only"), "{advice}");

    // Company-wide: the empty facility adds nothing, so the same profile.
    let company = get_ok(&app, "/api/v1/analytics/seasonality").await;
    assert_eq!(company["scope"], "company");
    assert_eq!(company["months"], body["months"]);

    let size = get_ok(
        &app,
        &format!("/api/v1/analytics/seasonality?facility_id={id}&size=10X10"),
    )
    .await;
    assert_eq!(size["scope"], "size");
    assert_eq!(size["size"], "10x10");
    assert_close(&size["months"][5]["index"], 1.145);
    assert_close(&size["months"][6]["index"], 1.145);
    assert_close(&size["current_month"]["vs_profile_pct"], 6.02);
    assert!(size["advisory"].as_str().unwrap().contains("in line"));

    // July re-sent with 62 10x10 move-ins (2.0 a day): the per-size rollup follows the new
    // latest snapshot. Own paces June 1.0, July 2.0 give June 1.0 x 1.145 / 1.5 = 0.76333 and
    // July 2.0 x 1.145 / 1.5 = 1.52667; August expected 1.41485 as above, so the current
    // 1.0 a day is 1.0 / 1.41485 - 1 = -29.32 %.
    push(
        &app,
        json!({ "facility": { "name": "Pace" }, "date": "2026-07-31", "occupancy_pct": 90,
                "move_ins": { "mtd": 31 }, "unit_types": unit(62) }),
    )
    .await;
    let size = get_ok(&app, "/api/v1/analytics/seasonality?size=10x10").await;
    assert_close(&size["months"][5]["index"], 0.7633);
    assert_close(&size["months"][6]["index"], 1.5267);
    assert_close(&size["current_month"]["vs_profile_pct"], -29.32);
    // A later July snapshot without unit types becomes July's latest: July has no per-size
    // figures any more, June alone is own data (1.0 a day, scaled to its prior 1.15).
    push(
        &app,
        json!({ "facility": { "name": "Pace" }, "date": "2026-07-31", "occupancy_pct": 90,
                "move_ins": { "mtd": 31 } }),
    )
    .await;
    let size = get_ok(&app, "/api/v1/analytics/seasonality?size=10x10").await;
    assert_eq!(size["own_data_months"], 1);
    assert_close(&size["months"][5]["index"], 1.15);
    assert_eq!(size["months"][6]["basis"], "prior");

    // A size with no figures, and a facility with no data: the prior, with a reason.
    let other = get_ok(&app, "/api/v1/analytics/seasonality?size=5x5").await;
    assert_eq!(other["own_data_months"], 0);
    assert_close(&other["months"][0]["index"], 0.85);
    assert!(other["reason"].as_str().unwrap().contains("5x5"));
    app.run_jobs().await;
}

#[tokio::test]
async fn lead_conversion_counts_only_facilities_that_sent_leads_and_a_short_history_says_so() {
    let app = spawn_app().await;
    // 40 days of data, Oct 12 - Nov 20. "Leads" sends web 1 a day and 1 move-in on Nov 11 and
    // Nov 20; "No Leads" sends no leads and 1 move-in a day on Nov 13 - 20.
    // 30d (Oct 22 - Nov 20): 30 leads; move-ins 2 + 8 = 10, of which 2 on days with leads:
    // conversion 2 / 30 = 6.67 % (not 10 / 30 = 33.33 %); 1 of 2 facilities sent leads.
    // The previous 30 days (Sep 22 - Oct 21) hold data from Oct 12 only: 10 of 30 days.
    let start = chrono::NaiveDate::from_ymd_opt(2026, 10, 12).unwrap();
    for i in 0..40 {
        let date = start + chrono::Days::new(i);
        let day = date.format("%Y-%m-%d").to_string();
        let with_leads_mi = u32::from(day == "2026-11-11" || day == "2026-11-20");
        push(
            &app,
            json!({ "facility": { "name": "Leads" }, "date": day,
                    "move_ins": { "daily": with_leads_mi },
                    "leads": [{ "channel": "web", "count": 1 }] }),
        )
        .await;
        let no_leads_mi = u32::from(day.as_str() >= "2026-11-13");
        push(
            &app,
            json!({ "facility": { "name": "No Leads" }, "date": day,
                    "move_ins": { "daily": no_leads_mi } }),
        )
        .await;
    }
    let body = get_ok(&app, "/api/v1/analytics/leads?period=30d").await;
    assert_eq!(body["total_leads"], 30);
    assert_eq!(body["move_ins"], 10);
    assert_eq!(body["conversion_move_ins"], 2);
    assert_close(&body["conversion_pct"], 6.67);
    assert_eq!(body["facilities_reporting"], 2);
    assert_eq!(body["facilities_with_leads"], 1);
    assert_eq!(body["snapshots"], 60);
    assert_eq!(body["snapshots_with_leads"], 30);
    assert_eq!(body["period_days_covered"], 30);
    assert_eq!(body["previous_period_days_covered"], 10);
    assert_eq!(body["channels"][0]["previous_period_leads"], 10);
    // 90 days reach back before the data on both sides.
    let long = get_ok(&app, "/api/v1/analytics/leads?period=90d").await;
    assert_eq!(long["period_days_covered"], 40);
    assert_eq!(long["previous_period_days_covered"], 0);
    // The page says whose move-ins convert and that the previous period is partial.
    let cookie = app.session_cookie().await;
    let page = app
        .page_text(&cookie, "/app/analytics/leads?period=30d")
        .await;
    assert!(
        page.contains("2 move-ins of the 1 of 2 facilities that sent leads"),
        "{page}"
    );
    assert!(page.contains("only 10 of them have any"), "{page}");
    app.run_jobs().await;
}

#[tokio::test]
async fn analytics_leads_by_hand() {
    let app = spawn_app().await;
    // Nov 1 is first sent with web 99, email 3 and 9 move-ins, then re-sent: only the second
    // version counts (email never appears). Latest snapshot Nov 20: the 30-day period is Oct 22 - Nov 20, the previous one
    // Sep 22 - Oct 21; 90 days: Aug 23 - Nov 20.
    // Oct 1 (previous 30 days): web 10, referral 4, 3 move-ins.
    // Nov 1: web 20, phone 10, 4 move-ins. Nov 20: web 10, phone 0, 5 move-ins.
    // 30d: web 30, phone 10 -> 40 leads, shares 75 / 25, referral 0 after 4 before: dead;
    //      9 move-ins / 40 = 22.5 %.
    // 90d: web 40, phone 10, referral 4 -> 54 leads, shares 74.07 / 18.52 / 7.41;
    //      12 / 54 = 22.22 %; nothing dead.
    push(&app, json!({ "facility": { "name": "Funnel" }, "date": "2026-11-01", "move_ins": { "daily": 9 },
                       "leads": [{ "channel": "web", "count": 99 }, { "channel": "email", "count": 3 }] })).await;
    let mut funnel_id = String::new();
    for (date, leads, mi) in [
        (
            "2026-10-01",
            json!([{ "channel": "web", "count": 10 }, { "channel": "Referral", "count": 4 }]),
            3,
        ),
        (
            "2026-11-01",
            json!([{ "channel": "web", "count": 20 }, { "channel": "phone", "count": 10 }]),
            4,
        ),
        (
            "2026-11-20",
            json!([{ "channel": "web", "count": 10 }, { "channel": "phone", "count": 0 }]),
            5,
        ),
    ] {
        let res = push(&app, json!({ "facility": { "name": "Funnel" }, "date": date, "move_ins": { "daily": mi }, "leads": leads })).await;
        funnel_id = res["facility"]["id"].as_str().unwrap().to_owned();
    }
    let body = get_ok(&app, "/api/v1/analytics/leads?period=30d").await;
    assert_eq!(body["as_of"], "2026-11-20");
    assert_eq!(body["period_start"], "2026-10-22");
    assert_eq!(body["total_leads"], 40);
    assert_eq!(body["move_ins"], 9);
    assert_close(&body["conversion_pct"], 22.5);
    let chans: Vec<(String, u64, Value, bool, String)> = body["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["channel"].as_str().unwrap().to_owned(),
                c["leads"].as_u64().unwrap(),
                c["share_pct"].clone(),
                c["dead"].as_bool().unwrap(),
                c["conversion"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        chans,
        vec![
            ("web".into(), 30, json!(75.0), false, "not_measured".into()),
            (
                "phone".into(),
                10,
                json!(25.0),
                false,
                "not_measured".into()
            ),
            (
                "referral".into(),
                0,
                json!(0.0),
                true,
                "not_measured".into()
            ),
        ]
    );
    assert_eq!(body["dead_channels"], json!(["referral"]));
    assert!(body["per_channel_conversion"]
        .as_str()
        .unwrap()
        .contains("not measured"));
    // Without a period: 30 days. One facility (read from its own rows) gives the same funnel as
    // the company (read from the daily company totals).
    assert_eq!(
        get_ok(&app, "/api/v1/analytics/leads").await["total_leads"],
        40
    );
    let one = get_ok(
        &app,
        &format!("/api/v1/analytics/leads?facility_id={funnel_id}&period=30d"),
    )
    .await;
    assert_eq!(one["channels"], body["channels"]);
    assert_eq!(
        (one["move_ins"].clone(), one["snapshots"].clone()),
        (json!(9), json!(2))
    );

    let q = get_ok(&app, "/api/v1/analytics/leads?period=90d").await;
    assert_eq!(q["total_leads"], 54);
    assert_eq!(q["move_ins"], 12);
    assert_close(&q["conversion_pct"], 22.22);
    let shares: Vec<f64> = q["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["share_pct"].as_f64().unwrap())
        .collect();
    assert_eq!(shares, vec![74.07, 18.52, 7.41]);
    assert_eq!(q["dead_channels"], json!([]));

    // A facility without data answers with empty figures and a reason.
    let empty = app.create_facility("Empty Lot").await;
    let e = get_ok(
        &app,
        &format!("/api/v1/analytics/leads?facility_id={empty}&period=90d"),
    )
    .await;
    assert_eq!(e["total_leads"], 0);
    assert_eq!(e["conversion_pct"], Value::Null);
    assert!(e["reason"].as_str().unwrap().contains("no sync"));
    app.run_jobs().await;
}

#[tokio::test]
async fn partial_tenant_rents_are_counted_and_estimated_and_the_rent_gap_means_one_thing() {
    let app = spawn_app().await;
    // 100 units of 10x10 at 130, 90 occupied, and one cohort of 10 tenants at 120 sent: the
    // 80 others are estimated at the listed average, so actual rent is 10,800 (not 1,200),
    // economic occupancy 10,800 / 13,000 = 83.08 % (not 9.23 %), 11.11 % of it sent.
    let res = push(
        &app,
        json!({ "facility": { "name": "Partial" }, "date": "2026-11-20",
                "unit_types": [{ "size": "10x10", "street_rate": 130, "total_units": 100, "occupied_units": 90 }],
                "tenant_rents": [{ "size": "10x10", "avg_rent": 120, "tenant_count": 10, "months_since_last_increase": 3 }] }),
    )
    .await;
    let partial = res["facility"]["id"].as_str().unwrap().to_owned();
    // Every tenant pays exactly street, a fifth of the units is empty: no rent gap (as the
    // ECRI report says), a 20 % revenue gap (all of it vacancy).
    let res = push(
        &app,
        json!({ "facility": { "name": "At Street" }, "date": "2026-11-20",
                "unit_types": [{ "size": "10x10", "street_rate": 100, "total_units": 100, "occupied_units": 80 }],
                "tenant_rents": [{ "size": "10x10", "avg_rent": 100, "tenant_count": 80, "months_since_last_increase": 3 }] }),
    )
    .await;
    let at_street = res["facility"]["id"].as_str().unwrap().to_owned();

    let one = |id: String| {
        let app = &app;
        async move {
            get_ok(app, &format!("/api/v1/analytics/revpas?facility_id={id}")).await["facilities"]
                [0]
            .clone()
        }
    };
    let p = one(partial.clone()).await;
    assert_close(&p["actual_rent"], 10_800.0);
    assert_close(&p["economic_occupancy_pct"], 83.08);
    assert_eq!(p["actual_rent_estimated"], true);
    assert_close(&p["actual_rent_coverage_pct"], 11.11);
    // Street rent of the occupied units 11,700: 900 under street, 8.33 % of the in-place rent
    // (130 / 120 - 1).
    assert_close(&p["rent_gap_pct"], 8.33);

    let s = one(at_street.clone()).await;
    assert_close(&s["rent_gap_pct"], 0.0);
    assert_close(&s["revenue_gap_pct"], 20.0);
    assert_close(&s["economic_occupancy_pct"], 80.0);
    assert_eq!(s["actual_rent_estimated"], false);

    // The portfolio says the same, with the coverage weighted by occupied units
    // (10 + 80 of 170 sent: 52.94 %).
    let portfolio = get_ok(&app, "/api/v1/analytics/portfolio").await;
    let r = &portfolio["rollup"];
    assert_close(&r["actual_rent"], 18_800.0);
    assert_eq!(r["actual_rent_estimated"], true);
    assert_close(&r["actual_rent_coverage_pct"], 52.94);
    // And the pages say the rent is partly estimated, with how much was sent.
    let cookie = app.session_cookie().await;
    for path in ["/app/portfolio", "/app/analytics/revpas"] {
        let page = app.page_text(&cookie, path).await;
        assert!(
            page.contains("partly estimated: rent (52.9\u{a0}% sent)"),
            "{path}: {page}"
        );
    }
    app.run_jobs().await;
}

#[tokio::test]
async fn analytics_revpas_by_hand() {
    let app = spawn_app().await;
    // A (rentable area 20,000 sq ft sent): 10x10 100 units at 100 (90 occupied), 10x20 50 at 200
    // (40 occupied): GPR 20,000. Nov 20 rents 90 x 95 + 40 x 190 = 16,150: RevPAU 16,150 / 150 =
    // 107.67, RevPAF 16,150 / 20,000 = 0.8075, revenue gap 3,850 (19.25 % of GPR), economic
    // occupancy 80.75 %; the occupied units' street rent is 90 x 100 + 40 x 200 = 17,000, so the
    // rent gap is 850 (850 / 16,150 = 5.26 % under street).
    // Oct 31 rents 90 x 90 + 40 x 180 = 15,300: RevPAU 102.00, RevPAF 0.765.
    // B (area 5,000 sq ft, no unit counts): 5x5 at 50, 80 % occupied: 5,000 / 25 = 200 units
    // (estimated), 160 occupied, GPR 10,000, actual estimated 8,000: RevPAU 40, RevPAF 1.6.
    // Ranked by RevPAF: B (1.6) then A (0.8075). Portfolio: 350 units, 24,150 rent,
    // 25,000 sq ft: RevPAU 69.00, RevPAF 0.966, GPR 30,000, revenue gap 5,850 (19.5 %); rent gap
    // 25,000 - 24,150 = 850 (3.52 %); rent sent for A's 130 occupied units of 290: 44.83 %.
    let a_types = json!([
        { "size": "10x10", "street_rate": 100, "total_units": 100, "occupied_units": 90 },
        { "size": "10x20", "street_rate": 200, "total_units": 50, "occupied_units": 40 }
    ]);
    for (date, r1, r2) in [("2026-10-31", 90, 180), ("2026-11-20", 95, 190)] {
        push(
            &app,
            json!({ "facility": { "name": "A", "rentable_sqft": 20000 }, "date": date, "unit_types": a_types,
                    "tenant_rents": [{ "size": "10x10", "avg_rent": r1, "tenant_count": 90 },
                                     { "size": "10x20", "avg_rent": r2, "tenant_count": 40 }] }),
        )
        .await;
    }
    push(
        &app,
        json!({ "facility": { "name": "B", "rentable_sqft": 5000 }, "date": "2026-11-20", "occupancy_pct": 80,
                "unit_types": [{ "size": "5x5", "street_rate": 50 }] }),
    )
    .await;
    app.create_facility("Empty Lot").await;

    let body = get_ok(&app, "/api/v1/analytics/revpas").await;
    let names: Vec<(&str, Value)> = body["facilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["facility_name"].as_str().unwrap(), f["rank"].clone()))
        .collect();
    assert_eq!(
        names,
        vec![("B", json!(1)), ("A", json!(2)), ("Empty Lot", Value::Null)]
    );
    let b = &body["facilities"][0];
    assert_close(&b["revpau"], 40.0);
    assert_close(&b["revpaf"], 1.6);
    assert_eq!(b["units_estimated"], true);
    assert_eq!(b["actual_rent_estimated"], true);
    assert_eq!(b["rentable_sqft_estimated"], false);
    let a = &body["facilities"][1];
    assert_close(&a["revpau"], 107.67);
    assert_close(&a["revpaf"], 0.8075);
    assert_close(&a["revenue_gap"], 3_850.0);
    assert_close(&a["revenue_gap_pct"], 19.25);
    assert_close(&a["rent_gap"], 850.0);
    assert_close(&a["rent_gap_pct"], 5.26);
    assert_close(&a["economic_occupancy_pct"], 80.75);
    assert_eq!(a["actual_rent_estimated"], false);
    assert_close(&a["actual_rent_coverage_pct"], 100.0);
    assert_close(&b["actual_rent_coverage_pct"], 0.0);
    assert!(body["facilities"][2]["reason"]
        .as_str()
        .unwrap()
        .contains("no sync"));
    let p = &body["portfolio"];
    assert_eq!(p["total_units"], 350);
    assert_close(&p["revpau"], 69.0);
    assert_close(&p["revpaf"], 0.966);
    assert_close(&p["revenue_gap"], 5_850.0);
    assert_close(&p["revenue_gap_pct"], 19.5);
    assert_close(&p["rent_gap"], 850.0);
    assert_close(&p["rent_gap_pct"], 3.52);
    assert_close(&p["actual_rent_coverage_pct"], 44.83);
    assert!(body["basis"]
        .as_str()
        .unwrap()
        .contains("before concessions"));
    let trend = body["trend"].as_array().unwrap();
    assert_eq!(trend.len(), 12);
    assert_eq!(trend[0]["month"], "2025-12");
    assert_eq!(trend[0]["facilities"], 0);
    assert_eq!(trend[0]["revpau"], Value::Null);
    assert_eq!(trend[10]["month"], "2026-10");
    assert_eq!(trend[10]["facilities"], 1);
    assert_close(&trend[10]["revpau"], 102.0);
    assert_close(&trend[10]["revpaf"], 0.765);
    assert_eq!(trend[11]["month"], "2026-11");
    assert_close(&trend[11]["revpau"], 69.0);

    // One facility.
    let id = a["facility_id"].as_str().unwrap();
    let one = get_ok(&app, &format!("/api/v1/analytics/revpas?facility_id={id}")).await;
    assert_eq!(one["facilities"].as_array().unwrap().len(), 1);
    assert_close(&one["portfolio"]["revpau"], 107.67);
    app.run_jobs().await;
}

#[tokio::test]
async fn analytics_bulk_seed_matches_the_ingest_path() {
    let app = spawn_app().await;
    let last = chrono::NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
    let company = app.tenant.company_id;
    let figures = || {
        let db = app.db().clone();
        async move {
            let rows: Vec<(String, String)> = sqlx::query_as(
                "SELECT f.name || ' ' || s.snapshot_date,
                        concat_ws('|', s.occupancy_pct, s.move_ins_mtd, s.total_units, s.occupied_units,
                                  s.rentable_sqft, s.gross_potential_rent, s.actual_rent, s.leads_total,
                                  s.units_estimated, s.actual_rent_estimated, s.tenant_rents::text,
                                  (SELECT count(*) FROM sync_unit_types u WHERE u.sync_id = s.id),
                                  (SELECT count(*) FROM competitor_rates c WHERE c.sync_id = s.id),
                                  (SELECT sum(lead_count) FROM sync_leads l WHERE l.sync_id = s.id))
                 FROM sync_records s JOIN facilities f ON f.id = s.facility_id
                 WHERE s.company_id = $1 ORDER BY 1",
            )
            .bind(company)
            .fetch_all(&db)
            .await
            .unwrap();
            rows
        }
    };
    // The generator is deterministic per company: first through the ingest path (one
    // transaction per day), then in bulk over the same days, which replaces them. Every stored
    // figure is the same whichever path wrote it.
    let per_day = jobs::seed::seed(app.db(), company.into(), 10, 45, last)
        .await
        .unwrap();
    let before = figures().await;
    let bulk = jobs::seed::seed_bulk(app.db(), company.into(), 10, 45, last, 2)
        .await
        .unwrap();
    assert_eq!((per_day.records, bulk.records), (450, 450));
    let after = figures().await;
    assert_eq!(before.len(), 450);
    assert_eq!(after, before);
    // Every summary table equals one computed afresh from the rows it summarises.
    let count = |sql: &'static str| {
        let db = app.db().clone();
        async move {
            let n: i64 = sqlx::query_scalar(sql)
                .bind(company)
                .fetch_one(&db)
                .await
                .unwrap();
            n
        }
    };
    // The monthly rollup.
    let monthly = count(
        "SELECT count(*) FROM (
             SELECT facility_id, date_trunc('month', snapshot_date::timestamp)::date AS month,
                    count(*)::int AS days, sum(move_ins_daily)::int AS mi, max(snapshot_date) AS last
             FROM sync_records WHERE company_id = $1 GROUP BY 1, 2) fresh
         FULL JOIN (SELECT * FROM facility_months WHERE company_id = $1) m USING (facility_id, month)
         WHERE m.days_reported IS DISTINCT FROM fresh.days OR m.move_ins_daily_sum IS DISTINCT FROM fresh.mi
            OR m.last_date IS DISTINCT FROM fresh.last",
    );
    assert_eq!(monthly.await, 0);
    // The per-size rollup (and it has rows: the generator sends move-ins per size).
    let per_size = count(
        "SELECT count(*) FROM (
             SELECT m.facility_id, m.month, t.size, sum(t.move_ins_mtd)::int AS mi, m.last_date
             FROM facility_months m JOIN sync_unit_types t ON t.sync_id = m.last_sync_id
             WHERE m.company_id = $1 AND t.move_ins_mtd IS NOT NULL GROUP BY 1, 2, 3, 5) fresh
         FULL JOIN (SELECT * FROM facility_size_months WHERE company_id = $1) m
             USING (facility_id, month, size)
         WHERE m.move_ins_mtd IS DISTINCT FROM fresh.mi OR m.last_date IS DISTINCT FROM fresh.last_date",
    );
    assert_eq!(per_size.await, 0);
    assert!(count("SELECT count(*) FROM facility_size_months WHERE company_id = $1").await > 0);
    // Each competitor's latest observation of each tier (the generator names climate and
    // drive-up rates).
    let competitors = count(
        "SELECT count(*) FROM (
             SELECT DISTINCT ON (c.facility_id, c.size, lower(btrim(c.competitor)), lower(coalesce(btrim(c.tier), '')))
                    c.facility_id, c.size, lower(btrim(c.competitor)) AS competitor_key,
                    lower(coalesce(btrim(c.tier), '')) AS tier_key, c.tier, c.rate, c.observed_on
             FROM competitor_rates c WHERE c.company_id = $1 AND c.rate > 0
             ORDER BY c.facility_id, c.size, lower(btrim(c.competitor)), lower(coalesce(btrim(c.tier), '')),
                      c.observed_on DESC, c.id DESC) fresh
         FULL JOIN (SELECT l.* FROM competitor_latest l JOIN facilities f ON f.id = l.facility_id
                    WHERE f.company_id = $1) l USING (facility_id, size, competitor_key, tier_key)
         WHERE l.rate IS DISTINCT FROM fresh.rate OR l.observed_on IS DISTINCT FROM fresh.observed_on
            OR l.tier IS DISTINCT FROM fresh.tier",
    );
    assert_eq!(competitors.await, 0);
    assert!(
        count(
            "SELECT count(*) FROM competitor_latest l JOIN facilities f ON f.id = l.facility_id
               WHERE f.company_id = $1 AND l.tier_key <> ''"
        )
        .await
            > 0
    );
    // Lease-up history as the ingest job records it: the generator's tenth facility starts at
    // 35 % occupancy, so it entered lease-up.
    let events: Vec<(String, String)> = sqlx::query_as(
        "SELECT f.name, e.to_mode FROM lease_up_events e JOIN facilities f ON f.id = e.facility_id
         WHERE e.company_id = $1 ORDER BY f.name, e.snapshot_date",
    )
    .bind(company)
    .fetch_all(app.db())
    .await
    .unwrap();
    assert!(
        events.contains(&("Demo Storage 0010".to_owned(), "lease_up".to_owned())),
        "{events:?}"
    );
    let body = get_ok(&app, "/api/v1/analytics/revpas").await;
    assert_eq!(body["facilities"].as_array().unwrap().len(), 10);
    assert_eq!(body["trend"][11]["facilities"], 10);
    app.run_jobs().await;
}

/// Replaces what changes from run to run (ids, dates, times, and the days since the portfolio's
/// last sync, which grow by one a day) with placeholders, so a report's snapshot holds only its
/// figures and its shape.
fn redacted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let stale_flag = m.get("flag") == Some(&json!("no_recent_sync"));
            Value::Object(
                m.iter()
                    .map(|(k, v)| {
                        let v = match k.as_str() {
                            "days_since_sync" => json!("[days]"),
                            "value" if stale_flag => json!("[days]"),
                            "detail" if stale_flag => json!("last sync [days] days ago"),
                            _ => redacted(v),
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(redacted).collect()),
        Value::String(s) if uuid::Uuid::parse_str(s).is_ok() => json!("[id]"),
        Value::String(s) if chrono::DateTime::parse_from_rfc3339(s).is_ok() => json!("[time]"),
        Value::String(s) if chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok() => {
            json!("[date]")
        }
        Value::String(s)
            if chrono::NaiveDate::parse_from_str(&format!("{s}-01"), "%Y-%m-%d").is_ok() =>
        {
            json!("[month]")
        }
        other => other.clone(),
    }
}

/// Every analytics report of one fixed portfolio (three facilities, five weeks of realistic
/// days in early 2025), against the recorded answers (`snapshots/`): a change of a figure, a
/// name or a shape shows as a diff to review (`cargo insta review`). The data lies well before
/// any day the test runs on, so windows that end today (the lead funnel's periods) hold none of
/// it whatever the date, and the answers do not change from day to day.
#[tokio::test]
async fn every_report_is_the_recorded_one() {
    let app = spawn_app().await;
    let first = chrono::NaiveDate::from_ymd_opt(2025, 1, 1).unwrap();
    for (i, name) in ["Elm", "Oak", "Pine"].into_iter().enumerate() {
        for day in 0..35 {
            let date = (first + chrono::Duration::days(day)).to_string();
            let mut body = e2e::payload(name, &date, 4 + 2 * i, 6, 3 + i);
            body["occupancy_pct"] = json!(70.0 + 8.0 * i as f64 + day as f64 * 0.2);
            push(&app, body).await;
        }
    }
    app.run_jobs().await;
    for report in [
        "ecri",
        "portfolio",
        "seasonality",
        "lease-up",
        "leads",
        "revpas",
    ] {
        let answer = get_ok(&app, &format!("/api/v1/analytics/{report}")).await;
        insta::assert_json_snapshot!(format!("analytics-{report}"), redacted(&answer));
    }
}

/// Every number of `v` (at any depth) with its path, when it has more than `decimals` decimals.
fn unrounded(v: &Value, path: &str, decimals: i32, out: &mut Vec<String>) {
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                let scale = 10f64.powi(decimals);
                if ((x * scale).round() - x * scale).abs() > 1e-6 * scale.max(x.abs()) {
                    out.push(format!("{path} = {x}"));
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                unrounded(item, &format!("{path}[{i}]"), decimals, out);
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                unrounded(item, &format!("{path}.{k}"), decimals, out);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn every_figure_the_reports_answer_is_rounded() {
    let app = spawn_app().await;
    let today = chrono::Utc::now().date_naive();
    jobs::seed::seed_bulk(app.db(), app.tenant.company_id.into(), 3, 400, today, 2)
        .await
        .unwrap();
    let list = get_ok(&app, "/api/v1/facilities").await;
    let id = list["facilities"][0]["id"].as_str().unwrap().to_owned();
    // The ECRI report reads stored runs: one per facility first.
    for f in list["facilities"].as_array().unwrap() {
        app.ecri_now(f["id"].as_str().unwrap()).await;
    }
    let mut paths: Vec<String> = [
        "portfolio",
        "ecri",
        "seasonality",
        "lease-up",
        "leads?period=90d",
        "revpas",
    ]
    .iter()
    .map(|r| format!("/api/v1/analytics/{r}"))
    .collect();
    paths.push(format!("/api/v1/analytics/seasonality?facility_id={id}"));
    paths.push(format!("/api/v1/facilities/{id}/recommendations"));
    let mut found = Vec::new();
    for path in &paths {
        // Money and percents have two decimals, ratios near 1 (RevPAF, an index, a pace) four.
        unrounded(&get_ok(&app, path).await, path, 4, &mut found);
    }
    assert!(found.is_empty(), "unrounded figures: {found:#?}");
    app.run_jobs().await;
}
