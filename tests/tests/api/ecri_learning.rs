//! How the ECRI stay model learns, through `GET /api/v1/facilities/:id/ecri`: from the notices
//! of approved batches (a tenant who leaves during its notice reacted to the increase), without
//! the rows that cannot be a reaction (counted), with its tenure and past-increase effects, and
//! from windows not yet over, for what has been seen of them, and from the increases the CRM
//! dated before the first roll.

use chrono::{Duration, NaiveDate, Utc};
use e2e::{spawn_app, Tenant, TestApp};
use reqwest::Method;
use serde_json::{json, Value};
use uuid::Uuid;

fn day(back: i64) -> NaiveDate {
    Utc::now().date_naive() - Duration::days(back)
}

/// 40 tenants of 10x10 in place since 2020 at $100; `raised` of them (ids) at $110 since
/// `raised_on`, T39 at $1000 since then too when `with_outlier`; `gone` not in the roll.
fn roll(date: NaiveDate, raised: &[usize], gone: &[usize], with_outlier: bool) -> Value {
    roll_raised_on(date, raised, gone, with_outlier, day(70))
}

/// [`roll`] with the raised tenants' new rent in force since `raised_on`.
fn roll_raised_on(
    date: NaiveDate,
    raised: &[usize],
    gone: &[usize],
    with_outlier: bool,
    raised_on: NaiveDate,
) -> Value {
    let raised_on = raised_on.to_string();
    let tenants: Vec<Value> = (0..40)
        .filter(|i| !gone.contains(i))
        .map(|i| {
            let (rent, last) = if raised.contains(&i) {
                (110.0, Some(raised_on.clone()))
            } else if i == 39 && with_outlier {
                (1000.0, Some(raised_on.clone()))
            } else {
                (100.0, None)
            };
            json!({"tenant_id": format!("T{i}"), "size": "10x10", "rent": rent,
                   "move_in_date": "2020-01-01", "last_increase_date": last})
        })
        .collect();
    json!({
        "facility": {"name": "Learner"},
        "date": date.to_string(),
        "unit_types": [
            {"size": "10x10", "tier": "standard", "street_rate": 130, "total_units": 50,
             "occupied_units": 40}
        ],
        "tenants": tenants
    })
}

async fn sync_as(app: &TestApp, who: &Tenant, body: &Value) -> String {
    let r = app
        .req_as(who, Method::POST, "/api/v1/sync")
        .json(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    v["facility"]["id"].as_str().unwrap().to_owned()
}

/// An approved batch of T0..T19 (100 -> 110), told on `notice`, effective 30 days later: as
/// the batch routes leave it, written directly because a notice cannot be backdated.
async fn approved_batch(app: &TestApp, facility: &str, notice: NaiveDate) {
    let facility: Uuid = facility.parse().unwrap();
    let batch = Uuid::new_v4();
    sqlx::query(
        "INSERT INTO ecri_batches (id, company_id, facility_id, status, basis, as_of, notice_days,
                                   horizon_months, created_by, approved_by, approved_at,
                                   notice_date, effective_date)
         SELECT $1, company_id, id, 'approved', 'rent_roll', $3, 30, 12,
                '{\"type\": \"system\"}'::jsonb, '{\"type\": \"system\"}'::jsonb, now(), $3, $4
         FROM facilities WHERE id = $2",
    )
    .bind(batch)
    .bind(facility)
    .bind(notice)
    .bind(notice + Duration::days(30))
    .execute(app.db())
    .await
    .unwrap();
    for i in 0..20 {
        sqlx::query(
            "INSERT INTO ecri_batch_lines (batch_id, line_no, tenant_id, size, tenant_count,
                                           current_rent, suggested_rent, new_rent,
                                           stay_probability, expected_gain)
             VALUES ($1, $2, $3, '10x10', 1, 100, 110, 110, 0.8, 50)",
        )
        .bind(batch)
        .bind(i + 1)
        .bind(format!("T{i}"))
        .execute(app.db())
        .await
        .unwrap();
    }
}

