//! Uploads check everything before they write, write in one transaction, merge into a day that
//! already has a record, stop when the client leaves, and keep their answers small.

use e2e::logs::LogCapture;
use e2e::raw::{self, RawConn};
use e2e::{push_ok, spawn_app, status_json, wait_until};
use reqwest::Method;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const HANG: Duration = Duration::from_secs(30);

async fn upload(app: &e2e::TestApp, id: &str, query: &str, ct: &str, body: String) -> (u16, Value) {
    status_json(
        app.req(
            Method::POST,
            &format!("/api/v1/facilities/{id}/upload{query}"),
        )
        .header("content-type", ct)
        .body(body)
        .send()
        .await
        .unwrap(),
    )
    .await
}

/// (size, tier, street rate) of a facility's unit types on a date.
async fn unit_types(app: &e2e::TestApp, id: &str, date: &str) -> Vec<(String, String, f64)> {
    sqlx::query_as(
        "SELECT size, tier, street_rate FROM sync_unit_types
         WHERE facility_id = $1::uuid AND snapshot_date = $2::date ORDER BY size, tier",
    )
    .bind(id)
    .bind(date)
    .fetch_all(app.db())
    .await
    .unwrap()
}

async fn count_where(app: &e2e::TestApp, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(app.db()).await.unwrap()
}

#[tokio::test]
async fn an_uploaded_day_merges_into_a_pushed_day_and_keeps_everything_else() {
    let app = spawn_app().await;
    let date = "2026-11-20";
    let mut pushed = e2e::payload("Main", date, 4, 6, 3);
    push_ok(&app, pushed.clone()).await;
    let id: String = sqlx::query_scalar("SELECT id::text FROM facilities WHERE name = 'Main'")
        .fetch_one(app.db())
        .await
        .unwrap();
    let before = unit_types(&app, &id, date).await;
    assert_eq!(before.len(), 4);
    // The first pushed type (5x5, climate-0) gets a new rate; 12x12 is new.
    let csv = format!("date,size,tier,street_rate\n{date},5X5,Climate-0,77\n{date},12x12,,199\n");
    let (s, body) = upload(&app, &id, "", "text/csv", csv).await;
    assert_eq!(s, 200, "{body}");
    let day = &body["snapshots"][0];
    assert_eq!(day["merged"], true, "{body}");
    assert_eq!(day["idempotent"], "updated");
    assert_eq!(
        day["unit_types"]["replaced"],
        json!([{"size": "5x5", "tier": "climate-0"}])
    );
    assert_eq!(
        day["unit_types"]["added"],
        json!([{"size": "12x12", "tier": ""}])
    );
    assert_eq!(day["unit_types"]["kept"].as_array().unwrap().len(), 3);
    // The rate-only file changed the 5x5's rate and nothing else of it: its pushed counts
    // and occupancy stay.
    let (rate, occupancy, total, occupied, move_ins): (f64, f64, i32, i32, i32) = sqlx::query_as(
        "SELECT street_rate, occupancy_pct, total_units, occupied_units, move_ins_mtd
         FROM sync_unit_types
         WHERE facility_id = $1::uuid AND snapshot_date = $2::date AND size = '5x5'",
    )
    .bind(&id)
    .bind(date)
    .fetch_one(app.db())
    .await
    .unwrap();
    assert_eq!(
        (rate, occupancy, total, occupied, move_ins),
        (77.0, 85.0, 40, 30, 0)
    );

    // Every pushed figure of the day is still there.
    let rec: Value = sqlx::query_scalar(
        "SELECT json_build_object('occupancy', occupancy_pct, 'move_ins_daily', move_ins_daily,
                    'move_ins_mtd', move_ins_mtd, 'target', move_ins_target_monthly,
                    'move_outs_daily', move_outs_daily, 'move_outs_mtd', move_outs_mtd,
                    'leads', leads_total, 'promotions', json_array_length(promotions::json),
                    'tenant_rents', json_array_length(tenant_rents::json), 'source', source)
         FROM sync_records WHERE facility_id = $1::uuid AND snapshot_date = $2::date",
    )
    .bind(&id)
    .bind(date)
    .fetch_one(app.db())
    .await
    .unwrap();
    assert_eq!(
        rec,
        json!({"occupancy": 88.5, "move_ins_daily": 2, "move_ins_mtd": 21, "target": 40,
               "move_outs_daily": 1, "move_outs_mtd": 15, "leads": 6, "promotions": 1,
               "tenant_rents": 3, "source": "upload"})
    );
    assert_eq!(
        count_where(&app, "SELECT count(*) FROM sync_leads").await,
        2
    );
    assert_eq!(
        count_where(
            &app,
            "SELECT count(*) FROM competitor_rates WHERE sync_id IS NOT NULL"
        )
        .await,
        6
    );
    // Only the uploaded sizes changed.
    let after = unit_types(&app, &id, date).await;
    let mut expected: Vec<(String, String, f64)> = before
        .iter()
        .map(|(s, t, r)| {
            // Matched without case; the uploaded spelling replaces the stored one.
            if s == "5x5" && t == "climate-0" {
                (s.clone(), "Climate-0".to_owned(), 77.0)
            } else {
                (s.clone(), t.clone(), *r)
            }
        })
        .collect();
    expected.push(("12x12".into(), String::new(), 199.0));
    expected.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    assert_eq!(after, expected);
    // The stored payload is the pushed one with the unit types merged.
    let raw: Value =
        sqlx::query_scalar("SELECT raw_payload FROM sync_records WHERE facility_id = $1::uuid")
            .bind(&id)
            .fetch_one(app.db())
            .await
            .unwrap();
    pushed["unit_types"] = raw["unit_types"].clone();
    assert_eq!(raw, pushed);
    assert_eq!(raw["unit_types"].as_array().unwrap().len(), 5);
    app.run_jobs().await;
}

