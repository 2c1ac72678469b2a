//! The holdout of a batch: the control group drawn when the batch is approved (after the
//! manager's edits and the approval's re-check), from a recorded seed, stratified by size and
//! rent-to-street band, a customer's units together; stored apart from the lines so the
//! outcome can measure the lift against it.
//!
//! The draw is a pure function of the lines, the street rates, the share and the seed: the same
//! seed gives the same control group, and the seed and the strata are stored on the batch so
//! anyone can draw it again.

use super::Line;
use crate::error::Result;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use sqlx::PgConnection;
use std::collections::BTreeMap;
use uuid::Uuid;

/// The bands of the rent against the size's street rate a stratum is drawn within.
fn band(rent: f64, street: Option<f64>) -> &'static str {
    match street.filter(|s| *s > 0.0) {
        None => "no street rate",
        Some(s) => match (rent / s - 1.0) * 100.0 {
            x if x < -10.0 => "over 10 % under street",
            x if x < 0.0 => "0-10 % under street",
            x if x < 10.0 => "0-10 % over street",
            _ => "10 % or more over street",
        },
    }
}

/// A drawn control group: the lines held out and, per stratum, how many were eligible and held.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Draw {
    /// Line numbers held out, with their stratum.
    pub held: Vec<(i32, String)>,
    /// `[{"size", "band", "eligible", "held_out"}]`, one per stratum.
    pub strata: serde_json::Value,
}

