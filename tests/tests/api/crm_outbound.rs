//! CRM pulls as outbound requests: only public HTTPS addresses are reached (a real HTTPS server
//! and a plain TCP listener on loopback assert that nothing arrived where nothing may), every
//! failure is one of our fixed messages (never the answer's text), one pull stores all of its
//! snapshots or none, and the cron tick fires at most hourly, only for companies with access.

use crate::data_sources::{borrowed, crm_env, date_of, two_facilities, KEY};
use e2e::receiver::{Receiver, Reply, TestCa};
use e2e::{spawn_app_with, status_json, wait_until, TestApp, WorkerProcess};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

const LIMIT: Duration = Duration::from_secs(90);
/// Planted in every answer body: it must never show up in what the service reports.
const SECRET: &str = "BODY-SECRET-7731";

async fn connect(app: &TestApp, base_url: &str) -> Uuid {
    let (s, body) = status_json(
        app.post(
            "/api/v1/data-sources",
            &json!({ "provider": "generic_json", "verify": false, "base_url": base_url, "api_key": KEY }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{base_url}: {body}");
    body["id"].as_str().unwrap().parse().unwrap()
}

async fn pull(app: &TestApp, id: Uuid) {
    let (s, res) = status_json(
        app.post(&format!("/api/v1/data-sources/{id}/pull"), &json!({}))
            .await,
    )
    .await;
    assert_eq!(s, 202, "{res}");
}

/// (last_pull_status, last_error) of a source, as the API lists it.
async fn outcome(app: &TestApp, id: Uuid) -> (Value, Value) {
    let (_, listed) = status_json(app.get("/api/v1/data-sources").await).await;
    let source = listed["data_sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id.to_string())
        .cloned()
        .unwrap_or_else(|| panic!("source {id} listed: {listed}"));
    (
        source["last_pull_status"].clone(),
        source["last_error"].clone(),
    )
}

async fn wait_failed(app: &TestApp, ids: &[Uuid]) {
    wait_until("every pull failed", LIMIT, || async {
        let mut all = true;
        for id in ids {
            all &= outcome(app, *id).await.0 == "failed";
        }
        all
    })
    .await;
}

/// A plain TCP listener on loopback counting connections; answers with a banner and closes.
async fn plain_listener() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            use tokio::io::AsyncWriteExt as _;
            let _ = tcp
                .write_all(format!("SSH-2.0-OpenSSH {SECRET}\r\n").as_bytes())
                .await;
        }
    });
    (addr, accepted)
}

#[tokio::test]
async fn crm_pulls_reach_only_public_https_addresses() {
    let ca = TestCa::new();
    // The api was told to accept loopback addresses; the worker was not.
    let api_env = crm_env(&ca);
    let app = spawn_app_with(&borrowed(&api_env)).await;
    let crm = Receiver::start(&ca, |_, hit| two_facilities(hit)).await;
    let literal = connect(&app, &crm.url("")).await;
    let named = connect(&app, &format!("https://localhost:{}", crm.addr.port())).await;
    // A source stored before addresses were checked: plain http to a loopback port.
    let (plain_addr, accepted) = plain_listener().await;
    let plain = connect(&app, "https://crm.example.com").await;
    sqlx::query("UPDATE data_sources SET base_url = $2 WHERE id = $1")
        .bind(plain)
        .bind(format!("http://{plain_addr}"))
        .execute(app.db())
        .await
        .unwrap();
    let worker_env = [("OUTBOUND_CA_FILE", ca.pem_path())];
    let _worker = WorkerProcess::start(&app.world, &worker_env);
    for id in [literal, named, plain] {
        pull(&app, id).await;
    }
    wait_failed(&app, &[literal, named, plain]).await;
    assert_eq!(
        outcome(&app, literal).await.1,
        "the CRM address is an internal network address"
    );
    // A name that resolves to an internal address reads as one that does not resolve at all.
    assert_eq!(outcome(&app, named).await.1, "could not connect to the CRM");
    assert_eq!(
        outcome(&app, plain).await.1,
        "the CRM address is not an https:// URL"
    );
    assert_eq!(crm.count(), 0, "nothing reached the internal CRM");
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        0,
        "the key was not sent in clear"
    );
}

