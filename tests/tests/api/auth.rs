use chrono::{Duration, Utc};
use e2e::{spawn_app, status_json};
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn missing_malformed_and_unknown_keys_are_401() {
    let app = spawn_app().await;
    let url = app.url("/api/v1/facilities");
    let unknown = jobs::tenancy::generate_key();
    let cases: Vec<(&str, Option<String>)> = vec![
        ("no header", None),
        ("basic scheme", Some("Basic dXNlcjpwYXNz".to_owned())),
        ("bearer without key", Some("Bearer ".to_owned())),
        ("not our key shape", Some("Bearer abc123".to_owned())),
        ("well-formed but unknown", Some(format!("Bearer {unknown}"))),
        (
            "a key with one character changed",
            Some(format!(
                "Bearer {}x",
                &app.tenant.api_key[..app.tenant.api_key.len() - 1]
            )),
        ),
    ];
    for (name, header) in cases {
        let mut req = app.http.get(&url);
        if let Some(h) = header {
            req = req.header("authorization", h);
        }
        let (status, body) = status_json(req.send().await.unwrap()).await;
        assert_eq!(status, 401, "{name}: {body}");
        assert!(
            body["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{name}: {body}"
        );
    }
    // Every protected route answers 401 without a key, including sync.
    let r = app
        .http
        .post(app.url("/api/v1/sync"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(app.count("sync_records").await, 0);
    // And the real key works.
    assert_eq!(app.get("/api/v1/facilities").await.status(), 200);
}

#[tokio::test]
async fn a_revoked_key_is_refused_at_once() {
    let app = spawn_app().await;
    let (s, created) = status_json(
        app.post("/api/v1/api-keys", &json!({ "name": "nightly sync" }))
            .await,
    )
    .await;
    assert_eq!(s, 201, "{created}");
    let second = created["api_key"].as_str().unwrap().to_owned();
    let r = app
        .http
        .get(app.url("/api/v1/status"))
        .bearer_auth(&second)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    let (s, revoked) = status_json(
        app.delete(&format!(
            "/api/v1/api-keys/{}",
            created["id"].as_str().unwrap()
        ))
        .await,
    )
    .await;
    assert_eq!(s, 200, "{revoked}");
    assert!(revoked["revoked_at"].is_string());
    let r = app
        .http
        .get(app.url("/api/v1/status"))
        .bearer_auth(&second)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    // The key used to revoke is unaffected.
    assert_eq!(app.get("/api/v1/status").await.status(), 200);
}

#[tokio::test]
async fn an_expired_trial_gets_402_except_on_status() {
    let app = spawn_app().await;
    jobs::tenancy::set_subscription(
        app.db(),
        app.tenant.company_id.into(),
        "trialing",
        Some(Utc::now() - Duration::minutes(1)),
    )
    .await
    .unwrap();
    for (method, path) in [
        (Method::GET, "/api/v1/facilities"),
        (Method::POST, "/api/v1/sync"),
        (Method::POST, "/api/v1/api-keys"),
        (Method::POST, "/api/v1/webhooks"),
    ] {
        let (status, body) = status_json(
            app.req(method.clone(), path)
                .json(&json!({"date": "2026-11-01", "facility": {"name": "X"}}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 402, "{method} {path}: {body}");
        assert!(
            body["error"].as_str().unwrap().contains("expired"),
            "{body}"
        );
    }
    assert_eq!(app.count("sync_records").await, 0);
    let (status, body) = status_json(app.get("/api/v1/status").await).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["subscription"]["state"], "expired");
    assert_eq!(body["subscription"]["api_access"], false);

    // Paying restores access at once; cancelling takes it away.
    jobs::tenancy::set_subscription(app.db(), app.tenant.company_id.into(), "active", None)
        .await
        .unwrap();
    assert_eq!(app.get("/api/v1/facilities").await.status(), 200);
    jobs::tenancy::set_subscription(app.db(), app.tenant.company_id.into(), "canceled", None)
        .await
        .unwrap();
    assert_eq!(app.get("/api/v1/facilities").await.status(), 402);
}

/// A lapsed company can still see and remove what acts on its behalf: keys, webhook
/// subscriptions and data sources; everything else stays 402.
#[tokio::test]
async fn a_lapsed_company_can_still_clean_up_keys_webhooks_and_data_sources() {
    let app = spawn_app().await;
    let (s, key) = status_json(
        app.post("/api/v1/api-keys", &json!({ "name": "old CRM" }))
            .await,
    )
    .await;
    assert_eq!(s, 201, "{key}");
    let (s, hook) = status_json(
        app.post(
            "/api/v1/webhooks",
            &json!({ "url": "https://hooks.example.com/in" }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{hook}");
    let (s, source) = status_json(
        app.post(
            "/api/v1/data-sources",
            &json!({ "provider": "generic_json", "verify": false, "base_url": "https://crm.example.com", "api_key": "k-0042" }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{source}");
    for state in ["expired", "canceled"] {
        jobs::tenancy::set_subscription(app.db(), app.tenant.company_id.into(), state, None)
            .await
            .unwrap();
        for path in [
            "/api/v1/api-keys",
            "/api/v1/webhooks",
            "/api/v1/data-sources",
        ] {
            let (s, body) = status_json(app.get(path).await).await;
            assert_eq!(s, 200, "{state} GET {path}: {body}");
        }
        assert_eq!(app.get("/api/v1/facilities").await.status(), 402, "{state}");
        assert_eq!(
            app.post(
                "/api/v1/data-sources/00000000-0000-0000-0000-000000000000/pull",
                &json!({})
            )
            .await
            .status(),
            402,
            "{state}"
        );
    }
    for path in [
        format!("/api/v1/api-keys/{}", key["id"].as_str().unwrap()),
        format!("/api/v1/webhooks/{}", hook["id"].as_str().unwrap()),
        format!("/api/v1/data-sources/{}", source["id"].as_str().unwrap()),
    ] {
        let r = app.delete(&path).await;
        assert!(r.status().is_success(), "DELETE {path}: {}", r.status());
    }
    assert_eq!(app.count("webhook_subscriptions").await, 0);
    assert_eq!(app.count("data_sources").await, 0);
    assert_eq!(app.count("api_keys WHERE revoked_at IS NOT NULL").await, 1);
}
