//! Recommendations, pricing settings and competitor rates through the real server.
//!
//! The facility used below, snapshot of 2026-11-10 (November's national prior seasonality
//! index 0.92), one snapshot only (no earlier reading, so no trend):
//! - 5x5 at 50, 80 % occupied, no competitors: with neither competitor rates nor an earlier
//!   rate there is nothing to start a target from, so it holds at 50.
//! - 10x10 at 100, 97 % occupied, competitors at 120, 130, 140, 150 (P25 125, median 135, P75
//!   145): target = median x (1 + occupancy (97 - 93) x 1 %) = 135 x 1.04 = 140.40 (the
//!   winter season does not cut a size above its band). A run moves half the way: competitors
//!   0.5 x (135/100 - 1) = +17.5 pp, occupancy 0.5 x 4 x 135/100 = +2.7 pp: 120.20, stopped
//!   by the 8 % step at 108 (raise), under the 166.75 ceiling.

use e2e::{spawn_app, status_json, wait_until, WorkerProcess};
use reqwest::Method;
use serde_json::{json, Value};
use std::time::Duration;

const DATE: &str = "2026-11-10";

fn snapshot(name: &str) -> Value {
    let comps: Vec<Value> = [120, 130, 140, 150]
        .iter()
        .enumerate()
        .map(|(i, r)| {
            json!({ "competitor": format!("C{i}"), "size": "10x10", "rate": r, "promo": null,
                    "source_url": "https://example.com" })
        })
        .collect();
    json!({
        "facility": { "name": name },
        "date": DATE,
        "occupancy_pct": 90,
        "unit_types": [
            { "size": "10x10", "tier": "standard", "street_rate": 100, "occupancy_pct": 97, "total_units": 50 },
            { "size": "5x5", "tier": "standard", "street_rate": 50, "occupancy_pct": 80, "total_units": 40 },
        ],
        "competitor_rates": comps,
    })
}

async fn facility(app: &e2e::TestApp, name: &str) -> String {
    let (s, body) = status_json(app.sync(&snapshot(name)).await).await;
    assert_eq!(s, 200, "{body}");
    body["facility"]["id"].as_str().unwrap().to_owned()
}

pub(crate) fn by_size<'a>(run: &'a Value, size: &str) -> &'a Value {
    run["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["size"] == size)
        .unwrap_or_else(|| panic!("no {size} in {run}"))
}

fn factor(rec: &Value, name: &str) -> f64 {
    rec["factors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no factor {name} in {rec}"))["contribution_pct"]
        .as_f64()
        .unwrap()
}

