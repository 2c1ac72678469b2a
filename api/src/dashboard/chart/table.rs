//! The tables every page shows, as HTML and as CSV (`?csv=<id>` on the page's address).

use crate::dashboard::figures::Cell;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use maud::{html, Markup};

/// A table of a page: shown as HTML, exported as CSV (`?csv=<id>` on the page's address).
pub struct Table {
    pub id: String,
    pub caption: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    pub fn new(id: impl Into<String>, caption: impl Into<String>, headers: &[&str]) -> Self {
        Self {
            id: id.into(),
            caption: caption.into(),
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    /// A row: labels and figures (`cells![name, figures.rate(v), ...]`).
    pub fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    /// The table with a link to its CSV beside it; `query` is the page's own query string
    /// (the CSV holds the same rows as the page).
    pub fn render(&self, query: &str) -> Markup {
        self.render_cells(query, false)
    }

    /// Like [`Table::render`], for a table whose columns after the first hold figures (a
    /// chart's table view): the right alignment comes from the table's class instead of one on
    /// each cell, which keeps a year of days to a smaller page.
    pub fn render_figures(&self, query: &str) -> Markup {
        self.render_cells(query, true)
    }

    fn render_cells(&self, query: &str, figures: bool) -> Markup {
        let href = if query.is_empty() {
            format!("?csv={}", self.id)
        } else {
            format!("?{query}&csv={}", self.id)
        };
        html! {
            div class="table-head" {
                span class="muted" { (self.caption) }
                a class="csv" href=(href) download { "CSV" }
            }
            div class="table-wrap" {
                table id=(self.id) class=[figures.then_some("num-cols")] {
                    thead { tr { @for h in &self.headers { th scope="col" { (h) } } } }
                    tbody {
                        @for r in &self.rows {
                            tr { @for c in r {
                                @if !figures && c.kind.is_some() { td class="num" { (c) } } @else { td { (c) } }
                            } }
                        }
                    }
                    // An empty table says so rather than showing bare headers (in the foot, so
                    // its body still has a row per record).
                    @if self.rows.is_empty() {
                        tfoot { tr { td class="muted empty" colspan=(self.headers.len()) { "None yet." } } }
                    }
                }
            }
        }
    }

    /// The table as a CSV file (`Content-Disposition: attachment`).
    pub fn csv(&self, file_stem: &str) -> Response {
        let bytes = self.csv_bytes();
        let name: String = format!("{file_stem}-{}", self.id)
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        (
            [
                (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{name}.csv\""),
                ),
            ],
            bytes,
        )
            .into_response()
    }
}

impl Table {
    /// The CSV of the table, through the service's one CSV writer (formulas neutralised).
    /// The figures are written plain (`12345`, `85.3`); a column of money says its currency
    /// in its header (`Actual rent (USD)`).
    pub(super) fn csv_bytes(&self) -> Vec<u8> {
        let headers: Vec<String> = self
            .headers
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let code = self
                    .rows
                    .iter()
                    .find_map(|r| r.get(i).and_then(|c| c.currency));
                match code {
                    Some(code) if !h.contains(code) => format!("{h} ({code})"),
                    _ => h.clone(),
                }
            })
            .collect();
        let rows = self
            .rows
            .iter()
            .map(|r| r.iter().map(|c| c.plain.clone()).collect::<Vec<String>>());
        crate::csv_export::write(&headers, rows)
    }
}

/// The CSV of the table a page was asked for (`?csv=<id>`), if it shows one by that id.
pub fn export(tables: &[&Table], wanted: Option<&str>, file_stem: &str) -> Option<Response> {
    let wanted = wanted?;
    Some(match tables.iter().find(|t| t.id == wanted) {
        Some(t) => t.csv(file_stem),
        None => crate::dashboard::page::error_page(
            axum::http::StatusCode::NOT_FOUND,
            "This page has no table by that name.",
        ),
    })
}
