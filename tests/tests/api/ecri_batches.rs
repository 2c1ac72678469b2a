//! ECRI batches end to end through the API: a rent roll synced, a draft made from the engine's
//! suggestions, a line edited and one left out, approved, its letters downloaded and checked
//! row by row, the signed `ecri.approved` delivery received, and the outcome counted from
//! later rolls; a holdout's lift; a batch of cohorts; bad input and another company's batches.
//!
//! The service dates notices from today; to see what came 30 to 90 days after a batch, the
//! tests move an approved batch's dates back in the database (the only thing they write
//! there) and then sync the later rolls through the API.

use chrono::{Duration, Utc};
use e2e::receiver::{expected_signature, Receiver, Reply, TestCa};
use e2e::{get_ok, spawn_app, spawn_app_with, status_json, TestApp};
use reqwest::Method;
use serde_json::{json, Value};

fn day(back: i64) -> String {
    (Utc::now().date_naive() - Duration::days(back)).to_string()
}

fn today() -> String {
    day(0)
}

fn tenant(id: &str, size: &str, rent: f64, customer: Option<&str>) -> Value {
    json!({"tenant_id": id, "size": size, "rent": rent, "move_in_date": "2024-03-01",
           "last_increase_date": null, "customer_id": customer})
}

fn snapshot(name: &str, date: &str, tenants: &[Value]) -> Value {
    json!({
        "facility": {"name": name},
        "date": date,
        "unit_types": [
            {"size": "10x10", "tier": "standard", "street_rate": 140, "total_units": 60, "occupied_units": 57},
            {"size": "5x5", "tier": "standard", "street_rate": 60, "total_units": 30, "occupied_units": 28}
        ],
        "tenants": tenants
    })
}

pub(crate) async fn sync(app: &TestApp, body: &Value) -> String {
    let (s, r) = status_json(app.sync(body).await).await;
    assert_eq!(s, 200, "{r}");
    r["facility"]["id"].as_str().unwrap().to_owned()
}

async fn patch(app: &TestApp, path: &str, body: &Value) -> (u16, Value) {
    status_json(
        app.req(Method::PATCH, path)
            .json(body)
            .send()
            .await
            .unwrap(),
    )
    .await
}

async fn count(app: &TestApp, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(app.db()).await.unwrap()
}

/// Moves an approved batch back in time: notice `notice_back` days ago, in force 30 days later.
pub(crate) async fn backdate(app: &TestApp, batch: &str, notice_back: i64) {
    sqlx::query(
        "UPDATE ecri_batches SET notice_date = current_date - $2::int,
                effective_date = current_date - $2::int + 30,
                approved_at = approved_at - make_interval(days => $2::int)
         WHERE id = $1::uuid",
    )
    .bind(batch)
    .bind(i32::try_from(notice_back).unwrap())
    .execute(app.db())
    .await
    .unwrap();
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is a number"))
}

fn roll_a() -> Vec<Value> {
    let mut t = Vec::new();
    for i in 0..8 {
        t.push(tenant(
            &format!("A-{i}"),
            "10x10",
            100.0 + f64::from(i),
            None,
        ));
    }
    for i in 0..4 {
        t.push(tenant(&format!("B-{i}"), "5x5", 42.0 + f64::from(i), None));
    }
    t
}

