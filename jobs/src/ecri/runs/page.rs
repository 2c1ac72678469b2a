//! Pages of a stored run's lines (`GET /api/v1/facilities/:id/ecri?limit=`). A run's lines
//! keep their order (by size, then tenant id), so a page is a stretch of them; the cursor
//! names the run and where the next page starts, so a walk through the pages reads one run
//! even when a newer one is stored meanwhile. The cursor is opaque: base64url of that pair.

use crate::error::{Result, ValidationError};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The most lines a page holds.
pub const MAX_LIMIT: i64 = 1_000;

/// Where a page starts: the run and the index of its first line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    #[serde(rename = "r")]
    pub run_id: Uuid,
    #[serde(rename = "o")]
    pub offset: usize,
}

impl Cursor {
    /// The cursor as the answer gives it.
    pub fn encode(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    }

    /// A cursor as a client passes it back; a 422 naming `cursor` for anything else.
    pub fn decode(text: &str) -> Result<Self> {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(text.trim())
            .ok()
            .and_then(|json| serde_json::from_slice(&json).ok())
            .ok_or_else(|| {
                ValidationError::new(
                    "cursor",
                    "is not a cursor of this facility's suggestions (pass `next_cursor` as it was given)",
                )
                .into()
            })
    }
}

/// The page size asked for: every line when absent, else 1 to [`MAX_LIMIT`] (a 422 naming
/// `limit` otherwise).
pub fn limit(asked: Option<i64>) -> Result<Option<usize>> {
    match asked {
        None => Ok(None),
        Some(n) if (1..=MAX_LIMIT).contains(&n) => Ok(usize::try_from(n).ok()),
        Some(n) => Err(ValidationError::new(
            "limit",
            format!("must be between 1 and {MAX_LIMIT}, got {n}"),
        )
        .into()),
    }
}

/// The stretch `[start, end)` of `lines` lines a page shows, and the cursor of the next page
/// when lines remain after it.
pub fn stretch(
    lines: usize,
    run_id: Uuid,
    from: Option<Cursor>,
    limit: Option<usize>,
) -> (usize, usize, Option<Cursor>) {
    let start = from.map_or(0, |c| c.offset).min(lines);
    let end = limit.map_or(lines, |n| start.saturating_add(n).min(lines));
    let next = (end < lines).then_some(Cursor {
        run_id,
        offset: end,
    });
    (start, end, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_through_the_pages_reads_every_line_once() {
        let run = Uuid::from_u128(7);
        let mut from = None;
        let mut seen = Vec::new();
        loop {
            let (start, end, next) = stretch(10, run, from, Some(4));
            seen.extend(start..end);
            match next {
                Some(c) => from = Some(Cursor::decode(&c.encode()).unwrap()),
                None => break,
            }
        }
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        // No limit: every line from the cursor on, and no next page.
        assert_eq!(stretch(10, run, None, None), (0, 10, None));
        // A cursor past the end (the run holds fewer lines) gives an empty last page.
        let past = Cursor {
            run_id: run,
            offset: 12,
        };
        assert_eq!(stretch(10, run, Some(past), Some(4)), (10, 10, None));
    }

    #[test]
    fn a_limit_out_of_range_and_a_foreign_cursor_are_refused() {
        assert_eq!(limit(None).unwrap(), None);
        assert_eq!(limit(Some(1_000)).unwrap(), Some(1_000));
        for bad in [0, -3, 1_001] {
            let e = limit(Some(bad)).unwrap_err().to_string();
            assert!(
                e.contains("limit") && e.contains("between 1 and 1000"),
                "{e}"
            );
        }
        for bad in ["", "abc", "eyJ4IjoxfQ", "not base64 at all!"] {
            assert!(Cursor::decode(bad).is_err(), "{bad}");
        }
    }
}