#[tokio::test]
async fn an_upload_is_one_transaction_and_a_retry_duplicates_nothing() {
    let app = spawn_app().await;
    // 2026-11-19 has 1,000 unit types already: one more is over the payload's limit, which
    // only storing finds (every row is good on its own).
    push_ok(&app, e2e::payload("Main", "2026-11-19", 1000, 0, 0)).await;
    let id: String = sqlx::query_scalar("SELECT id::text FROM facilities WHERE name = 'Main'")
        .fetch_one(app.db())
        .await
        .unwrap();
    let jobs_before = count_where(&app, "SELECT count(*) FROM job_runs").await;
    let csv = "date,size,street_rate\n2026-11-18,10x10,100\n2026-11-19,9x9,100\n".to_owned();
    let (s, body) = upload(&app, &id, "", "text/csv", csv).await;
    assert_eq!(s, 422, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("rows dated 2026-11-19 (lines 3-3)"),
        "{body}"
    );
    // The first day, stored before the second failed, was rolled back with it.
    assert_eq!(
        count_where(
            &app,
            "SELECT count(*) FROM sync_records WHERE snapshot_date = '2026-11-18'"
        )
        .await,
        0
    );
    assert_eq!(
        count_where(&app, "SELECT count(*) FROM job_runs").await,
        jobs_before
    );
    // A retry of what can be stored records one job per day, once.
    let csv = "date,size,tier,street_rate\n2026-11-18,10x10,,100\n2026-11-19,5x5,climate-0,100\n"
        .to_owned();
    let (s, body) = upload(&app, &id, "", "text/csv", csv).await;
    assert_eq!(s, 200, "{body}");
    let merged: Vec<bool> = body["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["merged"].as_bool().unwrap())
        .collect();
    assert_eq!(merged, [false, true]);
    assert_eq!(
        count_where(&app, "SELECT count(*) FROM job_runs WHERE kind = 'ingest'").await,
        jobs_before + 2
    );
    app.run_jobs().await;
}

#[tokio::test]
async fn more_rows_than_the_limit_are_refused_with_413_and_nothing_is_written() {
    let app = spawn_app().await;
    let id = app.create_facility("Main").await;
    let mut csv = String::from("competitor,size,rate\n");
    for i in 0..100_001 {
        csv.push_str(&format!("C{i},10x10,100\n"));
    }
    let (s, body) = upload(&app, &id, "", "text/csv", csv).await;
    assert_eq!(s, 413, "{body}");
    assert_eq!(
        body["error"],
        "an upload may have at most 100000 rows; split the file"
    );
    let rows: Vec<Value> = (0..100_001)
        .map(|i| json!({"competitor": format!("C{i}"), "size": "10x10", "rate": 100}))
        .collect();
    let (s, body) = upload(
        &app,
        &id,
        "",
        "application/json",
        json!({ "rows": rows }).to_string(),
    )
    .await;
    assert_eq!(s, 413, "{body}");
    assert_eq!(app.count("competitor_rates").await, 0);
    // A body declared larger than the CSV limit is refused before any of it is read.
    let mut conn = RawConn::connect(&app.server.base).await;
    let head = raw::head(
        "POST",
        &format!("/api/v1/facilities/{id}/upload"),
        &app.tenant.api_key,
        "text/csv",
        64 * 1024 * 1024 + 1,
    );
    assert!(conn.send(head.as_bytes()).await);
    assert!(conn.send(b"competitor,size,rate\n").await);
    let (s, body) = conn.response(HANG).await.expect("an answer");
    assert_eq!(s, 413, "{body}");
    assert_eq!(body["error"], "a CSV upload may be at most 64 MiB");
}

#[tokio::test]
async fn a_million_column_header_gets_a_short_answer_before_it_is_split() {
    let app = spawn_app().await;
    let id = app.create_facility("Main").await;
    let header: Vec<String> = (0..1_000_000).map(|i| format!("c{i}")).collect();
    let csv = format!("{}\n", header.join(","));
    let (s, body) = upload(&app, &id, "", "text/csv", csv.clone()).await;
    assert_eq!(s, 422);
    let text = body.to_string();
    assert!(text.len() < 4_096, "{} bytes", text.len());
    // 6.9 MB of column names: refused before it is split into a million columns.
    assert!(
        text.contains("the header row is longer than 64 KiB"),
        "{text}"
    );
    let (s, body) = upload(&app, &id, "?kind=unit_rates", "text/csv", csv).await;
    assert_eq!(s, 422);
    assert!(body.to_string().len() < 4_096);
    // A header just under the limit (about 9,000 columns) is read: the kind cannot be told,
    // and the answer names a few columns and counts the rest.
    let header: Vec<String> = (0..9_000).map(|i| format!("c{i}")).collect();
    let csv = format!("{}\n", header.join(","));
    assert!(csv.len() < 64 * 1024);
    let (s, body) = upload(&app, &id, "", "text/csv", csv).await;
    assert_eq!(s, 422);
    let text = body.to_string();
    assert!(
        text.contains("c98, c99 and 8900 more); pass kind"),
        "{text}"
    );
    // Ignored columns: the first 100 are named, the rest counted.
    let extra: Vec<String> = (0..1_000).map(|i| format!("x{i}")).collect();
    let csv = format!(
        "size,street_rate,{}\n10x10,100{}\n",
        extra.join(","),
        ",".repeat(1_000)
    );
    let (s, body) = upload(&app, &id, "?date=2026-11-20", "text/csv", csv).await;
    assert_eq!(s, 200, "{body}");
    let warnings = body["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 101);
    assert_eq!(
        warnings[100],
        "900 more columns are not used for unit_rates and were ignored"
    );
    // Bad rows: the first 100 are listed, all are counted.
    let mut csv = String::from("competitor,size,rate\n");
    for i in 0..150 {
        csv.push_str(&format!("C{i},10x10,-1\n"));
    }
    let (s, body) = upload(&app, &id, "", "text/csv", csv).await;
    assert_eq!(s, 422);
    assert_eq!(body["error_count"], 150);
    assert_eq!(body["errors"].as_array().unwrap().len(), 100);
    app.run_jobs().await;
}

/// A competitor-rates CSV of `rows` good rows (and a bad last row when `bad_last`).
fn competitor_csv(rows: usize, bad_last: bool) -> String {
    let mut csv = String::from("observed_on,competitor,size,rate\n");
    for i in 0..rows {
        csv.push_str(&format!(
            "2026-11-20,Competitor {i},10x10,{}\n",
            100 + i % 50
        ));
    }
    if bad_last {
        csv.push_str("2026-11-20,Broken,10x10,not a number\n");
    }
    csv
}

/// Pushes a day with competitor observations for the facility while an upload to it is open:
/// it must not wait for the upload.
async fn push_while_open(app: &e2e::TestApp) {
    let (s, body) = status_json(app.sync(&e2e::payload("Main", "2026-11-20", 2, 3, 0)).await).await;
    assert_eq!(s, 200, "{body}");
    // The upload stays open for as long as the test keeps its connection; the check settles
    // within 5 s.
    let open = app
        .api_transactions(std::time::Duration::from_secs(5))
        .await;
    assert!(
        open.is_empty(),
        "an open upload holds a transaction: {open:?}"
    );
}

#[tokio::test]
async fn a_bad_last_row_writes_nothing_and_the_facility_is_never_locked() {
    let app = spawn_app().await;
    push_ok(&app, e2e::payload("Main", "2026-11-19", 2, 0, 0)).await;
    let id: String = sqlx::query_scalar("SELECT id::text FROM facilities WHERE name = 'Main'")
        .fetch_one(app.db())
        .await
        .unwrap();
    let csv = competitor_csv(90_000, true);
    let half = csv.len() / 2;
    let mut conn = RawConn::connect(&app.server.base).await;
    let head = raw::head(
        "POST",
        &format!("/api/v1/facilities/{id}/upload"),
        &app.tenant.api_key,
        "text/csv",
        csv.len(),
    );
    assert!(conn.send(head.as_bytes()).await);
    assert!(conn.send(&csv.as_bytes()[..half]).await);
    push_while_open(&app).await;
    assert!(conn.send(&csv.as_bytes()[half..]).await);
    let (s, body) = conn.response(HANG).await.expect("an answer");
    assert_eq!(s, 422, "{body}");
    assert_eq!(body["error_count"], 1);
    assert_eq!(body["errors"][0]["line"], 90_002);
    assert_eq!(
        count_where(
            &app,
            "SELECT count(*) FROM competitor_rates WHERE source = 'upload'"
        )
        .await,
        0
    );
    assert_eq!(
        count_where(
            &app,
            "SELECT count(*) FROM competitor_rates WHERE sync_id IS NOT NULL"
        )
        .await,
        3
    );
    app.run_jobs().await;
}

#[tokio::test]
async fn an_upload_abandoned_mid_body_stops_and_writes_nothing() {
    let logs = LogCapture::start();
    let app = spawn_app().await;
    push_ok(&app, e2e::payload("Main", "2026-11-19", 2, 0, 0)).await;
    let id: String = sqlx::query_scalar("SELECT id::text FROM facilities WHERE name = 'Main'")
        .fetch_one(app.db())
        .await
        .unwrap();
    let path = format!("/api/v1/facilities/{id}/upload");
    let csv = competitor_csv(90_000, false);
    let mut conn = RawConn::connect(&app.server.base).await;
    let head = raw::head("POST", &path, &app.tenant.api_key, "text/csv", csv.len());
    assert!(conn.send(head.as_bytes()).await);
    assert!(conn.send(&csv.as_bytes()[..csv.len() * 2 / 3]).await);
    push_while_open(&app).await;
    assert!(logs.requests(&path).is_empty(), "the upload is still open");
    // The client goes away: the server stops reading and answers nobody.
    let left = Instant::now();
    conn.close();
    wait_until("the abandoned upload's request ends", HANG, || async {
        !logs.requests(&path).is_empty()
    })
    .await;
    let stopped = left.elapsed();
    let line = &logs.requests(&path)[0];
    assert_eq!(line["fields"]["status"], 422, "{line}");
    eprintln!("abandoned upload: work stopped {stopped:?} after the client left (log: {line})");
    assert_eq!(
        count_where(
            &app,
            "SELECT count(*) FROM competitor_rates WHERE source = 'upload'"
        )
        .await,
        0
    );
    // The same with only the head and a few rows sent: the time is the server noticing.
    let mut conn = RawConn::connect(&app.server.base).await;
    assert!(conn.send(head.as_bytes()).await);
    assert!(conn.send(&csv.as_bytes()[..2_000]).await);
    push_while_open(&app).await;
    let left = Instant::now();
    conn.close();
    wait_until(
        "the second abandoned upload's request ends",
        HANG,
        || async { logs.requests(&path).len() == 2 },
    )
    .await;
    eprintln!(
        "abandoned upload with 2 kB sent: work stopped {:?} after the client left",
        left.elapsed()
    );
    assert_eq!(logs.requests(&path)[1]["fields"]["status"], 422);
    // Nothing of the upload is left behind: the facility takes an upload at once.
    let (s, body) = upload(&app, &id, "", "text/csv", competitor_csv(3, false)).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["inserted"], 3);
    app.run_jobs().await;
}
