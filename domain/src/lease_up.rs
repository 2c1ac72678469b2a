//! Lease-up mode with hysteresis: a facility enters lease-up when occupancy falls below 60 % and
//! leaves it when occupancy reaches 70 %; in between the mode stays as it was. Evaluated over
//! the facility's snapshots in date order, so out-of-order arrivals give the same history.

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

pub const ENTER_BELOW_PCT: f64 = 60.0;
pub const LEAVE_AT_PCT: f64 = 70.0;

/// A facility's mode: filling up after opening or a setback, or stabilized. The ingest keeps it
/// on the facility; the pricing engine reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = PricingMode)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    LeaseUp,
    Stabilized,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::LeaseUp => "lease_up",
            Self::Stabilized => "stabilized",
        }
    }

    /// The mode stored as text; anything but `lease_up` reads as stabilized.
    pub fn from_stored(s: &str) -> Self {
        if s == "lease_up" {
            Self::LeaseUp
        } else {
            Self::Stabilized
        }
    }
}

pub fn next(current: Mode, occupancy_pct: f64) -> Mode {
    if occupancy_pct < ENTER_BELOW_PCT {
        Mode::LeaseUp
    } else if occupancy_pct >= LEAVE_AT_PCT {
        Mode::Stabilized
    } else {
        current
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModeEvent {
    pub date: NaiveDate,
    pub from: Mode,
    pub to: Mode,
    pub occupancy_pct: f64,
}

/// The mode changes over `readings` (any order; sorted here by date), starting `stabilized`.
pub fn history(readings: &[(NaiveDate, f64)]) -> (Mode, Vec<ModeEvent>) {
    let mut sorted = readings.to_vec();
    sorted.sort_by_key(|r| r.0);
    let mut mode = Mode::Stabilized;
    let mut events = Vec::new();
    for (date, occ) in sorted {
        let to = next(mode, occ);
        if to != mode {
            events.push(ModeEvent {
                date,
                from: mode,
                to,
                occupancy_pct: occ,
            });
            mode = to;
        }
    }
    (mode, events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hysteresis_of_the_interface() {
        // 75 stays stabilized; 55 enters; 65 and 69.9 hold; 70 leaves; 59 enters; 62 holds.
        let d = |i| NaiveDate::from_ymd_opt(2026, 1, 1).unwrap() + chrono::Duration::days(i);
        let readings: Vec<(NaiveDate, f64)> = [75.0, 55.0, 65.0, 69.9, 70.0, 59.0, 62.0]
            .iter()
            .enumerate()
            .map(|(i, &o)| (d(i as i64), o))
            .collect();
        let (mode, events) = history(&readings);
        assert_eq!(mode, Mode::LeaseUp);
        let changes: Vec<(NaiveDate, Mode)> = events.iter().map(|e| (e.date, e.to)).collect();
        assert_eq!(
            changes,
            vec![
                (d(1), Mode::LeaseUp),
                (d(4), Mode::Stabilized),
                (d(5), Mode::LeaseUp)
            ]
        );
        let mut shuffled = readings.clone();
        shuffled.reverse();
        assert_eq!(history(&shuffled).1, events);
    }
}
