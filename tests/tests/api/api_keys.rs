use e2e::{spawn_app, status_json};
use serde_json::json;

#[tokio::test]
async fn keys_are_shown_once_listed_without_secrets_and_scoped_to_the_company() {
    let app = spawn_app().await;
    let (s, created) = status_json(
        app.post("/api/v1/api-keys", &json!({ "name": "crm" }))
            .await,
    )
    .await;
    assert_eq!(s, 201, "{created}");
    let key = created["api_key"].as_str().unwrap();
    assert!(key.starts_with("spk_") && key.len() == 47, "{key}");
    assert!(key.starts_with(created["prefix"].as_str().unwrap()));
    assert_eq!(created["name"], "crm");

    let (_, listed) = status_json(app.get("/api/v1/api-keys").await).await;
    let keys = listed["api_keys"].as_array().unwrap();
    assert_eq!(keys.len(), 2, "{listed}");
    let text = listed.to_string();
    assert!(!text.contains(key), "the full key must never be listed");
    assert!(keys
        .iter()
        .all(|k| k.get("api_key").is_none() && k.get("key_hash").is_none()));
    // The first key has been used (by this very call): its last use is recorded.
    assert!(keys[0]["last_used_at"].is_string(), "{listed}");

    // The stored hash is not the key.
    let stored: Vec<Vec<u8>> = sqlx::query_scalar("SELECT key_hash FROM api_keys")
        .fetch_all(app.db())
        .await
        .unwrap();
    assert!(stored
        .iter()
        .all(|h| h.len() == 32 && !String::from_utf8_lossy(h).contains(key)));

    // Another company can neither see nor revoke these keys.
    let other = app.create_tenant("Other").await;
    let (_, theirs) = status_json(
        app.req_as(&other, reqwest::Method::GET, "/api/v1/api-keys")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(theirs["api_keys"].as_array().unwrap().len(), 1);
    let path = format!("/api/v1/api-keys/{}", created["id"].as_str().unwrap());
    let r = app
        .req_as(&other, reqwest::Method::DELETE, &path)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let r = app
        .http
        .get(app.url("/api/v1/status"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.status(),
        200,
        "the key still works after the other company's attempt"
    );

    // Unknown fields in the creation body are refused.
    let (s, body) = status_json(
        app.post("/api/v1/api-keys", &json!({ "nmae": "typo" }))
            .await,
    )
    .await;
    assert_eq!(s, 422, "{body}");
}
