//! The dashboard in a real browser (headless Chromium through chromedriver) against the real
//! api (in process) and, where work is queued, a real `worker` process; one database each.

use crate::data_sources::{borrowed, crm_env, two_facilities, KEY};
use e2e::browser::Browser;
use e2e::receiver::{Receiver, Reply, TestCa};
use e2e::{get_ok, spawn_app, spawn_app_with, status_json, wait_until, TestApp, WorkerProcess};
use reqwest::Method;
use serde_json::json;
use std::time::Duration;

const PASSWORD: &str = "correct horse battery";
const LIMIT: Duration = Duration::from_secs(60);

async fn signed_in(app: &TestApp) -> Browser {
    let b = Browser::start().await;
    b.login(&app.server.base, &app.tenant.email, PASSWORD).await;
    b.wait_path("/app/portfolio").await;
    b
}

/// The `.eml` files of `dir` as (recipient, text) with quoted-printable soft breaks undone.
pub(crate) fn mails(dir: &std::path::Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let eml = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let text = eml
            .replace("=\r\n", "")
            .replace("=\n", "")
            .replace("=3D", "=");
        let to = text
            .lines()
            .find_map(|l| l.strip_prefix("To: "))
            .unwrap_or_default()
            .trim()
            .to_owned();
        out.push((to, text));
    }
    out
}

/// The first link of a mail's text that contains `path`.
pub(crate) fn link_in(text: &str, path: &str) -> Option<String> {
    text.split_whitespace()
        .find(|w| w.starts_with("http") && w.contains(path))
        .map(str::to_owned)
}

