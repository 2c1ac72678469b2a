//! Input that costs more than it should: a login address of a megabyte, a move-in date in the
//! year 0, and an audit export that ignored its page arguments.

use e2e::{spawn_app, status_json};
use serde_json::json;

#[tokio::test]
async fn a_login_with_a_huge_address_leaves_no_long_redis_key_and_throttle_keys_hold_no_address() {
    let app = spawn_app().await;
    let http = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let huge = format!("{}@example.com", "a".repeat(1_000_000));
    let r = http
        .post(app.url("/login"))
        .form(&[("email", huge.as_str()), ("password", "whatever it is")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401, "the usual failed login");
    assert!(r
        .text()
        .await
        .unwrap()
        .contains("Wrong e-mail or password."));
    // A failed login with the tenant's own address counts against the account.
    let r = http
        .post(app.url("/login"))
        .form(&[("email", app.tenant.email.as_str()), ("password", "wrong")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);

    let prefix = &app.server.state.config.redis_key_prefix;
    let client = redis::Client::open(e2e::redis_url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}:*"))
        .query_async(&mut conn)
        .await
        .unwrap();
    let logins: Vec<&String> = keys.iter().filter(|k| k.contains(":login:")).collect();
    assert!(!logins.is_empty(), "{keys:?}");
    for k in &keys {
        assert!(k.len() <= 200, "a key of {} bytes", k.len());
    }
    let local = app.tenant.email.split('@').next().unwrap();
    assert!(
        logins.iter().all(|k| !k.contains(local)),
        "no address in a key: {logins:?}"
    );
    app.run_jobs().await;
}

#[tokio::test]
async fn a_roll_with_a_move_in_before_1900_is_set_aside() {
    let app = spawn_app().await;
    let yesterday = (chrono::Utc::now().date_naive() - chrono::Duration::days(1)).to_string();
    let (s, r) = status_json(
        app.sync(&json!({
            "facility": {"name": "Old Street"},
            "date": yesterday,
            "unit_types": [{"size": "10x10", "tier": "standard", "street_rate": 130,
                            "total_units": 50, "occupied_units": 45}],
            "tenants": [
                {"tenant_id": "A-1", "size": "10x10", "rent": 120, "move_in_date": "2024-02-01"},
                {"tenant_id": "B-2", "size": "10x10", "rent": 120, "move_in_date": "0000-01-01"}
            ]
        }))
        .await,
    )
    .await;
    assert_eq!(s, 200, "{r}");
    assert!(r.get("rent_roll").is_none(), "{r}");
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("tenants[1].move_in_date") && warnings.contains("1900"),
        "{warnings}"
    );
    assert_eq!(app.count("rent_roll_tenants").await, 0);
    app.run_jobs().await;
}

async fn csv(app: &e2e::TestApp, q: &str) -> (u16, String) {
    let r = app
        .get(&format!("/api/v1/audit-log.csv?action=facility.create{q}"))
        .await;
    let status = r.status().as_u16();
    (status, r.text().await.unwrap())
}

#[tokio::test]
async fn the_audit_csv_honours_limit_and_before() {
    let app = spawn_app().await;
    for i in 0..5 {
        app.create_facility(&format!("F{i}")).await;
    }
    let page = e2e::get_ok(&app, "/api/v1/audit-log?action=facility.create&limit=2").await;
    let ids: Vec<i64> = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids.len(), 2);
    let next = page["next"].as_i64().unwrap();
    let rows = |text: &str| text.lines().skip(1).count();
    let (s, all) = csv(&app, "").await;
    assert_eq!((s, rows(&all)), (200, 5), "{all}");
    let (s, two) = csv(&app, "&limit=2").await;
    assert_eq!((s, rows(&two)), (200, 2), "{two}");
    let (s, rest) = csv(&app, &format!("&before={next}")).await;
    assert_eq!((s, rows(&rest)), (200, 3), "{rest}");
    let (s, one) = csv(&app, &format!("&before={next}&limit=1")).await;
    assert_eq!((s, rows(&one)), (200, 1), "{one}");
    // The page's own rows, in the same order, are the CSV's first.
    assert_eq!(all.lines().nth(1), two.lines().nth(1));
    let (s, bad) = csv(&app, "&limit=0").await;
    assert_eq!(s, 422, "{bad}");
    assert!(bad.contains("limit"), "{bad}");
    app.run_jobs().await;
}
