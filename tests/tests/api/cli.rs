//! The operations contract: `api migrate`, `api serve` (graceful on SIGTERM) and the `api admin`
//! commands with their one-line JSON output, run as the real binary.

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The `api` binary built next to this test binary (cargo builds every binary of the workspace
/// before running its tests).
fn api_bin() -> PathBuf {
    let mut dir = std::env::current_exe().unwrap();
    dir.pop();
    if dir.ends_with("deps") {
        dir.pop();
    }
    let bin = dir.join("api");
    assert!(
        bin.exists(),
        "{} not built: run the tests through cargo",
        bin.display()
    );
    bin
}

fn api(db_url: &str, args: &[&str]) -> Output {
    Command::new(api_bin())
        .args(args)
        .env_clear()
        .env("APP_ENV", "test")
        .env("DATABASE_URL", db_url)
        .env("REDIS_URL", e2e::redis_url())
        .env("RUST_LOG", "warn")
        .output()
        .unwrap()
}

fn json_line(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "failed: {stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line: {stdout}");
    serde_json::from_str(lines[0]).unwrap()
}

#[tokio::test]
async fn migrate_then_admin_commands_print_one_json_line() {
    // An empty database, not the migrated template: `migrate` must build the schema itself.
    let world = e2e::World::new().await;
    let name = format!("{}_empty", world.db_name);
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&world.db)
        .await
        .unwrap();
    let url = format!("{}/{name}", e2e::pg_server_url());
    for _ in 0..2 {
        let out = api(&url, &["migrate"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let created = json_line(&api(
        &url,
        &[
            "admin",
            "create-company",
            "--name",
            "CLI Co",
            "--email",
            "ops@example.com",
            "--password",
            "long enough pw",
            "--trial-days",
            "30",
        ],
    ));
    let company = created["company_id"].as_str().unwrap().to_owned();
    assert!(created["user_id"].is_string());
    let first_key = created["api_key"].as_str().unwrap().to_owned();

    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let config = e2e::test_config(&name, "unused", &[]);
    let hasher = jobs::tenancy::KeyHasher::new(&config.master_key);
    let who = jobs::tenancy::authenticate(&pool, &hasher, &first_key)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(who.company_id.to_string(), company);
    let trial_days: f64 = sqlx::query_scalar(
        "SELECT (extract(epoch FROM trial_ends_at - now()) / 86400)::float8 FROM companies",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert!((29.9..=30.0).contains(&trial_days), "{trial_days}");

    let key = json_line(&api(
        &url,
        &["admin", "create-key", "--company", &company, "--name", "ci"],
    ));
    let second = key["api_key"].as_str().unwrap();
    assert!(jobs::tenancy::authenticate(&pool, &hasher, second)
        .await
        .unwrap()
        .is_some());
    let revoked = json_line(&api(
        &url,
        &["admin", "revoke-key", "--id", key["id"].as_str().unwrap()],
    ));
    assert!(revoked["revoked_at"].is_string());
    assert!(jobs::tenancy::authenticate(&pool, &hasher, second)
        .await
        .unwrap()
        .is_none());

    let sub = json_line(&api(
        &url,
        &[
            "admin",
            "set-subscription",
            "--company",
            &company,
            "--state",
            "expired",
            "--trial-ends",
            "2026-01-31",
        ],
    ));
    assert_eq!(sub["subscription_state"], "expired");
    assert_eq!(sub["trial_ends_at"], "2026-01-31T23:59:59Z");
    let bad = api(
        &url,
        &[
            "admin",
            "set-subscription",
            "--company",
            &company,
            "--state",
            "gold",
        ],
    );
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("state: must be one of"));

    let seeded = json_line(&api(
        &url,
        &[
            "admin",
            "seed",
            "--company",
            &company,
            "--facilities",
            "2",
            "--days",
            "3",
        ],
    ));
    assert_eq!(seeded["records"], 6);
    let records: i64 = sqlx::query_scalar("SELECT count(*) FROM sync_records")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(records, 6);
    // The demo's pages show recommendations from the start: one run per facility.
    assert_eq!(seeded["runs"], 2);
    let runs: i64 = sqlx::query_scalar("SELECT count(*) FROM recommendation_runs")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(runs, 2);

    // Duplicate e-mail: a clear error, no second company.
    let dup = api(
        &url,
        &[
            "admin",
            "create-company",
            "--name",
            "Again",
            "--email",
            "OPS@example.com",
        ],
    );
    assert!(!dup.status.success());
    assert!(String::from_utf8_lossy(&dup.stderr).contains("already exists"));
    pool.close().await;
    sqlx::query(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .execute(&world.db)
        .await
        .unwrap();
}

#[test]
fn missing_configuration_names_the_variable() {
    let out = Command::new(api_bin())
        .arg("migrate")
        .env_clear()
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("DATABASE_URL"));
    let out = Command::new(api_bin())
        .arg("migrate")
        .env_clear()
        .env("DATABASE_URL", "postgres://x/y")
        .env("REDIS_URL", "redis://127.0.0.1")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("MASTER_KEY"),
        "production needs a real key"
    );
}

#[tokio::test]
async fn serve_stops_cleanly_on_sigterm() {
    let world = e2e::World::new().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(api_bin())
        .args(["serve", "--no-migrate"])
        .env_clear()
        .env("APP_ENV", "test")
        .env("PORT", port.to_string())
        .env(
            "DATABASE_URL",
            format!("{}/{}", e2e::pg_server_url(), world.db_name),
        )
        .env("REDIS_URL", e2e::redis_url())
        .env("REDIS_KEY_PREFIX", &world.redis_prefix)
        .env("LOG_FORMAT", "json")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(r) = http
            .get(format!("http://127.0.0.1:{port}/readyz"))
            .send()
            .await
        {
            if r.status() == 200 {
                break;
            }
        }
        assert!(Instant::now() < deadline, "api did not become ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = tokio::task::spawn_blocking(move || {
        let status = child.wait().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        (status, err)
    })
    .await
    .unwrap();
    assert!(status.0.success(), "{}", status.1);
    // One structured JSON line per request, with route, status and latency.
    let request_line = status
        .1
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["message"] == "request")
        .expect("a request log line");
    assert_eq!(request_line["status"], 200);
    assert_eq!(request_line["span"]["path"], "/readyz");
    assert!(request_line["latency_ms"].is_number());
    assert!(status.1.contains("api stopped"));
}

