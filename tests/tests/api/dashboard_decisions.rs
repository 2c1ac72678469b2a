//! The facility pricing page as a decision sheet, in a real browser: a bulk accept of ticked
//! rows stored through the decision use case (checked through the API and the database), a
//! rejection with its reason in the facility's decision history and in the audit log with the
//! dashboard as its source, a refused override worded for the person, what a viewer sees, and
//! the page's height on the demo data.

use super::rate_decisions::{facility, line, run_engine};
use e2e::browser::Browser;
use e2e::{get_ok, spawn_app, TestApp};
use serde_json::{json, Value};

const PASSWORD: &str = "correct horse battery";

async fn signed_in(app: &TestApp, email: &str) -> Browser {
    let b = Browser::start_sized(1440, 1000).await;
    b.login(&app.server.base, email, PASSWORD).await;
    b.wait_path("/app/portfolio").await;
    b
}

/// The cells of each row of the decision sheet (text, no-break spaces as spaces).
async fn sheet(b: &Browser) -> Vec<Vec<String>> {
    serde_json::from_value(
        b.script(
            "return Array.from(document.querySelectorAll('#sheet tbody tr:not(.why)')).map(r => Array.from(r.cells).map(c => c.textContent.replace(/\\u00a0/g, ' ').replace(/\\s+/g, ' ').trim()))",
        )
        .await,
    )
    .unwrap()
}

async fn table(b: &Browser, id: &str) -> Vec<Vec<String>> {
    serde_json::from_value(
        b.script(&format!(
            "return Array.from(document.querySelectorAll('#{id} tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent.replace(/\\u00a0/g, ' ').trim()))"
        ))
        .await,
    )
    .unwrap()
}

fn row_of(recs: &[Value], size: &str) -> usize {
    recs.iter().position(|r| r["size"] == size).unwrap()
}

