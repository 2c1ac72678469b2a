//! The text rule on every body: walks the served OpenAPI document, builds a body for every
//! operation that takes JSON, and sends it again with a NUL and with a right-to-left override
//! (U+202E) in each of its string fields in turn. No answer may be a 5xx; a NUL is refused
//! with a 422 naming the field (the sync's forgiving read, which has its own rule, and the
//! password-reset request, which answers the same to everything, only must not fail).

use super::rate_decisions::{facility, run_engine};
use e2e::{spawn_app, status_json, TestApp};
use reqwest::Method;
use serde_json::{json, Map, Value};

const METHODS: [&str; 4] = ["post", "put", "patch", "delete"];

/// The schema `s` with its `$ref` followed.
fn resolve<'a>(doc: &'a Value, s: &'a Value) -> &'a Value {
    match s["$ref"].as_str() {
        Some(r) => {
            let name = r.trim_start_matches("#/components/schemas/");
            resolve(doc, &doc["components"]["schemas"][name])
        }
        None => s,
    }
}

/// A value of schema `s` that is as plausible as the schema alone can say.
fn example(doc: &Value, s: &Value, depth: usize) -> Value {
    let s = resolve(doc, s);
    if depth > 8 {
        return Value::Null;
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(alts) = s[key].as_array() {
            let pick = alts
                .iter()
                .find(|a| resolve(doc, a)["type"] != "null")
                .unwrap_or(&alts[0]);
            return example(doc, pick, depth + 1);
        }
    }
    if let Some(v) = s["examples"].as_array().and_then(|e| e.first()) {
        return v.clone();
    }
    if let Some(v) = s["enum"].as_array().and_then(|e| e.first()) {
        return v.clone();
    }
    let ty = match &s["type"] {
        Value::String(t) => t.clone(),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null")
            .to_owned(),
        _ if s.get("properties").is_some() => "object".to_owned(),
        _ => "string".to_owned(),
    };
    match ty.as_str() {
        "object" => {
            let mut out = Map::new();
            for (k, p) in s["properties"].as_object().into_iter().flatten() {
                out.insert(k.clone(), example(doc, p, depth + 1));
            }
            if out.is_empty() && s["additionalProperties"] != false {
                out.insert("note".to_owned(), json!("x"));
            }
            Value::Object(out)
        }
        "array" => json!([example(doc, &s["items"], depth + 1)]),
        "integer" => json!(s["minimum"].as_i64().unwrap_or(1).max(1)),
        "number" => json!(s["minimum"].as_f64().unwrap_or(1.0).max(1.0)),
        "boolean" => json!(false),
        "null" => Value::Null,
        _ => match s["format"].as_str() {
            Some("uuid") => json!(uuid::Uuid::new_v4()),
            Some("date") => json!(chrono::Utc::now().date_naive().to_string()),
            Some("date-time") => json!(chrono::Utc::now().to_rfc3339()),
            Some("email") => json!("walker@example.com"),
            Some("uri") => json!("https://example.com/x"),
            _ => json!("x"),
        },
    }
}

/// Every string in `v`, as (JSON pointer, the field's path as the API names it).
fn strings(v: &Value, pointer: &str, path: &str, out: &mut Vec<(String, String)>) {
    match v {
        Value::String(_) => out.push((pointer.to_owned(), path.to_owned())),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                strings(
                    item,
                    &format!("{pointer}/{i}"),
                    &format!("{path}[{i}]"),
                    out,
                );
            }
        }
        Value::Object(fields) => {
            for (k, item) in fields {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                strings(item, &format!("{pointer}/{k}"), &p, out);
            }
        }
        _ => {}
    }
}

/// The ids the path of an operation needs: the facility and run of the app where asked.
fn concrete(path: &str, facility_id: &str, run_id: &str) -> String {
    let path = if path.starts_with("/api/v1/facilities/{id}") {
        path.replacen("{id}", facility_id, 1)
    } else {
        path.to_owned()
    };
    path.replace("{run_id}", run_id)
        .replace("{kind}", "unit_rates")
        .replace("{id}", &uuid::Uuid::new_v4().to_string())
        .replace("{batch_id}", &uuid::Uuid::new_v4().to_string())
}

/// A body that gets past the checks the schema cannot describe, where one is needed to reach
/// a field: a decision on a unit type of the run, and settings as the facility's defaults.
async fn realistic(app: &TestApp, method: &str, path: &str, concrete: &str) -> Option<Value> {
    if path.ends_with("/decisions") {
        return Some(json!({ "decisions": [{
            "size": "10x10", "tier": "standard", "action": "override", "rate": 104,
            "reason": "why", "force": true }] }));
    }
    if method == "put" && path.ends_with("-settings") && path.contains("/facilities/") {
        let (s, current) = status_json(app.get(concrete).await).await;
        assert_eq!(s, 200, "{concrete}: {current}");
        return Some(current["defaults"].clone());
    }
    None
}

#[tokio::test]
async fn a_nul_or_a_direction_override_in_any_string_field_of_any_body_is_never_a_5xx() {
    let app = spawn_app().await;
    let facility_id = facility(&app, "Main Street").await;
    let run = run_engine(&app, &facility_id).await;
    let run_id = run["recommendation_id"].as_str().unwrap().to_owned();
    let (s, doc) = status_json(
        app.http
            .get(app.url("/api/v1/openapi.json"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 200);

    let mut failures = Vec::new();
    let mut sent = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in METHODS {
            let op = &item[method];
            let Some(schema) = op["requestBody"]["content"]["application/json"].get("schema")
            else {
                continue;
            };
            let url = concrete(path, &facility_id, &run_id);
            let body = match realistic(&app, method, path, &url).await {
                Some(b) => b,
                None => example(&doc, schema, 0),
            };
            let mut fields = Vec::new();
            strings(&body, "", "", &mut fields);
            let answers_alike = path == "/api/v1/auth/forgot";
            let forgiving = path == "/api/v1/sync";
            for (pointer, field) in &fields {
                for bad in ["a\u{0}b", "a\u{202E}b"] {
                    let mut b = body.clone();
                    *b.pointer_mut(pointer).unwrap() = json!(bad);
                    let m = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
                    let r = app.req(m, &url).json(&b).send().await.unwrap();
                    let (status, answer) = status_json(r).await;
                    sent += 1;
                    let named = answer["error"]
                        .as_str()
                        .is_some_and(|e| e.starts_with(&format!("{field}:")));
                    let ok = if status >= 500 {
                        false
                    } else if answers_alike || forgiving {
                        true
                    } else if bad.contains('\u{0}') {
                        status == 422 && named
                    } else {
                        status != 422 || named
                    };
                    if !ok {
                        failures.push(format!(
                            "{} {path} {field} = {bad:?}: {status} {answer}",
                            method.to_uppercase()
                        ));
                    }
                }
            }
        }
    }
    assert!(sent > 100, "{sent} requests");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    app.run_jobs().await;
}
