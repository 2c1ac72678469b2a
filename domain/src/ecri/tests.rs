use super::backtest::report::{markdown, run, score};
use super::backtest::FixedRule;
use super::*;

#[test]
#[ignore = "the backtest, run by hand"]
fn backtest_by_hand() {
    let tune: Vec<u64> = (1..=5).collect();
    let settings: EcriEngineSettings = std::env::var("ECRI_SETTINGS")
        .map(|s| serde_json::from_str(&s).unwrap())
        .unwrap_or_default();
    let report = if std::env::var("ECRI_TUNE").is_ok() {
        run(&tune, &(101..=110).collect::<Vec<_>>(), &settings)
    } else {
        let r = |step_pct, cap| FixedRule {
            step_pct,
            months: 4.0,
            cap_over_street_pct: Some(cap),
            notice_days: 30,
        };
        score(
            &tune,
            &tune,
            &settings,
            vec![r(15.0, 10.0), r(30.0, 10.0), r(30.0, 20.0), r(12.0, 35.0)],
            r(30.0, 10.0),
        )
    };
    println!("{}", markdown(&report));
}
