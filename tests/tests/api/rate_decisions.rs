//! Street-rate decisions through the real server: accept, override (refused past a guardrail,
//! then forced with a reason), reject; the rates in force and approved, as JSON and CSV; the
//! next run starting from the approved rates; a snapshot that shows a rate applying it; the
//! signed `rates.approved` delivery at a real HTTPS receiver; auto-accept; tenancy and bad input.
//!
//! The facility, priced with seasonality and the price response turned off so the figures
//! below do not depend on the month (one snapshot, no trend):
//! - 5x5 at 50, 80 % occupied, no competitors: holds at 50.
//! - 5x10 at 100, 90 % occupied (inside the 88-93 % band), competitors 106 / 110 / 114 / 118
//!   (median 112): a run closes half the gap, 106 (+6 %).
//! - 10x10 at 100, 97 % occupied, competitors 120 / 130 / 140 / 150 (median 135, P75 145):
//!   target 135 x 1.04, half way 120.20, stopped by the 8 % step at 108 (+8 %).

use super::pricing::by_size as rec;
use e2e::receiver::{expected_signature, Receiver, Reply, TestCa};
use e2e::{spawn_app_with, status_json, TestApp};
use reqwest::Method;
use serde_json::{json, Value};

fn hook_env(ca: &TestCa) -> Vec<(&'static str, String)> {
    vec![
        (
            "WEBHOOK_ALLOW_PRIVATE_TARGETS",
            "127.0.0.0/8,::1".to_owned(),
        ),
        ("WEBHOOK_CA_FILE", ca.pem_path().to_owned()),
    ]
}

