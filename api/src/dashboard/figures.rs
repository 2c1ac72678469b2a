//! How the dashboard writes a figure: in the company's currency, with thousands separators and
//! a fixed number of decimals per kind of figure, so that $1,234 and 85.3 % read the same on
//! every page, in every table, on every chart axis.
//!
//! | Kind | Decimals | Example |
//! |---|---|---|
//! | [`Measure::Amount`]: totals (potential rent, uplift, revenue) | 0 | $12,345 |
//! | [`Measure::Rate`]: one unit's rate or rent, RevPAU | the currency's minor units (2) | $115.00 |
//! | [`Measure::PerSqFt`]: per square foot | 2 | $1.02 |
//! | [`Measure::Pct`]: percents | 1 | 85.3 % |
//! | [`Measure::Points`]: percentage points | 1 | 2.5 pp |
//! | [`Measure::Count`]: units, tenants, leads | 0 | 1,204 |
//! | [`Measure::Expected`]: an expected count (move-outs) | 1 | 2.4 |
//! | [`Measure::Index`]: ratios near 1 (a demand index) | 2 | 1.05 |
//! | [`Measure::Pace`]: small rates (move-ins per facility-day) | 3 | 0.042 |
//!
//! A table keeps both forms of each figure: the page shows the formatted text, the CSV the
//! plain number (`12345`, `115.00`, `85.3`), with the currency code in the column's header.

use domain::values::{grouped, round_to, Currency};
use maud::{Markup, Render};

/// The kind of a figure, which sets its decimals and whether it is money.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    Amount,
    Rate,
    PerSqFt,
    Pct,
    Points,
    Count,
    Expected,
    Index,
    Pace,
}

impl Measure {
    pub fn is_money(self) -> bool {
        matches!(self, Measure::Amount | Measure::Rate | Measure::PerSqFt)
    }
}

/// One figure as the page shows it and as its CSV holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// The text on the page: `$12,345`, `85.3 %`, or a label.
    pub shown: String,
    /// The text in the CSV: the plain number (`12345`), or the label.
    pub plain: String,
    /// The figure's kind; `None` for a label.
    pub kind: Option<Measure>,
    /// The currency code of an amount of money, for the CSV's header.
    pub currency: Option<&'static str>,
}

