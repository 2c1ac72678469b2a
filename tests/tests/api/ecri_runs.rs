//! ECRI as stored work: a sync leads to a stored run, reads serve it without recomputing,
//! `?fresh=true` asks for a new one, a batch is drafted from the latest, the analytics report
//! sums the stored runs per size and pages its facilities, and the nightly fit runs once a day
//! per company.

use e2e::{get_ok, spawn_app, status_json, TestApp};
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// A facility's roll: `n` tenants of each size, rents spread under the street rate, moved in
/// long enough ago to be eligible.
pub(crate) fn snapshot(name: &str, date: &str, sizes: &[(&str, f64)], n: usize) -> Value {
    let mut tenants = Vec::new();
    for (s, (size, street)) in sizes.iter().enumerate() {
        for i in 0..n {
            tenants.push(json!({
                "tenant_id": format!("{name}-{size}-{i}"),
                "size": size,
                "rent": ((street * (0.72 + 0.02 * (i % 10) as f64)) * 100.0).round() / 100.0,
                "move_in_date": format!("20{:02}-0{}-15", 19 + (i + s) % 5, 1 + i % 9),
            }));
        }
    }
    json!({
        "facility": {"name": name},
        "date": date,
        "unit_types": sizes.iter().map(|(size, street)| json!({
            "size": size, "tier": "standard", "street_rate": street,
            "total_units": n + 3, "occupied_units": n
        })).collect::<Vec<_>>(),
        "tenants": tenants,
    })
}

pub(crate) async fn push(app: &TestApp, body: &Value) -> String {
    let (s, r) = status_json(app.sync(body).await).await;
    assert_eq!(s, 200, "{r}");
    r["facility"]["id"].as_str().unwrap().to_owned()
}

async fn run_rows(app: &TestApp, fid: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM ecri_runs WHERE facility_id = $1::uuid")
        .bind(fid)
        .fetch_one(app.db())
        .await
        .unwrap()
}

