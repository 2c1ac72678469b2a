//! No dashboard page grows into a dump: on the demo data, every page of the navigation, every
//! page reachable from one facility's pages (its ECRI queue, an approved batch and a draft of
//! every suggestion among them) and every analytics page is at most 12,000 px tall at 1,440 px
//! wide.

use e2e::browser::Browser;
use e2e::{get_ok, spawn_app, status_json};
use serde_json::{json, Value};

const PASSWORD: &str = "correct horse battery";
const MAX_HEIGHT: f64 = 12_000.0;

/// The `/app` links of the page (not CSV downloads, not forms), without their fragment.
async fn links(b: &Browser) -> Vec<String> {
    let v = b
        .script(
            "return [...document.querySelectorAll('a[href^=\"/app\"]')]
                .filter(a => !a.hasAttribute('download') && !a.getAttribute('href').includes('csv='))
                .map(a => a.getAttribute('href').split('#')[0])",
        )
        .await;
    serde_json::from_value(v).unwrap()
}

#[tokio::test]
async fn no_page_of_one_facility_or_of_analytics_is_taller_than_12000_px_on_demo_data() {
    let app = spawn_app().await;
    let today = chrono::Utc::now().date_naive();
    jobs::seed::seed_bulk(app.db(), app.tenant.company_id.into(), 2, 30, today, 2)
        .await
        .unwrap();
    let facilities = get_ok(&app, "/api/v1/facilities").await;
    let ids: Vec<String> = facilities["facilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_owned())
        .collect();
    for id in &ids {
        get_ok(&app, &format!("/api/v1/facilities/{id}/recommendations")).await;
        app.ecri_now(id).await;
    }
    let fid = &ids[0];
    let ecri = get_ok(&app, &format!("/api/v1/facilities/{fid}/ecri")).await;
    let tenants = ecri["tenants"].as_array().map_or(0, Vec::len);
    assert!(
        tenants > 200,
        "the demo roll is a real one: {tenants} lines"
    );

    // An approved batch of every suggestion of the first facility, a draft of every
    // suggestion of the second.
    let batches = |id: &str| format!("/api/v1/facilities/{id}/ecri-batches");
    let (s, approved) = status_json(app.post(&batches(fid), &json!({})).await).await;
    assert_eq!(s, 201, "{approved}");
    let approved = approved["id"].as_str().unwrap().to_owned();
    let (s, a) = status_json(
        app.post(&format!("{}/{approved}/approve", batches(fid)), &json!({}))
            .await,
    )
    .await;
    assert_eq!(s, 200, "{a}");
    let (s, draft) = status_json(app.post(&batches(&ids[1]), &json!({})).await).await;
    assert_eq!(s, 201, "{draft}");
    assert!(
        draft["lines"].as_array().unwrap().len() > 50,
        "a draft of a real roll: {draft}"
    );
    let draft = draft["id"].as_str().unwrap().to_owned();

    let b = Browser::start_sized(1440, 900).await;
    b.login(&app.server.base, &app.tenant.email, PASSWORD).await;
    b.wait_path("/app/portfolio").await;
    // The facility's pages and the analytics pages, and the pages their links lead to (one
    // step further, within the facility and the analytics).
    let facility = format!("/app/facilities/{fid}");
    let mut todo = vec![
        facility.clone(),
        format!("{facility}/ecri"),
        format!("{facility}/ecri-batches/{approved}"),
        format!("/app/facilities/{}/ecri-batches/{draft}", ids[1]),
        "/app/analytics/ecri".to_owned(),
        format!("/app/analytics/ecri?facility_id={fid}"),
    ];
    todo.extend(
        [
            "/app/portfolio",
            "/app",
            "/app/facilities",
            "/app/keys",
            "/app/upload",
            "/app/data-sources",
            "/app/webhooks",
            "/app/team",
            "/app/audit",
        ]
        .map(str::to_owned),
    );
    let mut seen: Vec<String> = Vec::new();
    let mut heights: Vec<(String, f64)> = Vec::new();
    let mut depth = 0;
    while !todo.is_empty() && depth < 3 {
        let mut next = Vec::new();
        for path in todo.drain(..) {
            if seen.contains(&path) {
                continue;
            }
            seen.push(path.clone());
            b.goto(&app.url(&path)).await;
            let h: Value = b
                .script("return document.documentElement.scrollHeight")
                .await;
            heights.push((path.clone(), h.as_f64().unwrap()));
            for l in links(&b).await {
                if (l.starts_with(&facility) || l.starts_with("/app/analytics"))
                    && !seen.contains(&l)
                {
                    next.push(l);
                }
            }
        }
        todo = next;
        depth += 1;
    }
    for page in ["/ecri", &approved, &draft, "/app/portfolio", "/app/audit"] {
        assert!(
            heights.iter().any(|(p, _)| p.ends_with(page)),
            "{page} not reached: {heights:?}"
        );
    }
    assert!(
        heights.len() >= 8,
        "the walk reached the pages: {heights:?}"
    );
    let tall: Vec<_> = heights.iter().filter(|(_, h)| *h > MAX_HEIGHT).collect();
    assert!(
        tall.is_empty(),
        "taller than {MAX_HEIGHT} px: {tall:?} (all: {heights:?})"
    );
    b.close().await;
    app.run_jobs().await;
}