/// The facility's stay model, learned now.
async fn learned_model(app: &TestApp, who: &Tenant, id: &str) -> Value {
    app.ecri_as(who, id).await["model"].clone()
}

/// A company with one facility: notices to T0..T19 100 days ago (effective 70 days ago); the
/// tenants `leavers` moved out 90 days ago, during the notice, the other notified ones show
/// the new rent from 70 days ago; T39's rent went to $1000 then (a promotion ending). Its
/// learned model.
async fn facility(app: &TestApp, name: &str, leavers: &[usize]) -> Value {
    let who = app.create_tenant(name).await;
    let raised: Vec<usize> = (0..20).filter(|i| !leavers.contains(i)).collect();
    let id = sync_as(app, &who, &roll(day(300), &[], &[], false)).await;
    approved_batch(app, &id, day(100)).await;
    sync_as(app, &who, &roll(day(90), &[], leavers, false)).await;
    sync_as(app, &who, &roll(day(60), &raised, leavers, true)).await;
    sync_as(app, &who, &roll(day(5), &raised, leavers, true)).await;
    learned_model(app, &who, &id).await
}

#[tokio::test]
async fn tenants_who_leave_during_their_notice_teach_a_higher_ecri_sensitivity() {
    let app = spawn_app().await;
    let leavers: Vec<usize> = (0..8).collect();
    let left = facility(&app, "Leavers Storage", &leavers).await;
    let stayed = facility(&app, "Stayers Storage", &[]).await;
    eprintln!("left during the notice: {left}\nstayed: {stayed}");
    for m in [&left, &stayed] {
        // The 20 notified tenants are the increased outcomes, all judged from their notice.
        assert_eq!(m["increased_tenants"], 20, "{m}");
        assert_eq!(m["from_notices"], 20, "{m}");
        // Not increased: T20..T39, in place 90 days ago; the notified ones (those who left
        // among them) are not; T39 counts for the third of the window before its rent
        // changed (watched until then, as a tenant given a notice in the window is).
        assert_eq!(m["baseline_tenants"], 20, "{m}");
        // The +900 % change is left out and counted.
        assert_eq!(m["left_out"]["too_large"], 1, "{m}");
        assert_eq!(m["left_out"]["implausible"], 1, "{m}");
        assert_eq!(m["left_out"]["incomplete"], 0, "{m}");
        // Tenure: the 20 not increased, all in since 2020; no tenant raised before.
        assert_eq!(m["tenure"]["tenants"], 20, "{m}");
        assert!(
            m["tenure"]["reference_months"].as_f64().unwrap() > 48.0,
            "{m}"
        );
        assert_eq!(m["raised_before"]["tenants"], 0, "{m}");
        assert_eq!(m["raised_before"]["sensitivity"], 1.0, "{m}");
        // Twenty increases all at +10 % cannot place the step elsewhere: the prior's figures.
        assert_eq!(m["step"]["pct"], 10.0, "{m}");
        assert_eq!(m["step"]["amount"], 10.0, "{m}");
        assert_eq!(m["step"]["learned"], false, "{m}");
        assert_eq!(m["step"]["support"], 0.0, "{m}");
    }
    let s = |m: &Value| m["increase_sensitivity"].as_f64().unwrap();
    assert!(
        s(&left) > s(&stayed),
        "left during the notice {} against stayed {}",
        s(&left),
        s(&stayed)
    );
    // 8 of 20 (40 %) leaving on +10 % is far above the prior's 3.8 % extra; none is below it.
    assert!(s(&left) > 1.0 && s(&stayed) < 1.0, "{left} {stayed}");
    // Counting the leavers as tenants not increased (as when only effective dates were read)
    // would have raised the baseline: here it stays at the prior's pull with no one leaving.
    assert!(
        left["baseline_move_out_pct"].as_f64().unwrap()
            <= stayed["baseline_move_out_pct"].as_f64().unwrap() + 1e-9,
        "{left} {stayed}"
    );
    app.run_jobs().await;
}

