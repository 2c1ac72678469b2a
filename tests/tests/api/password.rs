//! Password reset end to end: `forgot` records, the worker's passes mail (sealed at rest, blanked
//! once sent), the mailed token resets once; the limits that must not lock the owner out.

use e2e::{spawn_app, spawn_app_with, status_json, TestApp};
use serde_json::json;

async fn forgot(
    app: &TestApp,
    body: reqwest::Body,
    content_type: &str,
) -> (u16, serde_json::Value) {
    forgot_from(app, body, content_type, None).await
}

async fn forgot_from(
    app: &TestApp,
    body: reqwest::Body,
    content_type: &str,
    forwarded_for: Option<&str>,
) -> (u16, serde_json::Value) {
    let mut req = app
        .http
        .post(app.url("/api/v1/auth/forgot"))
        .header("content-type", content_type)
        .body(body);
    if let Some(xff) = forwarded_for {
        req = req.header("x-forwarded-for", xff);
    }
    status_json(req.send().await.unwrap()).await
}

async fn forgot_email(app: &TestApp, email: &str) {
    let (s, res) = forgot(
        app,
        json!({ "email": email }).to_string().into(),
        "application/json",
    )
    .await;
    assert_eq!((s, res), (200, json!({ "ok": true })));
}

/// The worker's pass over recorded requests; returns how many mails it queued.
async fn worker_pass(app: &TestApp) -> usize {
    let config = &app.server.state.config;
    jobs::password_reset::process_requests(
        app.db(),
        &config.master_key,
        &config.public_base_url,
        100,
    )
    .await
    .unwrap()
}

/// The reset mails still in the outbox, opened with the master key (only the worker does this).
async fn queued_tokens(app: &TestApp) -> Vec<String> {
    let rows: Vec<(uuid::Uuid, Option<Vec<u8>>)> = sqlx::query_as(
        "SELECT id, body_sealed FROM mail_outbox WHERE sent_at IS NULL ORDER BY created_at",
    )
    .fetch_all(app.db())
    .await
    .unwrap();
    rows.into_iter()
        .map(|(id, sealed)| {
            let body = jobs::crypto::open(
                &app.server.state.config.master_key,
                id.as_bytes(),
                &sealed.expect("a queued mail has a sealed body"),
            )
            .unwrap();
            let body = String::from_utf8(body).unwrap();
            body.split("token=")
                .nth(1)
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap()
                .to_owned()
        })
        .collect()
}

fn mailer() -> (jobs::mail::Mailer, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("mail-{}", uuid::Uuid::new_v4().simple()));
    let mailer =
        jobs::mail::Mailer::new(None, "Service <no-reply@example.com>", dir.clone()).unwrap();
    (mailer, dir)
}

async fn reset(app: &TestApp, token: &str, password: &str) -> (u16, serde_json::Value) {
    let req = app
        .http
        .post(app.url("/api/v1/auth/reset"))
        .json(&json!({ "token": token, "password": password }));
    status_json(req.send().await.unwrap()).await
}

