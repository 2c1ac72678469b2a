use e2e::{payload, spawn_app, status_json};

#[tokio::test]
async fn status_shows_plan_subscription_and_usage() {
    let app = spawn_app().await;
    app.sync(&payload("A", "2026-11-19", 2, 1, 1)).await;
    app.sync(&payload("A", "2026-11-20", 2, 1, 1)).await;
    app.sync(&payload("B", "2026-11-20", 2, 1, 1)).await;
    let (s, body) = status_json(app.get("/api/v1/status").await).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["company"]["id"], app.tenant.company_id.to_string());
    assert_eq!(body["company"]["name"], "Acme Storage");
    assert_eq!(body["plan"], "standard");
    assert_eq!(body["subscription"]["state"], "trialing");
    assert_eq!(body["subscription"]["trial_days_left"], 14);
    assert_eq!(body["subscription"]["api_access"], true);
    assert_eq!(body["usage"]["facilities"], 2);
    assert_eq!(body["usage"]["sync_records"], 3);
    assert_eq!(body["usage"]["sync_records_this_month"], 3);
    // Three syncs and this call.
    assert_eq!(body["usage"]["api_calls_this_month"], 4);
    assert_eq!(body["usage"]["active_api_keys"], 1);
    assert_eq!(body["limits"]["requests_per_minute"], 100000);
    app.run_jobs().await;
}