fn borrowed<'a>(vars: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    vars.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// The app, an HTTPS receiver it may deliver to, and the secret of a subscription of the
/// receiver to `rates.approved`.
async fn with_receiver() -> (TestApp, Receiver, String) {
    let ca = TestCa::new();
    let env = hook_env(&ca);
    let app = spawn_app_with(&borrowed(&env)).await;
    let receiver = Receiver::start(&ca, |_, _| Reply::status(200)).await;
    let (s, sub) = status_json(
        app.post(
            "/api/v1/webhooks",
            &json!({ "url": receiver.url("/hooks"), "events": ["rates.approved"] }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{sub}");
    let secret = sub["secret"].as_str().unwrap().to_owned();
    (app, receiver, secret)
}

fn day(days_ago: i64) -> String {
    (chrono::Utc::now().date_naive() - chrono::Duration::days(days_ago)).to_string()
}

fn snapshot(name: &str, date: &str, rates: [f64; 3]) -> Value {
    let comps = |size: &str, rates: [i32; 4]| -> Vec<Value> {
        rates
            .iter()
            .enumerate()
            .map(|(i, r)| {
                json!({ "competitor": format!("C{i}"), "size": size, "rate": r, "promo": null,
                        "source_url": "https://example.com" })
            })
            .collect()
    };
    let mut competitors = comps("10x10", [120, 130, 140, 150]);
    competitors.extend(comps("5x10", [106, 110, 114, 118]));
    json!({
        "facility": { "name": name },
        "date": date,
        "occupancy_pct": 90,
        "unit_types": [
            { "size": "10x10", "tier": "standard", "street_rate": rates[0], "occupancy_pct": 97, "total_units": 50 },
            { "size": "5x10", "tier": "standard", "street_rate": rates[1], "occupancy_pct": 90, "total_units": 40 },
            { "size": "5x5", "tier": "standard", "street_rate": rates[2], "occupancy_pct": 80, "total_units": 40 },
        ],
        "competitor_rates": competitors,
    })
}

/// A facility with one snapshot of yesterday and settings that keep its figures month-free;
/// its id.
pub(crate) async fn facility(app: &TestApp, name: &str) -> String {
    let (s, body) = status_json(
        app.sync(&snapshot(name, &day(1), [100.0, 100.0, 50.0]))
            .await,
    )
    .await;
    assert_eq!(s, 200, "{body}");
    let id = body["facility"]["id"].as_str().unwrap().to_owned();
    let (s, body) = status_json(
        app.put(
            &format!("/api/v1/facilities/{id}/pricing-settings"),
            &json!({ "seasonality_pp_per_index": 0, "response_weight": 0 }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 200, "{body}");
    // The sync's own run.
    app.run_jobs().await;
    id
}

pub(crate) async fn run_engine(app: &TestApp, id: &str) -> Value {
    let (s, run) = status_json(
        app.get(&format!("/api/v1/facilities/{id}/recommendations"))
            .await,
    )
    .await;
    assert_eq!(s, 200, "{run}");
    run
}

pub(crate) fn line<'a>(rates: &'a Value, size: &str) -> &'a Value {
    rates["rates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["size"] == size)
        .unwrap_or_else(|| panic!("no {size} in {rates}"))
}

async fn decide(app: &TestApp, id: &str, run: &str, decisions: Value) -> (u16, Value) {
    status_json(
        app.post(
            &format!("/api/v1/facilities/{id}/recommendation-runs/{run}/decisions"),
            &json!({ "decisions": decisions }),
        )
        .await,
    )
    .await
}

async fn count(app: &TestApp, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(app.db()).await.unwrap()
}

async fn written(app: &TestApp) -> (i64, i64, i64) {
    (
        count(app, "SELECT count(*) FROM rate_decisions").await,
        count(app, "SELECT count(*) FROM decision_log").await,
        count(
            app,
            "SELECT count(*) FROM webhook_deliveries WHERE event = 'rates.approved'",
        )
        .await,
    )
}

#[tokio::test]
async fn rates_are_accepted_overridden_and_rejected_and_the_next_run_starts_from_them() {
    let (app, receiver, secret) = with_receiver().await;

    let id = facility(&app, "Main Street").await;
    let sync_run = get_latest(&app, &id).await;
    let run = run_engine(&app, &id).await;
    let run_id = run["recommendation_id"].as_str().unwrap().to_owned();
    assert_eq!(rec(&run, "10x10")["recommended_rate"], 108.0);
    assert_eq!(rec(&run, "5x10")["recommended_rate"], 106.0);
    assert_eq!(rec(&run, "5x5")["action"], "hold");
    assert_eq!(run["pending_approved_rates"], json!([]));

    // Bad input writes nothing.
    let stale = sync_run["recommendation_id"].as_str().unwrap();
    let (s, body) = decide(
        &app,
        &id,
        stale,
        json!([{ "size": "10x10", "tier": "standard", "action": "accept" }]),
    )
    .await;
    assert_eq!(s, 409, "{body}");
    assert!(body["error"].as_str().unwrap().contains(&run_id), "{body}");
    for (decisions, path) in [
        (json!([]), "decisions"),
        (
            json!([{ "size": "7x7", "tier": "standard", "action": "accept" }]),
            "decisions[0]",
        ),
        (
            json!([{ "size": "10x10", "action": "accept" }]),
            "decisions[0]",
        ),
        (
            json!([{ "size": "10x10", "tier": "standard", "action": "accept" },
                   { "size": "10x10", "tier": "standard", "action": "reject" }]),
            "decisions[1]",
        ),
        (
            json!([{ "size": "10x10", "tier": "standard", "action": "override" }]),
            "decisions[0].rate",
        ),
        (
            json!([{ "size": "10x10", "tier": "standard", "action": "override", "rate": -5 }]),
            "decisions[0].rate",
        ),
        (
            json!([{ "size": "10x10", "tier": "standard", "action": "maybe" }]),
            "decisions[0].action",
        ),
        (
            json!([{ "size": "10x10", "tier": "standard", "action": "reject", "reason": "x".repeat(501) }]),
            "decisions[0].reason",
        ),
    ] {
        let (s, body) = decide(&app, &id, &run_id, decisions.clone()).await;
        assert_eq!(s, 422, "{decisions}: {body}");
        let error = body["error"].as_str().unwrap();
        assert!(
            error.starts_with(&format!("{path}:")),
            "{decisions}: {error}"
        );
    }
    // An override past the guardrails is refused, with the whole request.
    let set = |force: Value| {
        json!([
            { "size": "10x10", "tier": "standard", "action": "accept" },
            { "size": "5x10", "tier": "standard", "action": "override", "rate": 150,
              "reason": "a new road opened", "force": force },
            { "size": "5x5", "tier": "standard", "action": "reject", "reason": "wait a month" },
        ])
    };
    let (s, body) = decide(&app, &id, &run_id, set(json!(false))).await;
    assert_eq!(s, 422, "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(error.starts_with("decisions[1]:"), "{error}");
    assert!(
        error.contains("max_step") && error.contains("ceiling"),
        "{error}"
    );
    assert!(error.contains("force: true"), "{error}");
    // Another company sees neither the facility nor its run; a run of another facility is not
    // this facility's.
    let other = app.create_tenant("Rival Storage").await;
    let path = format!("/api/v1/facilities/{id}/recommendation-runs/{run_id}/decisions");
    let r = app
        .req_as(&other, Method::POST, &path)
        .json(&json!({ "decisions": set(json!(true)) }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let second = facility(&app, "Elm Street").await;
    let (s, body) = decide(&app, &second, &run_id, set(json!(true))).await;
    assert_eq!(s, 404, "{body}");
    assert_eq!(written(&app).await, (0, 0, 0));

    // Forced with a reason, the set is stored.
    let (s, body) = decide(&app, &id, &run_id, set(json!(true))).await;
    assert_eq!(s, 201, "{body}");
    assert_eq!(body["run_id"], run_id.as_str());
    let d = body["decisions"].as_array().unwrap();
    assert_eq!(d.len(), 3);
    let actor = json!({ "type": "api_key", "id": d[0]["actor"]["id"], "name": "default" });
    assert!(d[0]["actor"]["id"].is_string());
    assert_eq!(
        (
            d[0]["size"].clone(),
            d[0]["action"].clone(),
            d[0]["rate"].clone()
        ),
        (json!("10x10"), json!("accept"), json!(108.0))
    );
    assert_eq!(d[0]["previous_rate"], 100.0);
    assert_eq!(d[0]["recommended_rate"], 108.0);
    assert_eq!(d[0]["forced"], false);
    assert_eq!(d[1]["action"], "override");
    assert_eq!(d[1]["rate"], 150.0);
    assert_eq!(d[1]["recommended_rate"], 106.0);
    assert_eq!(d[1]["forced"], true);
    assert_eq!(d[1]["broken_guardrails"], json!(["max_step", "ceiling"]));
    assert_eq!(d[1]["reason"], "a new road opened");
    assert_eq!(d[2]["action"], "reject");
    assert_eq!(d[2]["rate"], Value::Null);
    for x in d {
        assert_eq!(x["actor"], actor);
        assert_eq!(x["automatic"], false);
        assert_eq!(x["tier"], "standard");
    }
    assert_eq!(written(&app).await, (3, 3, 1));

    // The rates in force and approved, value by value.
    let (s, rates) = status_json(app.get(&format!("/api/v1/facilities/{id}/rates")).await).await;
    assert_eq!(s, 200, "{rates}");
    assert_eq!(rates["currency"], "USD");
    assert_eq!(rates["snapshot_date"], day(1));
    assert_eq!(rates["pending_days"], 14);
    assert_eq!(rates["rates"].as_array().unwrap().len(), 3);
    let big = line(&rates, "10x10");
    assert_eq!(big["rate_in_force"], 100.0);
    assert_eq!(big["rate_in_force_date"], day(1));
    assert_eq!(big["approved_rate"], 108.0);
    assert_eq!(big["source"], "recommendation");
    assert_eq!(big["status"], "pending");
    assert_eq!(big["decision_id"], d[0]["id"]);
    assert_eq!(big["decided_at"], d[0]["decided_at"]);
    assert_eq!(big["decided_by"], actor);
    let mid = line(&rates, "5x10");
    assert_eq!(mid["approved_rate"], 150.0);
    assert_eq!(mid["source"], "override");
    assert_eq!(mid["status"], "pending");
    let small = line(&rates, "5x5");
    assert_eq!(small["rate_in_force"], 50.0);
    for field in ["approved_rate", "source", "status", "decided_by"] {
        assert_eq!(small[field], Value::Null, "{field}");
    }
    // The same as a CSV for a PMS import, both ways of asking.
    let csv = app.get(&format!("/api/v1/facilities/{id}/rates.csv")).await;
    assert_eq!(csv.status(), 200);
    assert_eq!(csv.headers()["content-type"], "text/csv; charset=utf-8");
    let csv = csv.text().await.unwrap();
    let decided_at = |i: usize| d[i]["decided_at"].as_str().unwrap().to_owned();
    assert_eq!(
        csv,
        format!(
            "size,tier,rate_to_set,rate_in_force,currency,source,decided_at,decided_by\n\
             5x10,standard,150.00,100.00,USD,override,{},\"API key \"\"default\"\"\"\n\
             10x10,standard,108.00,100.00,USD,recommendation,{},\"API key \"\"default\"\"\"\n",
            decided_at(1),
            decided_at(0)
        )
    );
    let again = app
        .get(&format!("/api/v1/facilities/{id}/rates?format=csv"))
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(again, csv);
    let (s, _) = status_json(
        app.get(&format!("/api/v1/facilities/{id}/rates?format=xml"))
            .await,
    )
    .await;
    assert_eq!(s, 422);
    for p in ["rates", "rates.csv"] {
        let r = app
            .req_as(&other, Method::GET, &format!("/api/v1/facilities/{id}/{p}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404, "{p}");
    }

    // The signed delivery of the approved set.
    app.run_jobs().await;
    let hits = receiver.hits();
    assert_eq!(hits.len(), 1, "one rates.approved event");
    let hit = &hits[0];
    assert_eq!(hit.header("x-service-event"), Some("rates.approved"));
    assert_eq!(
        hit.header("x-service-signature").unwrap(),
        expected_signature(&secret, &hit.body)
    );
    let event = hit.json();
    assert_eq!(
        event,
        json!({
            "event": "rates.approved",
            "company_id": app.tenant.company_id,
            "facility_id": id,
            "facility_name": "Main Street",
            "run_id": run_id,
            "approved_at": d[2]["decided_at"],
            "rates": [
                { "size": "10x10", "tier": "standard", "rate": 108.0, "previous_rate": 100.0,
                  "source": "recommendation", "decided_by": actor },
                { "size": "5x10", "tier": "standard", "rate": 150.0, "previous_rate": 100.0,
                  "source": "override", "decided_by": actor },
            ],
        })
    );

    // The next run starts from the approved rates, changed today (the cooldown holds them),
    // and says so.
    let next = run_engine(&app, &id).await;
    let pending = next["pending_approved_rates"].as_array().unwrap();
    assert_eq!(pending.len(), 2, "{next}");
    let p10 = pending.iter().find(|p| p["size"] == "10x10").unwrap();
    assert_eq!(p10["snapshot_rate"], 100.0);
    assert_eq!(p10["approved_rate"], 108.0);
    assert_eq!(p10["tier"], "standard");
    assert_eq!(p10["decided_at"], d[0]["decided_at"]);
    assert_eq!(
        next["inputs"]["pending_approved_rates"],
        next["pending_approved_rates"]
    );
    assert_eq!(rec(&next, "10x10")["current_rate"], 108.0);
    assert_eq!(rec(&next, "5x10")["current_rate"], 150.0);
    assert_eq!(rec(&next, "5x5")["current_rate"], 50.0);
    assert_eq!(rec(&next, "10x10")["action"], "hold");
    assert!(rec(&next, "10x10")["guardrails"]
        .as_array()
        .unwrap()
        .iter()
        .any(|g| g["name"] == "cooldown"));

    // Today's snapshot shows the accepted 10x10 rate, not the override.
    let (s, body) = status_json(
        app.sync(&snapshot("Main Street", &day(0), [108.0, 100.0, 50.0]))
            .await,
    )
    .await;
    assert_eq!(s, 200, "{body}");
    app.run_jobs().await;
    let (_, rates) = status_json(app.get(&format!("/api/v1/facilities/{id}/rates")).await).await;
    assert_eq!(rates["snapshot_date"], day(0));
    assert_eq!(line(&rates, "10x10")["status"], "applied");
    assert_eq!(line(&rates, "10x10")["rate_in_force"], 108.0);
    assert_eq!(line(&rates, "5x10")["status"], "pending");
    let latest = get_latest(&app, &id).await;
    assert_eq!(latest["trigger"], "sync");
    let pending = latest["pending_approved_rates"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{latest}");
    assert_eq!(pending[0]["size"], "5x10");

    // A later decision on a unit type replaces the earlier one: rejecting the 5x10 of the
    // latest run leaves no approved rate waiting.
    let latest_id = latest["recommendation_id"].as_str().unwrap();
    let (s, body) = decide(
        &app,
        &id,
        latest_id,
        json!([{ "size": "5x10", "tier": "standard", "action": "reject" }]),
    )
    .await;
    assert_eq!(s, 201, "{body}");
    let (_, rates) = status_json(app.get(&format!("/api/v1/facilities/{id}/rates")).await).await;
    assert_eq!(line(&rates, "5x10")["approved_rate"], Value::Null);
    assert_eq!(line(&rates, "10x10")["status"], "applied");
    // No rate approved: no event.
    assert_eq!(written(&app).await, (4, 4, 1));

    // The facility's history lists every decision with its actor.
    let (s, history) =
        status_json(app.get(&format!("/api/v1/facilities/{id}/history")).await).await;
    assert_eq!(s, 200, "{history}");
    let logged: Vec<(String, String, Value)> = history["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_owned(),
                e["summary"].as_str().unwrap().to_owned(),
                e["actor"].clone(),
            )
        })
        .collect();
    assert_eq!(
        logged,
        vec![
            (
                "rate.rejected".to_owned(),
                "Rejected the recommendation of $150.00 for 5x10 standard (stays at $150.00)"
                    .to_owned(),
                actor.clone()
            ),
            (
                "rate.rejected".to_owned(),
                "Rejected the recommendation of $50.00 for 5x5 standard (stays at $50.00)"
                    .to_owned(),
                actor.clone()
            ),
            (
                "rate.overridden".to_owned(),
                "Overrode 5x10 standard to $150.00 (recommended $106.00, was $100.00), past \
                 max_step, ceiling"
                    .to_owned(),
                actor.clone()
            ),
            (
                "rate.accepted".to_owned(),
                "Accepted 10x10 standard at $108.00 (was $100.00)".to_owned(),
                actor.clone()
            ),
        ]
    );
    app.run_jobs().await;
}

async fn get_latest(app: &TestApp, id: &str) -> Value {
    let (s, run) = status_json(
        app.get(&format!(
            "/api/v1/facilities/{id}/recommendations?regenerate=0"
        ))
        .await,
    )
    .await;
    assert_eq!(s, 200, "{run}");
    run
}

#[tokio::test]
async fn auto_accept_takes_a_syncs_small_changes_only() {
    let (app, receiver, _) = with_receiver().await;
    let id = facility(&app, "Main Street").await;
    // Off by default: the sync's run accepted nothing.
    let off = get_latest(&app, &id).await;
    assert_eq!(off["trigger"], "sync");
    assert_eq!(written(&app).await.0, 0);
    assert_eq!(rec(&off, "5x10")["change_pct"], 6.0);
    assert_eq!(rec(&off, "10x10")["change_pct"], 8.0);

    // Within 7 %: the same snapshot again, and its run accepts the 5x10 (+6 %) only; the
    // 10x10 (+8 %) waits, the 5x5 holds.
    let (s, body) = status_json(
        app.put(
            &format!("/api/v1/facilities/{id}/pricing-settings"),
            &json!({ "seasonality_pp_per_index": 0, "response_weight": 0, "auto_accept_within_pct": 7 }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 200, "{body}");
    let (s, body) = status_json(
        app.sync(&snapshot("Main Street", &day(1), [100.0, 100.0, 50.0]))
            .await,
    )
    .await;
    assert_eq!(s, 200, "{body}");
    app.run_jobs().await;
    let run = get_latest(&app, &id).await;
    assert_eq!(run["trigger"], "sync");
    assert_ne!(run["recommendation_id"], off["recommendation_id"]);
    let (_, rates) = status_json(app.get(&format!("/api/v1/facilities/{id}/rates")).await).await;
    let system = json!({ "type": "system", "id": null, "name": "auto-accept" });
    assert_eq!(line(&rates, "5x10")["approved_rate"], 106.0);
    assert_eq!(line(&rates, "5x10")["source"], "recommendation");
    assert_eq!(line(&rates, "5x10")["decided_by"], system);
    assert_eq!(line(&rates, "10x10")["approved_rate"], Value::Null);
    assert_eq!(line(&rates, "5x5")["approved_rate"], Value::Null);
    let stored: Vec<(String, bool, String)> =
        sqlx::query_as("SELECT size, automatic, run_id::text FROM rate_decisions ORDER BY size")
            .fetch_all(app.db())
            .await
            .unwrap();
    assert_eq!(
        stored,
        vec![(
            "5x10".to_owned(),
            true,
            run["recommendation_id"].as_str().unwrap().to_owned()
        )]
    );
    let hits = receiver.hits();
    assert_eq!(hits.len(), 1);
    let event = hits[0].json();
    assert_eq!(event["run_id"], run["recommendation_id"]);
    assert_eq!(
        event["rates"],
        json!([{ "size": "5x10", "tier": "standard", "rate": 106.0, "previous_rate": 100.0,
                 "source": "recommendation", "decided_by": system }])
    );
    let (_, history) =
        status_json(app.get(&format!("/api/v1/facilities/{id}/history")).await).await;
    assert_eq!(history["decisions"][0]["actor"], system);
    assert_eq!(
        history["decisions"][0]["summary"],
        "Accepted automatically 5x10 standard at $106.00 (was $100.00)"
    );
    app.run_jobs().await;
}
