//! The ECRI pages of the dashboard in a real browser: a batch drafted from the suggestions, a
//! rent edited and a line left out, approved, and its letters linked; the facility's page as a
//! work queue (filters, pages, tenants picked into a draft, tenants of an approved batch shown
//! as such); every change checked through the API, with the signed-in user as its actor.

use chrono::{Duration, Utc};
use e2e::browser::Browser;
use e2e::{get_ok, spawn_app, status_json, TestApp};
use serde_json::{json, Value};

const PASSWORD: &str = "correct horse battery";

async fn roll(app: &TestApp) -> String {
    let tenants: Vec<Value> = (0..6)
        .map(|i| {
            json!({"tenant_id": format!("U-{i}"), "size": "10x10", "rent": 100 + i,
                   "move_in_date": "2024-03-01"})
        })
        .collect();
    let date = (Utc::now().date_naive() - Duration::days(2)).to_string();
    let (s, r) = status_json(
        app.sync(&json!({
            "facility": {"name": "Browser Bay"},
            "date": date,
            "unit_types": [{"size": "10x10", "tier": "standard", "street_rate": 140,
                            "total_units": 60, "occupied_units": 57}],
            "tenants": tenants
        }))
        .await,
    )
    .await;
    assert_eq!(s, 200, "{r}");
    r["facility"]["id"].as_str().unwrap().to_owned()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

#[tokio::test]
async fn a_revenue_manager_drafts_edits_and_approves_a_batch_in_the_browser() {
    let app = spawn_app().await;
    let fid = roll(&app).await;
    let b = Browser::start().await;
    b.login(&app.server.base, &app.tenant.email, PASSWORD).await;
    b.wait_path("/app/portfolio").await;
    app.ecri_now(&fid).await;
    b.goto(&app.url(&format!("/app/facilities/{fid}/ecri")))
        .await;
    b.wait_text("A batch of every suggestion").await;
    b.click("#create-batch").await;
    b.wait_text("The draft batch is made").await;
    let path = b.path().await;
    let bid = path.rsplit('/').next().unwrap().to_owned();
    let api = format!("/api/v1/facilities/{fid}/ecri-batches/{bid}");
    let draft = get_ok(&app, &api).await;
    let lines = draft["lines"].as_array().unwrap().clone();
    assert!(lines.len() >= 2, "{draft}");
    assert_eq!(draft["created_by"]["type"], "user");
    assert_eq!(draft["created_by"]["name"], app.tenant.email.as_str());
    // The page lists every line with its rents.
    let shown = b
        .script("return document.querySelectorAll('#edit-lines-table tbody tr').length")
        .await;
    assert_eq!(shown, json!(lines.len()));

    // An edit below the suggestion (an edit equal to it is no edit), still an increase.
    let rent1 = f(&lines[0]["new_rent"]) - 2.0;
    assert!(rent1 > f(&lines[0]["current_rent"]), "{draft}");
    b.fill("input[name=rent_1]", &format!("{rent1:.2}")).await;
    b.click("input[name=keep_2]").await;
    b.click("#save-lines").await;
    b.wait_text("The batch's lines are saved").await;
    let edited = get_ok(&app, &api).await;
    assert_eq!(f(&edited["lines"][0]["new_rent"]), rent1);
    assert_eq!(edited["lines"][0]["edited"], true);
    assert_eq!(edited["lines"][1]["excluded"], true);
    assert_eq!(edited["totals"]["lines"], lines.len() - 1);

    // A rent past the step is refused on the page, naming the line, and changes nothing.
    b.fill("input[name=rent_3]", "999").await;
    b.click("#save-lines").await;
    b.wait_text("line 3: 999.00 breaks the guardrail").await;
    assert_eq!(get_ok(&app, &api).await["lines"], edited["lines"]);

    b.goto(&app.url(&format!("/app/facilities/{fid}/ecri-batches/{bid}")))
        .await;
    b.click("#approve-batch").await;
    b.wait_text("Approved: download the letters").await;
    assert_eq!(b.text("#batch-status").await, "approved");
    let approved = get_ok(&app, &api).await;
    assert_eq!(approved["status"], "approved");
    assert_eq!(approved["approved_by"]["name"], app.tenant.email.as_str());
    assert_eq!(approved["notice_date"], Utc::now().date_naive().to_string());
    let href = b
        .script("return document.querySelector('#letters').getAttribute('href')")
        .await;
    assert_eq!(
        href,
        json!(format!(
            "/app/facilities/{fid}/ecri-batches/{bid}/letters.csv"
        ))
    );
    let cookie = app.session_cookie().await;
    let csv = app.page_text(&cookie, href.as_str().unwrap()).await;
    assert_eq!(csv.lines().count(), 1 + lines.len() - 1, "{csv}");
    assert!(csv.contains(&format!("{rent1:.2}")), "{csv}");
    // The facility's list shows the batch and its actor.
    app.ecri_now(&fid).await;
    b.goto(&app.url(&format!("/app/facilities/{fid}/ecri")))
        .await;
    let listed = b.text("#ecri-batches").await;
    assert!(
        listed.contains("approved") && listed.contains(&app.tenant.email),
        "{listed}"
    );
    b.close().await;
    app.run_jobs().await;
}

/// A roll of 60 tenants of 10x10 and 12 of 5x5, each with its own rent (not clones).
async fn queue_roll(app: &TestApp) -> String {
    let mut tenants: Vec<Value> = (0..60)
        .map(|i| {
            json!({"tenant_id": format!("L-{i:02}"), "size": "10x10", "rent": 95 + (i * 7) % 30,
                   "move_in_date": format!("2023-{:02}-01", 1 + i % 12)})
        })
        .collect();
    tenants.extend((0..12).map(|i| {
        json!({"tenant_id": format!("S-{i:02}"), "size": "5x5", "rent": 40 + i,
               "move_in_date": "2024-01-01"})
    }));
    let date = (Utc::now().date_naive() - Duration::days(2)).to_string();
    let (s, r) = status_json(
        app.sync(&json!({
            "facility": {"name": "Queue Bay"},
            "date": date,
            "unit_types": [
                {"size": "10x10", "tier": "standard", "street_rate": 150, "total_units": 70, "occupied_units": 66},
                {"size": "5x5", "tier": "standard", "street_rate": 65, "total_units": 14, "occupied_units": 13}
            ],
            "tenants": tenants
        }))
        .await,
    )
    .await;
    assert_eq!(s, 200, "{r}");
    r["facility"]["id"].as_str().unwrap().to_owned()
}

/// The tenant ids of the queue's rows on the page, in order.
async fn queue_rows(b: &Browser) -> Vec<String> {
    let v = b
        .script("return [...document.querySelectorAll('#ecri-queue tbody tr')].map(r => r.dataset.tenant)")
        .await;
    serde_json::from_value(v).unwrap()
}

#[tokio::test]
async fn the_facility_ecri_page_is_a_work_queue_filtered_paged_and_picked_into_a_batch() {
    let app = spawn_app().await;
    let fid = queue_roll(&app).await;
    app.ecri_now(&fid).await;
    let api = get_ok(&app, &format!("/api/v1/facilities/{fid}/ecri")).await;
    let lines = api["tenants"].as_array().unwrap();
    let raised_10 = lines
        .iter()
        .filter(|l| l["size"] == "10x10" && f(&l["increase"]) > 0.0)
        .count();
    assert!(
        raised_10 > 50,
        "the test needs a second page of raises: {raised_10}"
    );
    let b = Browser::start_sized(1440, 900).await;
    b.login(&app.server.base, &app.tenant.email, PASSWORD).await;
    b.wait_path("/app/portfolio").await;
    let page = format!("/app/facilities/{fid}/ecri");
    b.goto(&app.url(&page)).await;
    // The page opens on the summary per size, in natural order, with the run's figures.
    let sizes = b
        .script("return [...document.querySelectorAll('#ecri-queue-sizes tbody tr')].map(r => [...r.cells].map(c => c.textContent.trim()))")
        .await;
    assert_eq!(sizes[0][0], "5x5", "{sizes}");
    assert_eq!(sizes[1][0], "10x10", "{sizes}");
    assert_eq!(sizes[1][1], "60", "{sizes}");
    assert_eq!(sizes[1][2], raised_10.to_string(), "{sizes}");
    // Every line of the run is on 50-line pages: the first page holds 50 rows.
    assert_eq!(queue_rows(&b).await.len(), 50);

    // Filter by size and by "any increase", then go to page 2.
    b.select("#filter-size", "10x10").await;
    b.select("#filter-band", "raised").await;
    b.click("#apply-filters").await;
    b.wait_text(&format!("Lines 1 to 50 of {raised_10}")).await;
    let first = queue_rows(&b).await;
    assert_eq!(first.len(), 50);
    assert!(first.iter().all(|t| t.starts_with("L-")), "{first:?}");
    b.click("#queue-next").await;
    b.wait_text(&format!("Lines 51 to {raised_10} of {raised_10}"))
        .await;
    let second = queue_rows(&b).await;
    assert_eq!(second.len(), raised_10 - 50);
    assert!(second
        .iter()
        .all(|t| t.starts_with("L-") && !first.contains(t)));
    // The page is the queue's order: the largest expected gain first.
    let gain = |t: &str| f(&lines.iter().find(|l| l["tenant_id"] == t).unwrap()["expected_gain"]);
    assert!(gain(&first[49]) >= gain(&second[0]));
    // Each line carries its short reasons, the full explanation folded away.
    let row = b
        .text(&format!("#ecri-queue tr[data-tenant='{}']", second[0]))
        .await;
    assert!(row.contains("stay ") && row.contains("gain $"), "{row}");
    let open = b
        .script("return document.querySelector('#ecri-queue details').open")
        .await;
    assert_eq!(open, json!(false));
    // The CSV still holds every matching line, not one page of it.
    let cookie = app.session_cookie().await;
    let csv = app
        .page_text(
            &cookie,
            &format!("{page}?size=10x10&band=raised&page=2&csv=ecri-suggestions"),
        )
        .await;
    assert_eq!(csv.lines().count(), 1 + raised_10, "{csv}");
    let all = app
        .page_text(&cookie, &format!("{page}?csv=ecri-suggestions"))
        .await;
    assert_eq!(all.lines().count(), 1 + lines.len());

    // Pick two tenants of page 2 into a draft batch.
    let picked = b
        .script("const b=[...document.querySelectorAll('#ecri-queue input[type=checkbox]')].slice(0,2); b.forEach(x=>x.click()); return b.map(x=>x.name.slice(5))")
        .await;
    let picked: Vec<String> = serde_json::from_value(picked).unwrap();
    assert_eq!(picked, second[..2].to_vec());
    b.click("#create-selected").await;
    b.wait_text("The draft batch is made").await;
    let bid = b.path().await.rsplit('/').next().unwrap().to_owned();
    let api_batch = format!("/api/v1/facilities/{fid}/ecri-batches/{bid}");
    let draft = get_ok(&app, &api_batch).await;
    let mut in_batch: Vec<String> = draft["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["tenant_id"].as_str().unwrap().to_owned())
        .collect();
    in_batch.sort();
    let mut want = picked.clone();
    want.sort();
    assert_eq!(in_batch, want);
    for l in draft["lines"].as_array().unwrap() {
        let engine = lines
            .iter()
            .find(|x| x["tenant_id"] == l["tenant_id"])
            .unwrap();
        assert_eq!(f(&l["new_rent"]), f(&engine["new_rent"]));
    }

    // Approved, its tenants are shown as in the batch and cannot be picked again.
    let (s, approved) =
        status_json(app.post(&format!("{api_batch}/approve"), &json!({})).await).await;
    assert_eq!(s, 200, "{approved}");
    app.ecri_now(&fid).await;
    b.goto(&app.url(&format!("{page}?size=10x10"))).await;
    let approved_on = approved["approved_at"].as_str().unwrap()[..10].to_owned();
    let effective = approved["effective_date"].as_str().unwrap().to_owned();
    for t in &picked {
        let sel = format!("#ecri-queue tr[data-tenant='{t}']");
        let shown = b
            .script(&format!(
                "const r=document.querySelector(\"{sel}\"); return r ? [r.textContent, !!r.querySelector('input[type=checkbox]')] : null"
            ))
            .await;
        let shown = if shown.is_null() {
            // Held by the engine now, the tenant sorts among the lines without a raise.
            b.goto(&app.url(&format!("{page}?size=10x10&page=2"))).await;
            b.script(&format!(
                "const r=document.querySelector(\"{sel}\"); return [r.textContent, !!r.querySelector('input[type=checkbox]')]"
            ))
            .await
        } else {
            shown
        };
        let text = shown[0].as_str().unwrap();
        assert!(
            text.contains(&format!(
                "in the batch approved on {approved_on}, effective {effective}"
            )),
            "{text}"
        );
        assert_eq!(shown[1], json!(false), "{t} is offered again");
    }
    // And a draft asked for with them anyway leaves them out (the batch use case's rule).
    let (s, e) = status_json(
        app.post(
            &format!("/api/v1/facilities/{fid}/ecri-batches"),
            &json!({"tenant_ids": picked}),
        )
        .await,
    )
    .await;
    assert_eq!(s, 409, "{e}");
    b.close().await;
    app.run_jobs().await;
}

#[tokio::test]
async fn an_approved_batch_shows_a_left_out_line_unraised_and_its_status_in_view() {
    let app = spawn_app().await;
    let fid = roll(&app).await;
    app.ecri_now(&fid).await;
    let base = format!("/api/v1/facilities/{fid}/ecri-batches");
    let (s, draft) = status_json(app.post(&base, &json!({})).await).await;
    assert_eq!(s, 201, "{draft}");
    let bid = draft["id"].as_str().unwrap();
    let (s, e) = status_json(
        app.req(reqwest::Method::PATCH, &format!("{base}/{bid}"))
            .json(&json!({"lines": [{"line": 1, "excluded": true}]}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 200, "{e}");
    let (s, a) = status_json(app.post(&format!("{base}/{bid}/approve"), &json!({})).await).await;
    assert_eq!(s, 200, "{a}");
    let b = Browser::start_sized(1440, 900).await;
    b.login(&app.server.base, &app.tenant.email, PASSWORD).await;
    b.wait_path("/app/portfolio").await;
    b.goto(&app.url(&format!("/app/facilities/{fid}/ecri-batches/{bid}")))
        .await;
    let rows = b
        .script("return [...document.querySelectorAll('#ecri-batch-lines tbody tr')].map(r => [...r.cells].map(c => c.textContent.trim()))")
        .await;
    let head = b
        .script("return [...document.querySelectorAll('#ecri-batch-lines thead th')].map(c => c.textContent.trim())")
        .await;
    let col = |name: &str| {
        head.as_array()
            .unwrap()
            .iter()
            .position(|h| h == name)
            .unwrap()
    };
    let left = &rows[0];
    assert_eq!(left[col("Line status")], "left out");
    assert_eq!(left[col("New rent")], "", "{left}");
    assert_eq!(left[col("Increase")], "", "{left}");
    let kept = &rows[1];
    assert_eq!(kept[col("Line status")], "kept");
    assert_eq!(
        kept[col("New rent")],
        format!("${:.2}", f(&a["lines"][1]["new_rent"]))
    );
    // The status column is inside the table's frame at 1,440 px, without scrolling.
    let inside = b
        .script("const w=document.querySelector('#ecri-batch-lines').closest('.table-wrap').getBoundingClientRect(); return [...document.querySelectorAll('#ecri-batch-lines thead th')].map(h => h.getBoundingClientRect().right <= w.right + 0.5)")
        .await;
    assert!(
        inside.as_array().unwrap().iter().all(|v| v == &json!(true)),
        "{inside} {head}"
    );
    b.close().await;
    app.run_jobs().await;
}

/// The cells of a table's body rows on the page, trimmed.
async fn table_rows(b: &Browser, table: &str) -> Vec<Vec<String>> {
    let v = b
        .script(&format!(
            "return [...document.querySelectorAll('#{table} tbody tr')].map(r => [...r.cells].map(c => c.textContent.trim()))"
        ))
        .await;
    serde_json::from_value(v).unwrap()
}

#[tokio::test]
async fn a_large_draft_is_worked_a_page_at_a_time_and_a_viewer_only_reads_it() {
    let app = spawn_app().await;
    let fid = queue_roll(&app).await;
    app.ecri_now(&fid).await;
    let base = format!("/api/v1/facilities/{fid}/ecri-batches");
    let (s, draft) = status_json(app.post(&base, &json!({})).await).await;
    assert_eq!(s, 201, "{draft}");
    let bid = draft["id"].as_str().unwrap().to_owned();
    let api = format!("{base}/{bid}");
    let lines = draft["lines"].as_array().unwrap().clone();
    let n = lines.len();
    assert!(n > 50, "the test needs a second page: {n} lines");
    let small = lines.iter().filter(|l| l["size"] == "5x5").count();
    assert!(small > 0 && small < n, "{draft}");

    let b = Browser::start_sized(1440, 900).await;
    b.login(&app.server.base, &app.tenant.email, PASSWORD).await;
    b.wait_path("/app/portfolio").await;
    let page = format!("/app/facilities/{fid}/ecri-batches/{bid}");
    b.goto(&app.url(&page)).await;
    // The summary per size, in natural order, adds up to the batch's totals.
    let sizes = table_rows(&b, "ecri-batch-sizes").await;
    assert_eq!(sizes.len(), 2, "{sizes:?}");
    assert_eq!(sizes[0][0], "5x5");
    assert_eq!(sizes[0][1], small.to_string());
    assert_eq!(sizes[1][0], "10x10");
    assert_eq!(sizes[1][1], (n - small).to_string());
    let uplift = |row: &[String]| -> f64 { row[6].replace(['$', ','], "").parse().unwrap() };
    let total = f(&draft["totals"]["monthly_uplift"]);
    assert!(
        (uplift(&sizes[0]) + uplift(&sizes[1]) - total).abs() <= 1.0,
        "{sizes:?} against {total}"
    );
    // 50 lines a page, the form holding only the page's lines.
    let boxes = b
        .script("return document.querySelectorAll('#edit-lines-table input[name^=rent_]').length")
        .await;
    assert_eq!(boxes, json!(50));
    b.wait_text(&format!("Lines 1 to 50 of {n}")).await;
    b.click(".lines-next").await;
    b.wait_text(&format!("Lines 51 to {n} of {n}")).await;
    // A rent the guardrails accept: 6 % over the line's current rent.
    let rent51 = (f(&lines[50]["current_rent"]) * 1.06 * 100.0).round() / 100.0;
    b.fill("input[name=rent_51]", &format!("{rent51:.2}")).await;
    b.click("#save-lines").await;
    b.wait_text("The batch's lines are saved").await;
    let edited = get_ok(&app, &api).await;
    assert_eq!(f(&edited["lines"][50]["new_rent"]), rent51);
    assert_eq!(edited["lines"][50]["edited"], true);
    // The lines of page 1, not in the form, are as they were (not left out, not edited).
    for i in 0..50 {
        assert_eq!(edited["lines"][i], lines[i], "line {}", i + 1);
    }
    // Filters: the edited lines, then one size.
    b.goto(&app.url(&format!("{page}?status=edited"))).await;
    let only = table_rows(&b, "edit-lines-table").await;
    assert_eq!(only.len(), 1, "{only:?}");
    assert_eq!(only[0][0], "51");
    b.goto(&app.url(&format!("{page}?size=5x5"))).await;
    let small_rows = table_rows(&b, "edit-lines-table").await;
    assert_eq!(small_rows.len(), small);
    assert!(small_rows.iter().all(|r| r[2] == "5x5"), "{small_rows:?}");
    b.close().await;

    // A viewer reads the draft, a page at a time, without a control it may not use.
    super::team::invite_and_accept(&app, "vera@example.com", "viewer").await;
    let v = Browser::start_sized(1440, 900).await;
    v.login(&app.server.base, "vera@example.com", PASSWORD)
        .await;
    v.wait_path("/app/portfolio").await;
    v.goto(&app.url(&page)).await;
    assert_eq!(table_rows(&v, "ecri-batch-lines").await.len(), 50);
    let controls = v
        .script("return ['#edit-lines', '#approve', '#cancel', '#content form[method=post] button'].filter(css => document.querySelector(css) !== null)")
        .await;
    assert_eq!(controls, json!([]), "controls a viewer may not use");
    let note = v.text(".role-note").await;
    assert!(note.contains("edit, approve or cancel a batch"), "{note}");
    v.close().await;
    app.run_jobs().await;
}