#[tokio::test]
async fn forgot_always_answers_ok_and_a_mailed_token_resets_the_password_once() {
    let app = spawn_app().await;
    let email = app.tenant.email.to_uppercase();

    // Public: no key. Known, unknown and malformed inputs all get the same answer, and the
    // request path does the same work for known and unknown addresses: one recorded request.
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
    assert_eq!(app.count("password_reset_requests").await, 2);
    assert_eq!(
        app.count("mail_outbox").await,
        0,
        "nothing is looked up or mailed in the request"
    );
    assert_eq!(app.count("password_reset_tokens").await, 0);

    assert_eq!(
        worker_pass(&app).await,
        1,
        "only the known address gets a mail"
    );
    assert_eq!(app.count("password_reset_requests").await, 0);
    let to: String = sqlx::query_scalar("SELECT to_address FROM mail_outbox")
        .fetch_one(app.db())
        .await
        .unwrap();
    assert_eq!(to, app.tenant.email);
    let tokens = queued_tokens(&app).await;
    assert_eq!(tokens.len(), 1);
    let token = tokens[0].clone();

    // At rest the mail holds no readable link.
    let (plain, sealed): (Option<String>, Vec<u8>) =
        sqlx::query_as("SELECT body, body_sealed FROM mail_outbox")
            .fetch_one(app.db())
            .await
            .unwrap();
    assert_eq!(plain, None);
    assert!(!String::from_utf8_lossy(&sealed).contains(&token));

    // The worker's delivery pass writes the mail (folder transport in development) and blanks
    // the stored body.
    let (mailer, dir) = mailer();
    let key = &app.server.state.config.master_key;
    assert_eq!(
        jobs::mail::deliver_due(app.db(), &mailer, key, 10)
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        jobs::mail::deliver_due(app.db(), &mailer, key, 10)
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
    assert_eq!(
        app.count("mail_outbox WHERE sent_at IS NOT NULL AND body IS NULL AND body_sealed IS NULL")
            .await,
        1
    );

    let (s, body) = reset(&app, &token, "short").await;
    assert_eq!(s, 422, "{body}");
    assert!(body["error"].as_str().unwrap().starts_with("password:"));
    let (s, body) = reset(&app, &token, "a brand new password").await;
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
    let (s, body) = reset(&app, &token, "another new password").await;
    assert_eq!(s, 422, "{body}");
    assert_eq!(body["error"], "token: is invalid, expired or already used");

    // Expired after an hour (and the next mail waits out the five-minute spacing).
    sqlx::query("UPDATE password_reset_tokens SET created_at = now() - interval '6 minutes'")
        .execute(app.db())
        .await
        .unwrap();
    forgot_email(&app, &app.tenant.email).await;
    assert_eq!(worker_pass(&app).await, 1);
    let token = queued_tokens(&app).await.pop().unwrap();
    sqlx::query("UPDATE password_reset_tokens SET expires_at = now() - interval '1 second' WHERE used_at IS NULL")
        .execute(app.db())
        .await
        .unwrap();
    let (s, _) = reset(&app, &token, "too late password").await;
    assert_eq!(s, 422);
}

/// A stranger repeating `forgot` for someone's address gets them one mail per five minutes,
/// and never stops the owner from getting a working link.
#[tokio::test]
async fn repeated_requests_mail_once_per_five_minutes_and_never_lock_the_owner_out() {
    let app = spawn_app().await;
    for _ in 0..8 {
        forgot_email(&app, &app.tenant.email).await;
    }
    assert_eq!(worker_pass(&app).await, 1);
    assert_eq!(app.count("mail_outbox").await, 1);
    let first = queued_tokens(&app).await.pop().unwrap();

    // Six minutes later the owner asks again and gets a fresh link; the first still works too
    // until used (each link is valid an hour, once).
    sqlx::query("UPDATE password_reset_tokens SET created_at = now() - interval '6 minutes'")
        .execute(app.db())
        .await
        .unwrap();
    for _ in 0..20 {
        forgot_email(&app, &app.tenant.email).await;
    }
    assert_eq!(worker_pass(&app).await, 1);
    assert_eq!(app.count("mail_outbox").await, 2);
    let (s, body) = reset(&app, &first, "the owner's new password").await;
    assert_eq!((s, body), (200, json!({ "ok": true })));
}

/// Past the per-client limit `forgot` still answers the same but records nothing. A forged
/// `X-Forwarded-For` does not make a new client unless a proxy is trusted to have written it.
#[tokio::test]
async fn the_per_client_limit_trusts_only_configured_proxies() {
    let app = spawn_app().await;
    for i in 0..35 {
        let (s, res) = forgot_from(
            &app,
            json!({ "email": format!("someone{i}@example.com") })
                .to_string()
                .into(),
            "application/json",
            Some(&format!("203.0.113.{i}")),
        )
        .await;
        assert_eq!((s, res), (200, json!({ "ok": true })));
    }
    assert_eq!(app.count("password_reset_requests").await, 30);

    // Behind one trusted proxy, the last entry is the client the proxy saw.
    let proxied = spawn_app_with(&[("TRUSTED_PROXIES", "1")]).await;
    for i in 0..35 {
        forgot_from(
            &proxied,
            json!({ "email": format!("someone{i}@example.com") })
                .to_string()
                .into(),
            "application/json",
            Some(&format!("198.51.100.7, 203.0.113.{}", i % 2)),
        )
        .await;
    }
    // Two clients, each within its 30.
    assert_eq!(proxied.count("password_reset_requests").await, 35);
}

/// `reset` is limited per client: guessing tokens gets 429, not endless tries.
#[tokio::test]
async fn reset_attempts_are_limited_per_client() {
    let app = spawn_app().await;
    let mut refused = 0;
    for i in 0..33 {
        let (s, body) = reset(&app, &format!("guess-{i}"), "a long enough password").await;
        match s {
            422 => assert_eq!(body["error"], "token: is invalid, expired or already used"),
            429 => {
                assert!(
                    body["error"]
                        .as_str()
                        .unwrap()
                        .contains("too many attempts"),
                    "{body}"
                );
                refused += 1;
            }
            other => panic!("{other}: {body}"),
        }
    }
    assert_eq!(refused, 3);
}

/// Sent mail is purged after the retention period.
#[tokio::test]
async fn sent_mail_is_purged_after_retention() {
    let app = spawn_app().await;
    forgot_email(&app, &app.tenant.email).await;
    worker_pass(&app).await;
    let (mailer, dir) = mailer();
    jobs::mail::deliver_due(app.db(), &mailer, &app.server.state.config.master_key, 10)
        .await
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let retention = std::time::Duration::from_secs(3600);
    assert_eq!(
        jobs::mail::purge_finished(app.db(), retention, 100)
            .await
            .unwrap(),
        0
    );
    sqlx::query("UPDATE mail_outbox SET sent_at = now() - interval '2 hours'")
        .execute(app.db())
        .await
        .unwrap();
    assert_eq!(
        jobs::mail::purge_finished(app.db(), retention, 100)
            .await
            .unwrap(),
        1
    );
    assert_eq!(app.count("mail_outbox").await, 0);
}

/// A stranger's failed logins lock an address's dashboard login for 15 minutes; the lockout
/// page says a reset lets the owner back in, and it does.
#[tokio::test]
async fn a_reset_lifts_the_login_lockout_a_stranger_ran_up() {
    let app = spawn_app().await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let login = |password: &'static str| {
        http.post(app.url("/login"))
            .form(&[("email", app.tenant.email.as_str()), ("password", password)])
            .send()
    };
    for _ in 0..10 {
        assert_eq!(login("a wrong guess").await.unwrap().status(), 401);
    }
    assert_eq!(login("a wrong guess").await.unwrap().status(), 429);
    forgot_email(&app, &app.tenant.email).await;
    assert_eq!(worker_pass(&app).await, 1);
    let token = queued_tokens(&app).await.pop().unwrap();
    let (s, body) = reset(&app, &token, "the owner's new password").await;
    assert_eq!((s, body), (200, json!({ "ok": true })));
    // Signed in with the new password (a 303 to the portfolio), not throttled.
    let r = login("the owner's new password").await.unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/app/portfolio");
}

