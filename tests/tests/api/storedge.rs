//! The storEDGE adapter against a storEDGE-shaped HTTPS server (`e2e::storedge`) that verifies
//! the OAuth 1.0 signature of every request, pages its units and answers 429 once: the pull's
//! snapshot is the hand-worked one, a repeated pull changes nothing, a backfill stores every date
//! in one transaction, a wrong secret fails with a clear message. Also the provider registry.

use crate::data_sources::{borrowed, crm_env};
use e2e::receiver::TestCa;
use e2e::storedge::{StorEdgeCrm, ACCOUNT, API_KEY, API_SECRET};
use e2e::{spawn_app, spawn_app_with, status_json, TestApp};
use serde_json::{json, Value};
use uuid::Uuid;

fn source(crm: &StorEdgeCrm, secret: &str) -> Value {
    json!({ "provider": "storedge", "name": "Edge", "base_url": crm.base_url(), "api_key": API_KEY,
            "api_secret": secret, "account_id": ACCOUNT })
}

/// Posts `body` to `path` and checks the 422 of a refused storEDGE credential.
async fn refused_credential(app: &TestApp, path: &str, body: &Value) {
    let (s, res) = status_json(app.post(path, body).await).await;
    assert_eq!(s, 422, "{res}");
    assert_eq!(
        res["error"],
        "connection: the test failed: the CRM refused the credential (HTTP 401)"
    );
    assert_eq!(app.count("data_sources").await, 0, "nothing stored");
}

