//! Every error the service returns uses the `{"error": "..."}` envelope.

use e2e::{spawn_app, status_json};
use reqwest::Method;

#[tokio::test]
async fn framework_level_errors_use_the_envelope() {
    let app = spawn_app().await;
    let cases = [
        (Method::GET, "/api/v1/nope", 404),
        (Method::GET, "/nope", 404),
        (Method::PATCH, "/api/v1/facilities", 405),
        (Method::GET, "/api/v1/sync", 405),
        (Method::GET, "/api/v1/facilities/not-a-uuid", 404),
        (
            Method::GET,
            "/api/v1/facilities/6f1c9f0e-0000-4000-8000-000000000000",
            404,
        ),
        (Method::DELETE, "/api/v1/api-keys/xyz", 404),
        // Not UTF-8 once decoded: the path extractor's own rejection, wrapped.
        (Method::GET, "/api/v1/facilities/%FF", 400),
    ];
    for (method, path, want) in cases {
        let r = app.req(method.clone(), path).send().await.unwrap();
        let ct = r
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_owned());
        let (status, body) = status_json(r).await;
        assert_eq!(status, want, "{method} {path}: {body}");
        assert!(
            body["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{method} {path}: {body}"
        );
        assert_eq!(ct.as_deref(), Some("application/json"), "{method} {path}");
    }
}

#[tokio::test]
async fn every_response_carries_a_request_id() {
    let app = spawn_app().await;
    let r = app.get("/api/v1/status").await;
    let id = r.headers().get("x-request-id").unwrap().to_str().unwrap();
    assert!(uuid::Uuid::parse_str(id).is_ok());
}
