//! The optimal street-rate policy when the true demand is known (but not the random draws),
//! found by dynamic programming: a reference for the most any policy can earn in the market of
//! `market`, not a product.
//!
//! Sizes are independent in the market (each has its own units, demand and random streams), so
//! each size is solved alone. The state is the day t (0..DAYS) and the size's tenants n
//! (0..=units) in the morning. Each day the rate is set, then `SizeMarket::trade` draws the
//! move-outs (Poisson, mean n / 400, capped at n) and then the move-ins (Poisson, mean demand x
//! units / 400 x the market's season of the month x the share the size's demand curve gives
//! the rate against the median (`SizeParams::curve`, of either family of `super::demand`),
//! capped at the vacant units), and then the day's rent is counted for every tenant present.
//!
//! Every tenant pays its move-in rate for as long as it stays, so the rent of a move-in can be
//! booked the day it moves in: its rate times [`worth`] of that day. The rent of the tenants
//! already in place does not depend on the day's rate, so the value of a state is the rent of
//! the year's move-ins still to come:
//! V_t(n) = max over x of E_d E_a [ a x (x median) x worth(t) + V_{t+1}(n - d + a) ],
//! with V_DAYS = 0, d the move-outs and a the move-ins (at the multiple x) of the day.
//!
//! The programme prices against the size's starting median, while the market's median drifts
//! (at most 3 % either way, `market::COMPETITOR_DRIFT`) and is seen through weekly observations.
//! [`super::Policy::Optimal`] applies the chosen multiple to the competitor median it observes,
//! so the share a rate wins stays close to the programme's (the observations lag by at most a
//! week, 1 % of drift) while the rent per tenant is the multiple of a median up to 3 % off the
//! starting one.

use super::demand::Curve;
use super::market::{Scenario, SizeParams, SCENARIOS, SIZES, STAY_DAYS};
use super::report::{pct, Summary};
use super::{start_date, SizeResult, DAYS, FIXED_GRID, FIXED_STEP};
use crate::pricing::seasonality::NATIONAL_PRIOR;
use chrono::Datelike;
use std::fmt::Write;

/// A Poisson distribution's tail is dropped once what is left of it is below this.
const TAIL: f64 = 1e-12;

/// The multiples of the median the optimal policy chooses from: 0.60 to 1.40 in steps of 0.01,
/// the best fixed rate's grid and the points halfway between.
pub fn grid() -> Vec<f64> {
    (2 * FIXED_GRID.start()..=2 * FIXED_GRID.end())
        .map(|k| f64::from(k) * FIXED_STEP / 2.0)
        .collect()
}

/// Poisson probabilities of 0, 1, 2, ... until what is left of the tail is below `TAIL`.
pub fn poisson_pmf(mean: f64) -> Vec<f64> {
    let mut p = (-mean.max(0.0)).exp();
    let mut pmf = vec![p];
    let mut sum = p;
    while 1.0 - sum >= TAIL && pmf.len() < 10_000 {
        p *= mean / pmf.len() as f64;
        pmf.push(p);
        sum += p;
    }
    pmf
}

/// E f(min(X, cap)) for X distributed as `pmf`: the mass at and above `cap` goes to `cap`
/// (past the truncated tail, to the tail's end).
fn capped(pmf: &[f64], cap: usize, mut f: impl FnMut(usize) -> f64) -> f64 {
    let (mut below, mut sum) = (0.0, 0.0);
    for (k, p) in pmf.iter().enumerate().take(cap) {
        below += p;
        sum += p * f(k);
    }
    sum + (1.0 - below) * f(cap.min(pmf.len()))
}

/// The rent a move-in on `day` (of `days`) is expected to pay within the year, per unit of its
/// monthly rate: 12 / 365 for the day it moves in and for each later day it stays.
///
/// Approximation: each tenant is taken to leave with a chance of 1 / `stay_days` each day, on
/// its own. In the market a day's leavers are a Poisson count of mean n / `stay_days`, capped at
/// n and drawn at random among the tenants: the same chance per tenant while the cap does not
/// bind (almost always: with 120 tenants the mean is 0.3), but not independent between tenants.
pub fn worth(day: usize, days: usize, stay_days: f64) -> f64 {
    let stays = 1.0 - 1.0 / stay_days;
    let paid_days = (1.0 - stays.powi((days - day) as i32)) / (1.0 - stays);
    paid_days * 12.0 / 365.0
}

