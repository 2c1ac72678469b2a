//! A facility of the simulated company: its sizes, each with its market and its rent roll of
//! tenants, and the day's trade (move-outs, move-ins, increases taking effect, rent). Kept
//! apart from the policies so every policy trades through the same code and differs only in
//! the notices it gives.

use super::draws::{mix, natural_stay, poisson_at, uniform};
use super::{
    EcriResult, Reaction, MONTH_DAYS, OUTCOME_DAYS, REACTION_DAYS, TAIL_DAYS, WARM_UP_DAYS,
};
use crate::ecri::Outcome;
use crate::pricing::backtest::market::{demand_share, Scenario, SizeMarket, SIZES, STAY_DAYS};
use crate::pricing::backtest::{start_date, StreetEngine, DAYS};
use crate::pricing::seasonality::NATIONAL_PRIOR;
use chrono::Datelike;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;

/// A tenant of a simulated rent roll.
#[derive(Debug, Clone)]
pub(super) struct Tenant {
    pub(super) serial: u32,
    pub(super) rent: f64,
    pub(super) move_in: i32,
    pub(super) last_increase: Option<i32>,
    /// The day its natural stay ends.
    natural_leave: i32,
    /// The day it moves out after a notice.
    pub(super) reaction_leave: Option<i32>,
    /// A notice in force: (effective day, new rent).
    pub(super) pending: Option<(i32, f64)>,
    notices: u32,
}

/// One size of a facility: its market and its rent roll.
#[derive(Debug, Clone)]
pub(super) struct Size {
    pub(super) market: SizeMarket,
    pub(super) roll: Vec<Tenant>,
    next_serial: u32,
    /// The day each tenant (by serial) moved out.
    left_on: Vec<Option<i32>>,
    /// Move-ins and move-outs of each of the last 90 days.
    pub(super) arrivals: VecDeque<u32>,
    pub(super) departures: VecDeque<u32>,
}

/// A 90-day window: a notice, or a tenant not increased on a decision day.
#[derive(Debug, Clone, Copy)]
struct Window {
    size: usize,
    serial: u32,
    start: i32,
    increase_pct: f64,
    premium_pct: f64,
    /// The engine's stay probability (0..1) for a notice it gave.
    predicted: Option<f64>,
}

/// One facility over one run.
pub(super) struct Facility {
    scenario: Scenario,
    index: usize,
    seed: u64,
    reaction: Reaction,
    pub(super) sizes: Vec<Size>,
    pub(super) street: StreetEngine,
    pub(super) move_ins_mtd: u32,
    windows: Vec<Window>,
    pub(super) result: EcriResult,
}

impl Facility {
    pub(super) fn new(scenario: &Scenario, index: usize, seed: u64) -> Self {
        let first = -(WARM_UP_DAYS as i32);
        let start = start_date() + chrono::Duration::days(i64::from(first));
        let mut sizes = Vec::new();
        let mut rng = StdRng::seed_from_u64(mix(&[seed, index as u64, 0x5011]));
        for (i, (_, units, _)) in SIZES.iter().enumerate() {
            let market = SizeMarket::new(scenario, seed, i, start);
            let occupied = (f64::from(*units) * scenario.start_occupancy).round() as u32;
            let roll: Vec<Tenant> = (0..occupied)
                .map(|serial| {
                    let stayed = (-STAY_DAYS * rng.gen_range(1e-9..1.0f64).ln()).min(5.0 * 365.0);
                    let years = (stayed / 365.0).min(3.0);
                    let rent = (market.street_rate
                        * (0.85 + 0.10 * years + rng.gen_range(-0.05..0.05)))
                    .round();
                    let last_increase = (stayed > 182.0 && rng.gen_bool(0.6))
                        .then(|| first - rng.gen_range(0.0..stayed.min(365.0)) as i32);
                    Tenant {
                        serial,
                        rent,
                        move_in: first - stayed as i32,
                        last_increase,
                        natural_leave: first + natural_stay(seed, index, i, serial),
                        reaction_leave: None,
                        pending: None,
                        notices: 0,
                    }
                })
                .collect();
            sizes.push(Size {
                market,
                next_serial: occupied,
                left_on: vec![None; occupied as usize],
                roll,
                arrivals: VecDeque::with_capacity(91),
                departures: VecDeque::with_capacity(91),
            });
        }
        let units: u32 = SIZES.iter().map(|s| s.1).sum();
        let reaction = Reaction::draw(seed, index);
        Self {
            scenario: *scenario,
            index,
            seed,
            reaction,
            street: StreetEngine::new(scenario, units, SIZES.len()),
            sizes,
            move_ins_mtd: 0,
            windows: Vec::new(),
            result: EcriResult {
                sensitivity: reaction.sensitivity,
                ..EcriResult::default()
            },
        }
    }

    /// The 90-day outcomes known on `day`, from `since` on (windows that started then or later).
    pub(super) fn outcomes(&self, day: i32, since: i32) -> Vec<Outcome> {
        self.windows
            .iter()
            .filter(|w| w.start >= since && w.start + OUTCOME_DAYS <= day)
            .map(|w| {
                let left = self.sizes[w.size].left_on[w.serial as usize]
                    .is_some_and(|d| d <= w.start + OUTCOME_DAYS);
                Outcome {
                    increase_pct: w.increase_pct,
                    premium_pct: w.premium_pct,
                    tenants: 1,
                    moved_out: u32::from(left),
                }
            })
            .collect()
    }

