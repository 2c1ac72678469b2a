//! The OpenAPI document as served: public, valid in its shape, covering every routed `/api/v1`
//! operation (and no operation that is not routed) and every endpoint of the interface; and the
//! reference page that renders it.

use e2e::{spawn_app, status_json, TestApp};
use reqwest::Method;
use serde_json::Value;
use std::collections::BTreeSet;

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// The endpoint table of the interface (`spec/interface-v1.md`, "Endpoints"), with `:id`
/// written as the document writes path parameters.
const INTERFACE: [(&str, &str); 23] = [
    ("post", "/api/v1/sync"),
    ("get", "/api/v1/facilities"),
    ("post", "/api/v1/facilities"),
    ("get", "/api/v1/facilities/{id}"),
    ("put", "/api/v1/facilities/{id}"),
    ("delete", "/api/v1/facilities/{id}"),
    ("post", "/api/v1/facilities/{id}/upload"),
    ("get", "/api/v1/facilities/{id}/recommendations"),
    ("get", "/api/v1/facilities/{id}/competitor-rates"),
    ("post", "/api/v1/facilities/{id}/competitor-rates"),
    ("get", "/api/v1/analytics/ecri"),
    ("get", "/api/v1/analytics/portfolio"),
    ("get", "/api/v1/analytics/seasonality"),
    ("get", "/api/v1/analytics/lease-up"),
    ("get", "/api/v1/analytics/leads"),
    ("get", "/api/v1/analytics/revpas"),
    ("get", "/api/v1/webhooks"),
    ("post", "/api/v1/webhooks"),
    ("delete", "/api/v1/webhooks/{id}"),
    ("post", "/api/v1/webhooks/{id}/test"),
    ("get", "/api/v1/webhooks/deliveries"),
    ("get", "/api/v1/status"),
    ("post", "/api/v1/auth/forgot"),
];

