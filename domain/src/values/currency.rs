//! A company's currency: an ISO 4217 code the service knows, with the symbol and the minor
//! units the dashboard shows its amounts with. The table of currencies is `rusty-money`'s.

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

    /// The table of `rusty-money`, for its formatter.
    pub fn iso(self) -> &'static iso::Currency {
        self.0
    }
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
}
