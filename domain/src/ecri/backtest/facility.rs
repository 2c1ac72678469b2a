//! A facility of the simulated company: its sizes, each with its market and its rent roll of
//! tenants, and the day's trade (move-outs, move-ins, increases taking effect, rent). Kept
//! apart from the policies so every policy trades through the same code and differs only in
//! the notices it gives.

use super::draws::{mix, natural_stay, poisson_at, uniform};
use super::reaction::{Family, Notice, Reaction};
use super::{
    history_class, quarter, EcriResult, Years, MONTH_DAYS, OUTCOME_DAYS, REACTION_DAYS, TAIL_DAYS,
    WARM_UP_DAYS,
};
use crate::pricing::backtest::market::{demand_share, Scenario, SizeMarket, SIZES, STAY_DAYS};
use crate::pricing::backtest::{start_date, StreetEngine};
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
    /// Increases that took effect (one for a tenant last increased before the run).
    pub(super) increases: u32,
}

/// One size of a facility: its market and its rent roll.
#[derive(Debug, Clone)]
pub(super) struct Size {
    pub(super) market: SizeMarket,
    pub(super) roll: Vec<Tenant>,
    next_serial: u32,
    /// The day each tenant (by serial) moved in and moved out.
    pub(super) moved_in: Vec<i32>,
    pub(super) left_on: Vec<Option<i32>>,
    /// Move-ins and move-outs of each of the last 90 days.
    pub(super) arrivals: VecDeque<u32>,
    pub(super) departures: VecDeque<u32>,
}

/// A notice given: what the service would have on record of it.
#[derive(Debug, Clone, Copy)]
pub(super) struct NoticeRecord {
    pub(super) size: usize,
    pub(super) serial: u32,
    pub(super) day: i32,
    pub(super) effective: i32,
    pub(super) rent_before: f64,
    pub(super) rent_after: f64,
    /// The observed competitor median that day (what the engine measures the premium against).
    pub(super) reference: f64,
    pub(super) months_since_move_in: f64,
    pub(super) past_increases: u32,
    /// Months since the tenant's last increase took effect (None: never).
    pub(super) months_since_last_increase: Option<f64>,
    /// The engine's stay probability (0..1) for a notice it gave, and its stay without the
    /// increase (the baseline alone).
    predicted: Option<(f64, f64)>,
    /// The simulator's own draw, for the diagnosis only: whether the tenant would have stayed
    /// the 90 days without any increase.
    natural: bool,
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
    /// Every notice given, in the order given (so by day).
    pub(super) notices: Vec<NoticeRecord>,
    pub(super) result: EcriResult,
    /// The run's length: only its last year is counted.
    years: Years,
}

impl Facility {
    pub(super) fn new(
        scenario: &Scenario,
        index: usize,
        seed: u64,
        family: Family,
        years: Years,
    ) -> Self {
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
                        increases: u32::from(last_increase.is_some()),
                    }
                })
                .collect();
            let moved_in = roll.iter().map(|t| t.move_in).collect();
            sizes.push(Size {
                market,
                next_serial: occupied,
                left_on: vec![None; occupied as usize],
                moved_in,
                roll,
                arrivals: VecDeque::with_capacity(91),
                departures: VecDeque::with_capacity(91),
            });
        }
        let units: u32 = SIZES.iter().map(|s| s.1).sum();
        let reaction = Reaction::draw(seed, index, family);
        Self {
            scenario: *scenario,
            index,
            seed,
            reaction,
            street: StreetEngine::new(scenario, units, SIZES.len()),
            sizes,
            move_ins_mtd: 0,
            notices: Vec::new(),
            result: EcriResult {
                sensitivity: reaction.sensitivity,
                ..EcriResult::default()
            },
            years,
        }
    }

    /// Gives a notice: draws the tenant's reaction and records the notice.
    pub(super) fn notify(
        &mut self,
        size: usize,
        k: usize,
        day: i32,
        new_rent: f64,
        notice_days: u32,
        predicted: Option<(f64, f64)>,
    ) {
        let (seed, index) = (self.seed, self.index);
        let s = &mut self.sizes[size];
        let median = s.market.market_median();
        let observed = s.market.observed_median();
        let t = &mut s.roll[k];
        let months = |d: i32| f64::from(day - d) / MONTH_DAYS;
        let p = self.reaction.move_out(&Notice {
            old_rent: t.rent,
            new_rent,
            median,
            months_since_move_in: months(t.move_in),
            months_since_last_increase: t.last_increase.map(months),
            past_increases: t.increases,
        });
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
        let effective = day + notice_days as i32;
        t.pending = Some((effective, new_rent));
        let record = NoticeRecord {
            size,
            serial: t.serial,
            day,
            effective,
            rent_before: t.rent,
            rent_after: new_rent,
            reference: observed,
            months_since_move_in: months(t.move_in),
            past_increases: t.increases,
            months_since_last_increase: t.last_increase.map(months),
            predicted,
            natural: t.natural_leave > day + OUTCOME_DAYS,
        };
        let class = history_class(record.past_increases, record.months_since_last_increase);
        self.notices.push(record);
        let pct = (new_rent / t.rent - 1.0) * 100.0;
        if day < self.years.counted_from() {
            return;
        }
        self.result.notices += 1;
        self.result.increase_pct_sum += pct;
        for q in [
            &mut self.result.by_quarter[quarter(day)],
            &mut self.result.by_history[class],
        ] {
            q.notices += 1;
            q.increase_pct_sum += pct;
        }
    }

    /// Move-outs, move-ins, increases taking effect and the day's rent.
    pub(super) fn trade(&mut self, day: i32) {
        let date = start_date() + chrono::Duration::days(i64::from(day));
        let season = NATIONAL_PRIOR[date.month0() as usize];
        let (seed, index, scenario) = (self.seed, self.index, self.scenario);
        let counted_from = self.years.counted_from();
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
                s.moved_in.push(day);
                s.roll.push(Tenant {
                    serial,
                    rent: s.market.street_rate,
                    move_in: day,
                    last_increase: None,
                    natural_leave: day + natural_stay(seed, index, i, serial),
                    reaction_leave: None,
                    pending: None,
                    notices: 0,
                    increases: 0,
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
                        t.increases += 1;
                    }
                }
            }
            if day >= counted_from {
                self.result.year_revenue +=
                    s.roll.iter().map(|t| t.rent).sum::<f64>() * 12.0 / 365.0;
            }
        }
    }

    pub(super) fn finish(&mut self) {
        let end = self.years.end();
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
        for n in &self.notices {
            if n.day < self.years.counted_from() || n.day + OUTCOME_DAYS > end {
                continue;
            }
            let stayed = self.sizes[n.size].left_on[n.serial as usize]
                .is_none_or(|d| d > n.day + OUTCOME_DAYS);
            let (predicted, baseline) = n.predicted.unwrap_or((0.0, 0.0));
            let natural = n.natural;
            self.result.scored_notices += 1;
            self.result.predicted_stays += predicted;
            self.result.realized_stays += u32::from(stayed);
            let class = history_class(n.past_increases, n.months_since_last_increase);
            for q in [
                &mut self.result.by_quarter[quarter(n.day)],
                &mut self.result.by_history[class],
            ] {
                q.scored += 1;
                q.predicted += predicted;
                q.realized += u32::from(stayed);
                q.predicted_baseline += baseline;
                q.natural += u32::from(natural);
            }
        }
    }
}
