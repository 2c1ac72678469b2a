use super::*;

use chrono::NaiveDate;

#[test]
fn retry_after_is_read_in_seconds() {
    let mut h = reqwest::header::HeaderMap::new();
    assert_eq!(retry_after(&h), None);
    h.insert(reqwest::header::RETRY_AFTER, " 7".parse().unwrap());
    assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
    h.insert(
        reqwest::header::RETRY_AFTER,
        "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
    );
    assert_eq!(retry_after(&h), None);
}

#[test]
fn the_snapshots_address_is_built_with_the_url_api() {
    let date = NaiveDate::from_ymd_opt(2026, 11, 22).unwrap();
    let url = |base: &str| snapshots_url(base, date).unwrap().to_string();
    assert_eq!(
        url("https://crm.example.com"),
        "https://crm.example.com/snapshots?date=2026-11-22"
    );
    assert_eq!(
        url("https://crm.example.com/api/v2/"),
        "https://crm.example.com/api/v2/snapshots?date=2026-11-22"
    );
    assert_eq!(
        url("https://crm.example.com/api?account=7&date=1999-01-01#x"),
        "https://crm.example.com/api/snapshots?account=7&date=2026-11-22"
    );
    // An encoded slash in the base stays inside its path segment.
    assert_eq!(
        url("https://crm.example.com/a%2F..%2Fadmin"),
        "https://crm.example.com/a%2F..%2Fadmin/snapshots?date=2026-11-22"
    );
}

#[test]
fn snapshot_errors_never_quote_the_answer() {
    let e = ValidationError::new(
        "date",
        "must be a date in the form YYYY-MM-DD, got 'SECRET'",
    );
    assert_eq!(
        snapshot_error(3, &e).to_string(),
        "snapshot 3: date has a value that is not accepted"
    );
    let e = ValidationError::new("date", "is required");
    assert_eq!(
        snapshot_error(3, &e).to_string(),
        "snapshot 3: date is missing"
    );
    let e = ValidationError::new("unit_types[0].size", "invalid type: string \"SECRET\"");
    assert_eq!(
        snapshot_error(0, &e).to_string(),
        "snapshot 0: unit_types[0].size has the wrong type"
    );
    let e = ValidationError::new("facility.SECRET key", "is required");
    assert_eq!(
        snapshot_error(1, &e).to_string(),
        "snapshot 1: a field is missing"
    );
}

#[test]
fn answers_are_a_list_of_snapshots() {
    let of = |s: &str| snapshots_of(serde_json::from_str(s).unwrap());
    assert_eq!(of("[1,2]").unwrap().len(), 2);
    assert_eq!(of(r#"{"snapshots":[{}]}"#).unwrap().len(), 1);
    assert_eq!(of(r#"{"items":[]}"#), Err(PullError::NotAList));
    assert_eq!(
        PullError::TooLarge(32 * 1024 * 1024).to_string(),
        "the CRM's answer exceeds 32 MiB"
    );
    assert_eq!(
        PullError::Timeout(Duration::from_secs(30)).to_string(),
        "the CRM did not answer within 30 s"
    );
}
