//! The job platform with real worker processes: ingest after sync, crash safety, Redis loss,
//! duplicates, graceful drain, 10,000 jobs, and state visible through the API and metrics.

use e2e::{all_jobs_finished, spawn_app, status_json, wait_until, WorkerProcess};
use serde_json::json;
use sqlx::Connection as _;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

fn day(i: i64) -> String {
    (chrono::NaiveDate::from_ymd_opt(2026, 3, 1).unwrap() + chrono::Duration::days(i)).to_string()
}

async fn push(app: &e2e::TestApp, facility: &str, date: &str, occupancy: f64) -> serde_json::Value {
    let (s, body) = status_json(
        app.sync(
            &json!({ "facility": { "name": facility }, "date": date, "occupancy_pct": occupancy }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 200, "{body}");
    body
}

async fn events(app: &e2e::TestApp, facility: &str) -> Vec<(String, String, String, f64)> {
    sqlx::query_as(
        "SELECT e.snapshot_date::text, e.from_mode, e.to_mode, e.occupancy_pct FROM lease_up_events e
         JOIN facilities f ON f.id = e.facility_id WHERE f.name = $1 ORDER BY e.snapshot_date",
    )
    .bind(facility)
    .fetch_all(app.db())
    .await
    .unwrap()
}

#[tokio::test]
async fn a_sync_is_ingested_by_a_worker_and_lease_up_history_ignores_arrival_order() {
    let app = spawn_app().await;
    let readings = [75.0, 55.0, 65.0, 69.9, 70.0, 59.0, 62.0];
    for (i, occ) in readings.iter().enumerate() {
        let body = push(&app, "In Order", &day(i as i64), *occ).await;
        assert_eq!(body["job"]["kind"], "ingest");
    }
    // The same readings arriving newest first.
    for (i, occ) in readings.iter().enumerate().rev() {
        push(&app, "Out Of Order", &day(i as i64), *occ).await;
    }
    let (_, status) = status_json(app.get("/api/v1/status").await).await;
    assert_eq!(status["jobs"]["queued"], 14, "{status}");

    let worker = WorkerProcess::start(&app.world, &[]);
    wait_until("all jobs finished", LIMIT, || all_jobs_finished(app.db())).await;

    // Enter at 55 (day 1), leave at 70 (day 4), enter again at 59 (day 5); 65, 69.9 and 62 hold.
    let want = vec![
        (day(1), "stabilized".to_owned(), "lease_up".to_owned(), 55.0),
        (day(4), "lease_up".to_owned(), "stabilized".to_owned(), 70.0),
        (day(5), "stabilized".to_owned(), "lease_up".to_owned(), 59.0),
    ];
    assert_eq!(events(&app, "In Order").await, want);
    assert_eq!(events(&app, "Out Of Order").await, want);
    let modes: Vec<String> = sqlx::query_scalar("SELECT mode FROM facilities ORDER BY name")
        .fetch_all(app.db())
        .await
        .unwrap();
    assert_eq!(modes, vec!["lease_up", "lease_up"]);

    // Each facility got pricing and ECRI runs requested, and every job succeeded once.
    let (succeeded, attempts, failed): (i64, i64, i64) = sqlx::query_as(
        "SELECT count(*) FILTER (WHERE status = 'succeeded'), sum(attempts)::int8, count(*) FILTER (WHERE status = 'failed') FROM job_runs",
    )
    .fetch_one(app.db())
    .await
    .unwrap();
    let pricing: i64 =
        sqlx::query_scalar("SELECT count(*) FROM job_runs WHERE kind = 'pricing_run'")
            .fetch_one(app.db())
            .await
            .unwrap();
    assert!(pricing >= 2, "{pricing}");
    // And ECRI runs, one per facility at least (a request while one waits joins it).
    let ecri: i64 = sqlx::query_scalar("SELECT count(*) FROM job_runs WHERE kind = 'ecri_run'")
        .fetch_one(app.db())
        .await
        .unwrap();
    assert!((2..=14).contains(&ecri), "{ecri}");
    let runs: i64 = sqlx::query_scalar("SELECT count(DISTINCT facility_id) FROM ecri_runs")
        .fetch_one(app.db())
        .await
        .unwrap();
    assert_eq!(runs, 2);
    assert_eq!(
        (succeeded, attempts, failed),
        (14 + pricing + ecri, 14 + pricing + ecri, 0)
    );
    let (_, status) = status_json(app.get("/api/v1/status").await).await;
    assert_eq!(status["jobs"]["queued"], 0);
    assert_eq!(status["jobs"]["succeeded"], 14 + pricing + ecri);
    drop(worker);
}

/// Holds the facility row lock, so an ingest job of that facility blocks mid-job.
async fn hold_facility(app: &e2e::TestApp, name: &str) -> sqlx::PgConnection {
    let url = format!("{}/{}", e2e::pg_server_url(), app.world.db_name);
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::query("BEGIN").execute(&mut conn).await.unwrap();
    sqlx::query("SELECT id FROM facilities WHERE name = $1 FOR UPDATE")
        .bind(name)
        .execute(&mut conn)
        .await
        .unwrap();
    conn
}

async fn claimed_by(app: &e2e::TestApp) -> Option<String> {
    sqlx::query_scalar(
        "SELECT claimed_by FROM job_runs WHERE kind = 'ingest' AND status = 'running'",
    )
    .fetch_optional(app.db())
    .await
    .unwrap()
    .flatten()
}

#[tokio::test]
async fn a_worker_killed_mid_job_loses_nothing_and_the_work_happens_once() {
    let app = spawn_app().await;
    push(&app, "Crash", &day(0), 50.0).await;
    let mut lock = hold_facility(&app, "Crash").await;

    let mut first = WorkerProcess::start(&app.world, &[]);
    wait_until("the ingest job is running", LIMIT, || async {
        claimed_by(&app).await.is_some()
    })
    .await;
    let first_claim = claimed_by(&app).await.unwrap();
    first.kill9();

    let second = WorkerProcess::start(&app.world, &[]);
    // The lease (3 s) expires, the sweeper hands the job on, the second worker claims it.
    wait_until("another worker claims the job", LIMIT, || async {
        claimed_by(&app).await.is_some_and(|c| c != first_claim)
    })
    .await;
    sqlx::query("COMMIT").execute(&mut lock).await.unwrap();
    wait_until("all jobs finished", LIMIT, || all_jobs_finished(app.db())).await;

    let (status, attempts): (String, i32) =
        sqlx::query_as("SELECT status, attempts FROM job_runs WHERE kind = 'ingest'")
            .fetch_one(app.db())
            .await
            .unwrap();
    assert_eq!((status.as_str(), attempts), ("succeeded", 2));
    // Effects once: one mode event, one pricing run.
    assert_eq!(events(&app, "Crash").await.len(), 1);
    let pricing: i64 =
        sqlx::query_scalar("SELECT count(*) FROM job_runs WHERE kind = 'pricing_run'")
            .fetch_one(app.db())
            .await
            .unwrap();
    assert_eq!(pricing, 1);
    drop(second);
}

/// Waits until no job is open; the number of succeeded ingest jobs.
async fn drained_ingests(app: &e2e::TestApp, what: &str) -> i64 {
    wait_until(what, LIMIT, || all_jobs_finished(app.db())).await;
    sqlx::query_scalar(
        "SELECT count(*) FROM job_runs WHERE kind = 'ingest' AND status = 'succeeded'",
    )
    .fetch_one(app.db())
    .await
    .unwrap()
}

#[tokio::test]
async fn losing_redis_loses_no_job() {
    let app = spawn_app().await;
    for i in 0..20 {
        push(&app, &format!("F{}", i % 4), &day(i), 80.0).await;
    }
    // Everything queued in Redis is gone (the whole deployment prefix, as FLUSHALL would).
    e2e::wipe_redis_prefix(&app.world.redis_prefix).await;
    let worker = WorkerProcess::start(&app.world, &[]);
    assert_eq!(
        drained_ingests(&app, "all jobs finished from the PostgreSQL rows").await,
        20
    );
    assert!(worker.log_text().contains("sweeper pushed jobs"));
}

#[tokio::test]
async fn duplicate_pushes_and_a_racing_sweeper_do_the_work_once() {
    let app = spawn_app().await;
    let mut ids = Vec::new();
    for i in 0..30 {
        let body = push(
            &app,
            &format!("D{}", i % 3),
            &day(i),
            65.0 + (i % 10) as f64,
        )
        .await;
        ids.push(
            body["job"]["id"]
                .as_str()
                .unwrap()
                .parse::<uuid::Uuid>()
                .unwrap(),
        );
    }
    // Each job pushed three more times, and a sweeper that re-pushes anything waiting 10 ms.
    for _ in 0..3 {
        app.server
            .state
            .queues
            .push(jobs::queue::Kind::Ingest, &ids)
            .await
            .unwrap();
    }
    let workers: Vec<WorkerProcess> = (0..2)
        .map(|_| {
            WorkerProcess::start(
                &app.world,
                &[("JOB_REPUSH_AFTER_MS", "10"), ("SWEEP_INTERVAL_MS", "20")],
            )
        })
        .collect();
    wait_until("all jobs finished", LIMIT, || all_jobs_finished(app.db())).await;
    let rows: Vec<(String, i32)> =
        sqlx::query_as("SELECT status, attempts FROM job_runs WHERE kind = 'ingest'")
            .fetch_all(app.db())
            .await
            .unwrap();
    assert_eq!(rows.len(), 30);
    assert!(
        rows.iter().all(|(s, a)| s == "succeeded" && *a == 1),
        "{rows:?}"
    );
    drop(workers);
}

#[tokio::test]
async fn sigterm_lets_the_running_job_finish_and_leaves_nothing_claimed() {
    let app = spawn_app().await;
    push(&app, "Drain", &day(0), 90.0).await;
    let mut lock = hold_facility(&app, "Drain").await;
    let mut worker = WorkerProcess::start(&app.world, &[("WORKER_SHUTDOWN_TIMEOUT_SECS", "30")]);
    wait_until("the ingest job is running", LIMIT, || async {
        claimed_by(&app).await.is_some()
    })
    .await;
    worker.sigterm();
    tokio::time::sleep(Duration::from_millis(300)).await;
    sqlx::query("COMMIT").execute(&mut lock).await.unwrap();
    let status = worker.wait(LIMIT).await;
    let text = worker.log_text();
    assert!(status.success(), "{status:?}: {text}");
    let (status, claimed): (String, i64) = sqlx::query_as(
        "SELECT (SELECT status FROM job_runs WHERE kind = 'ingest'), (SELECT count(*) FROM job_runs WHERE status = 'running')",
    )
    .fetch_one(app.db())
    .await
    .unwrap();
    assert_eq!((status.as_str(), claimed), ("succeeded", 0));
    assert!(text.contains("worker stopped"), "{text}");
    app.run_jobs().await;
}

#[tokio::test]
async fn ten_thousand_jobs_drain_with_no_loss_and_no_duplicate_effect() {
    let app = spawn_app().await;
    // 100 facilities x 100 days of records, each with its ingest job, written in bulk.
    sqlx::query(
        "INSERT INTO facilities (id, company_id, name)
         SELECT gen_random_uuid(), $1, 'Bulk ' || g FROM generate_series(1, 100) g",
    )
    .bind(app.tenant.company_id)
    .execute(app.db())
    .await
    .unwrap();
    sqlx::query(
        "WITH r AS (
           INSERT INTO sync_records (id, company_id, facility_id, snapshot_date, source, occupancy_pct,
               unit_type_count, units_estimated, rentable_sqft_estimated, actual_rent_estimated, promotions, tenant_rents, raw_payload)
           SELECT gen_random_uuid(), $1, f.id, date '2025-01-01' + d, 'push', 50 + (d % 40), 0, false, false, false, '[]', '[]', '{}'
           FROM facilities f, generate_series(0, 99) d
           RETURNING id, facility_id)
         INSERT INTO job_runs (id, company_id, kind, payload)
         SELECT gen_random_uuid(), $1, 'ingest', jsonb_build_object('sync_id', r.id, 'facility_id', r.facility_id) FROM r",
    )
    .bind(app.tenant.company_id)
    .execute(app.db())
    .await
    .unwrap();
    let ids: Vec<uuid::Uuid> = sqlx::query_scalar("SELECT id FROM job_runs")
        .fetch_all(app.db())
        .await
        .unwrap();
    assert_eq!(ids.len(), 10_000);
    app.server
        .state
        .queues
        .push(jobs::queue::Kind::Ingest, &ids)
        .await
        .unwrap();

    let workers: Vec<WorkerProcess> = (0..2)
        .map(|_| {
            WorkerProcess::start(
                &app.world,
                &[
                    ("WORKER_CONCURRENCY", "8"),
                    ("JOB_LEASE_SECS", "30"),
                    ("JOB_REPUSH_AFTER_MS", "30000"),
                ],
            )
        })
        .collect();
    wait_until(
        "10,000 ingest jobs finished",
        Duration::from_secs(600),
        || all_jobs_finished(app.db()),
    )
    .await;
    let (ingest_ok, ingest_attempts, other_states): (i64, i64, i64) = sqlx::query_as(
        "SELECT count(*) FILTER (WHERE kind = 'ingest' AND status = 'succeeded'),
                coalesce(sum(attempts) FILTER (WHERE kind = 'ingest'), 0)::int8,
                count(*) FILTER (WHERE status NOT IN ('succeeded'))
         FROM job_runs",
    )
    .fetch_one(app.db())
    .await
    .unwrap();
    assert_eq!(
        (ingest_ok, ingest_attempts, other_states),
        (10_000, 10_000, 0)
    );
    // Each facility's history was evaluated over all its records: 100 facilities in one mode.
    let modes: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM facilities WHERE mode IN ('lease_up', 'stabilized')",
    )
    .fetch_one(app.db())
    .await
    .unwrap();
    assert_eq!(modes, 100);
    drop(workers);
}

