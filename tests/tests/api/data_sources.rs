//! Connected CRMs: sealed credentials and the rules of a source (address, schedule, count), the
//! provider-agnostic pull against a real HTTPS server on loopback standing in for the CRM, and
//! the cron tick firing once across two worker replicas.

use e2e::receiver::{Hit, Receiver, Reply, TestCa};
use e2e::{all_jobs_finished, spawn_app, spawn_app_with, status_json, wait_until, WorkerProcess};
use serde_json::{json, Value};
use std::time::Duration;

pub const KEY: &str = "crm-read-only-key-0042";

/// Settings that let the api and the worker reach a CRM on loopback over TLS.
pub fn crm_env(ca: &TestCa) -> Vec<(&'static str, String)> {
    vec![
        (
            "OUTBOUND_ALLOW_PRIVATE_TARGETS",
            "127.0.0.0/8,::1".to_owned(),
        ),
        ("OUTBOUND_CA_FILE", ca.pem_path().to_owned()),
    ]
}

pub fn borrowed<'a>(vars: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    vars.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// The `date` of a request's query string.
pub fn date_of(hit: &Hit) -> String {
    hit.query
        .as_deref()
        .unwrap_or_default()
        .split('&')
        .find_map(|p| p.strip_prefix("date="))
        .unwrap_or_default()
        .to_owned()
}

/// A CRM answer with two facilities for the asked date; 401 without the key.
pub fn two_facilities(hit: &Hit) -> Reply {
    if hit.header("authorization") != Some(&format!("Bearer {KEY}")) {
        return Reply::status(401);
    }
    let date = date_of(hit);
    Reply {
        body: json!({ "snapshots": [
            { "facility": { "external_id": "A", "source_system": "crm", "name": "CRM A" }, "date": date, "occupancy_pct": 91 },
            { "facility": { "external_id": "B", "source_system": "crm", "name": "CRM B" }, "date": date, "occupancy_pct": 55 }
        ]})
        .to_string(),
        ..Reply::status(200)
    }
}