/// One size's pricing problem.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub units: usize,
    /// The competitor median the multiples apply to.
    pub median: f64,
    /// Per day: the mean move-ins at the median (demand x units / stay x the month's season).
    pub arrivals: Vec<f64>,
    /// Days a tenant stays on average.
    pub stay_days: f64,
    /// The multiples of the median to choose from.
    pub grid: Vec<f64>,
    /// The share of move-ins a multiple wins (`SizeParams::curve`, of any family).
    pub curve: Curve,
}

impl Problem {
    /// A size of the simulated market (index in `SIZES`) in a scenario, over the backtest's
    /// year, priced from `grid()`.
    pub fn of(scenario: &Scenario, size: usize) -> Self {
        Self::drawn(&SizeParams::fixed(scenario), size)
    }

    /// A size of the wide market with its drawn parameters (the programme prices against the
    /// starting median; the market's trend over the year is left out, as the drift is).
    pub fn drawn(params: &SizeParams, size: usize) -> Self {
        Self::drawn_over(params, size, 1)
    }

    /// The same size over `years` of the backtest's year, the season repeating: with more
    /// than one, the programme of a going concern, whose first year does not see an end.
    pub fn drawn_over(params: &SizeParams, size: usize, years: u32) -> Self {
        let (_, units, median) = SIZES[size];
        let start = start_date();
        let arrivals = (0..DAYS * years.max(1))
            .map(|day| {
                let month = (start + chrono::Days::new(u64::from(day))).month0();
                params.demand * f64::from(units) / STAY_DAYS * params.season[month as usize]
            })
            .collect();
        Self {
            units: units as usize,
            median,
            arrivals,
            stay_days: STAY_DAYS,
            grid: grid(),
            curve: params.curve,
        }
    }

    /// The engine's own demand model, which `response::demand_level` is fitted to: the wide
    /// market's 10x10 (120 units) with `demand` at the median, the logistic of elasticity 3
    /// (sensitivity 2e = 6) and the national season, over `years`.
    pub fn engines_model(demand: f64, years: u32) -> Self {
        let mut p = SizeParams::wide(&SCENARIOS[0], 1)[2];
        p.demand = demand;
        p.curve = Curve::Logistic { sensitivity: 6.0 };
        p.season = NATIONAL_PRIOR;
        Self::drawn_over(&p, 2, years)
    }

    /// The optimal policy by backward induction over the days.
    ///
    /// The expectation over the move-ins is taken once per (day, multiple, tenants left after
    /// the move-outs) and shared by every morning count that can lead there.
    pub fn solve(&self) -> Solution {
        let (u, days) = (self.units, self.arrivals.len());
        let leaving: Vec<Vec<f64>> = (0..=u)
            .map(|n| poisson_pmf(n as f64 / self.stay_days))
            .collect();
        let shares: Vec<f64> = self
            .grid
            .iter()
            .map(|x| self.curve.share(x * self.median, self.median))
            .collect();
        let mut next = vec![0.0; u + 1];
        let mut continuation = next.clone();
        let mut choice = vec![vec![0u16; u + 1]; days];
        // after[g][m]: expected move-in rent today and value tomorrow, at multiple g with m
        // tenants left after the move-outs.
        let mut after = vec![vec![0.0; u + 1]; self.grid.len()];
        for t in (0..days).rev() {
            let worth = worth(t, days, self.stay_days);
            for (g, row) in after.iter_mut().enumerate() {
                let rent = self.grid[g] * self.median * worth;
                let arriving = poisson_pmf(self.arrivals[t] * shares[g]);
                for (m, cell) in row.iter_mut().enumerate() {
                    *cell = capped(&arriving, u - m, |a| a as f64 * rent + next[m + a]);
                }
            }
            let mut value = vec![0.0; u + 1];
            for n in 0..=u {
                let mut best = (f64::MIN, 0);
                for (g, row) in after.iter().enumerate() {
                    let v = capped(&leaving[n], n, |d| row[n - d]);
                    if v > best.0 {
                        best = (v, g);
                    }
                }
                value[n] = best.0;
                choice[t][n] = best.1 as u16;
            }
            if t == DAYS as usize {
                continuation.clone_from(&value);
            }
            next = value;
        }
        let year = (DAYS as usize).min(days);
        Solution {
            grid: self.grid.clone(),
            choice,
            value: next,
            year_end: YearEnd {
                continuation,
                // In place in the evening of the year's last day: it pays each later day it
                // stays.
                tail_worth: (1.0 - 1.0 / self.stay_days) * worth(year, days, self.stay_days),
            },
        }
    }
}