#[tokio::test]
async fn worker_metrics_show_outcomes_and_open_jobs() {
    let app = spawn_app().await;
    push(&app, "Metrics", &day(0), 90.0).await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let _worker = WorkerProcess::start(&app.world, &[("METRICS_PORT", port.as_str())]);
    wait_until("all jobs finished", LIMIT, || all_jobs_finished(app.db())).await;
    let url = format!("http://127.0.0.1:{port}/metrics");
    let fetch = || async { reqwest::get(&url).await.ok()?.text().await.ok() };
    wait_until("metrics answer", LIMIT, || async {
        fetch()
            .await
            // The ingest, the pricing run and the ECRI run it asked for.
            .is_some_and(|t| t.contains("ssp_job_outcomes_total{outcome=\"succeeded\"} 3"))
    })
    .await;
    let text = fetch().await.unwrap();
    assert!(text.contains("ssp_queue_depth{queue=\"ingest\"}"), "{text}");
    assert!(
        text.contains("ssp_job_outcomes_total{outcome=\"failed\"} 0"),
        "{text}"
    );
}

#[tokio::test]
async fn a_half_sent_metrics_request_does_not_hold_the_workers_shutdown() {
    let app = spawn_app().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut worker = WorkerProcess::start(&app.world, &[("METRICS_PORT", &port.to_string())]);
    let url = format!("http://127.0.0.1:{port}/metrics");
    wait_until("metrics answer", LIMIT, || async {
        reqwest::get(&url).await.is_ok_and(|r| r.status() == 200)
    })
    .await;
    // A client that starts a request and never finishes its headers.
    let mut slow = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut slow, b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    worker.sigterm();
    let status = worker.wait(LIMIT).await;
    assert!(status.success(), "{status:?}: {}", worker.log_text());
    drop(slow);
}

