use e2e::{spawn_app, status_json};

#[tokio::test]
async fn health_and_readiness_answer_without_a_key() {
    let app = spawn_app().await;
    let (s, body) = status_json(app.http.get(app.url("/healthz")).send().await.unwrap()).await;
    assert_eq!((s, body["status"].as_str()), (200, Some("ok")));
    let (s, body) = status_json(app.http.get(app.url("/readyz")).send().await.unwrap()).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["postgres"], "ok");
    assert_eq!(body["redis"], "ok");
}

#[tokio::test]
async fn readiness_fails_when_postgres_is_away() {
    let world = e2e::World::new().await;
    // A server whose database does not exist: live, but not ready.
    let missing = format!(
        "{}/ssp_missing_{}",
        e2e::pg_server_url(),
        uuid::Uuid::new_v4().simple()
    );
    let server = e2e::Server::start(&world, &[("DATABASE_URL", missing.as_str())]).await;
    let http = reqwest::Client::new();
    let r = http
        .get(format!("{}/healthz", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let (s, body) = status_json(
        http.get(format!("{}/readyz", server.base))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 503, "{body}");
    assert_eq!(body["postgres"], "unreachable");
    assert_eq!(body["redis"], "ok");
    server.shutdown().await;
}