#[tokio::test]
async fn connecting_a_crm_seals_the_key_and_validates_input() {
    let app = spawn_app().await;
    let (s, body) = status_json(
        app.post("/api/v1/data-sources", &json!({ "provider": "generic_json", "verify": false, "base_url": "https://crm.example.com", "api_key": KEY })).await,
    )
    .await;
    assert_eq!(s, 201, "{body}");
    assert_eq!(body["credential_hint"], "••••0042");
    assert_eq!(body["schedule"], "0 0 2 * * *");
    assert!(!body.to_string().contains(KEY));
    let sealed: Vec<u8> = sqlx::query_scalar("SELECT credentials_sealed FROM data_sources")
        .fetch_one(app.db())
        .await
        .unwrap();
    assert!(!String::from_utf8_lossy(&sealed).contains(KEY));

    let source = |base_url: &str| json!({ "provider": "generic_json", "verify": false, "base_url": base_url, "api_key": "k" });
    let every = |schedule: &str| json!({ "provider": "generic_json", "verify": false, "base_url": "https://x.example", "api_key": "k", "schedule": schedule });
    for (body, fragment) in [
        (
            json!({ "provider": "sitelink", "base_url": "https://x.example", "api_key": "k" }),
            "coming soon",
        ),
        (
            json!({ "provider": "nope", "base_url": "https://x.example", "api_key": "k" }),
            "must be one of",
        ),
        (every("nightly"), "schedule:"),
        (every("* * * * * *"), "once an hour"),
        (every("0 */30 * * * *"), "once an hour"),
        (every("0 0,59 3 * * *"), "once an hour"),
        (source("not a url"), "base_url:"),
        (
            source("http://crm.example.com"),
            "base_url: must be an https:// URL",
        ),
        (
            source("https://crm-user:hunter2@crm.example.com"),
            "base_url: must not carry a user name or password",
        ),
        (source("https://127.0.0.1:8443"), "loopback"),
        (source("https://169.254.169.254/latest"), "link-local"),
        (source("https://localhost/"), "loopback"),
        (source("https://[::ffff:0:127.0.0.1]/"), "SIIT"),
        (source("https://[64:ff9b:1::a00:1]/"), "NAT64"),
    ] {
        let (s, res) = status_json(app.post("/api/v1/data-sources", &body).await).await;
        assert_eq!(s, 422, "{body}: {res}");
        let error = res["error"].as_str().unwrap();
        assert!(error.contains(fragment), "{body}: {res}");
        assert!(!error.contains("hunter2"), "{res}");
    }
    assert_eq!(app.count("data_sources").await, 1, "nothing written");

    // An hourly schedule is accepted; the eleventh source of a company is not.
    for i in 2..=10 {
        let (s, res) = status_json(
            app.post("/api/v1/data-sources", &json!({ "provider": "generic_json", "verify": false, "base_url": format!("https://crm{i}.example.com/api/v2"), "api_key": KEY, "schedule": "0 0 * * * *" })).await,
        )
        .await;
        assert_eq!(s, 201, "{res}");
    }
    let (s, res) = status_json(
        app.post("/api/v1/data-sources", &source("https://crm11.example.com"))
            .await,
    )
    .await;
    assert_eq!(s, 422, "{res}");
    assert!(
        res["error"].as_str().unwrap().contains("at most 10"),
        "{res}"
    );
    assert_eq!(app.count("data_sources").await, 10);

    let other = app.create_tenant("Other").await;
    let (_, theirs) = status_json(
        app.req_as(&other, reqwest::Method::GET, "/api/v1/data-sources")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(theirs["data_sources"], json!([]));
    // Another company's cap is its own.
    let (s, res) = status_json(
        app.req_as(&other, reqwest::Method::POST, "/api/v1/data-sources")
            .json(&source("https://crm.example.com"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 201, "{res}");
    let path = format!("/api/v1/data-sources/{}", body["id"].as_str().unwrap());
    assert_eq!(
        app.req_as(&other, reqwest::Method::DELETE, &path)
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    assert_eq!(app.delete(&path).await.status(), 204);
}

#[tokio::test]
async fn two_replicas_and_one_cron_tick_give_one_pull() {
    let ca = TestCa::new();
    let env = crm_env(&ca);
    let app = spawn_app_with(&borrowed(&env)).await;
    let crm = Receiver::start(&ca, |_, hit| two_facilities(hit)).await;
    // Hourly: the source is made two hours old, so exactly one tick (the last full hour) is due.
    let (s, source) = status_json(
        app.post(
            "/api/v1/data-sources",
            &json!({ "provider": "generic_json", "verify": false, "base_url": crm.url("/api/v2"), "api_key": KEY, "schedule": "0 0 * * * *" }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{source}");
    sqlx::query("UPDATE data_sources SET created_at = now() - interval '2 hours'")
        .execute(app.db())
        .await
        .unwrap();
    let workers: Vec<WorkerProcess> = (0..2)
        .map(|_| WorkerProcess::start(&app.world, &borrowed(&env)))
        .collect();
    let pulls = || async {
        sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM job_runs WHERE kind = 'crm_pull' AND status = 'succeeded'",
        )
        .fetch_one(app.db())
        .await
        .unwrap()
    };
    wait_until("the scheduled pull", Duration::from_secs(60), || async {
        pulls().await >= 1
    })
    .await;
    wait_until("all jobs finished", Duration::from_secs(60), || {
        all_jobs_finished(app.db())
    })
    .await;
    let ticks: Vec<(String,)> = sqlx::query_as(
        "SELECT dedupe_key FROM job_runs WHERE kind = 'crm_pull' ORDER BY dedupe_key",
    )
    .fetch_all(app.db())
    .await
    .unwrap();
    // One job for the tick, one request to the CRM: the second replica added nothing.
    assert_eq!(ticks.len(), 1, "{ticks:?}");
    assert_eq!(crm.count(), 1);
    let hit = &crm.hits()[0];
    assert_eq!(hit.path, "/api/v2/snapshots");
    assert_eq!(hit.header("authorization"), Some(&*format!("Bearer {KEY}")));

    // The pulled snapshots went through the normal pipeline (stored, then ingested).
    let (records, crm_records): (i64, i64) =
        sqlx::query_as("SELECT count(*), count(*) FILTER (WHERE source = 'crm') FROM sync_records")
            .fetch_one(app.db())
            .await
            .unwrap();
    assert_eq!((records, crm_records), (2, 2));
    let mode: String = sqlx::query_scalar("SELECT mode FROM facilities WHERE name = 'CRM B'")
        .fetch_one(app.db())
        .await
        .unwrap();
    assert_eq!(mode, "lease_up");

    // An on-demand pull is one more job and one more request.
    let path = format!(
        "/api/v1/data-sources/{}/pull",
        source["id"].as_str().unwrap()
    );
    let (s, res) = status_json(app.post(&path, &json!({})).await).await;
    assert_eq!(s, 202, "{res}");
    wait_until("the on-demand pull", Duration::from_secs(60), || async {
        pulls().await == 2 && all_jobs_finished(app.db()).await
    })
    .await;
    assert_eq!(crm.count(), 2);
    let (_, listed) = status_json(app.get("/api/v1/data-sources").await).await;
    let listed: &Value = &listed["data_sources"][0];
    assert_eq!(listed["last_pull_status"], "succeeded", "{listed}");
    assert_eq!(listed["last_error"], Value::Null, "{listed}");
    drop(workers);
}

#[tokio::test]
async fn a_data_source_is_changed_with_the_creation_rules() {
    let app = spawn_app().await;
    let (s, created) = status_json(
        app.post("/api/v1/data-sources", &json!({ "provider": "generic_json", "verify": false, "base_url": "https://crm.example.com", "api_key": KEY })).await,
    )
    .await;
    assert_eq!(s, 201, "{created}");
    let id = created["id"].as_str().unwrap();
    let path = format!("/api/v1/data-sources/{id}");
    let patch = |body: Value| app.req(reqwest::Method::PATCH, &path).json(&body).send();

    for (body, fragment) in [
        (
            json!({ "schedule": "0 */10 * * * *" }),
            "schedule: fires more than once an hour",
        ),
        (json!({ "schedule": "nightly" }), "schedule:"),
        (json!({ "enabled": "yes" }), "enabled"),
        (json!({ "name": "" }), "name"),
        (
            json!({ "base_url": "https://elsewhere.example" }),
            "base_url",
        ),
    ] {
        let (s, res) = status_json(patch(body.clone()).await.unwrap()).await;
        assert_eq!(s, 422, "{body}: {res}");
        assert!(
            res["error"].as_str().unwrap().contains(fragment),
            "{body}: {res}"
        );
    }
    let (_, unchanged) = status_json(app.get("/api/v1/data-sources").await).await;
    assert_eq!(unchanged["data_sources"][0], created, "nothing written");

    let (s, changed) = status_json(
        patch(json!({ "name": "Main CRM", "schedule": "0 30 3 * * *", "enabled": false, "api_key": "rotated-key-7777" }))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 200, "{changed}");
    assert_eq!(changed["name"], "Main CRM");
    assert_eq!(changed["schedule"], "0 30 3 * * *");
    assert_eq!(changed["enabled"], false);
    assert_eq!(changed["credential_hint"], "••••7777");
    assert_eq!(changed["base_url"], created["base_url"]);
    let sealed: Vec<u8> = sqlx::query_scalar("SELECT credentials_sealed FROM data_sources")
        .fetch_one(app.db())
        .await
        .unwrap();
    let opened = jobs::crypto::open(
        &app.server.state.config.master_key,
        uuid::Uuid::parse_str(id).unwrap().as_bytes(),
        &sealed,
    )
    .unwrap();
    assert_eq!(opened, b"rotated-key-7777");

    // Absent fields stay as they are.
    let (s, again) = status_json(patch(json!({ "enabled": true })).await.unwrap()).await;
    assert_eq!(s, 200, "{again}");
    assert_eq!(
        (again["enabled"].clone(), again["name"].clone()),
        (json!(true), json!("Main CRM"))
    );

    // Another company's source is unknown to this one.
    let other = app.create_tenant("Other").await;
    let (s, _) = status_json(
        app.req_as(&other, reqwest::Method::PATCH, &path)
            .json(&json!({ "enabled": false }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 404);
    let (_, still) = status_json(app.get("/api/v1/data-sources").await).await;
    assert_eq!(still["data_sources"][0]["enabled"], true);
}
