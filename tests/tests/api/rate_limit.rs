//! Limits per company: 120 requests a minute in general, 60 a minute for the sync, shared by
//! every api process through Redis. "N a minute" is N in any rolling 60 s: a company may spend
//! the whole budget at once, and each request frees its slot 60 s after it was made. So within
//! a run shorter than a minute exactly `limit` requests pass; for a (very slow) longer run the
//! assertions allow the slots freed since the start.

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

/// Exactly the budget within a minute; a run longer than a minute may also use slots freed.
fn assert_within_budget(successes: usize, limit: usize, elapsed: Duration) {
    assert!(successes >= limit, "only {successes} of {limit} passed");
    if elapsed < Duration::from_secs(59) {
        assert_eq!(successes, limit, "{successes} passed in {elapsed:?}");
    } else {
        assert!(successes <= 2 * limit, "{successes} passed in {elapsed:?}");
    }
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
    app.run_jobs().await;
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
    app.run_jobs().await;
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

/// The budget holds over any rolling minute, not only from the first request: after the whole
/// budget is spent, a pause of a few seconds frees nothing (a GCRA with the budget as burst
/// let one more request through per 60/limit seconds, about 183 in 32 s for 120 a minute).
#[tokio::test]
async fn a_spent_budget_stays_spent_for_the_rest_of_the_minute() {
    let app = spawn_app_with(&[
        ("RATE_LIMIT_PER_MINUTE", "20"),
        ("RATE_LIMIT_SYNC_PER_MINUTE", "60"),
    ])
    .await;
    let start = Instant::now();
    for i in 0..20 {
        let r = app.get("/api/v1/facilities").await;
        assert_eq!(r.status(), 200, "request {i}");
        assert_eq!(header(&r, "ratelimit-remaining"), 19 - i);
    }
    // Longer than the refill interval of a 20-a-minute GCRA (3 s), twice over.
    tokio::time::sleep(Duration::from_millis(6_500)).await;
    let mut refused = 0;
    for _ in 0..5 {
        let r = app.get("/api/v1/facilities").await;
        if r.status() == 429 {
            // The oldest request leaves the window 60 s after it was made.
            let retry = header(&r, "retry-after");
            assert!((1..=60).contains(&retry), "retry-after {retry}");
            refused += 1;
        }
    }
    if start.elapsed() < Duration::from_secs(59) {
        assert_eq!(refused, 5);
    }
}
