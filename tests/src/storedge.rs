//! A storEDGE-shaped CRM for the tests: the v1 REST collections the adapter reads, over HTTPS
//! (see `receiver`), refusing with 401 every request whose OAuth 1.0 signature does not verify
//! (see `oauth1`) under its key and secret. Facility 101 has six units over two pages, the
//! second page answered with 429 (`Retry-After: 1`) the first time; facility 202 has only an
//! unrentable unit.

use crate::oauth1;
use crate::receiver::{Hit, Receiver, Reply, TestCa};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub const ACCOUNT: &str = "acme-co";
pub const API_KEY: &str = "se-access-key-0042";
pub const API_SECRET: &str = "se-secret-7f3a";

pub struct StorEdgeCrm {
    pub receiver: Receiver,
}

impl StorEdgeCrm {
    pub async fn start(ca: &TestCa) -> Self {
        let throttled = Arc::new(AtomicBool::new(false));
        let receiver = Receiver::start(ca, move |_, hit| answer(hit, &throttled)).await;
        Self { receiver }
    }

    /// The API's base address (`.../v1`).
    pub fn base_url(&self) -> String {
        self.receiver.url("/v1")
    }

    /// Requests to `path` with `page=N` in their query.
    pub fn hits_of(&self, path: &str, page: u32) -> usize {
        self.receiver
            .hits()
            .iter()
            .filter(|h| h.path == path && query_value(h, "page") == Some(page.to_string()))
            .count()
    }
}

fn query_value(hit: &Hit, key: &str) -> Option<String> {
    hit.query
        .as_deref()?
        .split('&')
        .find_map(|p| p.strip_prefix(&format!("{key}=")))
        .map(str::to_owned)
}

fn json_reply(status: u16, body: Value) -> Reply {
    Reply {
        body: body.to_string(),
        headers: vec![("content-type", "application/json".to_owned())],
        ..Reply::status(status)
    }
}

fn meta(page: u64, per_page: u64, total: u64) -> Value {
    json!({ "status_code": 200, "status_message": "OK", "error_code": null, "request_id": "r-1",
            "page": page, "per_page": per_page, "total_count": total })
}

/// Units of facility 101, three per page.
pub fn units_101() -> Vec<Value> {
    vec![
        json!({ "id": "u1", "unit_number": "A1", "unit_group_id": "g1", "width": 10, "length": 10, "standard_rate": 120, "web_rate": 110, "status": "rented" }),
        json!({ "id": "u2", "unit_number": "A2", "unit_group_id": "g1", "width": 10, "length": 10, "standard_rate": 130, "web_rate": 115, "status": "available" }),
        json!({ "id": "u3", "unit_number": "A3", "unit_group_id": "g1", "width": 10.0, "length": 10, "standard_rate": 125, "web_rate": 115, "status": "rented" }),
        json!({ "id": "u4", "unit_number": "B1", "unit_group_id": "g2", "width": 5, "length": 7.5, "standard_rate": 60, "web_rate": 55, "status": "rented" }),
        json!({ "id": "u5", "unit_number": "B2", "unit_group_id": "g2", "width": 10, "length": 20, "standard_rate": 200, "web_rate": 190, "status": "unrentable" }),
        json!({ "id": "u6", "unit_number": "B3", "unit_group_id": "g2", "width": 0, "length": 5, "standard_rate": 40, "web_rate": 40, "status": "rented" }),
    ]
}

fn answer(hit: &Hit, throttled: &AtomicBool) -> Reply {
    if let Err(refusal) = oauth1::verify(
        "GET",
        hit.header("host").unwrap_or_default(),
        &hit.path,
        hit.query.as_deref(),
        hit.header("authorization"),
        API_KEY,
        API_SECRET,
    ) {
        return json_reply(
            401,
            json!({ "meta": { "status_code": 401, "status_message": format!("Unauthorized: {refusal:?}"), "error_code": 401 } }),
        );
    }
    let page: u64 = query_value(hit, "page")
        .and_then(|p| p.parse().ok())
        .unwrap_or(1);
    match hit.path.as_str() {
        p if p == format!("/v1/companies/{ACCOUNT}/facilities") => json_reply(
            200,
            json!({ "meta": meta(1, 100, 2), "facilities": [
                { "id": "101", "name": "Edge North", "address": "1 Main St" },
                { "id": "202", "name": "Edge South" }
            ]}),
        ),
        "/v1/101/unit_groups" => json_reply(
            200,
            json!({ "meta": meta(1, 100, 2), "unit_groups": [
                { "id": "g1", "name": "Climate", "max_rate": 150 },
                { "id": "g2", "name": "Drive-up", "max_rate": 80 }
            ]}),
        ),
        "/v1/101/units" => {
            if page == 2 && !throttled.swap(true, Ordering::SeqCst) {
                return Reply {
                    headers: vec![("retry-after", "1".to_owned())],
                    ..json_reply(
                        429,
                        json!({ "meta": { "status_code": 429, "status_message": "Too Many Requests", "error_code": 429 } }),
                    )
                };
            }
            let units: Vec<Value> = units_101()
                .into_iter()
                .skip(usize::try_from((page - 1) * 3).unwrap_or(usize::MAX))
                .take(3)
                .collect();
            json_reply(200, json!({ "meta": meta(page, 3, 6), "units": units }))
        }
        "/v1/202/unit_groups" => json_reply(200, json!([])),
        "/v1/202/units" => json_reply(
            200,
            json!({ "meta": meta(1, 100, 1), "units": [
                { "id": "u9", "width": 10, "length": 10, "standard_rate": 99, "status": "unrentable" }
            ]}),
        ),
        _ => json_reply(
            404,
            json!({ "meta": { "status_code": 404, "error_code": 404 } }),
        ),
    }
}