/// The optimal policy of one size.
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    pub grid: Vec<f64>,
    /// `choice[t][n]`: the index in `grid` of the best multiple on day t with n tenants.
    pub choice: Vec<Vec<u16>>,
    /// `value[n]`: V_0(n), the expected rent of the horizon's move-ins from n tenants on day 0.
    pub value: Vec<f64>,
    /// How the programme values the state the backtest's year ends in.
    pub year_end: YearEnd,
}

impl Solution {
    /// The best multiple on a day with a number of tenants (the last day and the full size
    /// beyond their ends).
    pub fn multiple(&self, day: usize, tenants: usize) -> f64 {
        let row = &self.choice[day.min(self.choice.len() - 1)];
        self.grid[usize::from(row[tenants.min(row.len() - 1)])]
    }
}

/// The optimal policy of every size of a scenario, in `SIZES` order.
#[derive(Debug, Clone, PartialEq)]
pub struct OptimalPolicy {
    pub sizes: Vec<Solution>,
}

impl OptimalPolicy {
    pub fn solve(scenario: &Scenario) -> Self {
        Self {
            sizes: (0..SIZES.len())
                .map(|i| Problem::of(scenario, i).solve())
                .collect(),
        }
    }

    /// The optimal policy of a facility of the wide market, with each size's true parameters.
    pub fn drawn(params: &[SizeParams]) -> Self {
        Self::going_concern(params, 1)
    }

    /// The optimal policy of a facility of the wide market solved over `years`, of which the
    /// backtest applies the first: a policy that, like an operator, does not see the year end.
    pub fn going_concern(params: &[SizeParams], years: u32) -> Self {
        Self {
            sizes: params
                .iter()
                .enumerate()
                .map(|(i, p)| Problem::drawn_over(p, i, years).solve())
                .collect(),
        }
    }

    /// What each size's year leaves behind, valued by this policy's programme (see
    /// [`YearEnd`]), in `SIZES` order.
    pub fn year_ends(&self) -> Vec<YearEnd> {
        self.sizes.iter().map(|s| s.year_end.clone()).collect()
    }

    /// The multiple of the observed median for a size on a day with its tenants.
    pub fn multiple(&self, size: usize, day: u32, tenants: usize) -> f64 {
        self.sizes[size].multiple(day as usize, tenants)
    }
}

/// How a going concern's programme values the state a size ends the year in: the rent its
/// tenants then still pay within the horizon, and the rent of the move-ins the programme would
/// win from then on. Added to a run's revenue it scores any policy as a going concern (the
/// year's rent and what the year left), so a policy that lets its last weeks cheaply, because
/// the backtest stops counting, pays for it; with a horizon of one year it is zero.
#[derive(Debug, Clone, PartialEq)]
pub struct YearEnd {
    /// `continuation[n]`: V_365(n), the expected rent of the move-ins after the backtest's year
    /// from n tenants on its first morning (zero for a horizon of one year).
    pub continuation: Vec<f64>,
    /// What a tenant in place at the end of the backtest's year still pays within the
    /// horizon, per unit of its monthly rate (zero for a horizon of one year).
    pub tail_worth: f64,
}

impl YearEnd {
    pub fn value_left(&self, result: &SizeResult) -> f64 {
        let n = (result.end_tenants as usize).min(self.continuation.len() - 1);
        result.end_rent_roll * self.tail_worth + self.continuation[n]
    }
}