/// Draws `pct` % of `lines` (tenants; rounded) as the control group with `seed`: the total is
/// shared out over the strata (size and rent-to-street band) in proportion to their tenants
/// (largest remainders), and each stratum's share is drawn from its customers (a customer's
/// units together, in the stratum of its first line) in the seed's random order.
pub(super) fn draw(
    lines: &[&Line],
    street: impl Fn(&str) -> Option<f64>,
    pct: f64,
    seed: u64,
) -> Draw {
    let mut groups: BTreeMap<String, Vec<&Line>> = BTreeMap::new();
    for l in lines {
        let g = match (&l.customer_id, &l.tenant_id) {
            (Some(c), _) => format!("c:{c}"),
            (None, Some(t)) => format!("t:{t}"),
            (None, None) => format!("l:{}", l.line),
        };
        groups.entry(g).or_default().push(l);
    }
    // Strata, each with its groups in a fixed order before the shuffle.
    let mut strata: BTreeMap<(String, &'static str), Vec<Vec<&Line>>> = BTreeMap::new();
    for g in groups.into_values() {
        let first = g[0];
        let k = (
            first.size.clone(),
            band(first.current_rent, street(&first.size)),
        );
        strata.entry(k).or_default().push(g);
    }
    let total: usize = lines.len();
    let want = ((total as f64) * pct.clamp(0.0, 100.0) / 100.0).round() as usize;
    let quotas = shares(&strata, total, want);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut held = Vec::new();
    let mut summary = Vec::new();
    for (((size, band), mut gs), quota) in strata.into_iter().zip(quotas) {
        let eligible: usize = gs.iter().map(Vec::len).sum();
        gs.shuffle(&mut rng);
        let mut taken = 0usize;
        for g in gs {
            if taken + g.len() <= quota {
                taken += g.len();
                held.extend(g.iter().map(|l| (l.line, format!("{size} · {band}"))));
            }
        }
        summary.push(serde_json::json!({
            "size": size, "band": band, "eligible": eligible, "held_out": taken,
        }));
    }
    held.sort();
    Draw {
        held,
        strata: serde_json::Value::Array(summary),
    }
}

/// Each stratum's share of `want` held-out tenants, in proportion to its tenants, by largest
/// remainders (ties to the earlier stratum).
fn shares<K>(strata: &BTreeMap<K, Vec<Vec<&Line>>>, total: usize, want: usize) -> Vec<usize> {
    if total == 0 {
        return vec![0; strata.len()];
    }
    let exact: Vec<f64> = strata
        .values()
        .map(|gs| gs.iter().map(Vec::len).sum::<usize>() as f64 * want as f64 / total as f64)
        .collect();
    let mut out: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
    let mut rest: Vec<(usize, f64)> = exact
        .iter()
        .enumerate()
        .map(|(i, x)| (i, x - x.floor()))
        .collect();
    rest.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let short = want.saturating_sub(out.iter().sum());
    for (i, _) in rest.into_iter().take(short) {
        out[i] += 1;
    }
    out
}

/// Stores the control group: the held-out lines' tenants with the rent they would have had.
pub(super) async fn insert_controls(
    conn: &mut PgConnection,
    batch_id: Uuid,
    held: &[(&Line, String)],
) -> Result<()> {
    if held.is_empty() {
        return Ok(());
    }
    let tenant: Vec<String> = held
        .iter()
        .map(|(l, _)| l.tenant_id.clone().unwrap_or_default())
        .collect();
    let size: Vec<String> = held.iter().map(|(l, _)| l.size.clone()).collect();
    let rent: Vec<f64> = held.iter().map(|(l, _)| l.current_rent).collect();
    let suggested: Vec<f64> = held.iter().map(|(l, _)| l.new_rent).collect();
    let customer: Vec<Option<String>> = held.iter().map(|(l, _)| l.customer_id.clone()).collect();
    let stratum: Vec<String> = held.iter().map(|(_, s)| s.clone()).collect();
    sqlx::query!(
        "INSERT INTO ecri_batch_controls
             (batch_id, tenant_id, size, current_rent, suggested_rent, customer_id, stratum)
         SELECT $1, u.t, u.s, u.r, u.n, u.c, u.st
         FROM UNNEST($2::text[], $3::text[], $4::float8[], $5::float8[], $6::text[], $7::text[])
              AS u(t, s, r, n, c, st)",
        batch_id,
        &tenant,
        &size,
        &rent,
        &suggested,
        &customer as &[Option<String>],
        &stratum
    )
    .execute(conn)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(no: i32, size: &str, rent: f64, customer: Option<&str>) -> Line {
        Line {
            line: no,
            tenant_id: Some(format!("T{no:03}")),
            customer_id: customer.map(str::to_owned),
            size: size.to_owned(),
            months_since_last_increase: Some(12.0),
            tenant_count: 1,
            current_rent: rent,
            suggested_rent: rent * 1.08,
            new_rent: rent * 1.08,
            stay_probability: 0.8,
            expected_gain: 50.0,
            edited: false,
            excluded: false,
            reasons: serde_json::json!([]),
            dropped: None,
        }
    }

    fn roll() -> Vec<Line> {
        (1..=60)
            .map(|i| {
                let size = if i % 3 == 0 { "10x10" } else { "5x10" };
                let rent = 80.0 + f64::from(i % 7) * 8.0;
                let customer = (i % 10 == 0).then_some("C-BIG");
                line(i, size, rent, customer)
            })
            .collect()
    }

    fn street(size: &str) -> Option<f64> {
        Some(if size == "10x10" { 110.0 } else { 100.0 })
    }

    #[test]
    fn the_same_seed_draws_the_same_group_and_another_seed_another() {
        let lines = roll();
        let refs: Vec<&Line> = lines.iter().collect();
        let a = draw(&refs, street, 25.0, 42);
        let b = draw(&refs, street, 25.0, 42);
        let c = draw(&refs, street, 25.0, 43);
        assert_eq!(a, b);
        assert_ne!(a.held, c.held);
    }

    #[test]
    fn each_stratum_gives_its_share_and_a_customer_stays_whole() {
        let lines = roll();
        let refs: Vec<&Line> = lines.iter().collect();
        for seed in 0..50 {
            let d = draw(&refs, street, 50.0, seed);
            let strata = d.strata.as_array().expect("array");
            let eligible: u64 = strata.iter().map(|s| s["eligible"].as_u64().unwrap()).sum();
            assert_eq!(eligible, 60);
            for s in strata {
                let (n, k) = (
                    s["eligible"].as_u64().unwrap(),
                    s["held_out"].as_u64().unwrap(),
                );
                // Half of each stratum, within the one group that may not fit whole.
                assert!(k.abs_diff(n / 2) <= 6, "seed {seed}: {s}");
            }
            let held: Vec<i32> = d.held.iter().map(|(l, _)| *l).collect();
            let big: Vec<bool> = lines
                .iter()
                .filter(|l| l.customer_id.is_some())
                .map(|l| held.contains(&l.line))
                .collect();
            assert!(
                big.iter().all(|h| *h == big[0]),
                "seed {seed}: customer split"
            );
        }
    }

    #[test]
    fn no_share_draws_nobody() {
        let lines = roll();
        let refs: Vec<&Line> = lines.iter().collect();
        assert!(draw(&refs, street, 0.0, 1).held.is_empty());
    }
}
