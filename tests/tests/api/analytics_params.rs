//! Parameter checks of every analytics endpoint: 422 for malformed or unknown parameters, 404
//! for a facility that is not the company's, 401 without a key; nothing is written.

use e2e::{push_ok as push, spawn_app, status_json};
use serde_json::json;

#[tokio::test]
async fn analytics_parameters_are_checked() {
    let app = spawn_app().await;
    let res = push(
        &app,
        json!({ "facility": { "name": "Mine" }, "date": "2026-11-20", "occupancy_pct": 90 }),
    )
    .await;
    let mine = res["facility"]["id"].as_str().unwrap().to_owned();
    let other = app.create_tenant("Other Co").await;
    let (s, theirs) = status_json(
        app.req_as(&other, reqwest::Method::POST, "/api/v1/sync")
            .json(&json!({ "facility": { "name": "Theirs" }, "date": "2026-11-20" }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 200);
    let theirs = theirs["facility"]["id"].as_str().unwrap().to_owned();
    let unknown = uuid::Uuid::new_v4();
    let before = app.count("sync_records").await;
    for path in ["ecri", "seasonality", "lease-up", "leads", "revpas"] {
        for (query, status, needle) in [
            ("facility_id=nope".to_owned(), 422, "facility_id"),
            ("facility_id=".to_owned(), 422, "facility_id"),
            (format!("facility_id={unknown}"), 404, "no facility"),
            (format!("facility_id={theirs}"), 404, "no facility"),
            ("facilty_id=x".to_owned(), 422, "facilty_id"),
            (
                format!("facility_id={mine}&facility_id={mine}"),
                422,
                "facility_id",
            ),
        ] {
            let (s, body) =
                status_json(app.get(&format!("/api/v1/analytics/{path}?{query}")).await).await;
            assert_eq!(s, status, "{path}?{query}: {body}");
            assert!(
                body["error"].as_str().unwrap().contains(needle),
                "{path}?{query}: {body}"
            );
        }
        let (s, _) = status_json(
            app.get(&format!("/api/v1/analytics/{path}?facility_id={mine}"))
                .await,
        )
        .await;
        assert_eq!(s, 200, "{path}");
    }
    for (path, needle) in [
        ("/api/v1/analytics/leads?period=7d", "period"),
        ("/api/v1/analytics/leads?period=", "period"),
        ("/api/v1/analytics/seasonality?size=big", "size"),
        ("/api/v1/analytics/seasonality?size=0x10", "size"),
        ("/api/v1/analytics/portfolio?facility_id=x", "facility_id"),
    ] {
        let (s, body) = status_json(app.get(path).await).await;
        assert_eq!(s, 422, "{path}: {body}");
        assert!(
            body["error"].as_str().unwrap().contains(needle),
            "{path}: {body}"
        );
    }
    // Another company sees only its own facility.
    let (s, p) = status_json(
        app.req_as(&other, reqwest::Method::GET, "/api/v1/analytics/portfolio")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(p["rollup"]["facilities"], 1);
    assert_eq!(p["facilities"][0]["facility_name"], "Theirs");
    // Without a key: 401.
    let s = app
        .http
        .get(app.url("/api/v1/analytics/portfolio"))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(s, 401);
    assert_eq!(app.count("sync_records").await, before);
}
