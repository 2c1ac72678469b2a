//! The engine's sentences as a person reads them on the dashboard. The engine writes its
//! explanations without a currency (`target 72.93`, `the competitor P25 (61.40)`): it does not
//! know the company's, and the API answers them as written. The page writes every amount in
//! the company's currency, so an amount in a sentence is turned into money here: a number with
//! exactly two decimals (the engine writes rates, and only rates, that way) that is not a
//! percentage, a count of points or an index. Backticks, which some messages use to quote a
//! field, are left out.

use super::figures::Figures;

/// `text` with each rate written as money in the company's currency.
pub fn with_money(text: &str, fig: &Figures) -> String {
    let chars: Vec<char> = text.chars().filter(|&c| c != '`').collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let starts_number = c.is_ascii_digit() && (i == 0 || !is_wordish(chars[i - 1]));
        if !starts_number {
            out.push(c);
            i += 1;
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
        let before: String = out
            .chars()
            .rev()
            .take(6)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let money = decimals == 2
            && !end_is_word(&chars, end)
            && !is_not_money_after(&rest)
            && !before.ends_with("index ");
        match number.replace(',', "").parse::<f64>() {
            Ok(v) if money => {
                // A minus sign just before the number belongs to the amount (`-$3.20`).
                let negative =
                    out.ends_with('-') && out.chars().rev().nth(1).is_none_or(|p| !is_wordish(p));
                if negative {
                    out.pop();
                    out.push_str(&fig.rate(-v).shown);
                } else {
                    out.push_str(&fig.rate(v).shown);
                }
            }
            _ => out.push_str(&number),
        }
        i = end;
    }
    out
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

/// Whether what follows a number makes it a share or a count rather than an amount.
fn is_not_money_after(rest: &str) -> bool {
    let rest = rest.trim_start_matches(['\u{a0}', ' ']);
    rest.starts_with('%') || rest.starts_with("point") || rest.starts_with("pp")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usd() -> Figures {
        Figures::new(domain::values::Currency::parse("USD").unwrap())
    }

    #[test]
    fn rates_in_the_engines_sentences_become_money() {
        let f = usd();
        assert_eq!(
            with_money(
                "occupancy is high; target 72.93, a run moves 50% of the way",
                &f
            ),
            "occupancy is high; target $72.93, a run moves 50% of the way"
        );
        assert_eq!(
            with_money(
                "the target starts from the competitor median 1234.50 (P25 99.00, P75 120.25; 4 competitors, 0 stale, weight 100%)",
                &f
            ),
            "the target starts from the competitor median $1,234.50 (P25 $99.00, P75 $120.25; 4 competitors, 0 stale, weight 100%)"
        );
        assert_eq!(
            with_money("at most 10% per change, 90.00 to 110.00", &f),
            "at most 10% per change, $90.00 to $110.00"
        );
    }

    #[test]
    fn shares_points_indexes_and_counts_stay_numbers() {
        let f = usd();
        for s in [
            "the size lost 1.25 points a week over 30 days",
            "seasonality index 1.05 from the facility's own move-in history",
            "\"First month free\" is worth 8.33% of rent over a 12-month stay",
            "occupancy 93.5% above the 85-92% target band raises the target",
            "engine 2026.11.7",
        ] {
            assert_eq!(with_money(s, &f), s);
        }
        assert_eq!(with_money("send `force: true`", &f), "send force: true");
        assert_eq!(with_money("a cut to -3.20", &f), "a cut to -$3.20");
    }
}