/// The expected revenue of the year in the model, without the draws: the rent of the tenants
/// in place at the start (at the median, where the starting rates average) and the value of
/// the move-ins, under the optimal policy and at each size's best fixed rate (of `FIXED_GRID`,
/// each valued by the same programme with that one multiple). Summed over the sizes.
pub fn expected(scenario: &Scenario, policy: &OptimalPolicy) -> (f64, f64) {
    let (mut optimal, mut fixed) = (0.0, 0.0);
    for (i, solution) in policy.sizes.iter().enumerate() {
        let problem = Problem::of(scenario, i);
        let n0 = (problem.units as f64 * scenario.start_occupancy).round() as usize;
        let in_place = n0 as f64 * problem.median * worth(0, DAYS as usize, STAY_DAYS);
        optimal += in_place + solution.value[n0];
        fixed += in_place
            + FIXED_GRID
                .map(|k| {
                    let one = Problem {
                        grid: vec![f64::from(k) * FIXED_STEP],
                        ..problem.clone()
                    };
                    one.solve().value[n0]
                })
                .fold(f64::MIN, f64::max);
    }
    (optimal, fixed)
}

/// The optimal policy of each scenario run on the seeds, against the static policy, the best
/// fixed rate and the engine of the summaries (`summaries[i]` is `scenarios[i]` on the same
/// seeds), with its occupancy; then the shape of the policy for one size. In Markdown.
pub fn reference_optimal(scenarios: &[&Scenario], seeds: &[u64], summaries: &[Summary]) -> String {
    let mut out = String::from(
        "| Scenario | Optimal vs static | Optimal / best fixed | Engine / optimal | End occupancy: optimal (engine / best fixed) | Mean occupancy: optimal (engine) | Expected: optimal / best fixed |\n|---|---|---|---|---|---|---|\n",
    );
    let units: f64 = SIZES.iter().map(|s| f64::from(s.1)).sum();
    let occupancy = |pcts: &mut dyn Iterator<Item = f64>| {
        pcts.zip(SIZES)
            .map(|(p, s)| p * f64::from(s.1))
            .sum::<f64>()
            / units
    };
    let mut totals = [0.0; 4];
    let mut expected_totals = (0.0, 0.0);
    let mut shapes = String::new();
    for (s, summary) in scenarios.iter().zip(summaries) {
        let policy = OptimalPolicy::solve(s);
        let (mut revenue, mut end, mut mean) = (0.0, 0.0, 0.0);
        for &seed in seeds {
            let runs = super::simulate(s, seed, super::Policy::Optimal(&policy));
            revenue += runs.iter().map(|r| r.revenue).sum::<f64>();
            end += occupancy(&mut runs.iter().map(|r| r.end_occupancy_pct));
            mean += occupancy(&mut runs.iter().map(|r| r.mean_occupancy_pct));
        }
        let n = seeds.len().max(1) as f64;
        let (optimal, fixed) = expected(s, &policy);
        expected_totals.0 += optimal;
        expected_totals.1 += fixed;
        let row = [
            revenue,
            summary.static_revenue,
            summary.best_fixed_revenue,
            summary.engine_revenue,
        ];
        for (t, v) in totals.iter_mut().zip(row) {
            *t += v;
        }
        let _ = writeln!(
            out,
            "{} | {:.1} % ({:.1} / {:.1}) | {:.1} % ({:.1}) | {:.1} % |",
            optimal_row(s.name, &row),
            end / n,
            summary.end_occupancy_pct,
            summary.best_fixed_end_occupancy_pct,
            mean / n,
            summary.mean_occupancy_pct,
            optimal / fixed * 100.0
        );
        shapes.push_str(&shape(s.name, &policy.sizes[2]));
    }
    let _ = writeln!(
        out,
        "{} | | | {:.1} % |",
        optimal_row("overall", &totals),
        expected_totals.0 / expected_totals.1 * 100.0
    );
    let _ = write!(
        out,
        "\nThe optimal multiple of the median for the {} ({} units), on the 15th of each month, by occupancy in the morning:\n{shapes}",
        SIZES[2].0, SIZES[2].1
    );
    out
}

/// The first four cells of a row: revenue `[optimal, static, best fixed, engine]`.
fn optimal_row(name: &str, r: &[f64; 4]) -> String {
    format!(
        "| {name} | {:+.1} % | {:.1} % | {:.1} %",
        pct(r[0], r[1]),
        r[0] / r[2] * 100.0,
        r[3] / r[0] * 100.0
    )
}

