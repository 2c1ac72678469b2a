//! Value types that reject bad input once, at the boundary. Each deserialises from its plain
//! JSON form through `TryFrom`, so a payload that parses holds only valid values, and the error
//! message names what is wrong (the JSON path is added by the caller).

use serde::{Deserialize, Serialize};
use std::fmt;

/// A percentage from 0 to 100 inclusive.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Percent(f64);

impl Percent {
    pub fn new(v: f64) -> Result<Self, String> {
        if !v.is_finite() || !(0.0..=100.0).contains(&v) {
            return Err(format!("must be a percentage from 0 to 100, got {v}"));
        }
        Ok(Self(v))
    }
    pub fn get(self) -> f64 {
        self.0
    }
}
impl TryFrom<f64> for Percent {
    type Error = String;
    fn try_from(v: f64) -> Result<Self, String> {
        Self::new(v)
    }
}
impl From<Percent> for f64 {
    fn from(p: Percent) -> f64 {
        p.0
    }
}

/// The largest amount of money accepted for one monthly rate or rent.
pub const MONEY_MAX: f64 = 1_000_000.0;

/// An amount of money (currency per month for rates and rents): finite, at least 0, at most
/// [`MONEY_MAX`], rounded to cents.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Money(f64);

impl Money {
    pub fn new(v: f64) -> Result<Self, String> {
        if !v.is_finite() || v < 0.0 {
            return Err(format!("must be an amount of at least 0, got {v}"));
        }
        if v > MONEY_MAX {
            return Err(format!("must be at most {MONEY_MAX}, got {v}"));
        }
        Ok(Self((v * 100.0).round() / 100.0))
    }
    pub fn get(self) -> f64 {
        self.0
    }
}
impl TryFrom<f64> for Money {
    type Error = String;
    fn try_from(v: f64) -> Result<Self, String> {
        Self::new(v)
    }
}
impl From<Money> for f64 {
    fn from(m: Money) -> f64 {
        m.0
    }
}

/// The largest count accepted (units, tenants, move-ins, leads).
pub const COUNT_MAX: u32 = 10_000_000;

/// A whole, non-negative count. `3.0` is accepted as 3; `2.5` is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "u32")]
pub struct Count(u32);

impl Count {
    pub fn new(v: f64) -> Result<Self, String> {
        if !v.is_finite() || v < 0.0 {
            return Err(format!("must be a whole number of at least 0, got {v}"));
        }
        if v.fract() != 0.0 {
            return Err(format!("must be a whole number, got {v}"));
        }
        if v > f64::from(COUNT_MAX) {
            return Err(format!("must be at most {COUNT_MAX}, got {v}"));
        }
        // Checked above: a whole number in 0..=COUNT_MAX fits a u32.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Ok(Self(v as u32))
    }
    pub fn get(self) -> u32 {
        self.0
    }
    /// For Postgres `integer` columns; always fits because of [`COUNT_MAX`].
    pub fn as_i32(self) -> i32 {
        i32::try_from(self.0).unwrap_or(i32::MAX)
    }
}
impl TryFrom<f64> for Count {
    type Error = String;
    fn try_from(v: f64) -> Result<Self, String> {
        Self::new(v)
    }
}
impl From<Count> for u32 {
    fn from(c: Count) -> u32 {
        c.0
    }
}

/// A non-negative finite number that is not a count or money (months, square feet).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Quantity(f64);

impl Quantity {
    pub const MAX: f64 = 100_000_000.0;
    pub fn new(v: f64) -> Result<Self, String> {
        if !v.is_finite() || v < 0.0 {
            return Err(format!("must be a number of at least 0, got {v}"));
        }
        if v > Self::MAX {
            return Err(format!("must be at most {}, got {v}", Self::MAX));
        }
        Ok(Self(v))
    }
    pub fn get(self) -> f64 {
        self.0
    }
}
impl TryFrom<f64> for Quantity {
    type Error = String;
    fn try_from(v: f64) -> Result<Self, String> {
        Self::new(v)
    }
}
impl From<Quantity> for f64 {
    fn from(q: Quantity) -> f64 {
        q.0
    }
}

