//! Teams through the real interface: keys with a role, a viewer's writes refused with 403 and
//! nothing written, an invitation mailed and accepted, roles changed, a removed member's
//! session ended, the last owner kept, and every change in the audit log with its actor.

use super::dashboard::{link_in, mails};
use e2e::{spawn_app, status_json, Tenant, TestApp};
use reqwest::Method;
use serde_json::{json, Value};

const PASSWORD: &str = "correct horse battery";

/// A key of the app's company with `role`, as a tenant to send requests with.
pub(crate) async fn key_with_role(app: &TestApp, name: &str, role: &str) -> Tenant {
    let (s, k) = status_json(
        app.post("/api/v1/api-keys", &json!({ "name": name, "role": role }))
            .await,
    )
    .await;
    assert_eq!(s, 201, "{k}");
    assert_eq!(k["role"], role);
    Tenant {
        company_id: app.tenant.company_id,
        api_key: k["api_key"].as_str().unwrap().to_owned(),
        email: app.tenant.email.clone(),
    }
}

async fn send(
    app: &TestApp,
    who: &Tenant,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut r = app.req_as(who, method, path);
    if let Some(b) = body {
        r = r.json(&b);
    }
    status_json(r.send().await.unwrap()).await
}

/// Rows of the tables a write could touch, to show that a refused one wrote nothing.
async fn footprint(app: &TestApp) -> Vec<i64> {
    let mut out = Vec::new();
    for t in [
        "facilities",
        "api_keys",
        "webhook_subscriptions",
        "sync_records",
        "users",
        "team_invitations",
        "audit_log",
        "competitor_rates",
    ] {
        out.push(app.count(t).await);
    }
    out
}

#[tokio::test]
async fn a_viewer_key_reads_and_every_write_it_tries_answers_403_and_writes_nothing() {
    let app = spawn_app().await;
    let fid = app.create_facility("Main Street").await;
    let viewer = key_with_role(&app, "bi tool", "viewer").await;
    let manager = key_with_role(&app, "revenue desk", "manager").await;

    // Reads pass.
    for path in [
        "/api/v1/facilities".to_owned(),
        format!("/api/v1/facilities/{fid}"),
        format!("/api/v1/facilities/{fid}/pricing-settings"),
        "/api/v1/analytics/portfolio".to_owned(),
        "/api/v1/status".to_owned(),
    ] {
        let (s, body) = send(&app, &viewer, Method::GET, &path, None).await;
        assert_eq!(s, 200, "{path}: {body}");
    }
    // What only admins see is refused too.
    for path in [
        "/api/v1/api-keys",
        "/api/v1/webhooks",
        "/api/v1/team",
        "/api/v1/audit-log",
    ] {
        let (s, body) = send(&app, &viewer, Method::GET, path, None).await;
        assert_eq!(s, 403, "{path}: {body}");
    }

    let before = footprint(&app).await;
    let writes: Vec<(Method, String, Value)> = vec![
        (
            Method::POST,
            "/api/v1/facilities".into(),
            json!({ "name": "Second" }),
        ),
        (
            Method::PUT,
            format!("/api/v1/facilities/{fid}"),
            json!({ "name": "Renamed" }),
        ),
        (
            Method::DELETE,
            format!("/api/v1/facilities/{fid}"),
            json!({}),
        ),
        (
            Method::PUT,
            format!("/api/v1/facilities/{fid}/pricing-settings"),
            json!({ "max_step_pct": 5.0 }),
        ),
        (
            Method::POST,
            format!("/api/v1/facilities/{fid}/competitor-rates"),
            json!({ "competitor": "Rival", "size": "10x10", "rate": 120.0 }),
        ),
        (
            Method::POST,
            "/api/v1/sync".into(),
            json!({ "facility": { "name": "Main Street" }, "snapshot_date": "2026-11-01" }),
        ),
        (
            Method::POST,
            "/api/v1/api-keys".into(),
            json!({ "name": "mine" }),
        ),
        (
            Method::POST,
            "/api/v1/webhooks".into(),
            json!({ "url": "https://example.com/hook" }),
        ),
        (
            Method::POST,
            "/api/v1/team/invitations".into(),
            json!({ "email": "a@example.com", "role": "viewer" }),
        ),
        (
            Method::PATCH,
            "/api/v1/company".into(),
            json!({ "currency": "EUR" }),
        ),
    ];
    for (method, path, body) in &writes {
        let (s, answer) = send(&app, &viewer, method.clone(), path, Some(body.clone())).await;
        assert_eq!(s, 403, "{method} {path}: {answer}");
        let message = answer["error"].as_str().unwrap();
        assert!(
            message.starts_with("your role (viewer) may not do this"),
            "{message}"
        );
    }
    assert_eq!(
        footprint(&app).await,
        before,
        "a refused write changes nothing"
    );
    let name = &e2e::get_ok(&app, &format!("/api/v1/facilities/{fid}")).await["name"];
    assert_eq!(name, "Main Street");

    // A manager acts on pricing but not on the account.
    let (s, body) = send(
        &app,
        &manager,
        Method::PUT,
        &format!("/api/v1/facilities/{fid}/pricing-settings"),
        Some(json!({ "max_step_pct": 5.0 })),
    )
    .await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["settings"]["max_step_pct"], 5.0);
    let (s, body) = send(
        &app,
        &manager,
        Method::POST,
        "/api/v1/api-keys",
        Some(json!({ "name": "x" })),
    )
    .await;
    assert_eq!(s, 403, "{body}");
    assert!(body["error"]
        .as_str()
        .unwrap()
        .contains("the admin or owner role"));

    // A key is never an owner; the listing shows every key's role.
    let (s, body) = app_post(
        &app,
        "/api/v1/api-keys",
        json!({ "name": "boss", "role": "owner" }),
    )
    .await;
    assert_eq!(s, 422, "{body}");
    let keys = e2e::get_ok(&app, "/api/v1/api-keys").await;
    let roles: Vec<(&str, &str)> = keys["api_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["name"].as_str().unwrap(), k["role"].as_str().unwrap()))
        .collect();
    assert_eq!(
        roles,
        vec![
            ("default", "admin"),
            ("bi tool", "viewer"),
            ("revenue desk", "manager")
        ]
    );
    app.run_jobs().await;
}

