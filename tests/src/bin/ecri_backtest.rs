//! The ECRI backtest: a company of one facility per scenario, run for a year under the street
//! engine with a rent roll whose tenants react to increases, comparing no increases, +10 % a
//! year, the per-size rule, the best fixed rule chosen with the true reaction on the tuning
//! seeds, and the engine (docs/ecri.md, "Backtest").
//!
//! `cargo run --release -p e2e --bin ecri_backtest -- [--tune-seeds 5] [--first-report-seed 101]
//! [--report-seeds 10] [--settings '{"max_step_pct": 15}']`

use clap::Parser;
use domain::ecri::backtest::report::{markdown, run};
use domain::ecri::EcriEngineSettings;

#[derive(Parser)]
struct Args {
    /// Seeds the fixed rules are tuned on: 1..=tune_seeds.
    #[arg(long, default_value_t = 5)]
    tune_seeds: u64,
    /// The first seed reported on.
    #[arg(long, default_value_t = 101)]
    first_report_seed: u64,
    /// Seeds reported on.
    #[arg(long, default_value_t = 10)]
    report_seeds: u64,
    /// Engine settings overrides (a JSON object of `EcriEngineSettings` fields).
    #[arg(long, default_value = "{}")]
    settings: String,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let settings: EcriEngineSettings = serde_json::from_str(&args.settings)?;
    settings
        .validate()
        .map_err(|e| anyhow::anyhow!("{}: {}", e.path, e.message))?;
    let tune: Vec<u64> = (1..=args.tune_seeds.max(1)).collect();
    let report: Vec<u64> =
        (args.first_report_seed..args.first_report_seed + args.report_seeds.max(1)).collect();
    if tune.iter().any(|s| report.contains(s)) {
        anyhow::bail!("the report seeds overlap the tuning seeds");
    }
    print!("{}", markdown(&run(&tune, &report, &settings)));
    Ok(())
}