#[tokio::test]
async fn crm_pull_failures_are_reported_in_fixed_words() {
    let ca = TestCa::new();
    let mut env = crm_env(&ca);
    env.push(("CRM_PULL_MAX_BYTES", "1024".to_owned()));
    env.push(("CRM_PULL_TIMEOUT_MS", "1000".to_owned()));
    let app = spawn_app_with(&borrowed(&env)).await;
    let crm = Receiver::start(&ca, |_, hit| {
        let json = |body: Value| Reply {
            body: body.to_string(),
            ..Reply::status(200)
        };
        let facility = json!({ "external_id": "A", "source_system": "crm", "name": SECRET });
        match hit.path.as_str() {
            "/unavailable/snapshots" => Reply {
                body: format!("maintenance {SECRET}"),
                ..Reply::status(503)
            },
            "/html/snapshots" => Reply {
                body: format!("<html>{SECRET}</html>"),
                ..Reply::status(200)
            },
            "/bad-date/snapshots" => json(json!([
                { "facility": facility, "date": SECRET, "occupancy_pct": 50 }
            ])),
            "/no-date/snapshots" => json(json!([
                { "facility": facility, "date": date_of(hit), "occupancy_pct": 50 },
                { "facility": facility, "occupancy_pct": 50 }
            ])),
            // An unreadable field is left out (forgiving sync); a date of the wrong type
            // cannot place the snapshot.
            "/wrong-type/snapshots" => json(json!([
                { "facility": facility, "date": 20261101, "occupancy_pct": SECRET }
            ])),
            "/huge/snapshots" => Reply {
                body: format!("[\"{}\"]", SECRET.repeat(200)),
                ..Reply::status(200)
            },
            "/slow/snapshots" => Reply {
                body: SECRET.to_owned(),
                ..Reply::status(200).after(Duration::from_secs(5))
            },
            "/redirect/snapshots" => Reply {
                body: SECRET.to_owned(),
                ..Reply::redirect("/stolen")
            },
            _ => Reply::status(404),
        }
    })
    .await;
    let (banner_addr, accepted) = plain_listener().await;
    let closed_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let cases = [
        (crm.url("/unavailable"), "the CRM answered HTTP 503"),
        (crm.url("/html"), "the CRM's answer is not JSON"),
        (
            crm.url("/bad-date"),
            "snapshot 0: date has a value that is not accepted",
        ),
        (crm.url("/no-date"), "snapshot 1: date is missing"),
        (
            crm.url("/wrong-type"),
            "snapshot 0: date has the wrong type",
        ),
        (crm.url("/huge"), "the CRM's answer exceeds 1 KiB"),
        (crm.url("/slow"), "the CRM did not answer within 1 s"),
        (crm.url("/redirect"), "the CRM answered HTTP 302"),
        // A closed port and an open port that speaks something else read the same.
        (
            format!("https://127.0.0.1:{closed_port}"),
            "could not connect to the CRM",
        ),
        (
            format!("https://{banner_addr}"),
            "could not connect to the CRM",
        ),
    ];
    let mut ids = Vec::new();
    for (url, _) in &cases {
        ids.push(connect(&app, url).await);
    }
    for id in &ids {
        pull(&app, *id).await;
    }
    app.run_jobs().await;
    wait_failed(&app, &ids).await;
    for ((url, expected), id) in cases.iter().zip(&ids) {
        let (_, error) = outcome(&app, *id).await;
        assert_eq!(error, *expected, "{url}");
    }
    assert!(
        crm.hits().iter().all(|h| h.path != "/stolen"),
        "the redirect was not followed"
    );
    // A 503 is tried four times (waits of 1, 2 and 4 s) before the pull fails; a 302 once.
    let asked = |path: &str| crm.hits().iter().filter(|h| h.path == path).count();
    assert!(asked("/unavailable/snapshots") >= 4, "503 retried");
    assert_eq!(asked("/redirect/snapshots"), 1);
    assert!(
        accepted.load(Ordering::SeqCst) >= 1,
        "the banner port was reached"
    );
    // Neither the sources nor the jobs repeat anything the CRM sent.
    let (_, listed) = status_json(app.get("/api/v1/data-sources").await).await;
    assert!(!listed.to_string().contains(SECRET), "{listed}");
    let job_errors: Vec<Option<String>> =
        sqlx::query_scalar("SELECT last_error FROM job_runs WHERE kind = 'crm_pull'")
            .fetch_all(app.db())
            .await
            .unwrap();
    assert!(job_errors.iter().flatten().all(|e| !e.contains(SECRET)));
    assert!(job_errors.iter().flatten().count() >= ids.len());
}

