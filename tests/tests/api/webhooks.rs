//! Signed webhooks end to end: subscriptions through the API, deliveries made by real worker
//! processes to a real HTTPS receiver on loopback (a certificate authority made in the test and
//! trusted through `WEBHOOK_CA_FILE`), retries on the configured schedule, crash and Redis-loss
//! safety, and the outbound guard.

use e2e::receiver::{expected_signature, Receiver, Reply, TestCa};
use e2e::{
    all_jobs_finished, spawn_app, spawn_app_with, status_json, wait_until, TestApp, WorkerProcess,
};
use jobs::webhooks::client::{Outgoing, WebhookClient};
use jobs::webhooks::RecommendationsReady;
use reqwest::Method;
use serde_json::{json, Value};
use std::time::Duration;
use uuid::Uuid;

const LIMIT: Duration = Duration::from_secs(90);

/// Settings that let deliveries reach the test's loopback receiver over TLS.
fn hook_env(ca: &TestCa, schedule: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "WEBHOOK_ALLOW_PRIVATE_TARGETS",
            "127.0.0.0/8,::1".to_owned(),
        ),
        ("WEBHOOK_CA_FILE", ca.pem_path().to_owned()),
        ("WEBHOOK_RETRY_SCHEDULE", schedule.to_owned()),
    ]
}

fn borrowed<'a>(vars: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    vars.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

async fn subscribe(app: &TestApp, url: &str) -> (Uuid, String) {
    let (s, body) = status_json(app.post("/api/v1/webhooks", &json!({ "url": url })).await).await;
    assert_eq!(s, 201, "{body}");
    (
        body["id"].as_str().unwrap().parse().unwrap(),
        body["secret"].as_str().unwrap().to_owned(),
    )
}

/// Stores a (fake) recommendation run's event the way the pricing engine does: deliveries
/// recorded in the run's transaction, pushed after commit.
async fn record_run(
    app: &TestApp,
    facility: &str,
    per_size_count: i32,
) -> (RecommendationsReady, Vec<Uuid>) {
    let facility_id: Uuid = sqlx::query_scalar(
        "INSERT INTO facilities (id, company_id, name) VALUES (gen_random_uuid(), $1, $2)
         ON CONFLICT (company_id, lower(name)) DO UPDATE SET name = excluded.name RETURNING id",
    )
    .bind(app.tenant.company_id)
    .bind(facility)
    .fetch_one(app.db())
    .await
    .unwrap();
    let event = RecommendationsReady {
        company_id: app.tenant.company_id.into(),
        facility_id: facility_id.into(),
        facility_name: facility.to_owned(),
        recommendation_id: Uuid::now_v7(),
        generated_at: chrono::Utc::now(),
        per_size_count,
    };
    let recorded = jobs::seed::recommendations_ready(app.db(), &event)
        .await
        .unwrap();
    app.server.state.queues.push_jobs(&recorded).await;
    (event, recorded.ids(jobs::queue::Kind::WebhookDelivery))
}

async fn deliveries(app: &TestApp, query: &str) -> Vec<Value> {
    let (s, body) = status_json(
        app.get(&format!("/api/v1/webhooks/deliveries{query}"))
            .await,
    )
    .await;
    assert_eq!(s, 200, "{body}");
    body["deliveries"].as_array().unwrap().clone()
}

async fn delivery_of(app: &TestApp, subscription: Uuid) -> Value {
    let list = deliveries(app, &format!("?subscription_id={subscription}")).await;
    assert_eq!(list.len(), 1, "{list:?}");
    list[0].clone()
}