#[tokio::test]
async fn bulk_accept_stores_the_selection_and_the_history_shows_accepts_and_a_rejection() {
    let app = spawn_app().await;
    let id = facility(&app, "Main Street").await;
    let run = run_engine(&app, &id).await;
    let recs = run["recommendations"].as_array().unwrap().clone();
    let b = signed_in(&app, &app.tenant.email).await;
    b.goto(&format!("{}/app/facilities/{id}", app.server.base))
        .await;

    // One row per unit type with the API's figures, the rate field holding the recommendation.
    let rows = sheet(&b).await;
    assert_eq!(rows.len(), recs.len());
    let big = row_of(&recs, "10x10");
    assert_eq!(rows[big][1], "10x10 standard");
    assert_eq!(rows[big][2], "$100.00");
    assert_eq!(rows[big][3], "$108.00");
    assert_eq!(
        b.script(&format!(
            "return document.querySelector('#decide-{big} input[name=rate]').value"
        ))
        .await,
        json!("108.00")
    );
    // The reasons are folded under the row, amounts in money, no backticks.
    let why = b
        .script(&format!(
            "const d = document.querySelector('#row-{big} + tr.why details'); return [d.open, d.textContent]"
        ))
        .await;
    assert_eq!(why[0], json!(false));
    let why = why[1].as_str().unwrap();
    assert!(why.contains("target $"), "{why}");
    let body = b
        .script("return document.body.textContent")
        .await
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!body.contains('`'), "a backtick on the page");
    assert!(
        !body.contains("target 1") && !body.contains("target 9"),
        "an amount without money"
    );

    // Tick two rows and accept them together.
    let small = row_of(&recs, "5x5");
    for i in [big, small] {
        b.click(&format!("#row-{i} input[name=pick]")).await;
    }
    b.click("#bulk-accept").await;
    b.wait_text("The selected rates are accepted").await;
    let rates = get_ok(&app, &format!("/api/v1/facilities/{id}/rates")).await;
    for (size, i) in [("10x10", big), ("5x5", small)] {
        let l = line(&rates, size);
        assert_eq!(l["approved_rate"], recs[i]["recommended_rate"], "{l}");
        assert_eq!(l["source"], "recommendation");
        assert_eq!(l["status"], "pending");
        assert_eq!(l["decided_by"]["name"], app.tenant.email.as_str());
    }
    assert!(line(&rates, "5x10")["approved_rate"].is_null());
    let stored: Vec<(String, String, Option<f64>)> = sqlx::query_as(
        "SELECT size, action, rate FROM rate_decisions WHERE facility_id = $1::uuid ORDER BY size",
    )
    .bind(&id)
    .fetch_all(app.db())
    .await
    .unwrap();
    assert_eq!(
        stored,
        vec![
            ("10x10".to_owned(), "accept".to_owned(), Some(108.0)),
            (
                "5x5".to_owned(),
                "accept".to_owned(),
                recs[small]["recommended_rate"].as_f64()
            ),
        ]
    );

    // Reject the 5x10 with a reason: the history shows it beside the accepts.
    let mid = row_of(&recs, "5x10");
    b.fill(
        &format!("#decide-{mid} input[name=reason]"),
        "wait for the new road",
    )
    .await;
    b.click(&format!("#decide-{mid} button[value=reject]"))
        .await;
    b.wait_text("Decision saved").await;
    let history = table(&b, "decision-history").await;
    let email = app.tenant.email.as_str();
    let brief: Vec<Vec<&str>> = history
        .iter()
        .map(|r| {
            vec![
                r[1].as_str(),
                r[2].as_str(),
                r[3].as_str(),
                r[4].as_str(),
                r[7].as_str(),
            ]
        })
        .collect();
    assert!(
        brief.contains(&vec![
            email,
            "5x10 standard",
            "rejected",
            "",
            "wait for the new road"
        ]),
        "{history:?}"
    );
    assert!(
        brief.contains(&vec![email, "10x10 standard", "accepted", "$108.00", ""]),
        "{history:?}"
    );
    assert_eq!(history.len(), 3);
    let rejected = history.iter().find(|r| r[3] == "rejected").unwrap();
    let recommended = recs[mid]["recommended_rate"].as_f64().unwrap();
    assert_eq!(rejected[5], format!("${recommended:.2}"));
    assert_eq!(rejected[6], "$100.00");
    b.close().await;

    // The audit log: the dashboard as the source, the person, and before / after.
    let audit = get_ok(&app, "/api/v1/audit-log?action=rate_decision.record").await;
    let entries = audit["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    let reject = &entries[0];
    assert_eq!(reject["via"], "dashboard");
    assert_eq!(reject["actor"]["type"], "user");
    assert_eq!(reject["actor"]["name"], email);
    assert_eq!(
        reject["before"],
        json!([{ "size": "5x10", "tier": "standard", "rate_in_force": 100.0,
                 "approved_rate": null, "approved_status": null }])
    );
    let after = &reject["after"][0];
    assert_eq!(after["action"], "reject");
    assert_eq!(after["rate_after"], 100.0);
    assert_eq!(after["recommended_rate"], recs[mid]["recommended_rate"]);
    assert_eq!(after["reason"], "wait for the new road");
    let bulk = &entries[1];
    assert_eq!(bulk["via"], "dashboard");
    assert_eq!(bulk["after"].as_array().unwrap().len(), 2);
    // One request, in the sheet's order (5x5 before 10x10): the rate each stood at before.
    let before: Vec<(&str, f64)> = bulk["before"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["size"].as_str().unwrap(),
                b["rate_in_force"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(before, vec![("5x5", 50.0), ("10x10", 100.0)]);
    app.run_jobs().await;
}

#[tokio::test]
async fn a_refused_override_says_what_to_do_and_apply_anyway_stores_it() {
    let app = spawn_app().await;
    let id = facility(&app, "Main Street").await;
    let run = run_engine(&app, &id).await;
    let recs = run["recommendations"].as_array().unwrap().clone();
    let b = signed_in(&app, &app.tenant.email).await;
    b.goto(&format!("{}/app/facilities/{id}", app.server.base))
        .await;
    let mid = row_of(&recs, "5x10");
    let form = format!("#decide-{mid}");
    b.fill(&format!("{form} input[name=rate]"), "150").await;
    b.click(&format!("{form} button[value=override]")).await;
    let page = b.wait_text("Apply anyway").await;
    assert!(page.contains("5x10 standard: this rate is outside the run's guardrails: max step (at most 8% per change, $92.00 to $108.00)"), "{page}");
    assert!(
        !page.contains("decisions[0]") && !page.contains("force: true"),
        "{page}"
    );
    assert_eq!(
        b.script(&format!(
            "return document.querySelector('{form} input[name=rate]').value"
        ))
        .await,
        json!("150"),
        "the rate typed stays"
    );
    b.click(&format!("{form} input[name=force]")).await;
    b.fill(&format!("{form} input[name=reason]"), "a new road opened")
        .await;
    b.click(&format!("{form} button[value=override]")).await;
    b.wait_text("Decision saved").await;
    let rates = get_ok(&app, &format!("/api/v1/facilities/{id}/rates")).await;
    assert_eq!(line(&rates, "5x10")["approved_rate"], 150.0);
    assert_eq!(line(&rates, "5x10")["source"], "override");
    let history = table(&b, "decision-history").await;
    assert_eq!(history[0][3], "overridden (forced)");
    assert_eq!(history[0][4], "$150.00");
    b.close().await;
    app.run_jobs().await;
}

#[tokio::test]
async fn a_viewer_sees_the_figures_without_any_control_it_may_not_use() {
    let app = spawn_app().await;
    let id = facility(&app, "Main Street").await;
    run_engine(&app, &id).await;
    super::team::invite_and_accept(&app, "vera@example.com", "viewer").await;
    let b = signed_in(&app, "vera@example.com").await;
    let base = &app.server.base;
    b.goto(&format!("{base}/app/facilities/{id}")).await;
    b.find("#sheet").await;
    assert_eq!(sheet(&b).await.len(), 3, "the viewer reads every unit type");
    let controls = b
        .script(
            "return ['#run-now', '#bulk', 'form.decide', 'input[name=pick]', '#add-rate', '#settings button[type=submit]', 'form[action$=\"/settings\"] button']
                .filter(css => document.querySelector(css) !== null)",
        )
        .await;
    assert_eq!(controls, json!([]), "controls a viewer may not use");
    let disabled = b
        .script("return document.querySelector('#settings fieldset').disabled")
        .await;
    assert_eq!(disabled, json!(true), "the settings are shown read-only");
    let note = b.text(".role-note").await;
    assert_eq!(note, "Your role (viewer) may read this but not decide rates, run the engine, add competitor rates or change the settings; a manager, an admin or an owner may.");
    // The other pages: no control of an admin's or a manager's either.
    let edit = format!("/app/facilities/{id}/edit");
    let delete = format!("/app/facilities/{id}/delete");
    for (path, gone) in [
        ("/app/facilities", "a[href='/app/facilities/new']"),
        ("/app/facilities", "a[href$='/edit']"),
        (edit.as_str(), "main form[method=post]"),
        (delete.as_str(), "main form[method=post]"),
        ("/app", "#company-settings"),
        ("/app/upload", "form[enctype='multipart/form-data']"),
    ] {
        b.goto(&format!("{base}{path}")).await;
        b.find(".role-note").await;
        assert_eq!(
            b.script(&format!(
                "return document.querySelector(\"{gone}\") === null"
            ))
            .await,
            json!(true),
            "{path}: {gone}"
        );
    }
    b.close().await;
    app.run_jobs().await;
}

#[tokio::test]
async fn the_pricing_page_of_the_demo_is_under_12000_px_tall_at_1440_px() {
    let app = spawn_app().await;
    let today = chrono::Utc::now().date_naive();
    jobs::seed::seed_bulk(app.db(), app.tenant.company_id.into(), 1, 120, today, 2)
        .await
        .unwrap();
    let list = get_ok(&app, "/api/v1/facilities").await;
    let id = list["facilities"][0]["id"].as_str().unwrap().to_owned();
    let run = get_ok(&app, &format!("/api/v1/facilities/{id}/recommendations")).await;
    let b = signed_in(&app, &app.tenant.email).await;
    b.goto(&format!("{}/app/facilities/{id}", app.server.base))
        .await;
    b.find("#sheet").await;
    assert_eq!(
        sheet(&b).await.len(),
        run["recommendations"].as_array().unwrap().len()
    );
    let height = b
        .script("return document.documentElement.scrollHeight")
        .await
        .as_f64()
        .unwrap();
    println!("the pricing page is {height} px tall at 1,440 px");
    assert!(height < 12_000.0, "the page is {height} px tall");
    // The decision controls sit in the sheet, at the top of the page, not below the charts.
    let top = b
        .script("return document.querySelector('#decide-0').getBoundingClientRect().top + window.scrollY")
        .await
        .as_f64()
        .unwrap();
    assert!(top < 1_500.0, "the first decision form is at {top} px");
    b.close().await;
    app.run_jobs().await;
}

#[tokio::test]
async fn a_refusal_of_a_form_sent_in_place_is_shown_not_swallowed() {
    let app = spawn_app().await;
    let id = facility(&app, "Main Street").await;
    super::team::invite_and_accept(&app, "mia@example.com", "manager").await;
    let b = signed_in(&app, "mia@example.com").await;
    b.goto(&format!("{}/app/facilities/{id}", app.server.base))
        .await;
    b.find("#run-now").await;
    // Her role drops to viewer while the page is open: "Run now" (sent in place by htmx) is
    // refused with a 403, which htmx does not swap; the page says so all the same.
    let team = get_ok(&app, "/api/v1/team").await;
    let mia = team["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["email"] == "mia@example.com")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = app
        .req(
            reqwest::Method::PATCH,
            &format!("/api/v1/team/members/{mia}"),
        )
        .json(&json!({ "role": "viewer" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    b.script("window.markedPage = true").await;
    b.click("#run-now").await;
    let page = b.wait_text("your role (viewer) may not do this").await;
    assert!(
        page.contains("Decide the street rates"),
        "the page stays: {page}"
    );
    assert_eq!(
        b.script("return window.markedPage === true").await,
        json!(true)
    );
    assert_eq!(
        b.script("return document.querySelectorAll('#flash #errors[role=alert]').length")
            .await,
        json!(1)
    );
    assert_eq!(
        app.count("recommendation_runs").await,
        1,
        "the sync's run only"
    );
    b.close().await;
    app.run_jobs().await;
}