#[tokio::test]
async fn one_pull_stores_all_of_its_snapshots_or_none() {
    let ca = TestCa::new();
    let env = crm_env(&ca);
    let app = spawn_app_with(&borrowed(&env)).await;
    let crm = Receiver::start(&ca, |_, hit| {
        let date = date_of(hit);
        let snapshot = |id: &str| json!({ "facility": { "external_id": id, "source_system": "crm", "name": format!("CRM {id}") }, "date": date, "occupancy_pct": 80 });
        let mut snapshots = vec![snapshot("A"), snapshot("B"), snapshot("C")];
        if hit.path == "/broken/snapshots" {
            // Valid for the sync rules (an unknown field is ignored) but not storable.
            snapshots[2]["note"] = json!("nul \u{0} here");
        }
        Reply {
            body: json!({ "snapshots": snapshots }).to_string(),
            ..Reply::status(200)
        }
    })
    .await;
    let broken = connect(&app, &crm.url("/broken")).await;
    let good = connect(&app, &crm.url("/good")).await;
    pull(&app, broken).await;
    app.run_jobs().await;
    wait_failed(&app, &[broken]).await;
    assert_eq!(
        outcome(&app, broken).await.1,
        "snapshot 2: contains a NUL character, which cannot be stored"
    );
    let stored = || async {
        let records = app.count("sync_records").await;
        let facilities = app.count("facilities").await;
        let ingests: i64 =
            sqlx::query_scalar("SELECT count(*) FROM job_runs WHERE kind = 'ingest'")
                .fetch_one(app.db())
                .await
                .unwrap();
        (records, facilities, ingests)
    };
    assert_eq!(stored().await, (0, 0, 0), "the first two were not kept");

    pull(&app, good).await;
    app.run_jobs().await;
    let done: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM job_runs WHERE kind = 'ingest' AND status = 'succeeded'",
    )
    .fetch_one(app.db())
    .await
    .unwrap();
    assert_eq!(done, 3, "the good pull and its ingests");
    assert_eq!(stored().await, (3, 3, 3));
    assert_eq!(outcome(&app, good).await, (json!("succeeded"), Value::Null));
}

#[tokio::test]
async fn the_cron_tick_fires_at_most_hourly_and_only_for_companies_with_access() {
    let ca = TestCa::new();
    let env = crm_env(&ca);
    let app = spawn_app_with(&borrowed(&env)).await;
    let crm = Receiver::start(&ca, |_, hit| two_facilities(hit)).await;
    let id = connect(&app, &crm.url("")).await;
    // A schedule stored before the hourly rule: every second.
    sqlx::query("UPDATE data_sources SET schedule = '* * * * * *' WHERE id = $1")
        .bind(id)
        .execute(app.db())
        .await
        .unwrap();
    let created: chrono::DateTime<chrono::Utc> =
        sqlx::query_scalar("SELECT created_at FROM data_sources WHERE id = $1")
            .bind(id)
            .fetch_one(app.db())
            .await
            .unwrap();
    let t0 = created + chrono::TimeDelta::seconds(10);
    let at = |secs: i64| t0 + chrono::TimeDelta::seconds(secs);
    let app = &app;
    let fired = |now| async move { jobs::cron::tick(app.db(), now, false).await.unwrap().len() };
    assert_eq!(fired(at(0)).await, 1, "the first tick");
    for later in [1, 60, 1800, 3598] {
        assert_eq!(fired(at(later)).await, 0, "{later} s later");
    }
    assert_eq!(fired(at(3600)).await, 1, "an hour later");

    let set_state = |state: &'static str, trial_end: Option<chrono::DateTime<chrono::Utc>>| async move {
        sqlx::query(
            "UPDATE companies SET subscription_state = $2, trial_ends_at = $3 WHERE id = $1",
        )
        .bind(app.tenant.company_id)
        .bind(state)
        .bind(trial_end)
        .execute(app.db())
        .await
        .unwrap();
    };
    set_state("canceled", None).await;
    assert_eq!(fired(at(3 * 3600)).await, 0, "canceled");
    set_state("expired", None).await;
    assert_eq!(fired(at(5 * 3600)).await, 0, "expired");
    set_state("trialing", Some(at(6 * 3600))).await;
    assert_eq!(fired(at(7 * 3600)).await, 0, "a trial past its end");
    set_state("past_due", None).await;
    assert_eq!(fired(at(9 * 3600)).await, 1, "past_due keeps access");
    let pulls: i64 = sqlx::query_scalar("SELECT count(*) FROM job_runs WHERE kind = 'crm_pull'")
        .fetch_one(app.db())
        .await
        .unwrap();
    assert_eq!(pulls, 3);

    // A pull recorded before the subscription lapsed is not made after it.
    set_state("canceled", None).await;
    let _worker = WorkerProcess::start(&app.world, &borrowed(&env));
    wait_until("the recorded pulls finished", LIMIT, || {
        e2e::all_jobs_finished(app.db())
    })
    .await;
    let skipped: Vec<Value> = sqlx::query_scalar(
        "SELECT result FROM job_runs WHERE kind = 'crm_pull' AND status = 'succeeded'",
    )
    .fetch_all(app.db())
    .await
    .unwrap();
    assert_eq!(skipped.len(), 3);
    for r in &skipped {
        assert_eq!(
            r["skipped"], "the company's subscription is canceled",
            "{r}"
        );
    }
    assert_eq!(crm.count(), 0);
}