fn codes(delivery: &Value) -> Vec<Value> {
    delivery["attempt_log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["http_status"].clone())
        .collect()
}

async fn count(app: &TestApp, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(app.db()).await.unwrap()
}

#[tokio::test]
async fn webhook_subscriptions_validate_input_and_keep_tenants_apart() {
    let app = spawn_app().await;
    for (body, fragment) in [
        (json!({ "url": "http://hooks.example.com/in" }), "https://"),
        (json!({ "url": "https://127.0.0.1/in" }), "loopback"),
        (json!({ "url": "https://[::1]/in" }), "loopback"),
        (json!({ "url": "https://10.0.0.1/in" }), "private"),
        (
            json!({ "url": "https://169.254.169.254/latest" }),
            "link-local",
        ),
        (json!({ "url": "https://localhost:8443/in" }), "loopback"),
        (json!({ "url": "https://[::ffff:0:127.0.0.1]/in" }), "SIIT"),
        (json!({ "url": "https://[::ffff:0:8.8.8.8]/in" }), "SIIT"),
        (json!({ "url": "https://[64:ff9b:1::a00:1]/in" }), "NAT64"),
        (json!({ "url": "not a url" }), "url:"),
        (
            json!({ "url": "https://hooks.example.com", "events": ["nope"] }),
            "events[0]",
        ),
        (
            json!({ "url": "https://hooks.example.com", "events": [] }),
            "events",
        ),
        (json!({ "events": ["recommendations.ready"] }), "url"),
        (
            json!({ "url": "https://hooks.example.com", "colour": "red" }),
            "colour",
        ),
        (json!({ "url": 5 }), "url"),
    ] {
        let (s, res) = status_json(app.post("/api/v1/webhooks", &body).await).await;
        assert_eq!(s, 422, "{body}: {res}");
        assert!(
            res["error"].as_str().unwrap().contains(fragment),
            "{body}: {res}"
        );
    }
    assert_eq!(
        app.count("webhook_subscriptions").await,
        0,
        "nothing written"
    );

    let (s, created) = status_json(
        app.post(
            "/api/v1/webhooks",
            &json!({ "url": "https://hooks.example.com/in" }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{created}");
    let secret = created["secret"].as_str().unwrap().to_owned();
    assert!(
        secret.starts_with("whsec_") && secret.len() > 40,
        "{secret}"
    );
    assert_eq!(created["url"], "https://hooks.example.com/in");
    assert_eq!(
        created["events"],
        json!(["recommendations.ready", "ecri.approved", "rates.approved"])
    );
    assert_eq!(created["all_events"], true);
    let id = created["id"].as_str().unwrap().to_owned();
    // The secret is sealed at rest, and listed only as a hint.
    let sealed: Vec<u8> = sqlx::query_scalar("SELECT secret_sealed FROM webhook_subscriptions")
        .fetch_one(app.db())
        .await
        .unwrap();
    assert!(!String::from_utf8_lossy(&sealed).contains(&secret[6..]));
    let (s, listed) = status_json(app.get("/api/v1/webhooks").await).await;
    assert_eq!(s, 200);
    assert_eq!(
        listed["events"],
        json!(["recommendations.ready", "ecri.approved", "rates.approved"])
    );
    assert_eq!(listed["webhooks"][0]["id"], id.as_str());
    assert!(listed["webhooks"][0].get("secret").is_none());
    assert!(!listed.to_string().contains(&secret));
    assert_eq!(
        listed["webhooks"][0]["secret_hint"],
        format!("••••{}", &secret[secret.len() - 4..])
    );

    // Explicit events.
    let (s, explicit) = status_json(
        app.post(
            "/api/v1/webhooks",
            &json!({ "url": "https://hooks.example.com/two", "events": ["recommendations.ready"] }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{explicit}");
    assert_eq!(explicit["all_events"], false);

    // Another company sees none of it and reaches none of it.
    let other = app.create_tenant("Other").await;
    let as_other = |m: Method, p: String| app.req_as(&other, m, &p).send();
    let (_, theirs) = status_json(
        as_other(Method::GET, "/api/v1/webhooks".into())
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(theirs["webhooks"], json!([]));
    for (m, p) in [
        (Method::DELETE, format!("/api/v1/webhooks/{id}")),
        (Method::POST, format!("/api/v1/webhooks/{id}/test")),
        (
            Method::GET,
            format!("/api/v1/webhooks/deliveries?subscription_id={id}"),
        ),
    ] {
        let (s, res) = status_json(as_other(m.clone(), p.clone()).await.unwrap()).await;
        assert_eq!(s, 404, "{m} {p}: {res}");
        assert!(res["error"].is_string());
    }
    assert_eq!(app.count("webhook_deliveries").await, 0);

    // Malformed ids name nothing; malformed filters are 422.
    assert_eq!(app.delete("/api/v1/webhooks/not-an-id").await.status(), 404);
    for q in [
        "?status=lost",
        "?limit=0",
        "?limit=101",
        "?subscription_id=x",
        "?cursor=x",
        "?colour=red",
    ] {
        let (s, res) = status_json(app.get(&format!("/api/v1/webhooks/deliveries{q}")).await).await;
        assert_eq!(s, 422, "{q}: {res}");
    }
    let (s, page) = status_json(app.get("/api/v1/webhooks/deliveries").await).await;
    assert_eq!(
        (s, page),
        (200, json!({ "deliveries": [], "next_cursor": null }))
    );

    assert_eq!(
        app.delete(&format!("/api/v1/webhooks/{id}")).await.status(),
        204
    );
    assert_eq!(
        app.delete(&format!("/api/v1/webhooks/{id}")).await.status(),
        404
    );
    let (_, listed) = status_json(app.get("/api/v1/webhooks").await).await;
    assert_eq!(listed["webhooks"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn webhook_deliveries_are_signed_and_carry_the_interface_payload() {
    let ca = TestCa::new();
    let env = hook_env(&ca, "1s,1s,1s,1s");
    let app = spawn_app_with(&borrowed(&env)).await;
    let receiver = Receiver::start(&ca, |_, _| Reply::status(200)).await;
    let (sub, secret) = subscribe(&app, &receiver.url("/hooks/pricing")).await;
    let worker = WorkerProcess::start(&app.world, &borrowed(&env));

    let (event, jobs) = record_run(&app, "Elm Street", 6).await;
    assert_eq!(jobs.len(), 1);
    let (s, ping) = status_json(
        app.post(&format!("/api/v1/webhooks/{sub}/test"), &json!({}))
            .await,
    )
    .await;
    assert_eq!(s, 202, "{ping}");
    assert_eq!(ping["delivery"]["test"], true);
    wait_until("both deliveries complete", LIMIT, || async {
        count(
            &app,
            "SELECT count(*) FROM webhook_deliveries WHERE status = 'complete'",
        )
        .await
            == 2
    })
    .await;
    wait_until("all jobs finished", LIMIT, || all_jobs_finished(app.db())).await;

    let hits = receiver.hits();
    assert_eq!(hits.len(), 2);
    let log = deliveries(&app, "").await;
    assert_eq!(log.len(), 2);
    for hit in &hits {
        assert_eq!(hit.path, "/hooks/pricing");
        assert_eq!(hit.header("content-type"), Some("application/json"));
        assert_eq!(hit.header("x-service-event"), Some("recommendations.ready"));
        // The receiver recomputes the HMAC over the raw body with the secret it was given.
        let signature = hit.header("x-service-signature").unwrap();
        assert_eq!(signature, expected_signature(&secret, &hit.body));
        assert_ne!(signature, expected_signature("whsec_wrong", &hit.body));
        let mut tampered = hit.body.clone();
        tampered.push(b' ');
        assert_ne!(signature, expected_signature(&secret, &tampered));
        // The delivery id is the log's id; the timestamp is unix seconds.
        let id = hit.header("x-service-delivery").unwrap();
        let entry = log
            .iter()
            .find(|d| d["id"] == id)
            .expect("delivery id in the log");
        assert_eq!(entry["status"], "complete");
        assert_eq!(entry["attempts"], 1);
        assert_eq!(entry["last_http_status"], 200);
        assert_eq!(entry["last_error"], Value::Null);
        assert_eq!(codes(entry), vec![json!(200)]);
        assert_eq!(entry["attempt_log"][0]["response_body"], "answer 200");
        let stamp: i64 = hit.header("x-service-timestamp").unwrap().parse().unwrap();
        let created =
            chrono::DateTime::parse_from_rfc3339(entry["created_at"].as_str().unwrap()).unwrap();
        let finished =
            chrono::DateTime::parse_from_rfc3339(entry["finished_at"].as_str().unwrap()).unwrap();
        assert!(created.timestamp() <= stamp && stamp <= finished.timestamp());
    }
    let body_of = |test: bool| {
        hits.iter()
            .map(|h| h.json())
            .find(|b| b.get("test").is_some() == test)
            .unwrap()
    };
    let real = body_of(false);
    assert_eq!(
        real,
        json!({
            "event": "recommendations.ready",
            "company_id": app.tenant.company_id,
            "facility_id": event.facility_id,
            "facility_name": "Elm Street",
            "recommendation_id": event.recommendation_id,
            "generated_at": event.generated_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "per_size_count": 6,
        })
    );
    let generated = real["generated_at"].as_str().unwrap();
    assert!(
        generated.ends_with('Z') && generated.as_bytes()[generated.len() - 5] == b'.',
        "{generated}"
    );
    let test = body_of(true);
    assert_eq!(test["test"], true);
    assert_eq!(test["event"], "recommendations.ready");
    assert_eq!(test["company_id"], json!(app.tenant.company_id));
    assert_eq!(test["facility_name"], "Elm Street");

    // Recording the same run again records nothing more.
    let again = jobs::seed::recommendations_ready(app.db(), &event)
        .await
        .unwrap();
    assert!(again.is_empty());
    // The secret never reaches the logs or the database in clear.
    assert!(!worker.log_text().contains(&secret));
    let clear: i64 = count(
        &app,
        &format!(
            "SELECT count(*) FROM webhook_deliveries WHERE body LIKE '%{}%'",
            &secret[6..]
        ),
    )
    .await;
    assert_eq!(clear, 0);
    drop(worker);
}

#[tokio::test]
async fn webhook_retries_follow_the_schedule_until_complete_or_five_attempts() {
    let ca = TestCa::new();
    // Waits shortened from 1 min, 5 min, 30 min, 2 h; the ratio of the last to the first is 10.
    let mut env = hook_env(&ca, "500ms,1500ms,3s,5s");
    env.push(("WEBHOOK_TIMEOUT_MS", "700".to_owned()));
    let app = spawn_app_with(&borrowed(&env)).await;
    let flaky = Receiver::start(&ca, |n, _| Reply::status(if n < 2 { 500 } else { 200 })).await;
    let broken = Receiver::start(&ca, |_, _| Reply::status(503)).await;
    let slow = Receiver::start(&ca, |_, _| Reply::status(200).after(Duration::from_secs(3))).await;
    let closed_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (flaky_sub, _) = subscribe(&app, &flaky.url("/in")).await;
    let (broken_sub, _) = subscribe(&app, &broken.url("/in")).await;
    let (slow_sub, _) = subscribe(&app, &slow.url("/in")).await;
    let (closed_sub, _) = subscribe(&app, &format!("https://127.0.0.1:{closed_port}/in")).await;
    let worker = WorkerProcess::start(&app.world, &borrowed(&env));
    let (_, jobs) = record_run(&app, "Oak", 3).await;
    assert_eq!(jobs.len(), 4);
    wait_until("every delivery finished", LIMIT, || async {
        count(
            &app,
            "SELECT count(*) FROM webhook_deliveries WHERE status IN ('complete', 'failed')",
        )
        .await
            == 4
    })
    .await;
    wait_until("all jobs finished", LIMIT, || all_jobs_finished(app.db())).await;

    // 500, 500, then 200: three attempts, complete, each attempt's code in the log.
    let d = delivery_of(&app, flaky_sub).await;
    assert_eq!(
        (d["status"].as_str(), d["attempts"].as_i64()),
        (Some("complete"), Some(3)),
        "{d}"
    );
    assert_eq!(codes(&d), vec![json!(500), json!(500), json!(200)]);
    assert_eq!(
        d["attempt_log"][0]["error"],
        "the receiver answered 500 Internal Server Error"
    );
    assert_eq!(d["attempt_log"][0]["response_body"], "answer 500");
    assert_eq!(flaky.count(), 3);

    // Always 503: exactly five attempts, then failed.
    let d = delivery_of(&app, broken_sub).await;
    assert_eq!(
        (d["status"].as_str(), d["attempts"].as_i64()),
        (Some("failed"), Some(5)),
        "{d}"
    );
    assert_eq!(codes(&d), vec![json!(503); 5]);
    assert_eq!(d["last_http_status"], 503);
    assert!(d["last_error"].as_str().unwrap().contains("503"), "{d}");
    assert_eq!(broken.count(), 5);
    let job: (String, String) = sqlx::query_as(
        "SELECT status, last_error FROM job_runs WHERE payload->>'delivery_id' = $1",
    )
    .bind(d["id"].as_str().unwrap())
    .fetch_one(app.db())
    .await
    .unwrap();
    assert_eq!(job.0, "failed");

    // The waits between attempts: each scheduled exactly as configured, never started early,
    // growing in the configured order, the last about ten times the first.
    let configured = [0.5, 1.5, 3.0, 5.0];
    let times: Vec<(f64, f64)> = sqlx::query_as(
        "SELECT extract(epoch FROM started_at)::float8, extract(epoch FROM finished_at)::float8
         FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt",
    )
    .bind(d["id"].as_str().unwrap().parse::<Uuid>().unwrap())
    .fetch_all(app.db())
    .await
    .unwrap();
    let gaps: Vec<f64> = times.windows(2).map(|w| w[1].0 - w[0].1).collect();
    for (gap, want) in gaps.iter().zip(configured) {
        assert!(
            *gap >= want,
            "an attempt came before its wait was over: {gaps:?}"
        );
    }
    assert!(gaps.windows(2).all(|w| w[0] < w[1]), "waits grow: {gaps:?}");
    assert!(
        gaps[3] / gaps[0] > 3.0,
        "last wait about 10x the first: {gaps:?}"
    );
    let receiver_gaps: Vec<f64> = broken
        .hits()
        .windows(2)
        .map(|w| (w[1].at - w[0].at).as_secs_f64())
        .collect();
    assert!(
        receiver_gaps.windows(2).all(|w| w[0] < w[1]),
        "as the receiver saw them: {receiver_gaps:?}"
    );

    // A slow receiver (timeout) and a refused connection are failed attempts too.
    let d = delivery_of(&app, slow_sub).await;
    assert_eq!(
        (d["status"].as_str(), d["attempts"].as_i64()),
        (Some("failed"), Some(5)),
        "{d}"
    );
    assert!(d["last_error"].as_str().unwrap().contains("timeout"), "{d}");
    assert_eq!(codes(&d), vec![Value::Null; 5]);
    let d = delivery_of(&app, closed_sub).await;
    assert_eq!(
        (d["status"].as_str(), d["attempts"].as_i64()),
        (Some("failed"), Some(5)),
        "{d}"
    );
    assert!(
        d["last_error"]
            .as_str()
            .unwrap()
            .contains("could not connect"),
        "{d}"
    );

    // Filters and pages of the log.
    assert_eq!(deliveries(&app, "?status=failed").await.len(), 3);
    assert_eq!(deliveries(&app, "?status=complete").await.len(), 1);
    assert_eq!(deliveries(&app, "?status=retrying").await.len(), 0);
    let (_, first) = status_json(app.get("/api/v1/webhooks/deliveries?limit=3").await).await;
    assert_eq!(first["deliveries"].as_array().unwrap().len(), 3);
    let cursor = first["next_cursor"].as_str().unwrap();
    let (_, second) = status_json(
        app.get(&format!(
            "/api/v1/webhooks/deliveries?limit=3&cursor={cursor}"
        ))
        .await,
    )
    .await;
    assert_eq!(second["deliveries"].as_array().unwrap().len(), 1);
    assert_eq!(second["next_cursor"], Value::Null);
    let ids: std::collections::HashSet<String> = first["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second["deliveries"].as_array().unwrap())
        .map(|d| d["id"].to_string())
        .collect();
    assert_eq!(ids.len(), 4);
    drop(worker);
}

/// Attempts of the only delivery, as (attempt, http status, worker).
async fn attempts(app: &TestApp) -> Vec<(i32, Option<i32>, Option<String>)> {
    sqlx::query_as("SELECT attempt, http_status, worker FROM webhook_attempts ORDER BY attempt")
        .fetch_all(app.db())
        .await
        .unwrap()
}

#[tokio::test]
async fn webhook_schedule_survives_killed_workers_and_a_lost_redis() {
    let ca = TestCa::new();
    let env = hook_env(&ca, "3s,3s,3s,3s");
    let app = spawn_app_with(&borrowed(&env)).await;
    let receiver = Receiver::start(&ca, |n, _| Reply::status(if n < 3 { 500 } else { 200 })).await;
    subscribe(&app, &receiver.url("/in")).await;
    let mut worker = WorkerProcess::start(&app.world, &borrowed(&env));
    record_run(&app, "Pine", 4).await;

    for done in 1..=2 {
        wait_until("an attempt made and the next one scheduled", LIMIT, || async {
            count(&app, &format!("SELECT count(*) FROM webhook_deliveries WHERE status = 'retrying' AND attempts = {done}")).await == 1
        })
        .await;
        // Between attempts: the worker dies without a chance to clean up, and every Redis key
        // of the deployment is gone (as FLUSHALL would do, without touching other tests).
        worker.kill9();
        e2e::wipe_redis_prefix(&app.world.redis_prefix).await;
        worker = WorkerProcess::start(&app.world, &borrowed(&env));
    }
    wait_until("the delivery completes", LIMIT, || async {
        count(
            &app,
            "SELECT count(*) FROM webhook_deliveries WHERE status = 'complete'",
        )
        .await
            == 1
    })
    .await;
    wait_until("all jobs finished", LIMIT, || all_jobs_finished(app.db())).await;

    // Nothing lost, nothing repeated: four attempts, each once, by three worker processes.
    let rows = attempts(&app).await;
    assert_eq!(
        rows.iter()
            .map(|(n, code, _)| (*n, *code))
            .collect::<Vec<_>>(),
        vec![
            (1, Some(500)),
            (2, Some(500)),
            (3, Some(500)),
            (4, Some(200))
        ]
    );
    let workers: std::collections::HashSet<_> = rows.iter().map(|(_, _, w)| w.clone()).collect();
    assert_eq!(workers.len(), 3, "{rows:?}");
    let hits = receiver.hits();
    assert_eq!(hits.len(), 4);
    assert!(hits.windows(2).all(|w| w[0].body == w[1].body
        && w[0].header("x-service-delivery") == w[1].header("x-service-delivery")));
    let d = &deliveries(&app, "").await[0];
    assert_eq!(
        (d["status"].as_str(), d["attempts"].as_i64()),
        (Some("complete"), Some(4))
    );
    // Never early: each attempt after its scheduled wait.
    let early: i64 = count(
        &app,
        "SELECT count(*) FROM webhook_attempts a JOIN webhook_attempts b
           ON b.delivery_id = a.delivery_id AND b.attempt = a.attempt + 1
         WHERE b.started_at < a.finished_at + interval '3 seconds'",
    )
    .await;
    assert_eq!(early, 0);
    drop(worker);
}

#[tokio::test]
async fn webhook_attempt_cut_off_by_a_dead_worker_is_counted_and_the_schedule_goes_on() {
    let ca = TestCa::new();
    let env = hook_env(&ca, "1s,1s,1s,1s");
    let app = spawn_app_with(&borrowed(&env)).await;
    let receiver = Receiver::start(&ca, |_, _| Reply::status(204)).await;
    subscribe(&app, &receiver.url("/in")).await;
    let (_, jobs) = record_run(&app, "Cedar", 2).await;
    // What a worker killed in the middle of attempt 1 leaves behind: the attempt started but not
    // finished, the job claimed under a lease that has run out.
    sqlx::query(
        "INSERT INTO webhook_attempts (delivery_id, attempt, started_at, worker)
         SELECT id, 1, now() - interval '5 seconds', 'dead-worker' FROM webhook_deliveries",
    )
    .execute(app.db())
    .await
    .unwrap();
    sqlx::query(
        "UPDATE job_runs SET status = 'running', attempts = 1, claimed_by = 'dead-worker',
                claimed_at = now() - interval '5 seconds', lease_expires_at = now() - interval '1 second'
         WHERE id = $1",
    )
    .bind(jobs[0])
    .execute(app.db())
    .await
    .unwrap();
    let worker = WorkerProcess::start(&app.world, &borrowed(&env));
    wait_until("the delivery completes", LIMIT, || async {
        count(
            &app,
            "SELECT count(*) FROM webhook_deliveries WHERE status = 'complete'",
        )
        .await
            == 1
    })
    .await;
    let d = &deliveries(&app, "").await[0];
    assert_eq!(d["attempts"], 2, "{d}");
    assert!(
        d["attempt_log"][0]["error"]
            .as_str()
            .unwrap()
            .starts_with("interrupted"),
        "{d}"
    );
    assert_eq!(codes(d), vec![Value::Null, json!(204)]);
    assert_eq!(receiver.count(), 1);
    drop(worker);
}

#[tokio::test]
async fn webhook_test_pings_and_deleted_subscriptions() {
    let ca = TestCa::new();
    let env = hook_env(&ca, "2s,300ms,300ms,300ms");
    let app = spawn_app_with(&borrowed(&env)).await;
    let failing = Receiver::start(&ca, |_, _| Reply::status(500)).await;
    // Its answer carries a NUL character, which PostgreSQL text cannot store.
    let healthy = Receiver::start(&ca, |_, _| Reply {
        body: "accepted\0".to_owned(),
        ..Reply::status(200)
    })
    .await;
    let (gone, _) = subscribe(&app, &failing.url("/in")).await;
    let (kept, _) = subscribe(&app, &healthy.url("/in")).await;
    let worker = WorkerProcess::start(&app.world, &borrowed(&env));

    // A test ping to one subscription only, marked test: true.
    let (s, ping) = status_json(
        app.post(&format!("/api/v1/webhooks/{gone}/test"), &json!({}))
            .await,
    )
    .await;
    assert_eq!(s, 202, "{ping}");
    assert_eq!(ping["job"]["kind"], "webhook_delivery");
    wait_until("the first attempt failed", LIMIT, || async {
        count(
            &app,
            "SELECT count(*) FROM webhook_deliveries WHERE status = 'retrying'",
        )
        .await
            == 1
    })
    .await;
    assert_eq!(failing.hits()[0].json()["test"], true);
    assert_eq!(
        failing.hits()[0].json()["facility_name"],
        "Example facility"
    );
    assert_eq!(healthy.count(), 0);

    // Deleted while waiting for its next attempt: closed, and nothing more is sent to it.
    let due = delivery_of(&app, gone).await["next_attempt_at"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        app.delete(&format!("/api/v1/webhooks/{gone}"))
            .await
            .status(),
        204
    );
    let d = delivery_of(&app, gone).await;
    assert_eq!(d["status"], "failed");
    assert_eq!(d["last_error"], "the subscription was deleted");
    assert_eq!(d["next_attempt_at"], Value::Null);
    // New events reach only the remaining subscription.
    for _ in 0..3 {
        let (s, _) = status_json(
            app.post(&format!("/api/v1/webhooks/{kept}/test"), &json!({}))
                .await,
        )
        .await;
        assert_eq!(s, 202);
    }
    let (_, jobs) = record_run(&app, "Birch", 1).await;
    assert_eq!(jobs.len(), 1);
    wait_until(
        "the remaining subscription got everything",
        LIMIT,
        || async { healthy.count() == 4 && all_jobs_finished(app.db()).await },
    )
    .await;
    // Past the moment the deleted subscription's next attempt was due (a deadline, not a
    // measurement): had it not been closed, it would have been sent by now.
    wait_until("the cancelled attempt's time has passed", LIMIT, || async {
        count(
            &app,
            &format!("SELECT (now() > '{due}'::timestamptz + interval '1 second')::int::int8"),
        )
        .await
            == 1
    })
    .await;
    wait_until("all jobs finished", LIMIT, || all_jobs_finished(app.db())).await;
    assert_eq!(failing.count(), 1);
    let kept_log = deliveries(&app, &format!("?subscription_id={kept}")).await;
    assert_eq!(kept_log.len(), 4);
    for d in &kept_log {
        assert_eq!(
            (d["status"].as_str(), d["attempts"].as_i64()),
            (Some("complete"), Some(1)),
            "{d}"
        );
        assert_eq!(d["attempt_log"][0]["response_body"], "accepted\u{fffd}");
    }
    drop(worker);
}

#[tokio::test]
async fn webhook_to_an_internal_target_is_refused_and_logged() {
    let ca = TestCa::new();
    // The api was told to accept internal receivers; the worker was not.
    let api_env = hook_env(&ca, "100ms,100ms,100ms,100ms");
    let app = spawn_app_with(&borrowed(&api_env)).await;
    let receiver = Receiver::start(&ca, |_, _| Reply::status(200)).await;
    let (literal, _) = subscribe(&app, &receiver.url("/in")).await;
    let (named, _) = subscribe(
        &app,
        &format!("https://localhost:{}/in", receiver.addr.port()),
    )
    .await;
    let worker_env = vec![
        ("WEBHOOK_CA_FILE", ca.pem_path().to_owned()),
        (
            "WEBHOOK_RETRY_SCHEDULE",
            "100ms,100ms,100ms,100ms".to_owned(),
        ),
    ];
    let worker = WorkerProcess::start(&app.world, &borrowed(&worker_env));
    record_run(&app, "Maple", 5).await;
    wait_until("both deliveries failed", LIMIT, || async {
        count(
            &app,
            "SELECT count(*) FROM webhook_deliveries WHERE status = 'failed'",
        )
        .await
            == 2
    })
    .await;
    assert_eq!(receiver.count(), 0, "nothing reached the internal receiver");
    for (sub, target) in [
        (literal, "127.0.0.1: a loopback address"),
        (named, "localhost: it resolves to a loopback address"),
    ] {
        let d = delivery_of(&app, sub).await;
        assert_eq!(d["attempts"], 5);
        for a in d["attempt_log"].as_array().unwrap() {
            let error = a["error"].as_str().unwrap();
            assert!(
                error.starts_with(&format!("refused target {target}")),
                "{error}"
            );
            assert_eq!(a["http_status"], Value::Null);
        }
    }
    drop(worker);
}

fn client(ca: &TestCa, allow: &str) -> WebhookClient {
    let vars = [
        ("DATABASE_URL", "postgres://unused/unused"),
        ("APP_ENV", "test"),
        ("WEBHOOK_ALLOW_PRIVATE_TARGETS", allow),
        ("WEBHOOK_CA_FILE", ca.pem_path()),
        ("WEBHOOK_TIMEOUT_MS", "2000"),
    ];
    let config = jobs::config::Config::from_lookup(&|k| {
        vars.iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| (*v).to_owned())
    })
    .unwrap();
    WebhookClient::new(&config.outbound, &config.webhooks).unwrap()
}

async fn send(client: &WebhookClient, url: &str) -> jobs::webhooks::client::AttemptResult {
    let secret = secrecy::SecretString::from("whsec_test".to_owned());
    client
        .send(&Outgoing {
            url,
            event: "recommendations.ready",
            delivery_id: Uuid::now_v7(),
            body: "{}",
            secret: &secret,
        })
        .await
}

#[tokio::test]
async fn webhook_client_refuses_internal_targets_and_redirects() {
    let ca = TestCa::new();
    let v4 = Receiver::start(&ca, |_, _| Reply::status(200)).await;
    let v6 = Receiver::start_on(&ca, "::1".parse().unwrap(), |_, _| Reply::status(200)).await;
    let port = v4.addr.port();

    // With the allow-list on, the receivers are reachable (the test setup works).
    let open = client(&ca, "127.0.0.0/8,::1");
    for url in [
        v4.url("/a"),
        v6.url("/a"),
        format!("https://localhost:{port}/a"),
    ] {
        let r = send(&open, &url).await;
        assert!(r.delivered, "{url}: {r:?}");
    }
    assert_eq!(v4.count() + v6.count(), 3);

    // With the allow-list off, none of them is: refused before any connection.
    let guarded = client(&ca, "false");
    for (url, reason) in [
        (v4.url("/b"), "refused target 127.0.0.1: a loopback address"),
        (v6.url("/b"), "refused target ::1: a loopback address"),
        (
            // A name's address stays out of the text the customer reads.
            format!("https://localhost:{port}/b"),
            "refused target localhost: it resolves to a loopback address (internal",
        ),
        (
            "https://10.0.0.1/b".to_owned(),
            "refused target 10.0.0.1: a private address",
        ),
        (
            "https://169.254.169.254/latest/meta-data".to_owned(),
            "refused target 169.254.169.254: a link-local address",
        ),
        (
            "https://[::ffff:127.0.0.1]:1/b".to_owned(),
            "refused target 127.0.0.1: a loopback address",
        ),
    ] {
        let r = send(&guarded, &url).await;
        assert!(!r.delivered && r.http_status.is_none(), "{url}: {r:?}");
        let error = r.error.unwrap();
        assert!(error.starts_with(reason), "{url}: {error}");
    }
    assert_eq!(v4.count() + v6.count(), 3, "no refused request arrived");

    // A redirect to loopback is not followed: the only allowed host (127.0.0.2) answers 302
    // towards 127.0.0.1, which is never asked.
    let redirector = Receiver::start_on(&ca, "127.0.0.2".parse().unwrap(), move |_, _| {
        Reply::redirect(&format!("https://127.0.0.1:{port}/stolen"))
    })
    .await;
    let only_redirector = client(&ca, "127.0.0.2");
    let r = send(&only_redirector, &redirector.url("/c")).await;
    assert!(!r.delivered);
    assert_eq!(r.http_status, Some(302));
    let error = r.error.unwrap();
    assert!(
        error.contains("redirects are not followed") && error.contains("/stolen"),
        "{error}"
    );
    // Not followed even when the redirect's target is itself allowed.
    let r = send(&open, &redirector.url("/d")).await;
    assert_eq!((r.delivered, r.http_status), (false, Some(302)));
    assert_eq!(redirector.count(), 2);
    assert_eq!(v4.count(), 2, "the redirect target was never called");

    // Only the first KiB of an answer is kept.
    let chatty = Receiver::start(&ca, |_, _| Reply {
        body: "x".repeat(5000),
        ..Reply::status(500)
    })
    .await;
    let r = send(&open, &chatty.url("/g")).await;
    assert_eq!(r.http_status, Some(500));
    assert_eq!(r.response_excerpt.unwrap().len(), 1024);

    // Plain http is never sent, and an untrusted certificate fails the attempt.
    let r = send(&open, &format!("http://127.0.0.1:{port}/e")).await;
    assert!(r.error.unwrap().contains("https"));
    let other_ca = TestCa::new();
    let r = send(&client(&other_ca, "true"), &v4.url("/f")).await;
    assert!(!r.delivered && r.http_status.is_none(), "{r:?}");
    assert_eq!(v4.count(), 2);
}
