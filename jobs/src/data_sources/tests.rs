use super::*;
use chrono::NaiveDate;

#[test]
fn schedules_fire_at_most_hourly() {
    for ok in [
        "0 0 2 * * *",
        "0 0 * * * *",
        "0 15 */2 * * *",
        "0 0 0 1 1 *",
    ] {
        assert!(check_schedule(ok).is_ok(), "{ok}");
    }
    for bad in [
        "* * * * * *",
        "0 * * * * *",
        "0 */30 * * * *",
        "0 0,59 3 * * *",
    ] {
        let e = check_schedule(bad).unwrap_err();
        assert_eq!(e.path, "schedule", "{bad}");
        assert!(e.message.contains("once an hour"), "{bad}: {e}");
    }
    assert!(check_schedule("nightly").is_err());
}

#[test]
fn pull_ranges_are_one_date_or_at_most_ninety_days() {
    let d = |s: &str| Some(s.parse::<NaiveDate>().unwrap());
    let today = d("2026-11-23").unwrap();
    let range = |date, from, to| PullRange { date, from, to }.check(today);
    assert_eq!(range(None, None, None).unwrap(), None);
    assert_eq!(
        range(d("2026-11-20"), None, None).unwrap(),
        Some((d("2026-11-20").unwrap(), d("2026-11-20").unwrap()))
    );
    assert!(range(None, d("2026-08-26"), d("2026-11-23"))
        .unwrap()
        .is_some());
    let too_long = range(None, d("2026-08-25"), d("2026-11-23")).unwrap_err();
    assert!(too_long.message.contains("at most 90 days"), "{too_long}");
    assert_eq!(
        range(None, d("2026-11-21"), d("2026-11-20"))
            .unwrap_err()
            .path,
        "to"
    );
    assert_eq!(range(None, d("2026-11-21"), None).unwrap_err().path, "from");
    assert_eq!(
        range(d("2026-11-21"), d("2026-11-21"), None)
            .unwrap_err()
            .path,
        "date"
    );
    assert!(range(d("2026-11-25"), None, None).is_err());
    // Nothing before the earliest snapshot date: years before 4713 BC, which dates parse but
    // PostgreSQL cannot hold, are refused here rather than by the database.
    let early = range(d("1999-12-31"), None, None).unwrap_err();
    assert_eq!(early.path, "date");
    assert!(early.message.contains("2000-01-01"), "{early}");
    let ancient = NaiveDate::from_ymd_opt(-5000, 1, 1);
    assert_eq!(
        range(None, ancient, ancient.map(|a| a + chrono::Days::new(1)))
            .unwrap_err()
            .path,
        "from"
    );
    assert!(range(d("2000-01-01"), None, None).unwrap().is_some());
}
