//! Letters a mail merge can take: the roll's unit numbers, customer names and mailing
//! addresses reach the letters, a customer's units make one letter, the file is named by the
//! facility and the notice date, and a viewer never gets the personal fields.

use chrono::{Duration, Utc};
use e2e::{get_ok, spawn_app, status_json, TestApp};
use reqwest::Method;
use serde_json::{json, Value};

fn tenant(id: &str, unit: &str, rent: f64, customer: &str) -> Value {
    json!({"tenant_id": id, "unit_id": unit, "size": "10x10", "rent": rent,
           "move_in_date": "2023-05-01", "customer_id": customer})
}

async fn roll(app: &TestApp) -> String {
    let mut two_a = tenant("T-1", "B-112", 101.0, "C-7");
    let mut two_b = tenant("T-2", "B-113", 104.0, "C-7");
    for t in [&mut two_a, &mut two_b] {
        t["customer_name"] = json!("Dana Whitfield");
        t["address_line1"] = json!("48 Orchard Lane");
        t["address_line2"] = json!("Apt 3");
        t["city"] = json!("Springfield");
        t["region"] = json!("IL");
        t["postal_code"] = json!("62704");
    }
    let mut alone = tenant("T-3", "C-201", 99.0, "C-9");
    alone["customer_name"] = json!("Sam Ortiz");
    alone["address_line1"] = json!("7 Hill Road");
    let date = (Utc::now().date_naive() - Duration::days(2)).to_string();
    let (s, r) = status_json(
        app.sync(&json!({
            "facility": {"name": "Letter Lane Storage"},
            "date": date,
            "unit_types": [{"size": "10x10", "tier": "standard", "street_rate": 150,
                            "total_units": 40, "occupied_units": 38}],
            "tenants": [two_a, two_b, alone]
        }))
        .await,
    )
    .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["warnings"], json!([]), "{r}");
    r["facility"]["id"].as_str().unwrap().to_owned()
}

fn parse_csv(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut csv = csv::Reader::from_reader(text.as_bytes());
    let head = csv.headers().unwrap().iter().map(str::to_owned).collect();
    let rows = csv
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    (head, rows)
}

#[tokio::test]
async fn a_customer_with_two_units_gets_one_letter_naming_both_with_name_and_address() {
    let app = spawn_app().await;
    let fid = roll(&app).await;
    app.ecri_now(&fid).await;
    let base = format!("/api/v1/facilities/{fid}/ecri-batches");
    let (s, b) = status_json(app.post(&base, &json!({})).await).await;
    assert_eq!(s, 201, "{b}");
    let ids: Vec<&str> = b["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["tenant_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["T-1", "T-2", "T-3"], "{b}");
    let bid = b["id"].as_str().unwrap();
    let notice = (Utc::now().date_naive() + Duration::days(3)).to_string();
    let (s, a) = status_json(
        app.post(
            &format!("{base}/{bid}/approve"),
            &json!({"notice_date": notice}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 200, "{a}");
    let r = app.get(&format!("{base}/{bid}/letters.csv")).await;
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["content-disposition"],
        format!("attachment; filename=\"Letter-Lane-Storage-{notice}.csv\"").as_str()
    );
    let (head, rows) = parse_csv(&r.text().await.unwrap());
    let col = |n: &str| head.iter().position(|h| h == n).unwrap();
    assert_eq!(rows.len(), 2, "one letter per customer: {rows:?}");
    let dana = rows
        .iter()
        .find(|r| r[col("customer_id")] == "C-7")
        .unwrap();
    assert_eq!(dana[col("tenant_id")], "T-1; T-2");
    assert_eq!(dana[col("unit_count")], "2");
    assert_eq!(dana[col("tenant_count")], "2");
    assert_eq!(dana[col("customer_name")], "Dana Whitfield");
    assert_eq!(dana[col("address_line1")], "48 Orchard Lane");
    assert_eq!(dana[col("address_line2")], "Apt 3");
    assert_eq!(dana[col("city")], "Springfield");
    assert_eq!(dana[col("region")], "IL");
    assert_eq!(dana[col("postal_code")], "62704");
    let line = |t: &str| {
        a["lines"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["tenant_id"] == t)
            .unwrap()
            .clone()
    };
    let (l1, l2) = (line("T-1"), line("T-2"));
    let n = |v: &Value| v.as_f64().unwrap();
    assert_eq!(
        dana[col("units")],
        format!(
            "B-112 (10x10): {:.2} to {:.2} USD; B-113 (10x10): {:.2} to {:.2} USD",
            n(&l1["current_rent"]),
            n(&l1["new_rent"]),
            n(&l2["current_rent"]),
            n(&l2["new_rent"])
        )
    );
    assert_eq!(
        dana[col("new_rent")],
        format!("{:.2}", n(&l1["new_rent"]) + n(&l2["new_rent"]))
    );
    assert_eq!(dana[col("notice_date")], notice);
    let sam = rows
        .iter()
        .find(|r| r[col("customer_id")] == "C-9")
        .unwrap();
    assert_eq!(sam[col("customer_name")], "Sam Ortiz");
    assert_eq!(sam[col("units")].split("; ").count(), 1);

    // A viewer's key reads the letters without a name or an address in them.
    let (s, k) = status_json(
        app.post("/api/v1/api-keys", &json!({"name": "bi", "role": "viewer"}))
            .await,
    )
    .await;
    assert_eq!(s, 201, "{k}");
    let viewer = e2e::Tenant {
        company_id: app.tenant.company_id,
        api_key: k["api_key"].as_str().unwrap().to_owned(),
        email: app.tenant.email.clone(),
    };
    let r = app
        .req_as(&viewer, Method::GET, &format!("{base}/{bid}/letters.csv"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let text = r.text().await.unwrap();
    for personal in [
        "Dana",
        "Whitfield",
        "Orchard",
        "Springfield",
        "62704",
        "Sam Ortiz",
        "Hill Road",
    ] {
        assert!(
            !text.contains(personal),
            "{personal} in a viewer's letters: {text}"
        );
    }
    let (_, vrows) = parse_csv(&text);
    assert_eq!(vrows.len(), 2);
    assert_eq!(vrows[0][col("tenant_id")], rows[0][col("tenant_id")]);
    // The batch's own answer carries no personal field either way.
    let batch = get_ok(&app, &format!("{base}/{bid}")).await;
    assert!(!batch.to_string().contains("Whitfield"));
    app.run_jobs().await;
}