#[tokio::test]
async fn a_real_flushall_and_a_redis_restart_lose_nothing() {
    // A Redis of this test's own, so FLUSHALL and a restart are real and touch no other test.
    let mut redis = e2e::PrivateRedis::start().await;
    let url = redis.url();
    let app = e2e::spawn_app_with(&[("REDIS_URL", &url)]).await;
    for i in 0..10 {
        push(&app, &format!("F{}", i % 2), &day(i), 80.0).await;
    }
    redis.cmd("FLUSHALL").await;
    let worker = WorkerProcess::start(&app.world, &[("REDIS_URL", &url)]);
    wait_until("jobs queued before FLUSHALL finished", LIMIT, || {
        all_jobs_finished(app.db())
    })
    .await;

    // The server dies under the running worker (every connection breaks) and comes back empty.
    redis.kill9();
    for i in 10..20 {
        // Pushes while Redis is away still store the data and the job rows.
        push(&app, &format!("F{}", i % 2), &day(i), 80.0).await;
    }
    redis.restart().await;
    for i in 20..30 {
        push(&app, &format!("F{}", i % 2), &day(i), 80.0).await;
    }
    assert_eq!(
        drained_ingests(&app, "jobs pushed around the restart finished").await,
        30
    );
    let failed: i64 = sqlx::query_scalar("SELECT count(*) FROM job_runs WHERE status = 'failed'")
        .fetch_one(app.db())
        .await
        .unwrap();
    assert_eq!(failed, 0);
    // The worker's queue consumers broke with the connection and were started again.
    assert!(
        worker.log_text().contains("restarting"),
        "{}",
        worker.log_text()
    );
}

