//! Malformed sync bodies. A snapshot that cannot be placed (not a JSON object, no usable date,
//! no facility identification, over a limit) gets the honest status (422, or 413/415) with an
//! error naming the problem, and writes nothing. A field or item that cannot be read is left
//! out, and the answer's `warnings` name it by its JSON path and reason.

use chrono::{Duration, Utc};
use e2e::{spawn_app, status_json};

struct Case {
    name: &'static str,
    body: Vec<u8>,
    content_type: Option<&'static str>,
    /// 200 when the snapshot is stored without what could not be read.
    status: u16,
    /// A fragment the error message (or, for a 200, one of the warnings) must contain.
    error: &'static str,
}

fn case(name: &'static str, body: impl Into<Vec<u8>>, status: u16, error: &'static str) -> Case {
    Case {
        name,
        body: body.into(),
        content_type: Some("application/json"),
        status,
        error,
    }
}

/// A valid payload with `extra` spliced in as further top-level members (`{D}` is a recent date).
fn with(extra: &str) -> String {
    let d = (Utc::now() - Duration::days(2))
        .format("%Y-%m-%d")
        .to_string();
    let extra = extra.replace("{D}", &d);
    if extra.contains("\"facility\"") {
        format!("{{{extra}}}")
    } else if extra.contains("\"date\"") {
        format!(r#"{{"facility": {{"name": "Bad Input"}}, {extra}}}"#)
    } else {
        format!(
            r#"{{"facility": {{"name": "Bad Input"}}, "date": "{d}"{}{extra}}}"#,
            if extra.is_empty() { "" } else { ", " }
        )
    }
}

fn unit(fields: &str) -> String {
    with(&format!(r#""unit_types": [{{{fields}}}]"#))
}

fn cases() -> Vec<Case> {
    let deep = format!(
        r#"{{"date": "2026-11-01", "x": {}{}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let huge_name = format!(
        r#"{{"facility": {{"name": "{}"}}, "date": "2026-11-01"}}"#,
        "n".repeat(10_000)
    );
    let mut invalid_utf8 = with(r#""promotions": [{"name": "PROMO"}]"#).into_bytes();
    let at = invalid_utf8.windows(5).position(|w| w == b"PROMO").unwrap();
    invalid_utf8[at] = 0xff;
    let too_many = with(&format!(
        r#""leads": [{}]"#,
        (0..1001)
            .map(|i| format!(r#"{{"channel": "c{i}", "count": 1}}"#))
            .collect::<Vec<_>>()
            .join(",")
    ));
    // The sync takes up to 4 MiB (a rent roll of 10,000 tenants); one byte more is refused.
    let oversized = with(&format!(r#""note": "{}""#, "x".repeat(4 * 1024 * 1024)));
    vec![
        case("empty body", "", 422, "empty body"),
        case("whitespace body", "  \n", 422, "empty body"),
        case("null", "null", 422, "JSON object"),
        case("array", "[]", 422, "JSON object"),
        case("string", r#""hello""#, 422, "JSON object"),
        case(
            "missing date",
            r#"{"facility": {"name": "X"}}"#,
            422,
            "date: is required",
        ),
        case(
            "month 13",
            with(r#""date": "2026-13-01""#),
            422,
            "date: is not a real calendar date",
        ),
        case(
            "30 February",
            with(r#""date": "2026-02-30""#),
            422,
            "date: is not a real calendar date",
        ),
        case(
            "date without dashes",
            with(r#""date": "20261101""#),
            422,
            "date: must be a date in the form YYYY-MM-DD",
        ),
        case(
            "date as a number",
            with(r#""date": 20261101"#),
            422,
            "date: invalid type",
        ),
        case(
            "date in the future",
            with(r#""date": "2099-01-01""#),
            422,
            "is in the future",
        ),
        case(
            "date before 2000",
            with(r#""date": "1999-12-31""#),
            422,
            "must not be before",
        ),
        case(
            "occupancy as text",
            with(r#""occupancy_pct": "high""#),
            200,
            "occupancy_pct: invalid type",
        ),
        case(
            "occupancy over 100",
            with(r#""occupancy_pct": 100.5"#),
            200,
            "occupancy_pct: must be a percentage",
        ),
        case(
            "negative occupancy",
            with(r#""occupancy_pct": -1"#),
            200,
            "occupancy_pct: must be a percentage",
        ),
        case(
            "negative street rate",
            unit(r#""size": "10x10", "street_rate": -10"#),
            200,
            "unit_types[0].street_rate: must be an amount",
        ),
        case(
            "street rate beyond f64",
            unit(r#""size": "10x10", "street_rate": 1e400"#),
            422,
            "JSON",
        ),
        case(
            "NaN literal",
            with(r#""occupancy_pct": NaN"#),
            422,
            "not valid JSON",
        ),
        case(
            "Infinity literal",
            with(r#""occupancy_pct": Infinity"#),
            422,
            "not valid JSON",
        ),
        case(
            "size without depth",
            unit(r#""size": "10", "street_rate": 1"#),
            200,
            "unit_types[0].size: must be a size",
        ),
        case(
            "size with zero side",
            unit(r#""size": "10x0", "street_rate": 1"#),
            200,
            "unit_types[0].size: sides must be",
        ),
        case(
            "size in words",
            unit(r#""size": "tenxten", "street_rate": 1"#),
            200,
            "unit_types[0]: left out (unit_types[0].size",
        ),
        case(
            "size as a number",
            unit(r#""size": 10, "street_rate": 1"#),
            200,
            "unit_types[0].size: invalid type",
        ),
        case(
            "unit type without rate",
            unit(r#""size": "10x10""#),
            200,
            "unit_types[0].street_rate: is required",
        ),
        case(
            "occupied above total",
            unit(r#""size": "10x10", "street_rate": 1, "total_units": 5, "occupied_units": 6"#),
            200,
            "unit_types[0].occupied_units",
        ),
        case(
            "duplicate unit type",
            with(
                r#""unit_types": [{"size": "10x10", "street_rate": 1}, {"size": "10X10", "street_rate": 2}]"#,
            ),
            200,
            "unit_types[1]: left out (unit_types[1].size: size 10x10",
        ),
        case(
            "unit_types as object",
            with(r#""unit_types": {"size": "10x10"}"#),
            200,
            "unit_types: must be an array, got an object; left out",
        ),
        case(
            "promotion depth over 100",
            with(r#""promotions": [{"name": "P", "depth_pct": 150}]"#),
            200,
            "promotions[0].depth_pct",
        ),
        case(
            "fractional move-ins",
            with(r#""move_ins": {"daily": 2.5}"#),
            200,
            "move_ins.daily: must be a whole number",
        ),
        case(
            "negative move-ins",
            with(r#""move_ins": {"mtd": -3}"#),
            200,
            "move_ins.mtd",
        ),
        case(
            "tenant count as text",
            with(r#""tenant_rents": [{"size": "10x10", "avg_rent": 100, "tenant_count": "many"}]"#),
            200,
            "tenant_rents[0].tenant_count",
        ),
        case(
            "competitor rate null",
            with(r#""competitor_rates": [{"competitor": "C", "size": "10x10", "rate": null}]"#),
            200,
            "competitor_rates[0].rate",
        ),
        case(
            "competitor url not a URL",
            with(
                r#""competitor_rates": [{"competitor": "C", "size": "10x10", "rate": 1, "source_url": "nope"}]"#,
            ),
            200,
            "competitor_rates[0].source_url",
        ),
        case(
            "website ftp",
            with(r#""facility": {"name": "X", "website_url": "ftp://x.example"}, "date": "{D}""#),
            200,
            "facility.website_url",
        ),
        case(
            "negative lead count",
            with(r#""leads": [{"channel": "web", "count": -1}]"#),
            200,
            "leads[0].count",
        ),
        // Counts each within the limit whose facility total is not: the item that takes the
        // total past 10,000,000 is left out (the database's per-size and facility columns, and
        // the monthly sums over them, hold such totals).
        case(
            "unit counts adding up past the limit",
            with(
                r#""unit_types": [{"size": "10x10", "street_rate": 100, "total_units": 6000000},
                                 {"size": "10x10", "tier": "cc", "street_rate": 100, "total_units": 6000000}]"#,
            ),
            200,
            "unit_types[1].total_units: the unit types' total_units would add up to more than 10000000",
        ),
        case(
            "move-ins adding up past the limit across tiers",
            with(
                r#""unit_types": [{"size": "10x10", "street_rate": 100, "move_ins_mtd": 10000000},
                                 {"size": "10x10", "tier": "cc", "street_rate": 100, "move_ins_mtd": 1}]"#,
            ),
            200,
            "unit_types[1].move_ins_mtd",
        ),
        case(
            "tenants adding up past the limit",
            with(
                r#""tenant_rents": [{"size": "10x10", "avg_rent": 100, "tenant_count": 6000000},
                                   {"size": "5x5", "avg_rent": 50, "tenant_count": 6000000}]"#,
            ),
            200,
            "tenant_rents[1].tenant_count: the tenant rents' tenant_count would add up to more than 10000000",
        ),
        case(
            "leads adding up past the limit",
            with(
                r#""leads": [{"channel": "web", "count": 6000000}, {"channel": "phone", "count": 6000000}]"#,
            ),
            200,
            "leads[1].count: the leads' count would add up to more than 10000000",
        ),
        case(
            "duplicate lead channel",
            with(r#""leads": [{"channel": "web", "count": 1}, {"channel": "WEB", "count": 1}]"#),
            200,
            "leads[1].channel",
        ),
        case(
            "too many leads",
            too_many,
            422,
            "leads: at most 1000 entries",
        ),
        case(
            "huge name",
            huge_name,
            422,
            "facility.name: must be at most 200 characters",
        ),
        case(
            "empty name",
            r#"{"facility": {"name": "  "}, "date": "2026-11-01"}"#,
            422,
            "facility: must identify",
        ),
        case(
            "facility id not a UUID",
            r#"{"facility": {"id": "abc"}, "date": "2026-11-01"}"#,
            422,
            "facility.id",
        ),
        case(
            "no facility at all",
            with(r#""date": "{D}""#).replace(r#""facility": {"name": "Bad Input"}, "#, ""),
            422,
            "facility: must identify",
        ),
        case("deep nesting", deep, 422, "nested deeper than 32 levels"),
        case("invalid UTF-8", invalid_utf8, 422, "not valid JSON"),
        case(
            "truncated JSON",
            r#"{"date": "2026-11-0"#,
            422,
            "not valid JSON",
        ),
        case(
            "trailing garbage",
            format!("{} x", with("")),
            422,
            "trailing characters",
        ),
        case("NUL escape", with(r#""note": "a\u0000b""#), 422, "\\u0000"),
        // Numbers JSON allows and serde reads (as 0) but PostgreSQL's jsonb cannot hold.
        case(
            "exponent past what jsonb holds",
            with(r#""note": 1e-99999"#),
            422,
            "outside the range the service stores",
        ),
        case(
            "decimals past what jsonb holds",
            with(&format!(r#""note": 0.{}1"#, "0".repeat(17_000))),
            422,
            "outside the range the service stores",
        ),
        case(
            "lone surrogate in an unknown field",
            with(r#""note": "\ud800""#),
            422,
            "not valid JSON",
        ),
        case(
            "lone low surrogate in a key",
            with(r#""\udc00": 1"#),
            422,
            "surrogate",
        ),
        Case {
            content_type: Some("text/plain"),
            ..case("text/plain", with(""), 415, "Content-Type")
        },
        Case {
            content_type: None,
            ..case("no content type", with(""), 415, "Content-Type")
        },
        case("oversized body", oversized, 413, "larger than"),
    ]
}

async fn send(app: &e2e::TestApp, c: &Case) -> (u16, serde_json::Value) {
    let mut req = app
        .req(reqwest::Method::POST, "/api/v1/sync")
        .body(c.body.clone());
    if let Some(ct) = c.content_type {
        req = req.header("content-type", ct);
    }
    status_json(req.send().await.unwrap()).await
}

#[tokio::test]
async fn snapshots_that_cannot_be_placed_are_rejected_and_write_nothing() {
    let app = spawn_app().await;
    let cases: Vec<Case> = cases().into_iter().filter(|c| c.status != 200).collect();
    assert!(cases.len() >= 25);
    for c in &cases {
        let (status, body) = send(&app, c).await;
        assert_eq!(status, c.status, "{}: {body}", c.name);
        let error = body["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{}: no error field in {body}", c.name));
        assert!(
            error.contains(c.error),
            "{}: '{error}' should contain '{}'",
            c.name,
            c.error
        );
    }
    for table in [
        "facilities",
        "sync_records",
        "sync_unit_types",
        "competitor_rates",
        "sync_leads",
    ] {
        assert_eq!(app.count(table).await, 0, "{table}");
    }
    // The same app still accepts a good body afterwards.
    let (status, body) =
        status_json(app.sync(&serde_json::from_str(&with("")).unwrap()).await).await;
    assert_eq!(status, 200, "{body}");
    app.run_jobs().await;
}

#[tokio::test]
async fn what_cannot_be_read_is_left_out_and_named_in_the_warnings() {
    let app = spawn_app().await;
    let cases: Vec<Case> = cases().into_iter().filter(|c| c.status == 200).collect();
    assert!(cases.len() >= 20);
    for c in &cases {
        let (status, body) = send(&app, c).await;
        assert_eq!(status, 200, "{}: {body}", c.name);
        let warnings: Vec<&str> = body["warnings"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no warnings in {body}", c.name))
            .iter()
            .filter_map(|w| w.as_str())
            .collect();
        assert!(
            warnings.iter().any(|w| w.contains(c.error)),
            "{}: {warnings:?} should name '{}'",
            c.name,
            c.error
        );
        // The stored day holds nothing that could not be read: no unit type of a negative or
        // missing rate, no lead of a negative count, no occupancy out of range.
        let sync_id = body["sync_id"].as_str().unwrap();
        let (bad_units, bad_leads, bad_occupancy): (i64, i64, i64) = sqlx::query_as(
            "SELECT (SELECT count(*) FROM sync_unit_types WHERE sync_id = $1::uuid AND street_rate < 0),
                    (SELECT count(*) FROM sync_leads WHERE sync_id = $1::uuid AND lead_count < 0),
                    (SELECT count(*) FROM sync_records WHERE id = $1::uuid
                       AND (occupancy_pct < 0 OR occupancy_pct > 100))",
        )
        .bind(sync_id)
        .fetch_one(app.db())
        .await
        .unwrap();
        assert_eq!(
            (bad_units, bad_leads, bad_occupancy),
            (0, 0, 0),
            "{}",
            c.name
        );
    }
    // The raw payload is kept whole: the last case's bad lead is still in it.
    let raw: serde_json::Value =
        sqlx::query_scalar("SELECT raw_payload FROM sync_records ORDER BY updated_at DESC LIMIT 1")
            .fetch_one(app.db())
            .await
            .unwrap();
    assert_eq!(raw["leads"][1]["channel"], "WEB", "{raw}");
    app.run_jobs().await;
}
