//! A change and its audit entry commit together: when the entry cannot be written, the change
//! itself is rolled back (nothing half-recorded, no job left behind), and concurrent changes to
//! one setting each record the value the other left as their "before".

use e2e::{get_ok, spawn_app, status_json, TestApp};
use serde_json::{json, Value};

/// Makes every insert into `audit_log` of this test's database fail, as a full disk or a
/// broken partition would.
async fn break_the_audit_log(app: &TestApp) {
    sqlx::query(
        "CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS
         $$ BEGIN RAISE EXCEPTION 'the audit log refuses this entry'; END $$",
    )
    .execute(app.db())
    .await
    .unwrap();
    sqlx::query(
        "CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log
         FOR EACH ROW EXECUTE FUNCTION refuse_audit()",
    )
    .execute(app.db())
    .await
    .unwrap();
}

/// The facility's overrides and the rows of every table the refused changes would write.
async fn footprint(app: &TestApp, settings: &str) -> (Value, Vec<i64>) {
    let mut rows = Vec::new();
    for t in [
        "facilities",
        "webhook_subscriptions",
        "sync_records",
        "job_runs",
        "audit_log",
    ] {
        rows.push(app.count(t).await);
    }
    (get_ok(app, settings).await["overrides"].clone(), rows)
}

#[tokio::test]
async fn a_change_whose_audit_entry_fails_is_rolled_back_whole() {
    let app = spawn_app().await;
    let fid = app.create_facility("Main Street").await;
    let settings = format!("/api/v1/facilities/{fid}/pricing-settings");
    let before = footprint(&app, &settings).await;
    assert_eq!(before.0, json!({}));
    break_the_audit_log(&app).await;

    // A setting, a new facility, a webhook and a snapshot push: each answers 500 and leaves
    // nothing behind.
    let (s, body) = status_json(app.put(&settings, &json!({ "max_step_pct": 6.0 })).await).await;
    assert_eq!(s, 500, "{body}");
    assert!(
        !body["error"].as_str().unwrap().contains("audit"),
        "the client sees no internal text: {body}"
    );
    let (s, _) = status_json(
        app.post("/api/v1/facilities", &json!({ "name": "Harbour" }))
            .await,
    )
    .await;
    assert_eq!(s, 500);
    let (s, _) = status_json(
        app.post(
            "/api/v1/webhooks",
            &json!({ "url": "https://hooks.example.com/in" }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 500);
    let (s, _) = status_json(
        app.sync(&e2e::payload("Main Street", "2026-11-20", 3, 2, 0))
            .await,
    )
    .await;
    assert_eq!(s, 500);

    let after = footprint(&app, &settings).await;
    assert_eq!(after, before, "nothing of the refused changes was kept");

    // Once the log takes entries again, the same change goes through and is recorded.
    sqlx::query("DROP TRIGGER refuse_audit ON audit_log")
        .execute(app.db())
        .await
        .unwrap();
    let (s, _) = status_json(app.put(&settings, &json!({ "max_step_pct": 6.0 })).await).await;
    assert_eq!(s, 200);
    let log = get_ok(&app, "/api/v1/audit-log?action=pricing_settings.update").await;
    assert_eq!(log["entries"].as_array().unwrap().len(), 1);
    assert_eq!(log["entries"][0]["after"], json!({ "max_step_pct": 6.0 }));
    // The job the change asked for was recorded with it; the rolled-back one left none.
    let asked: i64 = sqlx::query_scalar("SELECT count(*) FROM job_runs WHERE kind = 'ecri_run'")
        .fetch_one(app.db())
        .await
        .unwrap();
    assert_eq!(asked, 1);
    app.run_jobs().await;
}

#[tokio::test]
async fn concurrent_changes_of_one_setting_each_record_the_before_the_other_left() {
    let app = spawn_app().await;
    let fid = app.create_facility("Main Street").await;
    let settings = format!("/api/v1/facilities/{fid}/pricing-settings");
    let steps: Vec<f64> = (1..=12).map(f64::from).collect();
    let answers = futures::future::join_all(steps.iter().map(|step| {
        let body = json!({ "max_step_pct": step });
        let path = settings.clone();
        let app = &app;
        async move { status_json(app.put(&path, &body).await).await.0 }
    }))
    .await;
    assert!(answers.iter().all(|s| *s == 200), "{answers:?}");

    let log = get_ok(
        &app,
        "/api/v1/audit-log?action=pricing_settings.update&limit=50",
    )
    .await;
    let mut entries: Vec<Value> = log["entries"].as_array().unwrap().clone();
    entries.reverse(); // oldest first
    assert_eq!(entries.len(), steps.len());
    // The changes form one chain: each entry's before is the entry before it's after, the
    // first starts from the defaults and the last is what is in force now.
    assert_eq!(entries[0]["before"], json!({}));
    for pair in entries.windows(2) {
        assert_eq!(pair[1]["before"], pair[0]["after"], "{pair:?}");
    }
    let in_force = get_ok(&app, &settings).await["overrides"].clone();
    assert_eq!(entries.last().unwrap()["after"], in_force);
    // Every value sent was recorded once.
    let mut recorded: Vec<f64> = entries
        .iter()
        .map(|e| e["after"]["max_step_pct"].as_f64().unwrap())
        .collect();
    recorded.sort_by(f64::total_cmp);
    assert_eq!(recorded, steps);

    // The company's currency, changed concurrently the same way, chains too.
    let currencies = ["EUR", "GBP", "CAD", "AUD", "USD", "CHF"];
    futures::future::join_all(currencies.iter().map(|c| {
        let app = &app;
        async move {
            let r = app
                .req(reqwest::Method::PATCH, "/api/v1/company")
                .json(&json!({ "currency": c }))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
        }
    }))
    .await;
    let log = get_ok(&app, "/api/v1/audit-log?action=company.update").await;
    let mut entries: Vec<Value> = log["entries"].as_array().unwrap().clone();
    entries.reverse();
    assert_eq!(entries.len(), currencies.len());
    assert_eq!(entries[0]["before"], json!({ "currency": "USD" }));
    for pair in entries.windows(2) {
        assert_eq!(pair[1]["before"], pair[0]["after"], "{pair:?}");
    }
    app.run_jobs().await;
}