/// A unit size `<width>x<depth>` in feet, such as `10x10` or `5x7.5`. Parsing is lenient about
/// case and spaces (`10 X 10`); the normalised form is `10x10`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct UnitSize {
    width: f64,
    depth: f64,
}

impl UnitSize {
    /// Largest accepted side, in feet (the biggest vehicle and warehouse bays are well below).
    pub const MAX_SIDE_FT: f64 = 1_000.0;

    pub fn parse(raw: &str) -> Result<Self, String> {
        let shown: String = raw.chars().take(40).collect();
        let bad =
            || format!("must be a size like 10x10 or 5x7.5 (width x depth in feet), got '{shown}'");
        if raw.len() > 40 {
            return Err(bad());
        }
        let lower = raw.trim().to_ascii_lowercase();
        let (w, d) = lower.split_once('x').ok_or_else(bad)?;
        let side = |s: &str| -> Result<f64, String> {
            let s = s.trim();
            if s.is_empty() || !s.chars().all(|c| c.is_ascii_digit() || c == '.') {
                return Err(bad());
            }
            let v: f64 = s.parse().map_err(|_| bad())?;
            if v <= 0.0 || v > Self::MAX_SIDE_FT {
                return Err(format!(
                    "sides must be more than 0 and at most {} ft, got '{shown}'",
                    Self::MAX_SIDE_FT
                ));
            }
            Ok(v)
        };
        Ok(Self {
            width: side(w)?,
            depth: side(d)?,
        })
    }
    pub fn width_ft(&self) -> f64 {
        self.width
    }
    pub fn depth_ft(&self) -> f64 {
        self.depth
    }
    pub fn area_sqft(&self) -> f64 {
        self.width * self.depth
    }
}

impl fmt::Display for UnitSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `{}` on f64 prints 10 as "10" and 7.5 as "7.5".
        write!(f, "{}x{}", self.width, self.depth)
    }
}
impl TryFrom<String> for UnitSize {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        Self::parse(&s)
    }
}
impl From<UnitSize> for String {
    fn from(s: UnitSize) -> String {
        s.to_string()
    }
}

/// Trimmed text of 1 to `MAX` characters.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Text<const MAX: usize>(String);

impl<const MAX: usize> Text<MAX> {
    pub fn parse(raw: &str) -> Result<Self, String> {
        let t = raw.trim();
        if t.is_empty() {
            return Err("must not be empty".to_owned());
        }
        let n = t.chars().count();
        if n > MAX {
            return Err(format!("must be at most {MAX} characters, got {n}"));
        }
        if t.chars().any(|c| c.is_control()) {
            return Err("must not contain control characters".to_owned());
        }
        Ok(Self(t.to_owned()))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
    pub fn into_string(self) -> String {
        self.0
    }
}
impl<const MAX: usize> TryFrom<String> for Text<MAX> {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        Self::parse(&s)
    }
}
impl<const MAX: usize> From<Text<MAX>> for String {
    fn from(t: Text<MAX>) -> String {
        t.0
    }
}

/// An absolute http(s) URL of at most 2,048 characters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct HttpUrl(String);

impl HttpUrl {
    pub const MAX_LEN: usize = 2048;
    pub fn parse(raw: &str) -> Result<Self, String> {
        let raw = raw.trim();
        if raw.len() > Self::MAX_LEN {
            return Err(format!(
                "must be a URL of at most {} characters",
                Self::MAX_LEN
            ));
        }
        let url =
            url::Url::parse(raw).map_err(|e| format!("must be an absolute http(s) URL ({e})"))?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err("must be an absolute http(s) URL".to_owned());
        }
        Ok(Self(url.to_string()))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}
impl TryFrom<String> for HttpUrl {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        Self::parse(&s)
    }
}
impl From<HttpUrl> for String {
    fn from(u: HttpUrl) -> String {
        u.0
    }
}

