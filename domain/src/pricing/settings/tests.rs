use super::*;
use serde_json::json;

#[test]
fn no_overrides_are_the_defaults() {
    // Readers of many facilities take the defaults for an empty override object without
    // merging it.
    assert_eq!(
        PricingSettings::with_overrides(&json!({})).unwrap(),
        PricingSettings::default()
    );
}

#[test]
fn the_ranges_are_the_ones_check_enforces() {
    let defaults = serde_json::to_value(PricingSettings::default()).unwrap();
    let names: Vec<&str> = defaults
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "round_to_whole")
        .collect();
    let mut listed: Vec<&str> = RANGES.iter().map(|r| r.name).collect();
    listed.sort_unstable();
    let mut names = names;
    names.sort_unstable();
    assert_eq!(listed, names, "every numeric setting has a range");
    for range in RANGES {
        let default = defaults[range.name].as_f64().unwrap();
        assert!((range.min..=range.max).contains(&default), "{}", range.name);
        let step = if range.whole { 1.0 } else { 0.01 };
        for outside in [range.min - step, range.max + step] {
            let value = if range.whole {
                json!(outside as i64)
            } else {
                json!(outside)
            };
            let e = PricingSettings::with_overrides(&json!({ range.name: value })).unwrap_err();
            assert_eq!(e.path, format!("settings.{}", range.name));
        }
        // The ends themselves are accepted (the occupancy band's two ends move together).
        for end in [range.min, range.max] {
            let mut o = serde_json::Map::new();
            let value = if range.whole {
                json!(end as i64)
            } else {
                json!(end)
            };
            o.insert(range.name.to_owned(), value.clone());
            if range.name == "occupancy_target_low_pct" {
                o.insert("occupancy_target_high_pct".into(), json!(100.0));
            }
            if range.name == "occupancy_target_high_pct" {
                o.insert("occupancy_target_low_pct".into(), json!(0.0));
            }
            PricingSettings::with_overrides(&serde_json::Value::Object(o))
                .unwrap_or_else(|e| panic!("{} = {end}: {e}", range.name));
        }
    }
}

#[test]
fn overrides_merge_over_defaults() {
    let s =
        PricingSettings::with_overrides(&json!({"max_step_pct": 5, "cooldown_days": 14})).unwrap();
    assert_eq!(s.max_step_pct, 5.0);
    assert_eq!(s.cooldown_days, 14);
    assert_eq!(s.occupancy_target_low_pct, 88.0);
}

#[test]
fn bad_overrides_name_the_field() {
    let e = PricingSettings::with_overrides(&json!({"max_stp": 5})).unwrap_err();
    assert!(e.to_string().contains("settings.max_stp"), "{e}");
    let e = PricingSettings::with_overrides(&json!({"max_step_pct": -1})).unwrap_err();
    assert!(e.to_string().contains("settings.max_step_pct"), "{e}");
    let e = PricingSettings::with_overrides(&json!({"cooldown_days": "x"})).unwrap_err();
    assert!(e.to_string().contains("settings"), "{e}");
    let e = PricingSettings::with_overrides(&json!({
        "occupancy_target_low_pct": 95, "occupancy_target_high_pct": 90
    }))
    .unwrap_err();
    assert!(e.to_string().contains("occupancy_target_low_pct"), "{e}");
    assert!(PricingSettings::with_overrides(&json!([1])).is_err());
}
