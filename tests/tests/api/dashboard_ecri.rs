//! The ECRI pages of the dashboard in a real browser: a batch drafted from the suggestions, a
//! rent edited and a line left out, approved, and its letters linked; every change checked
//! through the API, with the signed-in user as its actor.

use chrono::{Duration, Utc};
use e2e::browser::Browser;
use e2e::{get_ok, spawn_app, status_json, TestApp};
use serde_json::{json, Value};

const PASSWORD: &str = "correct horse battery";

async fn roll(app: &TestApp) -> String {
    let tenants: Vec<Value> = (0..6)
        .map(|i| {
            json!({"tenant_id": format!("U-{i}"), "size": "10x10", "rent": 100 + i,
                   "move_in_date": "2024-03-01"})
        })
        .collect();
    let date = (Utc::now().date_naive() - Duration::days(2)).to_string();
    let (s, r) = status_json(
        app.sync(&json!({
            "facility": {"name": "Browser Bay"},
            "date": date,
            "unit_types": [{"size": "10x10", "tier": "standard", "street_rate": 140,
                            "total_units": 60, "occupied_units": 57}],
            "tenants": tenants
        }))
        .await,
    )
    .await;
    assert_eq!(s, 200, "{r}");
    r["facility"]["id"].as_str().unwrap().to_owned()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

#[tokio::test]
async fn a_revenue_manager_drafts_edits_and_approves_a_batch_in_the_browser() {
    let app = spawn_app().await;
    let fid = roll(&app).await;
    let b = Browser::start().await;
    b.login(&app.server.base, &app.tenant.email, PASSWORD).await;
    b.wait_path("/app").await;
    app.ecri_now(&fid).await;
    b.goto(&app.url(&format!("/app/facilities/{fid}/ecri")))
        .await;
    b.wait_text("Suggestions now").await;
    b.click("#create-batch").await;
    b.wait_text("The draft batch is made").await;
    let path = b.path().await;
    let bid = path.rsplit('/').next().unwrap().to_owned();
    let api = format!("/api/v1/facilities/{fid}/ecri-batches/{bid}");
    let draft = get_ok(&app, &api).await;
    let lines = draft["lines"].as_array().unwrap().clone();
    assert!(lines.len() >= 2, "{draft}");
    assert_eq!(draft["created_by"]["type"], "user");
    assert_eq!(draft["created_by"]["name"], app.tenant.email.as_str());
    // The page lists every line with its rents.
    let shown = b
        .script("return document.querySelectorAll('#edit-lines-table tbody tr').length")
        .await;
    assert_eq!(shown, json!(lines.len()));

    let rent1 = f(&lines[0]["current_rent"]) + 7.0;
    b.fill("input[name=rent_1]", &format!("{rent1:.2}")).await;
    b.click("input[name=keep_2]").await;
    b.click("#save-lines").await;
    b.wait_text("The batch's lines are saved").await;
    let edited = get_ok(&app, &api).await;
    assert_eq!(f(&edited["lines"][0]["new_rent"]), rent1);
    assert_eq!(edited["lines"][0]["edited"], true);
    assert_eq!(edited["lines"][1]["excluded"], true);
    assert_eq!(edited["totals"]["lines"], lines.len() - 1);

    // A rent past the step is refused on the page, naming the line, and changes nothing.
    b.fill("input[name=rent_3]", "999").await;
    b.click("#save-lines").await;
    b.wait_text("line 3: 999.00 breaks the guardrail").await;
    assert_eq!(get_ok(&app, &api).await["lines"], edited["lines"]);

    b.goto(&app.url(&format!("/app/facilities/{fid}/ecri-batches/{bid}")))
        .await;
    b.click("#approve-batch").await;
    b.wait_text("Approved: download the letters").await;
    assert_eq!(b.text("#batch-status").await, "approved");
    let approved = get_ok(&app, &api).await;
    assert_eq!(approved["status"], "approved");
    assert_eq!(approved["approved_by"]["name"], app.tenant.email.as_str());
    assert_eq!(approved["notice_date"], Utc::now().date_naive().to_string());
    let href = b
        .script("return document.querySelector('#letters').getAttribute('href')")
        .await;
    assert_eq!(
        href,
        json!(format!(
            "/app/facilities/{fid}/ecri-batches/{bid}/letters.csv"
        ))
    );
    let cookie = app.session_cookie().await;
    let csv = app.page_text(&cookie, href.as_str().unwrap()).await;
    assert_eq!(csv.lines().count(), 1 + lines.len() - 1, "{csv}");
    assert!(csv.contains(&format!("{rent1:.2}")), "{csv}");
    // The facility's list shows the batch and its actor.
    app.ecri_now(&fid).await;
    b.goto(&app.url(&format!("/app/facilities/{fid}/ecri")))
        .await;
    let listed = b.text("#ecri-batches").await;
    assert!(
        listed.contains("approved") && listed.contains(&app.tenant.email),
        "{listed}"
    );
    b.close().await;
    app.run_jobs().await;
}