#[tokio::test]
async fn a_job_named_by_a_sync_is_followed_to_its_result_and_only_by_its_company() {
    let app = spawn_app().await;
    let kept = push(&app, "Followed", &day(0), 75.0).await;
    let id = kept["job"]["id"].as_str().unwrap().to_owned();
    let gone = push(&app, "Deleted Before Ingest", &day(0), 80.0).await;
    let gone_id = gone["job"]["id"].as_str().unwrap().to_owned();

    // No worker yet: queued, no attempt, due now.
    let (s, job) = status_json(app.get(&format!("/api/v1/jobs/{id}")).await).await;
    assert_eq!(s, 200, "{job}");
    assert_eq!(job["id"], id.as_str());
    assert_eq!(job["kind"], "ingest");
    assert_eq!(job["status"], "queued");
    assert_eq!(job["attempts"], 0);
    assert_eq!(job["max_attempts"], 5);
    assert!(job["next_attempt_at"].is_string(), "{job}");
    assert!(job["finished_at"].is_null() && job["result"].is_null() && job["error"].is_null());
    assert!(
        job.get("payload").is_none(),
        "the payload stays internal: {job}"
    );

    // Another company, a malformed id and an unknown id: all 404 in the envelope.
    let other = app.create_tenant("Other Co").await;
    let (s, body) = status_json(
        app.req_as(&other, reqwest::Method::GET, &format!("/api/v1/jobs/{id}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 404, "{body}");
    assert!(body["error"].as_str().unwrap().contains("no job"), "{body}");
    for path in [
        "/api/v1/jobs/not-a-uuid",
        &format!("/api/v1/jobs/{}", uuid::Uuid::new_v4()),
    ] {
        let (s, body) = status_json(app.get(path).await).await;
        assert_eq!(s, 404, "{path}: {body}");
    }

    // The second facility goes before its ingest runs: the job still ends, and says why.
    let facility = gone["facility"]["id"].as_str().unwrap();
    let deleted = app.delete(&format!("/api/v1/facilities/{facility}")).await;
    assert_eq!(deleted.status().as_u16(), 204);

    let worker = WorkerProcess::start(&app.world, &[]);
    wait_until("all jobs finished", LIMIT, || all_jobs_finished(app.db())).await;
    let (s, job) = status_json(app.get(&format!("/api/v1/jobs/{id}")).await).await;
    assert_eq!(s, 200, "{job}");
    assert_eq!(job["status"], "succeeded", "{job}");
    assert_eq!(job["attempts"], 1);
    assert!(
        job["next_attempt_at"].is_null() && job["finished_at"].is_string(),
        "{job}"
    );
    assert_eq!(job["result"]["mode"], "stabilized", "{job}");
    assert!(job["error"].is_null());
    // The ingest of a facility deleted before it ran still ends, and says why.
    let (s, job) = status_json(app.get(&format!("/api/v1/jobs/{gone_id}")).await).await;
    assert_eq!(s, 200, "{job}");
    assert_eq!(job["status"], "succeeded", "{job}");
    assert_eq!(
        job["result"]["skipped"], "the sync record no longer exists",
        "{job}"
    );
    drop(worker);
}
