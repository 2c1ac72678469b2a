//! An invitation lives only while its sender may send it: a member demoted below admin, an
//! owner made admin (for an owner's invitation) and a revoked key take their open invitations
//! with them, each revoke recorded; and a link whose sender lost that standing without its
//! invitation being revoked (as one sent in the moment of a demotion) is refused when opened
//! or used.

use super::dashboard::link_in;
use super::dashboard_team::member;
use super::invitations_safety::{
    audit_actions, delivered, invite_as, invite_on_page, post_team_form,
};
use super::team::{invite_and_accept, key_with_role};
use e2e::{spawn_app, status_json, TestApp};
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::BTreeMap;

const PASSWORD: &str = "correct horse battery staple";

/// The member id of an address.
async fn member_id(app: &TestApp, email: &str) -> String {
    member(app, email).await["id"].as_str().unwrap().to_owned()
}

/// The invitation links mailed since the last delivery, by address.
async fn mailed_links(app: &TestApp) -> BTreeMap<String, String> {
    delivered(app)
        .await
        .into_iter()
        .filter_map(|(to, _, text)| {
            let link = link_in(&text, "/invitations/accept?token=")?;
            Some((to, link.split("token=").nth(1)?.to_owned()))
        })
        .collect()
}

/// Posts the acceptance form of a link: the status and the page's text.
async fn accept(app: &TestApp, token: &str) -> (u16, String) {
    let r = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(app.url("/invitations/accept"))
        .form(&[("token", token), ("password", PASSWORD)])
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.text().await.unwrap())
}

/// Posts the Team page's role form for a member, as the signed-in `cookie`.
async fn set_role_on_page(app: &TestApp, cookie: &str, member: &str, role: &str) -> u16 {
    post_team_form(
        app,
        cookie,
        &format!("/app/team/members/{member}"),
        &[("role", role)],
    )
    .await
}

fn open(team: &Value) -> Vec<String> {
    let mut out: Vec<String> = team["invitations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["email"].as_str().unwrap().to_owned())
        .collect();
    out.sort();
    out
}

async fn accepted_at_is_null(app: &TestApp, email: &str) -> bool {
    sqlx::query_scalar::<_, bool>(
        "SELECT accepted_at IS NULL FROM team_invitations WHERE email = $1 ORDER BY created_at DESC LIMIT 1",
    )
    .bind(email)
    .fetch_one(app.db())
    .await
    .unwrap()
}

#[tokio::test]
async fn an_invitation_lives_only_while_its_sender_may_send_it() {
    let app = spawn_app().await;
    let owner = app.session_cookie().await;
    // Ada (admin) invites Cal; Olga, made owner, invites Boss as owner and Vic as viewer; an
    // admin key "hr" invites Kim.
    let ada = invite_and_accept(&app, "ada@example.com", "admin").await;
    let olga = invite_and_accept(&app, "olga@example.com", "admin").await;
    let olga_id = member_id(&app, "olga@example.com").await;
    assert_eq!(set_role_on_page(&app, &owner, &olga_id, "owner").await, 303);
    assert_eq!(
        invite_on_page(&app, &ada, "cal@example.com", "viewer").await,
        303
    );
    assert_eq!(
        invite_on_page(&app, &olga, "boss@example.com", "owner").await,
        303
    );
    assert_eq!(
        invite_on_page(&app, &olga, "vic@example.com", "viewer").await,
        303
    );
    let hr = key_with_role(&app, "hr", "admin").await;
    let (s, kim) = invite_as(&app, &hr, "kim@example.com", "viewer").await;
    assert_eq!(s, 201, "{kim}");
    let links = mailed_links(&app).await;
    assert_eq!(links.len(), 4, "{links:?}");
    let team = e2e::get_ok(&app, "/api/v1/team").await;
    assert_eq!(
        open(&team),
        [
            "boss@example.com",
            "cal@example.com",
            "kim@example.com",
            "vic@example.com"
        ]
    );

    // Ada made manager: Cal's invitation ends, recorded as revoked by the key that demoted her.
    let ada_id = member_id(&app, "ada@example.com").await;
    let (s, body) = status_json(
        app.req_as(
            &app.tenant,
            Method::PATCH,
            &format!("/api/v1/team/members/{ada_id}"),
        )
        .json(&json!({ "role": "manager" }))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!((s, body["role"].as_str()), (200, Some("manager")), "{body}");
    // Olga made admin: her owner's invitation ends, her viewer's stays.
    assert_eq!(set_role_on_page(&app, &owner, &olga_id, "admin").await, 303);
    // The key revoked: Kim's invitation ends.
    let keys = e2e::get_ok(&app, "/api/v1/api-keys").await;
    let hr_id = keys["api_keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "hr")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (s, body) = status_json(app.delete(&format!("/api/v1/api-keys/{hr_id}")).await).await;
    assert_eq!(s, 200, "{body}");

    let team = e2e::get_ok(&app, "/api/v1/team").await;
    assert_eq!(open(&team), ["vic@example.com"]);
    let revoked: Vec<(String, String)> = audit_actions(&app, "invitation.revoke")
        .await
        .into_iter()
        .map(|(_, actor, target)| (actor, target))
        .collect();
    assert_eq!(revoked.len(), 3, "{revoked:?}");
    assert_eq!(
        revoked[0].0, "default",
        "Ada's demotion, by the default key"
    );
    assert_eq!(revoked[1].0, app.tenant.email, "Olga's, by the owner");
    assert_eq!(revoked[2].0, "default", "the key's revoke");
    assert_eq!(
        revoked[2].1,
        format!("invitation:{}", kim["id"].as_str().unwrap())
    );

    // The ended links are refused; the one still backed works.
    for email in ["cal@example.com", "boss@example.com", "kim@example.com"] {
        let (s, text) = accept(&app, &links[email]).await;
        assert_eq!(s, 422, "{email}: {text}");
        assert!(accepted_at_is_null(&app, email).await, "{email}");
    }
    let (s, text) = accept(&app, &links["vic@example.com"]).await;
    assert_eq!(s, 303, "{text}");

    // A link whose sender lost the standing without the invitation being revoked (the demotion
    // committed while the invitation was being written) is refused on its page and its form.
    assert_eq!(
        invite_on_page(&app, &olga, "zed@example.com", "viewer").await,
        303
    );
    let zed = mailed_links(&app).await["zed@example.com"].clone();
    sqlx::query("UPDATE users SET role = 'manager' WHERE lower(email) = 'olga@example.com'")
        .execute(app.db())
        .await
        .unwrap();
    let page = app
        .page_text("", &format!("/invitations/accept?token={zed}"))
        .await;
    assert!(page.contains("may no longer invite"), "{page}");
    let (s, text) = accept(&app, &zed).await;
    assert_eq!(s, 422, "{text}");
    assert!(text.contains("may no longer invite"), "{text}");
    assert!(accepted_at_is_null(&app, "zed@example.com").await);
    app.run_jobs().await;
}
