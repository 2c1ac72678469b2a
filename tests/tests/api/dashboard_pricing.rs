//! The pricing and analytics pages of the dashboard in a real browser, on the seeded demo
//! data: every figure checked here is compared with what the API answers for the same thing.

use e2e::browser::Browser;
use e2e::{get_ok, spawn_app, spawn_app_with, status_json, wait_until, TestApp};
use serde_json::{json, Value};
use std::time::Duration;

const PASSWORD: &str = "correct horse battery";

async fn signed_in(app: &TestApp) -> Browser {
    let b = Browser::start().await;
    b.login(&app.server.base, &app.tenant.email, PASSWORD).await;
    b.wait_path("/app/portfolio").await;
    b
}

/// A figure of the API as the dashboard writes it: rounded half away from zero to `decimals`,
/// thousands separated, the sign before `prefix` (`-$1,234.50`, `85.3 %`).
fn written(v: &Value, decimals: usize, prefix: &str, suffix: &str) -> String {
    let v = v.as_f64().unwrap_or_else(|| panic!("{v} is a number"));
    let scale = 10f64.powi(decimals as i32);
    let r = (v * scale).round() / scale;
    let digits = format!("{:.decimals$}", r.abs());
    let (int, frac) = digits
        .split_once('.')
        .map_or((digits.as_str(), ""), |(i, f)| (i, f));
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let sign = if r < 0.0 { "-" } else { "" };
    let frac = if frac.is_empty() {
        String::new()
    } else {
        format!(".{frac}")
    };
    format!("{sign}{prefix}{grouped}{frac}{suffix}")
}

/// A rate or rent: `$115.00`.
fn money(v: &Value) -> String {
    written(v, 2, "$", "")
}

/// A total: `$12,345`.
fn amount(v: &Value) -> String {
    written(v, 0, "$", "")
}

/// A percent: `85.3 %` (the page puts a no-break space before the sign; the text read from
/// the page has it as a space).
fn pct(v: &Value) -> String {
    written(v, 1, "", " %")
}

/// An index or a confidence: `1.05`.
fn index(v: &Value) -> String {
    written(v, 2, "", "")
}

/// The cells of each body row of a table (visible text).
async fn rows(b: &Browser, table: &str) -> Vec<Vec<String>> {
    let cells = b
        .script(&format!(
            "return Array.from(document.querySelectorAll('#{table} tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent.replace(/\\u00a0/g, ' ').trim()))"
        ))
        .await;
    serde_json::from_value(cells).unwrap()
}