async fn app_post(app: &TestApp, path: &str, body: Value) -> (u16, Value) {
    status_json(app.post(path, &body).await).await
}

/// Posts a dashboard form with a session cookie; the answer as it came (no redirect followed).
async fn post_form(
    app: &TestApp,
    cookie: &str,
    path: &str,
    fields: &[(&str, &str)],
) -> reqwest::Response {
    browserless()
        .post(app.url(path))
        .header("cookie", cookie)
        .form(fields)
        .send()
        .await
        .unwrap()
}

/// A client that keeps cookies out of redirects (each answer is looked at).
fn browserless() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

fn cookie_of(r: &reqwest::Response) -> String {
    r.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned()
}

/// The CSRF token of a page of the signed-in dashboard.
async fn csrf(app: &TestApp, cookie: &str, path: &str) -> String {
    let html = app.page_text(cookie, path).await;
    let at = html
        .find("name=\"csrf\" value=\"")
        .expect("a form with a token")
        + 19;
    html[at..].split('"').next().unwrap().to_owned()
}

/// Invites `email` as `role` through the API, delivers the mail, and accepts the link with a
/// password; the new member's session cookie.
pub(crate) async fn invite_and_accept(app: &TestApp, email: &str, role: &str) -> String {
    let (s, inv) = app_post(
        app,
        "/api/v1/team/invitations",
        json!({ "email": email, "role": role }),
    )
    .await;
    assert_eq!(s, 201, "{inv}");
    assert_eq!(inv["role"], role);
    assert_eq!(inv["invited_by"]["name"], "default");
    let dir = std::env::temp_dir().join(format!("mail-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    assert_eq!(app.deliver_mail(&dir).await, 1);
    let (to, text) = mails(&dir).pop().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(to, email);
    assert!(text.contains("Acme Storage"), "{text}");
    let link = link_in(&text, "/invitations/accept?token=").expect("an invitation link");
    let token = link.split("token=").nth(1).unwrap().to_owned();

    // Opening the link shows what it is for and creates nothing.
    let page = app
        .page_text("", &format!("/invitations/accept?token={token}"))
        .await;
    assert!(
        page.contains(&format!(
            "Join Acme Storage as {role} with the login {email}"
        )),
        "{page}"
    );
    let http = browserless();
    let r = http
        .post(app.url("/invitations/accept"))
        .form(&[("token", token.as_str()), ("password", "short")])
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.status(),
        422,
        "a short password is refused and the link kept"
    );
    let r = http
        .post(app.url("/invitations/accept"))
        .form(&[("token", token.as_str()), ("password", PASSWORD)])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let cookie = cookie_of(&r);
    // The link works once.
    let again = http
        .post(app.url("/invitations/accept"))
        .form(&[("token", token.as_str()), ("password", PASSWORD)])
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 422);
    cookie
}

