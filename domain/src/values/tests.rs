use super::*;

#[test]
fn sizes_normalise() {
    assert_eq!(UnitSize::parse("10x10").unwrap().to_string(), "10x10");
    assert_eq!(UnitSize::parse(" 5 X 7.5 ").unwrap().to_string(), "5x7.5");
    assert_eq!(UnitSize::parse("10x30").unwrap().area_sqft(), 300.0);
    for bad in [
        "10", "x10", "10x", "0x10", "-5x10", "10x10x10", "ax b", "1e3x10", "10x1001", "",
    ] {
        assert!(UnitSize::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn numbers_reject_out_of_range() {
    assert!(Percent::new(100.0).is_ok());
    assert!(Percent::new(100.01).is_err());
    assert!(Percent::new(-0.1).is_err());
    assert!(Percent::new(f64::NAN).is_err());
    assert_eq!(Money::new(99.999).unwrap().get(), 100.0);
    assert!(Money::new(-1.0).is_err());
    assert!(Money::new(f64::INFINITY).is_err());
    assert_eq!(Count::new(3.0).unwrap().get(), 3);
    assert!(Count::new(2.5).is_err());
    assert!(Count::new(-1.0).is_err());
}

#[test]
fn text_and_urls() {
    assert_eq!(Text::<5>::parse("  abc ").unwrap().as_str(), "abc");
    assert!(Text::<5>::parse("abcdef").is_err());
    assert!(Text::<5>::parse("   ").is_err());
    // Text-direction overrides and invisible format characters are refused like controls;
    // the joiners some scripts need are not.
    for c in [
        '\u{202E}', '\u{2066}', '\u{200F}', '\u{061C}', '\u{FEFF}', '\u{200B}',
    ] {
        assert!(
            Text::<20>::parse(&format!("evil{c}fdp.exe")).is_err(),
            "{c:?}"
        );
    }
    assert!(Text::<20>::parse("\u{0645}\u{06CC}\u{200C}\u{062E}\u{0648}").is_ok());
    assert!(Text::<20>::parse("\u{1F469}\u{200D}\u{1F4BB}").is_ok());
    assert!(HttpUrl::parse("https://example.com/x").is_ok());
    assert!(HttpUrl::parse("ftp://example.com").is_err());
    assert!(HttpUrl::parse("example.com").is_err());
}

mod properties {
    use super::super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn size_parsing_never_panics(raw in ".{0,60}") {
            let _ = UnitSize::parse(&raw);
        }

        #[test]
        fn sizes_round_trip(w in 1u32..=400, d in 1u32..=400, half in any::<bool>()) {
            let width = f64::from(w) + if half { 0.5 } else { 0.0 };
            let size = UnitSize::parse(&format!("{width} X {d}")).unwrap();
            let shown = size.to_string();
            prop_assert_eq!(UnitSize::parse(&shown).unwrap(), size.clone());
            prop_assert_eq!(size.area_sqft(), width * f64::from(d));
        }

        #[test]
        fn numbers_accept_exactly_their_range(v in -1.0e7f64..1.0e7) {
            prop_assert_eq!(Percent::new(v).is_ok(), (0.0..=100.0).contains(&v));
            prop_assert_eq!(Money::new(v).is_ok(), (0.0..=MONEY_MAX).contains(&v));
            if let Ok(m) = Money::new(v) {
                prop_assert!((m.get() - v).abs() <= 0.005 + 1e-9);
            }
            prop_assert_eq!(Count::new(v).is_ok(), v >= 0.0 && v.fract() == 0.0 && v <= f64::from(COUNT_MAX));
        }
    }
}

#[test]
fn two_decimals_never_give_a_negative_zero() {
    assert_eq!(round2(12.345_6), 12.35);
    assert_eq!(round2(-1.234), -1.23);
    for tiny in [-0.001, -0.004_99, -0.0] {
        let r = round2(tiny);
        assert_eq!(r, 0.0);
        assert!(r.is_sign_positive(), "{tiny} rounded to {r}");
        assert_eq!(serde_json::json!(r).to_string(), "0.0");
    }
}
