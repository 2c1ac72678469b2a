//! The API's explanations read in the company's currency: the pricing run's factors and
//! guardrails, the ECRI suggestions' reasons and a batch's reasons and dropped reasons carry
//! `$`, `€` or `£` with their amounts, never a bare amount, and a change of the company's
//! currency shows in runs stored before it (the currency is applied when a run is read).

use super::ecri_batches::sync;
use chrono::{Duration, Utc};
use e2e::{get_ok, push_ok_as, spawn_app, status_json, TestApp};
use reqwest::Method;
use serde_json::{json, Value};

fn day(back: i64) -> String {
    (Utc::now().date_naive() - Duration::days(back)).to_string()
}

fn tenant(id: &str, rent: f64) -> Value {
    json!({"tenant_id": id, "size": "10x10", "rent": rent, "move_in_date": "2024-03-01"})
}

fn roll(first_rent: f64) -> Vec<Value> {
    (0..8)
        .map(|i| tenant(&format!("A-{i:02}"), first_rent + f64::from(i)))
        .collect()
}

/// A day of a facility with competitors (so the pricing factors quote a target and a band) and
/// a rent roll well under the street rate (so the ECRI engine suggests increases).
fn snapshot(name: &str, date: &str, tenants: &[Value]) -> Value {
    json!({
        "facility": {"name": name},
        "date": date,
        "occupancy_pct": 95.0,
        "unit_types": [
            {"size": "10x10", "tier": "standard", "street_rate": 140, "total_units": 60, "occupied_units": 57},
            {"size": "5x5", "tier": "standard", "street_rate": 60, "total_units": 30, "occupied_units": 28}
        ],
        "competitor_rates": [
            {"competitor": "North", "size": "10x10", "rate": 150.5},
            {"competitor": "South", "size": "10x10", "rate": 162.25},
            {"competitor": "East", "size": "10x10", "rate": 171.0},
            {"competitor": "North", "size": "5x5", "rate": 55.0},
            {"competitor": "South", "size": "5x5", "rate": 58.75}
        ],
        "tenants": tenants
    })
}