/// Requests a pull and waits until it is finished; gives the pull as listed.
async fn pull(app: &TestApp, id: &str, body: &Value) -> Value {
    let (s, res) = status_json(
        app.post(&format!("/api/v1/data-sources/{id}/pull"), body)
            .await,
    )
    .await;
    assert_eq!(s, 202, "{res}");
    assert_eq!(res["pull"]["status"], "queued", "{res}");
    let pull_id = res["pull"]["id"].as_str().unwrap().to_owned();
    let listed = || async {
        let (_, res) =
            status_json(app.get(&format!("/api/v1/data-sources/{id}/pulls")).await).await;
        res["pulls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == pull_id)
            .cloned()
            .unwrap()
    };
    app.run_jobs().await;
    let finished = listed().await;
    assert!(
        matches!(finished["status"].as_str(), Some("succeeded" | "failed")),
        "{finished}"
    );
    finished
}

/// (occupancy, total, occupied) of facility 101's record of `date`, and its unit types.
async fn record(
    app: &TestApp,
    date: &str,
) -> (f64, i32, i32, Vec<(String, String, f64, f64, i32, i32)>) {
    let (sync_id, occupancy, total, occupied): (Uuid, f64, i32, i32) = sqlx::query_as(
        "SELECT r.id, r.occupancy_pct, r.total_units, r.occupied_units FROM sync_records r
         JOIN facilities f ON f.id = r.facility_id
         WHERE f.external_id = '101' AND f.source_system = 'storedge' AND r.snapshot_date = $1::date
           AND r.source = 'crm'",
    )
    .bind(date)
    .fetch_one(app.db())
    .await
    .unwrap();
    let types = sqlx::query_as(
        "SELECT size, tier, street_rate, occupancy_pct, total_units, occupied_units
         FROM sync_unit_types WHERE sync_id = $1 ORDER BY size, tier",
    )
    .bind(sync_id)
    .fetch_all(app.db())
    .await
    .unwrap();
    (occupancy, total, occupied, types)
}

#[tokio::test]
async fn a_storedge_pull_stores_the_hand_worked_snapshot_once() {
    let ca = TestCa::new();
    let env = crm_env(&ca);
    let app = spawn_app_with(&borrowed(&env)).await;
    let crm = StorEdgeCrm::start(&ca).await;

    // The connection test stores nothing, and tells a wrong secret from a right one.
    refused_credential(
        &app,
        "/api/v1/data-sources/test",
        &source(&crm, "not-the-secret"),
    )
    .await;
    let (s, res) = status_json(
        app.post("/api/v1/data-sources/test", &source(&crm, API_SECRET))
            .await,
    )
    .await;
    assert_eq!((s, res), (200, json!({ "ok": true })));
    assert_eq!(app.count("data_sources").await, 0);

    // Connecting tests the connection first; the secret is sealed with the key.
    let (s, created) = status_json(
        app.post("/api/v1/data-sources", &source(&crm, API_SECRET))
            .await,
    )
    .await;
    assert_eq!(s, 201, "{created}");
    assert_eq!(created["credential_hint"], "••••0042");
    assert_eq!(created["account_id"], ACCOUNT);
    assert!(!created.to_string().contains(API_SECRET));
    let id = created["id"].as_str().unwrap().to_owned();
    let sealed: Vec<u8> = sqlx::query_scalar("SELECT credentials_sealed FROM data_sources")
        .fetch_one(app.db())
        .await
        .unwrap();
    assert!(!String::from_utf8_lossy(&sealed).contains(API_SECRET));
    let tests_made = crm.receiver.count();

    let first = pull(&app, &id, &json!({ "date": "2026-11-20" })).await;
    assert_eq!(first["status"], "succeeded", "{first}");
    assert_eq!(
        (
            &first["snapshots_created"],
            &first["snapshots_updated"],
            &first["facilities_created"],
            &first["facilities_matched"],
        ),
        (&json!(1), &json!(0), &json!(1), &json!(0)),
        "{first}"
    );
    assert_eq!(
        first["warnings"],
        json!([
            "storEDGE facility 101: unit u6 has no usable width and length",
            "storEDGE facility 202: no unit could be mapped, so no snapshot"
        ])
    );
    assert_eq!(
        (&first["date_from"], &first["date_to"]),
        (&json!("2026-11-20"), &json!("2026-11-20"))
    );
    // Hand-worked: 10x10 Climate has u1 (120, rented), u2 (130, available), u3 (125, rented):
    // median rate 125, 2 of 3 occupied. 5x7.5 Drive-up has u4 (60, rented): 1 of 1. u5 is
    // unrentable (not counted), u6 has no width. The facility: 3 occupied of 4 = 75%.
    let expected = (
        75.0,
        4,
        3,
        vec![
            ("10x10".to_owned(), "Climate".to_owned(), 125.0, 66.67, 3, 2),
            ("5x7.5".to_owned(), "Drive-up".to_owned(), 60.0, 100.0, 1, 1),
        ],
    );
    assert_eq!(record(&app, "2026-11-20").await, expected);
    let (name, address): (String, Option<String>) = sqlx::query_as(
        "SELECT name, address FROM facilities WHERE external_id = '101' AND source_system = 'storedge'",
    )
    .fetch_one(app.db())
    .await
    .unwrap();
    assert_eq!(
        (name.as_str(), address.as_deref()),
        ("Edge North", Some("1 Main St"))
    );
    // Both pages were read, the second after one 429; every request was signed (the server
    // answers 401 otherwise, which would have failed the pull).
    assert_eq!(crm.hits_of("/v1/101/units", 1), 1);
    assert_eq!(
        crm.hits_of("/v1/101/units", 2),
        2,
        "the 429 was retried once"
    );
    assert!(crm.receiver.hits()[tests_made..].iter().all(|h| h
        .header("authorization")
        .is_some_and(|a| a.starts_with("OAuth "))));

    // The same date again changes nothing.
    let second = pull(&app, &id, &json!({ "date": "2026-11-20" })).await;
    assert_eq!(second["status"], "succeeded", "{second}");
    assert_eq!(
        (
            &second["snapshots_created"],
            &second["snapshots_updated"],
            &second["facilities_created"],
            &second["facilities_matched"],
        ),
        (&json!(0), &json!(1), &json!(0), &json!(1)),
        "{second}"
    );
    assert_eq!(record(&app, "2026-11-20").await, expected);
    assert_eq!(app.count("sync_records").await, 1);
    assert_eq!(app.count("facilities").await, 1);

    // A backfill of three days: three snapshots, written by one transaction.
    let backfill = pull(
        &app,
        &id,
        &json!({ "from": "2026-11-10", "to": "2026-11-12" }),
    )
    .await;
    assert_eq!(backfill["status"], "succeeded", "{backfill}");
    assert_eq!(backfill["snapshots_created"], 3, "{backfill}");
    assert!(backfill["warnings"]
        .as_array()
        .unwrap()
        .contains(&json!("storEDGE reports the units' present state: the same figures were stored for each of the 3 dates")));
    for date in ["2026-11-10", "2026-11-11", "2026-11-12"] {
        assert_eq!(record(&app, date).await, expected, "{date}");
    }
    let writers: i64 = sqlx::query_scalar(
        "SELECT count(DISTINCT xmin::text) FROM sync_records WHERE snapshot_date BETWEEN '2026-11-10' AND '2026-11-12'",
    )
    .fetch_one(app.db())
    .await
    .unwrap();
    assert_eq!(writers, 1, "one transaction wrote the three dates");

    // The pulls are listed newest first; the source keeps its last-pull summary.
    let (_, listed) = status_json(app.get(&format!("/api/v1/data-sources/{id}/pulls")).await).await;
    let ids: Vec<&Value> = listed["pulls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["id"])
        .collect();
    assert_eq!(ids, [&backfill["id"], &second["id"], &first["id"]]);
    let (_, sources) = status_json(app.get("/api/v1/data-sources").await).await;
    assert_eq!(sources["data_sources"][0]["last_pull_status"], "succeeded");
}

#[tokio::test]
async fn a_wrong_storedge_secret_fails_the_pull_with_a_clear_message() {
    let ca = TestCa::new();
    let env = crm_env(&ca);
    let app = spawn_app_with(&borrowed(&env)).await;
    let crm = StorEdgeCrm::start(&ca).await;
    // Connecting runs the test and refuses the wrong secret...
    refused_credential(&app, "/api/v1/data-sources", &source(&crm, "wrong-secret")).await;
    // ...unless told not to; the pull then fails and says why.
    let mut body = source(&crm, "wrong-secret");
    body["verify"] = json!(false);
    let (s, created) = status_json(app.post("/api/v1/data-sources", &body).await).await;
    assert_eq!(s, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let failed = pull(&app, &id, &json!({})).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"], "the CRM refused the credential (HTTP 401)");
    let (_, sources) = status_json(app.get("/api/v1/data-sources").await).await;
    assert_eq!(sources["data_sources"][0]["last_pull_status"], "failed");
    assert_eq!(
        sources["data_sources"][0]["last_error"],
        "the CRM refused the credential (HTTP 401)"
    );
    assert_eq!(app.count("sync_records").await, 0);

    // A new key and secret through PATCH, and the next pull succeeds.
    let (s, res) = status_json(
        app.req(
            reqwest::Method::PATCH,
            &format!("/api/v1/data-sources/{id}"),
        )
        .json(&json!({ "api_key": API_KEY }))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(s, 422, "a key without its secret: {res}");
    let (s, res) = status_json(
        app.req(
            reqwest::Method::PATCH,
            &format!("/api/v1/data-sources/{id}"),
        )
        .json(&json!({ "api_key": API_KEY, "api_secret": API_SECRET }))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(s, 200, "{res}");
    let fixed = pull(&app, &id, &json!({ "date": "2026-11-21" })).await;
    assert_eq!(fixed["status"], "succeeded", "{fixed}");
    assert_eq!(app.count("sync_records").await, 1);
}

#[tokio::test]
async fn the_registry_lists_every_provider_and_refuses_coming_soon_ones() {
    let app = spawn_app().await;
    let (s, res) = status_json(app.get("/api/v1/data-sources/providers").await).await;
    assert_eq!(s, 200, "{res}");
    let providers = res["providers"].as_array().unwrap();
    let state = |name: &str| {
        providers
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{name} listed: {res}"))
            .clone()
    };
    assert_eq!(state("generic_json")["state"], "live");
    assert_eq!(
        state("generic_json")["credential_fields"],
        json!(["api_key"])
    );
    let storedge = state("storedge");
    assert_eq!(storedge["state"], "live");
    assert_eq!(
        storedge["credential_fields"],
        json!(["api_key", "api_secret"])
    );
    assert_eq!(storedge["needs_account_id"], true);
    assert_eq!(
        storedge["default_base_url"],
        "https://api.storedgefms.com/v1"
    );
    for name in [
        "sitelink",
        "storman",
        "webselfstorage",
        "hummingbird",
        "stora",
    ] {
        assert_eq!(state(name)["state"], "coming_soon", "{name}");
        let (s, res) = status_json(
            app.post(
                "/api/v1/data-sources",
                &json!({ "provider": name, "base_url": "https://crm.example.com", "api_key": "k" }),
            )
            .await,
        )
        .await;
        assert_eq!(s, 422, "{name}: {res}");
        assert_eq!(
            res["error"],
            format!(
                "provider: the {name} adapter is coming soon; live now: generic_json, storedge"
            )
        );
    }
    assert_eq!(providers.len(), 7);
    // storEDGE needs its secret and account; a bad range is refused before anything is recorded.
    let (s, res) = status_json(
        app.post(
            "/api/v1/data-sources",
            &json!({ "provider": "storedge", "api_key": "k", "account_id": "a", "verify": false }),
        )
        .await,
    )
    .await;
    assert_eq!(
        (s, res["error"].as_str()),
        (422, Some("api_secret: is required by storedge"))
    );
    let (s, created) = status_json(
        app.post(
            "/api/v1/data-sources",
            &json!({ "provider": "storedge", "api_key": "k", "api_secret": "s", "account_id": "a", "verify": false }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{created}");
    assert_eq!(created["base_url"], "https://api.storedgefms.com/v1");
    let id = created["id"].as_str().unwrap();
    for (body, error) in [
        (
            json!({ "from": "2026-01-01", "to": "2026-06-01" }),
            "to: a pull covers at most 90 days",
        ),
        (
            json!({ "from": "2026-01-02", "to": "2026-01-01" }),
            "to: must not be before from",
        ),
        (
            json!({ "date": "2026-01-02", "to": "2026-01-03" }),
            "date: give either date or from and to, not both",
        ),
    ] {
        let (s, res) = status_json(
            app.post(&format!("/api/v1/data-sources/{id}/pull"), &body)
                .await,
        )
        .await;
        assert_eq!((s, res["error"].as_str()), (422, Some(error)), "{body}");
    }
    let (s, res) = status_json(
        app.post(
            &format!("/api/v1/data-sources/{id}/pull"),
            &json!({ "date": "yesterday" }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 422, "{res}");
    assert!(res["error"].as_str().unwrap().starts_with("date:"), "{res}");
    assert_eq!(app.count("crm_pulls").await, 0);
    assert_eq!(app.count("job_runs WHERE kind = 'crm_pull'").await, 0);
    // Another company's source is not found, for its pulls as for anything else.
    let other = app.create_tenant("Other").await;
    for (method, path) in [
        (
            reqwest::Method::GET,
            format!("/api/v1/data-sources/{id}/pulls"),
        ),
        (
            reqwest::Method::POST,
            format!("/api/v1/data-sources/{id}/pull"),
        ),
    ] {
        let r = app
            .req_as(&other, method, &path)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404, "{path}");
    }
}