#[tokio::test]
async fn stored_crm_credentials_and_quoted_answers_are_cleaned_by_the_migration() {
    let ca = TestCa::new();
    let app = spawn_app_with(&borrowed(&crm_env(&ca))).await;
    let applied: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM _sqlx_migrations WHERE version = 20261123000010 AND success",
    )
    .fetch_one(app.db())
    .await
    .unwrap();
    assert_eq!(applied, 1);
    // Rows as the service stored them before addresses and errors were checked.
    let with_user = connect(&app, "https://crm.example.com").await;
    let clean = connect(&app, "https://crm2.example.com").await;
    for (id, url, error) in [
        (
            with_user,
            "https://crm-user:hunter2@crm.example.com:8443/api?x=1",
            Some(format!("snapshot 0: date: must be a date, got '{SECRET}'")),
        ),
        (clean, "https://crm2.example.com/a@b", None),
    ] {
        sqlx::query("UPDATE data_sources SET base_url = $2, last_error = $3 WHERE id = $1")
            .bind(id)
            .bind(url)
            .bind(error)
            .execute(app.db())
            .await
            .unwrap();
    }
    sqlx::raw_sql(include_str!(
        "../../../migrations/20261123000010_data_source_outbound.sql"
    ))
    .execute(app.db())
    .await
    .unwrap();
    let (_, listed) = status_json(app.get("/api/v1/data-sources").await).await;
    let text = listed.to_string();
    assert!(
        !text.contains("hunter2") && !text.contains(SECRET),
        "{listed}"
    );
    let row = |id: Uuid| {
        let listed = &listed;
        listed["data_sources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id.to_string())
            .cloned()
            .unwrap()
    };
    assert_eq!(
        row(with_user)["base_url"],
        "https://crm.example.com:8443/api?x=1"
    );
    assert!(row(with_user)["last_error"]
        .as_str()
        .unwrap()
        .starts_with("the last pull failed"));
    // An @ in the path is not user information.
    assert_eq!(row(clean)["base_url"], "https://crm2.example.com/a@b");
    assert_eq!(row(clean)["last_error"], Value::Null);
}

#[tokio::test]
async fn a_pull_keeps_the_day_and_names_what_it_left_out_in_fixed_words() {
    let ca = TestCa::new();
    let env = crm_env(&ca);
    let app = spawn_app_with(&borrowed(&env)).await;
    let crm = Receiver::start(&ca, |_, hit| {
        let date = date_of(hit);
        let snapshot = json!({
            "facility": { "external_id": "A", "source_system": "crm", "name": "CRM A" },
            "date": date,
            "occupancy_pct": 80,
            "unit_types": [
                { "size": "10x10", "street_rate": 120 },
                { "size": "5x5", "street_rate": SECRET }
            ]
        });
        Reply {
            body: json!({ "snapshots": [snapshot] }).to_string(),
            ..Reply::status(200)
        }
    })
    .await;
    let source = connect(&app, &crm.url("/odd")).await;
    let (s, res) = status_json(
        app.post(&format!("/api/v1/data-sources/{source}/pull"), &json!({}))
            .await,
    )
    .await;
    assert_eq!(s, 202, "{res}");
    let job_path = format!("/api/v1/jobs/{}", res["job"]["id"].as_str().unwrap());
    app.run_jobs().await;
    let (_, job) = status_json(app.get(&job_path).await).await;
    assert_eq!(job["status"], "succeeded", "{job}");
    assert_eq!(job["result"]["snapshots"], 1, "{job}");
    assert_eq!(job["result"]["left_out_count"], 1, "{job}");
    assert_eq!(
        job["result"]["left_out"],
        json!(["snapshot 0: unit_types[1].street_rate has the wrong type"])
    );
    assert!(!job.to_string().contains(SECRET), "{job}");
    assert_eq!(
        outcome(&app, source).await,
        (json!("succeeded"), Value::Null)
    );
    let sizes: Vec<String> = sqlx::query_scalar("SELECT size FROM sync_unit_types ORDER BY size")
        .fetch_all(app.db())
        .await
        .unwrap();
    assert_eq!(sizes, vec!["10x10".to_owned()]);
}