/// The demo data (`n` facilities x `days` days) and the id of its first facility.
async fn demo(app: &TestApp, n: u32, days: u32) -> String {
    let today = chrono::Utc::now().date_naive();
    jobs::seed::seed_bulk(app.db(), app.tenant.company_id.into(), n, days, today, 2)
        .await
        .unwrap();
    let list = get_ok(app, "/api/v1/facilities").await;
    let mut names: Vec<(String, String)> = list["facilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_owned(),
                f["id"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    names.sort();
    names.remove(0).1
}

#[tokio::test]
async fn the_facility_page_shows_every_sizes_recommendation_and_run_now_adds_a_run() {
    let app = spawn_app().await;
    let id = demo(&app, 2, 30).await;
    let run = get_ok(&app, &format!("/api/v1/facilities/{id}/recommendations")).await;
    let recs = run["recommendations"].as_array().unwrap();
    assert_eq!(recs.len(), 10, "the demo's ten unit types");

    let b = signed_in(&app).await;
    let base = &app.server.base;
    b.goto(&format!("{base}/app/facilities/{id}")).await;
    b.find("#sheet").await;
    let shown_recs: Vec<Vec<String>> = serde_json::from_value(
        b.script(
            "return Array.from(document.querySelectorAll('#sheet tbody tr:not(.why)')).map(r => Array.from(r.cells).map(c => c.textContent.replace(/\\u00a0/g, ' ').replace(/\\s+/g, ' ').trim()))",
        )
        .await,
    )
    .unwrap();
    assert_eq!(shown_recs.len(), recs.len());
    for (row, rec) in shown_recs.iter().zip(recs) {
        let tier = rec["tier"].as_str().unwrap();
        let unit = format!("{} {tier}", rec["size"].as_str().unwrap());
        assert_eq!(row[1], unit.trim());
        assert_eq!(row[2], money(&rec["current_rate"]));
        assert_eq!(row[3], money(&rec["recommended_rate"]));
        assert!(row[4].contains(&pct(&rec["change_pct"])), "{row:?}");
        assert!(row[4].ends_with(rec["action"].as_str().unwrap()), "{row:?}");
        assert_eq!(row[5], index(&rec["confidence"]));
    }
    // Every factor and guardrail of every size, folded under its row.
    for (i, rec) in recs.iter().enumerate() {
        let items: Vec<String> = serde_json::from_value(
            b.script(&format!(
                "return Array.from(document.querySelectorAll('#row-{i} + tr.why li')).map(l => l.textContent.replace(/\\u00a0/g, ' '))"
            ))
            .await,
        )
        .unwrap();
        let factors = rec["factors"].as_array().unwrap();
        assert!(!factors.is_empty());
        assert_eq!(
            items.len(),
            factors.len() + rec["guardrails"].as_array().unwrap().len()
        );
        for (item, f) in items.iter().zip(factors) {
            let name = f["name"].as_str().unwrap().replace('_', " ");
            let contribution = written(&f["contribution_pct"], 1, "", " pp");
            assert!(
                item.to_lowercase()
                    .starts_with(&format!("{name} ({contribution}): ")),
                "{item} {f}"
            );
        }
    }
    // The charts: occupancy, move-ins, and one per size with street rates and the band.
    for (chart, title) in [
        ("chart-occupancy", "Occupancy, last 90 days"),
        (
            "chart-move-ins",
            "Move-ins this month against the prorated target, last 90 days",
        ),
        (
            "chart-rate-10x10",
            "10x10: street rate against the competitor band, last 90 days",
        ),
    ] {
        b.find(&format!("svg#{chart}")).await;
        let shown = b
            .script(&format!(
                "return document.querySelector('svg#{chart} title').textContent"
            ))
            .await;
        assert_eq!(shown, title);
    }
    // The 10x10 chart: two tiers' street rates and each tier's band, three lines each (the
    // demo's competitors price both tiers of the size, so each tier is banded on its own set).
    let lines = b
        .script("return document.querySelectorAll('svg#chart-rate-10x10 polyline').length")
        .await;
    assert_eq!(lines, 8);
    let history = get_ok(&app, &format!("/api/v1/facilities/{id}/history?days=90")).await;
    let occupancy = b
        .script("return Array.from(document.querySelectorAll('#chart-occupancy-table tbody tr')).map(r => r.cells[1].textContent.replace(/\\u00a0/g, ' '))")
        .await;
    let api: Vec<String> = history["days"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| pct(&d["occupancy_pct"]))
        .collect();
    assert_eq!(occupancy, json!(api));
    assert_eq!(rows(&b, "runs").await.len(), 1);

    // Run now: a second run, shown at once in the section the form swaps (the page is not
    // loaded again: a mark left on it stays).
    b.script("window.markedPage = true").await;
    b.click("#run-now").await;
    b.wait_text("The engine ran").await;
    let runs = rows(&b, "runs").await;
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0][1], "dashboard");
    assert_eq!(
        b.script("return window.markedPage === true").await,
        json!(true)
    );
    // Without script the same form posts and the whole page loads, with a third run.
    b.script(
        "const f = document.querySelector('#run-now').form; \
         const plain = f.cloneNode(true); \
         for (const a of ['hx-post', 'hx-target', 'hx-select', 'hx-swap', 'hx-select-oob']) plain.removeAttribute(a); \
         f.replaceWith(plain); plain.submit();",
    )
    .await;
    wait_until("the page loads again", Duration::from_secs(20), || async {
        b.script("return window.markedPage === undefined").await == json!(true)
    })
    .await;
    b.wait_text("The engine ran").await;
    assert_eq!(rows(&b, "runs").await.len(), 3);
    let listed = get_ok(
        &app,
        &format!("/api/v1/facilities/{id}/recommendation-runs"),
    )
    .await;
    assert_eq!(listed["count"], 3);
    assert_eq!(
        b.script("return document.querySelectorAll('#sheet tbody tr.why').length")
            .await,
        json!(recs.len())
    );
    b.close().await;
}

