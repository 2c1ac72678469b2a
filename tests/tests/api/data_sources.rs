//! Connected CRMs: sealed credentials, the provider-agnostic pull against a real HTTP server
//! standing in for the CRM, and the cron tick firing once across two worker replicas.

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use e2e::{all_jobs_finished, spawn_app, status_json, wait_until, WorkerProcess};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

const KEY: &str = "crm-read-only-key-0042";

/// A CRM with two facilities; counts the requests it answers.
async fn start_crm() -> (String, Arc<AtomicUsize>) {
    async fn snapshots(
        State(hits): State<Arc<AtomicUsize>>,
        headers: HeaderMap,
        Query(q): Query<HashMap<String, String>>,
    ) -> Result<Json<Value>, StatusCode> {
        if headers.get("authorization").and_then(|v| v.to_str().ok())
            != Some(&format!("Bearer {KEY}"))
        {
            return Err(StatusCode::UNAUTHORIZED);
        }
        hits.fetch_add(1, Ordering::SeqCst);
        let date = q.get("date").cloned().unwrap_or_default();
        Ok(Json(json!({ "snapshots": [
            { "facility": { "external_id": "A", "source_system": "crm", "name": "CRM A" }, "date": date, "occupancy_pct": 91 },
            { "facility": { "external_id": "B", "source_system": "crm", "name": "CRM B" }, "date": date, "occupancy_pct": 55 }
        ]})))
    }
    let hits = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new()
        .route("/snapshots", axum::routing::get(snapshots))
        .with_state(hits.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, hits)
}

#[tokio::test]
async fn connecting_a_crm_seals_the_key_and_validates_input() {
    let app = spawn_app().await;
    let (s, body) = status_json(
        app.post("/api/v1/data-sources", &json!({ "provider": "generic_json", "base_url": "https://crm.example.com", "api_key": KEY })).await,
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

    for (body, fragment) in [
        (
            json!({ "provider": "sitelink", "base_url": "https://x.example", "api_key": "k" }),
            "coming soon",
        ),
        (
            json!({ "provider": "nope", "base_url": "https://x.example", "api_key": "k" }),
            "must be one of",
        ),
        (
            json!({ "provider": "generic_json", "base_url": "https://x.example", "api_key": "k", "schedule": "nightly" }),
            "schedule:",
        ),
        (
            json!({ "provider": "generic_json", "base_url": "not a url", "api_key": "k" }),
            "base_url:",
        ),
    ] {
        let (s, res) = status_json(app.post("/api/v1/data-sources", &body).await).await;
        assert_eq!(s, 422, "{res}");
        assert!(res["error"].as_str().unwrap().contains(fragment), "{res}");
    }
    let other = app.create_tenant("Other").await;
    let (_, theirs) = status_json(
        app.req_as(&other, reqwest::Method::GET, "/api/v1/data-sources")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(theirs["data_sources"], json!([]));
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
    let app = spawn_app().await;
    let (crm, hits) = start_crm().await;
    // Every two seconds, so a few ticks pass during the test.
    let (s, source) = status_json(
        app.post(
            "/api/v1/data-sources",
            &json!({ "provider": "generic_json", "base_url": crm, "api_key": KEY, "schedule": "*/2 * * * * *" }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{source}");
    let workers: Vec<WorkerProcess> = (0..2)
        .map(|_| WorkerProcess::start(&app.world, &[]))
        .collect();
    let pulls = || async {
        sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM job_runs WHERE kind = 'crm_pull' AND status = 'succeeded'",
        )
        .fetch_one(app.db())
        .await
        .unwrap()
    };
    wait_until("three scheduled pulls", Duration::from_secs(60), || async {
        pulls().await >= 3
    })
    .await;
    sqlx::query("UPDATE data_sources SET enabled = false")
        .execute(app.db())
        .await
        .unwrap();
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
    let jobs = ticks.len();
    // One job per tick, one request to the CRM per job: the second replica added nothing.
    assert_eq!(hits.load(Ordering::SeqCst), jobs, "{ticks:?}");
    let distinct: std::collections::HashSet<_> = ticks.iter().collect();
    assert_eq!(distinct.len(), jobs);
    let seconds: Vec<i64> = ticks
        .iter()
        .map(|(k,)| k.rsplit(':').next().unwrap().parse().unwrap())
        .collect();
    assert!(
        seconds.windows(2).all(|w| w[1] - w[0] >= 2),
        "ticks two seconds apart: {seconds:?}"
    );

    // The pulled snapshots went through the normal pipeline (stored, then ingested).
    let (records, crm_records): (i64, i64) =
        sqlx::query_as("SELECT count(*), count(*) FILTER (WHERE source = 'crm') FROM sync_records")
            .fetch_one(app.db())
            .await
            .unwrap();
    assert!(
        records >= 2 && records == crm_records,
        "{records} {crm_records}"
    );
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
    wait_until("the on-demand pull", Duration::from_secs(60), || {
        all_jobs_finished(app.db())
    })
    .await;
    assert_eq!(hits.load(Ordering::SeqCst), jobs + 1);
    let (_, listed) = status_json(app.get("/api/v1/data-sources").await).await;
    assert_eq!(
        listed["data_sources"][0]["last_pull_status"], "succeeded",
        "{listed}"
    );
    drop(workers);
}
