//! A company's currency: an ISO 4217 code the service knows, with the symbol and the minor
//! units its amounts are written with (on the dashboard's pages and in the API's
//! explanations). The table of currencies is `rusty-money`'s.

use rusty_money::iso;
use serde::{Deserialize, Serialize};
use std::fmt;

/// An ISO 4217 currency (`USD`, `EUR`, `GBP`, ...). Amounts are not converted: the currency
/// only says how the company's own figures are shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Currency(&'static iso::Currency);

impl Currency {
    /// The default: US dollars.
    pub const USD: Currency = Currency(iso::USD);

    /// The currency of an ISO 4217 code (upper case, as the standard writes it).
    pub fn parse(code: &str) -> Result<Self, String> {
        let code = code.trim();
        iso::find(code).map(Self).ok_or_else(|| {
            format!(
                "must be an ISO 4217 currency code such as USD, EUR or GBP, got {:?}",
                code.chars().take(12).collect::<String>()
            )
        })
    }

    /// The code, e.g. `USD`.
    pub fn code(self) -> &'static str {
        self.0.iso_alpha_code
    }

    /// The symbol, e.g. `$`.
    pub fn symbol(self) -> &'static str {
        self.0.symbol
    }

    /// Whether the symbol is written before the amount (`$12`) or after it (`12 kr`).
    pub fn symbol_first(self) -> bool {
        self.0.symbol_first
    }

    /// The decimals of its minor unit (2 for cents, 0 for yen).
    pub fn minor_decimals(self) -> u32 {
        self.0.exponent
    }

    /// `amount` as money of this currency with its minor units: `$1,234.50`, `-€3.20`,
    /// `¥1,235`, `1,234.50 kr`.
    pub fn format(self, amount: f64) -> String {
        self.amount(amount, self.minor_decimals())
    }

    /// `amount` as money of this currency with `decimals` decimals (a total is written in
    /// whole units: `$12,345`). The sign comes first, the symbol where the currency writes it
    /// (the code when it has none); separators are always `,` and `.`, as the service writes
    /// English. Rounded half away from zero; a sum that rounds to zero has no sign.
    pub fn amount(self, amount: f64, decimals: u32) -> String {
        let number = grouped(amount, decimals);
        let (sign, digits) = match number.strip_prefix('-') {
            Some(d) => ("-", d),
            None => ("", number.as_str()),
        };
        let symbol = match self.symbol() {
            "" => self.code(),
            s => s,
        };
        if self.symbol_first() {
            format!("{sign}{symbol}{digits}")
        } else {
            format!("{sign}{digits} {symbol}")
        }
    }
}

/// `v` rounded half away from zero to `decimals`, never -0.
pub fn round_to(v: f64, decimals: u32) -> f64 {
    let scale = 10f64.powi(decimals as i32);
    let r = (v * scale).round() / scale;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

/// `v` with `decimals` decimals and thousands separators: `1234567.891` with 2 is
/// `1,234,567.89`, `-0.004` is `0.00`.
pub fn grouped(v: f64, decimals: u32) -> String {
    let v = round_to(v, decimals);
    let text = format!("{:.prec$}", v.abs(), prec = decimals as usize);
    let (int, frac) = text
        .split_once('.')
        .map_or((text.as_str(), None), |(i, f)| (i, Some(f)));
    let mut out = String::with_capacity(text.len() + int.len() / 3 + 1);
    if v < 0.0 {
        out.push('-');
    }
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

impl Default for Currency {
    fn default() -> Self {
        Self::USD
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl TryFrom<String> for Currency {
    type Error = String;
    fn try_from(v: String) -> Result<Self, String> {
        Self::parse(&v)
    }
}

impl From<Currency> for String {
    fn from(c: Currency) -> String {
        c.code().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_parse_to_their_symbol_and_minor_units() {
        let usd = Currency::parse("USD").unwrap();
        assert_eq!(
            (usd.code(), usd.symbol(), usd.minor_decimals()),
            ("USD", "$", 2)
        );
        let eur = Currency::parse(" EUR ").unwrap();
        assert_eq!((eur.symbol(), eur.symbol_first()), ("€", true));
        assert_eq!(Currency::parse("JPY").unwrap().minor_decimals(), 0);
        assert_eq!(Currency::default(), usd);
        for bad in ["usd", "US", "XXXX", "", "DOLLARS"] {
            assert!(Currency::parse(bad).is_err(), "{bad}");
        }
        let json: Currency = serde_json::from_str("\"GBP\"").unwrap();
        assert_eq!(serde_json::to_string(&json).unwrap(), "\"GBP\"");
    }

    #[test]
    fn amounts_read_as_money_of_the_currency() {
        let c = |code: &str| Currency::parse(code).unwrap();
        assert_eq!(Currency::USD.format(115.0), "$115.00");
        assert_eq!(Currency::USD.format(-12.345), "-$12.35");
        assert_eq!(Currency::USD.format(1_234_567.891), "$1,234,567.89");
        assert_eq!(Currency::USD.format(-0.004), "$0.00");
        assert_eq!(c("EUR").format(1234.5), "€1,234.50");
        assert_eq!(c("GBP").format(72.93), "£72.93");
        assert_eq!(c("JPY").format(1234.5), "¥1,235");
        assert_eq!(c("SEK").amount(-1234.0, 0), "-1,234 kr");
        assert_eq!(Currency::USD.amount(1_234_567.5, 0), "$1,234,568");
        assert_eq!(grouped(999.995, 2), "1,000.00");
        assert_eq!(grouped(-0.4, 0), "0");
    }
}