/// The amounts of `text` written without a currency: numbers with exactly two decimals that
/// are not a share, points, a multiple or an index, and have no `symbol` before them.
fn bare_amounts(text: &str, symbol: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let in_word = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '.');
        if !chars[i].is_ascii_digit() || in_word {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len()
            && (chars[i].is_ascii_digit()
                || (matches!(chars[i], ',' | '.')
                    && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
        {
            i += 1;
        }
        let number: String = chars[start..i].iter().collect();
        let rest: String = chars[i..].iter().take(8).collect();
        let rest = rest.trim_start();
        let before: String = chars[..start].iter().collect();
        let two_decimals = number.split_once('.').is_some_and(|(_, d)| d.len() == 2);
        let not_money = rest.starts_with('%')
            || rest.starts_with("point")
            || rest.starts_with("pp")
            || rest.starts_with("x ");
        if two_decimals && !not_money && !before.ends_with(symbol) && !before.ends_with("index ") {
            found.push(format!("{number} in {text:?}"));
        }
    }
    found
}

/// Every explanation of a pricing run: each factor's and guardrail's `detail`.
fn run_details(run: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for rec in run["recommendations"].as_array().unwrap() {
        for list in ["factors", "guardrails"] {
            for x in rec[list].as_array().unwrap() {
                out.push(x["detail"].as_str().unwrap().to_owned());
            }
        }
    }
    out
}

/// Every reason text of the facility's ECRI answer but the stay model's sensitivity (whose
/// two-decimal figures are multiples, not amounts).
fn ecri_reasons(ecri: &Value) -> Vec<String> {
    ecri["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["reasons"].as_array().unwrap().iter())
        .filter(|r| r["name"] != "sensitivity")
        .map(|r| r["text"].as_str().unwrap().to_owned())
        .collect()
}

/// Asserts that `texts` quote amounts, each with `symbol`, and none without it.
fn all_in(texts: &[String], symbol: &str, what: &str) {
    assert!(
        texts.iter().any(|t| t.contains(symbol)),
        "{what}: no amount in {symbol}: {texts:#?}"
    );
    let bare: Vec<String> = texts.iter().flat_map(|t| bare_amounts(t, symbol)).collect();
    assert!(
        bare.is_empty(),
        "{what}: amounts without {symbol}: {bare:#?}"
    );
}

async fn set_currency(app: &TestApp, key: Option<&e2e::Tenant>, code: &str) {
    let req = match key {
        Some(t) => app.req_as(t, Method::PATCH, "/api/v1/company"),
        None => app.req(Method::PATCH, "/api/v1/company"),
    };
    let (s, body) = status_json(req.json(&json!({ "currency": code })).send().await.unwrap()).await;
    assert_eq!(s, 200, "{body}");
}

#[tokio::test]
async fn explanations_carry_the_company_currency_when_they_are_read() {
    let app = spawn_app().await;
    let fid = sync(&app, &snapshot("Money Street", &day(3), &roll(100.0))).await;
    let path = format!("/api/v1/facilities/{fid}/recommendations");
    let run = get_ok(&app, &path).await;
    let usd = run_details(&run);
    all_in(&usd, "$", "pricing run in USD");
    assert!(usd.iter().any(|d| d.contains("target $")), "{usd:#?}");

    // The stored run, read again after the company's currency changed, reads in euros.
    set_currency(&app, None, "EUR").await;
    let stored = get_ok(&app, &format!("{path}?regenerate=0")).await;
    assert_eq!(stored["recommendation_id"], run["recommendation_id"]);
    let eur = run_details(&stored);
    all_in(&eur, "€", "stored pricing run in EUR");
    assert!(eur.iter().all(|d| !d.contains('$')), "{eur:#?}");
    let one = get_ok(
        &app,
        &format!(
            "/api/v1/facilities/{fid}/recommendation-runs/{}",
            run["recommendation_id"].as_str().unwrap()
        ),
    )
    .await;
    assert_eq!(one["recommendations"], stored["recommendations"]);

    // The ECRI suggestions' reasons.
    app.ecri_now(&fid).await;
    let ecri = get_ok(&app, &format!("/api/v1/facilities/{fid}/ecri")).await;
    let reasons = ecri_reasons(&ecri);
    all_in(&reasons, "€", "ECRI reasons");
    assert!(
        reasons.iter().any(|r| r.contains("lost over")),
        "{reasons:#?}"
    );

    // A batch's reasons, and the reason a line is dropped at approval (its rent changed in
    // the PMS since the draft).
    let base = format!("/api/v1/facilities/{fid}/ecri-batches");
    let (s, draft) = status_json(app.post(&base, &json!({})).await).await;
    assert_eq!(s, 201, "{draft}");
    let line_reasons: Vec<String> = draft["lines"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|l| l["reasons"].as_array().unwrap().iter())
        .filter(|r| r["name"] != "sensitivity")
        .map(|r| r["text"].as_str().unwrap().to_owned())
        .collect();
    all_in(&line_reasons, "€", "batch line reasons");
    let mut later = roll(100.0);
    later[0]["rent"] = json!(104.5);
    sync(&app, &snapshot("Money Street", &day(2), &later)).await;
    let id = draft["id"].as_str().unwrap();
    let (s, approved) = status_json(
        app.post(
            &format!("{base}/{id}/approve"),
            &json!({"drop_failing": true}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 200, "{approved}");
    let dropped: Vec<String> = approved["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["dropped"]["reason"].as_str().map(str::to_owned))
        .collect();
    assert!(
        dropped
            .iter()
            .any(|r| r.contains("the rent is now €104.50, not the €100.00")),
        "{dropped:#?}"
    );
    all_in(&dropped, "€", "dropped reasons");
    app.run_jobs().await;
}

#[tokio::test]
async fn each_company_reads_its_own_currency() {
    let app = spawn_app().await;
    let other = app.create_tenant("Pound Storage").await;
    set_currency(&app, Some(&other), "GBP").await;
    let mine = sync(&app, &snapshot("Dollar Lane", &day(3), &roll(100.0))).await;
    let theirs = push_ok_as(&app, &other, snapshot("Pound Lane", &day(3), &roll(100.0))).await;

    let run = get_ok(&app, &format!("/api/v1/facilities/{mine}/recommendations")).await;
    all_in(&run_details(&run), "$", "USD company's run");
    let (s, run) = status_json(
        app.req_as(
            &other,
            Method::GET,
            &format!("/api/v1/facilities/{theirs}/recommendations"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(s, 200, "{run}");
    let gbp = run_details(&run);
    all_in(&gbp, "£", "GBP company's run");
    assert!(gbp.iter().all(|d| !d.contains('$')), "{gbp:#?}");

    for (fid, key, symbol) in [(&mine, None, "$"), (&theirs, Some(&other), "£")] {
        app.ecri_now(fid).await;
        let path = format!("/api/v1/facilities/{fid}/ecri");
        let req = match key {
            Some(t) => app.req_as(t, Method::GET, &path),
            None => app.req(Method::GET, &path),
        };
        let (s, ecri) = status_json(req.send().await.unwrap()).await;
        assert_eq!(s, 200, "{ecri}");
        all_in(&ecri_reasons(&ecri), symbol, "ECRI reasons");
    }
    app.run_jobs().await;
}
