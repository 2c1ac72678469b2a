use e2e::{spawn_app, status_json};
use serde_json::json;

async fn forgot(
    app: &e2e::TestApp,
    body: reqwest::Body,
    content_type: &str,
) -> (u16, serde_json::Value) {
    let r = app
        .http
        .post(app.url("/api/v1/auth/forgot"))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap();
    status_json(r).await
}

#[tokio::test]
async fn forgot_always_answers_ok_and_a_mailed_token_resets_the_password_once() {
    let app = spawn_app().await;
    let email = app.tenant.email.to_uppercase();

    // Public: no key. Known, unknown and malformed inputs all get the same answer.
    for (body, ct) in [
        (json!({ "email": email }).to_string(), "application/json"),
        (
            json!({ "email": "nobody@example.com" }).to_string(),
            "application/json",
        ),
        ("not json".to_owned(), "text/plain"),
        (String::new(), "application/json"),
    ] {
        let (s, res) = forgot(&app, body.into(), ct).await;
        assert_eq!((s, res), (200, json!({ "ok": true })));
    }
    let mails: Vec<(String, String)> = sqlx::query_as("SELECT to_address, body FROM mail_outbox")
        .fetch_all(app.db())
        .await
        .unwrap();
    assert_eq!(mails.len(), 1, "only the known address gets a mail");
    assert_eq!(mails[0].0, app.tenant.email);

    // The worker's delivery pass writes the mail (folder transport in development).
    let dir = std::env::temp_dir().join(format!("mail-{}", uuid::Uuid::new_v4().simple()));
    let mailer =
        jobs::mail::Mailer::new(None, "Service <no-reply@example.com>", dir.clone()).unwrap();
    assert_eq!(
        jobs::mail::deliver_due(app.db(), &mailer, 10)
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        jobs::mail::deliver_due(app.db(), &mailer, 10)
            .await
            .unwrap(),
        0,
        "sent once"
    );
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let eml = std::fs::read_to_string(&file).unwrap();
    assert!(eml.contains("Reset your password"), "{eml}");
    let _ = std::fs::remove_dir_all(&dir);

    let token = mails[0]
        .1
        .split("token=")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    let reset = |token: String, password: &'static str| {
        let req = app
            .http
            .post(app.url("/api/v1/auth/reset"))
            .json(&json!({ "token": token, "password": password }));
        async move { status_json(req.send().await.unwrap()).await }
    };
    let (s, body) = reset(token.clone(), "short").await;
    assert_eq!(s, 422, "{body}");
    assert!(body["error"].as_str().unwrap().starts_with("password:"));
    let (s, body) = reset(token.clone(), "a brand new password").await;
    assert_eq!((s, body), (200, json!({ "ok": true })));
    assert!(
        jobs::tenancy::verify_password(app.db(), &app.tenant.email, "a brand new password")
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        jobs::tenancy::verify_password(app.db(), &app.tenant.email, "correct horse battery")
            .await
            .unwrap()
            .is_none()
    );

    // Single use.
    let (s, body) = reset(token, "another new password").await;
    assert_eq!(s, 422, "{body}");
    assert_eq!(body["error"], "token: is invalid, expired or already used");

    // Expired after an hour.
    forgot(
        &app,
        json!({ "email": app.tenant.email }).to_string().into(),
        "application/json",
    )
    .await;
    let body: String =
        sqlx::query_scalar("SELECT body FROM mail_outbox ORDER BY created_at DESC LIMIT 1")
            .fetch_one(app.db())
            .await
            .unwrap();
    let token = body
        .split("token=")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    sqlx::query("UPDATE password_reset_tokens SET expires_at = now() - interval '1 second' WHERE used_at IS NULL")
        .execute(app.db())
        .await
        .unwrap();
    let (s, _) = reset(token, "too late password").await;
    assert_eq!(s, 422);
}

#[tokio::test]
async fn forgot_is_limited_silently_per_address() {
    let app = spawn_app().await;
    for _ in 0..8 {
        let (s, res) = forgot(
            &app,
            json!({ "email": app.tenant.email }).to_string().into(),
            "application/json",
        )
        .await;
        assert_eq!((s, res), (200, json!({ "ok": true })));
    }
    assert_eq!(app.count("mail_outbox").await, 5);
}