/// Serializes a UTC time as ISO 8601 with milliseconds (`2026-11-22T05:20:28.123Z`).
pub fn millis<S: serde::Serializer>(
    at: &chrono::DateTime<chrono::Utc>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_str(&at.format("%Y-%m-%dT%H:%M:%S%.3fZ"))
}

#[cfg(test)]
mod tests {
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
}

/// OpenAPI schemas of the value types: each states the bounds its constructor enforces, so the
/// document and the parser cannot disagree on them.
mod schemas {
    use super::{Count, HttpUrl, Money, Percent, Quantity, Text, UnitSize, COUNT_MAX, MONEY_MAX};
    use std::borrow::Cow;
    use utoipa::openapi::schema::{ObjectBuilder, SchemaFormat, SchemaType, Type};
    use utoipa::openapi::{KnownFormat, RefOr, Schema};
    use utoipa::{PartialSchema, ToSchema};

    fn number(description: &str, min: f64, max: Option<f64>) -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Number))
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Double)))
            .minimum(Some(min))
            .maximum(max)
            .description(Some(description))
            .into()
    }

    impl PartialSchema for Percent {
        fn schema() -> RefOr<Schema> {
            number("A percentage from 0 to 100.", 0.0, Some(100.0))
        }
    }
    impl ToSchema for Percent {}

    impl PartialSchema for Money {
        fn schema() -> RefOr<Schema> {
            number(
                "An amount of money (currency per month) from 0 to 1,000,000, rounded to cents.",
                0.0,
                Some(MONEY_MAX),
            )
        }
    }
    impl ToSchema for Money {}

    impl PartialSchema for Quantity {
        fn schema() -> RefOr<Schema> {
            number("A finite number of at least 0.", 0.0, None)
        }
    }
    impl ToSchema for Quantity {}

    impl PartialSchema for Count {
        fn schema() -> RefOr<Schema> {
            ObjectBuilder::new()
                .schema_type(SchemaType::Type(Type::Integer))
                .minimum(Some(0))
                .maximum(Some(f64::from(COUNT_MAX)))
                .description(Some(
                    "A whole number from 0 to 10,000,000 (3.0 is read as 3).",
                ))
                .into()
        }
    }
    impl ToSchema for Count {}

    impl PartialSchema for UnitSize {
        fn schema() -> RefOr<Schema> {
            ObjectBuilder::new()
                .schema_type(SchemaType::Type(Type::String))
                .max_length(Some(40))
                .pattern(Some(
                    r"^\s*[0-9]+(\.[0-9]+)?\s*[xX]\s*[0-9]+(\.[0-9]+)?\s*$",
                ))
                .description(Some(
                    "A unit size <width>x<depth> in feet, each side above 0 and at most 1,000 \
                     (10x10, 5x7.5).",
                ))
                .examples(["10x10"])
                .into()
        }
    }
    impl ToSchema for UnitSize {}

    impl<const MAX: usize> PartialSchema for Text<MAX> {
        fn schema() -> RefOr<Schema> {
            ObjectBuilder::new()
                .schema_type(SchemaType::Type(Type::String))
                .min_length(Some(1))
                .max_length(Some(MAX))
                .pattern(Some(
                    r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$",
                ))
                .description(Some(format!(
                    "Text of 1 to {MAX} characters (trimmed), no control characters."
                )))
                .into()
        }
    }
    impl<const MAX: usize> ToSchema for Text<MAX> {
        fn name() -> Cow<'static, str> {
            Cow::Owned(format!("Text{MAX}"))
        }
    }

    impl PartialSchema for HttpUrl {
        fn schema() -> RefOr<Schema> {
            ObjectBuilder::new()
                .schema_type(SchemaType::Type(Type::String))
                .format(Some(SchemaFormat::Custom("uri".to_owned())))
                .max_length(Some(HttpUrl::MAX_LEN))
                .pattern(Some("^\\s*[hH][tT][tT][pP][sS]?://"))
                .description(Some(
                    "An absolute http or https URL of at most 2,048 characters.",
                ))
                .into()
        }
    }
    impl ToSchema for HttpUrl {}
}
