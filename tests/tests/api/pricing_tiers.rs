//! Tiers of a size as markets of their own (engine 2026.11.9), through the real server:
//! competitor rates that name their tier, from a sync, the competitor-rates resource and
//! uploads; each tier banded on its own set or, without one, on the size's set converted by the
//! tier premium; a climate-controlled tier never recommended under its drive-up twin.
//!
//! Every facility below has one snapshot, of 2026-11-10 (no earlier reading, so no trend and
//! no price response; November's national prior 0.92 cuts no size inside its band), unit
//! types 90 % occupied (inside the 88-93 % band, so no occupancy offset): each target is the
//! competitor median of its band, a run moves half the way, at most 8 %.

use e2e::{spawn_app, status_json};
use reqwest::Method;
use serde_json::{json, Value};

const DATE: &str = "2026-11-10";

pub(super) fn rates(tier: Option<&str>, prefix: &str, values: &[f64]) -> Vec<Value> {
    values
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut rate = json!({ "competitor": format!("{prefix}{i}"), "size": "10x20",
                                   "rate": r, "promo": null });
            if let Some(t) = tier {
                rate["tier"] = json!(t);
            }
            rate
        })
        .collect()
}

fn snapshot(name: &str, climate: f64, drive_up: f64, competitor_rates: Vec<Value>) -> Value {
    json!({
        "facility": { "name": name },
        "date": DATE,
        "occupancy_pct": 90,
        "unit_types": [
            { "size": "10x20", "tier": "climate", "street_rate": climate, "occupancy_pct": 90,
              "total_units": 40 },
            { "size": "10x20", "tier": "drive-up", "street_rate": drive_up, "occupancy_pct": 90,
              "total_units": 40 },
        ],
        "competitor_rates": competitor_rates,
    })
}

/// Syncs the snapshot and runs the engine: (facility id, run).
async fn sync_and_run(app: &e2e::TestApp, body: &Value) -> (String, Value) {
    let (s, out) = status_json(app.sync(body).await).await;
    assert_eq!(s, 200, "{out}");
    assert!(
        out["warnings"]
            .as_array()
            .is_none_or(|w| w.iter().all(|w| !w.as_str().unwrap().contains("tier"))),
        "{out}"
    );
    let id = out["facility"]["id"].as_str().unwrap().to_owned();
    app.run_jobs().await;
    let (s, run) = status_json(
        app.get(&format!("/api/v1/facilities/{id}/recommendations"))
            .await,
    )
    .await;
    assert_eq!(s, 200, "{run}");
    (id, run)
}

pub(super) fn tier<'a>(run: &'a Value, tier: &str) -> &'a Value {
    run["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["tier"] == tier)
        .unwrap_or_else(|| panic!("no {tier} in {run}"))
}

fn band(rec: &Value) -> (f64, f64, f64) {
    let b = &rec["competitor_band"];
    (
        b["p25"].as_f64().unwrap(),
        b["median"].as_f64().unwrap(),
        b["p75"].as_f64().unwrap(),
    )
}