/// A company with one facility: notices to T0..T19 40 days ago (effective 10 days ago); the
/// tenants `leavers` gone by the roll of 30 days ago, during the notice, the other notified ones
/// showing the new rent in the roll of 5 days ago. Its learned model, 35 days into the windows.
async fn open_facility(app: &TestApp, name: &str, leavers: &[usize]) -> Value {
    let who = app.create_tenant(name).await;
    let raised: Vec<usize> = (0..20).filter(|i| !leavers.contains(i)).collect();
    let id = sync_as(
        app,
        &who,
        &roll_raised_on(day(300), &[], &[], false, day(10)),
    )
    .await;
    approved_batch(app, &id, day(40)).await;
    sync_as(
        app,
        &who,
        &roll_raised_on(day(30), &[], leavers, false, day(10)),
    )
    .await;
    sync_as(
        app,
        &who,
        &roll_raised_on(day(5), &raised, leavers, false, day(10)),
    )
    .await;
    learned_model(app, &who, &id).await
}

#[tokio::test]
async fn notices_teach_the_stay_model_before_their_90_days_are_over() {
    let app = spawn_app().await;
    let leavers: Vec<usize> = (0..8).collect();
    let left = open_facility(&app, "Early Leavers Storage", &leavers).await;
    let stayed = open_facility(&app, "Early Stayers Storage", &[]).await;
    eprintln!("left during the notice: {left}\nstayed: {stayed}");
    for m in [&left, &stayed] {
        // 35 days into their windows: every notified tenant is learned from, for the 27 days
        // (3 steps of 9) seen, none waits as incomplete.
        assert_eq!(m["increased_tenants"], 20, "{m}");
        assert_eq!(m["open_windows"], 20, "{m}");
        assert_eq!(m["from_notices"], 20, "{m}");
        assert_eq!(m["left_out"]["incomplete"], 0, "{m}");
    }
    let s = |m: &Value| m["increase_sensitivity"].as_f64().unwrap();
    // 8 of 20 gone 10 days after a +10 % notice is far above what the prior expects of a third
    // of a window; nobody gone is below it.
    assert!(s(&left) > 1.0 && s(&stayed) < 1.0, "{left} {stayed}");
    app.run_jobs().await;
}

/// A company with one facility whose first roll (300 days ago) says T0..T19 were last raised
/// 400 days ago, before the service knew them; then as [`facility`] with nobody leaving.
async fn raised_before_first_roll(app: &TestApp, name: &str) -> Value {
    let who = app.create_tenant(name).await;
    let mut first = roll(day(300), &[], &[], false);
    for t in first["tenants"].as_array_mut().unwrap().iter_mut().take(20) {
        t["last_increase_date"] = json!(day(400).to_string());
    }
    let id = sync_as(app, &who, &first).await;
    approved_batch(app, &id, day(100)).await;
    let raised: Vec<usize> = (0..20).collect();
    sync_as(app, &who, &roll(day(90), &[], &[], false)).await;
    sync_as(app, &who, &roll(day(60), &raised, &[], false)).await;
    sync_as(app, &who, &roll(day(5), &raised, &[], false)).await;
    learned_model(app, &who, &id).await
}