async fn document(app: &TestApp) -> Value {
    // No key: an integrator fetches the document before it has one.
    let r = app
        .http
        .get(app.url("/api/v1/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    let (status, doc) = status_json(r).await;
    assert_eq!(status, 200, "{doc}");
    doc
}

/// Documented (method, path) pairs.
fn operations(doc: &Value) -> BTreeSet<(String, String)> {
    let mut ops = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for m in METHODS {
            if item.get(m).is_some() {
                ops.insert((m.to_owned(), path.clone()));
            }
        }
    }
    ops
}

/// A concrete address for a documented path: any id will do (an unknown one is a 404 of the
/// resource, not of the endpoint).
fn concrete(path: &str) -> String {
    path.replace("{kind}", "unit_rates")
        .replace("{id}", "0192f2a4-1111-7222-8333-444455556666")
        .replace("{run_id}", "0192f2a4-1111-7222-8333-444455556667")
}

#[tokio::test]
async fn the_document_is_public_and_describes_the_api() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    assert_eq!(doc["security"][0]["bearer"], serde_json::json!([]));
    let ops = operations(&doc);
    assert!(ops.len() >= 40, "{} operations", ops.len());
    let ids: BTreeSet<&str> = ops
        .iter()
        .map(|(m, p)| doc["paths"][p][m]["operationId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), ops.len(), "operation ids are unique");
    for (method, path) in &ops {
        let op = &doc["paths"][path][method];
        let responses = op["responses"].as_object().unwrap();
        let public = op["security"] == serde_json::json!([{}]);
        // Every error answer is the envelope (or, for an upload's bad rows, extends it).
        for (status, response) in responses {
            if status.starts_with('4') || status.starts_with('5') {
                let schema = &response["content"]["application/json"]["schema"]["$ref"];
                assert!(
                    schema == "#/components/schemas/ErrorBody"
                        || schema == "#/components/schemas/UploadRejection",
                    "{method} {path} {status}: {response}"
                );
            }
        }
        if !public {
            for status in ["401", "429"] {
                assert!(
                    responses.contains_key(status),
                    "{method} {path} lacks {status}"
                );
            }
        }
        if path.contains('{') {
            assert!(responses.contains_key("404"), "{method} {path} lacks 404");
        }
        if op.get("requestBody").is_some() && path != "/api/v1/auth/forgot" {
            assert!(responses.contains_key("422"), "{method} {path} lacks 422");
        }
        assert!(
            op["summary"].as_str().is_some_and(|s| !s.is_empty()),
            "{method} {path} has no summary"
        );
    }
    // Status is answered in every subscription state; the rest of the facility routes are not.
    assert!(doc["paths"]["/api/v1/status"]["get"]["responses"]
        .get("402")
        .is_none());
    assert!(doc["paths"]["/api/v1/facilities"]["get"]["responses"]
        .get("402")
        .is_some());
    // Every link names an operation of the document.
    let mut links = 0;
    for (method, path) in &ops {
        for response in doc["paths"][path][method]["responses"]
            .as_object()
            .unwrap()
            .values()
        {
            for link in response["links"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(_, l)| l)
            {
                links += 1;
                assert!(
                    ids.contains(link["operationId"].as_str().unwrap()),
                    "{link}"
                );
            }
        }
    }
    assert!(links >= 7, "{links} links");
    // Every field says what it is (a doc comment, or the description of the type it refers to).
    let schemas = &doc["components"]["schemas"];
    for (name, schema) in schemas.as_object().unwrap() {
        for (field, property) in schema["properties"].as_object().into_iter().flatten() {
            let described = property.get("description").is_some()
                || property["oneOf"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|s| s.get("description").is_some());
            assert!(described, "{name}.{field} has no description");
        }
    }
    // Bounds the parsers enforce are in the schemas.
    assert_eq!(schemas["Percent"]["maximum"], 100.0);
    assert_eq!(schemas["Money"]["maximum"], 1_000_000.0);
    assert_eq!(schemas["Count"]["maximum"], 10_000_000.0);
    assert_eq!(schemas["Text200"]["maxLength"], 200);
    assert_eq!(
        schemas["SyncPayload"]["properties"]["unit_types"]["maxItems"],
        1000
    );
    assert_eq!(
        schemas["SyncPayload"]["required"],
        serde_json::json!(["date"])
    );
}

#[tokio::test]
async fn every_routed_operation_is_documented_and_every_documented_one_is_routed() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    let ops = operations(&doc);
    let paths: BTreeSet<&String> = ops.iter().map(|(_, p)| p).collect();
    for path in paths {
        for m in METHODS {
            let method = Method::from_bytes(m.to_uppercase().as_bytes()).unwrap();
            let r = app
                .req(method, &concrete(path))
                .send()
                .await
                .expect("request is sent");
            let (status, body) = status_json(r).await;
            let unknown = status == 405
                || body["error"]
                    .as_str()
                    .is_some_and(|e| e.starts_with("no such endpoint"));
            let documented = ops.contains(&(m.to_owned(), path.clone()));
            assert_eq!(
                !unknown, documented,
                "{m} {path}: routed = {}, documented = {documented} ({status} {body})",
                !unknown
            );
        }
    }

    // Routes are added only through `utoipa_axum::routes!`, which documents them as it routes
    // them; a plain `.route("/api/v1/...")` would serve an operation the document lacks.
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/../api/src");
    let mut literals = BTreeSet::new();
    let mut stack = vec![std::path::PathBuf::from(src)];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let flat: String = text.split_whitespace().collect::<Vec<_>>().join("");
            assert!(
                !flat.contains(".route(\"/api/"),
                "{} routes an /api path outside the document",
                path.display()
            );
            for piece in text.split('"').skip(1).step_by(2) {
                let path_like = piece
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "/_-{}.".contains(c));
                if piece.starts_with("/api/v1/") && path_like {
                    literals.insert(piece.to_owned());
                }
            }
        }
    }
    let documented: BTreeSet<&str> = ops.iter().map(|(_, p)| p.as_str()).collect();
    for literal in &literals {
        assert!(
            documented.contains(literal.as_str()),
            "{literal} is named in the api's source but not documented"
        );
    }
}

#[tokio::test]
async fn every_endpoint_of_the_interface_is_in_the_document() {
    let app = spawn_app().await;
    let ops = operations(&document(&app).await);
    for (method, path) in INTERFACE {
        assert!(
            ops.contains(&(method.to_owned(), path.to_owned())),
            "{method} {path} of the interface is not documented"
        );
    }
}

#[tokio::test]
async fn the_reference_page_loads_its_vendored_viewer_without_inline_script() {
    let app = spawn_app().await;
    let r = app.http.get(app.url("/docs")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let csp = r.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("script-src 'self';"), "{csp}");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    let html = r.text().await.unwrap();
    assert!(html.contains(r#"<redoc spec-url="/api/v1/openapi.json">"#));
    // Every script is a file of this origin.
    let scripts: Vec<&str> = html.split("<script").skip(1).collect();
    assert_eq!(scripts.len(), 1, "{html}");
    let src = scripts[0]
        .split("src=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("the script has a src");
    assert!(src.starts_with("/docs/assets/redoc-"), "{src}");
    let asset = app.http.get(app.url(src)).send().await.unwrap();
    assert_eq!(asset.status(), 200);
    assert_eq!(
        asset.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    let js = asset.bytes().await.unwrap();
    assert!(js.len() > 500_000, "the bundle is {} bytes", js.len());
    let gone = app
        .http
        .get(app.url("/docs/assets/redoc-000000000000.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
}

/// The whole document against the recorded one (`snapshots/`): a change of the code that
/// changes what the API documents, a field's name, type or description, shows here as a diff
/// to review and accept (`cargo insta review`), never silently.
#[tokio::test]
async fn the_document_is_the_recorded_one() {
    let app = spawn_app().await;
    insta::assert_json_snapshot!("openapi", document(&app).await);
}
