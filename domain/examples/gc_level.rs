//! The demand level the engine's price response cuts toward, against the optimal policies it
//! is fitted to (docs/pricing.md, "The demand level of a going concern"): a 10x10 of 120 units
//! with the engine's own demand model (elasticity 3, the national season), solved for the year
//! and for a going concern, read on one day at 85 % to 98 % occupancy.
//!
//! `cargo run --release -p domain --example gc_level -- [years 3] [day 60]`

use domain::pricing::backtest::optimal::{Problem, Solution};
use domain::pricing::response::demand_level;
use domain::pricing::settings::PricingSettings;

fn main() {
    let s = PricingSettings::default();
    let years: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3);
    let day: usize = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(60);
    println!("demand | year's optimum at 85/88/90/93/95/98 | going concern ({years}y) | fit at 90");
    for demand in [0.6, 0.7, 0.8, 0.95, 1.1, 1.3, 1.6] {
        let y = Problem::engines_model(demand, 1).solve();
        let g = Problem::engines_model(demand, years).solve();
        let at = |sol: &Solution| {
            [102usize, 106, 108, 112, 114, 118]
                .map(|n| format!("{:.2}", sol.multiple(day, n)))
                .join(" ")
        };
        println!(
            "{demand} | {} | {} | {:.3}",
            at(&y),
            at(&g),
            demand_level(demand, 90.0, &s)
        );
    }
}