#[tokio::test]
async fn settings_and_competitor_rates_are_changed_with_the_api_rules() {
    let app = spawn_app().await;
    let id = demo(&app, 1, 14).await;
    let b = signed_in(&app).await;
    let base = &app.server.base;
    b.goto(&format!("{base}/app/facilities/{id}")).await;
    // The settings are folded under their heading.
    b.click("#pricing-settings details > summary").await;
    // Each setting shows its default and range.
    let hint = b
        .script("return document.querySelector('input[name=max_step_pct]').parentElement.querySelector('.hint').textContent")
        .await;
    assert_eq!(hint, "default 8, 0 to 50");

    // Out of range: the message is at the field, and nothing is stored.
    b.fill("input[name=max_step_pct]", "80").await;
    b.click("#settings button[type=submit]").await;
    let error = b.text("#err-settings-max_step_pct").await;
    assert_eq!(error, "settings.max_step_pct: must be between 0 and 50");
    let invalid = b
        .script("return document.querySelector('input[name=max_step_pct]').getAttribute('aria-invalid')")
        .await;
    assert_eq!(invalid, "true");
    assert_eq!(
        b.script("return document.querySelector('input[name=max_step_pct]').value")
            .await,
        "80",
        "the value typed stays"
    );
    let settings = get_ok(&app, &format!("/api/v1/facilities/{id}/pricing-settings")).await;
    assert_eq!(settings["overrides"], json!({}));

    // In range: stored as the only override, as through the API.
    b.fill("input[name=max_step_pct]", "8").await;
    b.fill("input[name=cooldown_days]", "14").await;
    b.click("#settings button[type=submit]").await;
    b.wait_text("Pricing settings saved").await;
    let settings = get_ok(&app, &format!("/api/v1/facilities/{id}/pricing-settings")).await;
    assert_eq!(settings["overrides"], json!({ "cooldown_days": 14 }));
    b.click("#pricing-settings details > summary").await;
    assert_eq!(
        b.script("return document.querySelector('input[name=cooldown_days]').value")
            .await,
        "14"
    );

    // A competitor rate: a bad one is refused at its field, a good one listed as fresh. The
    // form swaps its own section (htmx): the page is not loaded again, so a mark left on it
    // stays, and the address does not change.
    b.script("window.markedPage = true").await;
    let path = b.path().await;
    b.fill("#add-rate input[name=competitor]", "Harbor Lockers")
        .await;
    b.fill("#add-rate input[name=size]", "10x10").await;
    b.fill("#add-rate input[name=rate]", "-5").await;
    b.click("#add-rate button[type=submit]").await;
    let error = b.text("#err-rate-rate").await;
    assert!(error.starts_with("rate:"), "{error}");
    b.fill("#add-rate input[name=rate]", "133.5").await;
    b.click("#add-rate button[type=submit]").await;
    b.wait_text("Competitor rate saved").await;
    assert_eq!(
        b.script("return window.markedPage === true").await,
        json!(true),
        "the rate form swapped its section instead of loading the page"
    );
    assert_eq!(b.path().await, path);
    assert_eq!(
        b.script("return document.querySelectorAll('#rates').length + document.querySelectorAll('#flash').length")
            .await,
        json!(2)
    );
    let listed = rows(&b, "competitor-rates").await;
    let row = listed
        .iter()
        .find(|r| r[0] == "Harbor Lockers")
        .expect("the new rate is listed");
    assert_eq!((row[1].as_str(), row[2].as_str()), ("10x10", "$133.50"));
    assert_eq!(row[7], "fresh");
    let api = get_ok(
        &app,
        &format!("/api/v1/facilities/{id}/competitor-rates?size=10x10"),
    )
    .await;
    assert!(api["competitor_rates"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["competitor"] == "Harbor Lockers" && r["rate"] == 133.5));
    // The seed's rates are two weeks old at most; with a stale limit of 3 days some are stale.
    let stale = listed.iter().filter(|r| r[7] == "stale").count();
    let api_stale = get_ok(
        &app,
        &format!("/api/v1/facilities/{id}/competitor-rates?limit=200"),
    )
    .await["competitor_rates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["stale"] == true)
        .count();
    assert_eq!(stale, api_stale);
    app.run_jobs().await;
    b.close().await;
}

#[tokio::test]
async fn another_companys_facility_page_is_404_and_csv_exports_hold_the_tables() {
    let app = spawn_app().await;
    let id = demo(&app, 3, 10).await;
    let run = get_ok(&app, &format!("/api/v1/facilities/{id}/recommendations")).await;
    let other = app.create_tenant("Other Storage").await;
    let theirs = app.create_facility_as(&other, "Their Facility").await;
    let cookie = app.session_cookie().await;
    let page = |path: String| {
        app.http
            .get(app.url(&path))
            .header("cookie", &cookie)
            .send()
    };
    for path in [
        format!("/app/facilities/{theirs}"),
        format!("/app/facilities/{theirs}?csv=recommendations"),
        format!("/app/analytics/revpas?facility_id={theirs}"),
    ] {
        let r = page(path.clone()).await.unwrap();
        assert_eq!(r.status(), 404, "{path}");
        assert!(!r.text().await.unwrap().contains("Their Facility"));
    }
    // In the browser: the not-found page, without their data.
    let b = signed_in(&app).await;
    b.goto(&format!("{}/app/facilities/{theirs}", app.server.base))
        .await;
    b.wait_text("belongs to another account").await;
    b.close().await;

    // The recommendations as CSV: an attachment with the API's figures.
    let r = page(format!("/app/facilities/{id}?csv=recommendations"))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/csv; charset=utf-8");
    let disposition = r.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        disposition,
        format!("attachment; filename=\"facility-{id}-recommendations.csv\"")
    );
    let text = r.text().await.unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(
        reader.headers().unwrap().iter().take(4).collect::<Vec<_>>(),
        ["Size", "Tier", "Current (USD)", "Recommended (USD)"]
    );
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let recs = run["recommendations"].as_array().unwrap();
    assert_eq!(records.len(), recs.len());
    for (rec, api) in records.iter().zip(recs) {
        assert_eq!(&rec[0], api["size"].as_str().unwrap());
        // The CSV holds plain figures; the header names the currency.
        assert_eq!(
            &rec[3],
            written(&api["recommended_rate"], 2, "", "").replace(',', "")
        );
        assert_eq!(&rec[6], api["action"].as_str().unwrap());
    }

    // The portfolio's table: one row per facility, the API's occupancy.
    let r = page("/app/portfolio?sort=occupancy&dir=desc&csv=portfolio-facilities".into())
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let text = r.text().await.unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let portfolio = get_ok(&app, "/api/v1/analytics/portfolio").await;
    let facilities = portfolio["facilities"].as_array().unwrap();
    assert_eq!(records.len(), facilities.len());
    // The first row is a facility of the highest occupancy (the random demo data can tie two).
    let occupancy = |f: &Value| f["occupancy_pct"].as_f64().unwrap();
    let highest = facilities.iter().map(occupancy).fold(f64::MIN, f64::max);
    let first = facilities
        .iter()
        .find(|f| f["facility_name"].as_str() == Some(&records[0][0]))
        .unwrap_or_else(|| panic!("{:?} is a facility of the API's", &records[0]));
    assert_eq!(occupancy(first), highest, "{:?}", &records[0]);
    assert_eq!(&records[0][2], written(&first["occupancy_pct"], 1, "", ""));
    // A table the page does not have is a 404, not an empty file.
    let r = page(format!("/app/facilities/{id}?csv=nope"))
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
}