#[tokio::test]
async fn recommendations_run_the_engine_store_runs_and_regenerate_0_reads_the_latest() {
    let app = spawn_app().await;
    let id = facility(&app, "Main Street").await;
    let path = format!("/api/v1/facilities/{id}/recommendations");

    // No run yet.
    let (s, body) = status_json(app.get(&format!("{path}?regenerate=0")).await).await;
    assert_eq!(s, 404, "{body}");
    assert!(body["error"]
        .as_str()
        .unwrap()
        .contains("no stored recommendation run"));

    let (s, run) = status_json(app.get(&path).await).await;
    assert_eq!(s, 200, "{run}");
    assert_eq!(run["per_size_count"], 2);
    assert_eq!(run["facility_id"], id.as_str());
    assert_eq!(run["snapshot_date"], DATE);
    assert_eq!(run["trigger"], "api");
    let generated = run["generated_at"].as_str().unwrap();
    assert!(
        generated.len() == 24 && generated.ends_with('Z') && generated.as_bytes()[19] == b'.',
        "{generated}"
    );
    assert_eq!(run["engine_version"], "2026.11.11");
    let small = by_size(&run, "5x5");
    assert_eq!(small["recommended_rate"], 50.0);
    assert_eq!(small["action"], "hold");
    assert!(small["factors"][0]["detail"]
        .as_str()
        .unwrap()
        .contains("the rate holds"));
    assert!(small["competitor_band"].is_null());
    let big = by_size(&run, "10x10");
    assert_eq!(big["recommended_rate"], 108.0);
    assert_eq!(big["action"], "raise");
    assert_eq!(big["change_amount"], 8.0);
    assert_eq!(factor(big, "occupancy"), 2.7);
    assert_eq!(factor(big, "competitors"), 17.5);
    assert_eq!(factor(big, "seasonality"), 0.0);
    assert_eq!(big["guardrails"][0]["name"], "max_step");
    assert_eq!(big["competitor_band"]["p25"], 125.0);
    assert_eq!(big["competitor_band"]["median"], 135.0);
    assert_eq!(big["competitor_band"]["p75"], 145.0);
    assert_eq!(run["inputs"]["seasonality"]["source"], "national_prior");

    // regenerate=0 returns the same run without running the engine.
    let (s, again) = status_json(app.get(&format!("{path}?regenerate=0")).await).await;
    assert_eq!(s, 200);
    assert_eq!(again["recommendation_id"], run["recommendation_id"]);
    assert_eq!(again["generated_at"], run["generated_at"]);
    // A new call makes a new run, which regenerate=0 then returns.
    let (_, second) = status_json(app.get(&path).await).await;
    assert_ne!(second["recommendation_id"], run["recommendation_id"]);
    let (_, latest) = status_json(app.get(&format!("{path}?regenerate=0")).await).await;
    assert_eq!(latest["recommendation_id"], second["recommendation_id"]);
    assert_eq!(app.count("recommendation_runs").await, 2);

    // Another company's facility is invisible either way; nothing is stored.
    let other = app.create_tenant("Rival Storage").await;
    for q in ["", "?regenerate=0"] {
        let r = app
            .req_as(&other, Method::GET, &format!("{path}{q}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
    }
    assert_eq!(app.count("recommendation_runs").await, 2);
    let (s, body) = status_json(app.get(&format!("{path}?regenerate=2")).await).await;
    assert_eq!(s, 422, "{body}");
    let (s, _) = status_json(
        app.get("/api/v1/facilities/00000000-0000-0000-0000-000000000000/recommendations")
            .await,
    )
    .await;
    assert_eq!(s, 404);
    app.run_jobs().await;
}

#[tokio::test]
async fn the_engine_reads_the_trend_and_the_last_change_from_earlier_snapshots() {
    // 5x5 history: 2026-10-13 at 50, 70 % occupied; 2026-11-01 raised to 52, 75 %; 2026-11-10
    // at 52, 82 %. The reading 28 days back (10-13) gives the trend, (82 - 70) / 4 = +3 points
    // a week, and the anchor without competitors, 50. Target 50 x (1 - 6 % for occupancy
    // + 0.75 % for the trend) = 47.375, 8.9 % below 52. The move half-way would be the anchor
    // 0.5 x (50/52 - 1) = -1.92 pp, occupancy 0.5 x -6 x 50/52 = -2.88 pp, trend
    // 0.5 x 0.75 x 50/52 = +0.36 pp; but the last change (11-01, 9 days ago) was a raise, and a
    // cut needs the target more than 20 % away: it holds at 52.
    let app = spawn_app().await;
    let mut id = String::new();
    for (date, rate, occ) in [
        ("2026-10-13", 50, 70),
        ("2026-11-01", 52, 75),
        ("2026-11-10", 52, 82),
    ] {
        let mut snap = snapshot("Main Street");
        snap["date"] = json!(date);
        snap["unit_types"][1]["street_rate"] = json!(rate);
        snap["unit_types"][1]["occupancy_pct"] = json!(occ);
        let (s, body) = status_json(app.sync(&snap).await).await;
        assert_eq!(s, 200, "{body}");
        id = body["facility"]["id"].as_str().unwrap().to_owned();
    }
    let (s, run) = status_json(
        app.get(&format!("/api/v1/facilities/{id}/recommendations"))
            .await,
    )
    .await;
    assert_eq!(s, 200, "{run}");
    let small = by_size(&run, "5x5");
    assert_eq!(factor(small, "occupancy_trend"), 0.36);
    assert_eq!(factor(small, "occupancy"), -2.88);
    assert_eq!(factor(small, "competitors"), -1.92);
    assert!(small["factors"][0]["detail"]
        .as_str()
        .unwrap()
        .contains("28 days ago ($50.00)"));
    assert_eq!(small["recommended_rate"], 52.0);
    assert_eq!(small["guardrails"][0]["name"], "tolerance");
    assert!(small["guardrails"][0]["detail"]
        .as_str()
        .unwrap()
        .contains("went the other way"));
    // Without the raise the same cut goes through: 52 x (1 - 4.44 %) = 49.69, rounded 50.
    let settings = format!("/api/v1/facilities/{id}/pricing-settings");
    let (s, body) = status_json(
        app.put(&settings, &json!({"reversal_window_days": 0}))
            .await,
    )
    .await;
    assert_eq!(s, 200, "{body}");
    let (_, run) = status_json(
        app.get(&format!("/api/v1/facilities/{id}/recommendations"))
            .await,
    )
    .await;
    let small = by_size(&run, "5x5");
    assert_eq!(
        (small["recommended_rate"].as_f64(), small["action"].as_str()),
        (Some(50.0), Some("lower"))
    );
    app.run_jobs().await;
}

#[tokio::test]
async fn the_price_response_learns_demand_from_the_daily_history() {
    // 60 daily snapshots before 2026-11-10: the 10x10 (50 units) at 135, the competitor
    // median, 86 % occupied, a move-in on every tenth day (the month-to-date count rising by
    // one). A size whose demand kept all its units let at the median would have brought
    // 50 / 365.25 a day, 8.2 over the 60 days; it took 6, so its demand is under the median's
    // and the response cuts.
    let app = spawn_app().await;
    let start = chrono::NaiveDate::from_ymd_opt(2026, 9, 11).unwrap();
    let (mut id, mut mtd) = (String::new(), 0);
    for i in 0..=60 {
        let date = start + chrono::Days::new(i);
        if chrono::Datelike::day(&date) == 1 {
            mtd = 0;
        }
        if i % 10 == 5 && i < 60 {
            mtd += 1;
        }
        let mut snap = snapshot("History Lane");
        snap["date"] = json!(date.to_string());
        snap["unit_types"][0]["street_rate"] = json!(135);
        snap["unit_types"][0]["occupancy_pct"] = json!(86);
        snap["unit_types"][0]["move_ins_mtd"] = json!(mtd);
        let (s, body) = status_json(app.sync(&snap).await).await;
        assert_eq!(s, 200, "{body}");
        id = body["facility"]["id"].as_str().unwrap().to_owned();
    }
    let path = format!("/api/v1/facilities/{id}/recommendations");
    let (s, run) = status_json(app.get(&path).await).await;
    assert_eq!(s, 200, "{run}");
    let large = by_size(&run, "10x10");
    let response = large["factors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "price_response")
        .unwrap();
    let detail = response["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(
            "over the last 60 days the size took 6 move-ins on its days with a vacant unit, at \
             100% of the competitor median on average, where a demand that keeps all its units \
             let at the median would have brought 8.2"
        ),
        "{detail}"
    );
    assert!(
        response["contribution_pct"].as_f64().unwrap() < -1.0,
        "{response}"
    );
    // Learning from the trend window alone (engine 2026.11.6) reads the two readings 28 days
    // apart instead.
    let settings = format!("/api/v1/facilities/{id}/pricing-settings");
    let (s, body) = status_json(
        app.put(&settings, &json!({"response_history_days": 0}))
            .await,
    )
    .await;
    assert_eq!(s, 200, "{body}");
    let (_, run) = status_json(app.get(&path).await).await;
    let detail = by_size(&run, "10x10")["factors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "price_response")
        .unwrap()["detail"]
        .to_string();
    assert!(
        detail.contains("over the last 28 days the size went from 86% to 86% full"),
        "{detail}"
    );
    app.run_jobs().await;
}

#[tokio::test]
async fn a_facility_whose_history_peaks_in_december_learns_a_december_peak() {
    // A year of daily records (2025) before a snapshot of 2026-01-10: 20 move-ins in every
    // month, 60 in December (the month-to-date count rising through each month). Each month's
    // reading against the mean month (23.3) is shrunk toward the national prior by its move-ins
    // over themselves plus 40: 20 / 23.3 = 0.857 weighs 1/3 (January 0.333 x 0.857 + 0.667 x
    // 0.85 = 0.852), December 2.571 weighs 0.6 (0.6 x 2.571 + 0.4 x 0.95 = 1.923); the twelve
    // averaged to 1 (their mean is 1.036): January 0.8227, December 1.856.
    let app = spawn_app().await;
    let mut snap = snapshot("December Road");
    snap["date"] = json!("2026-01-10");
    let (s, body) = status_json(app.sync(&snap).await).await;
    assert_eq!(s, 200, "{body}");
    let id = body["facility"]["id"].as_str().unwrap().to_owned();
    let path = format!("/api/v1/facilities/{id}/recommendations");
    // One record a day of 2025, each a copy of the snapshot's with its own date and count.
    let inserted = sqlx::query(
        r#"INSERT INTO sync_records
           SELECT (jsonb_populate_record(NULL::sync_records, to_jsonb(s) || jsonb_build_object(
                     'id', gen_random_uuid(), 'snapshot_date', d::date,
                     'move_ins_mtd', (CASE WHEN extract(month FROM d) = 12 THEN 60 ELSE 20 END)
                         * extract(day FROM d)::int
                         / extract(day FROM date_trunc('month', d) + interval '1 month - 1 day')::int
                   ))).*
           FROM sync_records s, generate_series('2025-01-01'::date, '2025-12-31'::date, '1 day') d
           WHERE s.facility_id = $1"#,
    )
    .bind(id.parse::<uuid::Uuid>().unwrap())
    .execute(app.db())
    .await
    .unwrap();
    assert_eq!(inserted.rows_affected(), 365);
    let (s, run) = status_json(app.get(&path).await).await;
    assert_eq!(s, 200, "{run}");
    // The stored run, read back, carries the learned season.
    let stored = format!(
        "/api/v1/facilities/{id}/recommendation-runs/{}",
        run["recommendation_id"].as_str().unwrap()
    );
    let (s, stored) = status_json(app.get(&stored).await).await;
    assert_eq!(s, 200, "{stored}");
    let season = &stored["inputs"]["seasonality"];
    assert_eq!(season["source"], "own_history", "{season}");
    assert_eq!(
        (
            season["own_months"].as_i64(),
            season["full_months"].as_i64()
        ),
        (Some(12), Some(12))
    );
    let profile: Vec<f64> = season["profile"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let peak = (0..12).max_by(|&a, &b| profile[a].total_cmp(&profile[b]));
    assert_eq!(peak, Some(11), "{profile:?}");
    assert_eq!((profile[0], profile[11]), (0.8227, 1.856), "{profile:?}");
    assert_eq!(season["index"], 0.8227, "{season}");

    // A facility with one month of history (December 2025 alone) stays on the prior.
    let mut snap = snapshot("One Month Lane");
    snap["date"] = json!("2026-01-10");
    let (_, body) = status_json(app.sync(&snap).await).await;
    let other = body["facility"]["id"].as_str().unwrap().to_owned();
    sqlx::query(
        r#"INSERT INTO sync_records
           SELECT (jsonb_populate_record(NULL::sync_records, to_jsonb(s) || jsonb_build_object(
                     'id', gen_random_uuid(), 'snapshot_date', d::date,
                     'move_ins_mtd', 2 * extract(day FROM d)::int)
                   )).*
           FROM sync_records s, generate_series('2025-12-01'::date, '2025-12-31'::date, '1 day') d
           WHERE s.facility_id = $1"#,
    )
    .bind(other.parse::<uuid::Uuid>().unwrap())
    .execute(app.db())
    .await
    .unwrap();
    let (s, run) = status_json(
        app.get(&format!("/api/v1/facilities/{other}/recommendations"))
            .await,
    )
    .await;
    assert_eq!(s, 200, "{run}");
    let season = &run["inputs"]["seasonality"];
    assert_eq!(season["source"], "national_prior", "{season}");
    assert_eq!(season["full_months"], 1);
    assert_eq!(season["index"], 0.85);
    app.run_jobs().await;
}

#[tokio::test]
async fn the_loader_reads_each_day_before_the_snapshot_and_its_move_ins_from_the_counts() {
    // Daily snapshots of the 10x10 from 29 October to 10 November (the facility's latest), 3
    // November missing, with a month-to-date move-in count; a history of 10 days. The loader
    // reads 31 October to 9 November as readings (not the snapshot's own day), 30 October only
    // for its count, and nothing older; a day's move-ins are the rise of the count from the day
    // before, the count itself on the 1st, and unknown after a gap or where the count fell.
    let app = spawn_app().await;
    let days = [
        ("2026-10-29", 4),
        ("2026-10-30", 6),
        ("2026-10-31", 7),
        ("2026-11-01", 1),
        ("2026-11-02", 1),
        ("2026-11-04", 3),
        ("2026-11-05", 4),
        ("2026-11-06", 4),
        ("2026-11-07", 2),
        ("2026-11-08", 3),
        ("2026-11-09", 5),
        ("2026-11-10", 9),
    ];
    let mut id = String::new();
    for (i, (date, mtd)) in days.iter().enumerate() {
        let mut snap = snapshot("Loader Lane");
        snap["date"] = json!(date);
        snap["unit_types"][0]["street_rate"] = json!(100 + i);
        snap["unit_types"][0]["occupancy_pct"] = json!(80 + i);
        snap["unit_types"][0]["move_ins_mtd"] = json!(mtd);
        let (s, body) = status_json(app.sync(&snap).await).await;
        assert_eq!(s, 200, "{body}");
        id = body["facility"]["id"].as_str().unwrap().to_owned();
        if i == 0 {
            let path = format!("/api/v1/facilities/{id}/pricing-settings");
            let (s, body) =
                status_json(app.put(&path, &json!({"response_history_days": 10})).await).await;
            assert_eq!(s, 200, "{body}");
        }
    }
    let loaded = jobs::pricing::inputs(
        app.db(),
        domain::ids::CompanyId::from(app.tenant.company_id),
        domain::ids::FacilityId::from(id.parse::<uuid::Uuid>().unwrap()),
    )
    .await
    .unwrap();
    assert_eq!(loaded.input.as_of.to_string(), "2026-11-10");
    let unit = |size: &str| {
        loaded
            .input
            .unit_types
            .iter()
            .find(|u| u.size == size)
            .unwrap()
    };
    let history: Vec<(u32, f64, f64, Option<f64>)> = unit("10x10")
        .history
        .iter()
        .map(|r| (r.days_ago, r.occupancy_pct, r.street_rate, r.move_ins))
        .collect();
    assert_eq!(
        history,
        vec![
            (10, 82.0, 102.0, Some(1.0)),
            (9, 83.0, 103.0, Some(1.0)),
            (8, 84.0, 104.0, Some(0.0)),
            (6, 85.0, 105.0, None),
            (5, 86.0, 106.0, Some(1.0)),
            (4, 87.0, 107.0, Some(0.0)),
            (3, 88.0, 108.0, None),
            (2, 89.0, 109.0, Some(1.0)),
            (1, 90.0, 110.0, Some(2.0)),
        ]
    );
    // The 5x5 sends no count: its days are read, their move-ins unknown.
    let small = &unit("5x5").history;
    assert_eq!(
        small.iter().map(|r| r.days_ago).collect::<Vec<_>>(),
        vec![10, 9, 8, 6, 5, 4, 3, 2, 1]
    );
    assert!(small.iter().all(|r| r.move_ins.is_none()));
    app.run_jobs().await;
}

#[tokio::test]
async fn a_facility_without_a_snapshot_gets_a_clear_422() {
    let app = spawn_app().await;
    let (s, f) = status_json(
        app.post("/api/v1/facilities", &json!({"name": "Empty"}))
            .await,
    )
    .await;
    assert_eq!(s, 201, "{f}");
    let id = f["id"].as_str().unwrap();
    let (s, body) = status_json(
        app.get(&format!("/api/v1/facilities/{id}/recommendations"))
            .await,
    )
    .await;
    assert_eq!(s, 422, "{body}");
    assert!(body["error"].as_str().unwrap().contains("no snapshot"));
    assert_eq!(app.count("recommendation_runs").await, 0);
}

#[tokio::test]
async fn settings_overrides_change_the_guardrails_and_bad_ones_are_refused() {
    let app = spawn_app().await;
    let id = facility(&app, "Main Street").await;
    let settings = format!("/api/v1/facilities/{id}/pricing-settings");
    let (s, body) = status_json(app.get(&settings).await).await;
    assert_eq!(s, 200);
    assert_eq!(body["settings"]["max_step_pct"], 8.0);
    assert_eq!(body["overrides"], json!({}));

    let (s, body) = status_json(app.put(&settings, &json!({"max_step_pct": 3})).await).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["settings"]["max_step_pct"], 3.0);
    // 10x10 would go to 120.20; a 3 % step stops it at 103.
    let (_, run) = status_json(
        app.get(&format!("/api/v1/facilities/{id}/recommendations"))
            .await,
    )
    .await;
    let big = by_size(&run, "10x10");
    assert_eq!(big["recommended_rate"], 103.0);
    assert_eq!(big["guardrails"][0]["name"], "max_step");
    assert_eq!(run["settings"]["max_step_pct"], 3.0);

    for bad in [
        json!({"max_step": 3}),
        json!({"max_step_pct": -1}),
        json!({"cooldown_days": "a week"}),
    ] {
        let (s, body) = status_json(app.put(&settings, &bad).await).await;
        assert_eq!(s, 422, "{bad} -> {body}");
        assert!(
            body["error"].as_str().unwrap().starts_with("settings"),
            "{body}"
        );
    }
    let (_, body) = status_json(app.get(&settings).await).await;
    assert_eq!(body["overrides"], json!({"max_step_pct": 3}));
    let other = app.create_tenant("Rival Storage").await;
    let r = app
        .req_as(&other, Method::PUT, &settings)
        .json(&json!({"max_step_pct": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    app.run_jobs().await;
}

#[tokio::test]
async fn a_pricing_run_follows_each_sync_through_the_worker() {
    let app = spawn_app().await;
    let _worker = WorkerProcess::start(&app.world, &[]);
    let id = facility(&app, "Main Street").await;
    let db = app.db().clone();
    wait_until(
        "a run stored by the pricing_run job",
        Duration::from_secs(60),
        || {
            let db = db.clone();
            async move {
                sqlx::query_scalar::<_, i64>(
                    "SELECT count(*) FROM recommendation_runs WHERE trigger = 'sync'",
                )
                .fetch_one(&db)
                .await
                .unwrap()
                    == 1
            }
        },
    )
    .await;
    let (s, run) = status_json(
        app.get(&format!(
            "/api/v1/facilities/{id}/recommendations?regenerate=0"
        ))
        .await,
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(run["trigger"], "sync");
    assert_eq!(run["per_size_count"], 2);
    assert_eq!(by_size(&run, "10x10")["recommended_rate"], 108.0);
    // The run's id is the job's id: the job row and the run agree.
    let job: String = sqlx::query_scalar(
        "SELECT id::text FROM job_runs WHERE kind = 'pricing_run' AND status = 'succeeded'",
    )
    .fetch_one(app.db())
    .await
    .unwrap();
    assert_eq!(run["recommendation_id"], job.as_str());
    // The ingest also asked for an ECRI run: the worker finishes it before the test ends.
    wait_until(
        "the worker has run every job",
        Duration::from_secs(60),
        || {
            let db = db.clone();
            async move { jobs::runs::undone(&db).await.unwrap() == 0 }
        },
    )
    .await;
}

#[tokio::test]
async fn competitor_rates_are_added_listed_with_freshness_and_checked() {
    let app = spawn_app().await;
    let (_, f) = status_json(
        app.post("/api/v1/facilities", &json!({"name": "Main"}))
            .await,
    )
    .await;
    let id = f["id"].as_str().unwrap();
    let path = format!("/api/v1/facilities/{id}/competitor-rates");
    let today = chrono::Utc::now().date_naive();
    let old = (today - chrono::Days::new(30)).to_string();
    let body = json!({ "competitor_rates": [
        { "competitor": "Public Storage", "size": "10x10", "rate": 120, "promo": "First month free",
          "source_url": "https://example.com/ps" },
        { "competitor": "Extra Space", "size": "10x10", "rate": 130, "promo": null },
        { "competitor": "CubeSmart", "size": "10X10", "rate": 140, "observed_on": old },
    ]});
    let (s, out) = status_json(app.post(&path, &body).await).await;
    assert_eq!(s, 201, "{out}");
    assert_eq!(
        (out["inserted"].as_u64(), out["updated"].as_u64()),
        (Some(3), Some(0))
    );
    // The same observations again update, not duplicate.
    let (_, out) = status_json(app.post(&path, &body).await).await;
    assert_eq!(
        (out["inserted"].as_u64(), out["updated"].as_u64()),
        (Some(0), Some(3))
    );

    let (s, list) = status_json(app.get(&path).await).await;
    assert_eq!(s, 200, "{list}");
    assert_eq!(list["count"], 3);
    let rates = list["competitor_rates"].as_array().unwrap();
    let ps = rates
        .iter()
        .find(|r| r["competitor"] == "Public Storage")
        .unwrap();
    // A free month over a 12-month stay: 120 x 11/12 = 110.
    assert_eq!(ps["effective_rate"], 110.0);
    assert_eq!(ps["stale"], false);
    let cube = rates
        .iter()
        .find(|r| r["competitor"] == "CubeSmart")
        .unwrap();
    assert_eq!(
        (cube["stale"].as_bool(), cube["age_days"].as_i64()),
        (Some(true), Some(30))
    );
    assert_eq!(cube["size"], "10x10");
    // Band: 110 (w1), 130 (w1), 140 (w0.25): three competitors, one stale.
    let band = &list["bands"][0];
    assert_eq!(
        (band["size"].as_str(), band["competitors"].as_u64()),
        (Some("10x10"), Some(3))
    );
    assert_eq!(band["stale"], 1);

    // One bad rate rejects the request, naming it; nothing is written.
    let before = app.count("competitor_rates").await;
    for (bad, path_part) in [
        (
            json!({"competitor_rates": [{"competitor": "A", "size": "10x10", "rate": 1}, {"competitor": "B", "size": "10x10", "rate": -5}]}),
            "competitor_rates[1].rate",
        ),
        (
            json!({"competitor_rates": [{"competitor": "A", "size": "big", "rate": 1}]}),
            "competitor_rates[0].size",
        ),
        (
            json!({"competitor_rates": [{"size": "10x10", "rate": 1}]}),
            "competitor_rates[0].competitor",
        ),
        (json!({"competitor_rates": []}), "competitor_rates"),
        (
            json!({"competitor_rates": [{"competitor": "A", "size": "10x10", "rate": 1, "observed_on": "2999-01-01"}]}),
            "competitor_rates[0].observed_on",
        ),
    ] {
        let (s, body) = status_json(app.post(&path, &bad).await).await;
        assert_eq!(s, 422, "{bad} -> {body}");
        assert!(
            body["error"].as_str().unwrap().starts_with(path_part),
            "{body}"
        );
    }
    assert_eq!(app.count("competitor_rates").await, before);
    let (s, _) = status_json(app.get(&format!("{path}?size=huge")).await).await;
    assert_eq!(s, 422);
    let other = app.create_tenant("Rival Storage").await;
    let r = app.req_as(&other, Method::GET, &path).send().await.unwrap();
    assert_eq!(r.status(), 404);
    let r = app
        .req_as(&other, Method::POST, &path)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(app.count("competitor_rates").await, before);

    // `since` before the earliest snapshot date lists everything, even a year before 4713 BC
    // (which PostgreSQL's dates cannot hold).
    for since in ["1999-01-01", "-5000-01-01"] {
        let (s, list) = status_json(app.get(&format!("{path}?since={since}")).await).await;
        assert_eq!(s, 200, "{since}: {list}");
        assert_eq!(list["count"], 3, "{since}");
    }
}

/// The listed competitor rates as (competitor, rate), in the listing's order.
fn listed_rates(list: &Value) -> Vec<(String, f64)> {
    list["competitor_rates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["competitor"].as_str().unwrap().to_owned(),
                r["rate"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn competitor_names_the_database_folds_together_are_one_rate() {
    let app = spawn_app().await;
    let (_, f) = status_json(
        app.post("/api/v1/facilities", &json!({"name": "Main"}))
            .await,
    )
    .await;
    let path = format!(
        "/api/v1/facilities/{}/competitor-rates",
        f["id"].as_str().unwrap()
    );
    // Rust lowercases 'İ' to 'i' and a combining dot; PostgreSQL's lower() under a UTF-8
    // locale to 'i'. The rates are one competitor, size and day to the database: the last wins.
    let body = json!({ "competitor_rates": [
        { "competitor": "İstanbul Storage", "size": "10x10", "rate": 100 },
        { "competitor": "istanbul storage", "size": "10x10", "rate": 110 },
    ]});
    let (s, out) = status_json(app.post(&path, &body).await).await;
    assert_eq!(s, 201, "{out}");
    let (_, list) = status_json(app.get(&path).await).await;
    let rates = listed_rates(&list);
    let folded: i64 =
        sqlx::query_scalar("SELECT count(DISTINCT lower(competitor)) FROM competitor_rates")
            .fetch_one(app.db())
            .await
            .unwrap();
    if folded == 1 {
        assert_eq!(rates, [("istanbul storage".to_owned(), 110.0)]);
    } else {
        // A database whose locale keeps the two apart stores both.
        assert_eq!(rates.len(), 2, "{rates:?}");
    }
}

#[tokio::test]
async fn each_new_run_records_a_recommendations_ready_delivery_per_subscription() {
    let app = spawn_app().await;
    let id = facility(&app, "Main Street").await;
    for url in ["https://hooks.example.com/a", "https://hooks.example.com/b"] {
        let (s, body) =
            status_json(app.post("/api/v1/webhooks", &json!({ "url": url })).await).await;
        assert_eq!(s, 201, "{body}");
    }
    // Another company's subscription must not hear of this company's runs.
    let other = app.create_tenant("Rival Storage").await;
    let r = app
        .req_as(&other, Method::POST, "/api/v1/webhooks")
        .json(&json!({ "url": "https://hooks.example.com/rival" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);

    let path = format!("/api/v1/facilities/{id}/recommendations");
    let (_, run) = status_json(app.get(&path).await).await;
    let deliveries: Vec<(String, String, Option<String>)> = sqlx::query_as(
        "SELECT d.event, s.url, d.subject_id::text FROM webhook_deliveries d
         JOIN webhook_subscriptions s ON s.id = d.subscription_id ORDER BY s.url",
    )
    .fetch_all(app.db())
    .await
    .unwrap();
    let run_id = run["recommendation_id"].as_str().unwrap();
    assert_eq!(deliveries.len(), 2, "{deliveries:?}");
    for (d, url) in deliveries
        .iter()
        .zip(["https://hooks.example.com/a", "https://hooks.example.com/b"])
    {
        assert_eq!(
            (d.0.as_str(), d.1.as_str(), d.2.as_deref()),
            ("recommendations.ready", url, Some(run_id))
        );
    }
    // Reading the latest run is not a new run: no new deliveries. A new run: two more.
    let _ = app.get(&format!("{path}?regenerate=0")).await;
    assert_eq!(app.count("webhook_deliveries").await, 2);
    let _ = app.get(&path).await;
    assert_eq!(app.count("webhook_deliveries").await, 4);
    app.run_jobs().await;
}

#[tokio::test]
async fn competitor_rates_come_wrapped_as_a_bare_array_or_one_by_one() {
    let app = spawn_app().await;
    let res = e2e::push_ok(
        &app,
        json!({ "facility": { "name": "Shapes" }, "date": "2026-11-20" }),
    )
    .await;
    let path = format!(
        "/api/v1/facilities/{}/competitor-rates",
        res["facility"]["id"].as_str().unwrap()
    );
    let day = "2026-11-19";
    for (body, inserted) in [
        (
            json!([
                { "competitor": "A", "size": "10x10", "rate": 120, "observed_on": day },
                { "competitor": "B", "size": "10x10", "rate": 130, "observed_on": day }
            ]),
            2,
        ),
        (
            json!({ "competitor": "C", "size": "10x10", "rate": 140, "observed_on": day }),
            1,
        ),
        (
            json!({ "competitor_rates": [{ "competitor": "D", "size": "10x10", "rate": 150, "observed_on": day }] }),
            1,
        ),
    ] {
        let (s, r) = status_json(app.post(&path, &body).await).await;
        assert_eq!(s, 201, "{body} -> {r}");
        assert_eq!(r["inserted"], inserted, "{r}");
    }
    let list = e2e::get_ok(&app, &path).await;
    let mut seen = listed_rates(&list);
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        seen,
        vec![
            ("A".to_owned(), 120.0),
            ("B".to_owned(), 130.0),
            ("C".to_owned(), 140.0),
            ("D".to_owned(), 150.0)
        ]
    );
    // Errors name the item in the shape it came in; nothing is written.
    let before = app.count("competitor_rates").await;
    for (bad, error) in [
        (
            json!([{ "competitor": "E", "size": "10x10", "rate": -1 }]),
            "[0].rate:",
        ),
        (
            json!({ "competitor": "E", "size": "10x10" }),
            "rate: is required",
        ),
        (json!([]), "body: must not be empty"),
        (json!(["E"]), "[0]: must be a rate object"),
        (
            json!({ "competitor_rates": "E" }),
            "body: must be a rate, an array of rates",
        ),
    ] {
        let (s, r) = status_json(app.post(&path, &bad).await).await;
        assert_eq!(s, 422, "{bad} -> {r}");
        assert!(
            r["error"].as_str().unwrap().starts_with(error),
            "{bad} -> {r}"
        );
    }
    assert_eq!(app.count("competitor_rates").await, before);
    app.run_jobs().await;
}

#[tokio::test]
async fn a_foreign_or_unknown_facility_is_404_even_with_a_bad_body() {
    let app = spawn_app().await;
    let other = app.create_tenant("Rival").await;
    let theirs = e2e::push_ok_as(
        &app,
        &other,
        json!({ "facility": { "name": "Theirs" }, "date": "2026-11-20" }),
    )
    .await;
    let unknown = uuid::Uuid::new_v4().to_string();
    for id in [&theirs, &unknown] {
        for (method, path, body) in [
            (
                Method::POST,
                format!("/api/v1/facilities/{id}/competitor-rates"),
                "{\"rate\": \"x\"}",
            ),
            (
                Method::PUT,
                format!("/api/v1/facilities/{id}/pricing-settings"),
                "[1, 2]",
            ),
            (
                Method::PUT,
                format!("/api/v1/facilities/{id}"),
                "{\"name\": 5}",
            ),
            (
                Method::POST,
                format!("/api/v1/facilities/{id}/upload"),
                "{\"rows\": 7}",
            ),
        ] {
            let (s, r) = status_json(
                app.req(method.clone(), &path)
                    .header("content-type", "application/json")
                    .body(body)
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            assert_eq!(s, 404, "{method} {path} -> {r}");
            assert!(r["error"].as_str().unwrap().contains("no facility"), "{r}");
        }
    }
    app.run_jobs().await;
}

#[tokio::test]
async fn a_facilitys_run_history_lists_its_runs_newest_first_and_each_can_be_read() {
    let app = spawn_app().await;
    let facility = facility(&app, "History").await;
    let base = format!("/api/v1/facilities/{facility}");
    // Three runs on request.
    let mut ids = Vec::new();
    let mut answers = Vec::new();
    for _ in 0..3 {
        let run = e2e::get_ok(&app, &format!("{base}/recommendations")).await;
        ids.push(run["recommendation_id"].as_str().unwrap().to_owned());
        answers.push(run);
    }
    let list = e2e::get_ok(&app, &format!("{base}/recommendation-runs")).await;
    assert_eq!(list["count"], 3, "{list}");
    let listed: Vec<&str> = list["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["recommendation_id"].as_str().unwrap())
        .collect();
    let newest_first: Vec<&str> = ids.iter().rev().map(String::as_str).collect();
    assert_eq!(listed, newest_first);
    let first = &list["runs"][0];
    assert_eq!(first["trigger"], "api");
    assert_eq!(first["snapshot_date"], "2026-11-10");
    // The facility's two sizes: 10x10 raised (see the top of this file), 5x5 held.
    assert_eq!(first["per_size_count"], 2);
    assert_eq!(
        (
            first["raise"].as_i64(),
            first["hold"].as_i64(),
            first["lower"].as_i64()
        ),
        (Some(1), Some(1), Some(0))
    );
    // Paging: one at a time, each page after the last run of the one before.
    let mut paged = Vec::new();
    let mut after = String::new();
    loop {
        let page = e2e::get_ok(&app, &format!("{base}/recommendation-runs?limit=1{after}")).await;
        let Some(run) = page["runs"].as_array().unwrap().first() else {
            break;
        };
        let id = run["recommendation_id"].as_str().unwrap().to_owned();
        after = format!("&after={id}");
        paged.push(id);
    }
    assert_eq!(paged, ids.iter().rev().cloned().collect::<Vec<_>>());
    // One run, whole, as the recommendations route answered it.
    let one = e2e::get_ok(&app, &format!("{base}/recommendation-runs/{}", ids[0])).await;
    assert_eq!(one, answers[0]);
    // Bad parameters, unknown runs and another company's facility.
    for (path, status) in [
        (format!("{base}/recommendation-runs?limit=0"), 422),
        (format!("{base}/recommendation-runs?limit=201"), 422),
        (format!("{base}/recommendation-runs?after=yesterday"), 422),
        (
            format!("{base}/recommendation-runs/{}", uuid::Uuid::new_v4()),
            404,
        ),
        (format!("{base}/recommendation-runs/not-a-uuid"), 404),
        (
            format!(
                "/api/v1/facilities/{}/recommendation-runs",
                uuid::Uuid::new_v4()
            ),
            404,
        ),
    ] {
        let (s, body) = status_json(app.get(&path).await).await;
        assert_eq!(s, status, "{path}: {body}");
    }
    let other = app.create_tenant("Rival").await;
    for path in [
        format!("{base}/recommendation-runs"),
        format!("{base}/recommendation-runs/{}", ids[0]),
    ] {
        let r = app.req_as(&other, Method::GET, &path).send().await.unwrap();
        assert_eq!(r.status(), 404, "{path}");
    }
    app.run_jobs().await;
}

#[tokio::test]
async fn a_facilitys_history_has_its_days_rates_and_bands_as_the_engine_saw_them() {
    let app = spawn_app().await;
    let day = |date: &str, rate: f64, occupancy: f64, mtd: u32, comps: Value| {
        json!({
            "facility": { "name": "Charted" },
            "date": date,
            "occupancy_pct": occupancy,
            "move_ins": { "mtd": mtd, "target_monthly": 30 },
            "unit_types": [{ "size": "10x10", "street_rate": rate, "occupancy_pct": occupancy }],
            "competitor_rates": comps,
        })
    };
    let first = e2e::push_ok(
        &app,
        day(
            "2026-11-01",
            100.0,
            80.0,
            1,
            json!([
                { "competitor": "A", "size": "10x10", "rate": 120 },
                { "competitor": "B", "size": "10x10", "rate": 130 }
            ]),
        ),
    )
    .await;
    let facility = first["facility"]["id"].as_str().unwrap().to_owned();
    e2e::push_ok(&app, day("2026-11-02", 105.0, 85.0, 2, json!([]))).await;
    e2e::push_ok(
        &app,
        day(
            "2026-11-03",
            110.0,
            90.0,
            3,
            json!([{ "competitor": "A", "size": "10x10", "rate": 140 }]),
        ),
    )
    .await;
    let base = format!("/api/v1/facilities/{facility}/history");
    let h = e2e::get_ok(&app, &format!("{base}?days=2")).await;
    assert_eq!(
        (h["from"].as_str(), h["to"].as_str()),
        (Some("2026-11-02"), Some("2026-11-03"))
    );
    let dates: Vec<&str> = h["days"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["date"].as_str().unwrap())
        .collect();
    assert_eq!(dates, vec!["2026-11-02", "2026-11-03"]);
    assert_eq!(h["days"][1]["occupancy_pct"], 90.0);
    assert_eq!(h["days"][1]["move_ins_mtd"], 3);
    // 30 a month, 3 days of November's 30 gone.
    assert_eq!(h["days"][1]["move_ins_target_to_date"], 3.0);
    let rates: Vec<f64> = h["unit_types"][0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["street_rate"].as_f64().unwrap())
        .collect();
    assert_eq!(h["unit_types"][0]["size"], "10x10");
    assert_eq!(rates, vec![105.0, 110.0]);
    let bands = h["competitor_bands"][0]["points"].as_array().unwrap();
    assert_eq!(bands.len(), 2, "{h}");
    assert_eq!(bands[0]["competitors"], 2);
    // The last day's band is the one the engine prices that snapshot with.
    let run = e2e::get_ok(
        &app,
        &format!("/api/v1/facilities/{facility}/recommendations"),
    )
    .await;
    let band = &run["recommendations"][0]["competitor_band"];
    for key in ["p25", "median", "p75", "competitors"] {
        assert_eq!(bands[1][key], band[key], "{key}: {h} vs {run}");
    }
    // A's second observation moved the band up.
    assert!(
        bands[1]["median"].as_f64() > bands[0]["median"].as_f64(),
        "{h}"
    );
    // The default range covers all three days.
    let all = e2e::get_ok(&app, &base).await;
    assert_eq!(all["days"].as_array().unwrap().len(), 3);

    // A facility without snapshots has an empty history; bad ranges and other facilities fail.
    let empty = app.create_facility("Empty").await;
    let none = e2e::get_ok(&app, &format!("/api/v1/facilities/{empty}/history")).await;
    assert_eq!(
        (none["days"].as_array().unwrap().len(), none["to"].is_null()),
        (0, true)
    );
    for (path, status) in [
        (format!("{base}?days=0"), 422),
        (format!("{base}?days=731"), 422),
        (format!("{base}?days=many"), 422),
        (
            format!("/api/v1/facilities/{}/history", uuid::Uuid::new_v4()),
            404,
        ),
    ] {
        let (s, body) = status_json(app.get(&path).await).await;
        assert_eq!(s, status, "{path}: {body}");
    }
    let other = app.create_tenant("Rival").await;
    let r = app.req_as(&other, Method::GET, &base).send().await.unwrap();
    assert_eq!(r.status(), 404);
    app.run_jobs().await;
}

/// Found by the fuzz run: a facility deleted while its recommendations were being stored made
/// the run's insert break its foreign key, a 500. It is a 404, like a facility that is gone.
#[tokio::test]
async fn a_facility_deleted_while_its_run_is_stored_is_a_404() {
    let app = spawn_app().await;
    let pushed = e2e::push_ok(&app, e2e::payload("Elm", "2026-11-20", 3, 2, 0)).await;
    let id = pushed["facility"]["id"].as_str().unwrap().to_owned();
    // Delete the facility in a transaction that stays open, so the run's insert waits on it.
    let mut deleting = app.db().begin().await.unwrap();
    sqlx::query("DELETE FROM facilities WHERE id = $1::uuid")
        .bind(&id)
        .execute(&mut *deleting)
        .await
        .unwrap();
    let request = app
        .req(
            reqwest::Method::GET,
            &format!("/api/v1/facilities/{id}/recommendations"),
        )
        .send();
    let answer = tokio::spawn(request);
    let db = app.db().clone();
    e2e::wait_until(
        "the run waits on the deleted facility",
        std::time::Duration::from_secs(20),
        || {
            let db = db.clone();
            async move {
                let waiting: i64 = sqlx::query_scalar(
                    "SELECT count(*) FROM pg_stat_activity
                     WHERE datname = current_database() AND wait_event_type = 'Lock'",
                )
                .fetch_one(&db)
                .await
                .unwrap();
                waiting > 0
            }
        },
    )
    .await;
    deleting.commit().await.unwrap();
    let (s, body) = status_json(answer.await.unwrap().unwrap()).await;
    assert_eq!(s, 404, "{body}");
    assert_eq!(app.count("recommendation_runs").await, 0);
    app.run_jobs().await;
}