    /// Gives a notice: draws the tenant's reaction and records the window.
    pub(super) fn notify(
        &mut self,
        size: usize,
        k: usize,
        day: i32,
        new_rent: f64,
        notice_days: u32,
        predicted: Option<f64>,
    ) {
        let (seed, index) = (self.seed, self.index);
        let s = &mut self.sizes[size];
        let median = s.market.market_median();
        let observed = s.market.observed_median();
        let t = &mut s.roll[k];
        let p = self.reaction.move_out(t.rent, new_rent, median);
        let key = [
            seed,
            index as u64,
            size as u64,
            u64::from(t.serial),
            u64::from(t.notices),
        ];
        if uniform(&[&key[..], &[1]].concat()) < p {
            let after = 1 + (uniform(&[&key[..], &[2]].concat()) * f64::from(REACTION_DAYS)) as i32;
            t.reaction_leave = Some(t.reaction_leave.map_or(day + after, |d| d.min(day + after)));
        }
        t.notices += 1;
        t.pending = Some((day + notice_days as i32, new_rent));
        self.windows.push(Window {
            size,
            serial: t.serial,
            start: day,
            increase_pct: (new_rent / t.rent - 1.0) * 100.0,
            premium_pct: (new_rent / observed - 1.0) * 100.0,
            predicted,
        });
        self.result.notices += 1;
        self.result.increase_pct_sum += (new_rent / t.rent - 1.0) * 100.0;
    }

    /// Records a 90-day window for every tenant in place not increased today.
    pub(super) fn baseline_windows(&mut self, day: i32, min_months: f64) {
        for (i, s) in self.sizes.iter().enumerate() {
            for t in &s.roll {
                let months = f64::from(day - t.move_in) / MONTH_DAYS;
                if t.pending.is_none() && t.reaction_leave.is_none() && months >= min_months {
                    let observed = s.market.observed_median();
                    self.windows.push(Window {
                        size: i,
                        serial: t.serial,
                        start: day,
                        increase_pct: 0.0,
                        premium_pct: (t.rent / observed - 1.0) * 100.0,
                        predicted: None,
                    });
                }
            }
        }
    }

    /// Move-outs, move-ins, increases taking effect and the day's rent.
    pub(super) fn trade(&mut self, day: i32) {
        let date = start_date() + chrono::Duration::days(i64::from(day));
        let season = NATIONAL_PRIOR[date.month0() as usize];
        let (seed, index, scenario) = (self.seed, self.index, self.scenario);
        for (i, s) in self.sizes.iter_mut().enumerate() {
            let left_on = &mut s.left_on;
            let before = s.roll.len();
            s.roll.retain(|t| {
                let leaves = t.natural_leave <= day || t.reaction_leave.is_some_and(|d| d <= day);
                if leaves {
                    left_on[t.serial as usize] = Some(day);
                }
                !leaves
            });
            let departed = (before - s.roll.len()) as u32;
            let mean = scenario.demand * f64::from(s.market.units) / STAY_DAYS
                * season
                * demand_share(s.market.street_rate, s.market.market_median());
            let u = uniform(&[seed, index as u64, i as u64, day as u64, 0xa7]);
            let vacant = s.market.units.saturating_sub(s.roll.len() as u32);
            let arriving = poisson_at(u, mean).min(vacant);
            for _ in 0..arriving {
                let serial = s.next_serial;
                s.next_serial += 1;
                s.left_on.push(None);
                s.roll.push(Tenant {
                    serial,
                    rent: s.market.street_rate,
                    move_in: day,
                    last_increase: None,
                    natural_leave: day + natural_stay(seed, index, i, serial),
                    reaction_leave: None,
                    pending: None,
                    notices: 0,
                });
            }
            if s.arrivals.len() == 90 {
                s.arrivals.pop_front();
                s.departures.pop_front();
            }
            s.departures.push_back(departed);
            s.arrivals.push_back(arriving);
            self.move_ins_mtd += arriving;
            for t in &mut s.roll {
                if let Some((effective, new_rent)) = t.pending {
                    if effective <= day {
                        t.rent = new_rent;
                        t.last_increase = Some(effective);
                        t.pending = None;
                    }
                }
            }
            if day >= 0 {
                self.result.year_revenue +=
                    s.roll.iter().map(|t| t.rent).sum::<f64>() * 12.0 / 365.0;
            }
        }
    }

    pub(super) fn finish(&mut self) {
        let end = DAYS as i32;
        let tail_end = f64::from(end) + TAIL_DAYS;
        let mut tail = 0.0;
        let mut units = 0u32;
        let mut occupied = 0usize;
        for s in &self.sizes {
            units += s.market.units;
            occupied += s.roll.len();
            for t in &s.roll {
                let stop = t
                    .reaction_leave
                    .map_or(tail_end, |d| f64::from(d).min(tail_end));
                let (old_until, new_rent) = match t.pending {
                    Some((effective, new_rent)) => (f64::from(effective).min(stop), new_rent),
                    None => (stop, t.rent),
                };
                let old_days = (old_until - f64::from(end)).max(0.0);
                let new_days = (stop - old_until).max(0.0);
                tail += (t.rent * old_days + new_rent * new_days) * 12.0 / 365.25;
            }
        }
        self.result.tail_revenue = tail;
        self.result.end_occupancy_pct = occupied as f64 / f64::from(units) * 100.0;
        for w in &self.windows {
            if w.start < 0 || w.start + OUTCOME_DAYS > end {
                continue;
            }
            let stayed = self.sizes[w.size].left_on[w.serial as usize]
                .is_none_or(|d| d > w.start + OUTCOME_DAYS);
            if w.increase_pct > 0.0 {
                self.result.scored_notices += 1;
                self.result.predicted_stays += w.predicted.unwrap_or(0.0);
                self.result.realized_stays += u32::from(stayed);
            } else {
                self.result.baseline_windows += 1;
                self.result.baseline_stays += u32::from(stayed);
            }
        }
    }
}