#[tokio::test]
async fn sign_up_by_mail_starts_a_trial_and_tells_nothing_of_taken_addresses() {
    let app = spawn_app().await;
    let mail_dir = std::env::temp_dir().join(format!("mail-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&mail_dir).unwrap();
    let b = Browser::start().await;
    let base = &app.server.base;
    b.goto(&format!("{base}/")).await;
    b.wait_path("/login").await;
    b.click("a[href='/signup']").await;
    b.fill("input[name=company]", "Harbor Self Storage").await;
    b.fill("input[name=email]", "Owner@Harbor.example").await;
    b.fill("input[name=password]", "a long enough password")
        .await;
    b.click("form[action='/signup'] button[type=submit]").await;
    b.wait_text("We sent a mail to this address").await;
    let new_address_page = b.text("main").await;
    assert_eq!(
        app.count("companies").await,
        1,
        "no account before the link"
    );

    // The same form with the tenant's own address answers the same page.
    let other = Browser::start().await;
    other.goto(&format!("{base}/signup")).await;
    other.fill("input[name=company]", "Copycat").await;
    other.fill("input[name=email]", &app.tenant.email).await;
    other
        .fill("input[name=password]", "a long enough password")
        .await;
    other
        .click("form[action='/signup'] button[type=submit]")
        .await;
    other.wait_text("We sent a mail to this address").await;
    assert_eq!(other.text("main").await, new_address_page);
    other.close().await;

    // The worker's mail pass: a link for the new address, a note for the taken one.
    assert_eq!(app.deliver_mail(&mail_dir).await, 2);
    let mails = mails(&mail_dir);
    let to_new = mails
        .iter()
        .find(|(to, _)| to.eq_ignore_ascii_case("owner@harbor.example"))
        .expect("a mail to the new address");
    let to_taken = mails
        .iter()
        .find(|(to, _)| *to == app.tenant.email)
        .expect("a mail to the owner of the taken address");
    assert!(to_taken.1.contains("already has one"), "{}", to_taken.1);
    assert!(link_in(&to_taken.1, "/signup/confirm").is_none());
    assert!(link_in(&to_taken.1, "/forgot-password").is_some());
    let link = link_in(&to_new.1, "/signup/confirm?token=").expect("a sign-up link");
    assert!(
        link.starts_with(&format!("{base}/signup/confirm?token=")),
        "{link}"
    );
    assert_eq!(app.count("companies WHERE name = 'Copycat'").await, 0);

    // A second request within five minutes sends no second mail.
    let again = post_signup(&app, "Harbor Self Storage", "owner@harbor.example").await;
    assert_eq!(again, 200);
    assert_eq!(app.deliver_mail(&mail_dir).await, 0);

    // Opening the link shows what it creates; the button creates it and signs in.
    b.goto(&link).await;
    b.wait_text("Create the account of Harbor Self Storage")
        .await;
    assert_eq!(
        app.count("companies").await,
        1,
        "opening the link creates nothing"
    );
    b.click("form[action='/signup/confirm'] button[type=submit]")
        .await;
    b.wait_path("/app").await;
    assert_eq!(b.text("header .company").await, "Harbor Self Storage");
    assert_eq!(b.text("#subscription").await, "Trial: 14 days left");
    assert_eq!(b.text("#state").await, "trialing");
    let (state, days): (String, i64) = sqlx::query_as(
        "SELECT subscription_state, round(extract(epoch from trial_ends_at - created_at) / 86400)::bigint FROM companies WHERE name = 'Harbor Self Storage'",
    )
    .fetch_one(app.db())
    .await
    .unwrap();
    assert_eq!((state.as_str(), days), ("trialing", 14));
    // The password given at sign-up is the account's.
    let login = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(format!("{base}/login"))
        .form(&[
            ("email", "owner@harbor.example"),
            ("password", "a long enough password"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 303);
    // The link works once.
    let r = app
        .http
        .post(app.url("/signup/confirm"))
        .form(&[("token", link.split("token=").nth(1).unwrap())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    assert!(r
        .text()
        .await
        .unwrap()
        .contains("is invalid, expired or already used"));
    assert_eq!(
        app.count("companies WHERE name = 'Harbor Self Storage'")
            .await,
        1
    );

    // Logout ends the session: /app sends back to the login page.
    b.click("header form[action='/logout'] button").await;
    b.wait_path("/login").await;
    b.wait_text("You are logged out.").await;
    b.goto(&format!("{base}/app/keys")).await;
    b.wait_path("/login").await;
    assert_eq!(
        app.count("web_sessions").await,
        1,
        "only the plain login's session is left"
    );
    b.close().await;
}

#[tokio::test]
async fn login_refuses_a_wrong_password_and_log_out_everywhere_ends_every_session() {
    let app = spawn_app().await;
    let base = &app.server.base;
    let b = Browser::start().await;
    b.login(base, &app.tenant.email, "not the password").await;
    b.wait_text("Wrong e-mail or password.").await;
    assert_eq!(b.path().await, "/login");
    assert_eq!(app.count("web_sessions").await, 0);

    b.login(base, &app.tenant.email, PASSWORD).await;
    b.wait_path("/app/portfolio").await;
    assert_eq!(b.text("header .company").await, "Acme Storage");
    // A second device, signed in through the same form.
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let r = http
        .post(format!("{base}/login"))
        .form(&[("email", app.tenant.email.as_str()), ("password", PASSWORD)])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"),
        "{cookie}"
    );
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let phone = |path: &str| {
        http.get(format!("{base}{path}"))
            .header("cookie", &cookie)
            .send()
    };
    assert_eq!(phone("/app").await.unwrap().status(), 200);
    assert_eq!(app.count("web_sessions").await, 2);

    b.click("form[action='/app/logout-everywhere'] button")
        .await;
    b.wait_text("You are logged out on every device.").await;
    assert_eq!(app.count("web_sessions").await, 0);
    let r = phone("/app").await.unwrap();
    assert_eq!(r.status(), 303, "the other device is signed out too");
    assert_eq!(r.headers()["location"], "/login");
    b.close().await;
}

#[tokio::test]
async fn login_is_throttled_per_account() {
    let app = spawn_app().await;
    let http = reqwest::Client::new();
    let mut statuses = Vec::new();
    for _ in 0..11 {
        let r = http
            .post(app.url("/login"))
            .form(&[("email", app.tenant.email.as_str()), ("password", "wrong")])
            .send()
            .await
            .unwrap();
        statuses.push(r.status().as_u16());
    }
    assert_eq!(&statuses[..10], &[401; 10]);
    assert_eq!(statuses[10], 429);
    // Even the right password waits now.
    let r = http
        .post(app.url("/login"))
        .form(&[("email", app.tenant.email.as_str()), ("password", PASSWORD)])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    assert!(r.text().await.unwrap().contains("Too many failed attempts"));
}

#[tokio::test]
async fn login_attempts_sent_at_once_stay_within_the_per_account_limit() {
    // Each attempt is counted before its password is checked, so thirty sent together get
    // ten checks between them, not thirty.
    let app = spawn_app().await;
    let http = reqwest::Client::new();
    let attempts = (0..30).map(|_| {
        http.post(app.url("/login"))
            .form(&[("email", app.tenant.email.as_str()), ("password", "wrong")])
            .send()
    });
    let mut statuses: Vec<u16> = futures::future::join_all(attempts)
        .await
        .into_iter()
        .map(|r| r.unwrap().status().as_u16())
        .collect();
    statuses.sort_unstable();
    let checked = statuses.iter().filter(|s| **s == 401).count();
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!((checked, refused), (10, 20), "{statuses:?}");
}

/// A sign-up form post; its status.
async fn post_signup(app: &TestApp, company: &str, email: &str) -> u16 {
    app.http
        .post(app.url("/signup"))
        .form(&[
            ("company", company),
            ("email", email),
            ("password", "a long enough password"),
        ])
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// The link of the reset mail the worker wrote to `dir` (quoted-printable soft breaks undone).
fn reset_link(dir: &std::path::Path) -> Option<String> {
    let file = std::fs::read_dir(dir).ok()?.next()?.ok()?.path();
    let eml = std::fs::read_to_string(file).ok()?;
    let text = eml
        .replace("=\r\n", "")
        .replace("=\n", "")
        .replace("=3D", "=");
    let start = text.find("http")?;
    let link: String = text[start..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    link.contains("/reset-password?token=").then_some(link)
}

#[tokio::test]
async fn a_password_is_reset_through_the_mail_the_service_writes() {
    let app = spawn_app().await;
    let base = app.server.base.clone();
    let mail_dir = std::env::temp_dir().join(format!("mail-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&mail_dir).unwrap();
    let dir = mail_dir.to_str().unwrap().to_owned();
    let _worker = WorkerProcess::start(
        &app.world,
        &[
            ("MAIL_DIR", dir.as_str()),
            ("PUBLIC_BASE_URL", base.as_str()),
        ],
    );
    // Signed in elsewhere with the old password: the reset ends that session.
    let before = signed_in(&app).await;

    let b = Browser::start().await;
    b.goto(&format!("{base}/login")).await;
    b.click("a[href='/forgot-password']").await;
    b.fill("input[name=email]", &app.tenant.email).await;
    b.click("form[action='/forgot-password'] button").await;
    b.wait_text("a link to choose a new password is on its way")
        .await;
    let mut link = None;
    wait_until("the worker writes the reset mail", LIMIT, || {
        link = reset_link(&mail_dir);
        std::future::ready(link.is_some())
    })
    .await;
    let link = link.unwrap();
    assert!(
        link.starts_with(&format!("{base}/reset-password?token=")),
        "{link}"
    );

    b.goto(&link).await;
    b.fill("input[name=password]", "the new password 2026")
        .await;
    b.click("form[action='/reset-password'] button").await;
    b.wait_path("/login").await;
    b.wait_text("Your password is changed.").await;

    // The link works once.
    b.goto(&link).await;
    b.fill("input[name=password]", "yet another password").await;
    b.click("form[action='/reset-password'] button").await;
    b.wait_text("token: is invalid, expired or already used")
        .await;

    b.login(&base, &app.tenant.email, PASSWORD).await;
    b.wait_text("Wrong e-mail or password.").await;
    b.login(&base, &app.tenant.email, "the new password 2026")
        .await;
    b.wait_path("/app/portfolio").await;

    before.goto(&format!("{base}/app")).await;
    before.wait_path("/login").await;
    let _ = std::fs::remove_dir_all(&mail_dir);
    b.close().await;
    before.close().await;
}

#[tokio::test]
async fn a_key_made_in_the_dashboard_works_until_it_is_revoked_there() {
    let app = spawn_app().await;
    let b = signed_in(&app).await;
    let base = &app.server.base;
    b.click("nav a[href='/app/keys']").await;
    b.fill("input[name=name]", "nightly push").await;
    b.click("form[action='/app/keys'] button[type=submit]")
        .await;
    let key = b.text("#new-key-value").await;
    assert!(key.starts_with("spk_"), "{key}");
    assert_eq!(b.text("[data-copy=new-key-value]").await, "Copy");
    let status = |k: String| {
        let http = app.http.clone();
        let url = app.url("/api/v1/status");
        async move {
            http.get(url)
                .bearer_auth(k)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_eq!(status(key.clone()).await, 200);
    // The list shows it by prefix only; the full key is not on the page any more.
    b.goto(&format!("{base}/app/keys")).await;
    let listed = b.text("#keys").await;
    assert!(
        listed.contains("nightly push") && listed.contains(&key[..12]),
        "{listed}"
    );
    assert!(!b.client.source().await.unwrap().contains(&key));

    let id: uuid::Uuid = sqlx::query_scalar("SELECT id FROM api_keys WHERE name = 'nightly push'")
        .fetch_one(app.db())
        .await
        .unwrap();
    b.click(&format!("a[href='/app/keys/{id}/revoke']")).await;
    b.wait_text("This cannot be undone").await;
    b.click(&format!("form[action='/app/keys/{id}/revoke'] button"))
        .await;
    b.wait_text("The key is revoked").await;
    assert_eq!(status(key).await, 401);
    b.close().await;
}

#[tokio::test]
async fn facilities_are_created_edited_and_deleted_with_the_api_rules() {
    let app = spawn_app().await;
    let b = signed_in(&app).await;
    let base = &app.server.base;
    b.goto(&format!("{base}/app/facilities/new")).await;
    b.fill("input[name=name]", "Elm Street").await;
    b.fill("input[name=rentable_sqft]", "-5").await;
    b.click("form[action='/app/facilities'] button[type=submit]")
        .await;
    b.wait_text("rentable_sqft:").await;
    assert_eq!(app.count("facilities").await, 0);
    b.fill("input[name=rentable_sqft]", "52000").await;
    b.click("form[action='/app/facilities'] button[type=submit]")
        .await;
    // The refused form was at this address too: wait for the outcome, not the address.
    b.wait_text("Created.").await;
    let listed = get_ok(&app, "/api/v1/facilities").await;
    assert_eq!(listed["facilities"][0]["name"], "Elm Street");
    assert_eq!(listed["facilities"][0]["rentable_sqft"], 52000.0);
    let id = listed["facilities"][0]["id"].as_str().unwrap().to_owned();

    b.click(&format!("a[href='/app/facilities/{id}/edit']"))
        .await;
    b.fill("input[name=address]", "1 Elm Street, Springfield")
        .await;
    b.click(&format!(
        "form[action='/app/facilities/{id}'] button[type=submit]"
    ))
    .await;
    b.wait_text("Saved.").await;
    assert_eq!(
        get_ok(&app, &format!("/api/v1/facilities/{id}")).await["address"],
        "1 Elm Street, Springfield"
    );
    b.click(&format!("a[href='/app/facilities/{id}/delete']"))
        .await;
    b.click(&format!(
        "form[action='/app/facilities/{id}/delete'] button"
    ))
    .await;
    b.wait_text("Deleted.").await;
    assert_eq!(app.count("facilities").await, 0);
    b.close().await;
}

async fn upload_file(
    b: &Browser,
    base: &str,
    facility: &str,
    name: &str,
    content: &str,
    action: &str,
) {
    upload_as(b, base, facility, "unit_rates", name, content, action).await;
}

/// Uploads a file through the page; `kind` "" lets the page detect it.
async fn upload_as(
    b: &Browser,
    base: &str,
    facility: &str,
    kind: &str,
    name: &str,
    content: &str,
    action: &str,
) {
    let path = std::env::temp_dir().join(format!("{}-{name}", uuid::Uuid::new_v4().simple()));
    std::fs::write(&path, content).unwrap();
    b.goto(&format!("{base}/app/upload")).await;
    b.select("select[name=facility]", facility).await;
    b.select("select[name=kind]", kind).await;
    b.find("input[type=file]")
        .await
        .send_keys(path.to_str().unwrap())
        .await
        .unwrap();
    b.click(&format!("button[name=action][value={action}]"))
        .await;
    // The answer (bad lines, an error, or the preview) is there: the file has been read.
    b.find("#errors, #preview").await;
    let _ = std::fs::remove_file(path);
}

#[tokio::test]
async fn an_upload_with_bad_lines_lists_them_all_and_writes_nothing() {
    let app = spawn_app().await;
    let id = app.create_facility("Elm Street").await;
    let b = signed_in(&app).await;
    let base = &app.server.base;
    let bad = "date,size,tier,street_rate,occupancy_pct\n\
               2026-11-20,10x10,climate,149,91\n\
               2026-11-20,10x10x10,climate,129,90\n\
               2026-11-20,5x5,drive-up,-3,88\n";
    upload_file(&b, base, &id, "bad.csv", bad, "upload").await;
    b.wait_text("2 of 3 rows are invalid; nothing was written")
        .await;
    let rows = b.text("#bad-rows tbody").await;
    let lines: Vec<&str> = rows.lines().collect();
    assert_eq!(lines.len(), 2, "{rows}");
    assert!(lines[0].starts_with("3 size "), "{rows}");
    assert!(lines[1].starts_with("4 street_rate "), "{rows}");
    assert_eq!(app.count("sync_records").await, 0);

    let good = "date,size,tier,street_rate,occupancy_pct\n\
                2026-11-20,10x10,climate,149,91\n\
                2026-11-20,5x5,drive-up,59,88\n";
    upload_file(&b, base, &id, "good.csv", good, "check").await;
    b.wait_text("2 rows checked: all good").await;
    let preview = b.text("#preview").await;
    assert!(
        preview.contains("10x10 climate $149.00 91.0 %"),
        "{preview}"
    );
    assert_eq!(app.count("sync_records").await, 0, "a check writes nothing");
    upload_file(&b, base, &id, "good.csv", good, "upload").await;
    assert!(b
        .wait_text("2 rows uploaded from")
        .await
        .contains("good.csv."));
    let f = get_ok(&app, &format!("/api/v1/facilities/{id}")).await;
    assert_eq!(f["last_sync_date"], "2026-11-20");

    // A JSON file of competitor rates, its kind detected from the fields.
    let rates = json!({ "rows": [
        { "observed_on": "2026-11-20", "competitor": "Public Storage", "size": "10x10", "rate": 139, "promo": null, "source_url": "https://example.com/ps" }
    ]})
    .to_string();
    upload_as(&b, base, &id, "", "rates.json", &rates, "upload").await;
    b.wait_text("1 row uploaded from").await;
    let listed = get_ok(&app, &format!("/api/v1/facilities/{id}/competitor-rates")).await;
    assert!(listed.to_string().contains("Public Storage"), "{listed}");
    b.close().await;
    app.run_jobs().await;
}

#[tokio::test]
async fn a_crm_is_connected_and_pulled_from_the_dashboard() {
    let ca = TestCa::new();
    let env = crm_env(&ca);
    let app = spawn_app_with(&borrowed(&env)).await;
    let crm = Receiver::start(&ca, |_, hit| two_facilities(hit)).await;
    let b = signed_in(&app).await;
    b.click("nav a[href='/app/data-sources']").await;
    let options = b.text("select[name=provider]").await;
    assert!(options.contains("sitelink (coming soon)"), "{options}");
    b.fill("input[name=name]", "Our CRM").await;
    b.fill("input[name=base_url]", &crm.url("")).await;
    b.fill("input[name=api_key]", KEY).await;
    b.click("form[action='/app/data-sources'] button[type=submit]")
        .await;
    b.wait_text("Created.").await;
    let row = b.text("#data-sources tbody tr").await;
    assert!(
        row.contains("••••0042") && row.contains("none yet"),
        "{row}"
    );
    assert!(!b.client.source().await.unwrap().contains(KEY));

    b.click("#data-sources button[type=submit]").await;
    b.wait_text("Pull queued").await;
    app.run_jobs().await;
    assert_eq!(
        get_ok(&app, "/api/v1/data-sources").await["data_sources"][0]["last_pull_status"],
        "succeeded"
    );
    b.client.refresh().await.unwrap();
    assert_eq!(b.text("#data-sources .pull-status").await, "succeeded");
    assert_ne!(b.text("#data-sources .last-pull").await, "never");
    assert_eq!(crm.count(), 2, "the connection test, then the pull");
    assert_eq!(get_ok(&app, "/api/v1/facilities").await["count"], 2);

    // Pause it and give it a new key, from the edit page.
    let id = get_ok(&app, "/api/v1/data-sources").await["data_sources"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    b.click(&format!("a[href='/app/data-sources/{id}/edit']"))
        .await;
    b.fill("input[name=schedule]", "* * * * * *").await;
    b.click(&format!(
        "form[action='/app/data-sources/{id}'] button[type=submit]"
    ))
    .await;
    b.wait_text("once an hour").await;
    b.fill("input[name=schedule]", "0 30 3 * * *").await;
    b.select("select[name=enabled]", "false").await;
    b.fill("input[name=api_key]", "a-new-key-9999").await;
    b.click(&format!(
        "form[action='/app/data-sources/{id}'] button[type=submit]"
    ))
    .await;
    b.wait_text("Saved.").await;
    let source = &get_ok(&app, "/api/v1/data-sources").await["data_sources"][0];
    assert_eq!(source["schedule"], "0 30 3 * * *");
    assert_eq!(source["enabled"], false);
    assert_eq!(source["credential_hint"], "••••9999");
    b.close().await;
}

#[tokio::test]
async fn a_test_ping_shows_in_the_delivery_log() {
    let ca = TestCa::new();
    let env = vec![
        (
            "WEBHOOK_ALLOW_PRIVATE_TARGETS",
            "127.0.0.0/8,::1".to_owned(),
        ),
        ("WEBHOOK_CA_FILE", ca.pem_path().to_owned()),
    ];
    let app = spawn_app_with(&borrowed(&env)).await;
    let receiver = Receiver::start(&ca, |_, _| Reply {
        body: "thanks".to_owned(),
        ..Reply::status(200)
    })
    .await;
    let b = signed_in(&app).await;
    b.click("nav a[href='/app/webhooks']").await;
    b.fill("input[name=url]", "http://plain.example.com/hook")
        .await;
    b.click("form[action='/app/webhooks'] button[type=submit]")
        .await;
    b.wait_text("must be an https:// URL").await;
    b.fill("input[name=url]", &receiver.url("/hooks/pricing"))
        .await;
    b.click("form[action='/app/webhooks'] button[type=submit]")
        .await;
    let secret = b.text("#secret-value").await;
    assert!(!secret.is_empty());
    b.click("#subscriptions button[type=submit]").await;
    b.wait_text("Test ping queued").await;
    app.run_jobs().await;
    assert_eq!(receiver.count(), 1, "the ping is delivered");
    assert_eq!(
        app.count("webhook_deliveries WHERE status = 'complete'")
            .await,
        1
    );
    b.goto(&format!("{}/app/webhooks?status=complete", app.server.base))
        .await;
    let row = b.text("#deliveries tbody tr").await;
    assert!(row.contains("recommendations.ready (test)"), "{row}");
    assert!(
        row.contains("complete") && row.contains("200") && row.contains("thanks"),
        "{row}"
    );
    b.goto(&format!("{}/app/webhooks?status=failed", app.server.base))
        .await;
    b.find("#no-deliveries").await;
    // The receiver checks the signature with the secret the page showed once.
    let hit = &receiver.hits()[0];
    assert_eq!(
        hit.header("x-service-signature").unwrap(),
        e2e::receiver::expected_signature(&secret, &hit.body)
    );
    b.close().await;
}

#[tokio::test]
async fn a_backfill_is_asked_from_the_data_source_page_and_its_pulls_are_listed() {
    let app = spawn_app().await;
    let (s, source) = status_json(
        app.post("/api/v1/data-sources", &json!({ "provider": "generic_json", "verify": false, "name": "Storage CRM", "base_url": "https://crm.example.com/api", "api_key": "read-only-key-4821" }))
            .await,
    )
    .await;
    assert_eq!(s, 201, "{source}");
    let id = source["id"].as_str().unwrap().to_owned();
    let b = signed_in(&app).await;
    b.click("nav a[href='/app/data-sources']").await;
    b.click(&format!("#data-sources a[href='/app/data-sources/{id}']"))
        .await;
    assert_eq!(b.text("#pulls-none").await, "No pull yet.");
    let set = |name: &str, value: &str| {
        format!("document.querySelector(\"#backfill input[name={name}]\").value = '{value}'")
    };
    let today = chrono::Utc::now().date_naive();
    let (from, to) = (
        today - chrono::Duration::days(5),
        today - chrono::Duration::days(2),
    );

    // From without to: refused at the "from" field, with the API's words, and nothing recorded.
    b.script(&set("from", &from.to_string())).await;
    b.click("#backfill button[type=submit]").await;
    let message = b.text("#err-backfill-from").await;
    assert_eq!(message, "from: from and to are given together");
    assert_eq!(
        b.script("return document.querySelector('#backfill input[name=from]').value")
            .await,
        json!(from.to_string())
    );
    assert_eq!(app.count("crm_pulls").await, 0);
    // More than 90 days: refused at "to".
    b.script(&set(
        "to",
        &(from + chrono::Duration::days(120)).to_string(),
    ))
    .await;
    b.script(&set("from", &from.to_string())).await;
    b.click("#backfill button[type=submit]").await;
    assert!(b.text("#err-backfill-to").await.starts_with("to: "));
    assert_eq!(app.count("crm_pulls").await, 0);

    // A valid range is queued and listed as the API lists it.
    b.script(&set("from", &from.to_string())).await;
    b.script(&set("to", &to.to_string())).await;
    b.click("#backfill button[type=submit]").await;
    b.wait_text("Pull queued").await;
    let pulls = get_ok(&app, &format!("/api/v1/data-sources/{id}/pulls")).await;
    let pull = &pulls["pulls"][0];
    assert_eq!(pull["date_from"], from.to_string());
    assert_eq!(pull["date_to"], to.to_string());
    let row = format!("#pulls tr[data-pull-id='{}']", pull["id"].as_str().unwrap());
    assert_eq!(
        b.text(&format!("{row} .pull-dates")).await,
        format!("{from} to {to}")
    );
    assert_eq!(
        b.text(&format!("{row} .pull-status")).await,
        pull["status"].as_str().unwrap()
    );
    assert_eq!(
        b.text(&format!("{row} .pull-trigger")).await,
        pull["trigger"].as_str().unwrap().replace('_', " ")
    );
    b.close().await;
    app.run_jobs().await;
}

#[tokio::test]
async fn another_companys_pages_answer_404_and_a_form_without_its_token_is_refused() {
    let app = spawn_app().await;
    let other = app.create_tenant("Other Storage").await;
    let theirs = {
        let (s, f) = status_json(
            app.req_as(&other, Method::POST, "/api/v1/facilities")
                .json(&json!({ "name": "Their Facility" }))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(s, 201);
        f["id"].as_str().unwrap().to_owned()
    };
    let their_key: uuid::Uuid = sqlx::query_scalar("SELECT id FROM api_keys WHERE company_id = $1")
        .bind(other.company_id)
        .fetch_one(app.db())
        .await
        .unwrap();
    let b = signed_in(&app).await;
    let base = &app.server.base;
    for path in [
        format!("/app/facilities/{theirs}/edit"),
        format!("/app/facilities/{theirs}/delete"),
        format!("/app/keys/{their_key}/revoke"),
        format!("/app/webhooks/{theirs}/delete"),
        format!("/app/data-sources/{theirs}/edit"),
        "/app/facilities/not-an-id/edit".to_owned(),
    ] {
        b.goto(&format!("{base}{path}")).await;
        b.wait_text("belongs to another account").await;
        assert!(!b.client.source().await.unwrap().contains("Their Facility"));
    }
    b.goto(&format!("{base}/app/facilities")).await;
    assert!(!b.text("main").await.contains("Their Facility"));

    // A form whose token was taken out is refused, and nothing is written.
    b.goto(&format!("{base}/app/keys")).await;
    b.fill("input[name=name]", "forged").await;
    b.script("document.querySelector(\"form[action='/app/keys'] input[name=csrf]\").remove()")
        .await;
    b.click("form[action='/app/keys'] button[type=submit]")
        .await;
    b.wait_text("security token is missing or stale").await;
    assert_eq!(app.count("api_keys WHERE name = 'forged'").await, 0);
    // A stale token is refused as well.
    b.goto(&format!("{base}/app/keys")).await;
    b.fill("input[name=name]", "forged").await;
    b.script(
        "document.querySelector(\"form[action='/app/keys'] input[name=csrf]\").value = 'stale'",
    )
    .await;
    b.click("form[action='/app/keys'] button[type=submit]")
        .await;
    b.wait_text("security token is missing or stale").await;
    assert_eq!(app.count("api_keys WHERE name = 'forged'").await, 0);
    b.close().await;
}

#[tokio::test]
async fn pages_carry_security_headers_and_fit_a_phone() {
    let app = spawn_app().await;
    let r = app.http.get(app.url("/login")).send().await.unwrap();
    let h = r.headers();
    let csp = h["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"),
        "{csp}"
    );
    assert!(!csp.contains("unsafe-inline"));
    assert_eq!(h["x-frame-options"], "DENY");
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(h["referrer-policy"], "no-referrer");
    let html = r.text().await.unwrap();
    assert!(!html.contains("<script>"), "no inline script");
    let htmx = html
        .split("src=\"")
        .map(|s| s.split('"').next().unwrap())
        .find(|s| s.starts_with("/assets/htmx-"))
        .unwrap()
        .to_owned();
    let r = app.http.get(app.url(&htmx)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    assert!(r.text().await.unwrap().contains("htmx"));
    // The API keeps its JSON 404.
    let (s, body) = status_json(app.http.get(app.url("/api/v1/nope")).send().await.unwrap()).await;
    assert_eq!(s, 404);
    assert!(body["error"].is_string());

    // 390 px wide: nothing scrolls sideways, and the keyboard reaches the skip link first.
    let phone = Browser::start_sized(390, 844).await;
    phone
        .login(&app.server.base, &app.tenant.email, PASSWORD)
        .await;
    phone.wait_path("/app/portfolio").await;
    for path in [
        "/app",
        "/app/keys",
        "/app/upload",
        "/app/webhooks",
        "/app/data-sources",
    ] {
        phone.goto(&format!("{}{path}", app.server.base)).await;
        let wide = phone
            .script("return document.documentElement.scrollWidth - window.innerWidth")
            .await;
        assert!(wide.as_i64().unwrap() <= 0, "{path} is {wide} px too wide");
    }
    let first = phone
        .script(
            "return document.querySelector('a[href], button, input, select, textarea').textContent",
        )
        .await;
    assert_eq!(first, "Skip to content", "the first stop of the Tab key");
    phone.close().await;
}

/// Screenshots of the main pages on demo data (8 facilities x 30 days, as `scripts/dev` seeds
/// more of). They go to `SCREENSHOTS_DIR` when set (`docs/screenshots` for the README), else to
/// a temporary folder; either way each must be a real picture.
#[tokio::test]
async fn screenshots_of_the_main_pages() {
    let app = spawn_app().await;
    let today = chrono::Utc::now().date_naive();
    jobs::seed::seed_bulk(app.db(), app.tenant.company_id.into(), 8, 30, today, 2)
        .await
        .unwrap();
    let (s, _) = status_json(
        app.post("/api/v1/api-keys", &json!({ "name": "crm nightly push" }))
            .await,
    )
    .await;
    assert_eq!(s, 201);
    let email = "revenue@demo-storage.example";
    sqlx::query("UPDATE users SET email = $1")
        .bind(email)
        .execute(app.db())
        .await
        .unwrap();
    sqlx::query("UPDATE companies SET name = 'Demo Storage Co' WHERE id = $1")
        .bind(app.tenant.company_id)
        .execute(app.db())
        .await
        .unwrap();
    // A connected CRM and a webhook whose test ping waits for the worker, so those pages show rows.
    let (s, _) = status_json(
        app.post("/api/v1/data-sources", &json!({ "provider": "generic_json", "verify": false, "name": "Storage CRM", "base_url": "https://crm.example.com/api", "api_key": "read-only-key-4821" }))
            .await,
    )
    .await;
    assert_eq!(s, 201);
    let (s, hook) = status_json(
        app.post(
            "/api/v1/webhooks",
            &json!({ "url": "https://rates.example.com/hooks/pricing" }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201);
    let (s, _) = status_json(
        app.post(
            &format!("/api/v1/webhooks/{}/test", hook["id"].as_str().unwrap()),
            &json!({}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 202);
    // A colleague invited, so the Team page and the audit log show one.
    let (s, _) = status_json(
        app.post(
            "/api/v1/team/invitations",
            &json!({ "email": "district.north@demo-storage.example", "role": "manager" }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201);
    let dir = std::env::var("SCREENSHOTS_DIR").map_or_else(
        |_| std::env::temp_dir().join(format!("shots-{}", uuid::Uuid::new_v4().simple())),
        std::path::PathBuf::from,
    );
    std::fs::create_dir_all(&dir).unwrap();
    let b = Browser::start_sized(1280, 900).await;
    let base = &app.server.base;
    b.goto(&format!("{base}/login")).await;
    b.screenshot(&dir.join("login.png")).await;
    b.login(base, email, PASSWORD).await;
    b.wait_path("/app/portfolio").await;
    // A recommendation run for every facility, so the portfolio and facility pages show one.
    let facilities = get_ok(&app, "/api/v1/facilities").await;
    let ids: Vec<String> = facilities["facilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_owned())
        .collect();
    for id in &ids {
        get_ok(&app, &format!("/api/v1/facilities/{id}/recommendations")).await;
        app.ecri_now(id).await;
    }
    let facility_page = format!("/app/facilities/{}", ids[0]);
    // A draft batch of every suggestion of the first facility, for its page.
    let (s, draft) = status_json(
        app.post(
            &format!("/api/v1/facilities/{}/ecri-batches", ids[0]),
            &json!({}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{draft}");
    let ecri_page = format!("{facility_page}/ecri");
    let batch_page = format!(
        "{facility_page}/ecri-batches/{}",
        draft["id"].as_str().unwrap()
    );
    for (name, path, ready) in [
        ("ecri", ecri_page.as_str(), "#ecri-queue"),
        ("ecri-batch", batch_page.as_str(), "#ecri-batch-sizes"),
        ("analytics-ecri", "/app/analytics/ecri", "#ecri-facilities"),
        (
            "analytics-lease-up",
            "/app/analytics/lease-up",
            "#lease-up-count",
        ),
        ("analytics-leads", "/app/analytics/leads", "#leads-total"),
        ("portfolio", "/app/portfolio", "#kpis"),
        ("facility", facility_page.as_str(), "#sheet"),
        (
            "facility-charts",
            &format!("{facility_page}#charts-h"),
            "svg#chart-occupancy",
        ),
        (
            "analytics-revpas",
            "/app/analytics/revpas",
            "svg#chart-revpaf",
        ),
        (
            "analytics-seasonality",
            "/app/analytics/seasonality",
            "svg#chart-seasonality",
        ),
        ("overview", "/app", "#usage"),
        ("keys", "/app/keys", "#keys"),
        ("facilities", "/app/facilities", "#facilities"),
        ("upload", "/app/upload", "input[type=file]"),
        ("data-sources", "/app/data-sources", "select[name=provider]"),
        ("webhooks", "/app/webhooks", "form[action='/app/webhooks']"),
        ("team", "/app/team", "#members"),
        ("audit", "/app/audit", "#audit"),
    ] {
        b.goto(&format!("{base}{path}")).await;
        b.find(ready).await;
        let file = dir.join(format!("{name}.png"));
        b.screenshot(&file).await;
        let png = std::fs::read(&file).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{name}");
    }
    // The upload page after a file with bad lines.
    let facility = get_ok(&app, "/api/v1/facilities").await["facilities"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let bad = "date,size,tier,street_rate,occupancy_pct\n\
               2026-11-20,10x10,climate,149,91\n\
               2026-11-20,10x10x10,climate,129,90\n\
               2026-11-20,5x5,drive-up,-3,88\n";
    upload_file(&b, base, &facility, "rates.csv", bad, "check").await;
    b.find("#bad-rows").await;
    b.screenshot(&dir.join("upload-errors.png")).await;
    b.goto(&format!("{base}/app")).await;
    assert_eq!(b.text("#usage-facilities").await, "8");
    if std::env::var("SCREENSHOTS_DIR").is_err() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    b.close().await;
    app.run_jobs().await;
}

#[tokio::test]
async fn an_expired_trial_still_logs_in_sees_a_banner_and_is_told_what_needs_a_plan() {
    let app = spawn_app().await;
    let ended = chrono::Utc::now() - chrono::Duration::days(1);
    jobs::tenancy::set_subscription(
        app.db(),
        app.tenant.company_id.into(),
        "trialing",
        Some(ended),
    )
    .await
    .unwrap();
    let b = signed_in(&app).await;
    assert_eq!(b.text("#subscription").await, "Subscription: expired");
    assert!(b
        .text("#lapsed")
        .await
        .contains("no longer gives access to the API"));
    assert_eq!(b.text("#state").await, "expired");
    // Keys can still be listed and revoked, as through the API.
    b.click("nav a[href='/app/keys']").await;
    assert!(b.text("#keys").await.contains("default"));
    // Creating one needs a plan, as through the API (402).
    let keys_before = app.count("api_keys").await;
    b.fill("form[action='/app/keys'] input[name=name]", "lapsed")
        .await;
    b.click("form[action='/app/keys'] button[type=submit]")
        .await;
    b.wait_text("choose a plan to do this").await;
    assert_eq!(app.count("api_keys").await, keys_before);
    // Creating a facility needs a plan: the page says so, and nothing is written.
    b.goto(&format!("{}/app/facilities/new", app.server.base))
        .await;
    b.fill("input[name=name]", "Elm Street").await;
    b.click("form[action='/app/facilities'] button[type=submit]")
        .await;
    b.wait_text("choose a plan to do this").await;
    assert_eq!(app.count("facilities").await, 0);
    b.close().await;
}
