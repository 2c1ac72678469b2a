//! The pricing backtest: the engine run day by day for a year against a simulated market, next
//! to a static policy and the best fixed rate per size (docs/pricing.md, "Backtest").
//!
//! `cargo run -p e2e --bin backtest -- [--market wide|fixed] [--seeds 5] [--first-seed 1]
//! [--scenario lease_up] [--settings '{"max_step_pct": 5}'] [--compare '{...}'] [--previous]
//! [--replicas 4] [--reference] [--optimal] [--going-concern-years 3] [--held-out]
//! [--family logistic|kinked|all] [--by-size]`
//!
//! With `--held-out` the seeds must all be held out: a seed the engine's settings were tuned
//! on (`domain::pricing::backtest::seeds::TUNING_SEEDS`, 1-15) is an error, not a figure.
//!
//! `--family` chooses the wide market's demand curves (`domain::pricing::backtest::demand`):
//! `logistic` (the default, the engine's own form), `kinked`, or `all`, which runs the seeds
//! once per family and prints each family's tables.

use clap::Parser;
use domain::pricing::backtest::demand::Family;
use domain::pricing::backtest::market::SCENARIOS;
use domain::pricing::backtest::optimal::reference_optimal;
use domain::pricing::backtest::reference::{reference_rules, reference_schedules};
use domain::pricing::backtest::report::{markdown, summarize};
use domain::pricing::backtest::seeds::HeldOutSeeds;
use domain::pricing::backtest::wide::{summarize_wide, GOING_CONCERN_YEARS};
use domain::pricing::backtest::wide_sizes::markdown_by_size;
use domain::pricing::backtest::wide_table::{markdown_references, markdown_wide};
use domain::pricing::{PricingSettings, ENGINE_VERSION};

