//! The Team and Audit log pages in a real browser: an owner invites a colleague as a viewer
//! limited to one facility, the colleague accepts the mailed link and sets a password, sees
//! only that facility and a menu without the account's pages, and the owner finds both
//! changes in the audit log with the filter.

use super::dashboard::{link_in, mails};
use e2e::browser::Browser;
use e2e::spawn_app;

/// The member with `email`, as `GET /api/v1/team` lists it.
pub(crate) async fn member(app: &e2e::TestApp, email: &str) -> serde_json::Value {
    let team = e2e::get_ok(app, "/api/v1/team").await;
    team["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["email"] == email)
        .unwrap()
        .clone()
}

#[tokio::test]
async fn an_owner_invites_a_scoped_viewer_who_joins_and_the_audit_page_shows_it() {
    let app = spawn_app().await;
    let north = app.create_facility("North").await;
    app.create_facility("South").await;
    let base = &app.server.base;

    let owner = Browser::start().await;
    owner
        .login(base, &app.tenant.email, "correct horse battery")
        .await;
    owner.wait_path("/app/portfolio").await;
    owner.goto(&format!("{base}/app/team")).await;
    owner.fill("input[name=email]", "vic@example.com").await;
    owner.select("select[name=role]", "viewer").await;
    owner.click("details.scope summary").await;
    owner
        .click(&format!("input[name=facility_ids][value='{north}']"))
        .await;
    owner
        .click("form[action='/app/team/invitations'] button")
        .await;
    owner.wait_text("Invitation sent").await;
    let row = owner.text("#invitations tbody tr").await;
    assert!(
        row.starts_with(&format!("vic@example.com viewer 1 {}", app.tenant.email)),
        "{row}"
    );

    let dir = std::env::temp_dir().join(format!("mail-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    assert_eq!(app.deliver_mail(&dir).await, 1);
    let (to, text) = mails(&dir).pop().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(to, "vic@example.com");
    let link = link_in(&text, "/invitations/accept?token=").unwrap();
    // The mail's links use PUBLIC_BASE_URL; the test server listens elsewhere.
    let path = &link[link.find("/invitations/").unwrap()..];

    let vic = Browser::start().await;
    vic.goto(&format!("{base}{path}")).await;
    vic.wait_text("Join Acme Storage as viewer with the login vic@example.com")
        .await;
    vic.fill("input[name=password]", "a long new password")
        .await;
    vic.click("form[action='/invitations/accept'] button").await;
    vic.wait_path("/app/portfolio").await;
    let menu = vic.text("nav.main").await.replace('\n', " ");
    assert_eq!(menu, "Portfolio Analytics Overview Facilities");
    vic.goto(&format!("{base}/app/facilities")).await;
    let list = vic.text("main").await;
    assert!(list.contains("North") && !list.contains("South"), "{list}");
    vic.goto(&format!("{base}/app/keys")).await;
    vic.wait_text("may not do this").await;
    // Every role may log out.
    vic.goto(&format!("{base}/app")).await;
    vic.click("form[action='/logout'] button").await;
    vic.wait_path("/login").await;
    vic.close().await;

    owner.goto(&format!("{base}/app/audit")).await;
    owner
        .fill("#audit-filters input[name=action]", "invitation.")
        .await;
    owner.click("#audit-filters button").await;
    owner.wait_text("invitation.accept").await;
    let rows: Vec<Vec<String>> = serde_json::from_value(
        owner
            .script(
                "return Array.from(document.querySelectorAll('#audit tbody tr')).map(r => [r.cells[1].textContent.trim(), r.cells[3].textContent.trim()])",
            )
            .await,
    )
    .unwrap();
    assert_eq!(
        rows,
        vec![
            vec!["vic@example.com".to_owned(), "invitation.accept".to_owned()],
            vec![app.tenant.email.clone(), "invitation.create".to_owned()],
        ]
    );
    // The retention form, and the member's facilities widened to every one on the Team page.
    owner.fill("input[name=audit_retention_days]", "400").await;
    owner
        .click("form[action='/app/audit/settings'] button")
        .await;
    owner.wait_text("Saved.").await;
    let settings = e2e::get_ok(&app, "/api/v1/audit-log/settings").await;
    assert_eq!(settings["audit_retention_days"], 400);
    let vic = member(&app, "vic@example.com").await;
    assert_eq!(vic["facility_ids"], serde_json::json!([north]));
    let form = format!(
        "form[action='/app/team/members/{}']",
        vic["id"].as_str().unwrap()
    );
    owner.goto(&format!("{base}/app/team")).await;
    owner.click(&format!("{form} details.scope summary")).await;
    owner
        .click(&format!("{form} input[name=facility_ids][value='{north}']"))
        .await;
    owner.click(&format!("{form} button")).await;
    owner.wait_text("Saved.").await;
    let vic = member(&app, "vic@example.com").await;
    assert_eq!(vic["facility_ids"], serde_json::Value::Null);
    assert_eq!(vic["role"], "viewer");
    owner.close().await;
    app.run_jobs().await;
}
