//! The pricing backtest: the engine run day by day for a year against a simulated market, next
//! to a static policy and the best fixed rate per size (docs/pricing.md, "Backtest").
//!
//! `cargo run -p e2e --bin backtest -- [--seeds 5] [--first-seed 1] [--scenario lease_up]
//! [--settings '{"max_step_pct": 5}'] [--reference] [--optimal]`

use clap::Parser;
use domain::pricing::backtest::market::SCENARIOS;
use domain::pricing::backtest::optimal::reference_optimal;
use domain::pricing::backtest::reference::{reference_rules, reference_schedules};
use domain::pricing::backtest::report::{markdown, summarize};
use domain::pricing::{PricingSettings, ENGINE_VERSION};

#[derive(Parser)]
struct Args {
    /// Seeds run per scenario.
    #[arg(long, default_value_t = 5)]
    seeds: u64,
    /// The first seed (the seeds run are first_seed..first_seed + seeds).
    #[arg(long, default_value_t = 1)]
    first_seed: u64,
    /// Only this scenario (stabilized, lease_up, high_demand, weak_demand).
    #[arg(long)]
    scenario: Option<String>,
    /// Pricing settings overrides, as the pricing-settings route takes them (a JSON object).
    #[arg(long, default_value = "{}")]
    settings: String,
    /// Also sweep the reference rules (`domain::pricing::backtest::Rule`) and print the best
    /// found with hindsight, per scenario and one for all, then each size's best monthly
    /// schedule (`Policy::Schedule`), also found with hindsight, then the optimal policy with
    /// the true demand (`Policy::Optimal`).
    #[arg(long)]
    reference: bool,
    /// Of the references, only the optimal policy with the true demand.
    #[arg(long)]
    optimal: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let overrides: serde_json::Value = serde_json::from_str(&args.settings)?;
    let settings = PricingSettings::with_overrides(&overrides)?;
    let seeds: Vec<u64> = (args.first_seed..args.first_seed + args.seeds.max(1)).collect();
    let scenarios: Vec<_> = SCENARIOS
        .iter()
        .filter(|s| args.scenario.as_deref().is_none_or(|n| n == s.name))
        .collect();
    if scenarios.is_empty() {
        anyhow::bail!("no scenario named {:?}", args.scenario);
    }
    let summaries: Vec<_> = scenarios
        .iter()
        .map(|s| summarize(s, &seeds, &settings))
        .collect();
    println!(
        "Engine {ENGINE_VERSION}, seeds {}-{}, settings overrides {overrides}\n",
        seeds[0],
        seeds[seeds.len() - 1]
    );
    print!("{}", markdown(&summaries));
    if args.reference {
        println!("\nReference: the best weekly occupancy-and-season rule, chosen with hindsight\n");
        print!("{}", reference_rules(&scenarios, &seeds));
        // Seeds after the run's own, for the schedules' out-of-sample check.
        let holdout: Vec<u64> = (0..10).map(|i| seeds[seeds.len() - 1] + 1 + i).collect();
        println!(
            "\nReference: each size's best monthly schedule, tuned with hindsight on seeds {}-{}, \
             then run on seeds {}-{}\n",
            seeds[0],
            seeds[seeds.len() - 1],
            holdout[0],
            holdout[holdout.len() - 1]
        );
        print!(
            "{}",
            reference_schedules(&scenarios, &seeds, &holdout, &settings)
        );
    }
    if args.reference || args.optimal {
        println!(
            "\nReference: the optimal policy with the true demand (dynamic programming per size), \
             seeds {}-{}\n",
            seeds[0],
            seeds[seeds.len() - 1]
        );
        print!("{}", reference_optimal(&scenarios, &seeds, &summaries));
    }
    Ok(())
}
