//! The order the ECRI report pages its facilities in, and its cursor. Facilities come by
//! expected gain, the largest first, then by name (case aside) and id; a facility without a
//! run comes after every one with a run. The cursor is opaque (base64url of the last
//! facility's place in that order), so the next page starts after it whatever facilities
//! come or go. A facility id, the cursor of the report's first versions (which paged by
//! name), is still taken: the page starts after that facility's place in the order now.

use crate::error::{Error, Result, ValidationError};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use uuid::Uuid;

/// A facility's place in the order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Place {
    /// Expected gain of its latest run; none without a run.
    #[serde(rename = "g")]
    pub gain: Option<f64>,
    #[serde(rename = "n")]
    pub name: String,
    #[serde(rename = "i")]
    pub id: Uuid,
}

impl Place {
    /// The order: a run before none, the larger gain first, then name (case aside), then id.
    pub fn cmp(&self, o: &Place) -> Ordering {
        match (self.gain, o.gain) {
            (Some(a), Some(b)) => b.total_cmp(&a),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        }
        .then_with(|| self.name.to_lowercase().cmp(&o.name.to_lowercase()))
        .then_with(|| self.name.cmp(&o.name))
        .then(self.id.cmp(&o.id))
    }

    /// The cursor of a page that ends at this place.
    pub fn cursor(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    }
}

/// Where the page after `cursor` starts in `places` (sorted by [`Place::cmp`]).
pub(super) fn start_after(places: &[Place], cursor: &str) -> Result<usize> {
    let cursor = cursor.trim();
    let refused = || {
        Error::from(ValidationError::new(
            "cursor",
            "is not a cursor of this report (pass `next_cursor` as it was given)",
        ))
    };
    if let Ok(id) = Uuid::parse_str(cursor) {
        return places
            .iter()
            .position(|p| p.id == id)
            .map(|i| i + 1)
            .ok_or_else(refused);
    }
    let last: Place = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|json| serde_json::from_slice(&json).ok())
        .ok_or_else(refused)?;
    Ok(places.partition_point(|p| p.cmp(&last) != Ordering::Greater))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(gain: Option<f64>, name: &str, n: u128) -> Place {
        Place {
            gain,
            name: name.to_owned(),
            id: Uuid::from_u128(n),
        }
    }

    #[test]
    fn the_largest_gain_comes_first_then_name_then_id_and_no_run_last() {
        let mut v = [
            place(None, "Alder", 1),
            place(Some(10.0), "oak", 2),
            place(Some(10.0), "Elm", 3),
            place(Some(99.5), "Pine", 4),
            place(Some(10.0), "Elm", 0),
            place(Some(0.0), "Ash", 5),
        ];
        v.sort_by(Place::cmp);
        let order: Vec<u128> = v.iter().map(|p| p.id.as_u128()).collect();
        assert_eq!(order, [4, 0, 3, 2, 5, 1]);
    }

    #[test]
    fn a_cursor_starts_after_its_place_and_an_id_is_still_taken() {
        let mut v: Vec<Place> = (0u32..5)
            .map(|i| place(Some(f64::from(i) * 1.25), &format!("F{i}"), u128::from(i)))
            .collect();
        v.sort_by(Place::cmp);
        for (i, p) in v.iter().enumerate() {
            assert_eq!(start_after(&v, &p.cursor()).unwrap(), i + 1);
            assert_eq!(start_after(&v, &p.id.to_string()).unwrap(), i + 1);
        }
        // A facility gone since: the page starts where it stood.
        let gone = v.remove(2);
        assert_eq!(start_after(&v, &gone.cursor()).unwrap(), 2);
        assert!(start_after(&v, &gone.id.to_string()).is_err());
        for bad in ["", "not a cursor", "eyJ4IjoxfQ"] {
            assert!(start_after(&v, bad).is_err(), "{bad}");
        }
    }
}
