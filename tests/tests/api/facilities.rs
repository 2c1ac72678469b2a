use e2e::{payload, spawn_app, status_json};
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn create_read_update_list_delete() {
    let app = spawn_app().await;
    let (s, created) = status_json(
        app.post(
            "/api/v1/facilities",
            &json!({ "name": "Main St", "external_id": "F-9", "source_system": "storedge",
                     "address": "9 Main St", "website_url": "https://example.com/main", "rentable_sqft": 52000 }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["rentable_sqft"], 52000.0);
    assert_eq!(created["last_sync_date"], serde_json::Value::Null);

    let (s, read) = status_json(app.get(&format!("/api/v1/facilities/{id}")).await).await;
    assert_eq!(s, 200);
    assert_eq!(read["name"], "Main St");
    assert_eq!(read["website_url"], "https://example.com/main");

    // Absent fields stay, null clears, values replace.
    let (s, updated) = status_json(
        app.put(
            &format!("/api/v1/facilities/{id}"),
            &json!({ "name": "Main Street", "website_url": null }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 200, "{updated}");
    assert_eq!(updated["name"], "Main Street");
    assert_eq!(updated["website_url"], serde_json::Value::Null);
    assert_eq!(updated["address"], "9 Main St");
    assert_eq!(updated["external_id"], "F-9");
    let (s, body) = status_json(
        app.put(
            &format!("/api/v1/facilities/{id}"),
            &json!({ "name": null }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 422, "{body}");
    let (s, body) = status_json(
        app.put(
            &format!("/api/v1/facilities/{id}"),
            &json!({ "rentable_sqft": -5 }),
        )
        .await,
    )
    .await;
    assert_eq!(s, 422, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("rentable_sqft:"),
        "{body}"
    );

    // Names are unique per company (they are a matching key of the sync).
    let (s, body) = status_json(
        app.post("/api/v1/facilities", &json!({ "name": "main street" }))
            .await,
    )
    .await;
    assert_eq!(s, 409, "{body}");
    let (s, _) = status_json(
        app.post("/api/v1/facilities", &json!({ "address": "no name" }))
            .await,
    )
    .await;
    assert_eq!(s, 422);

    app.sync(&json!({ "facility": { "id": id }, "date": "2026-11-20", "unit_types": [{ "size": "10x10", "street_rate": 99 }] })).await;
    let (_, list) = status_json(app.get("/api/v1/facilities").await).await;
    assert_eq!(list["count"], 1);
    assert_eq!(list["facilities"][0]["last_sync_date"], "2026-11-20");

    // Deleting removes the facility and all of its data.
    let r = app.delete(&format!("/api/v1/facilities/{id}")).await;
    assert_eq!(r.status(), 204);
    assert_eq!(
        app.get(&format!("/api/v1/facilities/{id}")).await.status(),
        404
    );
    assert_eq!(
        app.delete(&format!("/api/v1/facilities/{id}"))
            .await
            .status(),
        404
    );
    for table in ["facilities", "sync_records", "sync_unit_types"] {
        assert_eq!(app.count(table).await, 0, "{table}");
    }
    app.run_jobs().await;
}

#[tokio::test]
async fn another_companys_facility_is_invisible_on_every_route() {
    let app = spawn_app().await;
    let (_, mine) = status_json(app.sync(&payload("Mine", "2026-11-20", 3, 2, 1)).await).await;
    let id = mine["facility"]["id"].as_str().unwrap().to_owned();
    let other = app.create_tenant("Other Co").await;
    let path = format!("/api/v1/facilities/{id}");
    for (method, body) in [
        (Method::GET, None),
        (Method::PUT, Some(json!({ "name": "Stolen" }))),
        (Method::DELETE, None),
    ] {
        let mut req = app.req_as(&other, method.clone(), &path);
        if let Some(b) = &body {
            req = req.json(b);
        }
        let (status, res) = status_json(req.send().await.unwrap()).await;
        assert_eq!(status, 404, "{method}: {res}");
        assert_eq!(res["error"], format!("no facility with id {id}"));
    }
    let (_, list) = status_json(
        app.req_as(&other, Method::GET, "/api/v1/facilities")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(list["count"], 0);
    // Untouched for its owner.
    let (_, read) = status_json(app.get(&path).await).await;
    assert_eq!(read["name"], "Mine");
    assert_eq!(app.count("sync_records").await, 1);
    app.run_jobs().await;
}
