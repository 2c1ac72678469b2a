//! The ECRI engine reads a tenant's unit type as the pricing engine bands it: where a size's
//! competitor rates name their tier, a climate tenant's rent is set against the climate
//! competitors and a drive-up tenant's against the drive-up ones, both when deciding and when
//! learning from past increases (the same reference on both sides). Through the real server.
//!
//! Every facility below: 10x20 climate (street 340) and drive-up (street 200), 40 units each;
//! competitors climate at 300, 320, 340, 360 (median 330) and drive-up at 140, 160, 180, 200
//! (median 170). The eight as one set (no tier named): median 250.

use crate::pricing_tiers::rates;
use chrono::{Duration, NaiveDate, Utc};
use e2e::{push_ok_as, spawn_app, TestApp};
use serde_json::{json, Value};

const CLIMATE: [f64; 4] = [300.0, 320.0, 340.0, 360.0];
const DRIVE_UP: [f64; 4] = [140.0, 160.0, 180.0, 200.0];

fn day(back: i64) -> NaiveDate {
    Utc::now().date_naive() - Duration::days(back)
}

/// The competitor rates, naming their tier or not.
fn competitors(tiered: bool) -> Vec<Value> {
    let (c, d) = if tiered {
        (Some("climate"), Some("drive-up"))
    } else {
        (None, None)
    };
    let mut all = rates(c, "C", &CLIMATE);
    all.extend(rates(d, "D", &DRIVE_UP));
    all
}

/// A roll of `date`: `tenants` as (id, tier, rent, last increase), in place since 2020.
fn roll(
    date: NaiveDate,
    tiered: bool,
    tenants: &[(String, &str, f64, Option<NaiveDate>)],
) -> Value {
    let tenants: Vec<Value> = tenants
        .iter()
        .map(|(id, tier, rent, last)| {
            json!({"tenant_id": id, "size": "10x20", "tier": tier, "rent": rent,
                   "move_in_date": "2020-01-01",
                   "last_increase_date": last.map(|d| d.to_string())})
        })
        .collect();
    json!({
        "facility": {"name": "Tiers"},
        "date": date.to_string(),
        "unit_types": [
            {"size": "10x20", "tier": "climate", "street_rate": 340, "total_units": 40,
             "occupied_units": 36},
            {"size": "10x20", "tier": "drive-up", "street_rate": 200, "total_units": 40,
             "occupied_units": 36}
        ],
        "competitor_rates": competitors(tiered),
        "tenants": tenants
    })
}

/// The text of a tenant's `stay_probability` reason.
fn stay_text(answer: &Value, tenant: &str) -> String {
    let line = answer["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["tenant_id"] == tenant)
        .unwrap_or_else(|| panic!("no {tenant} in {answer}"));
    line["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "stay_probability")
        .unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn each_tenant_is_set_against_its_own_tiers_competitors() {
    let app = spawn_app().await;
    let tenants = vec![
        ("C1".to_owned(), "climate", 330.0, None),
        ("D1".to_owned(), "drive-up", 170.0, None),
    ];
    for (tiered, climate, drive_up) in [(true, "330.00", "170.00"), (false, "250.00", "250.00")] {
        let who = app.create_tenant(&format!("tiers {tiered}")).await;
        let id = push_ok_as(&app, &who, roll(day(1), tiered, &tenants)).await;
        let answer = app.ecri_as(&who, &id).await;
        for (tenant, market) in [("C1", climate), ("D1", drive_up)] {
            let text = stay_text(&answer, tenant);
            assert!(
                text.contains(&format!("against the market ${market}")),
                "tiers named {tiered}, {tenant}: {text}"
            );
        }
    }
}

/// A company with one facility whose 20 climate tenants went from 300 to 330 150 days ago and
/// all stayed; its learned premium sensitivity.
async fn learned_premium_sensitivity(app: &TestApp, tiered: bool) -> f64 {
    let who = app.create_tenant(&format!("learning tiers {tiered}")).await;
    let before: Vec<_> = (0..20)
        .map(|i| (format!("C{i}"), "climate", 300.0, None))
        .collect();
    let after: Vec<_> = (0..20)
        .map(|i| (format!("C{i}"), "climate", 330.0, Some(day(150))))
        .collect();
    let id = push_ok_as(app, &who, roll(day(300), tiered, &before)).await;
    push_ok_as(app, &who, roll(day(200), tiered, &before)).await;
    push_ok_as(app, &who, roll(day(140), tiered, &after)).await;
    push_ok_as(app, &who, roll(day(5), tiered, &after)).await;
    let answer = app.ecri_as(&who, &id).await;
    assert_eq!(answer["model"]["increased_tenants"], 20, "{answer}");
    answer["model"]["premium_sensitivity"].as_f64().unwrap()
}

#[tokio::test]
async fn past_increases_are_measured_against_the_tiers_competitors_too() {
    let app = spawn_app().await;
    // Against its tier's median (330) the new rent is at the market: the premium's
    // sensitivity learns nothing and stays the prior's. Against the size's (250) it is 32 %
    // over, past where moving pays (20 %), and every tenant stayed: read as tenants who do not
    // mind a premium.
    let tiered = learned_premium_sensitivity(&app, true).await;
    let untiered = learned_premium_sensitivity(&app, false).await;
    assert!((tiered - 1.0).abs() < 0.01, "tiered {tiered}");
    assert!(untiered < 0.9, "untiered {untiered}");
}
