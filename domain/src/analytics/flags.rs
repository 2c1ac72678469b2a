//! Portfolio risk flags of one facility. Each flag names its threshold and the value seen.

use crate::values::round2;
use serde::Serialize;

/// Thresholds (docs/analytics.md); defaults from the domain notes.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct FlagSettings {
    /// Occupancy below this (percent) and lower than at the previous month's last snapshot.
    pub occupancy_below_pct: f64,
    /// Move-ins month to date this many percent behind the prorated monthly target.
    pub move_in_pace_behind_pct: f64,
    /// Days without a sync.
    pub stale_sync_days: i64,
    /// In-place rent this far below street (street / in-place - 1, percent, tenant-weighted).
    pub ecri_runway_gap_pct: f64,
}

impl Default for FlagSettings {
    fn default() -> Self {
        Self {
            occupancy_below_pct: 80.0,
            move_in_pace_behind_pct: 25.0,
            stale_sync_days: 2,
            ecri_runway_gap_pct: 15.0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FlagKind {
    OccupancyLowAndFalling,
    MoveOutsExceedMoveIns,
    MoveInPaceBehindTarget,
    StreetAboveP75WhileOccupancyFalls,
    NoRecentSync,
    LargeEcriRunway,
}

#[derive(Clone, Debug, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Flag {
    /// Which risk.
    pub flag: FlagKind,
    /// The threshold, in the unit of `value`.
    pub threshold: f64,
    /// The measured value, in `unit`.
    pub value: f64,
    /// Unit of `threshold` and `value`.
    pub unit: &'static str,
    /// The flag in words.
    pub detail: String,
}

/// What the flags look at, from the facility's latest snapshot and its history.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlagInputs {
    pub occupancy_pct: Option<f64>,
    /// Occupancy at the previous month's last snapshot.
    pub previous_occupancy_pct: Option<f64>,
    pub move_ins_mtd: Option<i64>,
    pub move_outs_mtd: Option<i64>,
    pub move_ins_target_monthly: Option<i64>,
    /// Day of month of the latest snapshot and the month's length.
    pub day_of_month: u32,
    pub days_in_month: u32,
    pub days_since_sync: i64,
    /// (size, street rate, competitor P75) of the sizes whose street rate is above P75.
    pub sizes_above_p75: Vec<(String, f64, f64)>,
    /// Tenant-weighted street / in-place rent - 1, percent; None without tenant rents.
    pub ecri_gap_pct: Option<f64>,
}

pub fn flags(i: &FlagInputs, s: &FlagSettings) -> Vec<Flag> {
    let mut out = Vec::new();
    let falling = match (i.occupancy_pct, i.previous_occupancy_pct) {
        (Some(now), Some(before)) => now < before,
        _ => false,
    };
    if let (Some(occ), true) = (i.occupancy_pct, falling) {
        if occ < s.occupancy_below_pct {
            out.push(Flag {
                flag: FlagKind::OccupancyLowAndFalling,
                threshold: s.occupancy_below_pct,
                value: occ,
                unit: "pct",
                detail: format!(
                    "occupancy {occ}% is below {}% and down from {}% at the end of the previous month",
                    s.occupancy_below_pct,
                    i.previous_occupancy_pct.unwrap_or_default()
                ),
            });
        }
    }
    if let (Some(mi), Some(mo)) = (i.move_ins_mtd, i.move_outs_mtd) {
        if mo > mi {
            out.push(Flag {
                flag: FlagKind::MoveOutsExceedMoveIns,
                threshold: mi as f64,
                value: mo as f64,
                unit: "move_outs_mtd",
                detail: format!("{mo} move-outs against {mi} move-ins month to date"),
            });
        }
    }
    if let (Some(mi), Some(target)) = (i.move_ins_mtd, i.move_ins_target_monthly) {
        if target > 0 && i.days_in_month > 0 {
            let expected = target as f64 * f64::from(i.day_of_month) / f64::from(i.days_in_month);
            let behind = (1.0 - mi as f64 / expected) * 100.0;
            if behind > s.move_in_pace_behind_pct {
                out.push(Flag {
                    flag: FlagKind::MoveInPaceBehindTarget,
                    threshold: s.move_in_pace_behind_pct,
                    value: round2(behind),
                    unit: "pct_behind",
                    detail: format!(
                        "{mi} move-ins by day {} against {:.1} expected from a monthly target of {target}",
                        i.day_of_month, expected
                    ),
                });
            }
        }
    }
    if falling && !i.sizes_above_p75.is_empty() {
        let (size, street, p75) = i
            .sizes_above_p75
            .iter()
            .max_by(|a, b| (a.1 / a.2).total_cmp(&(b.1 / b.2)))
            .cloned()
            .unwrap_or_default();
        let names: Vec<&str> = i.sizes_above_p75.iter().map(|s| s.0.as_str()).collect();
        out.push(Flag {
            flag: FlagKind::StreetAboveP75WhileOccupancyFalls,
            threshold: p75,
            value: street,
            unit: "currency",
            detail: format!(
                "street rate above the competitor P75 for {} while occupancy falls; largest: {size} at {street} against P75 {p75}",
                names.join(", ")
            ),
        });
    }
    if i.days_since_sync >= s.stale_sync_days {
        out.push(Flag {
            flag: FlagKind::NoRecentSync,
            threshold: s.stale_sync_days as f64,
            value: i.days_since_sync as f64,
            unit: "days",
            detail: format!("last sync {} days ago", i.days_since_sync),
        });
    }
    if let Some(gap) = i.ecri_gap_pct {
        if gap >= s.ecri_runway_gap_pct {
            out.push(Flag {
                flag: FlagKind::LargeEcriRunway,
                threshold: s.ecri_runway_gap_pct,
                value: round2(gap),
                unit: "pct",
                detail: format!(
                    "street rates are {gap:.1}% above in-place rents (tenant-weighted)"
                ),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_flag_by_hand() {
        // Occupancy 75 < 80 and down from 78; 12 move-outs > 10 move-ins; day 15 of 30 with a
        // target of 40: expected 20, 10 is 50 % behind (> 25); 10x10 at 150 above P75 140;
        // last sync 3 days ago; gap 20 % >= 15.
        let i = FlagInputs {
            occupancy_pct: Some(75.0),
            previous_occupancy_pct: Some(78.0),
            move_ins_mtd: Some(10),
            move_outs_mtd: Some(12),
            move_ins_target_monthly: Some(40),
            day_of_month: 15,
            days_in_month: 30,
            days_since_sync: 3,
            sizes_above_p75: vec![("10x10".to_owned(), 150.0, 140.0)],
            ecri_gap_pct: Some(20.0),
        };
        let f = flags(&i, &FlagSettings::default());
        let got: Vec<(FlagKind, f64, f64)> =
            f.iter().map(|f| (f.flag, f.threshold, f.value)).collect();
        assert_eq!(
            got,
            vec![
                (FlagKind::OccupancyLowAndFalling, 80.0, 75.0),
                (FlagKind::MoveOutsExceedMoveIns, 10.0, 12.0),
                (FlagKind::MoveInPaceBehindTarget, 25.0, 50.0),
                (FlagKind::StreetAboveP75WhileOccupancyFalls, 140.0, 150.0),
                (FlagKind::NoRecentSync, 2.0, 3.0),
                (FlagKind::LargeEcriRunway, 15.0, 20.0),
            ]
        );
    }

    #[test]
    fn a_healthy_facility_has_none() {
        let i = FlagInputs {
            occupancy_pct: Some(75.0),
            previous_occupancy_pct: Some(74.0), // low but rising
            move_ins_mtd: Some(16),
            move_outs_mtd: Some(16),
            move_ins_target_monthly: Some(40),
            day_of_month: 15,
            days_in_month: 30, // expected 20, 16 is 20 % behind: under 25
            days_since_sync: 1,
            sizes_above_p75: vec![("10x10".to_owned(), 150.0, 140.0)], // occupancy not falling
            ecri_gap_pct: Some(14.9),
        };
        assert!(flags(&i, &FlagSettings::default()).is_empty());
    }
}
