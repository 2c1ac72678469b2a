use super::*;

#[test]
fn units_become_unit_types_by_size_and_tier() {
    let groups = HashMap::from([("g1".to_owned(), "Climate".to_owned())]);
    let units = json!([
        { "id": "u1", "unit_group_id": "g1", "width": 10, "length": 10, "standard_rate": 120, "status": "rented" },
        { "id": "u2", "unit_group_id": "g1", "width": "10", "length": 10.0, "standard_rate": 130, "status": "available" },
        { "id": "u3", "unit_group_id": "g1", "width": 10, "length": 10, "standard_rate": 125, "status": "rented" },
        { "id": "u4", "width": 5, "length": 7.5, "standard_rate": 60, "status": "rented" },
        { "id": "u5", "width": 5, "length": 7.5, "standard_rate": 70, "status": "available" },
        { "id": "u6", "width": 10, "length": 20, "standard_rate": 200, "status": "unrentable" },
        { "id": "u7", "width": 0, "length": 5, "standard_rate": 40, "status": "rented" },
        { "id": "a b", "width": 5, "length": 5, "standard_rate": 40, "status": "reserved" }
    ]);
    let mut warnings = Vec::new();
    let (occupancy, types) =
        map_units("101", &groups, units.as_array().unwrap(), &mut warnings).unwrap();
    assert_eq!(occupancy, 60.0, "3 rented of 5 rentable");
    assert_eq!(
        Value::from(types),
        json!([
            { "size": "10x10", "tier": "Climate", "street_rate": 125.0, "occupancy_pct": 66.67, "total_units": 3, "occupied_units": 2 },
            { "size": "5x7.5", "tier": "standard", "street_rate": 65.0, "occupancy_pct": 50.0, "total_units": 2, "occupied_units": 1 }
        ])
    );
    assert_eq!(
        warnings,
        [
            "storEDGE facility 101: unit u7 has no usable width and length",
            "storEDGE facility 101: unit ? has a status other than available, rented or unrentable"
        ]
    );
    let mut warnings = Vec::new();
    assert!(map_units("9", &groups, &[], &mut warnings).is_none());
    assert_eq!(
        warnings,
        ["storEDGE facility 9: no unit could be mapped, so no snapshot"]
    );
}

#[test]
fn addresses_are_built_through_the_url_api() {
    let url = endpoint(
        "https://api.storedgefms.com/v1/?page=9&x=1",
        &["101", "units"],
        &[("page", 2), ("per_page", 100)],
    )
    .unwrap();
    assert_eq!(
        url.as_str(),
        "https://api.storedgefms.com/v1/101/units?x=1&page=2&per_page=100"
    );
    let url = endpoint(DEFAULT_BASE_URL, &["a/../b", "unit_groups"], &[]).unwrap();
    assert_eq!(
        url.as_str(),
        "https://api.storedgefms.com/v1/a%2F..%2Fb/unit_groups"
    );
}

#[test]
fn a_dot_segment_from_an_account_or_an_answer_is_refused_not_resolved() {
    for dots in [".", "..", "%2e", "%2E%2e"] {
        assert_eq!(
            endpoint(
                "https://crm.example.com/v1",
                &["companies", dots, "facilities"],
                &[]
            ),
            Err(PullError::BadUrl),
            "{dots:?}"
        );
    }
    assert_eq!(
        endpoint(
            "https://crm.example.com/v1",
            &["companies", "a.b", "facilities"],
            &[]
        )
        .unwrap()
        .as_str(),
        "https://crm.example.com/v1/companies/a.b/facilities"
    );
}
