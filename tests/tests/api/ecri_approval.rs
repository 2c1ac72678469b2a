//! Approval as a fresh decision, through the API: a batch's lines are checked again against the
//! roll, flags, settings and other batches of the moment it is approved (and when a line is
//! edited, and when its letters are made), serialized per facility so two approvals of one
//! tenant cannot both pass; the holdout is drawn at approval and its controls are kept out of
//! every later batch until their window ends.

use super::ecri_batches::{backdate, sync};
use chrono::{Duration, Utc};
use e2e::{get_ok, spawn_app, status_json, TestApp};
use reqwest::Method;
use serde_json::{json, Value};

fn day(back: i64) -> String {
    (Utc::now().date_naive() - Duration::days(back)).to_string()
}

fn tenant(id: &str, rent: f64, flags: &[&str]) -> Value {
    json!({"tenant_id": id, "size": "10x10", "rent": rent, "move_in_date": "2024-03-01",
           "flags": flags})
}

fn roll(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| tenant(&format!("A-{i:02}"), 100.0 + i as f64, &[]))
        .collect()
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

async fn draft(app: &TestApp, fid: &str) -> Value {
    app.ecri_now(fid).await;
    let (s, b) = status_json(
        app.post(
            &format!("/api/v1/facilities/{fid}/ecri-batches"),
            &json!({}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{b}");
    b
}

async fn approve(app: &TestApp, fid: &str, id: &str, body: &Value) -> (u16, Value) {
    status_json(
        app.post(
            &format!("/api/v1/facilities/{fid}/ecri-batches/{id}/approve"),
            body,
        )
        .await,
    )
    .await
}

fn line_of<'a>(b: &'a Value, tenant: &str) -> &'a Value {
    b["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["tenant_id"] == tenant)
        .unwrap_or_else(|| panic!("{tenant} in {b}"))
}

fn tenants_of(b: &Value) -> Vec<String> {
    b["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["excluded"] == false)
        .map(|l| l["tenant_id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_flag_added_after_drafting_keeps_the_tenant_out_of_the_approval_and_the_letters() {
    let app = spawn_app().await;
    let fid = sync(&app, &snapshot("Flag Lane", &day(3), &roll(10))).await;
    let b = draft(&app, &fid).await;
    let id = b["id"].as_str().unwrap().to_owned();
    assert!(tenants_of(&b).contains(&"A-03".to_owned()), "{b}");
    assert!(tenants_of(&b).contains(&"A-04".to_owned()), "{b}");
    // After the draft, the PMS flags A-03 `delinquent` (excluded by default) and A-04
    // `do_not_increase`.
    let mut later = roll(10);
    later[3]["flags"] = json!(["delinquent"]);
    later[4]["flags"] = json!(["do_not_increase"]);
    sync(&app, &snapshot("Flag Lane", &day(2), &later)).await;

    let decided_before = get_ok(&app, &format!("/api/v1/facilities/{fid}/history"))
        .await
        .to_string();
    let (s, e) = approve(&app, &fid, &id, &json!({})).await;
    assert_eq!(s, 409, "{e}");
    let msg = e["error"].as_str().unwrap();
    assert!(
        msg.contains("2 of the batch's lines no longer pass"),
        "{msg}"
    );
    assert!(msg.contains("(A-03): excluded_flag"), "{msg}");
    assert!(msg.contains("(A-04): excluded_flag"), "{msg}");
    // Refused: still a draft, nothing written.
    let still = get_ok(&app, &format!("/api/v1/facilities/{fid}/ecri-batches/{id}")).await;
    assert_eq!(still["status"], "draft");
    assert!(still["lines"]
        .as_array()
        .unwrap()
        .iter()
        .all(|l| l["dropped"].is_null()));
    let decided_after = get_ok(&app, &format!("/api/v1/facilities/{fid}/history"))
        .await
        .to_string();
    assert_eq!(decided_before, decided_after);

    let (s, ok) = approve(&app, &fid, &id, &json!({"drop_failing": true})).await;
    assert_eq!(s, 200, "{ok}");
    assert_eq!(ok["status"], "approved");
    for t in ["A-03", "A-04"] {
        let l = line_of(&ok, t);
        assert_eq!(l["excluded"], true, "{l}");
        assert_eq!(l["dropped"]["guardrail"], "excluded_flag", "{l}");
        assert!(l["dropped"]["reason"]
            .as_str()
            .unwrap()
            .contains("never increased"));
    }
    let kept = tenants_of(&ok);
    assert!(!kept.contains(&"A-03".to_owned()) && !kept.contains(&"A-04".to_owned()));
    assert_eq!(ok["totals"]["lines"], kept.len());

    // The letters: one per kept line, none for the flagged.
    let letters = app
        .req(
            Method::GET,
            &format!("/api/v1/facilities/{fid}/ecri-batches/{id}/letters.csv"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(letters.status(), 200);
    assert_eq!(letters.headers()["x-letters-withheld"], "0");
    let csv = letters.text().await.unwrap();
    assert_eq!(csv.lines().count(), kept.len() + 1, "{csv}");
    assert!(!csv.contains("A-03,") && !csv.contains("A-04,"), "{csv}");

    // A flag added after the approval withholds that tenant's letter.
    let flagged_late = kept[0].clone();
    let mut after = later.clone();
    for t in after.iter_mut() {
        if t["tenant_id"] == flagged_late.as_str() {
            t["flags"] = json!(["do_not_increase"]);
        }
    }
    sync(&app, &snapshot("Flag Lane", &day(1), &after)).await;
    let letters = app
        .req(
            Method::GET,
            &format!("/api/v1/facilities/{fid}/ecri-batches/{id}/letters.csv"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(letters.headers()["x-letters-withheld"], "1");
    let csv = letters.text().await.unwrap();
    assert_eq!(csv.lines().count(), kept.len(), "{csv}");
    assert!(!csv.contains(&format!("{flagged_late},")), "{csv}");
    app.run_jobs().await;
}

#[tokio::test]
async fn two_drafts_of_one_tenant_cannot_both_raise_it_one_after_the_other() {
    let app = spawn_app().await;
    let fid = sync(&app, &snapshot("Twice Road", &day(2), &roll(8))).await;
    let first = draft(&app, &fid).await;
    let second = draft(&app, &fid).await;
    let (one, two) = (
        first["id"].as_str().unwrap().to_owned(),
        second["id"].as_str().unwrap().to_owned(),
    );
    let (s, a) = approve(&app, &fid, &one, &json!({})).await;
    assert_eq!(s, 200, "{a}");
    // The second, sent 60 days later, would take effect 60 days after the first: inside the
    // 6 months required between increases.
    let later = (Utc::now().date_naive() + Duration::days(60)).to_string();
    let (s, e) = approve(&app, &fid, &two, &json!({"notice_date": later})).await;
    assert_eq!(s, 409, "{e}");
    let msg = e["error"].as_str().unwrap();
    assert!(msg.contains("months_since_increase"), "{msg}");
    assert!(msg.contains(&one), "names the other batch: {msg}");
    // Leaving out what fails leaves nothing: still refused, still a draft.
    let (s, e) = approve(
        &app,
        &fid,
        &two,
        &json!({"notice_date": later, "drop_failing": true}),
    )
    .await;
    assert_eq!(s, 409, "{e}");
    assert!(e["error"]
        .as_str()
        .unwrap()
        .contains("no line of the batch passes now"));
    let b = get_ok(
        &app,
        &format!("/api/v1/facilities/{fid}/ecri-batches/{two}"),
    )
    .await;
    assert_eq!(b["status"], "draft");
    app.run_jobs().await;
}

#[tokio::test]
async fn two_drafts_of_one_tenant_approved_at_the_same_moment_raise_it_once() {
    let app = spawn_app().await;
    for round in 0..5 {
        let name = format!("Race Row {round}");
        let fid = sync(&app, &snapshot(&name, &day(2), &roll(6))).await;
        let first = draft(&app, &fid).await;
        let second = draft(&app, &fid).await;
        let empty = json!({});
        let (a, b) = tokio::join!(
            approve(&app, &fid, first["id"].as_str().unwrap(), &empty),
            approve(&app, &fid, second["id"].as_str().unwrap(), &empty),
        );
        let mut codes = [a.0, b.0];
        codes.sort_unstable();
        assert_eq!(codes, [200, 409], "round {round}: {} / {}", a.1, b.1);
        let loser = if a.0 == 409 { &a.1 } else { &b.1 };
        assert!(
            loser["error"]
                .as_str()
                .unwrap()
                .contains("months_since_increase"),
            "{loser}"
        );
        let approved: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM ecri_batches WHERE facility_id = $1::uuid AND status = 'approved'",
        )
        .bind(&fid)
        .fetch_one(app.db())
        .await
        .unwrap();
        assert_eq!(approved, 1, "round {round}");
    }
    app.run_jobs().await;
}

#[tokio::test]
async fn an_edit_cannot_take_back_a_line_that_would_now_fail() {
    let app = spawn_app().await;
    let fid = sync(&app, &snapshot("Edit Close", &day(3), &roll(6))).await;
    let b = draft(&app, &fid).await;
    let id = b["id"].as_str().unwrap().to_owned();
    let no = line_of(&b, "A-02")["line"].clone();
    let path = format!("/api/v1/facilities/{fid}/ecri-batches/{id}");
    let (s, r) = status_json(
        app.req(Method::PATCH, &path)
            .json(&json!({"lines": [{"line": no, "excluded": true}]}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 200, "{r}");
    let mut later = roll(6);
    later[2]["flags"] = json!(["do_not_increase"]);
    sync(&app, &snapshot("Edit Close", &day(2), &later)).await;
    let (s, e) = status_json(
        app.req(Method::PATCH, &path)
            .json(&json!({"lines": [{"line": no, "excluded": false}]}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 422, "{e}");
    let msg = e["error"].as_str().unwrap();
    assert!(
        msg.contains("lines[0]") && msg.contains("excluded_flag"),
        "{msg}"
    );
    let after = get_ok(&app, &path).await;
    assert_eq!(line_of(&after, "A-02")["excluded"], true, "nothing written");
    app.run_jobs().await;
}

#[tokio::test]
async fn a_control_is_never_in_a_later_batch_during_its_window() {
    let app = spawn_app().await;
    let fid = sync(&app, &snapshot("Control Court", &day(3), &roll(20))).await;
    let (s, _) = status_json(
        app.put(
            &format!("/api/v1/facilities/{fid}/ecri-settings"),
            &json!({"holdout_pct": 50, "min_months_since_increase": 0, "uncertainty_pct": 0}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 200);
    let first = draft(&app, &fid).await;
    // A second draft of the same tenants, made before the first is approved.
    let early = draft(&app, &fid).await;
    let id = first["id"].as_str().unwrap().to_owned();
    let (s, a) = approve(&app, &fid, &id, &json!({})).await;
    assert_eq!(s, 200, "{a}");
    let controls: Vec<String> = a["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["dropped"]["guardrail"] == "holdout")
        .map(|l| l["tenant_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(controls.len(), 10, "{a}");
    // Approving the early draft would raise the controls: refused, naming them.
    let (s, e) = approve(&app, &fid, early["id"].as_str().unwrap(), &json!({})).await;
    assert_eq!(s, 409, "{e}");
    let msg = e["error"].as_str().unwrap();
    assert!(
        msg.contains(&format!("({}): holdout_control", controls[0])),
        "{msg}"
    );
    // In force 60 days ago: the controls' window runs 30 days more. The tenants raised then may
    // go up again (no cooldown here); the controls may not.
    backdate(&app, &id, 90).await;
    let second = draft(&app, &fid).await;
    let again = tenants_of(&second);
    assert!(!again.is_empty(), "{second}");
    assert!(
        again.iter().all(|t| !controls.contains(t)),
        "a control in a later batch: {again:?} / {controls:?}"
    );
    let (s, e) = approve(&app, &fid, second["id"].as_str().unwrap(), &json!({})).await;
    assert_eq!(s, 200, "{e}");
    // Once the window has ended, the controls can be raised again.
    backdate(&app, &id, 150).await;
    let third = draft(&app, &fid).await;
    let freed = tenants_of(&third);
    assert!(
        controls.iter().any(|c| freed.contains(c)),
        "{freed:?} / {controls:?}"
    );
    app.run_jobs().await;
}

#[tokio::test]
async fn a_cohort_with_a_flagged_tenant_is_never_raised() {
    let app = spawn_app().await;
    let body = |flagged: u32| {
        json!({
            "facility": {"name": "Cohort Flags"},
            "date": day(3),
            "unit_types": [
                {"size": "10x10", "tier": "standard", "street_rate": 140, "total_units": 60, "occupied_units": 57}
            ],
            "tenant_rents": [
                {"size": "10x10", "tenant_count": 12, "avg_rent": 100, "months_since_last_increase": 14, "flagged_count": flagged},
                {"size": "10x10", "tenant_count": 9, "avg_rent": 101, "months_since_last_increase": 20}
            ]
        })
    };
    // More flagged tenants than the cohort has: the row is left out, with a warning naming the
    // field (a bad item of a list never fails the whole push).
    let (s, r) = status_json(app.sync(&body(13)).await).await;
    assert_eq!(s, 200, "{r}");
    assert!(
        r["warnings"][0]
            .as_str()
            .unwrap()
            .contains("tenant_rents[0].flagged_count: 13 flagged tenants in a cohort of 12"),
        "{r}"
    );
    let fid = sync(&app, &body(2)).await;
    app.ecri_now(&fid).await;
    let ecri = get_ok(&app, &format!("/api/v1/facilities/{fid}/ecri")).await;
    let lines = ecri["tenants"].as_array().unwrap();
    let flagged = lines.iter().find(|l| l["tenant_count"] == 12).unwrap();
    let clear = lines.iter().find(|l| l["tenant_count"] == 9).unwrap();
    assert_eq!(flagged["increase"], 0.0, "{flagged}");
    assert_eq!(flagged["guardrails"], json!(["excluded_flag"]), "{flagged}");
    assert!(clear["increase"].as_f64().unwrap() > 0.0, "{clear}");
    let b = draft(&app, &fid).await;
    let batched: Vec<&Value> = b["lines"].as_array().unwrap().iter().collect();
    assert_eq!(batched.len(), 1, "{b}");
    assert_eq!(batched[0]["tenant_count"], 9);
    app.run_jobs().await;
}
