//! How a run moves the rate toward its target, split into the factors that explain the move.
//! Kept apart from the guardrails: the factors say where the rate wants to go, the guardrails
//! then say how much of that move is allowed, and each reads more clearly alone.

use super::{rules, Factor, Inputs};
use crate::pricing::target::Target;
use crate::values::round2;

/// The move a run proposes, before the guardrails.
pub(super) struct Move {
    /// What moved the rate, in percentage points of the current rate; they add up to
    /// `total_pct`.
    pub(super) factors: Vec<Factor>,
    pub(super) total_pct: f64,
    /// The rate moved toward: the target's, or a probe's or a retreat's in its place.
    pub(super) target_rate: f64,
    /// A probe or a retreat took the place of the target's move.
    pub(super) probing: bool,
}

/// The move toward `t`. Each run closes a share of the gap to the target; the factors split
/// that move, in percentage points of the current rate, so they still add up to the proposed
/// change.
pub(super) fn toward_target(u: &Inputs<'_>, t: Target) -> Move {
    let (current, s) = (u.current, u.s);
    let share = s.target_approach_share;
    let scale = share * t.anchor / current;
    let weak = (t.rate < current)
        .then(|| rules::weak_evidence(u.occupancy, t.trend, s))
        .flatten();
    let mut anchor = t.anchor_factor;
    anchor.contribution_pct = round2(share * (t.anchor / current - 1.0) * 100.0);
    anchor.detail = format!(
        "{}; target {:.2}, a run moves {:.0}% of the way",
        anchor.detail,
        t.rate,
        share * 100.0
    );
    let mut factors = vec![anchor];
    factors.extend(t.offsets.into_iter().map(|mut f| {
        f.contribution_pct = round2(f.contribution_pct * scale);
        f
    }));
    if let Some(w) = &weak {
        factors.push(rules::weak_close_factor(w, t.rate, current, s));
    }
    // A size that stays full is probed upward, and a raise that cost a full size its occupancy
    // is undone: both read the current rate, so each takes the place of the target's move.
    let probe = rules::probe(u.input, u.ut, u.occupancy, u.band, t.rate, s);
    for f in &mut factors {
        if !f.contribution_pct.is_finite() {
            f.contribution_pct = 0.0;
        }
    }
    let mut total: f64 = factors.iter().map(|f| f.contribution_pct).sum();
    let mut target_rate = t.rate;
    if let Some(p) = &probe {
        let pp = round2((p.rate / current - 1.0) * 100.0);
        // A probe replaces a smaller raise; a retreat undoes the raise, and no more: a deeper
        // cut, if still called for, follows the usual rules on a later run.
        let moves = p.kind == rules::ProbeKind::Retreat || pp > total;
        if moves {
            factors.push(Factor {
                name: p.kind.name().into(),
                contribution_pct: round2(pp - total),
                detail: p.detail.clone(),
            });
            total = pp;
            target_rate = p.rate;
        }
    }
    Move {
        probing: target_rate != t.rate,
        factors,
        total_pct: total,
        target_rate,
    }
}
