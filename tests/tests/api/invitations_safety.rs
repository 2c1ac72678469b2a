//! Invitations that cannot be turned against anyone: limited per address and per company,
//! mailing no text an outsider chose unquoted, answering alike whether or not the address has
//! an account, and replaced or left behind only under the revoke rule, with an audit entry.

use super::dashboard::{link_in, mails};
use super::team::{invite_and_accept, key_with_role};
use e2e::{spawn_app, status_json, Tenant, TestApp};
use reqwest::Method;
use serde_json::{json, Value};

const EVIL: &str = "URGENT: reset at https://evil.example/login";

pub(crate) async fn invite_as(
    app: &TestApp,
    who: &Tenant,
    email: &str,
    role: &str,
) -> (u16, Value) {
    status_json(
        app.req_as(who, Method::POST, "/api/v1/team/invitations")
            .json(&json!({ "email": email, "role": role }))
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// Every mail due, delivered into a fresh folder: (to, subject, whole text).
pub(crate) async fn delivered(app: &TestApp) -> Vec<(String, String, String)> {
    let dir = std::env::temp_dir().join(format!("mail-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    app.deliver_mail(&dir).await;
    let out = mails(&dir)
        .into_iter()
        .map(|(to, text)| {
            let subject = text
                .lines()
                .find_map(|l| l.strip_prefix("Subject: "))
                .unwrap_or_default()
                .to_owned();
            (to, subject, text)
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// Moves every queued mail `minutes` into the past (as if that time had passed).
async fn age_mail(app: &TestApp, minutes: i32) {
    sqlx::query(
        "UPDATE mail_outbox SET created_at = created_at - make_interval(mins => $1),
             next_attempt_at = next_attempt_at - make_interval(mins => $1)",
    )
    .bind(minutes)
    .execute(app.db())
    .await
    .unwrap();
}

pub(crate) async fn audit_actions(app: &TestApp, prefix: &str) -> Vec<(String, String, String)> {
    let log = e2e::get_ok(app, &format!("/api/v1/audit-log?action={prefix}&limit=500")).await;
    log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_owned(),
                e["actor"]["name"].as_str().unwrap().to_owned(),
                e["target"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn invitation_mail_is_limited_per_address_and_company_and_quotes_what_outsiders_chose() {
    let app = spawn_app().await;
    // A company named, and a key named, to read as a phishing line.
    let evil_co = app.create_tenant(EVIL).await;
    let evil_key = {
        let (s, k) = status_json(
            app.req_as(&evil_co, Method::POST, "/api/v1/api-keys")
                .json(&json!({ "name": EVIL, "role": "admin" }))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(s, 201, "{k}");
        Tenant {
            api_key: k["api_key"].as_str().unwrap().to_owned(),
            ..evil_co.clone()
        }
    };
    let (s, inv) = invite_as(&app, &evil_key, "target@example.com", "viewer").await;
    assert_eq!(s, 201, "{inv}");
    let sent = delivered(&app).await;
    assert_eq!(sent.len(), 1);
    let (to, subject, text) = &sent[0];
    assert_eq!(to, "target@example.com");
    assert!(
        !subject.contains("URGENT") && !subject.contains("evil"),
        "no chosen text in the subject: {subject}"
    );
    let body = text
        .split("\r\n\r\n")
        .skip(1)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        !body.contains("https://evil.example") && !body.contains("evil.example/"),
        "no live link of the chosen text: {body}"
    );
    assert!(
        body.contains("\"URGENT: reset at hxxps://evil[.]example/login\""),
        "the company's name is quoted and its link defused: {body}"
    );
    assert!(
        link_in(&body, "/invitations/accept?token=").is_some(),
        "{body}"
    );

    // Twenty invitations to one address at once: one is sent, the others are told when to
    // come back, and nothing else is written.
    let before = app.count("team_invitations").await;
    let mut sends = Vec::new();
    for _ in 0..20 {
        let (http, url, key) = (
            app.http.clone(),
            app.url("/api/v1/team/invitations"),
            app.tenant.api_key.clone(),
        );
        sends.push(tokio::spawn(async move {
            http.post(url)
                .bearer_auth(key)
                .json(&json!({ "email": "victim@example.com", "role": "viewer" }))
                .send()
                .await
                .unwrap()
        }));
    }
    let mut statuses = Vec::new();
    for s in sends {
        let r = s.await.unwrap();
        let status = r.status().as_u16();
        if status == 429 {
            let wait: u64 = r.headers()["retry-after"]
                .to_str()
                .unwrap()
                .parse()
                .unwrap();
            assert!((1..=300).contains(&wait), "Retry-After {wait}");
            let (_, body) = status_json(r).await;
            assert!(
                body["error"].as_str().unwrap().contains("5 minutes"),
                "{body}"
            );
        }
        statuses.push(status);
    }
    statuses.sort_unstable();
    assert_eq!(statuses, [vec![201], vec![429; 19]].concat());
    assert_eq!(app.count("team_invitations").await, before + 1);
    let sent = delivered(&app).await;
    assert_eq!(
        sent.iter()
            .filter(|(to, ..)| to == "victim@example.com")
            .count(),
        1
    );

    // Five minutes later the address may be invited again (the open invitation replaced).
    age_mail(&app, 6).await;
    let (s, body) = invite_as(&app, &app.tenant, "victim@example.com", "manager").await;
    assert_eq!(s, 201, "{body}");

    // A company sends at most 50 invitations an hour, to any addresses.
    let (mut created, mut refused) = (0, None);
    for i in 0..60 {
        let (s, body) = invite_as(&app, &evil_co, &format!("p{i}@example.com"), "viewer").await;
        match s {
            201 => created += 1,
            429 => {
                refused = Some(body);
                break;
            }
            other => panic!("{other} {body}"),
        }
    }
    // One invitation of the company was sent above.
    assert_eq!(created, 49);
    let refused = refused.expect("the company's limit");
    assert!(
        refused["error"].as_str().unwrap().contains("50 an hour"),
        "{refused}"
    );
    delivered(&app).await;
    app.run_jobs().await;
}

#[tokio::test]
async fn an_address_with_an_account_is_invited_like_any_other_and_its_holder_is_told() {
    let app = spawn_app().await;
    let other = app.create_tenant("Other Co").await;
    let (s_taken, taken) = invite_as(&app, &app.tenant, &other.email, "viewer").await;
    let (s_new, new) = invite_as(&app, &app.tenant, "fresh@example.com", "viewer").await;
    assert_eq!((s_taken, s_new), (201, 201), "{taken} {new}");
    let shape = |v: &Value| {
        let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        (keys, v["role"].clone(), v["invited_by"].clone())
    };
    assert_eq!(shape(&taken), shape(&new));
    // Both are listed alike.
    let team = e2e::get_ok(&app, "/api/v1/team").await;
    assert_eq!(team["invitations"].as_array().unwrap().len(), 2);

    let sent = delivered(&app).await;
    let to = |who: &str| {
        sent.iter()
            .find(|(to, ..)| to == who)
            .unwrap_or_else(|| panic!("no mail to {who}: {sent:?}"))
    };
    let (_, _, fresh) = to("fresh@example.com");
    assert!(link_in(fresh, "/invitations/accept?token=").is_some());
    let (_, subject, note) = to(&other.email);
    assert!(
        link_in(note, "/invitations/accept?token=").is_none(),
        "the holder gets no link: {note}"
    );
    assert!(note.contains("already has an account"), "{note}");
    assert!(!subject.is_empty());
    app.run_jobs().await;
}

/// The CSRF token of a dashboard page.
async fn csrf(app: &TestApp, cookie: &str, path: &str) -> String {
    let html = app.page_text(cookie, path).await;
    let at = html.find("name=\"csrf\" value=\"").expect("a form") + 19;
    html[at..].split('"').next().unwrap().to_owned()
}

pub(crate) async fn invite_on_page(app: &TestApp, cookie: &str, email: &str, role: &str) -> u16 {
    post_team_form(
        app,
        cookie,
        "/app/team/invitations",
        &[("email", email), ("role", role)],
    )
    .await
}

/// Posts a form of the Team page as the signed-in `cookie`, with the page's CSRF token; the
/// status (no redirect followed).
pub(crate) async fn post_team_form(
    app: &TestApp,
    cookie: &str,
    path: &str,
    fields: &[(&str, &str)],
) -> u16 {
    let token = csrf(app, cookie, "/app/team").await;
    let mut form = vec![("csrf", token.as_str())];
    form.extend_from_slice(fields);
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(app.url(path))
        .header("cookie", cookie)
        .form(&form)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

fn open_invitation<'a>(team: &'a Value, email: &str) -> Option<&'a Value> {
    team["invitations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["email"] == email)
}

#[tokio::test]
async fn replacing_an_invitation_follows_the_revoke_rule_and_a_removed_members_invitations_end() {
    let app = spawn_app().await;
    // The owner invites an owner on the Team page; the admin key may not revoke that
    // invitation, and so may not replace it either.
    let owner = app.session_cookie().await;
    assert_eq!(
        invite_on_page(&app, &owner, "boss@example.com", "owner").await,
        303
    );
    let team = e2e::get_ok(&app, "/api/v1/team").await;
    let boss = open_invitation(&team, "boss@example.com").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (s, body) = status_json(
        app.delete(&format!("/api/v1/team/invitations/{boss}"))
            .await,
    )
    .await;
    assert_eq!(s, 403, "{body}");
    age_mail(&app, 6).await;
    let before = app.count("team_invitations").await;
    let (s, body) = invite_as(&app, &app.tenant, "BOSS@example.com", "viewer").await;
    assert_eq!(s, 403, "{body}");
    assert!(body["error"].as_str().unwrap().contains("owner"), "{body}");
    assert_eq!(app.count("team_invitations").await, before);
    let team = e2e::get_ok(&app, "/api/v1/team").await;
    let open = open_invitation(&team, "boss@example.com").unwrap();
    assert_eq!(
        (open["id"].as_str(), open["role"].as_str()),
        (Some(boss.as_str()), Some("owner"))
    );

    // An admin's replacement of an invitation it may revoke is recorded as a revoke.
    let (s, first) = invite_as(&app, &app.tenant, "amy@example.com", "viewer").await;
    assert_eq!(s, 201, "{first}");
    age_mail(&app, 6).await;
    let (s, second) = invite_as(&app, &app.tenant, "amy@example.com", "manager").await;
    assert_eq!(s, 201, "{second}");
    let first_target = format!("invitation:{}", first["id"].as_str().unwrap());
    let second_target = format!("invitation:{}", second["id"].as_str().unwrap());
    let amy: Vec<_> = audit_actions(&app, "invitation.")
        .await
        .into_iter()
        .filter(|(_, _, t)| *t == first_target || *t == second_target)
        .collect();
    assert_eq!(
        amy,
        vec![
            (
                "invitation.create".to_owned(),
                "default".to_owned(),
                first_target.clone()
            ),
            (
                "invitation.revoke".to_owned(),
                "default".to_owned(),
                first_target
            ),
            (
                "invitation.create".to_owned(),
                "default".to_owned(),
                second_target
            ),
        ]
    );

    // An admin who sent an invitation is removed: the invitation ends with them, recorded.
    delivered(&app).await;
    let ada_cookie = invite_and_accept(&app, "ada@example.com", "admin").await;
    assert_eq!(
        invite_on_page(&app, &ada_cookie, "bob@example.com", "viewer").await,
        303
    );
    let team = e2e::get_ok(&app, "/api/v1/team").await;
    let bob = open_invitation(&team, "bob@example.com").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let ada = team["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["email"] == "ada@example.com")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let remover = key_with_role(&app, "cleanup", "admin").await;
    let (s, body) = status_json(
        app.req_as(
            &remover,
            Method::DELETE,
            &format!("/api/v1/team/members/{ada}"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(s, 200, "{body}");
    let team = e2e::get_ok(&app, "/api/v1/team").await;
    assert!(
        open_invitation(&team, "bob@example.com").is_none(),
        "{team}"
    );
    let link = sqlx::query_scalar::<_, Option<chrono::DateTime<chrono::Utc>>>(
        "SELECT revoked_at FROM team_invitations WHERE id = $1",
    )
    .bind(uuid::Uuid::parse_str(&bob).unwrap())
    .fetch_one(app.db())
    .await
    .unwrap();
    assert!(link.is_some(), "the link no longer works");
    let bob_target = format!("invitation:{bob}");
    let revoked: Vec<_> = audit_actions(&app, "invitation.revoke")
        .await
        .into_iter()
        .filter(|(_, _, t)| *t == bob_target)
        .collect();
    assert_eq!(
        revoked,
        vec![(
            "invitation.revoke".to_owned(),
            "cleanup".to_owned(),
            bob_target
        )]
    );
    delivered(&app).await;
    app.run_jobs().await;
}
