//! Street-rate decisions on the facility page in a real browser: accept one size, override
//! another (refused past a guardrail, then forced with a reason), and the approved rates shown
//! with the signed-in user as their actor, as the API reports them.

use super::rate_decisions::{facility, line, run_engine};
use e2e::browser::Browser;
use e2e::{get_ok, spawn_app};

#[tokio::test]
async fn the_facility_page_accepts_and_overrides_rates_and_lists_them_as_pending() {
    let app = spawn_app().await;
    let id = facility(&app, "Main Street").await;
    let run = run_engine(&app, &id).await;
    let recs = run["recommendations"].as_array().unwrap();
    let form_of = |size: &str| {
        let i = recs.iter().position(|r| r["size"] == size).unwrap();
        format!("#decide-{i}")
    };

    let b = Browser::start().await;
    b.login(&app.server.base, &app.tenant.email, "correct horse battery")
        .await;
    b.wait_path("/app/portfolio").await;
    b.goto(&format!("{}/app/facilities/{id}", app.server.base))
        .await;
    b.wait_text("None yet.").await;

    let big = form_of("10x10");
    b.click(&format!("{big} button[value=accept]")).await;
    b.wait_text("Decision saved").await;

    // An override past the step is refused with the guardrail named and a force box.
    let mid = form_of("5x10");
    b.fill(&format!("{mid} input[name=rate]"), "150").await;
    b.click(&format!("{mid} button[value=override]")).await;
    let page = b.wait_text("outside the run's guardrails").await;
    assert!(page.contains("max step"), "{page}");
    b.click(&format!("{mid} input[name=force]")).await;
    b.fill(&format!("{mid} input[name=reason]"), "a new road opened")
        .await;
    b.click(&format!("{mid} button[value=override]")).await;
    b.wait_text("Decision saved").await;

    let rows: Vec<Vec<String>> = serde_json::from_value(
        b.script(
            "return Array.from(document.querySelectorAll('#pending-rates tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent.replace(/\\u00a0/g, ' ').trim()))",
        )
        .await,
    )
    .unwrap();
    let email = app.tenant.email.as_str();
    let cells = |r: &Vec<String>| {
        [0, 1, 2, 3, 4, 5, 7]
            .iter()
            .map(|&i| r[i].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        rows.iter().map(cells).collect::<Vec<_>>(),
        vec![
            vec!["5x10", "standard", "$100.00", "$150.00", "override", "pending", email],
            vec![
                "10x10",
                "standard",
                "$100.00",
                "$108.00",
                "recommendation",
                "pending",
                email
            ],
        ]
    );
    b.close().await;

    // The API reports the same, with the user as the actor.
    let rates = get_ok(&app, &format!("/api/v1/facilities/{id}/rates")).await;
    let user = &line(&rates, "10x10")["decided_by"];
    assert_eq!(user["type"], "user");
    assert_eq!(user["name"], email);
    assert_eq!(line(&rates, "5x10")["approved_rate"], 150.0);
    assert_eq!(line(&rates, "5x10")["decided_by"], *user);
    let forced = sqlx::query_as::<_, (bool, Vec<String>, Option<String>)>(
        "SELECT forced, broken, reason FROM rate_decisions WHERE size = '5x10'",
    )
    .fetch_one(app.db())
    .await
    .unwrap();
    assert_eq!(
        forced,
        (
            true,
            vec!["max_step".to_owned(), "ceiling".to_owned()],
            Some("a new road opened".to_owned())
        )
    );
    app.run_jobs().await;
}
