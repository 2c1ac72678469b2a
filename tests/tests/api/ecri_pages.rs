//! A facility's ECRI suggestions a page at a time (`limit`, `cursor`): the pages hold every
//! line once in the run's order, the totals cover them all, a walk keeps to the run it began
//! on when a newer one is stored, and a bad page size or cursor is a 422 that names it.

use crate::ecri_runs::{push, snapshot};
use e2e::{get_ok, spawn_app, status_json};
use reqwest::Method;
use serde_json::Value;

#[tokio::test]
async fn the_pages_hold_every_line_once_and_a_walk_keeps_to_its_run() {
    let app = spawn_app().await;
    let sizes = [("10x10", 140.0), ("5x5", 60.0), ("10x20", 210.0)];
    let fid = push(&app, &snapshot("Pages", "2026-11-20", &sizes, 9)).await;
    app.run_jobs().await;
    let path = format!("/api/v1/facilities/{fid}/ecri");
    let whole = get_ok(&app, &path).await;
    let lines = whole["tenants"].as_array().unwrap().clone();
    assert_eq!(lines.len(), 27);
    assert_eq!(whole["next_cursor"], Value::Null, "no limit: one page");
    let run_id = whole["run"]["run_id"].as_str().unwrap().to_owned();

    // Pages of 10: 10, 10 and 7 lines, in the run's order, each with the totals of all 27.
    let mut walked = Vec::new();
    let mut pages = 0;
    let mut next = format!("{path}?limit=10");
    loop {
        let page = get_ok(&app, &next).await;
        pages += 1;
        assert_eq!(page["totals"], whole["totals"]);
        assert_eq!(page["run"]["run_id"], run_id.as_str());
        // Once the newer run is stored, the walk's pages say theirs was replaced.
        assert_eq!(
            page["run"]["stale"]
                .as_str()
                .is_some_and(|s| s.contains("replaced it")),
            pages > 1,
            "{}",
            page["run"]
        );
        walked.extend(page["tenants"].as_array().unwrap().iter().cloned());
        match page["next_cursor"].as_str() {
            Some(c) => next = format!("{path}?limit=10&cursor={c}"),
            None => break,
        }
        // A newer run stored during the walk (`fresh=true`): the walk keeps to its own.
        if pages == 1 {
            let (s, _) = status_json(app.get(&format!("{path}?fresh=true")).await).await;
            assert_eq!(s, 202);
            app.run_jobs().await;
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(walked, lines, "every line once, in order");
    // A walk begun now reads the newest run; a cursor of the old one still reads the old.
    let c = get_ok(&app, &format!("{path}?limit=10")).await["next_cursor"]
        .as_str()
        .unwrap()
        .to_owned();
    let newest = get_ok(&app, &path).await;
    assert_ne!(newest["run"]["run_id"], run_id.as_str());
    assert_eq!(newest["run"]["stale"], Value::Null);
    let from_new = get_ok(&app, &format!("{path}?limit=10&cursor={c}")).await;
    assert_eq!(from_new["run"]["run_id"], newest["run"]["run_id"]);
    let old_cursor = {
        use base64::Engine as _;
        let json = serde_json::json!({"r": run_id, "o": 20}).to_string();
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    };
    let old = get_ok(&app, &format!("{path}?limit=10&cursor={old_cursor}")).await;
    assert_eq!(old["run"]["run_id"], run_id.as_str());
    assert!(
        old["run"]["stale"]
            .as_str()
            .is_some_and(|s| s.contains("replaced it")),
        "{old}"
    );
    assert_eq!(old["tenants"].as_array().unwrap()[..], lines[20..]);
    assert_eq!(old["next_cursor"], Value::Null);

    // A page size out of range, or a cursor that is not one, is a 422 naming it.
    for (query, field) in [
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("limit=-5", "limit"),
        ("limit=ten", "limit"),
        ("cursor=abc", "cursor"),
        ("limit=5&cursor=eyJ4IjoxfQ", "cursor"),
    ] {
        let (s, e) = status_json(app.get(&format!("{path}?{query}")).await).await;
        assert_eq!(s, 422, "{query}: {e}");
        assert!(
            e["error"].as_str().is_some_and(|m| m.contains(field)),
            "{query}: {e}"
        );
    }
    // Another facility's run named by a cursor: no such run here.
    let other = push(&app, &snapshot("Other", "2026-11-20", &sizes, 2)).await;
    app.run_jobs().await;
    let (s, e) = status_json(
        app.get(&format!(
            "/api/v1/facilities/{other}/ecri?limit=10&cursor={old_cursor}"
        ))
        .await,
    )
    .await;
    assert_eq!(s, 422, "{e}");
    assert!(
        e["error"].as_str().unwrap().contains("no longer kept"),
        "{e}"
    );

    // Another company's facility stays invisible, cursor or not.
    let stranger = app.create_tenant("Stranger").await;
    let r = app
        .req_as(
            &stranger,
            Method::GET,
            &format!("{path}?limit=10&cursor={old_cursor}"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
}
