//! Reading an upload's body to its end and checking every row, with no database connection
//! held: a slow or abandoned upload costs a socket and a thread, never a pooled connection or a
//! lock. What comes out is either every row checked and ready to write, or the reasons not to.

use bytes::Bytes;
use chrono::NaiveDate;
use domain::upload::{
    self, Columns, DuplicateCheck, RollRow, Row, RowError, UnitRateRow, UploadKind,
};
use futures::{Stream, StreamExt as _};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::{BufRead as _, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Largest CSV body (streamed).
pub const CSV_MAX_BYTES: usize = 64 * 1024 * 1024;
/// Largest JSON body (read whole).
pub const JSON_MAX_BYTES: usize = 16 * 1024 * 1024;
/// Most rows in one upload; one more is refused (413) as soon as it is read.
pub const MAX_ROWS: u64 = 100_000;
/// Most distinct dates in one unit-rates upload.
pub const MAX_DATES: usize = 400;
/// Bad rows listed in a rejection (all are counted).
pub const MAX_ERRORS_LISTED: usize = upload::MAX_LISTED;

/// Whole-upload failures (as opposed to bad rows): the api answers `Invalid` with 422,
/// `TooLarge` with 413, `UnsupportedMediaType` with 415.
#[derive(Debug, thiserror::Error)]
pub enum Fatal {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    TooLarge(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// A reading thread that stopped: ours, not the input's.
    #[error("{0}")]
    Internal(String),
}

fn too_many_rows() -> Fatal {
    Fatal::TooLarge(format!(
        "an upload may have at most {MAX_ROWS} rows; split the file"
    ))
}

/// Every row of an upload, checked.
pub struct Collected {
    pub kind: UploadKind,
    pub rows: u64,
    pub error_count: u64,
    pub errors: Vec<RowError>,
    pub warnings: Vec<String>,
    pub units: BTreeMap<NaiveDate, Vec<UnitRateRow>>,
    pub competitors: Vec<domain::competitors::Checked>,
    /// A rent roll's tenants, by the date of the roll.
    pub rolls: BTreeMap<NaiveDate, Vec<RollRow>>,
}

struct Checker {
    out: Collected,
    dup: DuplicateCheck,
    /// The line of each tenant id seen, per roll date.
    tenants: std::collections::HashMap<(NaiveDate, String), u64>,
}

impl Checker {
    fn new(cols: &Columns) -> Self {
        let kind = cols.kind.as_str();
        let mut warnings: Vec<String> = cols
            .ignored
            .iter()
            .take(upload::MAX_LISTED)
            .map(|c| {
                format!(
                    "column '{}' is not used for {kind} and was ignored",
                    upload::shown_name(c)
                )
            })
            .collect();
        if cols.ignored.len() > upload::MAX_LISTED {
            warnings.push(format!(
                "{} more columns are not used for {kind} and were ignored",
                cols.ignored.len() - upload::MAX_LISTED
            ));
        }
        Self {
            out: Collected {
                kind: cols.kind,
                rows: 0,
                error_count: 0,
                errors: Vec::new(),
                warnings,
                units: BTreeMap::new(),
                competitors: Vec::new(),
                rolls: BTreeMap::new(),
            },
            dup: DuplicateCheck::default(),
            tenants: std::collections::HashMap::new(),
        }
    }

    fn bad(&mut self, e: RowError) {
        self.out.error_count += 1;
        if self.out.errors.len() < MAX_ERRORS_LISTED {
            self.out.errors.push(e);
        }
    }

    fn add(&mut self, row: Result<Row, RowError>) -> Result<(), Fatal> {
        self.out.rows += 1;
        if self.out.rows > MAX_ROWS {
            return Err(too_many_rows());
        }
        match row {
            Err(e) => self.bad(e),
            Ok(Row::Unit(u)) => {
                if let Err(e) = self.dup.check(&u) {
                    self.bad(e);
                    return Ok(());
                }
                let d = u.date.unwrap_or_default();
                if !self.out.units.contains_key(&d) && self.out.units.len() >= MAX_DATES {
                    self.bad(RowError {
                        line: u.line,
                        field: Some("date".into()),
                        message: format!("an upload may cover at most {MAX_DATES} dates"),
                    });
                    return Ok(());
                }
                self.out.units.entry(d).or_default().push(u);
            }
            // Rows are kept only while they could still be written.
            Ok(Row::Competitor(c)) if self.out.error_count == 0 => self.out.competitors.push(c),
            Ok(Row::Competitor(_)) => {}
            Ok(Row::Tenant(t)) => {
                let id = t.tenant.tenant_id.as_str().to_owned();
                if let Some(first) = self.tenants.insert((t.date, id.clone()), t.line) {
                    self.bad(RowError {
                        line: t.line,
                        field: Some("tenant_id".into()),
                        message: format!("'{id}' on {} already appears on line {first}", t.date),
                    });
                    return Ok(());
                }
                let of_date = self.out.rolls.get(&t.date).map_or(0, Vec::len);
                if of_date == 0 && self.out.rolls.len() >= MAX_DATES {
                    self.bad(RowError {
                        line: t.line,
                        field: Some("date".into()),
                        message: format!("an upload may cover at most {MAX_DATES} dates"),
                    });
                    return Ok(());
                }
                if of_date >= domain::sync::payload::MAX_TENANTS {
                    self.bad(RowError {
                        line: t.line,
                        field: Some("tenant_id".into()),
                        message: format!(
                            "a roll may have at most {} tenants",
                            domain::sync::payload::MAX_TENANTS
                        ),
                    });
                    return Ok(());
                }
                self.out.rolls.entry(t.date).or_default().push(t);
            }
        }
        Ok(())
    }
}

/// Set when the request is dropped (the client went away), so the reading thread stops at
/// its next row instead of parsing what is left in the buffers.
#[derive(Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Drop for Cancel {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Streams a CSV body through the `csv` reader on a blocking thread, checking each row as it
/// comes; the body is never held whole, only the checked rows.
pub async fn csv<S>(
    body: S,
    kind: Option<UploadKind>,
    date: Option<NaiveDate>,
    today: NaiveDate,
    cancel: &Cancel,
) -> Result<Collected, Fatal>
where
    S: Stream<Item = std::io::Result<Bytes>> + Send + Unpin + 'static,
{
    let mut seen = 0usize;
    let stream = body.map(move |chunk| {
        let chunk = chunk?;
        seen += chunk.len();
        if seen > CSV_MAX_BYTES {
            Err(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                "too large",
            ))
        } else {
            Ok(chunk)
        }
    });
    let reader = tokio_util::io::StreamReader::new(stream);
    let cancelled = cancel.0.clone();
    let thread = tokio::task::spawn_blocking(move || {
        let bridge = tokio_util::io::SyncIoBridge::new(reader);
        read_csv_rows(bridge, kind, date, today, &cancelled)
    });
    thread
        .await
        .map_err(|e| Fatal::Internal(format!("the CSV reader failed: {e}")))?
}

fn fatal_io(e: &csv::Error) -> Option<Fatal> {
    match e.kind() {
        csv::ErrorKind::Io(io) => Some(fatal_read(io)),
        _ => None,
    }
}

fn fatal_read(io: &std::io::Error) -> Fatal {
    if io.kind() == std::io::ErrorKind::FileTooLarge {
        Fatal::TooLarge(format!(
            "a CSV upload may be at most {} MiB",
            CSV_MAX_BYTES / (1024 * 1024)
        ))
    } else {
        Fatal::Invalid(format!("the body could not be read to its end: {io}"))
    }
}

/// The longest header row read, in bytes up to its first newline outside quotes. Column names
/// take a few KiB; a longer row is refused before it is split into columns (a 64 MiB row of
/// commas would be 64 million of them, gigabytes once split and named).
const MAX_HEADER_BYTES: usize = 64 * 1024;

/// The input with its header row checked against [`MAX_HEADER_BYTES`]: the row is read ahead
/// and put back in front of the rest.
fn bounded_header(input: impl Read) -> Result<impl Read, Fatal> {
    let mut input = std::io::BufReader::new(input);
    let mut head = Vec::with_capacity(1024);
    let mut quoted = false;
    loop {
        let buf = input.fill_buf().map_err(|e| fatal_read(&e))?;
        if buf.is_empty() {
            break;
        }
        let mut end = None;
        for (i, &b) in buf.iter().enumerate() {
            if b == b'"' {
                quoted = !quoted;
            } else if b == b'\n' && !quoted {
                end = Some(i + 1);
                break;
            }
        }
        let take = end.unwrap_or(buf.len());
        head.extend_from_slice(&buf[..take]);
        input.consume(take);
        if head.len() > MAX_HEADER_BYTES {
            return Err(Fatal::Invalid(format!(
                "the header row is longer than {} KiB",
                MAX_HEADER_BYTES / 1024
            )));
        }
        if end.is_some() {
            break;
        }
    }
    Ok(std::io::Cursor::new(head).chain(input))
}

fn read_csv_rows(
    input: impl std::io::Read,
    kind: Option<UploadKind>,
    date: Option<NaiveDate>,
    today: NaiveDate,
    cancelled: &AtomicBool,
) -> Result<Collected, Fatal> {
    let input = bounded_header(input)?;
    let mut rdr = csv::ReaderBuilder::new().flexible(true).from_reader(input);
    let headers: Vec<String> = match rdr.headers() {
        Ok(h) => h.iter().map(str::to_owned).collect(),
        Err(e) => {
            return Err(fatal_io(&e)
                .unwrap_or_else(|| Fatal::Invalid(format!("the header row cannot be read: {e}"))))
        }
    };
    if headers.is_empty() {
        return Err(Fatal::Invalid("the upload has no header row".into()));
    }
    let cols = upload::map_headers(&headers, kind).map_err(Fatal::Invalid)?;
    let mut checker = Checker::new(&cols);
    let mut record = csv::StringRecord::new();
    loop {
        if cancelled.load(Ordering::Relaxed) {
            return Err(Fatal::Invalid("the client went away".into()));
        }
        match rdr.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {
                if record.iter().all(|c| c.trim().is_empty()) {
                    continue;
                }
                let line = record.position().map_or(0, csv::Position::line);
                let cells: Vec<&str> = record.iter().collect();
                checker.add(upload::parse_row(&cols, line, &cells, date, today))?;
            }
            Err(e) => {
                if let Some(f) = fatal_io(&e) {
                    return Err(f);
                }
                let line = e.position().map_or(0, csv::Position::line);
                checker.add(Err(RowError {
                    line,
                    field: None,
                    message: format!("cannot be read: {e}"),
                }))?;
            }
        }
    }
    Ok(checker.out)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonUpload {
    kind: Option<String>,
    date: Option<String>,
    rows: Vec<Value>,
}

/// A JSON body `{"kind"?, "date"?, "rows": [{column: value}]}`, read whole (up to
/// [`JSON_MAX_BYTES`]) and then checked on a blocking thread; its rows take the same path as
/// CSV rows, the row's position from 1 standing for the line.
pub async fn json<S>(
    body: S,
    kind: Option<UploadKind>,
    date: Option<NaiveDate>,
    today: NaiveDate,
) -> Result<Collected, Fatal>
where
    S: Stream<Item = std::io::Result<Bytes>> + Send + Unpin + 'static,
{
    let mut bytes = Vec::new();
    let mut body = body;
    while let Some(chunk) = body.next().await {
        let chunk = chunk
            .map_err(|e| Fatal::Invalid(format!("the body could not be read to its end: {e}")))?;
        if bytes.len() + chunk.len() > JSON_MAX_BYTES {
            return Err(Fatal::TooLarge(format!(
                "a JSON upload may be at most {} MiB; send large files as text/csv",
                JSON_MAX_BYTES / (1024 * 1024)
            )));
        }
        bytes.extend_from_slice(&chunk);
    }
    tokio::task::spawn_blocking(move || check_json(&bytes, kind, date, today))
        .await
        .map_err(|e| Fatal::Internal(format!("the JSON reader failed: {e}")))?
}

fn check_json(
    bytes: &[u8],
    kind: Option<UploadKind>,
    date: Option<NaiveDate>,
    today: NaiveDate,
) -> Result<Collected, Fatal> {
    crate::error::require_object(bytes).map_err(|e| Fatal::Invalid(e.to_string()))?;
    // The API's text rule, as every JSON body of the API is held to it.
    domain::validation::require_plain_text(bytes).map_err(|e| Fatal::Invalid(e.to_string()))?;
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    let parsed: JsonUpload = serde_path_to_error::deserialize(de)
        .map_err(|e| Fatal::Invalid(crate::ValidationError::from_serde(e).to_string()))?;
    if parsed.rows.len() as u64 > MAX_ROWS {
        return Err(too_many_rows());
    }
    let kind = match (kind, parsed.kind.as_deref()) {
        (Some(k), _) => Some(k),
        (None, None) => None,
        (None, Some(k)) => Some(UploadKind::parse(k).ok_or_else(|| {
            Fatal::Invalid("kind: must be unit_rates, competitor_rates or rent_roll".into())
        })?),
    };
    let date = match (date, parsed.date.as_deref()) {
        (Some(d), _) => Some(d),
        (None, None) => None,
        (None, Some(d)) => Some(
            domain::sync::payload::SnapshotDate::parse(d)
                .map_err(|m| Fatal::Invalid(format!("date: {m}")))?
                .0,
        ),
    };
    // Columns: every key seen, in first-seen order.
    let mut headers: Vec<String> = Vec::new();
    for (i, row) in parsed.rows.iter().enumerate() {
        let Some(obj) = row.as_object() else {
            return Err(Fatal::Invalid(format!("rows[{i}]: must be an object")));
        };
        for k in obj.keys() {
            if !headers.contains(k) {
                if headers.len() >= 100 {
                    return Err(Fatal::Invalid("rows: more than 100 distinct keys".into()));
                }
                headers.push(k.clone());
            }
        }
    }
    if parsed.rows.is_empty() {
        let cols = Columns {
            kind: kind.unwrap_or(UploadKind::UnitRates),
            fields: vec![],
            ignored: vec![],
        };
        return Ok(Checker::new(&cols).out);
    }
    let cols = upload::map_headers(&headers, kind).map_err(Fatal::Invalid)?;
    let mut checker = Checker::new(&cols);
    let empty = Map::new();
    for (i, row) in parsed.rows.iter().enumerate() {
        let line = i as u64 + 1;
        let obj = row.as_object().unwrap_or(&empty);
        let result = match upload::json_cells(obj, &headers) {
            Ok(cells) => {
                let refs: Vec<&str> = cells.iter().map(String::as_str).collect();
                upload::parse_row(&cols, line, &refs, date, today)
            }
            Err((field, message)) => Err(RowError {
                line,
                field: Some(field),
                message,
            }),
        };
        checker.add(result)?;
    }
    Ok(checker.out)
}