#[tokio::test]
async fn an_invitation_is_mailed_and_accepted_roles_hold_on_pages_and_the_last_owner_stays() {
    let app = spawn_app().await;
    let fid = app.create_facility("Main Street").await;
    let viewer_cookie = invite_and_accept(&app, "vera@example.com", "viewer").await;

    let team = e2e::get_ok(&app, "/api/v1/team").await;
    let members: Vec<(&str, &str)> = team["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["email"].as_str().unwrap(), m["role"].as_str().unwrap()))
        .collect();
    assert_eq!(
        members,
        vec![
            (app.tenant.email.as_str(), "owner"),
            ("vera@example.com", "viewer")
        ]
    );
    assert_eq!(team["invitations"], json!([]));
    let vera = team["members"][1]["id"].as_str().unwrap().to_owned();
    let owner = team["members"][0]["id"].as_str().unwrap().to_owned();
    assert!(team["members"][1]["last_sign_in_at"].is_null());

    // The viewer reads pages but the menu hides what the role cannot open, those pages refuse,
    // and a form post is refused with nothing written.
    let overview = app.page_text(&viewer_cookie, "/app").await;
    let menu = overview
        .split("<nav class=\"main\"")
        .nth(1)
        .unwrap()
        .split("</nav>")
        .next()
        .unwrap();
    assert!(
        menu.contains("Portfolio") && menu.contains("Facilities"),
        "{menu}"
    );
    for hidden in ["API keys", "Webhooks", "Data sources", "Team", "Audit log"] {
        assert!(
            !menu.contains(hidden),
            "{hidden} in a viewer's menu: {menu}"
        );
    }
    let facility = app
        .page_text(&viewer_cookie, &format!("/app/facilities/{fid}"))
        .await;
    assert!(facility.contains("Main Street"));
    let http = browserless();
    let r = http
        .get(app.url("/app/keys"))
        .header("cookie", &viewer_cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let token = csrf(&app, &viewer_cookie, &format!("/app/facilities/{fid}")).await;
    let before = footprint(&app).await;
    let rate_form = [
        ("csrf", token.as_str()),
        ("competitor", "Rival"),
        ("size", "10x10"),
        ("rate", "120"),
    ];
    let rates_path = format!("/app/facilities/{fid}/competitor-rates");
    let r = post_form(&app, &viewer_cookie, &rates_path, &rate_form).await;
    assert_eq!(r.status(), 403);
    assert!(r
        .text()
        .await
        .unwrap()
        .contains("your role (viewer) may not do this"));
    assert_eq!(footprint(&app).await, before);

    // An address with an account is invited like any other (its holder told by mail):
    // `invitations_safety::an_address_with_an_account_is_invited_like_any_other_and_its_holder_is_told`.
    let other = app.create_tenant("Other Co").await;
    // Another company's member is invisible.
    let (s, _) = send(
        &app,
        &other,
        Method::DELETE,
        &format!("/api/v1/team/members/{vera}"),
        None,
    )
    .await;
    assert_eq!(s, 404);

    // An admin (the default key) neither makes nor touches owners.
    let (s, body) = send(
        &app,
        &app.tenant,
        Method::PATCH,
        &format!("/api/v1/team/members/{vera}"),
        Some(json!({ "role": "owner" })),
    )
    .await;
    assert_eq!(s, 403, "{body}");
    let (s, _) = send(
        &app,
        &app.tenant,
        Method::DELETE,
        &format!("/api/v1/team/members/{owner}"),
        None,
    )
    .await;
    assert_eq!(s, 403);
    let (s, _) = app_post(
        &app,
        "/api/v1/team/invitations",
        json!({ "email": "boss@example.com", "role": "owner" }),
    )
    .await;
    assert_eq!(s, 403);

    // The role changes at the member's next request.
    let (s, body) = send(
        &app,
        &app.tenant,
        Method::PATCH,
        &format!("/api/v1/team/members/{vera}"),
        Some(json!({ "role": "manager" })),
    )
    .await;
    assert_eq!((s, body["role"].as_str()), (200, Some("manager")));
    let r = post_form(&app, &viewer_cookie, &rates_path, &rate_form).await;
    assert!(
        r.status().is_redirection() || r.status().is_success(),
        "{}",
        r.status()
    );
    assert_eq!(app.count("competitor_rates").await, 1);

    // The owner, signed in, cannot leave or step down while the only owner: the page offers no
    // Remove link for them and says why; the routes answer 409 all the same.
    let owner_cookie = app.session_cookie().await;
    let remove_link = format!("/app/team/members/{owner}/remove");
    let page = app.page_text(&owner_cookie, "/app/team").await;
    assert!(!page.contains(&remove_link), "{page}");
    assert_eq!(
        page.matches("The only owner: make another member owner")
            .count(),
        1
    );
    let token = csrf(&app, &owner_cookie, "/app/team").await;
    let r = post_form(
        &app,
        &owner_cookie,
        &format!("/app/team/members/{owner}"),
        &[("csrf", token.as_str()), ("role", "admin")],
    )
    .await;
    assert_eq!(r.status(), 409);
    assert!(r.text().await.unwrap().contains("last owner"));
    let r = post_form(
        &app,
        &owner_cookie,
        &format!("/app/team/members/{owner}/remove"),
        &[("csrf", token.as_str())],
    )
    .await;
    assert_eq!(r.status(), 409);
    // With a second owner, the first may step down.
    let r = post_form(
        &app,
        &owner_cookie,
        &format!("/app/team/members/{vera}"),
        &[("csrf", token.as_str()), ("role", "owner")],
    )
    .await;
    assert_eq!(r.status(), 303);
    let page = app.page_text(&owner_cookie, "/app/team").await;
    assert!(
        page.contains(&remove_link),
        "two owners: either may be removed"
    );
    assert!(!page.contains("The only owner"));
    let r = post_form(
        &app,
        &owner_cookie,
        &format!("/app/team/members/{owner}"),
        &[("csrf", token.as_str()), ("role", "admin")],
    )
    .await;
    assert_eq!(r.status(), 303);

    // A removed member's session ends at once.
    let vera_team = app.page_text(&viewer_cookie, "/app/team").await;
    assert!(
        vera_team.contains("Invite a colleague"),
        "vera is an owner now"
    );
    let (s, body) = send(
        &app,
        &app.tenant,
        Method::PATCH,
        &format!("/api/v1/team/members/{vera}"),
        Some(json!({ "role": "viewer" })),
    )
    .await;
    assert_eq!(s, 403, "an admin key cannot demote an owner: {body}");
    let vera_token = csrf(&app, &viewer_cookie, "/app/team").await;
    let r = post_form(
        &app,
        &viewer_cookie,
        &format!("/app/team/members/{owner}/remove"),
        &[("csrf", vera_token.as_str())],
    )
    .await;
    assert_eq!(r.status(), 303, "an owner removes the other, now an admin");
    let r = http
        .get(app.url("/app"))
        .header("cookie", &owner_cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/login");
    assert_eq!(
        app.count(&format!("web_sessions WHERE user_id = '{owner}'"))
            .await,
        0
    );

    // Each of these changes is in the audit log with who made it and the values around it.
    let log = e2e::get_ok(&app, "/api/v1/audit-log?limit=500").await;
    let me = app.tenant.email.as_str();
    let team_changes: Vec<(String, String, Value, Value)> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .filter(|e| {
            let a = e["action"].as_str().unwrap();
            a.starts_with("member.") || a.starts_with("invitation.")
        })
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_owned(),
                e["actor"]["name"].as_str().unwrap().to_owned(),
                e["before"]["role"].clone(),
                e["after"]["role"].clone(),
            )
        })
        .collect();
    let row = |a: &str, by: &str, before: Value, after: Value| {
        (a.to_owned(), by.to_owned(), before, after)
    };
    assert_eq!(
        team_changes,
        vec![
            row("invitation.create", "default", Value::Null, json!("viewer")),
            row(
                "invitation.accept",
                "vera@example.com",
                Value::Null,
                json!("viewer")
            ),
            row(
                "member.update",
                "default",
                json!("viewer"),
                json!("manager")
            ),
            row("member.update", me, json!("manager"), json!("owner")),
            row("member.update", me, json!("owner"), json!("admin")),
            row(
                "member.remove",
                "vera@example.com",
                json!("admin"),
                Value::Null
            ),
        ]
    );
    app.run_jobs().await;
}