/// The multiple by occupancy (rows) and month (columns) of one size, in Markdown.
fn shape(scenario: &str, solution: &Solution) -> String {
    let units = solution.choice[0].len() - 1;
    let mut out = format!(
        "\n{scenario}:\n\n| Occupancy | Jan | Feb | Mar | Apr | May | Jun | Jul | Aug | Sep | Oct | Nov | Dec |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    );
    for occupancy in [50, 70, 80, 85, 88, 90, 93, 95, 98, 100] {
        let tenants = (units * occupancy + 50) / 100;
        let _ = write!(out, "| {occupancy} % |");
        for month in 1..=12 {
            let date = chrono::NaiveDate::from_ymd_opt(start_date().year(), month, 15)
                .expect("a valid date");
            let day = (date - start_date()).num_days() as usize;
            let _ = write!(out, " {:.2} |", solution.multiple(day, tenants));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pricing::backtest::demand::Curve;
    use crate::pricing::backtest::market::{
        demand_share, SizeParams, PRICE_SENSITIVITY, SCENARIOS,
    };
    use crate::pricing::backtest::{simulate, Policy};

    #[test]
    fn poisson_probabilities_sum_to_one_and_stop_at_the_tail() {
        let pmf = poisson_pmf(0.7);
        let sum: f64 = pmf.iter().sum();
        assert!((sum - 1.0).abs() < TAIL, "{sum}");
        // e^-0.7 x 0.7^2 / 2 = 0.121663.
        assert!((pmf[2] - 0.121_663).abs() < 1e-6, "{pmf:?}");
        // What is left after k = 11 is 1.5e-11, after k = 12 8e-13: the last term is k = 12.
        assert_eq!(pmf.len(), 13);
        assert_eq!(poisson_pmf(0.0), vec![1.0]);
    }

    /// P(min(X, cap) = k) for X Poisson of `mean`, exactly.
    fn capped_poisson(mean: f64, k: usize, cap: usize) -> f64 {
        let p = |j: usize| {
            (-mean).exp() * mean.powi(j as i32) / (1..=j).map(|i| i as f64).product::<f64>()
        };
        if k < cap {
            p(k)
        } else {
            1.0 - (0..cap).map(p).sum::<f64>()
        }
    }

    /// The expected move-in rent of a deterministic policy from day `t` with `n` tenants,
    /// summed over every path of draws.
    fn evaluate(p: &Problem, policy: &dyn Fn(usize, usize) -> usize, t: usize, n: usize) -> f64 {
        let days = p.arrivals.len();
        if t == days {
            return 0.0;
        }
        let x = p.grid[policy(t, n)];
        let share = 2.0 / (1.0 + (6.0 * (x - 1.0)).exp());
        let stays = 1.0 - 1.0 / p.stay_days;
        let paid_days: f64 = (t..days).map(|j| stays.powi((j - t) as i32)).sum();
        let rent = x * p.median * paid_days * 12.0 / 365.0;
        let mut total = 0.0;
        for d in 0..=n {
            let pd = capped_poisson(n as f64 / p.stay_days, d, n);
            let m = n - d;
            for a in 0..=p.units - m {
                let pa = capped_poisson(p.arrivals[t] * share, a, p.units - m);
                total += pd * pa * (a as f64 * rent + evaluate(p, policy, t + 1, m + a));
            }
        }
        total
    }

    #[test]
    fn on_a_tiny_problem_the_programme_is_the_best_of_every_policy() {
        // Two units, three days, two multiples, a stay of three days so that move-outs matter:
        // 2^9 policies (a multiple per day and tenant count), each evaluated over every path
        // of draws with the exact capped probabilities.
        let p = Problem {
            units: 2,
            median: 100.0,
            arrivals: vec![2.5, 0.3, 1.5],
            stay_days: 3.0,
            grid: vec![0.95, 1.1],
            curve: Curve::Logistic {
                sensitivity: PRICE_SENSITIVITY,
            },
        };
        let solution = p.solve();
        let states = 3 * (p.units + 1);
        for n0 in 0..=p.units {
            let (best, policy) = (0..1usize << states)
                .map(|bits| {
                    let policy = move |t: usize, n: usize| (bits >> (t * 3 + n)) & 1;
                    (evaluate(&p, &policy, 0, n0), bits)
                })
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .unwrap();
            assert!(
                (solution.value[n0] - best).abs() < 1e-9,
                "{n0}: {solution:?} {best}"
            );
            let own = |t: usize, n: usize| usize::from(solution.choice[t][n]);
            assert!((evaluate(&p, &own, 0, n0) - best).abs() < 1e-9, "{n0}");
            assert_eq!(usize::from(solution.choice[0][n0]), (policy >> n0) & 1);
        }
        // Both multiples are chosen somewhere: the dear one where the units are scarce.
        let chosen: Vec<u16> = solution.choice.iter().flatten().copied().collect();
        assert!(chosen.contains(&0) && chosen.contains(&1), "{solution:?}");
    }

    #[test]
    fn a_going_concern_values_what_the_year_leaves_and_does_not_cut_for_its_end() {
        let params = SizeParams::fixed(&SCENARIOS[0]);
        let year = Problem::drawn_over(&params, 0, 1).solve();
        let end = &year.year_end;
        assert!(end.continuation.iter().all(|v| *v == 0.0) && end.tail_worth == 0.0);
        let going = Problem::drawn_over(&params, 0, 2).solve();
        // A tenant in place on the evening of day 365 pays each of the next 365 days it
        // stays, with a chance of 1 - 1/400 a day: 0.9975 x (1 - 0.9975^365) / 0.0025 = 238.97
        // days, 7.857 months of rent.
        assert!(
            (going.year_end.tail_worth - 7.857).abs() < 0.001,
            "{}",
            going.year_end.tail_worth
        );
        // The year after's move-ins are worth more the more units stand vacant.
        let c = &going.year_end.continuation;
        assert!(
            c.windows(2).all(|w| w[0] >= w[1]) && c[c.len() - 1] > 0.0,
            "{c:?}"
        );
        // Each counts a move-in's rent over the rest of its own horizon. At 90 % occupancy
        // the year's programme prices 0.92 of the median in March where the going concern
        // prices 0.95: nine months before the end, a move-in's worth is already cut short. On
        // the 20th of December the year's programme is down at 0.78, the rate that wins the
        // one day's most; the going concern at 0.91.
        let tenants = 54;
        let gap = |day: usize| going.multiple(day, tenants) - year.multiple(day, tenants);
        assert!((0.02..=0.05).contains(&gap(74)), "{}", gap(74));
        assert!((year.multiple(353, tenants) - 0.78).abs() < 1e-9);
        assert!(gap(353) > 0.1, "{}", gap(353));
    }

    #[test]
    fn the_multiple_does_not_fall_as_the_size_fills() {
        // A unit let today is a unit that cannot be let later, so the fuller the size, the
        // dearer its rate. This is not a theorem here (move-outs and capped batches of
        // move-ins do not guarantee a concave value), but it holds on every day and tenant
        // count of all four sizes in all four scenarios; checked here on one size.
        let solution = Problem::of(&SCENARIOS[0], 0).solve();
        for (day, row) in solution.choice.iter().enumerate() {
            for n in 1..row.len() {
                assert!(row[n] >= row[n - 1], "day {day}: {n} tenants {row:?}");
            }
        }
        // Half empty, the rate is the one day's best, the multiple x that maximises
        // x x demand_share(x); full, it is above the median.
        let one_day = solution
            .grid
            .iter()
            .copied()
            .max_by(|a, b| (a * demand_share(*a, 1.0)).total_cmp(&(b * demand_share(*b, 1.0))))
            .unwrap();
        assert!((one_day - 0.78).abs() < 1e-9, "{one_day}");
        assert!((solution.multiple(180, 30) - one_day).abs() < 1e-9);
        assert!(
            solution.multiple(180, 60) > 1.05,
            "{}",
            solution.multiple(180, 60)
        );
    }

    #[test]
    fn the_programme_prices_by_the_sizes_own_demand_family() {
        // Stabilized, the 5x5 (60 units), at the end of June: the logistic of elasticity 3 against a
        // kinked curve as steep just above the median (3) and a third as steep below (1).
        let logistic = SizeParams::fixed(&SCENARIOS[0]);
        let kinked = SizeParams {
            curve: Curve::Kinked {
                below: 1.0,
                above: 3.0,
            },
            ..logistic
        };
        let (l, k) = (
            Problem::drawn(&logistic, 0).solve(),
            Problem::drawn(&kinked, 0).solve(),
        );
        let day = 180;
        // Half empty, each prices the one day's best: x x share(x) peaks at 0.78 under the
        // logistic and at the median under the kink (2x - x^2 below it, 4x - 3x^2 above).
        assert!((l.multiple(day, 30) - 0.78).abs() < 1e-9);
        assert!((k.multiple(day, 30) - 1.0).abs() < 1e-9);
        // At 90 % the logistic size still cuts to fill (0.90), the kinked one holds the median.
        assert!((l.multiple(day, 54) - 0.90).abs() < 1e-9);
        assert!((k.multiple(day, 54) - 1.0).abs() < 1e-9);
        // Full, the logistic's share falls ever slower above the median where the kink's
        // keeps its slope to none at 1.33: the kinked size stays nearer the median.
        let (full_l, full_k) = (l.multiple(day, 60), k.multiple(day, 60));
        assert!(full_k > 1.0 && full_l > full_k + 0.02, "{full_l} {full_k}");
        // The cut a half-empty kinked size is denied is what the logistic size fills with.
        assert!(k.value[30] < l.value[30], "{} {}", k.value[30], l.value[30]);
    }

    #[test]
    fn over_40_seeds_the_optimal_policy_earns_what_it_expects_and_not_less_than_the_best_fixed_rate(
    ) {
        let s = &SCENARIOS[0];
        let policy = OptimalPolicy::solve(s);
        let seeds: Vec<u64> = (1..=40).collect();
        let totals = |policy: Policy<'_>| -> Vec<Vec<f64>> {
            seeds
                .iter()
                .map(|&seed| {
                    simulate(s, seed, policy)
                        .iter()
                        .map(|r| r.revenue)
                        .collect()
                })
                .collect()
        };
        let optimal = totals(Policy::Optimal(&policy));
        // Each size's best fixed rate on these seeds, with hindsight, from 0.84 to 1.04 (the
        // best of the full grid lies inside: 0.88 to 0.96).
        let fixed: Vec<(f64, Vec<Vec<f64>>)> = (42..=52)
            .map(|k| f64::from(k) * FIXED_STEP)
            .map(|m| (m, totals(Policy::Fixed(m))))
            .collect();
        let mut best_fixed = vec![vec![0.0; seeds.len()]; SIZES.len()];
        for (i, best) in best_fixed.iter_mut().enumerate() {
            let (m, runs) = fixed
                .iter()
                .max_by(|a, b| {
                    let sum = |runs: &Vec<Vec<f64>>| runs.iter().map(|r| r[i]).sum::<f64>();
                    sum(&a.1).total_cmp(&sum(&b.1))
                })
                .unwrap();
            assert!((0.86..1.03).contains(m), "size {i}: {m}");
            *best = runs.iter().map(|r| r[i]).collect();
        }
        let n = seeds.len() as f64;
        let per_seed = |j: usize| optimal[j].iter().sum::<f64>();
        let mean_sd = |v: &[f64]| {
            let mean = v.iter().sum::<f64>() / n;
            let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
            (mean, var.sqrt())
        };
        // Against the best fixed rates, seed by seed: the draws part ways as soon as the rates
        // differ, so the difference of one seed has a spread of about 5,700 (1.2 % of a
        // facility's year), 900 on the mean of 40; the optimal policy earned 2,700 more
        // (0.6 %, what the model expects). The hindsight choice of the fixed rates favours
        // them; the test allows two standard errors of that noise against the optimal policy.
        let diffs: Vec<f64> = (0..seeds.len())
            .map(|j| per_seed(j) - best_fixed.iter().map(|b| b[j]).sum::<f64>())
            .collect();
        let (gain, spread) = mean_sd(&diffs);
        assert!(gain > -2.0 * spread / n.sqrt(), "{gain} {spread}");
        // Against what the model expects: the rent of the tenants in place at the start (the
        // starting rates average the median) and the programme's value of the move-ins. The
        // year's revenue has a spread of about 13,500 a seed (2,100 on the mean of 40); the
        // simulated mean came 0.3 % under the expectation (the policy sees the median late and
        // rounds the rate); three standard errors allowed.
        let (expected, expected_fixed) = expected(s, &policy);
        // In the model the best fixed rates earn 0.6 % less.
        assert!(
            (1.003..1.01).contains(&(expected / expected_fixed)),
            "{expected} {expected_fixed}"
        );
        let (mean, spread) = mean_sd(&(0..seeds.len()).map(per_seed).collect::<Vec<_>>());
        assert!(
            (mean - expected).abs() < 3.0 * spread / n.sqrt(),
            "{mean} {expected} {spread}"
        );
    }
}
