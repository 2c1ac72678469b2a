//! An ECRI batch's outcome as a statistician reads it, end to end through the API: revenue
//! counted each day at the rent in force that day (a later increase inside the window counts
//! from its own date), the verdict `too_early` on a partial window, Welch's t with customers
//! as clusters; and the stay model's calibration over the company's approved batches, by
//! decile of predicted stay and by facility, limited to the reader's company and scope.
//!
//! Notices cannot be backdated through the API: the tests move an approved batch's dates back
//! in the database (and, for the calibration, set the lines' predicted stay to figures worked
//! by hand), then sync the later rolls through the API.

use chrono::{Duration, Utc};
use e2e::{get_ok, spawn_app, status_json, TestApp};
use reqwest::Method;
use serde_json::{json, Value};

fn day(back: i64) -> String {
    (Utc::now().date_naive() - Duration::days(back)).to_string()
}

fn tenant(id: &str, rent: f64, customer: Option<&str>) -> Value {
    json!({"tenant_id": id, "size": "10x10", "rent": rent, "move_in_date": "2024-03-01",
           "last_increase_date": null, "customer_id": customer})
}

fn snapshot(name: &str, date: &str, tenants: &[Value]) -> Value {
    json!({
        "facility": {"name": name},
        "date": date,
        "unit_types": [
            {"size": "10x10", "tier": "standard", "street_rate": 140, "total_units": 60, "occupied_units": 57}
        ],
        "tenants": tenants
    })
}

async fn sync(app: &TestApp, body: &Value) -> String {
    let (s, r) = status_json(app.sync(body).await).await;
    assert_eq!(s, 200, "{r}");
    r["facility"]["id"].as_str().unwrap().to_owned()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is a number"))
}

/// Notice `notice_back` days ago, in force 30 days later.
async fn backdate(app: &TestApp, batch: &str, notice_back: i32) {
    sqlx::query(
        "UPDATE ecri_batches SET notice_date = current_date - $2,
                effective_date = current_date - $2 + 30,
                approved_at = approved_at - make_interval(days => $2)
         WHERE id = $1::uuid",
    )
    .bind(batch)
    .bind(notice_back)
    .execute(app.db())
    .await
    .unwrap();
}