/// Migration 0007 had a comment edited after it landed; a database that applied the edited
/// copy stored that copy's checksum, and sqlx refuses to migrate a database whose applied file
/// changed. `migrate` recognises that one comment-only edit and carries on.
#[tokio::test]
async fn migrate_accepts_a_database_that_applied_the_edited_0007() {
    let world = e2e::World::new().await;
    let url = format!("{}/{}", e2e::pg_server_url(), world.db_name);
    let edited = hex::decode(
        "8a832f6b52048dc95bb89608c16618aabda297f0fee8a14ccd3dc1d6f316d20d01282d0222033287aaf2bf15fbb24f8f",
    )
    .unwrap();
    let landed: Vec<u8> =
        sqlx::query_scalar("SELECT checksum FROM _sqlx_migrations WHERE version = 20261122000007")
            .fetch_one(&world.db)
            .await
            .unwrap();
    assert_ne!(landed, edited);
    sqlx::query("UPDATE _sqlx_migrations SET checksum = $1 WHERE version = 20261122000007")
        .bind(&edited)
        .execute(&world.db)
        .await
        .unwrap();
    let out = api(&url, &["migrate"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let now: Vec<u8> =
        sqlx::query_scalar("SELECT checksum FROM _sqlx_migrations WHERE version = 20261122000007")
            .fetch_one(&world.db)
            .await
            .unwrap();
    assert_eq!(now, landed);
    // Any other change to a landed file is still refused.
    sqlx::query("UPDATE _sqlx_migrations SET checksum = '\\x00' WHERE version = 20261122000006")
        .execute(&world.db)
        .await
        .unwrap();
    let out = api(&url, &["migrate"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("20261122000006"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn rotating_the_master_key_reseals_secrets_while_the_service_keeps_working() {
    use crate::data_sources::{borrowed, crm_env, two_facilities, KEY};
    use base64::Engine as _;
    use e2e::receiver::{Receiver, TestCa};
    use e2e::{status_json, wait_until, WorkerProcess};
    use jobs::config::MasterKey;
    use serde_json::json;

    let b64 = |k: &[u8]| base64::engine::general_purpose::STANDARD.encode(k);
    // The harness seals with the development key; the new key replaces it.
    let old_bytes = *b"development-only-master-key-0001";
    let new_bytes = [42u8; 32];
    let (old, new) = (b64(&old_bytes), b64(&new_bytes));
    let ca = TestCa::new();
    let env = crm_env(&ca);
    let app = e2e::spawn_app_with(&borrowed(&env)).await;
    let crm = Receiver::start(&ca, |_, hit| two_facilities(hit)).await;
    let (s, source) = status_json(
        app.post(
            "/api/v1/data-sources",
            &json!({ "provider": "generic_json", "verify": false, "base_url": crm.url(""), "api_key": KEY }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{source}");
    let source_id: uuid::Uuid = source["id"].as_str().unwrap().parse().unwrap();
    let (s, hook) = status_json(
        app.post(
            "/api/v1/webhooks",
            &json!({ "url": "https://hooks.example.com/in" }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{hook}");
    let hook_id: uuid::Uuid = hook["id"].as_str().unwrap().parse().unwrap();

    // A worker rolled out with the new key, the old one still accepted, pulls with the
    // credential sealed under the old key.
    let mut worker_env = env.clone();
    worker_env.push(("MASTER_KEY", new.clone()));
    worker_env.push(("MASTER_KEY_PREVIOUS", old.clone()));
    let _worker = WorkerProcess::start(&app.world, &borrowed(&worker_env));
    let pulled = |n: i64| {
        let app = &app;
        async move {
            let done: i64 =
                sqlx::query_scalar("SELECT count(*) FROM crm_pulls WHERE status = 'succeeded'")
                    .fetch_one(app.db())
                    .await
                    .unwrap();
            done >= n
        }
    };
    let path = format!("/api/v1/data-sources/{source_id}/pull");
    assert_eq!(app.post(&path, &json!({})).await.status(), 202);
    wait_until(
        "the pull under the previous key",
        Duration::from_secs(60),
        || pulled(1),
    )
    .await;

    let db_url = format!("{}/{}", e2e::pg_server_url(), app.world.db_name);
    let out = json_line(&api(
        &db_url,
        &["admin", "rotate-master-key", "--old", &old, "--new", &new],
    ));
    assert_eq!(out["resealed"]["data_sources"], 1, "{out}");
    assert_eq!(out["resealed"]["webhook_subscriptions"], 1, "{out}");
    assert_eq!(out["resealed"]["unreadable"], 0, "{out}");
    assert_eq!(out["key_id"], jobs::crypto::key_id(&new_bytes));
    // The company's audit log says so, under the service.
    let log = e2e::get_ok(&app, "/api/v1/audit-log?action=master_key.rotate").await;
    assert_eq!(log["entries"].as_array().unwrap().len(), 1, "{log}");
    assert_eq!(log["entries"][0]["actor"]["type"], "system");

    // Every secret now opens with the new key alone, and no longer with the old one.
    let new_only = MasterKey::new(new_bytes);
    let old_only = MasterKey::new(old_bytes);
    let credential: Vec<u8> =
        sqlx::query_scalar("SELECT credentials_sealed FROM data_sources WHERE id = $1")
            .bind(source_id)
            .fetch_one(app.db())
            .await
            .unwrap();
    assert_eq!(
        jobs::crypto::open(&new_only, source_id.as_bytes(), &credential).unwrap(),
        KEY.as_bytes()
    );
    assert!(jobs::crypto::open(&old_only, source_id.as_bytes(), &credential).is_err());
    let secret: Vec<u8> =
        sqlx::query_scalar("SELECT secret_sealed FROM webhook_subscriptions WHERE id = $1")
            .bind(hook_id)
            .fetch_one(app.db())
            .await
            .unwrap();
    assert_eq!(
        jobs::crypto::open(&new_only, hook_id.as_bytes(), &secret).unwrap(),
        hook["secret"].as_str().unwrap().as_bytes()
    );
    // The running worker goes on pulling with the re-sealed credential.
    assert_eq!(app.post(&path, &json!({})).await.status(), 202);
    wait_until(
        "the pull under the new key",
        Duration::from_secs(60),
        || pulled(2),
    )
    .await;
    assert_eq!(crm.count(), 2);
    // The running worker takes the pulls' follow-up work too (a webhook delivery that fails
    // waits for its next attempt, not due yet); the test ends when nothing is due.
    wait_until(
        "the worker ran every due job",
        Duration::from_secs(60),
        || async { jobs::runs::undone(app.db()).await.unwrap() == 0 },
    )
    .await;
}