#[tokio::test]
async fn every_change_appears_in_the_audit_log_with_its_actor_and_the_log_filters_pages_and_exports(
) {
    let app = spawn_app().await;
    let http = browserless();
    // A failed and a good sign-in.
    let r = http
        .post(app.url("/login"))
        .form(&[
            ("email", app.tenant.email.as_str()),
            ("password", "wrong password"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let cookie = app.session_cookie().await;

    let fid = app.create_facility("Main Street").await;
    let (s, _) = status_json(
        app.put(
            &format!("/api/v1/facilities/{fid}/pricing-settings"),
            &json!({ "max_step_pct": 6.0 }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 200);
    let (s, _) = status_json(
        app.put(
            &format!("/api/v1/facilities/{fid}/pricing-settings"),
            &json!({ "max_step_pct": 4.0 }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 200);
    let bi = key_with_role(&app, "bi tool", "viewer").await;
    let keys = e2e::get_ok(&app, "/api/v1/api-keys").await;
    let bi_id = keys["api_keys"][1]["id"].as_str().unwrap().to_owned();
    let (s, _) = status_json(app.delete(&format!("/api/v1/api-keys/{bi_id}")).await).await;
    assert_eq!(s, 200);
    let (s, inv) = app_post(
        &app,
        "/api/v1/team/invitations",
        json!({ "email": "ines@example.com", "role": "manager" }),
    )
    .await;
    assert_eq!(s, 201);
    let (s, _) = status_json(
        app.delete(&format!(
            "/api/v1/team/invitations/{}",
            inv["id"].as_str().unwrap()
        ))
        .await,
    )
    .await;
    assert_eq!(s, 200);
    // A change made on a page is recorded under the signed-in user.
    let token = csrf(&app, &cookie, "/app/keys").await;
    let r = post_form(
        &app,
        &cookie,
        "/app/keys",
        &[
            ("csrf", token.as_str()),
            ("name", "from the page"),
            ("role", "manager"),
        ],
    )
    .await;
    assert_eq!(r.status(), 200);
    // A refused write is not a change.
    let (s, _) = send(
        &app,
        &bi,
        Method::POST,
        "/api/v1/facilities",
        Some(json!({ "name": "x" })),
    )
    .await;
    assert_eq!(s, 401, "the revoked key no longer works");

    let log = e2e::get_ok(&app, "/api/v1/audit-log").await;
    let entries = log["entries"].as_array().unwrap();
    let seen: Vec<(&str, &str, &str)> = entries
        .iter()
        .rev()
        .map(|e| {
            (
                e["action"].as_str().unwrap(),
                e["actor"]["name"].as_str().unwrap(),
                e["role"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    let me = app.tenant.email.as_str();
    assert_eq!(
        seen,
        vec![
            ("user.sign_in_failed", me, "-"),
            ("user.sign_in", me, "owner"),
            ("facility.create", "default", "admin"),
            ("pricing_settings.update", "default", "admin"),
            ("pricing_settings.update", "default", "admin"),
            ("api_key.create", "default", "admin"),
            ("api_key.revoke", "default", "admin"),
            ("invitation.create", "default", "admin"),
            ("invitation.revoke", "default", "admin"),
            ("api_key.create", me, "owner"),
        ]
    );
    let by_action = |a: &str| {
        entries
            .iter()
            .filter(|e| e["action"] == a)
            .collect::<Vec<_>>()
    };
    // Targets, facility and before/after of a setting.
    assert_eq!(
        by_action("facility.create")[0]["target"],
        format!("facility:{fid}")
    );
    assert_eq!(
        by_action("api_key.revoke")[0]["target"],
        format!("api_key:{bi_id}")
    );
    // Where each came from: a key's request, a click on a page, the login form.
    let via = |e: &&Value| e["via"].as_str().unwrap_or("-").to_owned();
    assert_eq!(
        by_action("api_key.create")
            .iter()
            .map(via)
            .collect::<Vec<_>>(),
        ["dashboard", "api"]
    );
    for signing_in in ["user.sign_in", "user.sign_in_failed"] {
        assert_eq!(
            by_action(signing_in).iter().map(via).collect::<Vec<_>>(),
            ["dashboard"]
        );
    }
    let settings = by_action("pricing_settings.update");
    assert_eq!(settings[0]["facility_id"], fid.as_str());
    assert_eq!(settings[0]["before"], json!({ "max_step_pct": 6.0 }));
    assert_eq!(settings[0]["after"], json!({ "max_step_pct": 4.0 }));
    assert_eq!(settings[1]["before"], json!({}));
    assert_eq!(
        by_action("api_key.create")[1]["after"],
        json!({ "name": "bi tool", "role": "viewer", "facility_ids": null })
    );
    assert_eq!(entries[0]["client_addr"], "127.0.0.1");

    // Filters: a noun, an actor, a time; pages.
    let keys_only = e2e::get_ok(&app, "/api/v1/audit-log?action=api_key.").await;
    assert_eq!(keys_only["entries"].as_array().unwrap().len(), 3);
    let mine = e2e::get_ok(
        &app,
        &format!("/api/v1/audit-log?actor={}", me.to_uppercase()),
    )
    .await;
    assert_eq!(mine["entries"].as_array().unwrap().len(), 3);
    let future = e2e::get_ok(&app, "/api/v1/audit-log?since=2099-01-01T00:00:00Z").await;
    assert_eq!(future["entries"], json!([]));
    let mut paged = Vec::new();
    let mut path = "/api/v1/audit-log?limit=4".to_owned();
    loop {
        let page = e2e::get_ok(&app, &path).await;
        paged.extend(
            page["entries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["id"].clone()),
        );
        match page["next"].as_i64() {
            Some(n) => path = format!("/api/v1/audit-log?limit=4&before={n}"),
            None => break,
        }
    }
    assert_eq!(
        paged,
        entries.iter().map(|e| e["id"].clone()).collect::<Vec<_>>()
    );
    let (s, body) = status_json(app.get("/api/v1/audit-log?limit=0").await).await;
    assert_eq!(s, 422, "{body}");

    // The CSV holds the same rows.
    let csv = app
        .get("/api/v1/audit-log.csv?action=pricing_settings.update")
        .await;
    assert_eq!(csv.status(), 200);
    let text = csv.text().await.unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "Time (UTC)",
            "Actor",
            "Role",
            "Action",
            "Target",
            "Facility id",
            "Before",
            "After",
            "Client address",
            "Via"
        ]
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(&rows[0][1], "API key \"default\"");
    assert_eq!(&rows[0][6], r#"{"max_step_pct":6.0}"#);
    assert_eq!(&rows[0][9], "api");

    // Retention: refused outside 30 to 3,650 days; set, recorded and applied by the purge.
    let (s, _) = status_json(
        app.put(
            "/api/v1/audit-log/settings",
            &json!({ "audit_retention_days": 7 }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 422);
    let (s, body) = status_json(
        app.put(
            "/api/v1/audit-log/settings",
            &json!({ "audit_retention_days": 90 }),
        )
        .await,
    )
    .await;
    assert_eq!((s, body), (200, json!({ "audit_retention_days": 90 })));
    assert_eq!(
        e2e::get_ok(&app, "/api/v1/audit-log/settings").await["audit_retention_days"],
        90
    );
    let latest = e2e::get_ok(&app, "/api/v1/audit-log?limit=1").await;
    assert_eq!(latest["entries"][0]["action"], "audit_settings.update");
    assert_eq!(
        latest["entries"][0]["before"],
        json!({ "audit_retention_days": 365 })
    );
    sqlx::query(
        "UPDATE audit_log SET at = now() - interval '91 days' WHERE action = 'user.sign_in_failed'",
    )
    .execute(app.db())
    .await
    .unwrap();
    assert_eq!(jobs::audit::purge_expired(app.db(), 100).await.unwrap(), 1);
    assert_eq!(
        app.count("audit_log WHERE action = 'user.sign_in_failed'")
            .await,
        0
    );

    // Another company sees none of it.
    let other = app.create_tenant("Other Co").await;
    let (s, body) = send(&app, &other, Method::GET, "/api/v1/audit-log", None).await;
    assert_eq!(s, 200);
    assert_eq!(body["entries"], json!([]));
    app.run_jobs().await;
}

#[tokio::test]
async fn a_scoped_manager_sees_only_her_facilities_on_every_route_and_page_and_the_totals_count_only_them(
) {
    let app = spawn_app().await;
    let mut ids = Vec::new();
    let mut east_job = String::new();
    for (name, units) in [("North", 3), ("South", 5), ("East", 7)] {
        let answer = e2e::push_ok(&app, e2e::payload(name, "2026-11-20", units, 4, 3)).await;
        ids.push(answer["facility"]["id"].as_str().unwrap().to_owned());
        east_job = answer["job"]["id"].as_str().unwrap().to_owned();
    }
    app.run_jobs().await;
    let (north, south, east) = (&ids[0], &ids[1], &ids[2]);
    let whole = e2e::get_ok(&app, "/api/v1/analytics/portfolio").await;

    // A key limited to North and South, and a manager invited with the same scope.
    let (s, k) = app_post(
        &app,
        "/api/v1/api-keys",
        json!({ "name": "district", "role": "manager", "facility_ids": [north, south] }),
    )
    .await;
    assert_eq!(s, 201, "{k}");
    let mut scoped_ids = vec![north.clone(), south.clone()];
    scoped_ids.sort();
    assert_eq!(k["facility_ids"], json!(scoped_ids));
    let district = Tenant {
        company_id: app.tenant.company_id,
        api_key: k["api_key"].as_str().unwrap().to_owned(),
        email: app.tenant.email.clone(),
    };
    // A scope is for managers and viewers, of the company's facilities.
    let (s, body) = app_post(
        &app,
        "/api/v1/api-keys",
        json!({ "name": "x", "role": "admin", "facility_ids": [north] }),
    )
    .await;
    assert_eq!(s, 422, "{body}");
    let other = app.create_tenant("Other Co").await;
    let foreign = app.create_facility_as(&other, "Elsewhere").await;
    let (s, body) = app_post(
        &app,
        "/api/v1/api-keys",
        json!({ "name": "x", "role": "viewer", "facility_ids": [foreign] }),
    )
    .await;
    assert_eq!(s, 422, "{body}");
    assert!(body["error"]
        .as_str()
        .unwrap()
        .contains("no facility with id"));

    // Lists and totals hold only her facilities.
    let (s, list) = send(&app, &district, Method::GET, "/api/v1/facilities", None).await;
    assert_eq!(s, 200);
    let names: Vec<&str> = list["facilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["North", "South"]);
    let (_, mine) = send(
        &app,
        &district,
        Method::GET,
        "/api/v1/analytics/portfolio",
        None,
    )
    .await;
    let units = |p: &Value, name: &str| {
        p["facilities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["facility_name"] == name)
            .unwrap()["total_units"]
            .as_i64()
            .unwrap()
    };
    assert_eq!(mine["facilities"].as_array().unwrap().len(), 2);
    assert_eq!(
        mine["rollup"]["total_units"].as_i64().unwrap(),
        units(&whole, "North") + units(&whole, "South")
    );
    assert!(
        whole["rollup"]["total_units"].as_i64().unwrap()
            > mine["rollup"]["total_units"].as_i64().unwrap()
    );
    for path in [
        "/api/v1/analytics/revpas",
        "/api/v1/analytics/ecri",
        "/api/v1/analytics/lease-up",
    ] {
        let (s, body) = send(&app, &district, Method::GET, path, None).await;
        assert_eq!(s, 200, "{path}: {body}");
        let text = body.to_string();
        assert!(
            !text.contains(east.as_str()) && !text.contains("\"East\""),
            "{path} shows East: {text}"
        );
        assert!(text.contains(north.as_str()), "{path} shows North");
    }
    let (_, leads_all) = status_json(app.get("/api/v1/analytics/leads").await).await;
    let (_, leads_mine) = send(
        &app,
        &district,
        Method::GET,
        "/api/v1/analytics/leads",
        None,
    )
    .await;
    assert_eq!(leads_all["facilities_reporting"], 3);
    assert_eq!(leads_mine["facilities_reporting"], 2);
    let (_, runs) = send(
        &app,
        &district,
        Method::GET,
        "/api/v1/recommendation-runs/latest",
        None,
    )
    .await;
    assert!(runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["facility_id"] != east.as_str()));

    // East is invisible on every route, as another company's facility is; a push to it (or
    // one that would create a facility) is refused and writes nothing.
    let before = footprint(&app).await;
    for (method, path) in [
        (Method::GET, format!("/api/v1/facilities/{east}")),
        (
            Method::GET,
            format!("/api/v1/facilities/{east}/recommendations?run=0"),
        ),
        (Method::GET, format!("/api/v1/facilities/{east}/history")),
        (
            Method::GET,
            format!("/api/v1/analytics/revpas?facility_id={east}"),
        ),
        (
            Method::PUT,
            format!("/api/v1/facilities/{east}/pricing-settings"),
        ),
        (
            Method::POST,
            format!("/api/v1/facilities/{east}/ecri-batches"),
        ),
    ] {
        let body = (method != Method::GET).then(|| json!({}));
        let (s, answer) = send(&app, &district, method.clone(), &path, body).await;
        assert_eq!(s, 404, "{method} {path}: {answer}");
    }
    for name in ["East", "Brand New"] {
        let (s, answer) = send(
            &app,
            &district,
            Method::POST,
            "/api/v1/sync",
            Some(e2e::payload(name, "2026-11-21", 2, 0, 0)),
        )
        .await;
        assert_eq!(s, 404, "{name}: {answer}");
    }
    assert_eq!(footprint(&app).await, before);
    // Her own facilities take her work.
    let (s, body) = send(
        &app,
        &district,
        Method::POST,
        "/api/v1/sync",
        Some(e2e::payload("North", "2026-11-21", 3, 0, 0)),
    )
    .await;
    assert_eq!(s, 200, "{body}");
    // The push is in the audit log under her key, with its facility and record.
    let pushes = e2e::get_ok(&app, "/api/v1/audit-log?action=sync.push&actor=district").await;
    let push = &pushes["entries"][0];
    assert_eq!(pushes["entries"].as_array().unwrap().len(), 1, "{pushes}");
    assert_eq!(push["facility_id"], north.as_str());
    assert_eq!(push["role"], "manager");
    assert_eq!(
        push["target"],
        format!("sync_record:{}", body["sync_id"].as_str().unwrap())
    );
    // Her jobs are hers to follow; East's are not.
    let job = format!("/api/v1/jobs/{}", body["job"]["id"].as_str().unwrap());
    let (s, _) = send(&app, &district, Method::GET, &job, None).await;
    assert_eq!(s, 200);
    let east_job = format!("/api/v1/jobs/{east_job}");
    let (s, _) = send(&app, &district, Method::GET, &east_job, None).await;
    assert_eq!(s, 404);
    let (s, _) = status_json(app.get(&east_job).await).await;
    assert_eq!(s, 200, "the admin key sees every job");

    // A member with the same scope sees the same on the pages.
    let (s, inv) = app_post(
        &app,
        "/api/v1/team/invitations",
        json!({ "email": "dana@example.com", "role": "manager", "facility_ids": [south, north] }),
    )
    .await;
    assert_eq!(s, 201, "{inv}");
    assert_eq!(inv["facility_ids"], json!(scoped_ids));
    let (s, _) = status_json(
        app.delete(&format!(
            "/api/v1/team/invitations/{}",
            inv["id"].as_str().unwrap()
        ))
        .await,
    )
    .await;
    assert_eq!(s, 200);
    // An address gets one invitation mail per 5 minutes: as if they had passed.
    sqlx::query("UPDATE mail_outbox SET created_at = created_at - interval '6 minutes'")
        .execute(app.db())
        .await
        .unwrap();
    let cookie = invite_and_accept_scoped(&app, "dana@example.com", &[north, south]).await;
    let facilities = app.page_text(&cookie, "/app/facilities").await;
    assert!(
        facilities.contains("North")
            && facilities.contains("South")
            && !facilities.contains("East")
    );
    let portfolio = app.page_text(&cookie, "/app/portfolio").await;
    assert!(portfolio.contains("North") && !portfolio.contains("East"));
    let revpas = app.page_text(&cookie, "/app/analytics/revpas").await;
    assert!(!revpas.contains("East"));
    let http = browserless();
    let r = http
        .get(app.url(&format!("/app/facilities/{east}")))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let r = http
        .get(app.url(&format!("/app/facilities/{north}")))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    // Widening her scope through the API shows East at her next request.
    let team = e2e::get_ok(&app, "/api/v1/team").await;
    let dana = team["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["email"] == "dana@example.com")
        .unwrap();
    assert_eq!(dana["facility_ids"], json!(scoped_ids));
    let dana_id = dana["id"].as_str().unwrap();
    let (s, m) = send(
        &app,
        &app.tenant,
        Method::PATCH,
        &format!("/api/v1/team/members/{dana_id}"),
        Some(json!({ "facility_ids": null })),
    )
    .await;
    assert_eq!((s, m["facility_ids"].clone()), (200, Value::Null));
    let r = http
        .get(app.url(&format!("/app/facilities/{east}")))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    app.run_jobs().await;
}

/// [`invite_and_accept`] with a facility scope.
async fn invite_and_accept_scoped(app: &TestApp, email: &str, facility_ids: &[&String]) -> String {
    let (s, inv) = app_post(
        app,
        "/api/v1/team/invitations",
        json!({ "email": email, "role": "manager", "facility_ids": facility_ids }),
    )
    .await;
    assert_eq!(s, 201, "{inv}");
    let dir = std::env::temp_dir().join(format!("mail-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    app.deliver_mail(&dir).await;
    let sent = mails(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    // Every invitation to the address was mailed; only the newest link still works.
    let mut accepted = Vec::new();
    for (_, text) in sent.iter().filter(|(to, _)| to == email) {
        let link = link_in(text, "/invitations/accept?token=").unwrap();
        let token = link.split("token=").nth(1).unwrap().to_owned();
        let r = browserless()
            .post(app.url("/invitations/accept"))
            .form(&[("token", token.as_str()), ("password", PASSWORD)])
            .send()
            .await
            .unwrap();
        if r.status() == 303 {
            accepted.push(cookie_of(&r));
        } else {
            assert_eq!(r.status(), 422, "a replaced or revoked link is refused");
        }
    }
    assert_eq!(accepted.len(), 1);
    accepted.pop().unwrap()
}

#[tokio::test]
async fn a_setting_saved_on_the_facility_page_is_in_the_audit_log_with_its_values() {
    let app = spawn_app().await;
    let fid = app.create_facility("Main Street").await;
    let cookie = app.session_cookie().await;
    let token = csrf(&app, &cookie, &format!("/app/facilities/{fid}")).await;
    let r = post_form(
        &app,
        &cookie,
        &format!("/app/facilities/{fid}/settings"),
        &[
            ("csrf", token.as_str()),
            ("auto_accept_within_pct", "5"),
            ("round_to_whole", "true"),
        ],
    )
    .await;
    assert_eq!(r.status(), 303);
    let settings = e2e::get_ok(&app, &format!("/api/v1/facilities/{fid}/pricing-settings")).await;
    assert_eq!(settings["settings"]["auto_accept_within_pct"], 5.0);
    // A refused value writes nothing and records nothing.
    let r = post_form(
        &app,
        &cookie,
        &format!("/app/facilities/{fid}/settings"),
        &[("csrf", token.as_str()), ("auto_accept_within_pct", "25")],
    )
    .await;
    assert_eq!(r.status(), 422);
    let log = e2e::get_ok(&app, "/api/v1/audit-log?action=pricing_settings.update").await;
    let entries = log["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{log}");
    assert_eq!(entries[0]["actor"]["name"], app.tenant.email.as_str());
    assert_eq!(entries[0]["facility_id"], fid.as_str());
    assert_eq!(entries[0]["before"], json!({}));
    assert_eq!(
        entries[0]["after"],
        json!({ "auto_accept_within_pct": 5.0 })
    );
    app.run_jobs().await;
}