#[tokio::test]
async fn each_tier_of_a_size_follows_its_own_competitor_set() {
    let app = spawn_app().await;
    // Climate competitors at 300-330, drive-up ones at 150-180. One set for the size (as
    // before) would put both tiers on a median of 240.
    let mut comps = rates(Some("Climate"), "C", &[300.0, 310.0, 320.0, 330.0]);
    comps.extend(rates(Some("drive-up"), "D", &[150.0, 160.0, 170.0, 180.0]));
    let (_, run) = sync_and_run(&app, &snapshot("Tiers", 250.0, 200.0, comps)).await;
    assert_eq!(run["engine_version"], "2026.11.11");

    // Climate: its own four, P25 305, median 315, P75 325; 250 moves half way to 315 (282.50),
    // held to the 8 % step: 270.
    let climate = tier(&run, "climate");
    assert_eq!(band(climate), (305.0, 315.0, 325.0));
    assert_eq!(climate["competitor_set"]["source"], "tier");
    assert_eq!(climate["competitor_set"]["tier_competitors"], 4);
    assert_eq!(climate["recommended_rate"], 270.0);
    assert_eq!(climate["action"], "raise");
    let anchor = climate["factors"][0]["detail"].as_str().unwrap();
    assert!(
        anchor
            .contains("banded against the 4 competitors that priced the climate 10x20 tier itself"),
        "{anchor}"
    );

    // Drive-up: its own four, median 165; 200 moves half way down (182.50), the step stops
    // it at 184.
    let drive = tier(&run, "drive-up");
    assert_eq!(band(drive), (155.0, 165.0, 175.0));
    assert_eq!(drive["competitor_set"]["source"], "tier");
    assert_eq!(drive["recommended_rate"], 184.0);
    assert_eq!(drive["action"], "lower");
    assert_eq!(run["tier_inversions"], json!([]));
    assert!(climate["tier_inversion"].is_null());

    // The stored rates keep their tier as sent (trimmed), and the listing bands the size's
    // whole set and each tier's own.
    let id = run["facility_id"].as_str().unwrap();
    let (s, list) = status_json(
        app.get(&format!("/api/v1/facilities/{id}/competitor-rates"))
            .await,
    )
    .await;
    assert_eq!(s, 200, "{list}");
    let c0 = list["competitor_rates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["competitor"] == "C0")
        .unwrap();
    assert_eq!(c0["tier"], "Climate");
    let bands: Vec<(Value, f64)> = list["bands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["tier"].clone(), b["median"].as_f64().unwrap()))
        .collect();
    assert_eq!(
        bands,
        vec![
            (Value::Null, 240.0),
            (json!("climate"), 315.0),
            (json!("drive-up"), 165.0)
        ]
    );
}

#[tokio::test]
async fn a_tier_without_competitor_rates_falls_back_to_the_size_with_the_premium() {
    let app = spawn_app().await;
    // Only drive-up was priced by competitors (150-180). The facility's own rates price
    // climate 25 % over drive-up (250 / 200), so climate is banded on the drive-up rates
    // times 1.25: 187.50, 200, 212.50, 225 (P25 193.75, median 206.25, P75 218.75). 250 moves
    // half way down (228.13), the step stops it at 230.
    let comps = rates(Some("Drive-Up"), "D", &[150.0, 160.0, 170.0, 180.0]);
    let (_, run) = sync_and_run(&app, &snapshot("Fallback", 250.0, 200.0, comps)).await;
    let climate = tier(&run, "climate");
    assert_eq!(band(climate), (193.75, 206.25, 218.75));
    let set = &climate["competitor_set"];
    assert_eq!(set["source"], "size_adjusted");
    assert_eq!(
        (
            set["tier_competitors"].as_u64(),
            set["premium_pct"].as_f64(),
            set["premium_sizes"].as_u64()
        ),
        (Some(0), Some(25.0), Some(1))
    );
    assert_eq!(climate["recommended_rate"], 230.0);
    let anchor = climate["factors"][0]["detail"].as_str().unwrap();
    assert!(
        anchor.contains("the climate 10x20 tier has 0 competitors of its own (fewer than 3)")
            && anchor.contains(
                "climate premium of 25.0% (learned from the facility's own rates of 1 size)"
            ),
        "{anchor}"
    );
    // Drive-up keeps its own set (median 165) and its 184.
    let drive = tier(&run, "drive-up");
    assert_eq!(drive["competitor_set"]["source"], "tier");
    assert_eq!(drive["recommended_rate"], 184.0);

    // With climate priced under drive-up there is no premium to learn: the default 20 %
    // (180, 192, 204, 216; median 198). And the same payload without any tier bands both
    // tiers on the size's set as before.
    let comps = rates(Some("drive-up"), "D", &[150.0, 160.0, 170.0, 180.0]);
    let (_, run) = sync_and_run(&app, &snapshot("Default premium", 190.0, 200.0, comps)).await;
    let climate = tier(&run, "climate");
    assert_eq!(band(climate).1, 198.0);
    assert_eq!(climate["competitor_set"]["premium_pct"], 20.0);
    assert_eq!(climate["competitor_set"]["premium_sizes"], 0);
    let comps = rates(None, "D", &[150.0, 160.0, 170.0, 180.0]);
    let (_, run) = sync_and_run(&app, &snapshot("No tiers", 250.0, 200.0, comps)).await;
    for t in ["climate", "drive-up"] {
        let rec = tier(&run, t);
        assert_eq!(band(rec).1, 165.0, "{t}");
        assert_eq!(rec["competitor_set"]["source"], "size", "{t}");
    }
}

#[tokio::test]
async fn a_climate_tier_recommended_under_its_drive_up_twin_is_held_and_flagged() {
    let app = spawn_app().await;
    // Five competitors at 230, none naming a tier: climate at 216 moves half way up (223),
    // drive-up at 255 half way down (242.50, rounded to 243). Climate is held at 243.
    let comps = rates(None, "C", &[230.0; 5]);
    let (_, run) = sync_and_run(&app, &snapshot("Inverted", 216.0, 255.0, comps)).await;
    let climate = tier(&run, "climate");
    assert_eq!(tier(&run, "drive-up")["recommended_rate"], 243.0);
    assert_eq!(climate["recommended_rate"], 243.0);
    assert_eq!(climate["action"], "raise");
    let guard = climate["guardrails"].as_array().unwrap().last().unwrap();
    assert_eq!(
        (
            guard["name"].as_str(),
            guard["before"].as_f64(),
            guard["after"].as_f64()
        ),
        (Some("tier_order"), Some(223.0), Some(243.0))
    );
    let flags = run["tier_inversions"].as_array().unwrap();
    assert_eq!(flags.len(), 1, "{run}");
    let f = &flags[0];
    assert_eq!(
        (
            f["size"].as_str(),
            f["tier"].as_str(),
            f["plain_tier"].as_str()
        ),
        (Some("10x20"), Some("climate"), Some("drive-up"))
    );
    assert_eq!(
        (
            f["recommended_rate"].as_f64(),
            f["plain_rate"].as_f64(),
            f["held_at"].as_f64()
        ),
        (Some(223.0), Some(243.0), Some(243.0))
    );
    // The reason is written in the company's currency when the run is read.
    let reason = f["reason"].as_str().unwrap();
    assert!(
        reason.contains("would be recommended at $223.00, below the drive-up 10x20 at $243.00"),
        "{reason}"
    );
    // The stored run reads back with the flag.
    let id = run["facility_id"].as_str().unwrap();
    let (_, again) = status_json(
        app.get(&format!(
            "/api/v1/facilities/{id}/recommendations?regenerate=0"
        ))
        .await,
    )
    .await;
    assert_eq!(again["tier_inversions"], run["tier_inversions"]);
}

#[tokio::test]
async fn competitor_rates_take_a_tier_through_the_resource_and_uploads() {
    let app = spawn_app().await;
    let id = app.create_facility("Main").await;
    let path = format!("/api/v1/facilities/{id}/competitor-rates");
    let day = "2026-11-20";
    // One competitor, one size, one day, two tiers: two observations. A blank tier is unknown.
    let body = json!({ "competitor_rates": [
        { "competitor": "Public Storage", "size": "10x20", "rate": 300, "tier": " Climate ",
          "observed_on": day },
        { "competitor": "Public Storage", "size": "10x20", "rate": 200, "tier": "drive-up",
          "observed_on": day },
        { "competitor": "Extra Space", "size": "10x20", "rate": 250, "tier": "",
          "observed_on": day },
    ]});
    let (s, out) = status_json(app.post(&path, &body).await).await;
    assert_eq!(s, 201, "{out}");
    assert_eq!(
        (out["inserted"].as_u64(), out["updated"].as_u64()),
        (Some(3), Some(0))
    );
    // The same competitor, size, tier (in another case) and day updates its observation.
    let again = json!({ "competitor": "public storage", "size": "10x20", "rate": 310,
                        "tier": "CLIMATE", "observed_on": day });
    let (s, out) = status_json(app.post(&path, &again).await).await;
    assert_eq!(s, 201, "{out}");
    assert_eq!(
        (out["inserted"].as_u64(), out["updated"].as_u64()),
        (Some(0), Some(1))
    );
    let stored = tiers_of(&app, &id).await;
    assert_eq!(
        stored,
        vec![
            ("Extra Space".to_owned(), None, 250.0),
            (
                "Public Storage".to_owned(),
                Some("drive-up".to_owned()),
                200.0
            ),
            (
                "public storage".to_owned(),
                Some("CLIMATE".to_owned()),
                310.0
            ),
        ]
    );

    // A bad tier is a 422 naming it, and nothing is written.
    let before = app.count("competitor_rates").await;
    let long = "x".repeat(101);
    for (bad, field) in [
        (
            json!({"competitor_rates": [{"competitor": "A", "size": "10x20", "rate": 1, "tier": long}]}),
            "competitor_rates[0].tier: must be at most 100 characters",
        ),
        (
            json!([{"competitor": "A", "size": "10x20", "rate": 1}, {"competitor": "B", "size": "10x20", "rate": 1, "tier": 5}]),
            "[1].tier",
        ),
    ] {
        let (s, body) = status_json(app.post(&path, &bad).await).await;
        assert_eq!(s, 422, "{body}");
        assert!(body["error"].as_str().unwrap().starts_with(field), "{body}");
    }
    assert_eq!(app.count("competitor_rates").await, before);

    // CSV and JSON uploads read a tier column under the unit types' spellings.
    let csv = "Observed On,Competitor Name,Size,Unit Type,Price\n\
               2026-11-21,CubeSmart,10x20,Climate Controlled,320\n\
               2026-11-21,CubeSmart,10x20,Drive Up,210\n\
               2026-11-21,Storage King,10x20,,260\n";
    let (s, out) = upload_csv(&app, &id, csv.to_owned()).await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["inserted"], 3);
    let rows = json!({ "rows": [
        {"observed_on": "2026-11-22", "competitor": "Life Storage", "size": "10x20", "rate": 330,
         "tier": "climate"},
    ]});
    let (s, out) = status_json(
        app.post(&format!("/api/v1/facilities/{id}/upload"), &rows)
            .await,
    )
    .await;
    assert_eq!(s, 200, "{out}");
    let stored = tiers_of(&app, &id).await;
    assert!(stored.contains(&(
        "CubeSmart".to_owned(),
        Some("Climate Controlled".to_owned()),
        320.0
    )));
    assert!(stored.contains(&("CubeSmart".to_owned(), Some("Drive Up".to_owned()), 210.0)));
    assert!(stored.contains(&("Storage King".to_owned(), None, 260.0)));
    assert!(stored.contains(&("Life Storage".to_owned(), Some("climate".to_owned()), 330.0)));
    // A tier that is too long is a row error naming the line and the column.
    let csv = format!("observed_on,competitor,size,tier,rate\n2026-11-21,A,10x20,{long},100\n");
    let (s, out) = upload_csv(&app, &id, csv.to_owned()).await;
    assert_eq!(s, 422, "{out}");
    assert!(out["error"].as_str().unwrap().contains("tier"), "{out}");
    app.run_jobs().await;
}

pub(crate) async fn upload_csv(app: &e2e::TestApp, id: &str, csv: String) -> (u16, Value) {
    status_json(
        app.req(Method::POST, &format!("/api/v1/facilities/{id}/upload"))
            .header("content-type", "text/csv")
            .body(csv)
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// The facility's competitor rates as (competitor, tier, rate), by competitor and rate.
async fn tiers_of(app: &e2e::TestApp, id: &str) -> Vec<(String, Option<String>, f64)> {
    sqlx::query_as(
        "SELECT competitor, tier, rate FROM competitor_rates WHERE facility_id = $1::uuid
         ORDER BY lower(competitor), rate",
    )
    .bind(id)
    .fetch_all(app.db())
    .await
    .unwrap()
}
