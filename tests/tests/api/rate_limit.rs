//! Limits per company: 120 requests a minute in general, 60 a minute for the sync, shared by
//! every api process through Redis. The limiter is GCRA: a company may spend the whole budget
//! at once, and it refills smoothly at limit/60 s per second. So after the first `limit`
//! requests (which always pass), at most one more request per refill interval elapsed can pass;
//! the assertions bound the count by the elapsed time instead of assuming a fast machine.

use e2e::{payload, spawn_app_with, status_json, Server, TestApp};
use reqwest::{Method, Response};
use serde_json::Value;
use std::time::{Duration, Instant};

const LIMITS: [(&str, &str); 2] = [
    ("RATE_LIMIT_PER_MINUTE", "120"),
    ("RATE_LIMIT_SYNC_PER_MINUTE", "60"),
];

/// Sends requests until the first 429 (at most `cap`); returns the successes before it, the
/// 429 response and the time the run took.
async fn until_limited<F, Fut>(cap: usize, mut send: F) -> (usize, Response, Duration)
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = Response>,
{
    let start = Instant::now();
    for i in 0..cap {
        let r = send(i).await;
        if r.status() == 429 {
            return (i, r, start.elapsed());
        }
        assert!(r.status().is_success(), "request {i}: {}", r.status());
    }
    panic!("no 429 within {cap} requests");
}

fn header(r: &Response, name: &str) -> u64 {
    r.headers()
        .get(name)
        .unwrap_or_else(|| panic!("{name} missing"))
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// At most one extra success per refill interval elapsed (plus one for the interval in flight).
fn assert_within_budget(successes: usize, limit: usize, elapsed: Duration) {
    let interval = 60.0 / limit as f64;
    let refills = (elapsed.as_secs_f64() / interval).floor() as usize + 1;
    assert!(successes >= limit, "only {successes} of {limit} passed");
    assert!(
        successes <= limit + refills,
        "{successes} passed in {elapsed:?}, limit {limit}"
    );
}

async fn assert_429(r: Response) {
    assert!(header(&r, "retry-after") >= 1);
    assert_eq!(header(&r, "ratelimit-remaining"), 0);
    let (_, body): (u16, Value) = status_json(r).await;
    assert!(
        body["error"].as_str().unwrap().contains("rate limit"),
        "{body}"
    );
}

#[tokio::test]
async fn the_121st_request_in_a_minute_is_429_with_retry_after() {
    let app = spawn_app_with(&LIMITS).await;
    let first = app.get("/api/v1/facilities").await;
    assert_eq!(header(&first, "ratelimit-limit"), 120);
    assert_eq!(header(&first, "ratelimit-remaining"), 119);
    assert!(header(&first, "ratelimit-reset") >= 1);
    let (n, limited, elapsed) = until_limited(400, |_| app.get("/api/v1/facilities")).await;
    assert_within_budget(n + 1, 120, elapsed);
    assert_eq!(header(&limited, "ratelimit-limit"), 120);
    assert_429(limited).await;

    // Sync has a budget of its own, and another company is unaffected.
    assert_eq!(
        app.sync(&payload("A", "2026-11-20", 1, 0, 0))
            .await
            .status(),
        200
    );
    let other = app.create_tenant("Other").await;
    let r = app
        .req_as(&other, Method::GET, "/api/v1/facilities")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn the_61st_sync_in_a_minute_is_429() {
    let app = spawn_app_with(&LIMITS).await;
    let body = payload("A", "2026-11-20", 2, 1, 1);
    let (n, limited, elapsed) = until_limited(200, |_| app.sync(&body)).await;
    assert_within_budget(n, 60, elapsed);
    assert_eq!(header(&limited, "ratelimit-limit"), 60);
    assert_429(limited).await;
    // The general budget is still open.
    assert_eq!(app.get("/api/v1/facilities").await.status(), 200);
}

#[tokio::test]
async fn two_api_processes_share_one_budget() {
    let app: TestApp = spawn_app_with(&LIMITS).await;
    let second = Server::start(&app.world, &LIMITS).await;
    let bases = [app.server.base.clone(), second.base.clone()];
    let (n, limited, elapsed) = until_limited(400, |i| {
        let req = app
            .http
            .get(format!("{}/api/v1/facilities", bases[i % 2]))
            .bearer_auth(&app.tenant.api_key);
        async move { req.send().await.unwrap() }
    })
    .await;
    // Both processes served requests, and together they stayed within one budget.
    assert!(n > 2);
    assert_within_budget(n, 120, elapsed);
    assert_429(limited).await;
    second.shutdown().await;
}