#[tokio::test]
async fn the_portfolio_shows_the_kpis_and_each_facilitys_latest_run() {
    let app = spawn_app().await;
    let id = demo(&app, 4, 20).await;
    let run = get_ok(&app, &format!("/api/v1/facilities/{id}/recommendations")).await;
    let portfolio = get_ok(&app, "/api/v1/analytics/portfolio").await;
    let latest = get_ok(&app, "/api/v1/recommendation-runs/latest").await;
    assert_eq!(latest["count"], 1);
    assert_eq!(latest["runs"][0]["facility_id"], id.as_str());
    assert_eq!(
        latest["runs"][0]["recommendation_id"],
        run["recommendation_id"]
    );
    let count = |action: &str| {
        run["recommendations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["action"] == action)
            .count()
    };
    assert_eq!(latest["runs"][0]["raise"], count("raise"));
    assert_eq!(latest["runs"][0]["lower"], count("lower"));

    let b = signed_in(&app).await;
    b.goto(&format!("{}/app/portfolio", app.server.base)).await;
    let roll = &portfolio["rollup"];
    assert_eq!(
        b.text("#kpi-occupancy").await,
        pct(&roll["unit_occupancy_pct"])
    );
    assert_eq!(b.text("#kpi-revpaf").await, money(&roll["revpaf"]));
    assert_eq!(b.text("#kpi-rent-gap").await, amount(&roll["rent_gap"]));
    assert_eq!(
        b.text("#kpi-lease-up").await,
        roll["facilities_in_lease_up"].to_string()
    );
    let table = rows(&b, "portfolio-facilities").await;
    assert_eq!(table.len(), 4);
    let first = portfolio["facilities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["facility_id"] == id.as_str())
        .unwrap();
    let row = table
        .iter()
        .find(|r| r[0] == first["facility_name"].as_str().unwrap())
        .unwrap();
    assert_eq!(row[7], count("raise").to_string());
    assert_eq!(row[8], count("hold").to_string());
    assert_eq!(row[9], count("lower").to_string());
    // Sorted on the server: by occupancy, highest first, after a click on its heading twice.
    b.click("th a[href='?sort=occupancy&dir=asc']").await;
    b.click("th a[href='?sort=occupancy&dir=desc']").await;
    b.wait_text("Occupancy ▼").await;
    let occupancies: Vec<f64> = rows(&b, "portfolio-facilities")
        .await
        .iter()
        .map(|r| r[2].trim_end_matches(" %").parse().unwrap())
        .collect();
    let mut sorted = occupancies.clone();
    sorted.sort_by(|a, b| b.total_cmp(a));
    assert_eq!(occupancies, sorted);
    // A facility's name leads to its page.
    b.click(&format!("a[href='/app/facilities/{id}']")).await;
    b.wait_path(&format!("/app/facilities/{id}")).await;
    b.find("#sheet").await;
    b.close().await;
}

#[tokio::test]
async fn each_analytics_page_shows_the_numbers_of_its_endpoint() {
    let app = spawn_app().await;
    let id = demo(&app, 3, 60).await;
    let b = signed_in(&app).await;
    let base = &app.server.base;

    // RevPAU / RevPAF: the portfolio figures, the ranking and the trend.
    let api = get_ok(&app, "/api/v1/analytics/revpas").await;
    b.goto(&format!("{base}/app/analytics/revpas")).await;
    b.find("svg#chart-revpaf").await;
    assert_eq!(b.text("#revpaf").await, money(&api["portfolio"]["revpaf"]));
    assert_eq!(b.text("#revpau").await, money(&api["portfolio"]["revpau"]));
    let ranking = rows(&b, "revpas-ranking").await;
    assert_eq!(ranking.len(), 3);
    for (row, f) in ranking.iter().zip(api["facilities"].as_array().unwrap()) {
        assert_eq!(row[0], f["rank"].to_string());
        assert_eq!(row[1], f["facility_name"].as_str().unwrap());
        assert_eq!(row[3], money(&f["revpaf"]));
    }
    // The trend lists the months with data only (the demo's 60 days reach two or three).
    let trend = rows(&b, "revpas-trend").await;
    let api_trend: Vec<&Value> = api["trend"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["facilities"].as_u64() > Some(0))
        .collect();
    assert!(api_trend.len() < 12);
    assert_eq!(trend.len(), api_trend.len());
    let last = (trend.last().unwrap(), api_trend.last().unwrap());
    assert_eq!(last.0[0], last.1["month"].as_str().unwrap());
    assert_eq!(last.0[3], money(&last.1["revpaf"]));

    // Leads, 90 days.
    let api = get_ok(&app, "/api/v1/analytics/leads?period=90d").await;
    b.goto(&format!("{base}/app/analytics/leads?period=90d"))
        .await;
    b.find("svg#chart-leads").await;
    assert_eq!(
        b.text("#leads-total").await,
        written(&api["total_leads"], 0, "", "")
    );
    assert_eq!(
        b.text("#leads-move-ins").await,
        written(&api["move_ins"], 0, "", "")
    );
    let channels = rows(&b, "lead-channels").await;
    for (row, c) in channels.iter().zip(api["channels"].as_array().unwrap()) {
        // The channel's id as a word (`walk_in` is "Walk-in").
        let id = c["channel"].as_str().unwrap();
        let word = match id {
            "walk_in" => "Walk-in".to_owned(),
            other => other[..1].to_uppercase() + &other[1..].replace('_', " "),
        };
        assert_eq!(row[0], word);
        assert_eq!(row[1], c["leads"].to_string());
        assert_eq!(row[2], pct(&c["share_pct"]));
    }

    // Seasonality of one facility's 10x10.
    let api = get_ok(
        &app,
        &format!("/api/v1/analytics/seasonality?facility_id={id}&size=10x10"),
    )
    .await;
    b.goto(&format!(
        "{base}/app/analytics/seasonality?facility_id={id}&size=10x10"
    ))
    .await;
    b.find("svg#chart-seasonality").await;
    assert_eq!(b.text("#season-scope").await, "size");
    assert_eq!(b.text("#advisory").await, api["advisory"].as_str().unwrap());
    let months = rows(&b, "seasonality-months").await;
    assert_eq!(months.len(), 12);
    for (row, m) in months.iter().zip(api["months"].as_array().unwrap()) {
        assert_eq!(row[1], index(&m["index"]));
    }

    // ECRI of one facility: its sizes and totals.
    app.ecri_now(&id).await;
    let api = get_ok(&app, &format!("/api/v1/analytics/ecri?facility_id={id}")).await;
    b.goto(&format!("{base}/app/analytics/ecri?facility_id={id}"))
        .await;
    b.find("svg#chart-ecri").await;
    assert_eq!(
        b.text("#ecri-affected").await,
        api["totals"]["tenants_affected"].to_string()
    );
    assert_eq!(
        b.text("#ecri-net").await,
        amount(&api["totals"]["expected_gain"])
    );
    assert_eq!(
        b.text("#ecri-uplift").await,
        amount(&api["totals"]["monthly_uplift"])
    );
    let sizes = rows(&b, "ecri-sizes").await;
    let api_sizes = api["sizes"].as_array().unwrap();
    assert!(!api_sizes.is_empty());
    assert_eq!(sizes.len(), api_sizes.len());
    for (row, z) in sizes.iter().zip(api_sizes) {
        assert_eq!(row[0], z["size"].as_str().unwrap());
        assert_eq!(row[1], z["tenants"].to_string());
        assert_eq!(row[5], amount(&z["monthly_uplift"]));
        assert_eq!(row[7], amount(&z["expected_gain"]));
    }

    // Lease-up: the count, and each facility's mode and occupancy.
    let api = get_ok(&app, "/api/v1/analytics/lease-up").await;
    b.goto(&format!("{base}/app/analytics/lease-up")).await;
    b.find("svg#chart-lease-up").await;
    assert_eq!(
        b.text("#lease-up-count").await,
        api["facilities_in_lease_up"].to_string()
    );
    // The table lists the facilities in the chart's order, lowest occupancy first.
    let status = rows(&b, "lease-up-facilities").await;
    let mut facilities = api["facilities"].as_array().unwrap().clone();
    facilities.sort_by(|a, b| {
        let o = |f: &Value| f["occupancy_pct"].as_f64().unwrap_or(f64::MAX);
        o(a).total_cmp(&o(b))
    });
    assert_eq!(status.len(), facilities.len());
    for (row, f) in status.iter().zip(&facilities) {
        assert_eq!(row[0], f["facility_name"].as_str().unwrap());
        assert_eq!(row[1], f["mode"].as_str().unwrap().replace('_', "-"));
        assert_eq!(row[2], pct(&f["occupancy_pct"]));
    }
    let bars = b
        .script("return Array.from(document.querySelectorAll('svg#chart-lease-up text.x-label title')).map(t => t.textContent)")
        .await;
    let first: Vec<&str> = facilities
        .iter()
        .take(bars.as_array().unwrap().len())
        .map(|f| f["facility_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        bars,
        json!(first),
        "the bars' full names, in the table's order"
    );
    // A bad parameter is the API's 422, said on the page.
    b.goto(&format!("{base}/app/analytics/leads?period=7d"))
        .await;
    b.wait_text("query parameter period: must be 30d or 90d")
        .await;
    b.close().await;
}

#[tokio::test]
async fn run_now_without_a_snapshot_is_refused_on_a_pool_of_one_connection() {
    // With one database connection, the refusal page can only be drawn once the run's
    // transaction has given its connection back; holding it would wait out the pool's
    // acquire timeout and answer 503.
    let app = spawn_app_with(&[("DATABASE_MAX_CONNECTIONS", "1")]).await;
    let (s, f) = status_json(
        app.post("/api/v1/facilities", &json!({"name": "Empty Lot"}))
            .await,
    )
    .await;
    assert_eq!(s, 201, "{f}");
    let id = f["id"].as_str().unwrap();
    let cookie = app.session_cookie().await;
    let page = app
        .page_text(&cookie, &format!("/app/facilities/{id}"))
        .await;
    let csrf = page
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page's forms carry a CSRF token")
        .to_owned();
    let r = app
        .http
        .post(app.url(&format!("/app/facilities/{id}/run")))
        .header("cookie", &cookie)
        .form(&[("csrf", csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    let body = r.text().await.unwrap();
    assert!(body.contains("has no snapshot yet"), "{body}");
    assert_eq!(app.count("recommendation_runs").await, 0);
}

/// Whether a table's column holds money, by its heading as a revenue manager reads it (a
/// heading with `%` or a count is not money).
fn money_heading(h: &str) -> bool {
    let h = h.to_lowercase();
    let money_word = [
        "rate",
        "rent",
        "revpa",
        "uplift",
        "increase",
        "current",
        "recommended",
        "change",
        "before",
        "after",
        "p25",
        "median",
        "p75",
        "floor",
        "suggested",
        "potential",
        "lost",
        "gap",
    ]
    .iter()
    .any(|w| h.contains(w));
    money_word
        && !h.contains('%')
        && !h.contains("tenants")
        && !h.contains("guardrail")
        && !h.contains("changes")
        && !h.starts_with("months")
}

#[tokio::test]
async fn every_amount_on_every_page_carries_the_company_currency() {
    let app = spawn_app().await;
    let id = demo(&app, 3, 75).await;
    // The company works in euros: every amount says so; nothing is converted.
    let r = app
        .http
        .patch(app.url("/api/v1/company"))
        .header("authorization", format!("Bearer {}", app.tenant.api_key))
        .json(&json!({"currency": "EUR"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let company: Value = r.json().await.unwrap();
    assert_eq!(company["currency"], "EUR");
    assert_eq!(
        get_ok(&app, "/api/v1/status").await["company"]["currency"],
        "EUR"
    );
    let r = app
        .http
        .patch(app.url("/api/v1/company"))
        .header("authorization", format!("Bearer {}", app.tenant.api_key))
        .json(&json!({"currency": "euro"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    let e: Value = r.json().await.unwrap();
    assert!(
        e["error"]
            .as_str()
            .unwrap()
            .starts_with("currency: must be an ISO 4217"),
        "{e}"
    );

    let cookie = app.session_cookie().await;
    app.ecri_now(&id).await;
    let pages = [
        "/app".to_owned(),
        "/app/portfolio".to_owned(),
        format!("/app/facilities/{id}"),
        "/app/analytics/ecri".to_owned(),
        format!("/app/analytics/ecri?facility_id={id}"),
        "/app/analytics/seasonality".to_owned(),
        "/app/analytics/lease-up".to_owned(),
        "/app/analytics/leads?period=90d".to_owned(),
        "/app/analytics/revpas".to_owned(),
        format!("/app/analytics/revpas?facility_id={id}"),
    ];
    let th = scraper::Selector::parse("thead th").unwrap();
    let tr = scraper::Selector::parse("tbody tr").unwrap();
    let td = scraper::Selector::parse("td").unwrap();
    let table = scraper::Selector::parse("table").unwrap();
    let figure = scraper::Selector::parse("div.figures > div").unwrap();
    let b = scraper::Selector::parse("b").unwrap();
    let tick = scraper::Selector::parse("svg text.y-label").unwrap();
    let (mut amounts, mut ticks) = (0, 0);
    for path in &pages {
        let html = scraper::Html::parse_document(&app.page_text(&cookie, path).await);
        // A competitor's promotion is its own words ("First month $1"): the rest of the
        // page has no dollar sign.
        let mut text = html.root_element().text().collect::<String>();
        for t in html.select(&table) {
            let headings: Vec<String> = t.select(&th).map(|h| h.text().collect()).collect();
            if let Some(p) = headings.iter().position(|h| h.trim() == "Promotion") {
                for row in t.select(&tr) {
                    if let Some(cell) = row.select(&td).nth(p) {
                        text = text.replacen(&cell.text().collect::<String>(), "", 1);
                    }
                }
            }
        }
        if let Some(at) = text.find('$') {
            let around: String = text[at.saturating_sub(120)..].chars().take(240).collect();
            panic!("{path}: a dollar sign on a euro company's page: {around}");
        }
        for t in html.select(&table) {
            let headings: Vec<String> = t
                .select(&th)
                .map(|h| h.text().collect::<String>().trim().to_owned())
                .collect();
            for row in t.select(&tr) {
                for (i, cell) in row.select(&td).enumerate() {
                    let v = cell.text().collect::<String>().trim().to_owned();
                    let Some(h) = headings.get(i) else { continue };
                    if v.is_empty() || !v.chars().any(|c| c.is_ascii_digit()) {
                        continue;
                    }
                    if money_heading(h) {
                        amounts += 1;
                        assert!(
                            v.starts_with('€') || v.starts_with("-€"),
                            "{path}: {h} shows {v:?} without the currency"
                        );
                    }
                }
            }
        }
        for f in html.select(&figure) {
            let label = f.text().next().unwrap_or("").trim().to_owned();
            let Some(v) = f.select(&b).next() else {
                continue;
            };
            let v = v.text().collect::<String>();
            if money_heading(&label) && v.chars().any(|c| c.is_ascii_digit()) {
                amounts += 1;
                assert!(
                    v.starts_with('€') || v.starts_with("-€"),
                    "{path}: {label} {v:?}"
                );
            }
        }
        // No axis tick has more decimals than its figure: percents one, money none or
        // cents, other figures at most two.
        for t in html.select(&tick) {
            ticks += 1;
            let v = t.text().collect::<String>();
            let decimals = v
                .split('.')
                .nth(1)
                .map_or(0, |d| d.chars().take_while(char::is_ascii_digit).count());
            let most = if v.ends_with('%') { 1 } else { 2 };
            assert!(decimals <= most, "{path}: tick {v:?}");
            if v.contains('€') {
                assert!(decimals == 0 || decimals == 2, "{path}: tick {v:?}");
            }
        }
    }
    assert!(amounts > 100, "{amounts} amounts checked");
    assert!(ticks > 20, "{ticks} ticks checked");
    // The form on the overview sets it back, with the API's rule for a bad code.
    let form = |currency: &'static str| {
        let app = &app;
        let cookie = cookie.clone();
        async move {
            let page = app.page_text(&cookie, "/app").await;
            let csrf = page
                .split("name=\"csrf\" value=\"")
                .nth(1)
                .and_then(|s| s.split('"').next())
                .unwrap()
                .to_owned();
            app.http
                .post(app.url("/app/company"))
                .header("cookie", cookie)
                .header("origin", app.server.base.clone())
                .form(&[("csrf", csrf.as_str()), ("currency", currency)])
                .send()
                .await
                .unwrap()
        }
    };
    let r = form("DOLLARS").await;
    assert_eq!(r.status(), 422);
    assert!(r
        .text()
        .await
        .unwrap()
        .contains("must be an ISO 4217 currency code"));
    let r = form("GBP").await;
    assert!(r.status().is_success() || r.status().is_redirection());
    assert_eq!(
        get_ok(&app, "/api/v1/status").await["company"]["currency"],
        "GBP"
    );
    let page = app.page_text(&cookie, "/app/analytics/revpas").await;
    assert!(page.contains("£"));
    app.run_jobs().await;
}
