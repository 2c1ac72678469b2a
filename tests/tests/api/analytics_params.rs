//! Parameter checks of every analytics endpoint: 422 for malformed parameters, unknown ones
//! ignored, 404 for a facility that is not the company's, 401 without a key; nothing is
//! written.

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
    let theirs = e2e::push_ok_as(
        &app,
        &other,
        json!({ "facility": { "name": "Theirs" }, "date": "2026-11-20" }),
    )
    .await;
    let unknown = uuid::Uuid::new_v4();
    let before = app.count("sync_records").await;
    for path in ["ecri", "seasonality", "lease-up", "leads", "revpas"] {
        for (query, status, needle) in [
            ("facility_id=nope".to_owned(), 422, "facility_id"),
            ("facility_id=".to_owned(), 422, "facility_id"),
            (format!("facility_id={unknown}"), 404, "no facility"),
            (format!("facility_id={theirs}"), 404, "no facility"),
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
        // An unknown parameter is ignored: the answer is the one without it.
        let (s, plain) = status_json(app.get(&format!("/api/v1/analytics/{path}")).await).await;
        assert_eq!(s, 200, "{path}: {plain}");
        let (s, with_unknown) = status_json(
            app.get(&format!(
                "/api/v1/analytics/{path}?facilty_id=x&utm_source=crm"
            ))
            .await,
        )
        .await;
        assert_eq!(s, 200, "{path}: {with_unknown}");
        assert_eq!(
            with_unknown, plain,
            "{path}: unknown parameters changed the answer"
        );
    }
    for (path, needle) in [
        ("/api/v1/analytics/leads?period=7d", "period"),
        ("/api/v1/analytics/leads?period=", "period"),
        ("/api/v1/analytics/seasonality?size=big", "size"),
        ("/api/v1/analytics/seasonality?size=0x10", "size"),
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
    app.run_jobs().await;
}