/// A login that checked the old password just before a reset commits gets no session: the
/// reset ends every session of the user, including one that would start after it.
#[tokio::test]
async fn a_login_checked_before_a_reset_gets_no_session_after_it() {
    let app = spawn_app().await;
    let checked =
        jobs::tenancy::verify_password(app.db(), &app.tenant.email, "correct horse battery")
            .await
            .unwrap()
            .expect("the old password checks out");
    forgot_email(&app, &app.tenant.email).await;
    assert_eq!(worker_pass(&app).await, 1);
    let token = queued_tokens(&app).await.pop().unwrap();
    let (s, body) = reset(&app, &token, "the owner's new password").await;
    assert_eq!((s, body), (200, json!({ "ok": true })));
    let sessions = app.count("web_sessions").await;
    assert!(jobs::sessions::start(app.db(), &checked)
        .await
        .unwrap()
        .is_none());
    assert_eq!(app.count("web_sessions").await, sessions);
    // With the new password's check, a session starts.
    let fresh =
        jobs::tenancy::verify_password(app.db(), &app.tenant.email, "the owner's new password")
            .await
            .unwrap()
            .unwrap();
    assert!(jobs::sessions::start(app.db(), &fresh)
        .await
        .unwrap()
        .is_some());
    assert_eq!(app.count("web_sessions").await, sessions + 1);
}