#[tokio::test]
async fn an_increase_the_crm_dated_before_the_first_roll_makes_a_tenant_raised_before() {
    let app = spawn_app().await;
    let m = raised_before_first_roll(&app, "Known Before Storage").await;
    eprintln!("{m}");
    // The 20 notified tenants were raised 300 days before their notice by the CRM's date in
    // the first roll; later rolls moved that date to the service's own increase (70 days ago)
    // and then omitted it for no one: what the first roll said is still known.
    assert_eq!(m["increased_tenants"], 20, "{m}");
    assert_eq!(m["from_notices"], 20, "{m}");
    assert_eq!(m["raised_before"]["tenants"], 20, "{m}");
    // Without the CRM's date (the same flow, `facility` above) none is raised before.
    let plain = facility(&app, "Unknown Before Storage", &[]).await;
    assert_eq!(plain["raised_before"]["tenants"], 0, "{plain}");
    assert_eq!(plain["increased_tenants"], 20, "{plain}");
    // Stored as the first roll said, for T0..T19 of the first company only.
    let stored: Vec<(String, Option<NaiveDate>)> = sqlx::query_as(
        "SELECT tenant_id, prior_increase_date FROM rent_roll_tenants
         WHERE tenant_id IN ('T0', 'T25') AND prior_increase_date IS NOT NULL",
    )
    .fetch_all(app.db())
    .await
    .unwrap();
    assert_eq!(stored, vec![("T0".to_owned(), Some(day(400)))]);
    app.run_jobs().await;
}

/// T36 raised to $110 on `day(120)`, in `r` (a roll of `roll`).
fn with_t36_raised(mut r: Value) -> Value {
    for t in r["tenants"].as_array_mut().unwrap() {
        if t["tenant_id"] == "T36" {
            t["rent"] = json!(110.0);
            t["last_increase_date"] = json!(day(120).to_string());
        }
    }
    r
}

/// The baseline watches each tenant in place at the window's start until it moves out, is
/// given a notice or the window ends, and counts it for that part: 40 tenants in place 95
/// days before the roll of 5 days ago; T0..T19 given a notice 60 days ago (watched 35 of the
/// 90 days, carried as 0.4 of a window), T30..T35 gone on the roll of 80 days ago (15 days,
/// 0.2); T36 raised 25 days before the window, whose own 90 days reach into it, not counted;
/// the other 13 the whole window. 6 left over 20 x 0.4 + 6 x 0.2 + 13 = 22.2 windows: a
/// hazard of 6 / 22.2 a window, 1 - e^-0.2703 = 23.68 % in 90 days. Leaving the noticed
/// tenants out would read 6 of 19 (32 %), counting them as whole windows 6 of 39 (15 %).
#[tokio::test]
async fn a_tenant_given_a_notice_within_the_baseline_window_counts_for_the_days_before_it() {
    let app = spawn_app().await;
    let who = app.create_tenant("Watched Storage").await;
    let gone: Vec<usize> = (30..36).collect();
    let noticed: Vec<usize> = (0..20).collect();
    let id = sync_as(&app, &who, &roll(day(300), &[], &[], false)).await;
    // No prior pulling the rate: the facility's own evidence alone.
    let r = app
        .req_as(
            &who,
            Method::PUT,
            &format!("/api/v1/facilities/{id}/ecri-settings"),
        )
        .json(&json!({"stay_prior": {"baseline_strength": 0}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    sync_as(
        &app,
        &who,
        &with_t36_raised(roll(day(110), &[], &[], false)),
    )
    .await;
    approved_batch(&app, &id, day(60)).await;
    sync_as(
        &app,
        &who,
        &with_t36_raised(roll(day(80), &[], &gone, false)),
    )
    .await;
    let last = roll_raised_on(day(5), &noticed, &gone, false, day(30));
    sync_as(&app, &who, &with_t36_raised(last)).await;
    let m = learned_model(&app, &who, &id).await;
    assert_eq!(m["baseline_tenants"], 39, "{m}");
    let want = (1.0 - (-6.0f64 / 22.2).exp()) * 100.0;
    let got = m["baseline_move_out_pct"].as_f64().unwrap();
    assert!((got - want).abs() < 0.006, "{got} against {want:.2}: {m}");
    // The notices are increases of their own, from windows still open, and T36's rise one
    // whose window is over.
    assert_eq!(m["increased_tenants"], 21, "{m}");
}
