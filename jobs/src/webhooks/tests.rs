use super::*;

#[test]
fn the_payload_has_the_interface_fields_with_milliseconds() {
    let event = RecommendationsReady {
        company_id: Uuid::nil().into(),
        facility_id: Uuid::nil().into(),
        facility_name: "Elm \"Street\"".to_owned(),
        recommendation_id: Uuid::nil(),
        generated_at: DateTime::parse_from_rfc3339("2026-11-22T05:06:07Z")
            .unwrap()
            .with_timezone(&Utc),
        per_size_count: 7,
    };
    let body = payload_body(&event, false);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["event"], "recommendations.ready");
    assert_eq!(v["generated_at"], "2026-11-22T05:06:07.000Z");
    assert_eq!(v["per_size_count"], 7);
    assert_eq!(v["facility_name"], "Elm \"Street\"");
    assert!(v.get("test").is_none());
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 7);
    let test: serde_json::Value = serde_json::from_str(&payload_body(&event, true)).unwrap();
    assert_eq!(test["test"], true);
}

#[test]
fn receiver_urls_must_be_https_and_not_obviously_internal() {
    let p = PrivateTargets::Refused;
    assert_eq!(
        parse_target_url(" https://hooks.example.com/in ", &p).unwrap(),
        "https://hooks.example.com/in"
    );
    for (bad, fragment) in [
        ("http://hooks.example.com/in", "https://"),
        ("hooks.example.com", "absolute"),
        ("https://user:pw@hooks.example.com/", "user name"),
        ("https://127.0.0.1/", "loopback"),
        ("https://10.0.0.1/", "private"),
        ("https://[::1]:8443/", "loopback"),
        ("https://169.254.169.254/", "link-local"),
        ("https://localhost/", "loopback"),
    ] {
        let e = parse_target_url(bad, &p).unwrap_err();
        assert_eq!(e.path, "url");
        assert!(e.message.contains(fragment), "{bad}: {}", e.message);
    }
    let allowed = PrivateTargets::parse("127.0.0.1").unwrap();
    assert!(parse_target_url("https://127.0.0.1:9000/", &allowed).is_ok());
}

#[test]
fn events_are_checked_and_deduplicated() {
    assert_eq!(parse_events(None).unwrap(), None);
    assert_eq!(
        parse_events(Some(vec![
            "recommendations.ready".into(),
            " recommendations.ready".into()
        ]))
        .unwrap(),
        Some(vec!["recommendations.ready".to_owned()])
    );
    assert_eq!(parse_events(Some(vec![])).unwrap_err().path, "events");
    assert_eq!(
        parse_events(Some(vec!["recommendations.ready".into(), "x".into()]))
            .unwrap_err()
            .path,
        "events[1]"
    );
    let s = new_secret();
    assert!(s.starts_with("whsec_") && s.len() == 6 + 43, "{s}");
    assert_ne!(s, new_secret());
}