#[derive(Parser)]
struct Args {
    /// `wide`: every size's demand, elasticity, starting occupancy and rate and its
    /// competitors' drift drawn per seed; `fixed`: the market the defaults up to 2026.11.5
    /// were tuned on.
    #[arg(long, default_value = "wide")]
    market: String,
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
    /// Wide market: also run the engine with these overrides, side by side.
    #[arg(long)]
    compare: Option<String>,
    /// Wide market: also run the previous engine (the defaults with the rules added since
    /// turned off), side by side.
    #[arg(long)]
    previous: bool,
    /// Wide market: runs of each seed's market with other random streams that choose its best
    /// fixed rates.
    #[arg(long, default_value_t = 4)]
    replicas: u64,
    /// Fixed market: also sweep the reference rules (`domain::pricing::backtest::Rule`) and
    /// print the best found with hindsight, per scenario and one for all, then each size's
    /// best monthly schedule (`Policy::Schedule`), also found with hindsight, then the optimal
    /// policy with the true demand (`Policy::Optimal`).
    #[arg(long)]
    reference: bool,
    /// Of the references, only the optimal policy with the true demand; on the wide market
    /// also the going concern's (solved over `--going-concern-years`, its first year applied),
    /// against which every policy is scored with what its year left counted.
    #[arg(long)]
    optimal: bool,
    /// Years the going concern's optimal policy is solved over (2 or more).
    #[arg(long, default_value_t = GOING_CONCERN_YEARS, value_parser = clap::value_parser!(u32).range(2..=10))]
    going_concern_years: u32,
    /// Report on held-out seeds only: refuses any seed the engine was tuned on (1-15), and
    /// fewer than two seeds (no interval).
    #[arg(long)]
    held_out: bool,
    /// Wide market: the family of demand curves (`logistic`, the engine's own form, or
    /// `kinked`), or `all` for each in turn.
    #[arg(long, default_value = "logistic")]
    family: String,
    /// Wide market: also print, per scenario and size, the engine's revenue against the best
    /// fixed rates and the going concern's optimum, and where it prices by occupancy.
    #[arg(long)]
    by_size: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let overrides: serde_json::Value = serde_json::from_str(&args.settings)?;
    let settings = PricingSettings::with_overrides(&overrides)?;
    let families = e2e::cli::one_or_all(&args.family, &Family::ALL, Family::name)?;
    if args.market != "wide" && families != [Family::Logistic] {
        anyhow::bail!("--family other than logistic runs on the wide market only");
    }
    if args.held_out && args.market != "wide" {
        // The fixed market's best fixed rates are chosen on the very seeds they are scored on.
        anyhow::bail!("--held-out reports the wide market only");
    }
    let seeds: Vec<u64> = if args.held_out {
        HeldOutSeeds::range(args.first_seed, args.seeds)?
            .seeds()
            .to_vec()
    } else {
        (args.first_seed..args.first_seed + args.seeds.max(1)).collect()
    };
    let scenarios: Vec<_> = SCENARIOS
        .iter()
        .filter(|s| args.scenario.as_deref().is_none_or(|n| n == s.name))
        .collect();
    if scenarios.is_empty() {
        anyhow::bail!("no scenario named {:?}", args.scenario);
    }
    let (first, last) = (seeds[0], seeds[seeds.len() - 1]);
    match args.market.as_str() {
        "wide" => {
            let mut engines = vec![(format!("Engine {ENGINE_VERSION}"), settings)];
            if args.previous {
                engines.push((
                    "The previous engine (2026.11.5)".to_owned(),
                    PricingSettings::previous_engine(),
                ));
            }
            if let Some(c) = &args.compare {
                let o: serde_json::Value = serde_json::from_str(c)?;
                engines.push((
                    format!("Engine with overrides {o}"),
                    PricingSettings::with_overrides(&o)?,
                ));
            }
            let list: Vec<PricingSettings> = engines.iter().map(|e| e.1).collect();
            for family in families {
                let summaries: Vec<_> = scenarios
                    .iter()
                    .map(|s| {
                        summarize_wide(
                            s,
                            &seeds,
                            &list,
                            args.replicas,
                            args.optimal.then_some(args.going_concern_years),
                            family,
                        )
                    })
                    .collect();
                println!(
                    "Wide market, demand family {}, seeds {first}-{last}{}, settings overrides \
                     {overrides}, best fixed rates chosen on {} replicas of each seed's market; \
                     every share the mean over the seeds with its 95 % t interval across them\n",
                    family.name(),
                    if args.held_out { " (held out)" } else { "" },
                    args.replicas
                );
                for (i, (name, _)) in engines.iter().enumerate() {
                    println!("{name}\n");
                    println!("{}", markdown_wide(&summaries, i));
                }
                println!("References\n");
                println!("{}", markdown_references(&summaries));
                if args.by_size {
                    println!("{}, size by size (pooled over the seeds)\n", engines[0].0);
                    println!("{}", markdown_by_size(&summaries, 0));
                }
            }
        }
        "fixed" => {
            let summaries: Vec<_> = scenarios
                .iter()
                .map(|s| summarize(s, &seeds, &settings))
                .collect();
            println!(
                "Engine {ENGINE_VERSION}, fixed market, seeds {first}-{last}, settings overrides \
                 {overrides}\n"
            );
            print!("{}", markdown(&summaries));
            if args.reference {
                println!(
                    "\nReference: the best weekly occupancy-and-season rule, chosen with hindsight\n"
                );
                print!("{}", reference_rules(&scenarios, &seeds));
                // Seeds after the run's own, for the schedules' out-of-sample check.
                let holdout: Vec<u64> = (0..10).map(|i| last + 1 + i).collect();
                println!(
                    "\nReference: each size's best monthly schedule, tuned with hindsight on \
                     seeds {first}-{last}, then run on seeds {}-{}\n",
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
                    "\nReference: the optimal policy with the true demand (dynamic programming \
                     per size), seeds {first}-{last}\n"
                );
                print!("{}", reference_optimal(&scenarios, &seeds, &summaries));
            }
        }
        other => anyhow::bail!("no market named {other:?} (wide or fixed)"),
    }
    Ok(())
}
