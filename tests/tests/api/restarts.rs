//! PostgreSQL and Redis restarting under the real `api` and `worker` processes (a private
//! cluster and a private Redis, so the restarts touch no other test): both processes keep
//! serving without being restarted, answers during the outage are 503 in the JSON envelope
//! (never 500), and a sync pushed after each restart is processed.

use e2e::fleet::{
    config_of, create_migrated_database, free_port, wait_ready, PrivatePostgres, Proc,
};
use e2e::receiver::{Receiver, Reply, TestCa};
use e2e::{wait_until, workspace_bin, PrivateRedis, FAST_JOBS};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(90);

fn day(i: i64) -> String {
    (chrono::NaiveDate::from_ymd_opt(2025, 1, 1).unwrap() + chrono::Duration::days(i % 600))
        .to_string()
}

struct Stack {
    http: reqwest::Client,
    base: String,
    key: String,
    db: sqlx::PgPool,
}

impl Stack {
    async fn get(&self, path: &str) -> (u16, Value) {
        match self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.key)
            .timeout(Duration::from_secs(30))
            .send()
            .await
        {
            Ok(r) => e2e::status_json(r).await,
            Err(e) => panic!("the api did not answer {path}: {e}"),
        }
    }

    /// Pushes one sync, sending it again while the answer is 503 (a client's retry).
    async fn push(&self, date: &str) {
        let body = json!({ "facility": { "name": "Harbor" }, "date": date, "occupancy_pct": 84.0 });
        let deadline = std::time::Instant::now() + LIMIT;
        loop {
            let r = self
                .http
                .post(format!("{}/api/v1/sync", self.base))
                .bearer_auth(&self.key)
                .json(&body)
                .send()
                .await
                .expect("the api answers");
            let (s, res) = e2e::status_json(r).await;
            if s == 200 {
                return;
            }
            assert_eq!(s, 503, "{res}");
            assert!(
                std::time::Instant::now() < deadline,
                "sync kept failing: {res}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// (kind, status, count) of every job row.
    async fn jobs(&self) -> Vec<(String, String, i64)> {
        sqlx::query_as("SELECT kind, status, count(*) FROM job_runs GROUP BY 1, 2 ORDER BY 1, 2")
            .fetch_all(&self.db)
            .await
            .expect("job query")
    }

    /// Succeeded ingests whose pricing run did not succeed.
    async fn unprocessed_ingests(&self) -> i64 {
        sqlx::query_scalar(
            "SELECT count(*) FROM job_runs i LEFT JOIN job_runs p ON p.id = (i.result->>'pricing_run')::uuid
             WHERE i.kind = 'ingest' AND p.status IS DISTINCT FROM 'succeeded'",
        )
        .fetch_one(&self.db)
        .await
        .expect("ingest query")
    }

    async fn drained(&self, what: &str) -> Vec<(String, String, i64)> {
        wait_until(what, LIMIT, || async {
            sqlx::query_scalar::<_, i64>(
                "SELECT count(*) FROM job_runs WHERE status IN ('queued', 'running')",
            )
            .fetch_one(&self.db)
            .await
            .is_ok_and(|open| open == 0)
        })
        .await;
        self.jobs().await
    }
}

/// The drained jobs must be `ingests` succeeded ingests, each with its (possibly shared)
/// pricing run succeeded, and nothing else open or failed.
fn assert_all_processed(jobs: &[(String, String, i64)], ingests: i64, log: &str) {
    let n = |kind: &str, status: &str| {
        jobs.iter()
            .find(|(k, s, _)| k == kind && s == status)
            .map_or(0, |r| r.2)
    };
    assert_eq!(n("ingest", "succeeded"), ingests, "{jobs:?}\n{log}");
    assert!(n("pricing_run", "succeeded") >= 1, "{jobs:?}");
    assert!(
        jobs.iter().all(|(_, s, _)| s == "succeeded"),
        "{jobs:?}\n{log}"
    );
}

/// A private PostgreSQL and Redis with a migrated database, a company, and the real api and
/// worker processes on them (`extra` adds settings).
struct Running {
    pg: Arc<PrivatePostgres>,
    redis: PrivateRedis,
    api: Proc,
    worker: Proc,
    stack: Stack,
}

async fn start_running(extra: &[(&str, &str)]) -> Running {
    let pg = Arc::new(PrivatePostgres::start().expect("a private PostgreSQL starts"));
    let redis = PrivateRedis::start().await;
    let port = free_port();
    let mut env: BTreeMap<String, String> = [
        ("APP_ENV", "test".to_owned()),
        ("DATABASE_URL", format!("{}/ssp", pg.server_url())),
        ("REDIS_URL", redis.url()),
        ("REDIS_KEY_PREFIX", "restarts".to_owned()),
        ("PORT", port.to_string()),
        ("LOG_FORMAT", "json".to_owned()),
        ("RUST_LOG", "info,sqlx=warn".to_owned()),
        ("DATABASE_MAX_CONNECTIONS", "5".to_owned()),
        ("RATE_LIMIT_PER_MINUTE", "100000".to_owned()),
        ("RATE_LIMIT_SYNC_PER_MINUTE", "100000".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .chain(
        FAST_JOBS
            .iter()
            .chain(extra)
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    )
    .collect();
    env.insert("METRICS_PORT".into(), "0".into());
    create_migrated_database(&pg.server_url(), "ssp", &env)
        .await
        .expect("the database is created and migrated");
    let db = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect(&format!("{}/ssp", pg.server_url()))
        .await
        .expect("the private database answers");
    let config = config_of(&env);
    let email = format!("{}@example.com", uuid::Uuid::new_v4().simple());
    let company = jobs::tenancy::create_company(
        &db,
        &jobs::tenancy::KeyHasher::new(&config.master_key),
        jobs::tenancy::NewCompany {
            name: "Restart Storage",
            email: &email,
            password: None,
            trial_days: 14,
        },
    )
    .await
    .expect("company is created");
    let logs = std::env::temp_dir();
    let api = Proc::spawn(
        "api",
        &workspace_bin("api"),
        &["serve", "--no-migrate"],
        &env,
        &logs,
    )
    .expect("api starts");
    let worker =
        Proc::spawn("worker", &workspace_bin("worker"), &[], &env, &logs).expect("worker starts");
    let stack = Stack {
        http: reqwest::Client::builder().no_proxy().build().unwrap(),
        base: format!("http://127.0.0.1:{port}"),
        key: company.api_key.clone(),
        db,
    };
    assert!(
        wait_ready(&stack.http, &stack.base, LIMIT).await,
        "{}",
        api.log_text()
    );
    Running {
        pg,
        redis,
        api,
        worker,
        stack,
    }
}

#[tokio::test]
async fn api_and_worker_keep_serving_through_postgres_and_redis_restarts() {
    let Running {
        pg,
        mut redis,
        mut api,
        mut worker,
        stack,
    } = start_running(&[]).await;

    // Serving before any restart.
    stack.push(&day(0)).await;
    let first = stack.drained("the first sync's jobs").await;
    assert_all_processed(&first, 1, &worker.log_text());

    // PostgreSQL restarts (fast: every session is ended) while requests keep coming.
    let stop = Arc::new(AtomicBool::new(false));
    let answers: Arc<Mutex<Vec<(u16, Value)>>> = Arc::default();
    let load = tokio::spawn({
        let (stop, answers) = (stop.clone(), answers.clone());
        let (http, base, key) = (stack.http.clone(), stack.base.clone(), stack.key.clone());
        async move {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let req = if i % 2 == 0 {
                    http.get(format!("{base}/api/v1/facilities"))
                } else {
                    http.post(format!("{base}/api/v1/sync")).json(&json!({
                        "facility": { "name": "Outage" }, "date": day(i), "occupancy_pct": 70.0
                    }))
                };
                let r = req.bearer_auth(&key).send().await.expect("the api answers");
                let answer = e2e::status_json(r).await;
                answers.lock().unwrap().push(answer);
            }
        }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let restarted = tokio::task::spawn_blocking({
        let pg = pg.clone();
        move || pg.restart()
    })
    .await
    .unwrap();
    restarted.unwrap_or_else(|e| panic!("{e:#}\n{}", pg.log_text()));
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    load.await.unwrap();
    let answers = answers.lock().unwrap().clone();
    assert!(answers.len() > 2, "requests ran through the restart");
    let unavailable = answers.iter().filter(|(s, _)| *s == 503).count();
    eprintln!(
        "{} requests during the PostgreSQL restart, {unavailable} answered 503",
        answers.len()
    );
    for (status, body) in &answers {
        match status {
            200 => {}
            503 => assert!(body["error"].is_string(), "{body}"),
            _ => panic!("{status} during the PostgreSQL restart: {body}"),
        }
    }

    // Recovered: the same processes answer and the worker processes a sync pushed now.
    wait_until("the api reads again", LIMIT, || async {
        stack.get("/api/v1/facilities").await.0 == 200
    })
    .await;
    let outage_syncs = answers
        .iter()
        .filter(|(s, b)| *s == 200 && b["job"]["kind"] == "ingest")
        .count() as i64;
    stack.push(&day(1)).await;
    let after_pg = stack.drained("the jobs after the PostgreSQL restart").await;
    assert_all_processed(&after_pg, 2 + outage_syncs, &worker.log_text());
    assert_eq!(stack.unprocessed_ingests().await, 0);
    assert!(api.alive(), "the api is still the same process");
    assert!(worker.alive(), "the worker is still the same process");

    // Redis restarts (killed, back empty): the sync is stored and its jobs run.
    redis.restart().await;
    stack.push(&day(2)).await;
    let after_redis = stack.drained("the jobs after the Redis restart").await;
    assert_all_processed(&after_redis, 3 + outage_syncs, &worker.log_text());
    assert_eq!(stack.unprocessed_ingests().await, 0);
    let (s, listed) = stack.get("/api/v1/facilities").await;
    assert_eq!(s, 200, "{listed}");
    assert!(api.alive() && worker.alive());
    let (s, _) = stack.get("/readyz").await;
    assert_eq!(s, 200);
}

/// A webhook the receiver accepted while PostgreSQL was stopped is recorded once the database is
/// back, not sent again when its lease expires.
#[tokio::test]
async fn a_webhook_accepted_while_postgres_is_down_is_not_sent_again() {
    let ca = TestCa::new();
    // The receiver answers 200 after 3 s: time to stop PostgreSQL while the request is out.
    let receiver =
        Receiver::start(&ca, |_, _| Reply::status(200).after(Duration::from_secs(3))).await;
    let run = start_running(&[
        ("OUTBOUND_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8"),
        ("OUTBOUND_CA_FILE", ca.pem_path()),
    ])
    .await;
    let stack = &run.stack;
    let (s, sub) = e2e::status_json(
        stack
            .http
            .post(format!("{}/api/v1/webhooks", stack.base))
            .bearer_auth(&stack.key)
            .json(&json!({ "url": receiver.url("/hooks") }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 201, "{sub}");
    let id = sub["id"].as_str().unwrap();
    let (s, ping) = e2e::status_json(
        stack
            .http
            .post(format!("{}/api/v1/webhooks/{id}/test", stack.base))
            .bearer_auth(&stack.key)
            .json(&json!({}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 202, "{ping}");
    wait_until("the attempt reaches the receiver", LIMIT, || async {
        receiver.count() == 1
    })
    .await;
    let pg = run.pg.clone();
    tokio::task::spawn_blocking(move || pg.stop())
        .await
        .unwrap()
        .expect("PostgreSQL stops");
    // The receiver answers while the database is away, and it stays away longer than the
    // pool waits for a connection (5 s).
    tokio::time::sleep(Duration::from_secs(10)).await;
    let pg = run.pg.clone();
    tokio::task::spawn_blocking(move || pg.start_again())
        .await
        .unwrap()
        .expect("PostgreSQL starts again");
    let jobs = stack.drained("the delivery is recorded").await;
    assert_eq!(
        jobs,
        vec![("webhook_delivery".into(), "succeeded".into(), 1)],
        "{}",
        run.worker.log_text()
    );
    let (status, attempts): (String, i32) =
        sqlx::query_as("SELECT status, attempts FROM webhook_deliveries")
            .fetch_one(&stack.db)
            .await
            .unwrap();
    assert_eq!((status.as_str(), attempts), ("complete", 1));
    assert_eq!(receiver.count(), 1, "the delivery was sent once");
    assert!(run.worker.log_text().contains("the database is away"));
    drop(run);
}