impl Cell {
    /// A label (a name, a date, a note): shown and exported as it is.
    pub fn text(s: impl Into<String>) -> Self {
        let s = s.into();
        Self {
            plain: s.clone(),
            shown: s,
            kind: None,
            currency: None,
        }
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Self {
        Self::text(s)
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Self {
        Self::text(s)
    }
}

impl Render for Cell {
    fn render(&self) -> Markup {
        self.shown.render()
    }
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// The cells of a table row, each turned into a [`Cell`] (a `String` becomes a label).
macro_rules! cells {
    ($($c:expr),* $(,)?) => { vec![$($crate::dashboard::figures::Cell::from($c)),*] };
}
pub(crate) use cells;

/// How sizes sort on every page: by area, then width (`5x5` < `5x10` < `10x10` < `10x20`,
/// where text order puts `10x10` first); a size that does not read as one sorts last, by its
/// text.
pub fn size_order(size: &str) -> (u64, u64, String) {
    match domain::values::UnitSize::parse(size) {
        Ok(u) => (
            (u.area_sqft() * 100.0).round() as u64,
            (u.width_ft() * 100.0).round() as u64,
            size.to_owned(),
        ),
        Err(_) => (u64::MAX, u64::MAX, size.to_owned()),
    }
}

/// The figures of one company: its currency, and a function per kind.
#[derive(Clone, Copy, Debug)]
pub struct Figures {
    pub currency: Currency,
}

impl Figures {
    pub fn new(currency: Currency) -> Self {
        Self { currency }
    }

    /// The decimals a figure of this kind is shown with.
    pub fn decimals(&self, kind: Measure) -> u32 {
        match kind {
            Measure::Amount | Measure::Count => 0,
            Measure::Rate => self.currency.minor_decimals(),
            Measure::PerSqFt | Measure::Index => 2,
            Measure::Pace => 3,
            Measure::Pct | Measure::Points | Measure::Expected => 1,
        }
    }

    /// A figure of `kind`; an absent or non-finite value is an empty cell.
    pub fn cell(&self, kind: Measure, v: impl Into<Option<f64>>) -> Cell {
        match v.into().filter(|v| v.is_finite()) {
            Some(v) => self.with_decimals(kind, v, self.decimals(kind)),
            None => Cell {
                shown: String::new(),
                plain: String::new(),
                kind: Some(kind),
                currency: kind.is_money().then(|| self.currency.code()),
            },
        }
    }

    /// A figure of `kind` with `decimals` decimals (a chart's tick may need fewer than its
    /// kind, never more).
    pub fn with_decimals(&self, kind: Measure, v: f64, decimals: u32) -> Cell {
        let v = round_to(v, decimals);
        let plain = format!("{v:.prec$}", prec = decimals as usize);
        let shown = if kind.is_money() {
            self.currency.amount(v, decimals)
        } else {
            let grouped = grouped(v, decimals);
            match kind {
                Measure::Pct => format!("{grouped}\u{a0}%"),
                Measure::Points => format!("{grouped}\u{a0}pp"),
                _ => grouped,
            }
        };
        Cell {
            shown,
            plain,
            kind: Some(kind),
            currency: kind.is_money().then(|| self.currency.code()),
        }
    }

    pub fn amount(&self, v: impl Into<Option<f64>>) -> Cell {
        self.cell(Measure::Amount, v)
    }
    pub fn rate(&self, v: impl Into<Option<f64>>) -> Cell {
        self.cell(Measure::Rate, v)
    }
    pub fn per_sqft(&self, v: impl Into<Option<f64>>) -> Cell {
        self.cell(Measure::PerSqFt, v)
    }
    pub fn pct(&self, v: impl Into<Option<f64>>) -> Cell {
        self.cell(Measure::Pct, v)
    }
    pub fn points(&self, v: impl Into<Option<f64>>) -> Cell {
        self.cell(Measure::Points, v)
    }
    pub fn count(&self, v: impl Into<Option<f64>>) -> Cell {
        self.cell(Measure::Count, v)
    }
    pub fn expected(&self, v: impl Into<Option<f64>>) -> Cell {
        self.cell(Measure::Expected, v)
    }
    pub fn index(&self, v: impl Into<Option<f64>>) -> Cell {
        self.cell(Measure::Index, v)
    }
    pub fn pace(&self, v: impl Into<Option<f64>>) -> Cell {
        self.cell(Measure::Pace, v)
    }

    /// An engine's sentence as a person reads it: each amount as money of the company's
    /// currency (`target $72.93`, see `domain::prose`), and without the backticks some
    /// messages quote a field with.
    pub fn prose(&self, text: &str) -> String {
        domain::prose::with_money(&text.replace('`', ""), self.currency)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn sizes_sort_by_area_then_width_not_as_text() {
        let mut sizes = vec!["10x20", "10x10", "5x10", "oversize", "5x5", "7.5x10"];
        sizes.sort_by_key(|s| size_order(s));
        assert_eq!(
            sizes,
            ["5x5", "5x10", "7.5x10", "10x10", "10x20", "oversize"]
        );
    }

    use super::*;

    fn usd() -> Figures {
        Figures::new(Currency::USD)
    }

    #[test]
    fn each_kind_reads_with_its_decimals_and_separators() {
        let f = usd();
        assert_eq!(f.amount(1_234_567.5).shown, "$1,234,568");
        assert_eq!(f.amount(1_234_567.5).plain, "1234568");
        assert_eq!(f.rate(115.0).shown, "$115.00");
        assert_eq!(f.rate(45.1).shown, "$45.10");
        assert_eq!(f.rate(-12.345).shown, "-$12.35");
        assert_eq!(f.per_sqft(1.016).shown, "$1.02");
        assert_eq!(f.pct(0.919_999_999_999_999_9).shown, "0.9\u{a0}%");
        assert_eq!(f.pct(85.25).plain, "85.3");
        assert_eq!(f.count(1204.0).shown, "1,204");
        assert_eq!(f.index(1.0449).shown, "1.04");
        assert_eq!(f.amount(-0.4).shown, "$0");
        assert_eq!(f.pct(-0.04).shown, "0.0\u{a0}%");
        assert_eq!(f.amount(None).shown, "");
        assert_eq!(f.amount(f64::NAN).shown, "");
    }

    #[test]
    fn sentences_get_the_currency_and_lose_their_backticks() {
        let gbp = Figures::new(Currency::parse("GBP").unwrap());
        assert_eq!(
            gbp.prose("target 72.93; send `force: true`"),
            "target £72.93; send force: true"
        );
    }

    #[test]
    fn the_currency_sets_symbol_and_minor_units() {
        let eur = Figures::new(Currency::parse("EUR").unwrap());
        assert_eq!(eur.rate(1234.5).shown, "€1,234.50");
        let yen = Figures::new(Currency::parse("JPY").unwrap());
        assert_eq!(yen.rate(1234.5).shown, "¥1,235");
        let sek = Figures::new(Currency::parse("SEK").unwrap());
        assert_eq!(sek.amount(-1234.0).shown, "-1,234 kr");
    }
}