#[tokio::test]
async fn a_batch_is_drafted_edited_approved_mailed_and_its_outcome_counted() {
    let ca = TestCa::new();
    let env = [
        (
            "WEBHOOK_ALLOW_PRIVATE_TARGETS",
            "127.0.0.0/8,::1".to_owned(),
        ),
        ("WEBHOOK_CA_FILE", ca.pem_path().to_owned()),
        ("WEBHOOK_RETRY_SCHEDULE", "1s,1s,1s,1s".to_owned()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let app = spawn_app_with(&env).await;
    let receiver = Receiver::start(&ca, |_, _| Reply::status(200)).await;
    let (s, sub) = status_json(
        app.post(
            "/api/v1/webhooks",
            &json!({"url": receiver.url("/hooks/ecri"), "events": ["ecri.approved"]}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{sub}");
    let secret = sub["secret"].as_str().unwrap().to_owned();

    let fid = sync(&app, &snapshot("Batch Street", &day(200), &roll_a())).await;
    let (s, _) = status_json(
        app.put(
            &format!("/api/v1/facilities/{fid}"),
            &json!({"name": "Batch Street", "address": "1 Main St, Springfield"}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 200);
    app.ecri_now(&fid).await;
    let ecri = get_ok(&app, &format!("/api/v1/facilities/{fid}/ecri")).await;
    let suggested: Vec<&Value> = ecri["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| f(&t["increase"]) > 0.0)
        .collect();
    assert!(
        suggested.len() >= 6,
        "the engine raises rents 30 % under street: {ecri}"
    );

    // The draft holds every suggestion with an increase, as the engine gave it.
    let base = format!("/api/v1/facilities/{fid}/ecri-batches");
    app.ecri_now(&fid).await;
    let (s, draft) = status_json(app.post(&base, &json!({})).await).await;
    assert_eq!(s, 201, "{draft}");
    assert_eq!(draft["status"], "draft");
    assert_eq!(draft["basis"], "rent_roll");
    assert_eq!(draft["as_of"], day(200));
    assert_eq!(draft["created_by"]["type"], "api_key");
    assert_eq!(draft["created_by"]["name"], "default");
    assert_eq!(draft["outcome"], Value::Null);
    let lines = draft["lines"].as_array().unwrap();
    assert_eq!(lines.len(), suggested.len());
    for (l, t) in lines.iter().zip(&suggested) {
        assert_eq!(l["tenant_id"], t["tenant_id"]);
        assert_eq!(l["current_rent"], t["rent"]);
        assert_eq!(l["new_rent"], t["new_rent"]);
        assert_eq!(l["suggested_rent"], t["new_rent"]);
        assert_eq!(l["stay_probability"], t["stay_probability"]);
        assert_eq!(l["tenant_count"], 1);
    }
    let uplift: f64 = lines.iter().map(|l| f(&l["increase"])).sum();
    assert!((f(&draft["totals"]["monthly_uplift"]) - uplift).abs() < 0.005);
    assert_eq!(draft["totals"]["lines"], lines.len());
    let id = draft["id"].as_str().unwrap().to_owned();
    let one = format!("{base}/{id}");

    // An edit past a guardrail is refused, naming the line and the guardrail; nothing changes.
    let first = &lines[0];
    let rent0 = f(&first["current_rent"]);
    let (s, e) = patch(
        &app,
        &one,
        &json!({"lines": [{"line": 1, "new_rent": rent0 + 6.0}, {"line": 2, "new_rent": rent0 * 2.0}]}),
    )
    .await;
    assert_eq!(s, 422, "{e}");
    let msg = e["error"].as_str().unwrap();
    assert!(msg.starts_with("lines[1].new_rent: line 2:"), "{msg}");
    assert!(
        msg.contains("max_step") || msg.contains("max_premium_over_street"),
        "{msg}"
    );
    assert_eq!(get_ok(&app, &one).await["lines"], draft["lines"]);
    // One line at a rent set by hand, one left out.
    let (s, edited) = patch(
        &app,
        &one,
        &json!({"lines": [{"line": 1, "new_rent": rent0 + 6.0}, {"line": 2, "excluded": true}]}),
    )
    .await;
    assert_eq!(s, 200, "{edited}");
    let l1 = &edited["lines"][0];
    assert_eq!(f(&l1["new_rent"]), rent0 + 6.0);
    assert_eq!(f(&l1["increase"]), 6.0);
    assert_eq!(l1["edited"], true);
    assert_eq!(l1["suggested_rent"], first["new_rent"]);
    // A smaller increase than the engine's: more likely to stay.
    assert!(
        f(&l1["stay_probability"]) >= f(&first["stay_probability"]),
        "{l1}"
    );
    assert_eq!(edited["lines"][1]["excluded"], true);
    assert_eq!(edited["totals"]["lines"], lines.len() - 1);
    assert_eq!(edited["totals"]["excluded_lines"], 1);
    let kept: Vec<&Value> = edited["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["excluded"] == false)
        .collect();
    let uplift: f64 = kept.iter().map(|l| f(&l["increase"])).sum();
    assert!((f(&edited["totals"]["monthly_uplift"]) - uplift).abs() < 0.005);

    // Approval: a notice date in the past is refused; today's gives the effective date.
    let (s, e) = status_json(
        app.post(&format!("{one}/approve"), &json!({"notice_date": day(1)}))
            .await,
    )
    .await;
    assert_eq!(s, 422, "{e}");
    assert!(
        e["error"].as_str().unwrap().starts_with("notice_date:"),
        "{e}"
    );
    let (s, e) = status_json(app.get(&format!("{one}/letters.csv")).await).await;
    assert_eq!(s, 409, "a draft has no letters: {e}");
    let (s, approved) = status_json(app.post(&format!("{one}/approve"), &json!({})).await).await;
    assert_eq!(s, 200, "{approved}");
    assert_eq!(approved["status"], "approved");
    assert_eq!(approved["notice_date"], today());
    assert_eq!(approved["effective_date"], day(-30));
    assert_eq!(approved["approved_by"]["name"], "default");
    assert_eq!(approved["outcome"]["status"], "waiting");
    let (s, again) = status_json(app.post(&format!("{one}/approve"), &json!({})).await).await;
    assert_eq!(s, 409, "{again}");
    let (s, _) = patch(
        &app,
        &one,
        &json!({"lines": [{"line": 1, "excluded": true}]}),
    )
    .await;
    assert_eq!(s, 409);

    // The letters: one row per kept line, as the batch says.
    let r = app.get(&format!("{one}/letters.csv")).await;
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/csv"));
    let text = r.text().await.unwrap();
    let mut csv = csv::Reader::from_reader(text.as_bytes());
    let headers: Vec<String> = csv.headers().unwrap().iter().map(str::to_owned).collect();
    assert_eq!(
        headers,
        [
            "tenant_id",
            "customer_id",
            "tenant_count",
            "facility_name",
            "facility_address",
            "unit_size",
            "currency",
            "current_rent",
            "new_rent",
            "increase",
            "increase_pct",
            "notice_date",
            "effective_date",
            "batch_id",
            "customer_name",
            "address_line1",
            "address_line2",
            "city",
            "region",
            "postal_code",
            "unit_count",
            "units"
        ]
    );
    let rows: Vec<csv::StringRecord> = csv.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), kept.len());
    for (row, l) in rows.iter().zip(&kept) {
        assert_eq!(&row[0], l["tenant_id"].as_str().unwrap());
        assert_eq!(&row[2], "1");
        assert_eq!(&row[3], "Batch Street");
        assert_eq!(&row[4], "1 Main St, Springfield");
        assert_eq!(&row[5], l["size"].as_str().unwrap());
        assert_eq!(&row[6], "USD");
        assert_eq!(row[7], format!("{:.2}", f(&l["current_rent"])));
        assert_eq!(row[8], format!("{:.2}", f(&l["new_rent"])));
        assert_eq!(row[9], format!("{:.2}", f(&l["increase"])));
        assert_eq!(row[10], format!("{:.2}", f(&l["increase_pct"])));
        assert_eq!(&row[11], today().as_str());
        assert_eq!(&row[12], day(-30).as_str());
        assert_eq!(&row[13], id.as_str());
    }

    // The signed event reaches the receiver.
    app.run_jobs().await;
    let hits = receiver.hits();
    assert_eq!(hits.len(), 1);
    let hit = &hits[0];
    assert_eq!(hit.header("x-service-event"), Some("ecri.approved"));
    assert_eq!(
        hit.header("x-service-signature").unwrap(),
        expected_signature(&secret, &hit.body)
    );
    let event: Value = serde_json::from_slice(&hit.body).unwrap();
    assert_eq!(event["event"], "ecri.approved");
    assert_eq!(event["company_id"], app.tenant.company_id.to_string());
    assert_eq!(event["batch_id"], id.as_str());
    assert_eq!(event["facility_id"], fid.as_str());
    assert_eq!(event["facility_name"], "Batch Street");
    assert_eq!(event["notice_date"], today());
    assert_eq!(event["effective_date"], day(-30));
    assert_eq!(event["line_count"], kept.len());
    assert_eq!(event["tenant_count"], kept.len());
    assert_eq!(event["monthly_uplift"], edited["totals"]["monthly_uplift"]);
    assert_eq!(event["approved_by"]["name"], "default");

    // Tenants with an approved increase not yet in force are not suggested again: a new batch
    // holds only the line left out.
    app.ecri_now(&fid).await;
    let (s, second) = status_json(app.post(&base, &json!({})).await).await;
    assert_eq!(s, 201, "{second}");
    let second_lines = second["lines"].as_array().unwrap();
    assert_eq!(second_lines.len(), 1, "{second}");
    assert_eq!(second_lines[0]["tenant_id"], lines[1]["tenant_id"]);
    let second_id = second["id"].as_str().unwrap();
    let (s, cancelled) = status_json(
        app.post(&format!("{base}/{second_id}/cancel"), &json!({}))
            .await,
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(cancelled["status"], "cancelled");
    let list = get_ok(&app, &base).await;
    let statuses: Vec<&str> = list["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["cancelled", "approved"]);
    let only = get_ok(&app, &format!("{base}?status=approved")).await;
    assert_eq!(only["batches"].as_array().unwrap().len(), 1);

    // Later rolls: notice 190 days ago, in force 160 days ago. The increases appear in the
    // roll; of the increased tenants, one leaves 150 days ago and one 95 days ago; of the
    // tenants not increased (the one left out and those without a suggestion), one leaves 95
    // days ago.
    backdate(&app, &id, 190).await;
    let increased: Vec<String> = kept
        .iter()
        .map(|l| l["tenant_id"].as_str().unwrap().to_owned())
        .collect();
    let new_rent = |t: &str| {
        kept.iter()
            .find(|l| l["tenant_id"] == t)
            .map(|l| f(&l["new_rent"]))
    };
    let roll_at = |gone: &[&str]| -> Vec<Value> {
        roll_a()
            .into_iter()
            .filter(|t| !gone.contains(&t["tenant_id"].as_str().unwrap()))
            .map(|mut t| {
                if let Some(r) = new_rent(t["tenant_id"].as_str().unwrap()) {
                    t["rent"] = json!(r);
                    t["last_increase_date"] = json!(day(160));
                }
                t
            })
            .collect()
    };
    let (gone1, gone2) = (increased[0].as_str(), increased[1].as_str());
    let not_increased: Vec<String> = roll_a()
        .iter()
        .map(|t| t["tenant_id"].as_str().unwrap().to_owned())
        .filter(|t| !increased.contains(t))
        .collect();
    let gone3 = not_increased[0].as_str();
    sync(
        &app,
        &snapshot("Batch Street", &day(150), &roll_at(&[gone1])),
    )
    .await;
    sync(
        &app,
        &snapshot("Batch Street", &day(95), &roll_at(&[gone1, gone2, gone3])),
    )
    .await;
    sync(
        &app,
        &snapshot("Batch Street", &day(65), &roll_at(&[gone1, gone2, gone3])),
    )
    .await;
    let done = get_ok(&app, &one).await;
    let o = &done["outcome"];
    assert_eq!(o["status"], "complete", "{o}");
    assert_eq!(o["as_of"], day(65));
    let n = increased.len() as i64;
    let m = not_increased.len() as i64;
    // Checkpoints at 160, 130, 100 and 70 days ago.
    let expect = [
        (day(160), n, m),
        (day(130), n - 1, m),
        (day(100), n - 1, m),
        (day(70), n - 2, m - 1),
    ];
    for (c, (date, inc, base)) in o["checkpoints"].as_array().unwrap().iter().zip(expect) {
        assert_eq!(c["date"], date.as_str());
        assert_eq!(c["known"], true);
        assert_eq!(c["increased"]["tenants"], n);
        assert_eq!(c["increased"]["in_place"], inc, "{c}");
        assert_eq!(c["not_increased"]["tenants"], m);
        assert_eq!(c["not_increased"]["in_place"], base, "{c}");
    }
    // The stay the engine predicts is for 90 days after the notice: 100 days ago.
    assert_eq!(o["stay_date"], day(100));
    let realized = ((n - 1) as f64 / n as f64 * 10_000.0).round() / 100.0;
    assert_eq!(f(&o["realized_stay_pct"]), realized);
    let predicted: f64 = kept
        .iter()
        .map(|l| f(&l["stay_probability"]) * 100.0)
        .sum::<f64>()
        / n as f64;
    assert!(
        (f(&o["predicted_stay_pct"]) - predicted).abs() < 0.01,
        "{o}"
    );
    // Realized uplift: the increases of the tenants still in place.
    let in_place_uplift: f64 = kept[2..].iter().map(|l| f(&l["increase"])).sum();
    assert!(
        (f(&o["realized_monthly_uplift"]) - in_place_uplift).abs() < 0.005,
        "{o}"
    );
    assert_eq!(o["applied_tenants"], n - 2);
    assert_eq!(o["lift"], Value::Null);

    // Every decision is in the facility's history with its actor.
    let history = get_ok(&app, &format!("/api/v1/facilities/{fid}/history?days=365")).await;
    let actions: Vec<&str> = history["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["action"].as_str().unwrap())
        .collect();
    for a in [
        "ecri_batch.created",
        "ecri_batch.edited",
        "ecri_batch.approved",
        "ecri_batch.cancelled",
    ] {
        assert!(actions.contains(&a), "{a} in {actions:?}");
    }
    assert!(history["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|d| d["actor"]["type"] == "api_key" && d["actor"]["name"] == "default"));

    // Another company sees none of it.
    let other = app.create_tenant("Other Storage").await;
    for (method, path) in [
        (Method::GET, one.clone()),
        (Method::GET, base.clone()),
        (Method::GET, format!("{one}/letters.csv")),
        (Method::POST, format!("{one}/cancel")),
        (Method::POST, base.clone()),
    ] {
        let r = app
            .req_as(&other, method.clone(), &path)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404, "{method} {path}");
    }
    let r = app
        .req_as(&other, Method::PATCH, &one)
        .json(&json!({"lines": [{"line": 1, "excluded": true}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    app.run_jobs().await;
}

#[tokio::test]
async fn a_holdout_is_drawn_at_random_and_the_lift_is_measured_against_it() {
    let app = spawn_app().await;
    // 40 tenants rents well under street; two share a customer.
    let mut roll: Vec<Value> = (0..40)
        .map(|i| tenant(&format!("T-{i:02}"), "10x10", 100.0, None))
        .collect();
    roll[0]["customer_id"] = json!("C-1");
    roll[1]["customer_id"] = json!("C-1");
    let fid = sync(&app, &snapshot("Holdout Row", &day(200), &roll)).await;
    let (s, set) = status_json(
        app.put(
            &format!("/api/v1/facilities/{fid}/ecri-settings"),
            &json!({"holdout_pct": 50}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 200, "{set}");
    let base = format!("/api/v1/facilities/{fid}/ecri-batches");
    app.ecri_now(&fid).await;
    let (s, draft) = status_json(app.post(&base, &json!({})).await).await;
    assert_eq!(s, 201, "{draft}");
    // The control group is drawn at approval, after the edits: none in the draft.
    assert_eq!(draft["held_out_tenants"], 0);
    assert_eq!(draft["lines"].as_array().unwrap().len(), 40);
    let id = draft["id"].as_str().unwrap().to_owned();
    let (s, b) = status_json(app.post(&format!("{base}/{id}/approve"), &json!({})).await).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["held_out_tenants"], 20);
    assert_eq!(b["holdout_pct"], 50.0);
    // The draw is recorded: its seed and its strata (one size, one rent-to-street band).
    assert!(b["holdout_seed"].as_i64().is_some(), "{b}");
    let strata = b["holdout_strata"].as_array().unwrap();
    assert_eq!(strata.len(), 1, "{b}");
    assert_eq!(strata[0]["eligible"], 40);
    assert_eq!(strata[0]["held_out"], 20);
    let all = b["lines"].as_array().unwrap();
    let held: Vec<&Value> = all
        .iter()
        .filter(|l| l["dropped"]["guardrail"] == "holdout")
        .collect();
    assert_eq!(held.len(), 20);
    assert!(held.iter().all(|l| l["excluded"] == true));
    let lines: Vec<Value> = all
        .iter()
        .filter(|l| l["excluded"] == false)
        .cloned()
        .collect();
    assert_eq!(lines.len(), 20);
    assert_eq!(b["totals"]["lines"], 20);
    let increased: Vec<String> = lines
        .iter()
        .map(|l| l["tenant_id"].as_str().unwrap().to_owned())
        .collect();
    // A customer's units are in the same group.
    assert_eq!(
        increased.contains(&"T-00".to_owned()),
        increased.contains(&"T-01".to_owned())
    );
    backdate(&app, &id, 190).await;
    // In force 160 days ago: the increased pay their new rents; two of them leave 130 days
    // ago, one held-out tenant too.
    let controls: Vec<String> = (0..40)
        .map(|i| format!("T-{i:02}"))
        .filter(|t| !increased.contains(t))
        .collect();
    let gone = [
        increased[0].clone(),
        increased[1].clone(),
        controls[0].clone(),
    ];
    let later: Vec<Value> = roll
        .iter()
        .filter(|t| !gone.iter().any(|g| t["tenant_id"] == g.as_str()))
        .map(|t| {
            let mut t = t.clone();
            if let Some(l) = lines.iter().find(|l| l["tenant_id"] == t["tenant_id"]) {
                t["rent"] = l["new_rent"].clone();
                t["last_increase_date"] = json!(day(160));
            }
            t
        })
        .collect();
    sync(&app, &snapshot("Holdout Row", &day(130), &later)).await;
    sync(&app, &snapshot("Holdout Row", &day(60), &later)).await;
    let o = get_ok(&app, &format!("{base}/{id}")).await["outcome"].clone();
    let lift = &o["lift"];
    assert_eq!(lift["increased_tenants"], 20, "{o}");
    assert_eq!(lift["control_tenants"], 20);
    assert_eq!(lift["window_days"], 91);
    // By hand: revenue over the 91 days from the effective date, rent x days paid / 30.4375.
    let month = 365.25 / 12.0;
    let paid = |rent: f64, days: f64| rent * days / month;
    // The leavers paid from 160 to 131 days ago (30 days) at the last rent a roll showed them
    // at: the one before the increase.
    let inc: f64 = lines
        .iter()
        .map(|l| {
            if gone.iter().any(|g| l["tenant_id"] == g.as_str()) {
                paid(100.0, 30.0)
            } else {
                paid(f(&l["new_rent"]), 91.0)
            }
        })
        .sum::<f64>()
        / 20.0;
    let ctl = (paid(100.0, 30.0) + 19.0 * paid(100.0, 91.0)) / 20.0;
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
    assert!(f(&lift["ci_low"]) < f(&lift["lift_per_tenant"]));
    assert!(f(&lift["lift_per_tenant"]) < f(&lift["ci_high"]));
    let verdict = lift["verdict"].as_str().unwrap();
    assert_eq!(
        verdict,
        if f(&lift["ci_low"]) > 0.0 {
            "positive"
        } else if f(&lift["ci_high"]) < 0.0 {
            "negative"
        } else {
            "inconclusive"
        }
    );
    app.run_jobs().await;
}

#[tokio::test]
async fn a_batch_of_cohorts_mails_a_row_per_cohort_and_bad_input_writes_nothing() {
    let app = spawn_app().await;
    let fid = sync(
        &app,
        &json!({
            "facility": {"name": "Cohort Court"},
            "date": day(3),
            "unit_types": [
                {"size": "10x10", "tier": "standard", "street_rate": 140, "total_units": 60, "occupied_units": 57}
            ],
            "tenant_rents": [
                {"size": "10x10", "tenant_count": 12, "avg_rent": 100, "months_since_last_increase": 14},
                {"size": "10x10", "tenant_count": 3, "avg_rent": 139, "months_since_last_increase": 2}
            ]
        }),
    )
    .await;
    let base = format!("/api/v1/facilities/{fid}/ecri-batches");
    app.ecri_now(&fid).await;
    let before = count(&app, "SELECT count(*) FROM ecri_batches").await;
    for (body, status, starts) in [
        (json!({"sizes": ["99x99"]}), 422, "sizes[0]:"),
        (json!({"sizes": []}), 422, "sizes:"),
        (json!({"tenant_ids": ["nobody"]}), 422, "tenant_ids[0]:"),
        (json!({"colour": "red"}), 422, ""),
        (json!([]), 422, ""),
    ] {
        let (s, e) = status_json(app.post(&base, &body).await).await;
        assert_eq!(s, status, "{body}: {e}");
        assert!(e["error"].as_str().unwrap().starts_with(starts), "{e}");
    }
    assert_eq!(
        count(&app, "SELECT count(*) FROM ecri_batches").await,
        before
    );
    let (s, b) = status_json(app.post(&base, &json!({"sizes": ["10 X 10"]})).await).await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(b["basis"], "cohorts");
    let lines = b["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 1, "only the cohort 14 months unchanged: {b}");
    assert_eq!(lines[0]["tenant_id"], Value::Null);
    assert_eq!(lines[0]["tenant_count"], 12);
    assert_eq!(f(&lines[0]["current_rent"]), 100.0);
    let one = format!("{base}/{}", b["id"].as_str().unwrap());
    for (body, starts) in [
        (json!({"lines": []}), "lines:"),
        (
            json!({"lines": [{"line": 9, "excluded": true}]}),
            "lines[0].line:",
        ),
        (json!({"lines": [{"line": 1}]}), "lines[0]:"),
        (
            json!({"lines": [{"line": 1, "new_rent": 99}]}),
            "lines[0].new_rent:",
        ),
        (
            json!({"lines": [{"line": 1, "new_rent": 101}]}),
            "lines[0].new_rent:",
        ),
        (
            json!({"lines": [{"line": 1, "excluded": true}, {"line": 1, "excluded": false}]}),
            "lines[1].line:",
        ),
    ] {
        let (s, e) = patch(&app, &one, &body).await;
        assert_eq!(s, 422, "{body}: {e}");
        assert!(
            e["error"].as_str().unwrap().starts_with(starts),
            "{body}: {e}"
        );
    }
    assert_eq!(get_ok(&app, &one).await["lines"], b["lines"]);
    let (s, e) = status_json(
        app.post(&format!("{one}/approve"), &json!({"notice_date": day(-91)}))
            .await,
    )
    .await;
    assert_eq!(s, 422, "{e}");
    let (s, a) = status_json(
        app.post(&format!("{one}/approve"), &json!({"notice_date": day(-7)}))
            .await,
    )
    .await;
    assert_eq!(s, 200, "{a}");
    assert_eq!(a["effective_date"], day(-37));
    assert_eq!(a["outcome"]["status"], "unavailable");
    let text = app
        .get(&format!("{one}/letters.csv"))
        .await
        .text()
        .await
        .unwrap();
    let rows: Vec<Vec<String>> = csv::Reader::from_reader(text.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][0], "");
    assert_eq!(rows[0][2], "12");
    assert_eq!(rows[0][7], "100.00");
    assert_eq!(rows[0][11], day(-7));
    app.run_jobs().await;
}
