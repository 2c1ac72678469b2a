//! Street-rate decisions on a recommendation run, checked before anything is stored: which
//! unit type of the run each decision is about, the rate it approves, and the guardrails an
//! override breaks (the engine's own, read from the run's settings and recommendation). Also
//! the status of an approved rate against the snapshots that follow it, and the sentence the
//! facility's history shows for a decision.

use super::engine::{Mode, Recommendation};
use super::settings::PricingSettings;
use crate::values::{round2, Currency};
use chrono::NaiveDate;

mod request;
pub use request::check;

/// Longest reason a decision keeps (characters).
pub const MAX_REASON_CHARS: usize = 500;
/// Days of snapshots after its decision an approved rate is waited for: when the facility's
/// snapshots reach this many days past the decision day without showing it, it is
/// `not_applied` and the engine stops starting from it.
pub const PENDING_DAYS: i64 = 14;
/// Highest rate an override takes (per unit and month), a bound against typing slips.
pub const MAX_RATE: f64 = 1_000_000.0;

/// What a decision does with a recommendation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Approves the recommended rate.
    Accept,
    /// Approves a rate of its own.
    Override,
    /// Records that the recommendation is not taken: the rate in force stays.
    Reject,
}

impl Action {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "accept" => Some(Self::Accept),
            "override" => Some(Self::Override),
            "reject" => Some(Self::Reject),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Accept => "accept",
            Self::Override => "override",
            Self::Reject => "reject",
        }
    }

    /// The decision log's action.
    pub fn log_action(self) -> &'static str {
        match self {
            Self::Accept => "rate.accepted",
            Self::Override => "rate.overridden",
            Self::Reject => "rate.rejected",
        }
    }
}

/// One decision as asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct Requested {
    pub size: String,
    /// Empty or absent: the unit type without a tier.
    pub tier: Option<String>,
    pub action: Action,
    /// The rate of an override.
    pub rate: Option<f64>,
    pub reason: Option<String>,
    /// Stores an override past the guardrails it breaks (with a reason).
    pub force: bool,
}

/// A decision checked against its run, ready to store.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    /// Its place in the request.
    pub index: usize,
    /// The run's unit type.
    pub size: String,
    pub tier: String,
    pub action: Action,
    /// The approved rate; `None` for a rejection.
    pub rate: Option<f64>,
    /// The rate the run started from.
    pub previous_rate: f64,
    /// The run's recommendation.
    pub recommended_rate: f64,
    pub reason: Option<String>,
    /// An override stored past the guardrails in `broken`.
    pub forced: bool,
    pub broken: Vec<String>,
}

/// A guardrail a rate breaks, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Broken {
    pub name: &'static str,
    pub detail: String,
}

/// The guardrails of the engine that `rate` breaks as the new rate of `rec`'s unit type, under
/// the run's settings. The bounds are the engine's (in whole cents): the largest step from the
/// rate in force, the ceiling and floor around the competitor band (a raise past the ceiling,
/// a cut past the floor), the lease-up floor, and no cut on a size at or above the top of its
/// occupancy band unless its rate is well above the competitor P75.
pub fn broken_guardrails(rate: f64, rec: &Recommendation, s: &PricingSettings) -> Vec<Broken> {
    let current = rec.current_rate;
    let mut broken = Vec::new();
    if !(current.is_finite() && current > 0.0) {
        return broken;
    }
    let step = s.max_step_pct / 100.0;
    let (step_lo, step_hi) = (
        round2(current * (1.0 - step)),
        round2(current * (1.0 + step)),
    );
    if rate > step_hi || rate < step_lo {
        broken.push(Broken {
            name: "max_step",
            detail: format!(
                "at most {}% per change, {step_lo:.2} to {step_hi:.2}",
                s.max_step_pct
            ),
        });
    }
    let band = rec.competitor_band.as_ref();
    if let Some(b) = band {
        let ceiling = round2(b.p75 * s.ceiling_share_of_p75);
        if rate > current && rate > ceiling {
            broken.push(Broken {
                name: "ceiling",
                detail: format!(
                    "a raise stops at {:.0}% of the competitor P75 ({ceiling:.2})",
                    s.ceiling_share_of_p75 * 100.0
                ),
            });
        }
        let floor = round2(b.p25 * s.floor_share_of_p25);
        if rate < current && rate < floor {
            broken.push(Broken {
                name: "floor",
                detail: format!(
                    "a cut stops at {:.0}% of the competitor P25 ({floor:.2})",
                    s.floor_share_of_p25 * 100.0
                ),
            });
        }
    }
    if rec.mode == Mode::LeaseUp {
        let lu_floor = round2(current * s.lease_up_floor_share);
        if rate < lu_floor {
            broken.push(Broken {
                name: "lease_up_floor",
                detail: format!(
                    "in lease-up never below {:.0}% of the rate in force ({lu_floor:.2})",
                    s.lease_up_floor_share * 100.0
                ),
            });
        }
    }
    let full = rec
        .occupancy_pct
        .is_some_and(|o| o >= s.occupancy_target_high_pct);
    let overpriced =
        band.is_some_and(|b| current > b.p75 * (1.0 + s.full_cut_above_p75_pct / 100.0));
    if rate < current && full && !overpriced {
        broken.push(Broken {
            name: "full_no_cut",
            detail: format!(
                "a size at or above the top of its band ({}%) is not cut unless its rate is more \
                 than {}% above the competitor P75",
                s.occupancy_target_high_pct, s.full_cut_above_p75_pct
            ),
        });
    }
    broken
}