#[tokio::test]
async fn a_sync_leads_to_a_stored_run_that_reads_serve_and_fresh_replaces() {
    let app = spawn_app().await;
    let sizes = [("10x10", 140.0), ("5x5", 60.0)];
    let fid = push(&app, &snapshot("Runs", "2026-11-20", &sizes, 12)).await;
    let path = format!("/api/v1/facilities/{fid}/ecri");

    // Before the worker ran: no run, the job on its way named.
    let before = get_ok(&app, &path).await;
    assert_eq!(before["run"], Value::Null, "{before}");
    assert!(before["pending_job"].is_string(), "{before}");
    assert!(before["reason"].as_str().unwrap().contains("on its way"));
    assert_eq!(before["tenants"], json!([]));

    // The ingest requests the run; the worker stores it.
    app.run_jobs().await;
    let first = get_ok(&app, &path).await;
    let run_id = first["run"]["run_id"].as_str().unwrap().to_owned();
    assert_eq!(first["run"]["trigger"], "sync");
    assert_eq!(first["run"]["stale"], Value::Null);
    assert_eq!(first["pending_job"], Value::Null);
    assert_eq!(first["tenants"].as_array().unwrap().len(), 24);
    assert_eq!(first["as_of"], "2026-11-20");
    assert!(
        first["totals"]["tenants_affected"].as_u64().unwrap() > 0,
        "{first}"
    );
    // Reads serve the stored run: the same id and body, and no run is written by a read.
    for _ in 0..3 {
        assert_eq!(get_ok(&app, &path).await, first);
    }
    assert_eq!(run_rows(&app, &fid).await, 1);

    // `fresh=true` answers 202 with the job; a second ask joins the waiting one.
    let fresh = format!("{path}?fresh=true");
    let (s, asked) = status_json(app.get(&fresh).await).await;
    assert_eq!(s, 202, "{asked}");
    assert_eq!(asked["job"]["kind"], "ecri_run");
    let job = asked["job"]["id"].as_str().unwrap().to_owned();
    let (s, again) = status_json(app.get(&fresh).await).await;
    assert_eq!((s, again["job"]["id"].as_str()), (202, Some(job.as_str())));
    let waiting = get_ok(&app, &path).await;
    assert_eq!(waiting["pending_job"], job.as_str());
    assert_eq!(waiting["run"]["run_id"], run_id.as_str());
    app.run_jobs().await;
    let status = get_ok(&app, &format!("/api/v1/jobs/{job}")).await;
    assert_eq!(status["status"], "succeeded", "{status}");
    let second = get_ok(&app, &path).await;
    assert_ne!(second["run"]["run_id"], run_id.as_str());
    assert_eq!(
        second["run"]["run_id"],
        job.as_str(),
        "the run's id is its job's"
    );
    assert_eq!(second["run"]["trigger"], "on_demand");
    assert_eq!(
        second["tenants"], first["tenants"],
        "nothing changed, same lines"
    );
    let audit = get_ok(&app, "/api/v1/audit-log?action=ecri_run.request").await;
    assert_eq!(audit["entries"].as_array().unwrap().len(), 2, "{audit}");

    // A viewer may read but not ask for a run.
    let (s, k) = status_json(
        app.post(
            "/api/v1/api-keys",
            &json!({"name": "look only", "role": "viewer"}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{k}");
    let viewer = e2e::Tenant {
        company_id: app.tenant.company_id,
        api_key: k["api_key"].as_str().unwrap().to_owned(),
        email: app.tenant.email.clone(),
    };
    let r = app
        .req_as(&viewer, Method::GET, &fresh)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let r = app
        .req_as(&viewer, Method::GET, &path)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    // A newer snapshot: the stored run says it is out of date until the next run.
    push(&app, &snapshot("Runs", "2026-11-21", &sizes, 12)).await;
    let stale = get_ok(&app, &path).await;
    assert!(
        stale["run"]["stale"]
            .as_str()
            .is_some_and(|s| s.contains("2026-11-21")),
        "{stale}"
    );
    assert!(stale["pending_job"].is_string());
    app.run_jobs().await;
    let latest = get_ok(&app, &path).await;
    assert_eq!(latest["run"]["stale"], Value::Null);
    assert_eq!(latest["as_of"], "2026-11-21");

    // A batch is drafted from the latest run, and says which.
    let (s, batch) = status_json(
        app.post(
            &format!("/api/v1/facilities/{fid}/ecri-batches"),
            &json!({}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{batch}");
    let from: Option<uuid::Uuid> =
        sqlx::query_scalar("SELECT ecri_run_id FROM ecri_batches WHERE id = $1::uuid")
            .bind(batch["id"].as_str().unwrap())
            .fetch_one(app.db())
            .await
            .unwrap();
    assert_eq!(
        from.map(|u| u.to_string()),
        latest["run"]["run_id"].as_str().map(str::to_owned)
    );
    assert_eq!(
        batch["lines"].as_array().unwrap().len() as u64,
        latest["tenants"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["increase"].as_f64().unwrap() > 0.0)
            .count() as u64,
        "{batch}"
    );
    // Another company sees nothing.
    let other = app.create_tenant("Other Storage").await;
    let r = app.req_as(&other, Method::GET, &path).send().await.unwrap();
    assert_eq!(r.status(), 404);
    let r = app
        .req_as(&other, Method::GET, &fresh)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
}

/// Per size: tenants, tenants increased, monthly uplift and expected gain of a run's lines.
fn by_size(e: &Value) -> BTreeMap<String, (u64, u64, f64, f64)> {
    let mut out: BTreeMap<String, (u64, u64, f64, f64)> = BTreeMap::new();
    for l in e["tenants"].as_array().unwrap() {
        let s = out
            .entry(l["size"].as_str().unwrap().to_owned())
            .or_default();
        s.0 += 1;
        let inc = l["increase"].as_f64().unwrap();
        if inc > 0.0 {
            s.1 += 1;
            s.2 += inc;
        }
        s.3 += l["expected_gain"].as_f64().unwrap();
    }
    out
}

#[track_caller]
fn near(v: &Value, want: f64, tol: f64) {
    let x = v.as_f64().unwrap_or(f64::NAN);
    assert!((x - want).abs() <= tol, "{v} is not {want}");
}

#[tokio::test]
async fn the_report_sums_the_stored_runs_per_size_and_pages_its_facilities() {
    let app = spawn_app().await;
    let sizes = [("10x20", 210.0), ("5x5", 60.0), ("10x10", 140.0)];
    let a = push(&app, &snapshot("Alder", "2026-11-20", &sizes, 10)).await;
    let b = push(&app, &snapshot("Birch", "2026-11-20", &sizes[..2], 7)).await;
    let empty = app.create_facility("Cedar Lot").await;
    app.run_jobs().await;

    let ea = get_ok(&app, &format!("/api/v1/facilities/{a}/ecri")).await;
    let eb = get_ok(&app, &format!("/api/v1/facilities/{b}/ecri")).await;
    let (sa, sb) = (by_size(&ea), by_size(&eb));

    // One facility: its run's lines summed per size, sizes in natural order.
    let one = get_ok(&app, &format!("/api/v1/analytics/ecri?facility_id={a}")).await;
    let f = &one["facilities"][0];
    assert_eq!(f["run"]["run_id"], ea["run"]["run_id"]);
    let names: Vec<&str> = f["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["size"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["5x5", "10x10", "10x20"]);
    for s in f["sizes"].as_array().unwrap() {
        let want = &sa[s["size"].as_str().unwrap()];
        assert_eq!(s["tenants"], want.0);
        assert_eq!(s["tenants_affected"], want.1);
        near(&s["monthly_uplift"], want.2, 0.011);
        near(&s["expected_gain"], want.3, 0.011);
    }
    near(
        &f["totals"]["monthly_uplift"],
        ea["totals"]["monthly_uplift"].as_f64().unwrap(),
        0.02,
    );
    assert_eq!(
        f["totals"]["tenants_affected"],
        ea["totals"]["tenants_affected"]
    );

    // The company: totals and sizes over both, the empty facility with its reason.
    let all = get_ok(&app, "/api/v1/analytics/ecri").await;
    assert_eq!(all["coverage"]["facilities"], 3);
    assert_eq!(all["coverage"]["with_run"], 2);
    assert_eq!(all["coverage"]["stale"], 0);
    let t = &all["totals"];
    assert_eq!(t["tenants"], 30 + 14);
    let affected = ea["totals"]["tenants_affected"].as_u64().unwrap()
        + eb["totals"]["tenants_affected"].as_u64().unwrap();
    assert_eq!(t["tenants_affected"], affected);
    let small = all["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["size"] == "5x5")
        .unwrap();
    assert_eq!(small["tenants"], 17);
    assert_eq!(small["tenants_affected"], sa["5x5"].1 + sb["5x5"].1);
    near(&small["monthly_uplift"], sa["5x5"].2 + sb["5x5"].2, 0.021);
    let c = all["facilities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["facility_id"] == empty.as_str())
        .unwrap();
    assert_eq!(c["run"], Value::Null);
    assert!(c["reason"].as_str().unwrap().contains("no ECRI run yet"));

    // Pages the largest expected gain first: Alder and Birch by their gain, then Cedar Lot
    // (no run); totals cover every page.
    let p1 = get_ok(&app, "/api/v1/analytics/ecri?limit=2").await;
    let names = |p: &Value| -> Vec<String> {
        p["facilities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["facility_name"].as_str().unwrap().to_owned())
            .collect()
    };
    let mut with_run: Vec<(f64, String)> = all["facilities"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| !f["run"].is_null())
        .map(|f| {
            let gain = f["totals"]["expected_gain"].as_f64().unwrap();
            (gain, f["facility_name"].as_str().unwrap().to_owned())
        })
        .collect();
    with_run.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let by_gain: Vec<String> = with_run.into_iter().map(|(_, n)| n).collect();
    assert_eq!(names(&p1), by_gain);
    assert_eq!(p1["totals"], all["totals"]);
    let cursor = p1["next_cursor"].as_str().unwrap();
    let p2 = get_ok(
        &app,
        &format!("/api/v1/analytics/ecri?limit=2&cursor={cursor}"),
    )
    .await;
    assert_eq!(names(&p2), ["Cedar Lot"]);
    assert_eq!(p2["next_cursor"], Value::Null);
    for bad in ["limit=0", "limit=501", "limit=ten", "cursor=nonsense"] {
        let (s, e) = status_json(app.get(&format!("/api/v1/analytics/ecri?{bad}")).await).await;
        assert_eq!(s, 422, "{bad}: {e}");
        assert!(e["error"].is_string());
    }
}

#[tokio::test]
async fn the_nightly_fit_runs_once_a_day_per_company_after_four_and_every_facility_is_run() {
    let app = spawn_app().await;
    let sizes = [("10x10", 140.0)];
    let a = push(&app, &snapshot("Night A", "2026-11-20", &sizes, 8)).await;
    let b = push(&app, &snapshot("Night B", "2026-11-20", &sizes, 8)).await;
    app.run_jobs().await;
    let tz: String = sqlx::query_scalar("SELECT time_zone FROM companies WHERE id = $1")
        .bind(app.tenant.company_id)
        .fetch_one(app.db())
        .await
        .unwrap();
    let tz: chrono_tz::Tz = tz.parse().unwrap();
    // Tomorrow in the company's time zone (its trial is still running).
    let day = chrono::Utc::now().with_timezone(&tz).date_naive() + chrono::Duration::days(1);
    let at = |h| {
        day.and_hms_opt(h, 30, 0)
            .unwrap()
            .and_local_timezone(tz)
            .earliest()
            .unwrap()
            .with_timezone(&chrono::Utc)
    };
    // Before four in the company's time zone: nothing is due.
    assert!(jobs::ecri::fit::nightly_tick(app.db(), at(3))
        .await
        .unwrap()
        .is_empty());
    let due = jobs::ecri::fit::nightly_tick(app.db(), at(4))
        .await
        .unwrap();
    assert_eq!(due.len(), 1, "one fit for the one company: {due:?}");
    // Later ticks of the same day (any replica) add nothing.
    assert!(jobs::ecri::fit::nightly_tick(app.db(), at(23))
        .await
        .unwrap()
        .is_empty());
    app.run_jobs().await;
    let fits: i64 = sqlx::query_scalar("SELECT count(*) FROM ecri_fits WHERE company_id = $1")
        .bind(app.tenant.company_id)
        .fetch_one(app.db())
        .await
        .unwrap();
    assert!(fits >= 1);
    for fid in [&a, &b] {
        let e = get_ok(&app, &format!("/api/v1/facilities/{fid}/ecri")).await;
        assert_eq!(e["run"]["trigger"], "nightly", "{}", e["run"]);
        assert_eq!(run_rows(&app, fid).await, 2);
    }
}