/// A batch of every suggestion of the facility, approved; (id, its kept lines).
async fn approved_batch(app: &TestApp, fid: &str) -> (String, Vec<Value>) {
    let base = format!("/api/v1/facilities/{fid}/ecri-batches");
    app.ecri_now(&fid).await;
    let (s, draft) = status_json(app.post(&base, &json!({})).await).await;
    assert_eq!(s, 201, "{draft}");
    let id = draft["id"].as_str().unwrap().to_owned();
    let (s, b) = status_json(app.post(&format!("{base}/{id}/approve"), &json!({})).await).await;
    assert_eq!(s, 200, "{b}");
    let kept = b["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["excluded"] == false)
        .cloned()
        .collect();
    (id, kept)
}

const MONTH: f64 = 365.25 / 12.0;

#[tokio::test]
async fn revenue_counts_each_day_at_the_rent_then_in_force_and_a_partial_window_is_too_early() {
    let app = spawn_app().await;
    // 30 tenants at 100, well under street; T-00 and T-01 are one customer, as are T-02/T-03.
    let roll: Vec<Value> = (0..30)
        .map(|i| {
            let customer = match i {
                0 | 1 => Some("C-1"),
                2 | 3 => Some("C-2"),
                _ => None,
            };
            tenant(&format!("T-{i:02}"), 100.0, customer)
        })
        .collect();
    let fid = sync(&app, &snapshot("Window Way", &day(200), &roll)).await;
    let (s, set) = status_json(
        app.put(
            &format!("/api/v1/facilities/{fid}/ecri-settings"),
            &json!({"holdout_pct": 50}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 200, "{set}");
    let (id, lines) = approved_batch(&app, &fid).await;
    let one = format!("/api/v1/facilities/{fid}/ecri-batches/{id}");
    let controls: Vec<String> = sqlx::query_scalar(
        "SELECT tenant_id FROM ecri_batch_controls WHERE batch_id = $1::uuid ORDER BY tenant_id",
    )
    .bind(&id)
    .fetch_all(app.db())
    .await
    .unwrap();
    let increased: Vec<String> = lines
        .iter()
        .map(|l| l["tenant_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(increased.len() + controls.len(), 30);
    assert!(controls.len() >= 10 && increased.len() >= 10);
    let new_rent = |t: &str| {
        lines
            .iter()
            .find(|l| l["tenant_id"] == t)
            .map(|l| f(&l["new_rent"]))
    };
    // Notice 190 days ago; in force 160 days ago; the window runs to 70 days ago (91 days).
    backdate(&app, &id, 190).await;
    // X (increased) gets a second increase of 15 dated 120 days ago; Y (held out) a cut to 90
    // shown by the roll of 100 days ago (no date given: the roll's date). One of each group
    // leaves: missing from the roll of 100 days ago, so paid up to 101 days ago.
    let (inc_gone, x) = (increased[0].clone(), increased[1].clone());
    let (ctl_gone, y) = (controls[0].clone(), controls[1].clone());
    let x_first = new_rent(&x).unwrap();
    let x_second = x_first + 15.0;
    let roll_at = |late: bool| -> Vec<Value> {
        roll.iter()
            .filter(|t| {
                !late
                    || (t["tenant_id"] != inc_gone.as_str() && t["tenant_id"] != ctl_gone.as_str())
            })
            .map(|t| {
                let mut t = t.clone();
                let id = t["tenant_id"].as_str().unwrap().to_owned();
                if let Some(r) = new_rent(&id) {
                    t["rent"] = json!(r);
                    t["last_increase_date"] = json!(day(160));
                }
                if late && id == x {
                    t["rent"] = json!(x_second);
                    t["last_increase_date"] = json!(day(120));
                }
                if late && id == y {
                    t["rent"] = json!(90.0);
                }
                t
            })
            .collect()
    };
    sync(&app, &snapshot("Window Way", &day(150), &roll_at(false))).await;
    sync(&app, &snapshot("Window Way", &day(100), &roll_at(true))).await;

    // By hand: each tenant's rent for each day it stayed, / (365.25 / 12).
    let per_tenant = |days: f64| -> (f64, f64) {
        // (increased, held out) revenue per tenant over the first `days` days of the window.
        let inc: f64 = increased
            .iter()
            .map(|t| {
                let r = new_rent(t).unwrap();
                if *t == inc_gone {
                    r * 60.0
                } else if *t == x {
                    // 40 days (160 to 121 days ago) at the first new rent, then the second.
                    x_first * 40.0 + x_second * (days - 40.0)
                } else {
                    r * days
                }
            })
            .sum::<f64>()
            / increased.len() as f64
            / MONTH;
        let ctl: f64 = controls
            .iter()
            .map(|t| {
                if *t == ctl_gone {
                    100.0 * 60.0
                } else if *t == y {
                    // 60 days (160 to 101 days ago) at 100, then 90 from 100 days ago.
                    100.0 * 60.0 + 90.0 * (days - 60.0)
                } else {
                    100.0 * days
                }
            })
            .sum::<f64>()
            / controls.len() as f64
            / MONTH;
        (inc, ctl)
    };
    let check = |lift: &Value, days: f64| {
        let (inc, ctl) = per_tenant(days);
        assert!(
            (f(&lift["increased_revenue_per_tenant"]) - inc).abs() < 0.01,
            "{lift} {inc}"
        );
        assert!(
            (f(&lift["control_revenue_per_tenant"]) - ctl).abs() < 0.01,
            "{lift} {ctl}"
        );
        assert!(
            (f(&lift["lift_per_tenant"]) - (inc - ctl)).abs() < 0.02,
            "{lift}"
        );
    };
    // The roll reaches 100 days ago: 61 days of the window, too early for a verdict.
    let o = get_ok(&app, &one).await["outcome"].clone();
    assert_eq!(o["status"], "partial", "{o}");
    let lift = &o["lift"];
    assert_eq!(lift["window_days"], 61, "{lift}");
    assert_eq!(lift["window_complete"], false);
    assert_eq!(lift["verdict"], "too_early", "{lift}");
    assert!(
        lift["note"].as_str().unwrap().contains("too early"),
        "{lift}"
    );
    check(lift, 61.0);
    // With today's rent for every day, X would have counted 61 days at the second rent.
    let at_today: f64 = (x_second - x_first) * 40.0 / MONTH / increased.len() as f64;
    assert!(at_today > 0.5);
    assert!(f(&lift["ci_low"]) < f(&lift["lift_per_tenant"]));

    // The roll reaches 60 days ago: the window is complete.
    sync(&app, &snapshot("Window Way", &day(60), &roll_at(true))).await;
    let o = get_ok(&app, &one).await["outcome"].clone();
    assert_eq!(o["status"], "complete", "{o}");
    let lift = &o["lift"];
    assert_eq!(lift["window_days"], 91);
    assert_eq!(lift["window_complete"], true);
    check(lift, 91.0);
    assert_eq!(lift["increased_tenants"], increased.len());
    assert_eq!(lift["control_tenants"], controls.len());
    // Customers: C-1 and C-2 hold two units each, wherever they were drawn.
    let customers = |group: &[String]| -> usize {
        let mut keys: Vec<String> = group
            .iter()
            .map(|t| match t.as_str() {
                "T-00" | "T-01" => "C-1".to_owned(),
                "T-02" | "T-03" => "C-2".to_owned(),
                other => other.to_owned(),
            })
            .collect();
        keys.sort();
        keys.dedup();
        keys.len()
    };
    assert_eq!(lift["increased_clusters"], customers(&increased), "{lift}");
    assert_eq!(lift["control_clusters"], customers(&controls), "{lift}");
    // Welch's t: degrees of freedom at most the customers less two, a multiplier above 1.96.
    let df = f(&lift["degrees_of_freedom"]);
    assert!(
        df >= 1.0 && df <= (customers(&increased) + customers(&controls) - 2) as f64,
        "{lift}"
    );
    assert!(f(&lift["t_quantile"]) > 2.0, "{lift}");
    let half = (f(&lift["ci_high"]) - f(&lift["ci_low"])) / 2.0;
    assert!(half > 0.0);
    let verdict = lift["verdict"].as_str().unwrap();
    assert_eq!(
        verdict,
        if f(&lift["ci_low"]) > 0.0 {
            "positive"
        } else if f(&lift["ci_high"]) < 0.0 {
            "negative"
        } else {
            "inconclusive"
        },
        "{lift}"
    );
    app.run_jobs().await;
}

/// Sets the kept lines' predicted stay of a batch: `first` for the line of the lowest tenant
/// id, then `step` more for each next one.
async fn predict(app: &TestApp, batch: &str, first: f64, step: f64) {
    sqlx::query(
        "UPDATE ecri_batch_lines l SET stay_probability = $2 + $3 * (r.n - 1)
         FROM (SELECT line_no, row_number() OVER (ORDER BY tenant_id) AS n
               FROM ecri_batch_lines WHERE batch_id = $1::uuid AND NOT excluded) r
         WHERE l.batch_id = $1::uuid AND l.line_no = r.line_no",
    )
    .bind(batch)
    .bind(first)
    .bind(step)
    .execute(app.db())
    .await
    .unwrap();
}

#[tokio::test]
async fn calibration_bins_worked_by_hand_within_the_company_and_the_scope() {
    let app = spawn_app().await;
    let cal = "/api/v1/analytics/ecri/calibration";
    // An empty company answers zeros.
    let empty = get_ok(&app, cal).await;
    assert_eq!(
        empty,
        json!({"batches": 0, "tenants": 0, "overall": null, "deciles": [], "facilities": []})
    );

    // North: 12 tenants predicted 60, 62, ..., 82 %; South: 8 predicted 61, 63, ..., 75 %.
    let north_roll: Vec<Value> = (0..12)
        .map(|i| tenant(&format!("N-{i:02}"), 100.0, None))
        .collect();
    let south_roll: Vec<Value> = (0..8)
        .map(|i| tenant(&format!("S-{i:02}"), 100.0, None))
        .collect();
    let east_roll: Vec<Value> = (0..5)
        .map(|i| tenant(&format!("E-{i:02}"), 100.0, None))
        .collect();
    let north = sync(&app, &snapshot("North", &day(200), &north_roll)).await;
    let south = sync(&app, &snapshot("South", &day(200), &south_roll)).await;
    let east = sync(&app, &snapshot("East", &day(200), &east_roll)).await;
    let (nb, nl) = approved_batch(&app, &north).await;
    let (sb, sl) = approved_batch(&app, &south).await;
    let (eb, _) = approved_batch(&app, &east).await;
    assert_eq!((nl.len(), sl.len()), (12, 8));
    predict(&app, &nb, 0.60, 0.02).await;
    predict(&app, &sb, 0.61, 0.02).await;
    // Notices 120 days ago (stay read 30 days ago) at North and South; East's 60 days ago, so
    // its 90 days are not over and it is not counted.
    backdate(&app, &nb, 120).await;
    backdate(&app, &sb, 120).await;
    backdate(&app, &eb, 60).await;
    // N-00, N-09, N-11 and S-03 leave: missing from the rolls of 50 days ago; the rolls reach
    // 20 days ago. (A tenant leaving after the 90 days does not count as gone: N-05 leaves
    // with the roll of 20 days ago.)
    let gone = ["N-00", "N-09", "N-11", "S-03"];
    let later = |r: &[Value], extra: &[&str]| -> Vec<Value> {
        r.iter()
            .filter(|t| !gone.iter().chain(extra).any(|g| t["tenant_id"] == *g))
            .cloned()
            .collect()
    };
    for (name, r) in [
        ("North", &north_roll),
        ("South", &south_roll),
        ("East", &east_roll),
    ] {
        sync(
            &app,
            &snapshot(name, &day(50), &later(r.as_slice(), &[] as &[&str])),
        )
        .await;
        sync(
            &app,
            &snapshot(name, &day(20), &later(r.as_slice(), &["N-05"] as &[&str])),
        )
        .await;
    }
    let c = get_ok(&app, cal).await;
    assert_eq!(c["batches"], 2, "{c}");
    assert_eq!(c["tenants"], 20);
    // Ranked: 60 (N-00, gone), 61, 62, 63, 64, 65, 66, 67 (S-03, gone), 68, ..., 74, 75, then
    // North's 76 (N-08), 78 (N-09, gone), 80, 82 (N-11, gone): ten deciles of two.
    let deciles = c["deciles"].as_array().unwrap();
    assert_eq!(deciles.len(), 10, "{c}");
    let expect = [
        (60.0, 61.0, 60.5, 50.0),
        (62.0, 63.0, 62.5, 100.0),
        (64.0, 65.0, 64.5, 100.0),
        (66.0, 67.0, 66.5, 50.0),
        (68.0, 69.0, 68.5, 100.0),
        (70.0, 71.0, 70.5, 100.0),
        (72.0, 73.0, 72.5, 100.0),
        (74.0, 75.0, 74.5, 100.0),
        (76.0, 78.0, 77.0, 50.0),
        (80.0, 82.0, 81.0, 50.0),
    ];
    for (i, (d, (low, high, predicted, realized))) in deciles.iter().zip(expect).enumerate() {
        assert_eq!(d["decile"], i + 1);
        assert_eq!(d["tenants"], 2, "{d}");
        assert!((f(&d["predicted_low"]) - low).abs() < 1e-6, "{d}");
        assert!((f(&d["predicted_high"]) - high).abs() < 1e-6, "{d}");
        assert!((f(&d["predicted"]) - predicted).abs() < 1e-6, "{d}");
        assert!((f(&d["realized"]) - realized).abs() < 1e-6, "{d}");
    }
    // North: mean of 60..82 = 71 %, 9 of 12 stayed (75 %); South: 68 %, 7 of 8 (87.5 %).
    let facilities = c["facilities"].as_array().unwrap();
    assert_eq!(facilities.len(), 2, "{c}");
    assert_eq!(facilities[0]["facility_name"], "North");
    assert_eq!(facilities[0]["facility_id"], north.as_str());
    assert_eq!(facilities[0]["batches"], 1);
    assert_eq!(facilities[0]["tenants"], 12);
    assert!((f(&facilities[0]["predicted"]) - 71.0).abs() < 1e-6);
    assert!((f(&facilities[0]["realized"]) - 75.0).abs() < 1e-6);
    assert_eq!(facilities[1]["facility_name"], "South");
    assert_eq!(facilities[1]["tenants"], 8);
    assert!((f(&facilities[1]["predicted"]) - 68.0).abs() < 1e-6);
    assert!((f(&facilities[1]["realized"]) - 87.5).abs() < 1e-6);
    // Overall: (12 x 71 + 8 x 68) / 20 = 69.8 %, 16 of 20 stayed.
    assert!((f(&c["overall"]["predicted"]) - 69.8).abs() < 1e-6, "{c}");
    assert!((f(&c["overall"]["realized"]) - 80.0).abs() < 1e-6);
    // One facility: South alone.
    let s = get_ok(&app, &format!("{cal}?facility_id={south}")).await;
    assert_eq!(
        (s["batches"].as_i64(), s["tenants"].as_i64()),
        (Some(1), Some(8)),
        "{s}"
    );

    // Another company sees none of it, and none of its facilities.
    let other = app.create_tenant("Other Storage").await;
    let (st, theirs) =
        status_json(app.req_as(&other, Method::GET, cal).send().await.unwrap()).await;
    assert_eq!(st, 200);
    assert_eq!(theirs["batches"], 0, "{theirs}");
    assert_eq!(theirs["tenants"], 0);
    let r = app
        .req_as(&other, Method::GET, &format!("{cal}?facility_id={north}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    // A manager scoped to North sees North's batch only; South is as another company's.
    let (st, k) = status_json(
        app.post(
            "/api/v1/api-keys",
            &json!({"name": "north only", "role": "manager", "facility_ids": [north]}),
        )
        .await,
    )
    .await;
    assert_eq!(st, 201, "{k}");
    let scoped = e2e::Tenant {
        company_id: app.tenant.company_id,
        api_key: k["api_key"].as_str().unwrap().to_owned(),
        email: app.tenant.email.clone(),
    };
    let (st, mine) = status_json(app.req_as(&scoped, Method::GET, cal).send().await.unwrap()).await;
    assert_eq!(st, 200, "{mine}");
    assert_eq!(mine["batches"], 1, "{mine}");
    assert_eq!(mine["tenants"], 12);
    let names: Vec<&str> = mine["facilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["facility_name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["North"]);
    assert!((f(&mine["overall"]["realized"]) - 75.0).abs() < 1e-6);
    let r = app
        .req_as(&scoped, Method::GET, &format!("{cal}?facility_id={south}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    // Bad input: a 422 naming the parameter.
    let (st, e) = status_json(app.get(&format!("{cal}?facility_id=nope")).await).await;
    assert_eq!(st, 422, "{e}");
    assert!(e["error"].as_str().unwrap().contains("facility_id"), "{e}");

    // The company's ECRI page charts it, with the diagonal; the facility's ECRI page links to it.
    let cookie = app.session_cookie().await;
    let page = app.page_text(&cookie, "/app/analytics/ecri").await;
    assert!(
        page.contains(r#"id="chart-ecri-calibration""#),
        "the calibration chart"
    );
    assert!(page.contains("Diagonal: predicted"));
    assert!(page.contains(r#"id="chart-ecri-calibration-table""#));
    assert!(page.contains("87.5"), "South's realized stay on the page");
    let csv = app
        .page_text(
            &cookie,
            "/app/analytics/ecri?csv=chart-ecri-calibration-table",
        )
        .await;
    assert_eq!(csv.lines().count(), 11, "{csv}");
    app.ecri_now(&north).await;
    let fpage = app
        .page_text(&cookie, &format!("/app/facilities/{north}/ecri"))
        .await;
    assert!(fpage.contains(r#"id="ecri-calibration-link" href="/app/analytics/ecri#calibration""#));
    app.run_jobs().await;
}