/// The unit type's label: `10x10` or `10x10 climate`.
pub fn unit_label(size: &str, tier: &str) -> String {
    if tier.is_empty() {
        size.to_owned()
    } else {
        format!("{size} {tier}")
    }
}

/// The recommendations a run accepts by itself: a raise or a lower whose change is within
/// `auto_accept_within_pct` of the rate in force (0 turns it off; a hold is never accepted).
pub fn auto_accepted(recs: &[Recommendation], s: &PricingSettings) -> Vec<Checked> {
    use super::engine::Action as EngineAction;
    if s.auto_accept_within_pct.is_nan() || s.auto_accept_within_pct <= 0.0 {
        return Vec::new();
    }
    recs.iter()
        .enumerate()
        .filter(|(_, r)| {
            r.action != EngineAction::Hold
                && r.recommended_rate > 0.0
                && r.change_pct.abs() <= s.auto_accept_within_pct
        })
        .map(|(i, r)| Checked {
            index: i,
            size: r.size.clone(),
            tier: r.tier.clone(),
            action: Action::Accept,
            rate: Some(r.recommended_rate),
            previous_rate: r.current_rate,
            recommended_rate: r.recommended_rate,
            reason: Some(format!(
                "within {}% of the rate in force (auto-accept)",
                s.auto_accept_within_pct
            )),
            forced: false,
            broken: Vec::new(),
        })
        .collect()
}

/// Where an approved rate stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// No snapshot has shown it yet.
    Pending,
    /// A snapshot dated on or after the decision day shows it (within half a cent).
    Applied,
    /// The snapshots of [`PENDING_DAYS`] days after the decision day never showed it.
    NotApplied,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Applied => "applied",
            Self::NotApplied => "not_applied",
        }
    }
}

/// The status of a rate approved on `decided_on`, first shown by the snapshot of `shown_on`
/// (if any), when the facility's latest snapshot is of `latest_snapshot`.
pub fn status(
    decided_on: NaiveDate,
    shown_on: Option<NaiveDate>,
    latest_snapshot: Option<NaiveDate>,
) -> Status {
    if shown_on.is_some_and(|d| d >= decided_on) {
        Status::Applied
    } else if latest_snapshot.is_some_and(|l| (l - decided_on).num_days() >= PENDING_DAYS) {
        Status::NotApplied
    } else {
        Status::Pending
    }
}

/// A rate as a sentence writes it: `$129.00`, `129,00 kr` style with `.` decimals.
pub fn money(v: f64, currency: Currency) -> String {
    let decimals = currency.minor_decimals() as usize;
    if currency.symbol_first() {
        format!("{}{v:.decimals$}", currency.symbol())
    } else {
        format!("{v:.decimals$} {}", currency.symbol())
    }
}

/// One sentence for the facility's history: "Accepted 10x10 at $129.00 (was $125.00)".
pub fn summary(c: &Checked, currency: Currency, automatic: bool) -> String {
    let unit = unit_label(&c.size, &c.tier);
    let was = money(c.previous_rate, currency);
    match (c.action, c.rate) {
        (Action::Accept, Some(rate)) => format!(
            "{} {unit} at {} (was {was})",
            if automatic {
                "Accepted automatically"
            } else {
                "Accepted"
            },
            money(rate, currency)
        ),
        (Action::Override, Some(rate)) => {
            let mut s = format!(
                "Overrode {unit} to {} (recommended {}, was {was})",
                money(rate, currency),
                money(c.recommended_rate, currency)
            );
            if c.forced {
                s.push_str(&format!(", past {}", c.broken.join(", ")));
            }
            s
        }
        _ => format!(
            "Rejected the recommendation of {} for {unit} (stays at {was})",
            money(c.recommended_rate, currency)
        ),
    }
}

#[cfg(test)]
mod tests;
