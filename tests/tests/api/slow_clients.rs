//! Slow, idle and oversized clients: each is cut off by a documented limit, answered in the
//! JSON envelope where an answer is possible, and none of them keeps other companies from
//! being served. Deadlines here only keep a broken server from hanging the test; the
//! assertions are about what happened, not how fast.

use e2e::raw::{self, RawConn};
use e2e::{spawn_app_with, status_json};
use std::time::{Duration, Instant};

const HANG: Duration = Duration::from_secs(20);

#[tokio::test]
async fn a_head_that_never_ends_is_cut_off_at_the_header_limit() {
    let app = spawn_app_with(&[("HTTP_HEADER_TIMEOUT_MS", "300")]).await;
    // Slowloris: a request line and a header, but never the blank line that ends the head.
    let mut conn = RawConn::connect(&app.server.base).await;
    assert!(conn.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n").await);
    let ended = conn
        .wait_closed(HANG)
        .await
        .expect("the server closes a head that never ends");
    assert!(
        ended.received.is_empty(),
        "no answer to half a head: {:?}",
        String::from_utf8_lossy(&ended.received)
    );
    eprintln!("slowloris head closed after {:?}", ended.after);

    // A head that trickles in, one header every 100 ms, is cut off as well: the limit runs
    // from the head's first byte, not from the last byte received.
    let mut conn = RawConn::connect(&app.server.base).await;
    assert!(conn.send(b"GET /healthz HTTP/1.1\r\n").await);
    let mut sent = 0;
    for i in 0..100 {
        if !conn.send(format!("X-Drip-{i}: 1\r\n").as_bytes()).await {
            break;
        }
        sent += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        sent < 100,
        "the server kept reading a trickling head for 10 s"
    );
    // The server is still serving everyone else.
    let (s, body) = status_json(app.http.get(app.url("/healthz")).send().await.unwrap()).await;
    assert_eq!((s, body["status"].as_str()), (200, Some("ok")));
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_at_the_idle_limit() {
    let app = spawn_app_with(&[
        ("HTTP_IDLE_TIMEOUT_MS", "300"),
        ("HTTP_HEADER_TIMEOUT_MS", "60000"),
    ])
    .await;
    let mut conn = RawConn::connect(&app.server.base).await;
    assert!(conn.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await);
    let (s, body) = conn.response(HANG).await.expect("an answer");
    assert_eq!((s, body["status"].as_str()), (200, Some("ok")));
    // Keep-alive: the connection stays usable, then sits idle until the server closes it.
    let ended = conn
        .wait_closed(HANG)
        .await
        .expect("the server closes an idle keep-alive connection");
    assert!(ended.received.is_empty());
    eprintln!("idle keep-alive connection closed after {:?}", ended.after);
}

#[tokio::test]
async fn oversized_and_malformed_heads_are_answered_in_the_envelope() {
    let app = spawn_app_with(&[("HTTP_MAX_HEADER_BYTES", "8192")]).await;
    let r = app
        .http
        .get(app.url("/healthz"))
        .header("x-padding", "a".repeat(20_000))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 431);
    assert_eq!(r.headers()["content-type"], "application/json");
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(
        body["error"],
        "the request line and headers are larger than 8192 bytes"
    );
    // Just under the limit is served.
    let r = app
        .http
        .get(app.url("/healthz"))
        .header("x-padding", "a".repeat(6_000))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // A head hyper cannot parse gets its 400 in the envelope too.
    let mut conn = RawConn::connect(&app.server.base).await;
    assert!(
        conn.send(b"GET /healthz HTTP/1.1\r\nBroken Header\r\n\r\n")
            .await
    );
    let (s, body) = conn.response(HANG).await.expect("an answer");
    assert_eq!(s, 400);
    assert_eq!(body["error"], "the request is not well-formed HTTP/1.1");
}

#[tokio::test]
async fn a_body_that_stalls_gets_408_and_writes_nothing() {
    let app = spawn_app_with(&[("HTTP_BODY_TIMEOUT_MS", "400")]).await;
    let id = app.create_facility("Main").await;
    let csv = "competitor,size,rate\nA,10x10,100\nB,10x10,110\n";
    let mut conn = RawConn::connect(&app.server.base).await;
    let head = raw::head(
        "POST",
        &format!("/api/v1/facilities/{id}/upload"),
        &app.tenant.api_key,
        "text/csv",
        csv.len(),
    );
    // The head and part of the body, then nothing more.
    assert!(conn.send(head.as_bytes()).await);
    assert!(conn.send(&csv.as_bytes()[..25]).await);
    let (s, body) = conn.response(HANG).await.expect("an answer");
    assert_eq!(s, 408, "{body}");
    assert_eq!(
        body["error"],
        "the request body did not arrive within 400 ms"
    );
    assert!(conn.wait_closed(HANG).await.is_some());
    assert_eq!(app.count("competitor_rates").await, 0);
    // A JSON body that stalls is cut off the same way.
    let mut conn = RawConn::connect(&app.server.base).await;
    let head = raw::head(
        "POST",
        "/api/v1/sync",
        &app.tenant.api_key,
        "application/json",
        500,
    );
    assert!(conn.send(head.as_bytes()).await);
    assert!(conn.send(b"{\"date\": ").await);
    let (s, _) = conn.response(HANG).await.expect("an answer");
    assert_eq!(s, 408);
    assert_eq!(app.count("sync_records").await, 0);
}

#[tokio::test]
async fn slow_uploads_hold_no_database_connection_and_others_are_served() {
    // Three connections in the pool, six uploads stalled halfway through their bodies.
    let app = spawn_app_with(&[
        ("DATABASE_MAX_CONNECTIONS", "3"),
        ("HTTP_BODY_TIMEOUT_MS", "60000"),
    ])
    .await;
    let uploader = app.tenant.clone();
    let id = app.create_facility_as(&uploader, "Uploads").await;
    let other = app.create_tenant("Other Storage").await;
    app.create_facility_as(&other, "Other").await;
    let baseline = other_company_reads(&app, &other).await;
    let csv = "competitor,size,rate\nA,10x10,100\nB,10x10,110\nC,5x5,60\n";
    let split = 30;
    let mut uploads = Vec::new();
    for _ in 0..6 {
        let mut conn = RawConn::connect(&app.server.base).await;
        let head = raw::head(
            "POST",
            &format!("/api/v1/facilities/{id}/upload"),
            &uploader.api_key,
            "text/csv",
            csv.len(),
        );
        assert!(conn.send(head.as_bytes()).await);
        assert!(conn.send(&csv.as_bytes()[..split]).await);
        uploads.push(conn);
    }
    // While they wait, the other company is served, again and again, and the service is ready.
    let latencies = other_company_reads(&app, &other).await;
    // No connection of the api's pool sits in a transaction on behalf of a waiting upload
    // (the uploads wait 60 s for the rest of their bodies; the check settles within 5 s).
    let open = app.api_transactions(Duration::from_secs(5)).await;
    assert!(
        open.is_empty(),
        "a stalled upload holds a transaction: {open:?}"
    );
    eprintln!(
        "other company's GET, median and max of 10: {:?} and {:?} alone, {:?} and {:?} with 6 \
         stalled uploads and a pool of 3",
        baseline[5], baseline[9], latencies[5], latencies[9]
    );
    // The uploads were real: finished, each is stored.
    for mut conn in uploads {
        assert!(conn.send(&csv.as_bytes()[split..]).await);
        let (s, body) = conn.response(HANG).await.expect("an answer");
        assert_eq!(s, 200, "{body}");
    }
    assert_eq!(app.count("competitor_rates").await, 3);
}

/// Ten reads of the other company's facilities, each followed by `/readyz`, all of which must
/// answer 200; the reads' latencies, sorted.
async fn other_company_reads(app: &e2e::TestApp, other: &e2e::Tenant) -> Vec<Duration> {
    let mut latencies = Vec::new();
    for _ in 0..10 {
        let start = Instant::now();
        let r = app
            .req_as(other, reqwest::Method::GET, "/api/v1/facilities")
            .send()
            .await
            .unwrap();
        latencies.push(start.elapsed());
        let (s, body) = status_json(r).await;
        assert_eq!(s, 200, "{body}");
        assert_eq!(body["facilities"][0]["name"], "Other", "{body}");
        let (s, body) = status_json(app.http.get(app.url("/readyz")).send().await.unwrap()).await;
        assert_eq!(s, 200, "{body}");
    }
    latencies.sort();
    latencies
}
