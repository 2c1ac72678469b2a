//! The engines' sentences with their amounts written as money. The pricing and ECRI engines
//! write their explanations without a currency (`target 72.93`, `898.53 lost over 12
//! months`): a run is stored once and read by every member of the company, whose currency
//! may change after. So an explanation gets its currency when it is read, here: a number
//! with exactly two decimals (the engines write amounts, and only amounts, that way) that is
//! not a percentage, a count of points, a multiple or an index becomes money of the company's
//! currency (`target $72.93`, `€898.53 lost`). A sentence whose two-decimal figures are not
//! amounts is left as it is by its caller (`ecri::decide::reason_with_money`).

use crate::values::Currency;

/// `text` with each amount written as money of `currency`.
pub fn with_money(text: &str, currency: Currency) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let starts_number = c.is_ascii_digit() && (i == 0 || !is_wordish(chars[i - 1]));
        if !starts_number {
            out.push(c);
            i += 1;
            // The rest of a number that is part of a word or an amount already (`$1,234.50`).
            while c.is_ascii_digit() && i < chars.len() && is_in_number(&chars, i) {
                out.push(chars[i]);
                i += 1;
            }
            continue;
        }
        let start = i;
        while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == ',') {
            i += 1;
        }
        let mut end = i;
        let mut decimals = 0;
        if i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
            end = i + 1;
            while end < chars.len() && chars[end].is_ascii_digit() {
                end += 1;
            }
            decimals = end - i - 1;
        }
        let number: String = chars[start..end].iter().collect();
        let rest: String = chars[end..chars.len().min(end + 8)].iter().collect();
        let money = decimals == 2
            && !end_is_word(&chars, end)
            && !is_not_money_after(&rest)
            && !out.ends_with("index ")
            && !is_money_already(&out, &rest, currency);
        match number.replace(',', "").parse::<f64>() {
            Ok(v) if money => {
                // A minus sign just before the number belongs to the amount (`-$3.20`).
                let negative =
                    out.ends_with('-') && out.chars().rev().nth(1).is_none_or(|p| !is_wordish(p));
                if negative {
                    out.pop();
                    out.push_str(&currency.format(-v));
                } else {
                    out.push_str(&currency.format(v));
                }
            }
            _ => out.push_str(&number),
        }
        i = end;
    }
    out
}

/// Whether `chars[i]` goes on the number before it: a digit, a thousands separator or a
/// decimal point followed by a digit.
fn is_in_number(chars: &[char], i: usize) -> bool {
    chars[i].is_ascii_digit()
        || (matches!(chars[i], ',' | '.') && chars.get(i + 1).is_some_and(char::is_ascii_digit))
}

fn is_wordish(c: char) -> bool {
    c.is_alphanumeric() || c == '.' || c == '_' || c == '$'
}

/// Whether the number goes on as a word or a version (`2026.11.7`) rather than ending.
fn end_is_word(chars: &[char], end: usize) -> bool {
    match chars.get(end) {
        Some(c) if c.is_alphanumeric() => true,
        Some('.') => chars.get(end + 1).is_some_and(|c| c.is_ascii_digit()),
        _ => false,
    }
}

/// Whether the number is written as money of `currency` already (`£72.93`, `72.93 kr`), so a
/// sentence read twice does not get the symbol twice.
fn is_money_already(before: &str, rest: &str, currency: Currency) -> bool {
    let symbol = currency.symbol();
    !symbol.is_empty()
        && if currency.symbol_first() {
            before.ends_with(symbol)
        } else {
            rest.trim_start_matches(['\u{a0}', ' ']).starts_with(symbol)
        }
}

/// Whether what follows a number makes it a share, a count or a multiple rather than an
/// amount (`12.50 %`, `1.25 points`, `2.50 pp`, `1.05 x the prior`).
fn is_not_money_after(rest: &str) -> bool {
    let rest = rest.trim_start_matches(['\u{a0}', ' ']);
    rest.starts_with('%')
        || rest.starts_with("point")
        || rest.starts_with("pp")
        || rest.starts_with('×')
        || rest == "x"
        || rest.starts_with("x ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_in_the_engines_sentences_become_money() {
        let usd = Currency::USD;
        assert_eq!(
            with_money(
                "occupancy is high; target 72.93, a run moves 50% of the way",
                usd
            ),
            "occupancy is high; target $72.93, a run moves 50% of the way"
        );
        assert_eq!(
            with_money(
                "the target starts from the competitor median 1234.50 (P25 99.00, P75 120.25; 4 competitors, 0 stale, weight 100%)",
                usd
            ),
            "the target starts from the competitor median $1,234.50 (P25 $99.00, P75 $120.25; 4 competitors, 0 stale, weight 100%)"
        );
        assert_eq!(
            with_money("at most 10% per change, 90.00 to 110.00", usd),
            "at most 10% per change, $90.00 to $110.00"
        );
        assert_eq!(with_money("a cut to -3.20", usd), "a cut to -$3.20");
        let eur = Currency::parse("EUR").unwrap();
        assert_eq!(
            with_money(
                "re-let at the 10x10 street rate 80.00: 898.53 lost over 12 months",
                eur
            ),
            "re-let at the 10x10 street rate €80.00: €898.53 lost over 12 months"
        );
        let gbp = Currency::parse("GBP").unwrap();
        assert_eq!(
            with_money("+1234.56 expected over 12 months against no increase", gbp),
            "+£1,234.56 expected over 12 months against no increase"
        );
    }

    #[test]
    fn shares_points_multiples_indexes_and_counts_stay_numbers() {
        for s in [
            "the size lost 1.25 points a week over 30 days",
            "seasonality index 1.05 from the facility's own move-in history",
            "\"First month free\" is worth 8.33% of rent over a 12-month stay",
            "occupancy 93.5% above the 85-92% target band raises the target",
            "engine 2026.11.7, run of 2026-11-20",
            "the move-out sensitivity is 1.25 x the prior",
            "send `force: true`",
        ] {
            assert_eq!(with_money(s, Currency::USD), s);
        }
    }

    #[test]
    fn a_sentence_read_twice_gets_its_currency_once() {
        for code in ["USD", "EUR", "GBP", "SEK"] {
            let c = Currency::parse(code).unwrap();
            let once = with_money("target 1234.50, a cut to -3.20", c);
            assert_ne!(once, "target 1234.50, a cut to -3.20", "{code}");
            assert_eq!(with_money(&once, c), once, "{code}");
        }
    }
}
