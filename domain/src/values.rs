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

/// Rounded to four decimals: ratios near 1 (a demand index, a pace, RevPAF per square foot).
/// Like [`round2`], never -0.
pub fn round4(v: f64) -> f64 {
    let r = (v * 10_000.0).round() / 10_000.0;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

/// Rounded to two decimals: cents of money, hundredths of a percent. Every figure the service
/// reports to two decimals goes through here. A small negative rounds to 0, not -0 (JSON would
/// carry `-0.0`, and the dashboard shows it as 0).
pub fn round2(v: f64) -> f64 {
    let r = (v * 100.0).round() / 100.0;
    if r == 0.0 {
        0.0
    } else {
        r
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
        Ok(Self(round2(v)))
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

/// Whether `c` may not appear in text the service stores or shows: a control character
/// (C0, DEL, C1) or a format character that changes how the text around it is read without
/// being seen: the bidirectional embeddings, overrides, isolates and marks (U+061C, U+200E,
/// U+200F, U+202A to U+202E, U+2066 to U+2069; `evil\u{202E}fdp.exe` shows as `evilexe.pdf`),
/// zero-width space, word joiner, invisible operators and the byte order mark (U+200B,
/// U+2060 to U+2064, U+FEFF). The zero-width joiner and non-joiner (U+200C, U+200D) stay
/// allowed: scripts such as Persian and Devanagari and emoji sequences need them.
pub fn is_forbidden_in_text(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200B}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// Trimmed text of 1 to `MAX` characters, without the characters of
/// [`is_forbidden_in_text`].
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
        if t.chars().any(is_forbidden_in_text) {
            return Err(
                "must not contain invisible text-direction or formatting characters".to_owned(),
            );
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

mod currency;
pub use currency::{grouped, round_to, Currency};

#[cfg(test)]
mod tests;

mod schemas;
